"""autograd.forward_ad and autograd.functional against torch's: dual tensors, their errors,
in-place writes, forward-over-reverse, compiled forward mode, and the functional API's forms."""

from __future__ import annotations

import numpy as np
import pytest

import autojit
import autojit.autograd.forward_ad as fwAD
from autojit.autograd import functional as AF
from autojit.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TAD = torch.autograd.forward_ad
TAF = torch.autograd.functional

RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, (3, 4))
V = RNG.uniform(-1, 1, (3, 4))
M = RNG.uniform(-1, 1, (4, 2))


def program(lib, x):
    m = lib.tensor(M)
    h = (x @ m).tanh().softmax(-1)
    return (h * x[:, :2].exp()).sum(0).log1p()


def push(lib, ad, function):
    with ad.dual_level():
        dual = ad.make_dual(lib.tensor(X), lib.tensor(V))
        out = function(lib, dual)
        primal, tangent = ad.unpack_dual(out)
        return np.asarray(primal.detach()), np.asarray(tangent.detach())


def test_tangents_match_torch():
    ours, theirs = push(autojit, fwAD, program), push(torch, TAD, program)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10)


def test_compiled_forward_mode_equals_eager():
    def step(x, v):
        with fwAD.dual_level():
            out = program(autojit, fwAD.make_dual(x, v))
            return fwAD.unpack_dual(out).tangent

    compiled = autojit.compile(step)
    x, v = autojit.tensor(X), autojit.tensor(V)
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(compiled(x, v)), np.asarray(step(x, v)),
                                   rtol=1e-12)


def test_forward_over_reverse_hvp_is_differentiable():
    def hvp(lib, ad, x, v):
        with ad.dual_level():
            dual = ad.make_dual(x, v)
            (g,) = lib.autograd.grad((dual.sin() * dual).sum(), dual, create_graph=True)
            return ad.unpack_dual(g).tangent

    ours_x = autojit.tensor(X[0], requires_grad=True)
    theirs_x = torch.tensor(X[0], requires_grad=True)
    ours = hvp(autojit, fwAD, ours_x, autojit.tensor(V[0]))
    theirs = hvp(torch, TAD, theirs_x, torch.tensor(V[0]))
    np.testing.assert_allclose(np.asarray(ours.detach()), theirs.detach().numpy(), rtol=1e-12)
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(np.asarray(ours_x.grad), theirs_x.grad.numpy(), rtol=1e-12)


def test_inplace_and_views_carry_tangents():
    for lib, ad in ((autojit, fwAD), (torch, TAD)):
        with ad.dual_level():
            base = lib.tensor(X).clone()
            dual = ad.make_dual(base, lib.ones(3, 4, dtype=lib.float64))
            dual.mul_(3)
            assert dual._base is base
            assert ad.unpack_dual(dual).tangent.tolist() == [[3.0] * 4] * 3
            assert ad.unpack_dual(dual.detach()).tangent is None
            assert ad.unpack_dual(dual.t()[0]).tangent.tolist() == [3.0] * 3
        assert ad.unpack_dual(dual).tangent is None


@pytest.mark.parametrize("call, error, message", [
    (lambda lib, ad: ad.make_dual(lib.ones(3), lib.ones(3)), RuntimeError,
     "no level exists, make sure to enter_dual_level\\(\\) first"),
])
def test_errors_outside_a_level(call, error, message):
    for lib, ad in ((autojit, fwAD), (torch, TAD)):
        with pytest.raises(error, match=message):
            call(lib, ad)


@pytest.mark.parametrize("call, error, message", [
    (lambda lib, ad: ad.make_dual(lib.ones(3), lib.ones(4)), RuntimeError,
     "Tensor is of size \\[3\\] while the given forward gradient is of size \\[4\\]"),
    (lambda lib, ad: ad.make_dual(lib.arange(3), lib.arange(3)), ValueError,
     "Expected primal to be floating point or complex, but got: .*int64"),
    (lambda lib, ad: ad.make_dual(ad.make_dual(lib.ones(3), lib.ones(3)), lib.ones(3)),
     RuntimeError, "already has a forward gradient at the same level 0"),
    (lambda lib, ad: ad.dual_level().__enter__(), RuntimeError,
     "Nested forward mode AD is not supported at the moment"),
])
def test_errors_inside_a_level(call, error, message):
    for lib, ad in ((autojit, fwAD), (torch, TAD)):
        with ad.dual_level():
            with pytest.raises(error, match=message):
                call(lib, ad)


def test_gradcheck_forward_modes():
    x = autojit.tensor(X, requires_grad=True)
    assert gradcheck(lambda x: program(autojit, x), (x,), check_forward_ad=True)
    assert gradgradcheck(lambda x: program(autojit, x), (x,), check_fwd_over_rev=True)


# ---- autograd.functional ----------------------------------------------------------------------

def f_two(lib):
    return lambda x, y: (x * y.exp()).sum(0) * x[0]


def f_scalar(lib):
    return lambda x, y: (x.sin() * y).sum() + (x * x).sum() * y[0, 0]


def to_numpy(value):
    if isinstance(value, (tuple, list)):
        return type(value)(to_numpy(v) for v in value)
    return value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(
        value.detach())


def assert_same(actual, expected):
    compare(to_numpy(actual), to_numpy(expected))


def compare(actual, expected):
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            compare(a, e)
        return
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda A, f, x, y: A.jacobian(f, (x, y)),
    lambda A, f, x, y: A.jacobian(lambda x: f(x, y), x),
    lambda A, f, x, y: A.jacobian(f, (x, y), vectorize=True, strategy="forward-mode"),
    lambda A, f, x, y: A.vjp(f, (x, y), f(x, y)),
    lambda A, f, x, y: A.jvp(f, (x, y), (y, x)),
], ids=["jacobian", "jacobian_tensor", "jacobian_forward", "vjp", "jvp"])
def test_functional_vector(call):
    ours = call(AF, f_two(autojit), autojit.tensor(X), autojit.tensor(V))
    theirs = call(TAF, f_two(torch), torch.tensor(X), torch.tensor(V))
    assert_same(ours, theirs)


