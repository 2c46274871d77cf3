"""Higher derivatives of compiled results differentiated outside: `y = f(x); grad(y, x,
create_graph=True)` where only f is compiled.

With create_graph=True the results' CompiledFunctionBackward replays the backward graph op by
op on the call's tensors (ir/replay.py), so the gradients it returns are differentiable again;
these tests compare gradient penalties, Hessian-vector products and third derivatives with
eager autograd, and check that a plain backward still runs the compiled graph.
"""

import numpy as np
import pytest

import autojit
import autojit.ir.replay
from autojit.autograd import grad


def mlp_parameters(seed=0):
    generator = np.random.default_rng(seed)
    shapes = [(3, 8), (8,), (8, 1), (1,)]
    return [autojit.tensor(generator.standard_normal(shape), dtype=autojit.float64,
                           requires_grad=True) for shape in shapes]


def mlp(parameters, dropout=False):
    first_weight, first_bias, second_weight, second_bias = parameters

    def forward(x):
        hidden = (x @ first_weight + first_bias).tanh()
        if dropout:
            hidden = autojit.nn.functional.dropout(hidden, p=0.5, training=True)
        return hidden @ second_weight + second_bias
    return forward


def points(rows=5, seed=1):
    generator = np.random.default_rng(seed)
    return autojit.tensor(generator.standard_normal((rows, 3)), dtype=autojit.float64,
                          requires_grad=True)


def gradient_penalty(compiled: bool, dropout=False):
    """x.grad and every parameter's .grad after a gradient penalty's backward."""
    parameters = mlp_parameters()
    forward = mlp(parameters, dropout)
    if compiled:
        forward = autojit.compile(forward)
    x = points()
    autojit.manual_seed(7)
    y = forward(x)
    (gradient,) = grad(y.sum(), x, create_graph=True)
    penalty = ((gradient.norm(dim=1) - 1) ** 2).mean()
    penalty.backward()
    return y.grad_fn.name(), [x.grad] + [parameter.grad for parameter in parameters]


def assert_same_grads(compiled: list, eager: list) -> None:
    for got, expected in zip(compiled, eager):
        assert (got is None) == (expected is None)
        if expected is not None:
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dropout", [False, True], ids=["plain", "dropout"])
def test_gradient_penalty_through_a_compiled_forward_equals_eager(dropout):
    name, compiled = gradient_penalty(True, dropout)
    _, eager = gradient_penalty(False, dropout)
    assert name == "CompiledFunctionBackward"
    # the penalty does not depend on the last bias: no gradient, as in eager
    assert compiled[-1] is None
    assert_same_grads(compiled, eager)
    # the first-layer weight's gradient is not zero: second order reached the parameters
    assert np.abs(compiled[1].numpy()).max() > 1e-3


def test_hessian_vector_product_equals_eager():
    vector = autojit.tensor(np.random.default_rng(2).standard_normal((5, 3)),
                            dtype=autojit.float64)
    products = []
    for compiled in (False, True):
        forward = mlp(mlp_parameters())
        if compiled:
            forward = autojit.compile(forward)
        x = points()
        (gradient,) = grad(forward(x).sum(), x, create_graph=True)
        (product,) = grad((gradient * vector).sum(), x)
        products.append(product.numpy())
    np.testing.assert_allclose(products[1], products[0], rtol=1e-12, atol=1e-12)


def test_third_derivative_of_a_compiled_cube():
    cube = autojit.compile(lambda x: x ** 3)
    x = autojit.tensor(2.0, dtype=autojit.float64, requires_grad=True)
    (first,) = grad(cube(x), x, create_graph=True)
    (second,) = grad(first, x, create_graph=True)
    (third,) = grad(second, x)
    assert (first.item(), second.item(), third.item()) == (12.0, 12.0, 6.0)


def test_second_derivative_with_respect_to_a_captured_parameter():
    def results(compiled):
        weight = autojit.tensor([0.5, -1.0, 2.0], dtype=autojit.float64, requires_grad=True)
        x = autojit.tensor([1.0, 2.0, 3.0], dtype=autojit.float64)
        function = lambda x: (x * weight).sin().sum()  # noqa: E731
        if compiled:
            function = autojit.compile(function)
        (gradient,) = grad(function(x), weight, create_graph=True)
        (second,) = grad(gradient.sum(), weight)
        return second.numpy()

    np.testing.assert_allclose(results(True), results(False), rtol=1e-12)
    expected = -np.sin(np.array([0.5, -2.0, 6.0])) * np.array([1.0, 4.0, 9.0])
    np.testing.assert_allclose(results(True), expected, rtol=1e-12)


