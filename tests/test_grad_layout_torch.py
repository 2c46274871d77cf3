"""A new .grad is laid out as torch's AccumulateGrad lays it out, eagerly and compiled.

torch's gradient layout contract: a .grad that backward creates has the parameter's strides
when the parameter is dense and non-overlapping (a transposed parameter gets a transposed
.grad), else the contiguous layout; a .grad that backward accumulates into keeps its own
layout. A program that writes through `w.grad.view(-1)` relies on it: where the .grad is laid
out otherwise, the view is a copy (or an error) and the write is lost. Each case runs under
torch, eager autojit and compiled autojit, and compares strides and values.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autojit
from autojit.codegen.cpu import workers

COMPILED = "compiled"
MODES = ("eager", COMPILED)


def _step(function, mode):
    return autojit.compile(function) if mode == COMPILED else function


def _linear_run(lib, mode=None):
    """Two SGD-free steps of a Linear layer; between them the program zeroes .grad through
    `view(-1)`, as a hand-written zero_grad does. Returns the strides and the .grad sums."""
    lib.manual_seed(0)
    layer = lib.nn.Linear(4, 3)
    x = lib.tensor(np.arange(8.0, dtype=np.float32).reshape(2, 4))

    def step(x):
        loss = layer(x).sum()
        loss.backward()
        return loss

    step = _step(step, mode) if lib is autojit else step
    step(x)
    strides = (layer.weight.grad.stride(), layer.bias.grad.stride())
    layer.weight.grad.view(-1).zero_()
    layer.bias.grad.view(-1).zero_()
    step(x)
    return strides, float(layer.weight.grad.sum()), float(layer.bias.grad.sum())


@pytest.mark.parametrize("mode", MODES)
def test_a_linear_weight_grad_is_row_major_and_a_view_of_it_zeroes_it(mode):
    expected = _linear_run(torch)
    assert expected[0] == ((4, 1), (1,))
    assert _linear_run(autojit, mode) == expected


def _transposed_parameter(lib):
    base = lib.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3))
    return base.t().detach().requires_grad_()  # shape (3, 4), strides (1, 3)


def _strided_parameter(lib):
    base = lib.tensor(np.arange(24.0, dtype=np.float32).reshape(4, 6))
    return base[:, ::2].detach().requires_grad_()  # not dense: strides (6, 2)


def _product_step(w):
    def step(x):
        (x @ w.t()).square().sum().backward()
    return step


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("make", [_transposed_parameter, _strided_parameter])
def test_a_new_grad_follows_a_dense_parameter_and_is_contiguous_otherwise(make, mode):
    results = {}
    for lib in (torch, autojit):
        w = make(lib)
        x = lib.tensor(np.linspace(-1.0, 1.0, 2 * w.shape[1], dtype=np.float32)
                       .reshape(2, w.shape[1]))
        step = _step(_product_step(w), mode) if lib is autojit else _product_step(w)
        strides = []
        for _ in range(3):
            w.grad = None
            step(x)
            strides.append(w.grad.stride())
        results[lib] = (strides, w.grad.detach().numpy().copy())
    assert results[autojit][0] == results[torch][0]
    np.testing.assert_allclose(results[autojit][1], results[torch][1], rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_grads_accumulated_into_keep_their_own_layout(mode):
    """A transposed .grad already there is added into in place: its strides and identity
    stay, across compiled calls too."""
    results = {}
    for lib in (torch, autojit):
        layer = lib.nn.Linear(4, 3)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(np.linspace(-0.5, 0.5, 12, dtype=np.float32)
                                          .reshape(3, 4)))
            layer.bias.fill_(0.1)
        x = lib.tensor(np.arange(8.0, dtype=np.float32).reshape(2, 4))
        held = lib.zeros(4, 3).t()
        layer.weight.grad = held

        def step(x, layer=layer):
            layer(x).square().sum().backward()

        step = _step(step, mode) if lib is autojit else step
        for _ in range(3):
            step(x)
        assert layer.weight.grad is held
        results[lib] = (layer.weight.grad.stride(), layer.weight.grad.detach().numpy().copy())
    assert results[autojit][0] == results[torch][0] == (1, 3)
    np.testing.assert_allclose(results[autojit][1], results[torch][1], rtol=1e-5)


def _set_to_none_step(w, lib):
    def step(x):
        w.grad = None  # zero_grad(set_to_none=True) inside the step: a new .grad each call
        (lib.tanh(x @ w.t()) * 2).sum().backward()
        return w.grad
    return step


@pytest.mark.parametrize("mode", MODES)
def test_a_returned_grad_of_a_transposed_parameter_is_laid_out_as_torch(mode):
    results = {}
    for lib in (torch, autojit):
        w = _transposed_parameter(lib)
        x = lib.tensor(np.linspace(-0.1, 0.1, 8, dtype=np.float32).reshape(2, 4))
        step = _set_to_none_step(w, lib)
        step = _step(step, mode) if lib is autojit else step
        for _ in range(4):  # past the first calls, onto the steady-state (direct) call
            grad = step(x)
            assert grad is w.grad
            assert grad.stride() == (1, 3)
            grad.t().view(-1)  # a view of the transposed .grad, as in torch: no error
        results[lib] = grad.detach().numpy().copy()
    np.testing.assert_allclose(results[autojit], results[torch], rtol=1e-5, atol=1e-9)


def test_a_compiled_step_with_a_row_major_parameter_keeps_its_grad_array():
    """The common case costs nothing: the array the run made for the .grad is the .grad."""
    w = autojit.ones(3, 4, requires_grad=True)
    step = autojit.compile(_set_to_none_step(w, autojit))
    x = autojit.ones(2, 4)
    for _ in range(3):
        grad = step(x)
        assert grad.stride() == (4, 1) and grad.numpy().base is None


def test_the_steady_state_direct_call_lays_out_a_transposed_parameters_grad():
    """A step whose only effect is a new .grad runs as one generated function once its native
    program exists (codegen/schedule/direct_calls.py); that .grad too is laid out as torch's."""
    results = {}
    for lib in (torch, autojit):
        base = lib.tensor(np.linspace(-0.3, 0.3, 64, dtype=np.float32).reshape(8, 8))
        w = base.t().detach().requires_grad_()

        def step(x, w=w):
            w.grad = None
            y = x
            for _ in range(4):
                y = (y * 2).tanh().sin()
            (y * w).sum().backward()

        function = autojit.compile(step) if lib is autojit else step
        x = lib.tensor(np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(8, 8))
        strides = []
        for _ in range(6):
            function(x)
            strides.append(w.grad.stride())
        results[lib] = (strides, w.grad.numpy().copy())
        if lib is autojit:
            (executable,) = function.executables
            if workers.shared() is not None:  # the direct call needs the native workers
                assert callable(executable._direct)
    assert results[autojit][0] == results[torch][0] == [(1, 8)] * 6
    np.testing.assert_allclose(results[autojit][1], results[torch][1], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transposed_parameter", [False, True])
@pytest.mark.parametrize("transposed_value", [False, True])
def test_an_assigned_grad_keeps_the_assigned_tensors_layout(transposed_value,
                                                            transposed_parameter, mode):
    """`w.grad = g` then backward: the .grad is g, added into in place, whatever the
    parameter's layout (the contract is for the .grad backward makes)."""
    results = {}
    for lib in (torch, autojit):
        base = lib.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3))
        w = (base.t() if transposed_parameter else base.t().contiguous()).detach()
        w.requires_grad_()
        x = lib.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4))
        y = lib.tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3))

        def step(x, y, w=w):
            w.grad = y.t() * 2 if transposed_value else x * 2
            (w * x).sum().backward()

        function = _step(step, mode) if lib is autojit else step
        for _ in range(3):
            function(x, y)
        results[lib] = (w.grad.stride(), w.grad.numpy().copy())
    assert results[autojit][0] == results[torch][0] == ((1, 3) if transposed_value else (4, 1))
    np.testing.assert_array_equal(results[autojit][1], results[torch][1])


