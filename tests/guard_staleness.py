"""Running a guard-staleness program three ways (tests/test_compile_guards*.py).

A program is a generator written once against a module `lib` (autojit or torch): it calls
its function (made with `wrap`, which compiles it in the compiled run), changes some state the
function reads, calls again, and yields every result. `check` runs it eagerly with torch,
eagerly with autojit and compiled, and compares everything yielded.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import autojit
from autojit import CompileWarning

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)


@pytest.fixture(autouse=True, params=["reads", "walk"])
def guard_source(request, monkeypatch):
    """Each program runs with guards from what its trace read, and, as a cross-check, with
    guards on everything the walk found (AUTOJIT_GUARDS=walk, docs/notes/guards.md): both must
    give eager's answers. A test module imports this fixture to have it."""
    monkeypatch.setenv("AUTOJIT_GUARDS", request.param)
    return request.param
# Compiled kernels may round float32 apart from eager; torch's optimizers round apart more.
TOLERANCE = {"autojit eager": 1e-5, "torch": 1e-4}
W = np.array([[1.0, -2.0, 0.5], [0.25, 1.5, -1.0]], dtype=np.float32)


def _arrays(value) -> list:
    if isinstance(value, (tuple, list)):
        return [array for item in value for array in _arrays(item)]
    if isinstance(value, (autojit.Tensor, torch.Tensor)):
        return [np.array(value.detach().numpy()), value.requires_grad]
    return [value]


def _outcomes(program, lib, wrap) -> list:
    return [_arrays(value) for value in program(lib, wrap)]


def check(program, executables: list | None = None, torch_too: bool = True) -> list:
    """Runs `program` eagerly (torch, autojit) and compiled; every yielded value must agree.
    executables: how many executables each compiled function ends with. Returns them."""
    compiled = []

    def wrap(fn):
        compiled.append(autojit.compile(fn))
        return compiled[-1]

    expected = _outcomes(program, autojit, lambda fn: fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)  # no graph break, no eager fallback
        got = _outcomes(program, autojit, wrap)
    runs = {"autojit eager": expected}
    if torch_too:
        runs["torch"] = _outcomes(program, torch, lambda fn: fn)
    for name, reference in runs.items():
        assert len(got) == len(reference)
        for call, (mine, theirs) in enumerate(zip(got, reference)):
            where = f"call {call}, compiled against {name}"
            assert len(mine) == len(theirs), where
            for value, other in zip(mine, theirs):
                if isinstance(value, np.ndarray):
                    np.testing.assert_allclose(value, other, rtol=TOLERANCE[name],
                                               atol=TOLERANCE[name] / 10, err_msg=where)
                else:
                    assert value == other, f"{where}: {value!r} != {other!r}"
    if executables is not None:
        counts = [len(function.executables) for function in compiled]
        assert counts == executables, f"executables: {counts}, expected {executables}"
    return compiled


def tensor(lib, array, requires_grad=False):
    return lib.tensor(np.array(array, dtype=np.float32), requires_grad=requires_grad)
