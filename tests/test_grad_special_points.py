"""Values, first and second derivatives at the special points of each differentiable op,
against torch: kinks (relu, abs, clamp edges), ties (max, maximum, norms), boundaries of the
domain (sqrt, log, pow at 0, division by 0), degenerate reductions (std of a constant or of one
element) and saturated losses (binary cross entropy at 0 and 1).

Each row of POINTS is an op written once for both libraries (`function(lib, *tensors)` with
lib autojit or torch) and the float64 points to evaluate it at; every input is differentiated.
A row is run four ways: autojit eager with create_graph (value, first and second derivative),
and autojit.compile of the first derivative alone and of the second derivative (a graph with
`create_graph=True` inside, compiled whole). Each is compared with torch; NaN and inf must
appear at the same positions. The cotangents are fixed and uneven, so that a gradient split
unevenly among tied inputs shows. The rows are in tests/special_points.py.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import autojit

sys.path.insert(0, str(Path(__file__).parent))

from special_points import POINTS  # noqa: E402
from special_points_math import MATH  # noqa: E402

POINTS = POINTS + MATH

torch = pytest.importorskip("torch")


def _cotangent(lib, like, scale):
    """A fixed, uneven cotangent shaped like `like`: 1, 1.5, 2, ... or 1, 1/2, 1/3, ..."""
    count = int(np.prod(like.shape, dtype=np.int64))
    values = np.arange(count, dtype=np.float64)
    values = 1 + 0.5 * values if scale == "up" else 1 / (1 + values)
    return lib.tensor(values.reshape(tuple(like.shape)), dtype=lib.float64)


def _zeros_for_none(results, inputs, lib):
    return tuple(lib.zeros_like(x) if g is None else g for g, x in zip(results, inputs))


def derivatives(lib, function, order, *inputs):
    """(value, first derivatives..., [second derivatives...]) of sum(function * v)."""
    output = function(lib, *inputs)
    first = lib.autograd.grad((output * _cotangent(lib, output, "up")).sum(), inputs,
                              create_graph=order == 2, allow_unused=True)
    first = _zeros_for_none(first, inputs, lib)
    if order == 1:
        return (output, *first)
    total = sum((g * _cotangent(lib, g, "down")).sum() for g in first)
    if not total.requires_grad:  # the first derivative does not depend on the inputs
        return (output, *first, *(lib.zeros_like(x) for x in inputs))
    second = lib.autograd.grad(total, inputs, allow_unused=True)
    return (output, *first, *_zeros_for_none(second, inputs, lib))


def run_torch(point, order):
    if point.torch_one_element:
        return _run_torch_one_element(point, order)
    inputs = [torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
              for x in point.inputs]
    return [r.detach().numpy(force=True)
            for r in derivatives(torch, point.function, order, *inputs)]


def _run_torch_one_element(point, order):
    """run_torch of a one-input elementwise op, one point at a time, with the cotangents the
    whole vector would give that point (Point.torch_one_element)."""
    (values,) = point.inputs
    count = len(values)
    up = _cotangent(torch, torch.zeros(count), "up").numpy()
    down = _cotangent(torch, torch.zeros(count), "down").numpy()
    results = [np.empty(count) for _ in range(1 + order)]
    for index, value in enumerate(values):
        x = torch.tensor([value], dtype=torch.float64, requires_grad=True)
        output = point.function(torch, x)
        (first,) = torch.autograd.grad((output * float(up[index])).sum(), x,
                                       create_graph=order == 2)
        results[0][index], results[1][index] = output.item(), first.item()
        if order == 2:
            total = (first * float(down[index])).sum()
            results[2][index] = torch.autograd.grad(total, x)[0].item() \
                if total.requires_grad else 0.0
    return results


def run_autojit(point, order, compiled):
    inputs = [autojit.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
              for x in point.inputs]

    def function(*tensors):
        return derivatives(autojit, point.function, order, *tensors)

    if compiled:
        # fullgraph: a graph break would run the row eagerly and test nothing compiled.
        function = autojit.compile(function, fullgraph=True)
    return [r.detach().numpy() for r in function(*inputs)]


def assert_matches(point, got, expected, order):
    count = len(point.inputs)
    labels = ["value"] + [f"d/d{i}" for i in range(count)] + [f"d2/d{i}" for i in range(count)]
    for label, mine, theirs in zip(labels, got, expected):
        message = f"{point.name}: {label} (order {order})"
        if label in point.differs:
            same = np.allclose(mine, theirs, rtol=point.rtol, atol=1e-12, equal_nan=True)
            assert not same, f"{message} now matches torch: remove it from `differs`"
            theirs = point.differs[label].autojit(theirs)
        np.testing.assert_allclose(mine, theirs, rtol=point.rtol, atol=1e-12, equal_nan=True,
                                   err_msg=message)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        # torch warns about std of one element, NumPy about inf - inf in a sum; the values are
        # what is compared.
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.mark.parametrize("point", POINTS, ids=[point.name for point in POINTS])
def test_eager_matches_torch(point):
    assert_matches(point, run_autojit(point, 2, False), run_torch(point, 2), 2)


@pytest.mark.parametrize("point", POINTS, ids=[point.name for point in POINTS])
@pytest.mark.parametrize("order", [1, 2])
def test_compiled_matches_torch(point, order):
    assert_matches(point, run_autojit(point, order, True), run_torch(point, order), order)