@pytest.mark.parametrize("call", [
    lambda A, f, x, y: A.hessian(f, (x, y)),
    lambda A, f, x, y: A.hessian(lambda x: f(x, y), x, outer_jacobian_strategy="forward-mode",
                                 vectorize=True),
    lambda A, f, x, y: A.hvp(f, (x, y), (y, x)),
    lambda A, f, x, y: A.vhp(lambda x: f(x, y), x, y),
], ids=["hessian", "hessian_forward", "hvp", "vhp"])
def test_functional_scalar(call):
    x, y = X[:2, :2], V[:2, :2]
    ours = call(AF, f_scalar(autojit), autojit.tensor(x), autojit.tensor(y))
    theirs = call(TAF, f_scalar(torch), torch.tensor(x), torch.tensor(y))
    assert_same(ours, theirs)


def test_functional_create_graph_and_strict():
    for lib, A in ((autojit, AF), (torch, TAF)):
        x = lib.tensor(X[0], requires_grad=True)
        _, hv = A.hvp(lambda x: (x ** 3).sum(), x, lib.ones(4, dtype=lib.float64),
                      create_graph=True)
        assert hv.requires_grad
        _, plain = A.vjp(lambda x: x.exp(), x, lib.ones(4, dtype=lib.float64))
        assert not plain.requires_grad
        with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                               "independent of input 1"):
            A.jacobian(lambda a, b: a * 2, (x, x), strict=True)
        with pytest.raises(RuntimeError, match="The vector v can only be None"):
            A.vjp(lambda a: a * 2, x)
        with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
            A.jacobian(lambda a: a, x, strategy="forward-mode")


def test_is_grads_batched_matches_torch():
    results = []
    for lib in (autojit, torch):
        x = lib.tensor(X, requires_grad=True)
        unused = lib.tensor(V[0], requires_grad=True)
        y = (x @ lib.tensor(M)).tanh()
        basis = lib.eye(y.numel(), dtype=lib.float64).reshape(y.numel(), *y.shape)
        grads = lib.autograd.grad(y, (x, unused), basis, is_grads_batched=True,
                                  allow_unused=True)
        assert grads[1] is None
        results.append(to_numpy(grads[0]))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def _custom_square(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

        @staticmethod
        def jvp(ctx, tangent):
            (x,) = ctx.saved_tensors
            return 2 * x * tangent

    class Doubled(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return Square, Doubled


def test_custom_function_jvp_matches_torch():
    results = []
    for lib, ad in ((autojit, fwAD), (torch, TAD)):
        square, doubled = _custom_square(lib)
        with ad.dual_level():
            dual = ad.make_dual(lib.tensor(X[0]), lib.tensor(V[0]))
            results.append(to_numpy(ad.unpack_dual(square.apply(dual).sin()).tangent))
            with pytest.raises(NotImplementedError, match="must implement the jvp function"):
                doubled.apply(dual)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
    # torch.func's transforms take only a Function with setup_context, as torch's do.
    for lib in (autojit, torch):
        square, _ = _custom_square(lib)
        with pytest.raises(RuntimeError, match="must override the setup_context"):
            lib.func.jacfwd(square.apply)(lib.tensor(X[0]))


def _in_inference_mode(lib, ad):
    """What forward AD gives inside inference mode, torch's way: make_dual an alias that is
    no view and shares the primal's storage, no tangent there or after an op, and none seen
    for a dual made outside."""
    seen = []
    with ad.dual_level():
        outside = ad.make_dual(lib.tensor(X), lib.tensor(V))
        with lib.inference_mode():
            primal, tangent = lib.tensor(X), lib.tensor(V)
            dual = ad.make_dual(primal, tangent)
            seen += [dual._is_view(), dual._base is None, dual.is_inference(),
                     ad.unpack_dual(dual).tangent is None,
                     ad.unpack_dual(program(lib, dual)).tangent is None,
                     ad.unpack_dual(outside).tangent is None,
                     ad.unpack_dual(outside * 2).tangent is None]
            dual += 1
            seen.append(np.asarray(primal).tolist())
        with lib.no_grad():  # no_grad leaves forward AD on
            seen.append(np.asarray(ad.unpack_dual(outside * 2).tangent).tolist())
    return seen


def test_forward_ad_is_off_in_inference_mode_as_in_torch():
    assert _in_inference_mode(autojit, fwAD) == _in_inference_mode(torch, TAD)


def _transforms_in_inference_mode(lib):
    """torch.func's transforms keep working inside inference mode, on inference tensors too,
    and give tensors that are not inference tensors."""
    results = []
    with lib.inference_mode():
        x, t = lib.tensor(X), lib.tensor(V)
        for result in (lib.func.grad(lambda x: x.sin().sum())(x),
                       lib.func.vjp(lib.sin, x)[1](t)[0],
                       lib.func.jvp(lib.sin, (x,), (t,))[1],
                       lib.func.jacrev(lib.sin)(x[0]),
                       lib.func.hessian(lambda x: x.sin().sum())(x[0])):
            results.append((np.asarray(result), result.is_inference()))
    return results


def test_func_transforms_work_in_inference_mode_as_in_torch():
    for (ours, ours_inference), (theirs, theirs_inference) in zip(
            _transforms_in_inference_mode(autojit), _transforms_in_inference_mode(torch),
            strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
        assert ours_inference == theirs_inference
