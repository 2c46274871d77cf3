"""The differentiation engine: backward/grad semantics, errors, higher-order derivatives."""

import math
import sys

import numpy as np
import pytest

import autojit as aj
from autojit import autograd


def leaf(values, dtype=aj.float64):
    return aj.tensor(values, dtype=dtype, requires_grad=True)


def test_backward_accumulates_into_leaf_grad():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 4, 6])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4, 8, 12])


def test_implicit_gradient_only_for_scalar_outputs():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs"):
        (x * 2).backward()
    (x * 2).backward(aj.tensor([1.0, 1.0], dtype=aj.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2, 2])


def test_grad_output_shape_mismatch_names_both_shapes():
    x = leaf([1.0, 2.0])
    y = x * 2
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "
                                           r"autojit.Size\(\[3\]\) and output\[0\] has a shape "
                                           r"of autojit.Size\(\[2\]\)"):
        autograd.grad(y, x, aj.ones(3, dtype=aj.float64))


def test_second_backward_through_freed_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = leaf([1.0, 2.0])
    y = (x.exp()).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))


def test_retain_graph_defaults_to_create_graph():
    x = leaf([1.5])
    y = (x ** 3).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    # The graph was retained: a second grad through y works.
    (g_again,) = autograd.grad(y, x)
    np.testing.assert_allclose(g.detach().numpy(), g_again.numpy())


def test_ops_without_saved_values_may_backward_twice():
    x = leaf([1.0, 2.0])
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 2])


def test_allow_unused():
    x, z = leaf([1.0]), leaf([2.0])
    y = (x * 3).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None
    np.testing.assert_allclose(gx.numpy(), [3])
    gx, gz = autograd.grad(y, [x, z], materialize_grads=True)
    np.testing.assert_allclose(gz.numpy(), [0])


def test_materialize_grads_conflicts_with_allow_unused_false():
    x = leaf([1.0])
    with pytest.raises(ValueError, match="allow_unused"):
        autograd.grad(x * 2, x, aj.ones(1, dtype=aj.float64), allow_unused=False,
                      materialize_grads=True)


def test_grad_does_not_touch_dot_grad():
    x = leaf([1.0, 2.0])
    (g,) = autograd.grad((x * x).sum(), x)
    assert x.grad is None
    np.testing.assert_allclose(g.numpy(), [2, 4])


def test_grad_of_non_leaf_input():
    x = leaf([1.0, 2.0])
    h = x * 3
    y = (h * h).sum()
    (gh,) = autograd.grad(y, h)
    np.testing.assert_allclose(gh.numpy(), [6, 12])


def test_output_without_grad_raises():
    x = aj.tensor([1.0])
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and "
                                           "does not have a grad_fn"):
        (x * 2).sum().backward()


def test_backward_inputs_limits_accumulation():
    x, z = leaf([1.0]), leaf([2.0])
    (x * z).sum().backward(inputs=[x])
    np.testing.assert_allclose(x.grad.numpy(), [2])
    assert z.grad is None


def test_autograd_backward_with_several_roots():
    x = leaf([1.0, 2.0])
    a, b = x * 2, x * x
    autograd.backward([a.sum(), b], [None, aj.ones(2, dtype=aj.float64)])
    np.testing.assert_allclose(x.grad.numpy(), [4, 6])


def test_third_derivative_of_x_to_the_fourth():
    x = leaf([0.5, -1.5, 2.0])
    (d1,) = autograd.grad((x ** 4).sum(), x, create_graph=True)
    (d2,) = autograd.grad(d1.sum(), x, create_graph=True)
    (d3,) = autograd.grad(d2.sum(), x)
    values = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(d1.detach().numpy(), 4 * values ** 3)
    np.testing.assert_allclose(d2.detach().numpy(), 12 * values ** 2)
    np.testing.assert_allclose(d3.numpy(), 24 * values)


def test_gradient_penalty_closed_form():
    # f(x) = sum(w * x**2); grad_x f = 2 w x; penalty = ||2 w x||^2; d penalty / d w = 8 w x^2.
    x = leaf([1.0, -2.0, 0.5])
    w = leaf([0.3, 0.7, -1.1])
    f = (w * x * x).sum()
    (gx,) = autograd.grad(f, x, create_graph=True)
    penalty = (gx * gx).sum()
    penalty.backward()
    xv, wv = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.7, -1.1])
    np.testing.assert_allclose(w.grad.numpy(), 8 * wv * xv ** 2)
    np.testing.assert_allclose(x.grad.numpy(), 8 * wv ** 2 * xv)


