"""Tensor API against torch (tests/torch_compare.py): `alpha=` of add and sub (top-level, method
and in-place) and rsub, Python's errors for unexpected arguments naming torch's function
rather than the factory that made it, quantile and nanquantile (values, gradients of both
orders, errors), tensor_split, hsplit, vsplit and dsplit.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from torch_compare import same_as_torch, torch

import autojit

rng = np.random.default_rng(11)
M = rng.standard_normal((2, 3))
Q = rng.permutation(20).reshape(4, 5) / 7.0  # distinct values: the gradients have no ties
QN = Q.copy()
QN[0, 1] = QN[3, 0] = QN[3, 2] = np.nan
P = np.array([0.1, 0.5, 0.85])
C = np.arange(24.0).reshape(2, 3, 4)
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
    "quantile": (lambda t, x: t.quantile(x, 0.3), Q),
    "quantile_dim_tensor_q": (lambda t, x, q: t.quantile(x, q, dim=1), Q, P),
    "quantile_keepdim_negative_dim": (lambda t, x: t.quantile(x, 0.7, -2, True), Q),
    "quantile_keepdim_no_dim": (lambda t, x, q: t.quantile(x, q, keepdim=True), Q, P),
    "quantile_lower": (lambda t, x: t.quantile(x, 0.35, 0, interpolation="lower"), Q),
    "quantile_higher": (lambda t, x: t.quantile(x, 0.35, 1, interpolation="higher"), Q),
    "quantile_midpoint": (lambda t, x, q: t.quantile(x, q, 1, interpolation="midpoint"), Q, P),
    "quantile_nearest": (lambda t, x: t.quantile(x, 0.375, 1, interpolation="nearest"), Q),
    "quantile_ends": (lambda t, x: (t.quantile(x, 0.0, 1), t.quantile(x, 1, 1)), Q),
    "quantile_nan": (lambda t, x: t.quantile(x, 0.4, 1), QN),
    "quantile_0d": (lambda t, x: t.quantile(x[0, 0], 0.2, dim=0), Q),
    "quantile_method": (lambda t, x: x.quantile(0.5, 1), Q),
    "quantile_out": (lambda t, x: t.quantile(x, 0.5, 1, out=t.empty(4, dtype=t.float64)), Q),
    "nanquantile": (lambda t, x, q: t.nanquantile(x, q, 1), QN, P),
    "nanquantile_all": (lambda t, x: t.nanquantile(x, 0.25), QN),
    "nanquantile_all_nan_row": (lambda t, x: t.nanquantile(x * t.nan, 0.25, 0), QN),
    "nanquantile_nearest": (lambda t, x: x.nanquantile(0.5, 0, interpolation="nearest"), QN),
    "tensor_split_sections": (lambda t, x: t.tensor_split(x, 3, dim=2), C),
    "tensor_split_indices": (lambda t, x: t.tensor_split(x, [1, -1, 9, 2], dim=-1), C),
    "tensor_split_tensor": (lambda t, x: t.tensor_split(x, t.tensor([1, 2]), 1), C),
    "tensor_split_tensor_sections": (lambda t, x: t.tensor_split(x, t.tensor(2)), C),
    "tensor_split_method_keywords": (lambda t, x: (x.tensor_split(sections=4, dim=2),
                                                   x.tensor_split(indices=(1,), dim=1)), C),
    "hsplit": (lambda t, x: (t.hsplit(x, 3), x.hsplit([2])), C),
    "hsplit_1d": (lambda t, x: t.hsplit(x, 2), V[:2]),
    "vsplit": (lambda t, x: (t.vsplit(x, 2), x.vsplit([1])), C),
    "dsplit": (lambda t, x: (t.dsplit(x, 2), x.dsplit([1, 3])), C),
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
    "quantile_q_range": (lambda t, x: t.quantile(x, 1.5), Q),
    "quantile_q_range_negative": (lambda t, x: t.quantile(x, -0.1), Q),
    "quantile_q_values_range": (lambda t, x: t.quantile(x, t.tensor([0.5, 1.5])), Q),
    "quantile_integer": (lambda t, x: t.quantile(x, 0.5), I),
    "quantile_integer_q_range": (lambda t, x: t.quantile(x, 2.0), I),
    "quantile_q_dtype": (lambda t, x: t.quantile(x, t.tensor(0.5)), Q),
    "quantile_interpolation": (lambda t, x: t.quantile(x, 0.5, interpolation="foo"), I),
    "quantile_empty": (lambda t: t.quantile(t.empty(0, 3), 0.5, dim=1),),
    "quantile_q_2d": (lambda t, x: t.quantile(x, t.ones(2, 2, dtype=t.float64) / 2), Q),
    "quantile_dim": (lambda t, x: t.quantile(x, 0.5, dim=2), Q),
    "quantile_out_dtype": (lambda t, x: t.quantile(x, 0.5, out=t.empty(0)), Q),
    "quantile_q_list": (lambda t, x: t.quantile(x, [0.5]), Q),
    "nanquantile_integer": (lambda t, x: t.nanquantile(x, 0.5), I),
    "tensor_split_zero": (lambda t, x: t.tensor_split(x, 0), C),
    "tensor_split_2d_tensor": (lambda t, x: t.tensor_split(x, t.tensor([[1]])), C),
    "tensor_split_float_tensor": (lambda t, x: t.tensor_split(x, t.tensor([1.0])), C),
    "tensor_split_float": (lambda t, x: t.tensor_split(x, 2.0), C),
    "tensor_split_0d": (lambda t: t.tensor_split(t.tensor(1.0), 2),),
    "tensor_split_dim": (lambda t, x: t.tensor_split(x, 2, dim=3), C),
    "hsplit_divisible": (lambda t, x: t.hsplit(x, 2), C),
    "hsplit_zero": (lambda t, x: t.hsplit(x, 0), C),
    "hsplit_0d": (lambda t: t.hsplit(t.tensor(1.0), 2),),
    "vsplit_1d": (lambda t, x: t.vsplit(x, 1), V),
    "vsplit_divisible": (lambda t, x: t.vsplit(x, 3), C),
    "dsplit_2d": (lambda t, x: t.dsplit(x, 2), M),
    "dsplit_divisible": (lambda t, x: t.dsplit(x, 3), C),
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


@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "nearest"])
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_second_derivatives_like_torch(name, interpolation):
    """The Hessian-vector products of quantile, with respect to the input and to q."""
    results = []
    for t in (torch, autojit):
        x = t.tensor(QN if name == "nanquantile" else Q, requires_grad=True)
        q = t.tensor(P, requires_grad=True)
        # q reaches the result through linear interpolation's weights only.
        inputs = (x, q) if interpolation == "linear" else (x,)
        out = getattr(t, name)(x.exp(), q, dim=1, interpolation=interpolation)
        grads = t.autograd.grad((out * out).sum(), inputs, create_graph=True)
        second = t.autograd.grad(sum((g * g).sum() for g in grads), inputs)
        results.append([g.detach().numpy() for g in (*grads, *second)])
    for mine, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_quantile_and_tensor_split_compiled_as_eager():
    weight = autojit.tensor(Q, requires_grad=True)

    def step(x, q):
        a, b, c = autojit.tensor_split(x * weight, [1, 3], dim=1)
        loss = (autojit.quantile(a.exp(), q, dim=0).sum()
                + autojit.nanquantile(b, 0.3, interpolation="midpoint")
                + c.sum() + autojit.hsplit(x, [2])[1].sum())
        (grad,) = autojit.autograd.grad(loss, weight, create_graph=True)
        return loss, grad.square().sum()

    x, q = autojit.tensor(QN), autojit.tensor(P)
    eager = step(x, q)
    compiled = autojit.compile(step, fullgraph=True)(x, q)
    for mine, theirs in zip(compiled, eager):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
