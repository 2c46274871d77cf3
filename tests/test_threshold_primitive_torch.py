"""threshold as one primitive (ops/nn/threshold.py), against torch: its node
ThresholdBackward0 and what it shows (`_saved_self`, `_saved_threshold` of the type given:
bool, int, float, complex, a 0-d tensor's number), a complex threshold with no imaginary part
taken (and torch's error for one with), values and gradients at and around the threshold and
NaN, the double backward's ThresholdBackwardBackward0 and its zero derivative in x, forward
mode, vmap, the composite where the primitive does not apply, compiled against eager."""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

VALUES = [0.5, 1.0, 2.0, float("nan"), -3.0, 1.0000001]


def _pair(values=VALUES, dtype=np.float32, requires_grad=True):
    array = np.array(values, dtype=dtype)
    return (autojit.tensor(array.copy(), requires_grad=requires_grad),
            torch.tensor(array.copy(), requires_grad=requires_grad))


def _numbers(framework):
    return [1 + 0j, framework.tensor(1 + 0j, dtype=framework.complex64), 1.0, 1, False,
            framework.tensor(1.5), framework.tensor(True)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("position", range(7))
def test_node_and_saved_threshold_are_torchs(dtype, position):
    x, tx = _pair(dtype=dtype)
    number, tnumber = _numbers(autojit)[position], _numbers(torch)[position]
    y, ty = autojit.threshold(x, number, 2.0), torch.threshold(tx, tnumber, 2.0)
    assert y.grad_fn.name() == ty.grad_fn.name() == "ThresholdBackward0"
    saved, tsaved = y.grad_fn._saved_threshold, ty.grad_fn._saved_threshold
    assert type(saved) is type(tsaved) and saved == tsaved
    np.testing.assert_array_equal(y.grad_fn._saved_self.detach().numpy(),
                                  ty.grad_fn._saved_self.detach().numpy())
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())


@pytest.mark.parametrize("input_dtype", [np.float32, np.int64])
def test_a_complex_threshold_with_an_imaginary_part_raises_torchs_error(input_dtype):
    array = np.array([1, 2, 3], dtype=input_dtype)
    with pytest.raises(RuntimeError) as expected:
        torch.threshold(torch.tensor(array), 1 + 1j, 0)
    with pytest.raises(RuntimeError, match=f"^{expected.value}$"):
        autojit.threshold(autojit.tensor(array), 1 + 1j, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("limit, value", [(1.0, 2.0), (1.0, 1.0), (-5.0, 0.0),
                                          (float("nan"), 7.0)])
def test_gradients_and_double_backward_are_torchs(dtype, limit, value):
    x, tx = _pair(dtype=dtype)
    weight = np.arange(1.0, 7.0).astype(dtype)
    y, ty = autojit.threshold(x, limit, value), torch.threshold(tx, limit, value)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    (grad,) = autojit.autograd.grad((y * autojit.tensor(weight)).sum(), x, create_graph=True)
    (tgrad,) = torch.autograd.grad((ty * torch.tensor(weight)).sum(), tx, create_graph=True)
    np.testing.assert_array_equal(grad.detach().numpy(), tgrad.detach().numpy())
    node, tnode = grad.grad_fn, tgrad.grad_fn
    assert node.name() == tnode.name() == "ThresholdBackwardBackward0"
    assert repr(node._saved_threshold) == repr(tnode._saved_threshold)  # NaN too
    np.testing.assert_array_equal(node._saved_self.detach().numpy(),
                                  tnode._saved_self.detach().numpy())
    (second,) = autojit.autograd.grad(grad.sum(), x, allow_unused=True)
    (tsecond,) = torch.autograd.grad(tgrad.sum(), tx, allow_unused=True)
    np.testing.assert_array_equal(second.numpy(), tsecond.numpy())  # zeros, not None


def test_gradient_of_the_incoming_gradient_is_torchs():
    x, tx = _pair()
    g, tg = _pair([1.0, -2.0, 3.0, 4.0, 5.0, 6.0])
    (grad,) = autojit.autograd.grad(autojit.threshold(x, 1.0, 0.0), x, g, create_graph=True)
    (tgrad,) = torch.autograd.grad(torch.threshold(tx, 1.0, 0.0), tx, tg, create_graph=True)
    (through,) = autojit.autograd.grad((grad * grad).sum(), g)
    (tthrough,) = torch.autograd.grad((tgrad * tgrad).sum(), tg)
    np.testing.assert_array_equal(through.numpy(), tthrough.numpy())


def test_forward_mode_and_vmap_are_torchs():
    x, tx = _pair(requires_grad=False)
    tangent = np.linspace(1.0, 2.0, len(VALUES)).astype(np.float32)
    fw, tfw = autojit.autograd.forward_ad, torch.autograd.forward_ad
    with fw.dual_level():
        out = autojit.threshold(fw.make_dual(x, autojit.tensor(tangent)), 1.0, 2.0)
        got = fw.unpack_dual(out).tangent
    with tfw.dual_level():
        out = torch.threshold(tfw.make_dual(tx, torch.tensor(tangent)), 1.0, 2.0)
        expected = tfw.unpack_dual(out).tangent
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    rows = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 4
    np.testing.assert_array_equal(
        autojit.vmap(lambda v: autojit.threshold(v, 1.0, -1.0))(autojit.tensor(rows)).numpy(),
        torch.vmap(lambda v: torch.threshold(v, 1.0, -1.0))(torch.tensor(rows)).numpy())


@pytest.mark.parametrize("dtype", ["int64", "float16", "transposed"])
def test_the_composite_takes_the_same_numbers(dtype):
    array = np.arange(-3, 9).reshape(3, 4)
    if dtype == "transposed":
        x, tx = autojit.tensor(array.astype(np.float32)).t(), torch.tensor(
            array.astype(np.float32)).t()
    else:
        x, tx = autojit.tensor(array.astype(dtype)), torch.tensor(array.astype(dtype))
    for number in (1 + 0j, 1.5, 2, True):
        np.testing.assert_array_equal(autojit.threshold(x, number, 7).numpy(),
                                      torch.threshold(tx, number, 7).numpy())


def test_in_place_form_is_torchs():
    x, tx = _pair()
    y, ty = x * 1, tx * 1
    autojit.nn.functional.threshold(y, 1.0, 0.0, inplace=True)
    torch.nn.functional.threshold(ty, 1.0, 0.0, inplace=True)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_compiled_equals_eager():
    rng = np.random.default_rng(1)
    x = autojit.tensor(rng.standard_normal((64, 32)).astype(np.float32), requires_grad=True)

    def step(x):
        y = (autojit.threshold(x, 0.1, -1.0) * 3).sum()
        (grad,) = autojit.autograd.grad(y, x)
        return y, grad

    compiled = autojit.compile(step)
    for actual, expected in zip(compiled(x), step(x)):
        np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(),
                                   rtol=1e-6, atol=1e-6)


def test_a_tensor_threshold_is_traced_without_a_break():
    def step(x, limit):
        return autojit.nn.functional.threshold(x, limit, 0.0).sum()

    compiled = autojit.compile(step)
    x, limit = autojit.tensor([0.05, 0.1, 0.5, -1.0]), autojit.tensor(0.1)
    assert compiled(x, limit).item() == step(x, limit).item() == 0.5
    assert compiled.stats().graph_breaks == 0