def test_hessian_vector_product():
    # f(x) = sum(sin(x) * x); Hessian is diagonal: 2 cos x - x sin x.
    values = np.array([0.1, 1.2, -0.7])
    x = leaf(values)
    v = aj.tensor([1.0, -2.0, 0.5], dtype=aj.float64)
    (g,) = autograd.grad((x.sin() * x).sum(), x, create_graph=True)
    (hv,) = autograd.grad(g, x, grad_outputs=v)
    expected = (2 * np.cos(values) - values * np.sin(values)) * np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(hv.numpy(), expected)


def test_create_graph_gradient_has_grad_fn():
    x = leaf([2.0])
    (g,) = autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    (g_plain,) = autograd.grad((x ** 3).sum(), x)
    assert not g_plain.requires_grad


def test_broadcast_gradients_are_summed_back():
    a = leaf(np.ones((3, 1)))
    b = leaf(np.arange(4.0))
    (a * b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 6.0))
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 3.0))


def test_mixed_dtype_gradients_take_input_dtype():
    a = aj.tensor([1.0, 2.0], dtype=aj.float32, requires_grad=True)
    b = aj.tensor([3.0, 4.0], dtype=aj.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype is aj.float32 and b.grad.dtype is aj.float64


def test_long_chain_has_no_recursion_limit():
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y + 0.0
    assert sys.getrecursionlimit() < 100_000
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_saved_values_freed_without_retain_graph():
    x = leaf([1.0, 2.0])
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        node.out  # noqa: B018 - reading the freed saved output is the point


def test_grad_fn_names_and_next_functions():
    x = leaf([1.0])
    y = x * 2
    assert type(y.grad_fn).__name__ == "MulBackward0"
    assert y.grad_fn.name() == "MulBackward0"
    (edge, nothing) = y.grad_fn.next_functions
    assert type(edge[0]).__name__ == "AccumulateGrad" and edge[0].variable is x
    assert nothing == (None, 0)
    z = y.exp().sum()
    assert z.grad_fn.name() == "SumBackward0"
    assert z.grad_fn.next_functions[0][0].name() == "ExpBackward0"


def test_diamond_graph_accumulates_once_per_path():
    x = leaf([3.0])
    a = x * 2
    y = (a * a + a.exp()).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [8 * 3.0 + 2 * math.exp(6.0)])


def test_grad_outputs_given_for_non_scalar():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = autograd.grad(x * x, x, grad_outputs=aj.tensor([1.0, 0.0, 2.0], dtype=aj.float64))
    np.testing.assert_allclose(g.numpy(), [2, 0, 12])


def test_integer_outputs_do_not_require_grad():
    x = leaf([1.5, -2.5])
    assert not (x > 0).requires_grad
    assert not x.argmax().requires_grad
    assert not x.to(aj.int64).requires_grad


def test_prod_second_derivative_with_two_zeros():
    x = leaf([0.0, 0.0, 2.0, 3.0])
    (g,) = autograd.grad(x.prod(), x)
    np.testing.assert_allclose(g.numpy(), [0, 0, 0, 0])
    (g,) = autograd.grad(x.prod(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [0, 0, 0, 0])
    (h,) = autograd.grad(g.sum(), x)  # d2/dx_i dx_j: the product of the other two
    np.testing.assert_allclose(h.numpy(), [6, 6, 0, 0])


def test_round_sends_halves_to_even_and_has_a_zero_gradient():
    x = leaf([0.5, 1.5, 2.5, -0.5, -1.5, 3.25, 2.7])
    y = x.round()
    assert y.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 3.0, 3.0]
    y.sum().backward()
    assert x.grad.tolist() == [0.0] * 7
    assert aj.round(aj.tensor([1.234, -5.678]), decimals=1).tolist() == pytest.approx(
        [1.2, -5.7])
    assert aj.tensor([3, 4]).round().tolist() == [3, 4]