def _grad_sharing(lib):
    """Which new .grads take the gradient's own memory, as torch's AccumulateGrad steals a
    gradient nothing else holds, and which are copies: a gradient a custom Function hands to
    two leaves (one takes it, the other copies), one it keeps for itself, one a hook keeps,
    an expanded (non-contiguous) one, and one the caller gave to backward."""
    seen = {}

    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            seen["twice"] = grad.data_ptr()
            return grad, grad

    class Keeps(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            seen["kept"] = kept = grad * 3
            return kept

    class Expands(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, grad):
            return lib.ones(1).expand(2, 3)

    a, b = lib.ones(2, 3, requires_grad=True), lib.ones(2, 3, requires_grad=True)
    Twice.apply(a, b)[1][0].backward()
    twice = (a.grad.data_ptr() == seen["twice"]) + (b.grad.data_ptr() == seen["twice"])
    distinct = a.grad.data_ptr() != b.grad.data_ptr()
    x = lib.ones(4, requires_grad=True)
    Keeps.apply(x).sum().backward()
    kept = x.grad.data_ptr() == seen["kept"].data_ptr()
    seen["kept"].add_(1)  # the .grad is its own memory: unchanged
    y = lib.ones(2, 3, requires_grad=True)
    Expands.apply(y).backward()
    y.grad.add_(1)
    z = lib.ones(4, requires_grad=True)
    hooked = []
    (z * 2).register_hook(lambda grad: hooked.append(grad))
    w = z * 2
    w.register_hook(lambda grad: hooked.append(grad * 1))
    (w * 5).sum().backward()
    hooked[0].add_(1)
    given = lib.ones(4)
    leaf = lib.ones(4, requires_grad=True)
    leaf.backward(given)
    given.add_(1)
    return (twice, distinct, kept, x.grad.tolist(), y.grad.tolist(), z.grad.tolist(),
            leaf.grad.tolist())


def test_a_new_grad_takes_a_gradient_nothing_else_holds_as_torch():
    assert _grad_sharing(autojit) == _grad_sharing(torch)
    mine = _grad_sharing(autojit)
    assert mine[:3] == (1, True, False)  # one leaf took the Function's gradient, not both
