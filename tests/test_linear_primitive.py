"""linear, nn.Linear's affine map as one primitive (ops/nn/linear.py), through nn.functional.linear.

Eager values are the composite's bits (a transposed weight, a matmul, an add); values and
gradients to second order, forward-mode tangents, vmap over inputs and over stacked weights,
and the errors are torch's; dtypes other than float32 and float64 keep the composite; compiled
calls equal eager ones and their graphs hold the matmul, not the op.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import autojit
from autojit.ops.layout import t
from autojit.ops.linalg import matmul

generator = np.random.default_rng(61)
F = autojit.nn.functional


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(64, 32), (3, 5, 32), (32,), (0, 32)])
@pytest.mark.parametrize("bias", [True, False])
def test_eager_values_are_the_composites_bits(dtype, shape, bias):
    x = autojit.tensor(generator.standard_normal(shape).astype(dtype))
    w = autojit.tensor(generator.standard_normal((16, 32)).astype(dtype))
    b = autojit.tensor(generator.standard_normal(16).astype(dtype)) if bias else None
    expected = matmul(x, t(w))
    if bias:
        expected = expected + b
    np.testing.assert_array_equal(F.linear(x, w, b).numpy(), expected.numpy())


def _derivatives(library, x, w, b, upstream):
    X = library.tensor(x, requires_grad=True)
    W = library.tensor(w, requires_grad=True)
    B = None if b is None else library.tensor(b, requires_grad=True)
    y = library.nn.functional.linear(X, W, B)
    leaves = (X, W) if B is None else (X, W, B)
    first = library.autograd.grad((y * y * library.tensor(upstream)).sum(), leaves,
                                  create_graph=True)
    second = library.autograd.grad(sum((g ** 3).sum() for g in first), (X, W))
    return [r.detach().numpy() for r in (y, *first, *second)]


@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [True, False])
def test_values_and_gradients_to_second_order_are_torchs(shape, bias):
    x, w, b = (generator.standard_normal(s) for s in (shape, (3, 4), (3,)))
    upstream = generator.standard_normal(shape[:-1] + (3,))
    for mine, theirs in zip(*(_derivatives(library, x, w, b if bias else None, upstream)
                              for library in (autojit, torch))):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_gradcheck_gradgradcheck_and_forward_mode():
    x = autojit.tensor(generator.standard_normal((2, 3, 4)), requires_grad=True)
    w = autojit.tensor(generator.standard_normal((5, 4)), requires_grad=True)
    b = autojit.tensor(generator.standard_normal(5), requires_grad=True)
    assert autojit.autograd.gradcheck(F.linear, (x, w, b), check_forward_ad=True)
    assert autojit.autograd.gradgradcheck(F.linear, (x, w, b))


def _mapped(library, x, w, b):
    Fl = library.nn.functional
    W, B, X = library.tensor(w), library.tensor(b), library.tensor(x)
    over_inputs = library.func.vmap(lambda v: Fl.linear(v, W, B))(X)
    stacked = library.stack([W, W * 2])
    over_weights = library.func.vmap(lambda m: Fl.linear(X[0], m, B))(stacked)
    per_sample = library.func.vmap(library.func.grad(
        lambda m, v: (Fl.linear(v, m, B) ** 2).sum()), in_dims=(None, 0))(W, X)
    _, pushed = library.func.jvp(lambda v, m: Fl.linear(v, m, B), (X, W), (X, W))
    return [r.numpy() for r in (over_inputs, over_weights, per_sample, pushed)]


def test_vmap_and_jvp_are_torchs_without_a_loop():
    x, w, b = generator.standard_normal((5, 2, 4)), generator.standard_normal((3, 4)), \
        generator.standard_normal(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "no batching rule": one op per index
        mine = _mapped(autojit, x, w, b)
    for got, expected in zip(mine, _mapped(torch, x, w, b)):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_other_dtypes_keep_the_composites_rounding(dtype):
    x = autojit.tensor(generator.standard_normal((4, 8)), dtype=getattr(autojit, dtype))
    w = autojit.tensor(generator.standard_normal((3, 8)), dtype=getattr(autojit, dtype))
    b = autojit.tensor(generator.standard_normal(3), dtype=getattr(autojit, dtype))
    np.testing.assert_array_equal(F.linear(x, w, b).float().numpy(),
                                  (matmul(x, t(w)) + b).float().numpy())


def test_errors_are_torchs():
    for library in (autojit, torch):
        x, w = library.ones(2, 3), library.ones(4, 5)
        with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                               r"\(2x3 and 5x4\)"):
            library.nn.functional.linear(x, w)
        with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
            library.nn.functional.linear(library.ones(2, 5, dtype=library.float64), w)


def test_compiled_equals_eager_and_runs_the_composite():
    layer = autojit.nn.Linear(6, 4)

    def step(x):
        y = layer(x)
        (first,) = autojit.autograd.grad((y * y).sum(), x, create_graph=True)
        (second,) = autojit.autograd.grad((first * first).sum(), x)
        return y, first, second

    compiled = autojit.compile(step)
    for _ in range(2):
        data = generator.standard_normal((5, 6)).astype("float32")
        expected = step(autojit.tensor(data, requires_grad=True))
        got = compiled(autojit.tensor(data, requires_grad=True))
        for mine, theirs in zip(got, expected):
            np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                                       rtol=1e-5, atol=1e-6)
    printed = compiled.ir()
    assert re.search(r"= matmul ", printed)
    assert not re.search(r"= linear ", printed)
