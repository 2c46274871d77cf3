"""Errors from compiled calls read as eager's: the same type and message, with concrete sizes,
raised from the user's own line.

Each program is called with good inputs, then with one that makes eager raise. Compiled, the
bad call raises at one of three points: while tracing (a shape or dtype error: the trace's
record is put back and the call runs eagerly, compiler/api.py), in a kernel that checks an
index (the plan finds eager's error, codegen/schedule/steps.py, and the call runs eagerly
where nothing was stored yet), or in anomaly mode's check of a gradient. Each way, the error
must be eager's, and the innermost frame of this file in its traceback the same line.
"""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import autojit
import autojit.nn.functional as F
from autojit import nn


def _linear(features_in: int, features_out: int):
    layer = nn.Linear(features_in, features_out)
    with autojit.no_grad():
        layer.weight.copy_(autojit.tensor(np.linspace(-1.0, 1.0, features_in * features_out)
                                          .reshape(features_out, features_in)
                                          .astype(np.float32)))
        layer.bias.fill_(0.1)
    return layer


def _matmul_shapes():
    layer = _linear(8, 16)

    def step(x):
        return layer(x).sum()

    good, bad = autojit.ones(4, 8), autojit.ones(4, 7)
    return step, (good,), (bad,)


def _batch_sizes():
    layer = _linear(3, 4)

    def step(x, y):
        return F.cross_entropy(layer(x), y)

    good = (autojit.ones(4, 3), autojit.tensor([0, 1, 2, 3]))
    bad = (autojit.ones(4, 3), autojit.tensor([0, 1, 2, 3, 1]))
    return step, good, bad


def _target_out_of_range():
    layer = _linear(4, 3)
    optimizer = autojit.optim.SGD(layer.parameters(), lr=0.1)

    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(layer(x), y)
        loss.backward()
        optimizer.step()
        return loss

    good = (autojit.ones(5, 4), autojit.tensor([0, 1, 2, 1, 0]))
    bad = (autojit.ones(5, 4), autojit.tensor([0, 1, 3, 1, 0]))
    return step, good, bad


def _embedding_index():
    table = nn.Embedding(5, 2)

    def step(indices):
        return table(indices).sum()

    return step, (autojit.tensor([0, 4, 2]),), (autojit.tensor([0, 5, 2]),)


def _gather_index():
    def step(x, index):
        return x.gather(1, index).sum()

    x = autojit.ones(2, 3)
    return step, (x, autojit.tensor([[0, 2], [1, 1]])), (x, autojit.tensor([[0, 3], [1, 1]]))


def _dtypes():
    def step(x, y):
        return (x @ y).sum()

    good = (autojit.ones(2, 3), autojit.ones(3, 2))
    bad = (autojit.ones(2, 3), autojit.ones(3, 2, dtype=autojit.float64))
    return step, good, bad


def _anomaly_nan():
    def step(x):
        with autojit.autograd.detect_anomaly():
            weight = x.clone().requires_grad_()
            loss = (weight.sqrt() * 0.0).sum()  # the gradient of sqrt at 0 times 0: nan
            loss.backward()
        return weight.grad

    return step, (autojit.ones(3),), (autojit.tensor([1.0, 0.0, 2.0]),)


CASES = {"matmul shapes": _matmul_shapes, "batch sizes": _batch_sizes,
         "target out of range": _target_out_of_range, "embedding index": _embedding_index,
         "gather index": _gather_index, "dtypes": _dtypes, "anomaly nan": _anomaly_nan}


def _raised(call):
    """(type, message, innermost line of this file) of what `call()` raises."""
    with _quiet():
        try:
            call()
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            frames = [frame for frame in traceback.extract_tb(error.__traceback__)
                      if frame.filename == __file__]
            return type(error), str(error), (frames[-1].lineno, frames[-1].line)
    raise AssertionError("no error was raised")


class _quiet:
    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("calls_before", [0, 2])
def test_a_compiled_call_raises_eagers_error_from_the_users_line(case, calls_before):
    step, good, bad = CASES[case]()
    expected = _raised(lambda: step(*bad))
    step, good, bad = CASES[case]()  # afresh: the eager call above may have changed state
    compiled = autojit.compile(step)
    with _quiet():
        for _ in range(calls_before):
            compiled(*good)
    got = _raised(lambda: compiled(*bad))
    assert got == expected
    assert "s0" not in got[1]
