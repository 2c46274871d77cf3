"""Compiled results differentiated from outside: `loss = compiled(x); loss.backward()`.

The compiled function's results get a grad_fn that runs a compiled backward graph; these tests
check it against eager autograd: gradients, accumulation, hooks, retain_graph, version
counter errors, and the guards that decide when to retrace.
"""

import warnings

import numpy as np
import pytest

import autojit


def parameters(seed=0, dtype=autojit.float64):
    generator = np.random.default_rng(seed)
    weight = autojit.tensor(generator.standard_normal((4, 3)), dtype=dtype, requires_grad=True)
    bias = autojit.tensor(generator.standard_normal(3), dtype=dtype, requires_grad=True)
    return weight, bias


def batch(rows=5, seed=1, dtype=autojit.float64, requires_grad=False):
    generator = np.random.default_rng(seed)
    return autojit.tensor(generator.standard_normal((rows, 4)), dtype=dtype,
                          requires_grad=requires_grad)


def model_for(weight, bias):
    def model(x):
        hidden = (x @ weight + bias).tanh()
        return (hidden * hidden.sigmoid()).sum()
    return model


def test_gradients_equal_eager_and_accumulate_over_calls():
    weight, bias = parameters()
    eager_weight, eager_bias = parameters()
    compiled = autojit.compile(model_for(weight, bias))
    eager = model_for(eager_weight, eager_bias)
    x = batch(requires_grad=True)
    eager_x = batch(requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            compiled(x).backward()
            eager(eager_x).backward()
    for mine, theirs in ((weight, eager_weight), (bias, eager_bias), (x, eager_x)):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)
    assert len(compiled.executables) == 1 and compiled.executables[0].calls == 3


