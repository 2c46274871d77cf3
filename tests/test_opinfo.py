"""torch's own op database as a differential test of autojit.

Every OpInfo of torch.testing._internal.common_methods_invocations.op_db is run, as a torch user
would port it (tests/opinfo/torch_db/resolve.py), on torch's own samples in each dtype of
opinfo.torch_db.DTYPES (float32, float64, complex64, complex128), up to FULL_LIMIT (32) per op and
dtype (QUICK_LIMIT, 8, for the seven HEAVY ops whose samples cost seconds each): the forward
against torch (values, dtypes, shapes; for a sample on which torch raises, the error's type),
first-order gradients and second order in float64 and complex128 on every one of them, and the
compiled call against eager on the first QUICK_LIMIT (8) of them; then the op's error samples, up
to 4 * FULL_LIMIT (the error type and torch's message regex). That is 2,336 tests, run by
default; README.md says how long the whole suite takes with them. Most of the time is the
compiled check (65% of the CPU when every sample was compiled: tracing, the passes, the schedule
and about one LLVM compile per sample), then second order (15%) and the gradients (10%).
Compiling every sample, as the suite did until 2026-11-28, took a quarter more of the file's CPU
time (82 s against 62 s of user time on a selection of 110 of the tests):

    AUTOJIT_OPINFO_COMPILED=all python -m pytest tests/test_opinfo.py

does it, and

    AUTOJIT_OPINFO_FULL=0 python -m pytest tests/test_opinfo.py

runs the first QUICK_LIMIT (8) samples of each op and dtype with every check. A sample of
the same form as an earlier one of its op and dtype (torch's database repeats shapes and arguments
with other values) is run by that sample's compiled function, as a user's loop runs one compiled
function on new tensors, instead of compiling again (checks.py).

The compiled call gets the sample's tensors as its arguments alone, traced symbolically, as a
user's compiled function gets them (AUTOJIT_OPINFO_ARGUMENTS=0 captures them with their data
instead); an op that torch.compile splits at (skips.py's GRAPH_BREAKS) may split. What does not
run, or fails, is listed with its reason in tests/opinfo/torch_db/skips.py; `python -m
opinfo.torch_db.survey` (from tests/) counts every sample.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch's op database imports it

sys.path.insert(0, str(Path(__file__).parent))

from opinfo.torch_db import DTYPES, compiled_limit, full, op_id, sample_limit  # noqa: E402
from opinfo.torch_db.resolve import autojit_callable  # noqa: E402
from opinfo.torch_db.runner import op_database, run_errors, run_op, supports  # noqa: E402
from opinfo.torch_db.skips import KNOWN_FAILURES, MISSING, NOT_APPLICABLE  # noqa: E402

OPS = [opinfo for opinfo in op_database()
       if op_id(opinfo) not in NOT_APPLICABLE and opinfo.name not in NOT_APPLICABLE]
CALLABLE = {op_id(opinfo): autojit_callable(opinfo) for opinfo in OPS}


def _params(errors: bool):
    params = []
    for opinfo in OPS:
        name = op_id(opinfo)
        if CALLABLE[name] is None:
            continue
        if errors:
            if opinfo.error_inputs_func is not None:
                params.append(pytest.param(opinfo, "errors", id=f"{name}-errors"))
            continue
        params += [pytest.param(opinfo, dtype, id=f"{name}-{dtype}")
                   for dtype in DTYPES if supports(opinfo, dtype)]
    return params


def _known(name: str, group: str):
    return KNOWN_FAILURES.get(f"{name}/{group}", KNOWN_FAILURES.get(name))


def _judge(name: str, group: str, outcomes) -> None:
    failures = [o for o in outcomes if o[2] is not None and o[1] != "unsupported"]
    known = _known(name, group)
    if failures and known:
        pytest.xfail(f"{known} (first: #{failures[0][0]} {failures[0][1]}: {failures[0][2]})")
    if failures:
        lines = [f"#{index} {check}: {message}" for index, check, message in failures[:8]]
        pytest.fail(f"{name} [{group}]: {len(failures)} failing checks\n" + "\n".join(lines),
                    pytrace=False)
    if known and full():
        pytest.fail(f"{name} [{group}] passes every sample: remove its KNOWN_FAILURES entry "
                    f"({known})", pytrace=False)


@pytest.mark.parametrize(("opinfo", "dtype"), _params(errors=False))
def test_samples(opinfo, dtype):
    name = op_id(opinfo)
    _judge(name, dtype, run_op(opinfo, CALLABLE[name], dtype, sample_limit(name),
                               compiled=compiled_limit()))


@pytest.mark.parametrize(("opinfo", "group"), _params(errors=True))
def test_error_samples(opinfo, group):
    name = op_id(opinfo)
    _judge(name, group, run_errors(opinfo, CALLABLE[name], sample_limit() * 4))


def test_missing_callables_are_listed():
    """The OpInfos without an autojit callable are exactly skips.MISSING's, each with its
    reason: none is left out silently, and an entry goes once its op exists."""
    missing = {name for name, function in CALLABLE.items() if function is None}
    unlisted = sorted(missing - set(MISSING))
    assert not unlisted, f"OpInfos with no autojit callable and no MISSING entry: {unlisted}"
    stale = sorted(set(MISSING) - missing)
    assert not stale, f"MISSING entries whose op now has a callable: {stale}"
