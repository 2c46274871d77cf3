"""layer_norm and layer_norm_backward, the normalization primitives with torch's backward formula
(ops/nn/normalization.py), through nn.functional.layer_norm and group_norm.

Eager forward values are the composite's bits (its native loop's within float32's rounding);
values, gradients to third order, forward-mode
tangents (also over reverse), vmap and the grad_fn name are torch's; compiled calls equal
eager ones and their graphs hold the composite's primitives.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import autojit
from autojit.ops.composite import rsqrt
from autojit.ops.nn.normalization import LAYER_NORM_BACKWARD
from autojit.ops.reduction import sum_
from autojit.ops.registry import bind

generator = np.random.default_rng(31)


def _payload(*shape, dtype="float64", offset=0.0):
    return (generator.standard_normal(shape) * 3 + offset).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, count", [((16, 8, 32), 1), ((4, 5, 6), 2), ((3, 7), 2)])
def test_eager_forward_is_the_composites_bits(dtype, shape, count):
    x = autojit.tensor(_payload(*shape, dtype=dtype, offset=5.0))
    dims = tuple(range(len(shape) - count, len(shape)))
    size = int(np.prod(shape[len(shape) - count:]))
    centered = x - sum_(x, dims, keepdim=True) / size
    expected = centered * rsqrt(sum_(centered * centered, dims, keepdim=True) / size + 1e-5)
    got = autojit.nn.functional.layer_norm(x, shape[len(shape) - count:])
    if not _native_norm():
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
        return
    # The native loop over rows (codegen/cpu/eager_norm.py) sums in float64: within float32's
    # rounding of the composite, and at least as close to the exact values.
    wide = x.numpy().astype(np.float64)
    centered = wide - wide.mean(dims, keepdims=True)
    exact = centered / np.sqrt((centered * centered).mean(dims, keepdims=True) + 1e-5)
    ulp = np.finfo(dtype).eps
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=0,
                               atol=8 * ulp * np.abs(exact).max())
    assert np.abs(got.numpy() - exact).max() <= np.abs(expected.numpy() - exact).max() + \
        2 * ulp * np.abs(exact).max()


def _native_norm() -> bool:
    from autojit.ops.nn import normalization

    return normalization.NATIVE is not None and normalization.NATIVE(
        "layer_norm", [np.ones((1, 2), np.float32)], 1, 1e-5) is not None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, count", [((256, 128), 1), ((3, 1), 1), ((5, 7), 1),
                                          ((2, 3, 31), 2), ((16, 40), 1),
                                          ((600, 80), 1)])  # (600, 80): split over the cores
def test_native_rows_give_torchs_layer_norm_and_backward(dtype, shape, count):
    if not _native_norm():
        pytest.skip("no native layer_norm loop on this host")
    data = _payload(*shape, dtype=dtype, offset=2.0)
    grad = _payload(*shape, dtype=dtype)
    normalized = shape[len(shape) - count:]
    dims = tuple(range(len(shape) - count, len(shape)))
    wide = data.astype(np.float64)
    centered = wide - wide.mean(dims, keepdims=True)
    scale = 1 / np.sqrt((centered * centered).mean(dims, keepdims=True) + 1e-5)
    exact = centered * scale
    wide_grad = grad.astype(np.float64)
    exact_grad = scale * (wide_grad - wide_grad.mean(dims, keepdims=True) - exact * (
        wide_grad * exact).mean(dims, keepdims=True))
    x = torch.tensor(data, requires_grad=True)
    expected = torch.nn.functional.layer_norm(x, normalized)
    (expected_grad,) = torch.autograd.grad(expected, x, torch.tensor(grad))
    mine = autojit.tensor(data, requires_grad=True)
    got = autojit.nn.functional.layer_norm(mine, normalized)
    (got_grad,) = autojit.autograd.grad(got, mine, autojit.tensor(grad))
    assert type(got.grad_fn).__name__ == "NativeLayerNormBackward0"
    ulp = np.finfo(dtype).eps
    for mine_value, torch_value, exact_value in ((got.detach(), expected, exact),
                                                  (got_grad, expected_grad, exact_grad)):
        size = np.abs(exact_value).max()
        np.testing.assert_allclose(mine_value.numpy(), exact_value, rtol=0, atol=16 * ulp * size)
        np.testing.assert_allclose(mine_value.numpy(), torch_value.detach().numpy(), rtol=0,
                                   atol=32 * ulp * size)


def test_native_rows_keep_nan_and_inf_as_torch():
    if not _native_norm():
        pytest.skip("no native layer_norm loop on this host")
    data = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 2.0], [3.0, 3.0, 3.0], [1.0, 2.0, 4.0]],
                    np.float32)
    got = autojit.nn.functional.layer_norm(autojit.tensor(data), (3,)).numpy()
    expected = torch.nn.functional.layer_norm(torch.tensor(data), (3,)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, equal_nan=True)


def _normalized(library, function, x, affine, weight, bias):
    F = library.nn.functional
    w = library.tensor(weight, requires_grad=True) if affine else None
    b = library.tensor(bias, requires_grad=True) if affine else None
    y = F.layer_norm(x, (4, 5), w, b, 1e-3) if function == "layer_norm" else \
        F.group_norm(x, 2, w, b, 1e-3)
    return y, w


def _second(library, function, x, affine, weight, bias, upstream):
    y, w = _normalized(library, function, x, affine, weight, bias)
    leaves = (x, w) if affine else (x,)
    first = library.autograd.grad((y * library.tensor(upstream)).sum(), leaves,
                                  create_graph=True)
    (second,) = library.autograd.grad(sum((g * g * g).sum() for g in first), x,
                                      create_graph=True)
    return y, first, second


@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("function", ["layer_norm", "group_norm"])
def test_values_and_derivatives_to_third_order(function, affine):
    """Values and two orders of derivatives equal torch's; the third passes gradcheck (torch's
    own third derivative of layer_norm does not: its double backward formula is not
    differentiated exactly)."""
    shape = (3, 4, 5)
    data, upstream = _payload(*shape, offset=2.0), _payload(*shape)
    weight, bias = _payload(4, 5), _payload(4, 5)
    if function == "group_norm":
        weight, bias = weight[:, 0].copy(), bias[:, 0].copy()
    results = []
    for library in (autojit, torch):
        x = library.tensor(data, requires_grad=True)
        y, first, second = _second(library, function, x, affine, weight, bias, upstream)
        results.append([t.detach().numpy() for t in (y, *first, second)])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-10)
    small = autojit.tensor(_payload(2, 4, 5, offset=1.0), requires_grad=True)
    assert autojit.autograd.gradcheck(
        lambda v: _second(autojit, function, v, affine, weight, bias, upstream[:2])[2],
        (small,))


def test_gradcheck_and_gradgradcheck_of_both_primitives():
    x = autojit.tensor(_payload(2, 3, 4), requires_grad=True)
    g = autojit.tensor(_payload(2, 3, 4), requires_grad=True)
    F = autojit.nn.functional
    assert autojit.autograd.gradcheck(lambda v: F.layer_norm(v, (3, 4)), (x,))
    assert autojit.autograd.gradgradcheck(lambda v: F.layer_norm(v, (4,)), (x,))

    def backward(grad, value):
        return bind(LAYER_NORM_BACKWARD, (grad, value), {"count": 1, "eps": 1e-5})

    assert autojit.autograd.gradcheck(backward, (g, x))
    assert autojit.autograd.gradgradcheck(backward, (g, x))
    assert autojit.autograd.gradcheck(backward, (g, x), check_forward_ad=True)


def _transforms(library, data, tangent, upstream):
    """jvp, jvp over grad, vmap and vmap over grad of layer_norm, in `library`."""
    F = library.nn.functional
    x, t = library.tensor(data), library.tensor(tangent)
    _, pushed = library.func.jvp(lambda v: F.layer_norm(v, (5,)), (x,), (t,))
    _, over_reverse = library.func.jvp(
        library.func.grad(lambda v: (F.layer_norm(v, (5,)) * library.tensor(upstream)).sum()),
        (x,), (t,))
    mapped = library.func.vmap(lambda row: F.layer_norm(row, (4, 5)))(x)
    per_sample = library.func.vmap(library.func.grad(
        lambda row: (F.layer_norm(row, (5,)) ** 3).sum()))(x)
    return [r.numpy() for r in (pushed, over_reverse, mapped, per_sample)]


def test_forward_mode_and_vmap_are_torchs():
    arrays = _payload(3, 4, 5), _payload(3, 4, 5), _payload(3, 4, 5)
    for mine, theirs in zip(_transforms(autojit, *arrays), _transforms(torch, *arrays)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_grad_fn_is_torchs_native_layer_norm():
    for library in (autojit, torch):
        x = library.ones(2, 3, requires_grad=True)
        y = library.nn.functional.layer_norm(x, (3,))
        assert y.grad_fn.name() == "NativeLayerNormBackward0"


def test_compiled_equals_eager_and_runs_the_composite():
    layer = autojit.nn.LayerNorm(24)
    with autojit.no_grad():
        layer.weight.copy_(autojit.tensor(_payload(24, dtype="float32")))
    upstream = autojit.tensor(_payload(6, 8, 24, dtype="float32"))

    def step(x):
        y = layer(x * 2)
        (first,) = autojit.autograd.grad((y * upstream).sum(), x, create_graph=True)
        (second,) = autojit.autograd.grad((first * first).sum(), x)
        return y, first, second

    compiled = autojit.compile(step)
    for _ in range(2):
        data = _payload(6, 8, 24, dtype="float32", offset=1.0)
        expected = step(autojit.tensor(data, requires_grad=True))
        got = compiled(autojit.tensor(data, requires_grad=True))
        for mine, theirs in zip(got, expected):
            np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                                       rtol=2e-4, atol=2e-5)
    printed = compiled.forward_ir()
    assert re.search(r"= sqrt ", printed)
    assert not re.search(r"= layer_norm(_backward)? ", printed)


def test_a_mismatched_gradient_or_count_is_refused_with_the_shapes():
    with pytest.raises(RuntimeError, match=r"layer_norm_backward: the gradient's shape \[2, 3\]"):
        bind(LAYER_NORM_BACKWARD, (autojit.ones(2, 3), autojit.ones(3, 2)),
             {"count": 1, "eps": 1e-5})
    with pytest.raises(RuntimeError, match="cannot normalize over the last 3 dims"):
        bind(LAYER_NORM_BACKWARD, (autojit.ones(2, 3), autojit.ones(2, 3)),
             {"count": 3, "eps": 1e-5})
