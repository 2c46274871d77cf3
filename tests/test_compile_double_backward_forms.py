"""Compiled results differentiated twice from outside the function, where an op's VJP has a
first-order-only form.

cumprod's and prod's gradients have a cheap form for inputs with zeros that has the right
value but not the right derivative (it treats the zeros' positions as constants); with
create_graph=True eager uses the exact form. The compiled backward is traced without
create_graph, so it holds the cheap form: a double backward through it was wrong at the zeros
(cumprod of [3, 5, 0, 2]: 0 where torch gives 1606). Each case compiles a function, takes
grad with create_graph=True outside it and grad again, and compares with torch, to second
order, and with autojit's gradgradcheck in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autojit

ROWS = {
    "one zero": [3.0, 5.0, 0.0, 2.0],
    "two zeros": [3.0, 0.0, 5.0, 0.0, 2.0],
    "a zero first": [0.0, 1.5, -2.0, 0.5],
    "no zero": [1.5, -0.5, 2.0, 0.75],
}

OPS = {
    "cumprod": lambda x: x.cumprod(-1),
    "cumprod over dim 0": lambda x: x.t().cumprod(0) * 1.5,
    "prod over a dim": lambda x: x.prod(-1),
    "prod over everything": lambda x: x.prod() * x,
}


def _input(lib, row):
    data = np.stack([np.array(row), np.array(row)[::-1] * 0.5])
    return lib.tensor(data, dtype=lib.float64, requires_grad=True)


def _second_order(lib, function, row):
    x = _input(lib, row)
    y = function(x)
    weights = lib.tensor(np.linspace(1.0, 2.0, y.numel()).reshape(y.shape), dtype=lib.float64)
    (first,) = lib.autograd.grad((y * weights).sum(), x, create_graph=True)
    (second,) = lib.autograd.grad((first * first).sum(), x)
    return y.detach().numpy(), first.detach().numpy(), second.numpy()


@pytest.mark.parametrize("row", list(ROWS))
@pytest.mark.parametrize("name", list(OPS))
def test_a_compiled_result_differentiated_twice_outside_matches_torch(name, row):
    function = OPS[name]
    expected = _second_order(torch, function, ROWS[row])
    for run in (function, autojit.compile(function)):
        for mine, theirs in zip(_second_order(autojit, run, ROWS[row]), expected):
            np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["cumprod", "prod over a dim"])
def test_gradgradcheck_of_a_compiled_function_at_zeros(name):
    compiled = autojit.compile(OPS[name])
    x = _input(autojit, ROWS["two zeros"])
    assert autojit.autograd.gradgradcheck(compiled, (x,))


def test_hooks_of_the_inputs_run_once_through_a_replayed_backward():
    """The replay differentiates the recomputed results inside the outer backward; the
    gradient then reaches the input through the outer pass alone, which runs its hooks."""
    seen = {}
    for lib in (torch, autojit):
        calls = []
        x = _input(lib, ROWS["one zero"])
        x.register_hook(lambda grad, calls=calls: calls.append(grad.detach().numpy().copy()))
        function = OPS["cumprod"] if lib is torch else autojit.compile(OPS["cumprod"])
        (first,) = lib.autograd.grad(function(x).sum(), x, create_graph=True)
        first.sum().backward()
        seen[lib] = (calls, x.grad.numpy().copy())
    assert len(seen[autojit][0]) == len(seen[torch][0]) == 2
    for mine, theirs in zip(seen[autojit][0], seen[torch][0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)
    np.testing.assert_allclose(seen[autojit][1], seen[torch][1], rtol=1e-12)


def test_a_hook_on_an_argument_runs_once_on_a_compiled_results_gradient():
    """The trace of the compiled backward must not run the argument's hooks: the engine runs
    them when it delivers the gradient (a hook doubling it had doubled it twice)."""
    grads = {}
    for lib in (torch, autojit):
        function = (lambda x: (x * 3).sin()) if lib is torch else \
            autojit.compile(lambda x: (x * 3).sin())
        for _ in range(2):
            x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
            calls = []
            x.register_hook(lambda grad, calls=calls: calls.append(1) or grad * 2)
            function(x).sum().backward()
            assert len(calls) == 1
        grads[lib] = x.grad.numpy().copy()
    np.testing.assert_allclose(grads[autojit], grads[torch], rtol=1e-12)