def test_several_results_and_an_unused_one():
    weight, bias = parameters()

    def f(x):
        hidden = (x @ weight).sigmoid()
        return hidden, (hidden * bias).sum(), x * 2

    compiled = autojit.compile(f)
    x = batch()
    hidden, total, doubled = compiled(x)
    assert not doubled.requires_grad
    total.backward()
    compiled_grads = weight.grad.numpy().copy(), bias.grad.numpy().copy()
    weight.grad = bias.grad = None
    f(x)[1].backward()
    np.testing.assert_allclose(compiled_grads[0], weight.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(compiled_grads[1], bias.grad.numpy(), rtol=1e-12)

    weight.grad = None
    hidden, total, _ = compiled(x)
    (hidden.sum() * 3 + total).backward()
    together = weight.grad.numpy().copy()
    weight.grad = None
    hidden, total, _ = f(x)
    (hidden.sum() * 3 + total).backward()
    np.testing.assert_allclose(together, weight.grad.numpy(), rtol=1e-12)


def test_gradient_reaches_a_non_leaf_argument_and_its_leaf():
    weight, bias = parameters()
    leaf = batch(requires_grad=True)
    compiled = autojit.compile(model_for(weight, bias))
    compiled(leaf * 3).backward()
    compiled_grad = leaf.grad.numpy().copy()
    leaf.grad = None
    model_for(weight, bias)(leaf * 3).backward()
    np.testing.assert_allclose(compiled_grad, leaf.grad.numpy(), rtol=1e-12)


def test_retain_graph_and_the_freed_error():
    weight, bias = parameters()
    loss = autojit.compile(model_for(weight, bias))(batch())
    loss.backward(retain_graph=True)
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_input_modified_in_place_before_backward_raises():
    weight, bias = parameters()
    compiled = autojit.compile(model_for(weight, bias))
    x = batch()
    loss = compiled(x)  # x is read by the gradient of x @ weight
    x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_returned_residual_modified_in_place_raises():
    weight, _ = parameters()
    compiled = autojit.compile(lambda x: (x @ weight).sigmoid())  # backward reads the output
    out = compiled(batch())
    out.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_parameter_hooks_run_once_per_backward():
    weight, bias = parameters()
    compiled = autojit.compile(model_for(weight, bias))
    calls = []
    handle = weight.register_hook(lambda grad: calls.append(1) or grad * 2)
    compiled(batch()).backward()
    hooked = weight.grad.numpy().copy()
    handle.remove()
    weight.grad = None
    compiled(batch()).backward()
    assert calls == [1]
    np.testing.assert_allclose(hooked, 2 * weight.grad.numpy(), rtol=1e-12)


def test_create_graph_through_a_compiled_result_gives_a_differentiable_gradient():
    # Higher orders are checked against eager in test_compile_double_backward.py.
    weight, bias = parameters()
    eager_weight, eager_bias = parameters()
    compiled = autojit.compile(model_for(weight, bias))
    (gradient,) = autojit.autograd.grad(compiled(batch()), weight, create_graph=True)
    (expected,) = autojit.autograd.grad(model_for(eager_weight, eager_bias)(batch()),
                                        eager_weight, create_graph=True)
    assert gradient.requires_grad and gradient.grad_fn is not None
    np.testing.assert_allclose(gradient.detach().numpy(), expected.detach().numpy(), rtol=1e-12)


def test_no_grad_call_gets_no_backward_and_its_own_executable():
    weight, bias = parameters()
    compiled = autojit.compile(model_for(weight, bias))
    with autojit.no_grad():
        loss = compiled(batch())
    assert not loss.requires_grad and loss.grad_fn is None
    assert compiled(batch()).grad_fn is not None
    assert len(compiled.executables) == 2


def test_interpreter_backend_gives_the_same_gradients():
    weight, bias = parameters()
    autojit.compile(model_for(weight, bias), backend="interpreter")(batch()).backward()
    interpreted = weight.grad.numpy().copy()
    weight.grad = None
    autojit.compile(model_for(weight, bias))(batch()).backward()
    np.testing.assert_allclose(interpreted, weight.grad.numpy(), rtol=1e-12)


def test_joint_forward_and_backward_ir_are_inspectable():
    weight, bias = parameters()
    compiled = autojit.compile(model_for(weight, bias))
    compiled(batch())
    assert "cotangent" in compiled.ir() and "input_grad" not in compiled.forward_ir()
    assert "saved" in compiled.forward_ir()
    assert "matmul" in compiled.backward_ir()


def test_a_step_that_only_reads_grad_retraces_when_grad_appears():
    weight = autojit.tensor([1.0, 2.0], requires_grad=True)

    def step():
        with autojit.no_grad():
            if weight.grad is not None:  # an optimizer skips parameters without a gradient
                weight.sub_(weight.grad)

    compiled = autojit.compile(step)
    compiled()
    assert weight.tolist() == [1.0, 2.0]
    weight.grad = autojit.tensor([0.5, 0.5])
    compiled()
    assert weight.tolist() == [0.5, 1.5]
    assert len(compiled.executables) == 2


def test_grad_of_an_untouched_parameter_is_not_guarded():
    weight, bias = parameters()
    compiled = autojit.compile(model_for(weight, bias))
    compiled(batch()).backward()  # weight.grad goes from None to a tensor: no retrace
    compiled(batch()).backward()
    assert len(compiled.executables) == 1


def test_a_leaf_made_with_requires_grad_is_returned_as_a_new_leaf_each_call():
    """`zeros(2, requires_grad=True)` made and returned by a compiled function is, as eagerly,
    a new leaf that requires grad on every call, and a backward reaches its .grad."""
    def made(x):
        return x + 1, autojit.zeros(2, requires_grad=True), autojit.full((3,), 2.0) * 2

    compiled = autojit.compile(made)
    x = autojit.ones(2)
    expected = made(x)
    leaves = []
    for _ in range(2):
        result = compiled(x)
        for mine, theirs in zip(result, expected, strict=True):
            assert mine.requires_grad == theirs.requires_grad
            assert mine.is_leaf == theirs.is_leaf and mine.grad_fn is None
            np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
        (result[1] * 3).sum().backward()
        np.testing.assert_array_equal(result[1].grad.numpy(), [3.0, 3.0])
        leaves.append(result[1])
    assert leaves[0] is not leaves[1]
    assert len(compiled.executables) == 1
