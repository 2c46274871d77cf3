"""clamp between Python numbers as one primitive (ops/elementwise/clamp_numbers.py), against
torch: values to the bit (signed zeros, NaN, infinities, min > max, bounds beyond float32's
range), torch's node and gradients at and between the bounds, second order, forward mode,
vmap, in-place and out= forms, compiled against eager, and the composite where the primitive
does not apply (tensor bounds, NaN bounds, a transposed input, integer dtypes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import autojit
from autojit.ops.elementwise import clamp_numbers

torch = pytest.importorskip("torch")

VALUES = [-3.0, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 2.0, math.inf, -math.inf, math.nan]
BOUNDS = [(-0.5, 0.5), (0.0, 1.0), (None, 0.25), (-1.0, None), (0.5, -0.5), (0, 1), (-0.0, 0.0),
          (0.0, -0.0), (None, -0.0), (2, None), (-math.inf, math.inf), (-3e38, 3e38)]


def _pair(values, dtype, shape=None):
    array = np.array(values, dtype=dtype)
    if shape is not None:
        array = array.reshape(shape)
    return autojit.tensor(array.copy()), torch.tensor(array.copy())


def _same_bits(actual, expected):
    actual, expected = actual.numpy(), expected.detach().numpy()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_equal(actual.view(f"u{actual.itemsize}"),
                                  expected.view(f"u{expected.itemsize}"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("low, high", BOUNDS)
def test_values_are_torchs_bits(dtype, low, high):
    for values in (VALUES, [VALUES[3]], VALUES[3]):  # (12,), (1,) and 0-d
        x, tx = _pair(values, dtype)
        assert clamp_numbers.takes(x, low, high)
        _same_bits(x.clamp(low, high), tx.clamp(low, high))
        _same_bits(autojit.clamp(x, min=low, max=high), torch.clamp(tx, min=low, max=high))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("low, high", [(-0.5, 0.5), (0.0, 1.0), (None, 0.25), (-1.0, None),
                                       (0.5, -0.5), (-0.5, -0.5)])
def test_gradients_and_node_are_torchs(dtype, low, high):
    values = [-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, math.nan]  # the bounds included
    x, tx = _pair(values, dtype)
    x.requires_grad_(True)
    tx.requires_grad_(True)
    y, ty = x.clamp(low, high), tx.clamp(low, high)
    assert y.grad_fn.name() == ty.grad_fn.name() == "ClampBackward1"
    weights = np.linspace(1.0, 2.0, len(values)).astype(dtype)
    (y * autojit.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    _same_bits(x.grad, tx.grad)


def test_second_order_forward_mode_and_vmap_agree_with_torch():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, 5))
    x = autojit.tensor(data, requires_grad=True)

    def f(x):
        return (x.clamp(-0.5, 0.7) ** 3).sum()

    assert autojit.autograd.gradcheck(lambda x: x.clamp(-0.5, 0.7) ** 3, (x,))
    assert autojit.autograd.gradgradcheck(lambda x: x.clamp(-0.5, 0.7) ** 3, (x,))
    (grad,) = autojit.autograd.grad(f(x), x, create_graph=True)
    (second,) = autojit.autograd.grad(grad.sum(), x)
    tx = torch.tensor(data, requires_grad=True)
    (tgrad,) = torch.autograd.grad((tx.clamp(-0.5, 0.7) ** 3).sum(), tx, create_graph=True)
    (tsecond,) = torch.autograd.grad(tgrad.sum(), tx)
    np.testing.assert_allclose(second.numpy(), tsecond.numpy(), rtol=1e-14)
    tangent = rng.standard_normal((4, 5))
    _, out_tangent = autojit.func.jvp(lambda x: x.clamp(-0.5, 0.7), (autojit.tensor(data),),
                                      (autojit.tensor(tangent),))
    _, tout_tangent = torch.func.jvp(lambda x: x.clamp(-0.5, 0.7), (torch.tensor(data),),
                                     (torch.tensor(tangent),))
    np.testing.assert_array_equal(out_tangent.numpy(), tout_tangent.numpy())
    batched = autojit.vmap(lambda row: row.clamp(min=0.1))(autojit.tensor(data))
    np.testing.assert_array_equal(batched.numpy(), np.maximum(data, 0.1))


def test_in_place_and_out_forms():
    x, tx = _pair([-2.0, -0.0, 0.5, 3.0], np.float32)
    x.clamp_(0.0, 1.0)
    tx.clamp_(0.0, 1.0)
    _same_bits(x, tx)
    out, tout = autojit.empty(4), torch.empty(4)
    autojit.clamp(autojit.tensor([-2.0, 0.5, 3.0, 1.0]), 0.0, 1.0, out=out)
    torch.clamp(torch.tensor([-2.0, 0.5, 3.0, 1.0]), 0.0, 1.0, out=tout)
    _same_bits(out, tout)


def test_compiled_equals_eager():
    rng = np.random.default_rng(1)
    x = autojit.tensor(rng.standard_normal((64, 32)).astype(np.float32), requires_grad=True)

    def step(x):
        y = (x.clamp(-0.5, 0.5) * 3).sum()
        (grad,) = autojit.autograd.grad(y, x)
        return y, grad

    compiled = autojit.compile(step)
    for actual, expected in zip(compiled(x), step(x)):
        np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=1e-6,
                                   atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("bound", [1e39, -1e300, 70000.0, 70000, 2 ** 70, -10 ** 400])
def test_a_bound_beyond_the_dtypes_range_raises_torchs_error(dtype, bound):
    x = autojit.zeros(3, dtype=getattr(autojit, dtype))
    tx = torch.zeros(3, dtype=getattr(torch, dtype))
    for low, high in ((bound, None), (None, bound)):
        for y, ty in ((x, tx), (x.t(), tx.t())):
            try:
                ty.clamp(low, high)
            except (RuntimeError, OverflowError) as error:
                # a float beyond the dtype's range, an int beyond int64's
                with pytest.raises(type(error), match=f"^{error}$"):
                    y.clamp(low, high)
            else:
                y.clamp(low, high)


@pytest.mark.parametrize("case", ["tensor bound", "nan bound", "transposed", "int64"])
def test_the_composite_runs_where_the_primitive_does_not_apply(case):
    data = np.array([[-2.0, 0.5], [3.0, -0.0]], dtype=np.float32)
    x, tx = _pair(data, np.float32)
    if case == "tensor bound":
        low, tlow = autojit.tensor(0.0), torch.tensor(0.0)
        assert not clamp_numbers.takes(x, low, None)
        _same_bits(x.clamp(min=low), tx.clamp(min=tlow))
    elif case == "nan bound":
        assert not clamp_numbers.takes(x, math.nan, None)
        _same_bits(x.clamp(min=math.nan), tx.clamp(min=math.nan))
    elif case == "transposed":
        x, tx = x.t(), tx.t()
        assert not clamp_numbers.takes(x, 0.0, 1.0)
        y, ty = x.clamp(0.0, 1.0), tx.clamp(0.0, 1.0)
        _same_bits(y, ty)
        assert y.stride() == ty.stride()
    else:
        x, tx = _pair([-5, 0, 7], np.int64)
        assert not clamp_numbers.takes(x, -1, 3)
        _same_bits(x.clamp(-1, 3), tx.clamp(-1, 3))
