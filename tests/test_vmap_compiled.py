"""vmap and autojit.compile composed, in both orders (compiler/vmapped.py): per-sample gradients
with functional_call + grad + vmap, compiled, equal eager's and torch.func's; a compiled
function or module called inside vmap (nested vmaps too) runs one compiled batched graph, with
new batch sizes; where autograd must record inside the vmap (`vmap(grad(compile(loss)))`), the
call runs eagerly with a CompileWarning and still equals torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

RNG = np.random.RandomState(0)
WEIGHTS = [RNG.randn(4, 3), RNG.randn(4), RNG.randn(1, 4), RNG.randn(1)]
X, Y = RNG.randn(6, 3).astype(np.float32), RNG.randn(6, 1).astype(np.float32)


def _model(lib):
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
    with lib.no_grad():
        for parameter, value in zip(model.parameters(), WEIGHTS):
            parameter.copy_(lib.tensor(value.astype(np.float32)))
    return model


def _per_sample(lib, compose, detached=True):
    """Per-sample gradients of an MSE loss, the torch.func idiom, with `compose` placing the
    compile; returns the gradients as arrays."""
    model, func = _model(lib), lib.func
    params = {name: p.detach() if detached else p for name, p in model.named_parameters()}

    def loss(p, x, y):
        out = func.functional_call(model, p, (x.unsqueeze(0),))
        return lib.nn.functional.mse_loss(out, y.unsqueeze(0))

    mapped = compose(func, loss)
    grads = mapped(params, lib.tensor(X), lib.tensor(Y))
    return mapped, {name: grad.detach().numpy() for name, grad in grads.items()}


ORDERS = {
    "compile(vmap(grad))": lambda func, loss: autojit.compile(
        func.vmap(func.grad(loss), in_dims=(None, 0, 0))),
    "vmap(compile(grad))": lambda func, loss: func.vmap(
        autojit.compile(func.grad(loss)), in_dims=(None, 0, 0)),
}


@pytest.mark.parametrize("order", ORDERS)
def test_per_sample_gradients_compiled_equal_torch(order):
    _, expected = _per_sample(torch, lambda func, loss: func.vmap(func.grad(loss),
                                                                  in_dims=(None, 0, 0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        mapped, found = _per_sample(autojit, ORDERS[order])
        inner = mapped if order.startswith("compile") else None
        for name in expected:
            np.testing.assert_allclose(found[name], expected[name], rtol=1e-5, atol=1e-6)
    if inner is not None:
        assert inner.stats().compiled_calls == 1 and inner.stats().eager_calls == 0


def test_a_compiled_function_inside_vmap_runs_compiled_over_new_batch_sizes():
    def f(a, b, c):
        return (a * b).sin().sum() + a.exp().mean() * c

    compiled = autojit.compile(f)
    mapped = autojit.func.vmap(compiled, in_dims=(0, None, 0))
    b = autojit.tensor([0.5, -1.0, 2.0])
    for rows in (4, 4, 5, 6):  # a second size makes the batch dim symbolic in both arguments
        a, c = (autojit.tensor(RNG.randn(rows, *shape).astype(np.float32))
                for shape in ((3,), ()))
        expected = torch.func.vmap(f, in_dims=(0, None, 0))(
            *(torch.tensor(value.numpy()) for value in (a, b, c)))
        np.testing.assert_allclose(mapped(a, b, c).numpy(), expected.numpy(), rtol=1e-5)
    stats = compiled.stats()
    assert stats.calls == 4 and stats.compiled_calls == 4 and stats.eager_calls == 0


def test_nested_vmaps_of_a_compiled_function_equal_torch():
    def f(a, b):
        return (a * b).sin().sum()

    compiled = autojit.compile(f)
    found = autojit.func.vmap(autojit.func.vmap(compiled, in_dims=(0, None)),
                              in_dims=(None, 0))(autojit.tensor(X), autojit.tensor(Y[:, 0]))
    expected = torch.func.vmap(torch.func.vmap(f, in_dims=(0, None)), in_dims=(None, 0))(
        torch.tensor(X), torch.tensor(Y[:, 0]))
    np.testing.assert_allclose(found.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    assert compiled.stats().eager_calls == 0


def test_a_compiled_module_inside_vmap_backpropagates_to_its_parameters():
    results = {}
    for lib in (torch, autojit):
        model = _model(lib)
        called = autojit.compile(model) if lib is autojit else model
        out = lib.func.vmap(called)(lib.tensor(X))
        out.pow(2).sum().backward()
        results[lib.__name__] = (out.detach().numpy(),
                                 [p.grad.numpy() for p in model.parameters()])
    (out_t, grads_t), (out_a, grads_a) = results["torch"], results["autojit"]
    np.testing.assert_allclose(out_a, out_t, rtol=1e-5, atol=1e-6)
    for found, expected in zip(grads_a, grads_t):
        np.testing.assert_allclose(found, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", ["vmap(grad(compile))", "vmap(compile(grad)), parameters"])
def test_autograd_inside_the_vmap_runs_eagerly_with_a_warning(form):
    _, expected = _per_sample(torch, lambda func, loss: func.vmap(func.grad(loss),
                                                                  in_dims=(None, 0, 0)))
    if form.startswith("vmap(grad"):
        def compose(func, loss):
            return func.vmap(func.grad(autojit.compile(loss)), in_dims=(None, 0, 0))
        detached = True
    else:
        compose, detached = ORDERS["vmap(compile(grad))"], False
    with pytest.warns(autojit.CompileWarning, match="runs eagerly inside vmap: an argument "
                      "requires grad"):
        _, found = _per_sample(autojit, compose, detached)
    for name in expected:
        np.testing.assert_allclose(found[name], expected[name], rtol=1e-5, atol=1e-6)
