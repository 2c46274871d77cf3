"""autograd.functional against torch's, where it computes as torch's does (plain autograd):
the errors for bad arguments and strict mode word for word, create_graph results that are
graphs even under no_grad, vhp/hvp of a linear function (zeros), jvp by double backward (a
custom Function needs no jvp), the vectorized jacobian and hessian, and the standard basis
helper."""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 1.5, 4)


def run(lib, call):
    """The outcome of call(lib, A, x) with A lib's autograd.functional: its error (type and
    message, sizes and dtypes named the same way) or its results' values and whether they have a
    grad_fn, nested as returned."""
    x = lib.tensor(X)
    try:
        result = call(lib, lib.autograd.functional, x)
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return type(error).__name__, str(error).replace("autojit.", "torch.")
    return flatten(result)


def flatten(value):
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [flatten(item) for item in value]
    return value.detach().numpy().round(10).tolist(), value.grad_fn is not None


def same(call):
    assert run(autojit, call) == run(torch, call)


def cube(x):
    return (x ** 3).sum()


ERRORS = {
    "vjp_inputs": lambda t, A, x: A.vjp(lambda a: a * 3, (x, 2), x),
    "vjp_outputs": lambda t, A, x: A.vjp(lambda a: (a * 3, "bar"), x, x),
    "vjp_list_inputs": lambda t, A, x: A.vjp(lambda a: a * 3, [x], x),
    "vjp_v_count": lambda t, A, x: A.vjp(lambda a: a * 3, x, (x, x)),
    "vjp_v_size": lambda t, A, x: A.vjp(lambda a: a * 3, x, x[:2]),
    "jvp_inputs": lambda t, A, x: A.jvp(lambda a: a * 3, (x, 2), x),
    "jvp_outputs": lambda t, A, x: A.jvp(lambda a: (a * 3, "bar"), x, x),
    "jvp_v_count": lambda t, A, x: A.jvp(lambda a: a * 3, x, (x, x)),
    "jacobian_outputs": lambda t, A, x: A.jacobian(lambda a: (a * 3, "bar"), x),
    "jacobian_complex": lambda t, A, x: A.jacobian(lambda a: a * (1 + 1j), x),
    "hessian_inputs": lambda t, A, x: A.hessian(cube, (x, 2)),
    "hessian_outputs": lambda t, A, x: A.hessian(lambda a: (cube(a), "bar"), x),
    "hessian_tuple": lambda t, A, x: A.hessian(lambda a: (cube(a), cube(a)), x),
    "vhp_outputs": lambda t, A, x: A.vhp(lambda a: (cube(a), "bar"), x, x),
    "hvp_inputs": lambda t, A, x: A.hvp(cube, (x, 2), x),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_argument_errors(name):
    same(ERRORS[name])


def detached(x):
    return x.detach()


def disconnected(x):
    # requires grad, but is not connected to x
    return x.long().float().requires_grad_().clone()


STRICT = {
    "vjp_detached": lambda t, A, x: A.vjp(detached, x, x, strict=True),
    "vjp_disconnected": lambda t, A, x: A.vjp(disconnected, x, x, strict=True),
    "vjp_linear": lambda t, A, x: A.vjp(lambda a: a.clone(), x.requires_grad_(), x,
                                        create_graph=True, strict=True),
    "jvp_disconnected": lambda t, A, x: A.jvp(disconnected, x, x, strict=True),
    "jvp_linear": lambda t, A, x: A.jvp(lambda a: a.clone(), x.requires_grad_(), x,
                                        create_graph=True, strict=True),
    "jacobian_disconnected": lambda t, A, x: A.jacobian(disconnected, x, strict=True),
    "jacobian_linear": lambda t, A, x: A.jacobian(lambda a: a.clone(), x, create_graph=True,
                                                  strict=True),
    "jacobian_vectorize": lambda t, A, x: A.jacobian(cube, x, strict=True, vectorize=True),
    "hessian_linear": lambda t, A, x: A.hessian(lambda a: a.sum(), x, strict=True),
    "hessian_disconnected": lambda t, A, x: A.hessian(
        lambda a: disconnected(a).sum(), x, strict=True),
    "vhp_linear": lambda t, A, x: A.vhp(lambda a: a.sum(), x, x, strict=True),
    "hvp_disconnected": lambda t, A, x: A.hvp(lambda a: disconnected(a).sum(), x, x,
                                              strict=True),
    "hvp_quadratic": lambda t, A, x: A.hvp(lambda a: (a * a).sum(), x, x, create_graph=True,
                                           strict=True),
}


@pytest.mark.parametrize("name", sorted(STRICT))
def test_strict_mode(name):
    same(STRICT[name])


CREATE_GRAPH_UNDER_NO_GRAD = {
    "vjp": lambda t, A, x: A.vjp(lambda a: a.exp(), x.requires_grad_(), x, create_graph=True),
    "jvp": lambda t, A, x: A.jvp(lambda a: a.exp(), x.requires_grad_(), x, create_graph=True),
    "jacobian": lambda t, A, x: A.jacobian(lambda a: a.exp(), x.requires_grad_(),
                                           create_graph=True),
    "hessian": lambda t, A, x: A.hessian(cube, x.requires_grad_(), create_graph=True),
    "vhp": lambda t, A, x: A.vhp(cube, x.requires_grad_(), x, create_graph=True),
    "hvp": lambda t, A, x: A.hvp(cube, x.requires_grad_(), x, create_graph=True),
    "vhp_plain": lambda t, A, x: A.vhp(cube, x, x),
}


@pytest.mark.parametrize("name", sorted(CREATE_GRAPH_UNDER_NO_GRAD))
def test_create_graph_under_no_grad(name):
    def call(t, A, x):
        with t.no_grad():
            return CREATE_GRAPH_UNDER_NO_GRAD[name](t, A, x)

    same(call)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_products_of_a_linear_function_are_zeros(api):
    same(lambda t, A, x: getattr(A, api)(lambda a: a.sum(), x, x))
    same(lambda t, A, x: getattr(A, api)(lambda a, b: (a * 2).sum(), (x, x[:2]), (x, x[:2])))


def test_jvp_of_a_function_without_jvp():
    def call(t, A, x):
        class Square(t.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                return 2 * a * grad

        return A.jvp(Square.apply, x, x)

    same(call)


VECTORIZED = {
    "jacobian_outputs": lambda t, A, x: A.jacobian(
        lambda a, b: (a * b[0], b.sum(), t.ones(2)), (x, x[:3]), vectorize=True),
    "jacobian_zero_dim": lambda t, A, x: A.jacobian(lambda a: a.sum(), x[0], vectorize=True),
    "jacobian_graph": lambda t, A, x: A.jacobian(lambda a: a.exp(), x.requires_grad_(),
                                                 create_graph=True, vectorize=True),
    "hessian": lambda t, A, x: A.hessian(lambda a, b: (a ** 3).sum() * b[0] + a[0], (x, x[:2]),
                                         vectorize=True),
    "hessian_forward": lambda t, A, x: A.hessian(lambda a, b: cube(a * b), (x, x), vectorize=True,
                                                 outer_jacobian_strategy="forward-mode"),
    "jacobian_forward": lambda t, A, x: A.jacobian(lambda a, b: (a * b[0], b), (x, x[:2]),
                                                   vectorize=True, strategy="forward-mode"),
}


@pytest.mark.parametrize("name", sorted(VECTORIZED))
def test_vectorized(name):
    same(VECTORIZED[name])


def test_construct_standard_basis_for():
    def call(t, A, x):
        tensors = (x[:2], x[0].float(), t.zeros(2, 3))
        return A._construct_standard_basis_for(tensors, tuple(v.numel() for v in tensors))

    same(call)
    ours = call(autojit, autojit.autograd.functional, autojit.tensor(X))
    assert [b.dtype for b in ours] == [autojit.float64, autojit.float32, autojit.float32]
