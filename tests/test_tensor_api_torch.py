"""Tensor API against torch (tests/torch_compare.py): `alpha=` of add and sub (top-level, method
and in-place) and rsub, and Python's errors for unexpected arguments naming torch's function
rather than the factory that made it.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from torch_compare import same_as_torch, torch

import autojit

rng = np.random.default_rng(11)
M = rng.standard_normal((2, 3))
V = rng.standard_normal(3)
F = M.astype(np.float32)
I = np.arange(6).reshape(2, 3)  # noqa: E741
B = np.array([True, False, True])


def _inplace(t, x, y, name, **kwargs):
    out = x.detach().clone() if isinstance(x, t.Tensor) else x
    getattr(out, name)(y, **kwargs)
    return out


VALUE_CASES = {
    "add_alpha": (lambda t, x, y: t.add(x, y, alpha=2), M, V),
    "add_alpha_float": (lambda t, x, y: t.add(x, y, alpha=-0.25), F, F),
    "add_alpha_scalar_other": (lambda t, x: t.add(x, 2.5, alpha=3), M),
    "add_alpha_scalar_input": (lambda t, y: t.add(2, y, alpha=3), M),
    "add_alpha_int": (lambda t, x, y: t.add(x, y, alpha=-3), I, I),
    "add_alpha_int_float_other": (lambda t, x: t.add(x, 2.5, alpha=2), I),
    "add_alpha_mixed_dtypes": (lambda t, x, y: t.add(x, y, alpha=0.5), M, I),
    "add_alpha_bool": (lambda t, x, y: t.add(x, y, alpha=2), B, ~B),
    "add_alpha_bool_alpha": (lambda t, x, y: t.add(x, y, alpha=False), B, ~B),
    "add_alpha_tensor": (lambda t, x, y: t.add(x, y, alpha=t.tensor(2.0)), M, M),
    "add_method_alpha": (lambda t, x, y: x.add(y, alpha=1.5), M, V),
    "add_inplace_alpha": (lambda t, x, y: _inplace(t, x, y, "add_", alpha=-0.1), M, M),
    "add_inplace_alpha_grad": (lambda t, x, y: x * 1 + _inplace(t, x * 1, y, "add_",
                                                                alpha=-0.1), M, M),
    "add_out_alpha": (lambda t, x, y: t.add(x, y, alpha=2, out=t.empty(2, 3)), F, F),
    "sub_alpha": (lambda t, x, y: t.sub(x, y, alpha=0.5), M, V),
    "sub_alpha_int": (lambda t, x, y: t.sub(x, y, alpha=4), I, I),
    "sub_method_alpha": (lambda t, x, y: x.sub(y, alpha=3), M, M),
    "sub_inplace_alpha": (lambda t, x, y: _inplace(t, x * 1, y, "sub_", alpha=0.5), M, V),
    "subtract_alpha": (lambda t, x, y: t.subtract(x, y, alpha=2), M, M),
    "rsub": (lambda t, x, y: t.rsub(x, y), M, V),
    "rsub_alpha": (lambda t, x, y: t.rsub(x, y, alpha=2.5), M, V),
    "rsub_scalar": (lambda t, x: t.rsub(x, 2, alpha=3), M),
    "rsub_int": (lambda t, x, y: t.rsub(x, y, alpha=2), I, I),
    "addcmul_value": (lambda t, x, y: t.addcmul(x, y, y, value=-0.5), M, V),
    "addcmul_value_int": (lambda t, x: t.addcmul(x, x, x, value=0.5), I),
    "addcdiv_value": (lambda t, x, y: t.addcdiv(x, y, y + 3, value=2), M, V),
    "addcmul_inplace_value": (lambda t, x, y: _inplace(t, x, y, "addcmul_", tensor2=y,
                                                       value=2), M, M),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_and_gradients_like_torch(name):
    function, *arrays = VALUE_CASES[name]
    same_as_torch(function, *arrays)


ERROR_CASES = {
    "add_float_alpha_int": (lambda t, x: t.add(x, x, alpha=0.5), I),
    "add_bool_alpha_int": (lambda t, x: t.add(x, x, alpha=True), I),
    "add_bool_alpha_float": (lambda t, x: t.add(x, x, alpha=True), M),
    "add_float_alpha_bool": (lambda t, x: t.add(x, x, alpha=0.5), B),
    "add_alpha_none": (lambda t, x: t.add(x, x, alpha=None), M),
    "add_alpha_string": (lambda t, x: t.add(x, x, alpha="2"), M),
    "add_inplace_float_alpha_int": (lambda t, x: x.add_(x, alpha=1.5), I),
    "sub_float_alpha_int": (lambda t, x: t.sub(x, x, alpha=0.5), I),
    "sub_bool_alpha": (lambda t, x: t.sub(x, x, alpha=2), B),
    "rsub_float_alpha_int": (lambda t, x: t.rsub(x, x, alpha=0.5), I),
    "add_unexpected_keyword": (lambda t, x: t.add(x, x, foo=1), M),
    "add_method_unexpected_keyword": (lambda t, x: x.add(x, foo=1), M),
    "exp_unexpected_keyword": (lambda t, x: t.exp(x, foo=1), M),
    "exp_method_unexpected_keyword": (lambda t, x: x.exp(foo=1), M),
    "sub_three_positional": (lambda t, x: t.sub(x, x, 2), M),
    "atan_unexpected_keyword": (lambda t, x: t.atan(x, foo=1), M),
    "bitwise_and_unexpected_keyword": (lambda t, x: t.bitwise_and(x, x, foo=1), I),
    "lgamma_unexpected_keyword": (lambda t, x: t.lgamma(x, foo=1), M),
}
# torch's argument parser lists the signatures of an op with several (a Tensor or a Scalar
# other), and its methods without keywords say so, where Python's error names the function:
# only the type is compared.
OVERLOADED = {"bitwise_and_unexpected_keyword", "exp_method_unexpected_keyword"}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_like_torch(name):
    function, *arrays = ERROR_CASES[name]
    same_as_torch(function, *arrays, grad=False, message=name not in OVERLOADED)


def test_no_public_function_is_named_after_its_factory():
    """Python's TypeErrors name a function by its __qualname__: never `_call2.<locals>...`."""
    leaks = []
    for owner in (autojit, autojit.Tensor, autojit.nn.functional, autojit.special,
                  autojit.linalg):
        for name in dir(owner):
            function = getattr(owner, name, None)
            if callable(function) and not inspect.isclass(function) and \
                    "<locals>" in getattr(function, "__qualname__", ""):
                leaks.append(f"{owner.__name__}.{name}: {function.__qualname__}")
    assert not leaks


def test_alpha_compiled_as_eager():
    weight = autojit.tensor(M, requires_grad=True)

    def step(x):
        loss = (weight * x).sum()
        (grad,) = autojit.autograd.grad(loss, weight)
        with autojit.no_grad():
            weight.data.add_(grad, alpha=-0.1)
        return autojit.rsub(x, 1.0, alpha=2) + autojit.sub(x, grad, alpha=0.5)

    x = autojit.tensor(M)
    eager = step(x)
    compiled = autojit.compile(step, fullgraph=True)(x)
    np.testing.assert_allclose(compiled.numpy(), eager.numpy() - 0.0, rtol=1e-12)
    np.testing.assert_allclose(weight.detach().numpy(), M - 0.2 * M, rtol=1e-12)
    assert torch.rsub(torch.tensor(M), 1.0, alpha=2).numpy() == pytest.approx(1 - 2 * M)
