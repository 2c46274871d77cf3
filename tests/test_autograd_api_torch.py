"""Smaller autograd behaviours against torch: float() of a tensor that requires grad warns once,
autograd.functional's create_graph results require grad, anomaly mode leaks no NumPy warnings,
and the matrix products' dtype errors are torch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit.tensor import once

torch = pytest.importorskip("torch")


def outcome(function):
    try:
        function()
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return type(error).__name__, str(error)
    return "ok"


def test_float_of_a_tensor_that_requires_grad_warns_once(monkeypatch):
    monkeypatch.setattr(once, "given", set())
    x = autojit.tensor(1.5, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x.item(), int(x), x.tolist()  # these do not warn in torch
        with autojit.no_grad():
            float(x)
        assert not caught
        float(x)
        float(x * 2)
    assert [str(w.message) for w in caught] == [
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
        "behavior.\nConsider using tensor.detach() first."]
    assert caught[0].filename == __file__


FUNCTIONAL = {
    "jacobian": lambda t, x: t.autograd.functional.jacobian(
        lambda v: (v ** 2).sum() * v, x, create_graph=True),
    "hessian": lambda t, x: t.autograd.functional.hessian(
        lambda v: (v ** 3).sum(), x, create_graph=True),
    "vjp": lambda t, x: t.autograd.functional.vjp(lambda v: v ** 2, x, t.ones(2),
                                                  create_graph=True),
    "jvp": lambda t, x: t.autograd.functional.jvp(lambda v: v ** 2, x, t.ones(2),
                                                  create_graph=True),
    "hvp": lambda t, x: t.autograd.functional.hvp(lambda v: (v ** 3).sum(), x, t.ones(2),
                                                  create_graph=True),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_create_graph_results_require_grad(name):
    def run(t):
        result = FUNCTIONAL[name](t, t.tensor([1.0, 2.0]))
        results = result if isinstance(result, tuple) else (result,)
        return [(r.requires_grad, r.detach().numpy()) for r in results]

    for (expected_flag, expected), (flag, value) in zip(run(torch), run(autojit)):
        assert flag == expected_flag
        np.testing.assert_allclose(value, expected)


def test_anomaly_mode_leaks_no_numpy_warnings():
    def run(t):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with t.autograd.detect_anomaly():
                a = t.tensor([0.0, 1.0], requires_grad=True)
                error = outcome(lambda: (a / a).sum().backward())
        return error, sorted({w.category.__name__ for w in caught})

    assert run(autojit) == run(torch)
    assert np.geterr()["divide"] == "warn"  # NumPy's settings are back


F32, F64, F16 = "float32", "float64", "float16"
PRODUCTS = [
    ("matmul", (2, 3), F64, (3, 4), F32), ("matmul", (3,), F64, (3,), F32),
    ("matmul", (2, 3), F64, (3,), F32), ("matmul", (2, 2, 3), F32, (3,), F64),
    ("matmul", (3,), F32, (3, 4), F64), ("matmul", (3,), F32, (2, 3, 4), F64),
    ("matmul", (2, 2, 3), F64, (3, 4), F32), ("matmul", (2, 3), F32, (2, 3, 4), F64),
    ("matmul", (2, 3), F16, (3, 4), F32), ("mm", (2, 3), F32, (3, 4), F64),
    ("mm", (2, 3), "int32", (3, 4), F32), ("bmm", (2, 2, 3), F64, (2, 3, 4), F32),
    ("dot", (3,), F64, (3,), F32), ("mv", (2, 3), F64, (3,), F32),
]


@pytest.mark.parametrize("op, shape1, dtype1, shape2, dtype2", PRODUCTS)
def test_product_dtype_errors_are_torchs(op, shape1, dtype1, shape2, dtype2):
    def run(t):
        return outcome(lambda: getattr(t, op)(t.ones(shape1, dtype=getattr(t, dtype1)),
                                              t.ones(shape2, dtype=getattr(t, dtype2))))

    assert run(autojit) == run(torch)


@pytest.mark.parametrize("dtypes", [(F32, F32, F64), (F32, F64, F32), (F32, F64, F64),
                                    (F64, F32, F32), (F64, F32, F64), (F64, F64, F32),
                                    (F64, F32, None), (F32, F64, None)])
@pytest.mark.parametrize("shape", [(2, 3), (5, 2, 3), (3,)])
def test_linear_and_addmm_dtype_errors_are_torchs(dtypes, shape):
    def run(t):
        x_dtype, w_dtype, b_dtype = (getattr(t, d) if d else None for d in dtypes)
        x, w = t.ones(shape, dtype=x_dtype), t.ones(4, 3, dtype=w_dtype)
        b = t.ones(4, dtype=b_dtype) if b_dtype else None
        errors = [outcome(lambda: t.nn.functional.linear(x, w, b))]
        if b is not None:
            errors.append(outcome(lambda: t.addmm(b, t.ones(2, 3, dtype=x_dtype), w.t())))
            errors.append(outcome(lambda: t.baddbmm(t.ones(2, 2, 4, dtype=b_dtype),
                                                    t.ones(2, 2, 3, dtype=x_dtype),
                                                    t.ones(2, 3, 4, dtype=w_dtype))))
        return errors

    assert run(autojit) == run(torch)
