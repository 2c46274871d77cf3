"""Running torch's OpInfo samples through the checks of checks.py: the samples of an op in a
dtype (at most `limit`), each check's outcome, and the error samples; shared by
tests/test_opinfo.py and the survey.
"""

from __future__ import annotations

import torch

from . import GRADGRAD_DTYPES, op_id
from .checks import CHECKS, SampleRun, check_error, first_line
from .convert import Unsupported
from .resolve import is_random
from .skips import SKIP_CHECKS, compare_options


def op_database():
    from torch.testing._internal import common_utils
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.opinfo import core

    # torch's sample iterators look for the unittest TestCase running them with inspect.stack()
    # (twice per op and dtype, tens of milliseconds each under pytest's deep stacks: most of
    # this test's time). No TestCase runs here, so the search finds none: say so at once.
    common_utils.extract_test_fn = core.extract_test_fn = _no_test_case
    # Importing common_utils freezes torch.backends' flags for torch's own test suite
    # (disable_global_flags): a later test in the same process comparing autojit's flag errors
    # with torch's would meet the frozen ones. Unfrozen as torch leaves them by default.
    import torch.backends

    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
    return op_db


def _no_test_case():
    return None


def samples(opinfo, dtype: str, limit: int):
    torch.manual_seed(0)
    torch_dtype = getattr(torch, dtype)
    differentiable = torch_dtype.is_floating_point or torch_dtype.is_complex
    generated = opinfo.sample_inputs("cpu", torch_dtype,
                                     requires_grad=opinfo.supports_autograd and differentiable)
    result = []
    for sample in generated:
        result.append(sample)
        if len(result) >= limit:
            break
    return result


def supports(opinfo, dtype: str) -> bool:
    return getattr(torch, dtype) in opinfo.supported_dtypes("cpu")


def run_op(opinfo, function, dtype: str, limit: int, checks=CHECKS,
           compiled: int | None = None):
    """[(sample index, check, message or None)] for the first `limit` samples, the compiled
    check for the first `compiled` of them (all by default); a sample of a kind autojit lacks
    is one ("unsupported", what) entry. A forward failure ends the sample."""
    outcomes = []
    options = compare_options(opinfo, dtype, random=is_random(opinfo))
    skipped = {**SKIP_CHECKS.get(op_id(opinfo), {}),
               **SKIP_CHECKS.get(f"{op_id(opinfo)}/{dtype}", {})}
    checks = tuple(check for check in checks if check not in skipped)
    compiled_functions: dict = {}  # shared by the samples' compiled checks (SampleRun)
    for index, sample in enumerate(samples(opinfo, dtype, limit)):
        try:
            run = SampleRun(function, opinfo, sample, dtype, **options,
                            compiled_functions=compiled_functions)
        except Unsupported as error:
            outcomes.append((index, "unsupported", str(error)))
            continue
        except Exception as error:  # noqa: BLE001 - counted
            outcomes.append((index, "forward", f"conversion: {type(error).__name__}: {error}"))
            continue
        for check in checks:
            if check == "gradgrad" and dtype not in GRADGRAD_DTYPES:
                continue
            if check == "compiled" and compiled is not None and index >= compiled:
                continue
            try:
                getattr(run, check)()
                outcomes.append((index, check, None))
            except AssertionError as error:
                outcomes.append((index, check, str(error).splitlines()[0][:300]))
            except Exception as error:  # noqa: BLE001 - counted
                outcomes.append((index, check, first_line(error)))
            if check == "forward" and outcomes[-1][2] is not None:
                break
    return outcomes


def run_errors(opinfo, function, limit: int):
    outcomes = []
    if opinfo.error_inputs_func is None:
        return outcomes
    try:
        error_inputs = list(opinfo.error_inputs("cpu"))[:limit]
    except Exception:  # noqa: BLE001 - torch's generator needs a device feature
        return outcomes
    for index, error_input in enumerate(error_inputs):
        try:
            check_error(function, error_input, opinfo.op)
            outcomes.append((index, "error", None))
        except Unsupported as error:
            outcomes.append((index, "unsupported", str(error)))
        except AssertionError as error:
            outcomes.append((index, "error", str(error).splitlines()[0][:300]))
        except Exception as error:  # noqa: BLE001 - counted
            outcomes.append((index, "error", f"{type(error).__name__}: {error}"[:300]))
    return outcomes