def test_incoming_gradient_that_requires_grad_and_a_non_leaf_argument():
    def results(compiled):
        base = autojit.tensor([0.3, -0.7], dtype=autojit.float64, requires_grad=True)
        weight = autojit.tensor([1.5, 0.5], dtype=autojit.float64, requires_grad=True)
        seed = autojit.tensor([2.0, -1.0], dtype=autojit.float64, requires_grad=True)
        function = lambda x: (x * weight).tanh()  # noqa: E731
        if compiled:
            function = autojit.compile(function)
        x = base * 3  # a non-leaf argument: gradients flow on to its own grad_fn
        (gradient,) = grad(function(x), base, grad_outputs=seed, create_graph=True)
        (gradient * gradient).sum().backward()
        return [base.grad, weight.grad, seed.grad]

    assert_same_grads(results(True), results(False))


def test_several_results_one_without_gradient():
    def results(compiled):
        weight = autojit.tensor([1.5, 0.5], dtype=autojit.float64, requires_grad=True)
        function = lambda x: ((x * weight).sin(), (x * weight).exp())  # noqa: E731
        if compiled:
            function = autojit.compile(function)
        x = autojit.tensor([0.3, -0.7], dtype=autojit.float64, requires_grad=True)
        first, _ = function(x)
        (gradient,) = grad(first.sum(), x, create_graph=True)
        gradient.sum().backward()
        return [x.grad, weight.grad]

    assert_same_grads(results(True), results(False))


def counting_replays(monkeypatch) -> list:
    calls = []
    original = autojit.ir.replay.replay

    def counted(*args):
        calls.append(1)
        return original(*args)
    monkeypatch.setattr(autojit.ir.replay, "replay", counted)
    return calls


def test_plain_backward_runs_the_compiled_graph_not_the_replay(monkeypatch):
    calls = counting_replays(monkeypatch)
    parameters = mlp_parameters()
    forward = autojit.compile(mlp(parameters))
    x = points()
    forward(x).sum().backward()
    grad(forward(x).sum(), x)
    assert calls == []
    (gradient,) = grad(forward(x).sum(), x, create_graph=True)
    assert calls and gradient.requires_grad


def test_hooks_retain_graph_and_the_freed_graph_error():
    weight = autojit.tensor([1.5, 0.5], dtype=autojit.float64, requires_grad=True)
    function = autojit.compile(lambda x: (x * weight).sin())
    x = autojit.tensor([0.3, -0.7], dtype=autojit.float64, requires_grad=True)
    y = function(x)
    seen = []
    y.register_hook(lambda gradient: seen.append(gradient.numpy().copy()) or gradient * 2)
    # create_graph=True retains the graph by default, as in eager
    (once,) = grad(y.sum(), x, create_graph=True)
    (again,) = grad(y.sum(), x, create_graph=True, retain_graph=False)
    # the hook doubled the incoming gradient: 2 cos(x w) w
    expected = 2 * np.cos(np.array([0.45, -0.35])) * np.array([1.5, 0.5])
    np.testing.assert_allclose(once.detach().numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(again.detach().numpy(), expected, rtol=1e-12)
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        grad(y.sum(), x, create_graph=True)


def test_modified_inputs_raise_the_version_error():
    weight = autojit.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=autojit.float64,
                            requires_grad=True)
    function = autojit.compile(lambda x: (x @ weight).exp().sum())
    x = autojit.tensor([[0.1, 0.2]], dtype=autojit.float64)
    loss = function(x)
    with autojit.no_grad():
        weight.mul_(2)
    # the compiled backward reads the saved product, not the weight ...
    grad(loss, weight, retain_graph=True)
    # ... the replay recomputes the product from the weight, which has changed since
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        grad(loss, weight, create_graph=True)


def test_a_random_draw_the_forward_did_not_keep_is_replayed_as_drawn():
    """The compiled backward needs only the saved sum, but a replay recomputes it from x and
    the draw: each call's node keeps the numbers that call drew."""
    def noisy(x):
        return (x + autojit.randn(3, dtype=autojit.float64)).sum().tanh()

    function = autojit.compile(noisy)
    data = [0.1, 0.2, 0.3]
    for seed in (3, 4):
        autojit.manual_seed(seed)
        x = autojit.tensor(data, dtype=autojit.float64, requires_grad=True)
        (first,) = grad(noisy(x), x, create_graph=True)
        (expected,) = grad(first.sum(), x)
        autojit.manual_seed(seed)
        x = autojit.tensor(data, dtype=autojit.float64, requires_grad=True)
        (first,) = grad(function(x), x, create_graph=True)
        (second,) = grad(first.sum(), x)
        np.testing.assert_allclose(second.numpy(), expected.numpy(), rtol=1e-12)
