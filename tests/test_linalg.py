"""matmul and the products written from it: shapes, values, torch's errors and gradients."""

import numpy as np
import pytest

import autojit as aj
from autojit.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(0)


def leaf(*shape):
    return aj.tensor(rng.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("x_shape, y_shape", [
    ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((3,), (7, 3, 4)), ((7, 2, 3), (3,)), ((1, 2, 3), (6, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)),
])
def test_matmul_matches_numpy_and_gradients(x_shape, y_shape):
    x, y = leaf(*x_shape), leaf(*y_shape)
    out = aj.matmul(x, y)
    expected = np.matmul(x.detach().numpy(), y.detach().numpy())
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    assert gradcheck(aj.matmul, (x, y))
    assert gradgradcheck(aj.matmul, (x, y))


def test_matmul_gradient_closed_form_with_broadcast_batch():
    x, y = leaf(2, 3), leaf(4, 3, 5)
    (x @ y).sum().backward()
    ones = np.ones((4, 2, 5))
    np.testing.assert_allclose(x.grad.numpy(), (ones @ np.swapaxes(y.detach().numpy(), -1, -2))
                               .sum(0), rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), np.swapaxes(x.detach().numpy(), -1, -2) @
                               ones, rtol=1e-12)


def test_operators_and_methods():
    x, y = aj.ones(2, 3), aj.ones(3, 4)
    assert (x @ y).tolist() == [[3.0] * 4] * 2
    assert x.__rmatmul__(aj.ones(5, 2)).shape == (5, 3)
    assert x.mm(y).shape == (2, 4)
    assert aj.bmm(aj.ones(2, 2, 3), aj.ones(2, 3, 5)).shape == (2, 2, 5)
    assert aj.dot(aj.tensor([1.0, 2.0]), aj.tensor([3.0, 4.0])).item() == 11.0
    assert aj.outer(aj.tensor([1.0, 2.0]), aj.tensor([1.0, 2.0, 3.0])).tolist() == [
        [1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]


@pytest.mark.parametrize("call, message", [
    (lambda: aj.mm(aj.zeros(2, 3), aj.zeros(4, 5)),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    (lambda: aj.matmul(aj.zeros(2, 3), aj.zeros(4, 5)),
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    (lambda: aj.mm(aj.zeros(2, 3, 1), aj.zeros(4, 5)), "self must be a matrix"),
    (lambda: aj.bmm(aj.zeros(2, 3), aj.zeros(2, 4, 5)), "batch1 must be a 3D tensor"),
    (lambda: aj.bmm(aj.zeros(2, 2, 3), aj.zeros(3, 3, 5)),
     r"first two dimensions of batch2 tensor to be: \[2, 3\] but got: \[3, 3\]"),
    (lambda: aj.matmul(aj.zeros(()), aj.zeros(3)), "need to be at least 1D"),
    (lambda: aj.matmul(aj.zeros(3), aj.zeros(4)), "inconsistent tensor size"),
    (lambda: aj.matmul(aj.zeros(2, 3), aj.zeros(4)), r"size mismatch, got input \(2\)"),
    (lambda: aj.matmul(aj.zeros(7, 2, 3), aj.zeros(6, 3, 4)),
     r"size of tensor a \(7\) must match the size of tensor b \(6\)"),
    (lambda: aj.matmul(aj.zeros(2, 3), aj.zeros(3, 4, dtype=aj.float64)),
     "expected m1 and m2 to have the same dtype"),
    (lambda: aj.dot(aj.zeros(2, 2), aj.zeros(3)), "1D tensors expected, but got 2D and 1D"),
])
def test_errors_like_torch(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_integer_matmul_keeps_dtype():
    out = aj.tensor([[1, 2]]) @ aj.tensor([[3], [4]])
    assert out.dtype is aj.int64 and out.item() == 11
