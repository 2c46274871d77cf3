"""autojit.linalg against torch.linalg: values, first and second derivatives, errors, result
types, out= and the top-level and Tensor-method forms.

Decompositions are unique only up to the signs of their vectors, so U, V, Q and eigenvectors
are compared after flipping each vector to make its largest entry positive; gradients are taken
of losses that do not depend on those signs. The op table (tests/opinfo/linalg_decompositions.py)
checks the same ops against NumPy, compiled and on CUDA tensors.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import autojit as aj
from autojit import linalg

rng = np.random.default_rng(7)


def regular(*shape):
    return rng.uniform(-1, 1, shape) + 2 * np.eye(shape[-1])


def matrix(*shape):
    return rng.uniform(-1, 1, shape)


def both(array, requires_grad=False):
    """The same float64 data as an autojit and a torch tensor."""
    return (aj.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def numpy_of(value):
    if isinstance(value, torch.Tensor) and value._is_zerotensor():
        return np.zeros(tuple(value.shape))  # torch's gradient of a piecewise linear function
    return value.detach().numpy()


def ew_abs(x):
    return x.abs()


def signs_fixed(vectors, axis):
    """Vectors (columns for axis -2, rows for -1) flipped so that the entry of largest
    magnitude of each is positive."""
    vectors = np.asarray(vectors)
    position = np.argmax(np.abs(vectors), axis=axis)
    largest = np.take_along_axis(vectors, np.expand_dims(position, axis), axis)
    return vectors * np.sign(largest)


def assert_close(actual, expected, rtol=1e-9, atol=1e-10):
    np.testing.assert_allclose(numpy_of(actual), numpy_of(expected), rtol=rtol, atol=atol)


# ---- values -----------------------------------------------------------------------------------

SAME_VALUES = [
    ("inv", lambda L, a: L.inv(a), [regular(2, 3, 3)]),
    ("solve", lambda L, a, b: L.solve(a, b), [regular(2, 3, 3), matrix(3, 2)]),
    ("solve vector", lambda L, a, b: L.solve(a, b), [regular(2, 3, 3), matrix(3)]),
    ("solve batch of vectors", lambda L, a, b: L.solve(a, b), [regular(2, 3, 3), matrix(2, 3)]),
    ("solve left=False", lambda L, a, b: L.solve(a, b, left=False), [regular(3, 3), matrix(4, 3)]),
    ("solve_triangular", lambda L, a, b: L.solve_triangular(a, b, upper=False, unitriangular=True),
     [matrix(2, 3, 3), matrix(3, 2)]),
    ("solve_triangular right", lambda L, a, b: L.solve_triangular(a, b, upper=True, left=False),
     [regular(3, 3), matrix(2, 4, 3)]),
    ("cholesky", lambda L, a: L.cholesky(a @ a.mT + _eye(a, 3)), [matrix(2, 3, 3)]),
    ("cholesky upper of a non-symmetric input",
     lambda L, a: L.cholesky(a, upper=True), [regular(3, 3) + 2 * np.eye(3)]),
    ("det", lambda L, a: L.det(a), [regular(2, 3, 3)]),
    ("slogdet", lambda L, a: tuple(L.slogdet(a)), [regular(2, 3, 3)]),
    ("svdvals", lambda L, a: L.svdvals(a), [matrix(2, 5, 3)]),
    ("eigvalsh U", lambda L, a: L.eigvalsh(a, UPLO="U"), [matrix(3, 3)]),
    ("pinv", lambda L, a: L.pinv(a), [matrix(2, 3, 5)]),
    ("pinv atol", lambda L, a: L.pinv(a, atol=0.5), [matrix(4, 3)]),
    ("pinv rtol hermitian", lambda L, a: L.pinv(a + a.mT, rtol=0.3, hermitian=True),
     [matrix(4, 4)]),
    ("matrix_power 5", lambda L, a: L.matrix_power(a, 5), [regular(3, 3) / 2]),
    ("matrix_power -3", lambda L, a: L.matrix_power(a, -3), [regular(2, 3, 3)]),
    ("matrix_power 0", lambda L, a: L.matrix_power(a, 0), [regular(2, 3, 3)]),
    ("multi_dot", lambda L, *t: L.multi_dot(t), [matrix(7), matrix(7, 2), matrix(2, 9),
                                                 matrix(9, 3), matrix(3)]),
    ("cross", lambda L, a, b: L.cross(a, b), [matrix(2, 1, 3), matrix(1, 4, 3)]),
    ("vecdot", lambda L, a, b: L.vecdot(a, b, dim=0), [matrix(3, 2), matrix(3, 1)]),
    ("vector_norm", lambda L, a: L.vector_norm(a, 3.5, dim=(0, 2), keepdim=True),
     [matrix(2, 3, 4)]),
    ("vector_norm 0", lambda L, a: L.vector_norm(a, 0), [matrix(2, 3)]),
    ("norm default", lambda L, a: L.norm(a), [matrix(2, 3, 4)]),
    ("norm 2-D inf", lambda L, a: L.norm(a, math.inf), [matrix(3, 4)]),
    ("norm 1-D -inf", lambda L, a: L.norm(a, -math.inf), [matrix(5)]),
    *[(f"matrix_norm {order}", lambda L, a, order=order: L.matrix_norm(a, order, dim=(2, 0)),
       [matrix(3, 2, 4)]) for order in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf)],
    ("matrix_norm keepdim", lambda L, a: L.matrix_norm(a, "nuc", dim=(0, 2), keepdim=True),
     [matrix(3, 2, 4)]),
]


def _eye(like, n):
    if isinstance(like, torch.Tensor):
        return torch.eye(n, dtype=like.dtype)
    return aj.eye(n, dtype=like.dtype)


@pytest.mark.parametrize(("function", "arrays"), [case[1:] for case in SAME_VALUES],
                         ids=[case[0] for case in SAME_VALUES])
def test_values_match_torch(function, arrays):
    ours = function(linalg, *[aj.tensor(a) for a in arrays])
    theirs = function(torch.linalg, *[torch.tensor(a) for a in arrays])
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for mine, reference in zip(ours, theirs, strict=True):
        assert tuple(mine.shape) == tuple(reference.shape)
        assert str(mine.dtype).split(".")[-1] == str(reference.dtype).split(".")[-1]
        assert_close(mine, reference)


def test_decompositions_match_torch_up_to_signs():
    a = matrix(2, 5, 3)
    for full in (True, False):
        u, s, vh = linalg.svd(aj.tensor(a), full_matrices=full)
        tu, ts, tvh = torch.linalg.svd(torch.tensor(a), full_matrices=full)
        assert [tuple(x.shape) for x in (u, s, vh)] == [tuple(x.shape) for x in (tu, ts, tvh)]
        assert_close(s, ts)
        k = 3
        np.testing.assert_allclose(signs_fixed(u.numpy()[..., :k], -2),
                                   signs_fixed(tu.numpy()[..., :k], -2), atol=1e-10)
        np.testing.assert_allclose(signs_fixed(vh.numpy(), -1), signs_fixed(tvh.numpy(), -1),
                                   atol=1e-10)
    a = matrix(2, 4, 4)
    for uplo in ("L", "U"):
        values, vectors = linalg.eigh(aj.tensor(a), uplo)
        tvalues, tvectors = torch.linalg.eigh(torch.tensor(a), uplo)
        assert_close(values, tvalues)
        np.testing.assert_allclose(signs_fixed(vectors.numpy(), -2),
                                   signs_fixed(tvectors.numpy(), -2), atol=1e-9)


def test_qr_matches_torch_with_signs_fixed():
    for mode, shape in (("reduced", (4, 3)), ("complete", (4, 3)), ("reduced", (2, 3, 5))):
        a = matrix(*shape)
        q, r = linalg.qr(aj.tensor(a), mode)
        tq, tr = torch.linalg.qr(torch.tensor(a), mode)
        # Flip Q's columns and R's rows together so that R's diagonal is positive.
        for x, y in ((q.numpy(), r.numpy()), (tq.numpy(), tr.numpy())):
            signs = np.sign(np.diagonal(y, axis1=-2, axis2=-1))
            k = signs.shape[-1]
            x[..., :k] *= signs[..., None, :]
            y[..., :k, :] *= signs[..., :, None]
        assert_close(q, tq)
        assert_close(r, tr)
    a = matrix(3, 4)
    q, r = linalg.qr(aj.tensor(a), mode="r")
    tq, tr = torch.linalg.qr(torch.tensor(a), mode="r")
    assert tuple(q.shape) == (0,) == tuple(tq.shape)
    assert_close(ew_abs(r), tr.abs())


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
def test_lstsq_matches_torch(driver):
    for a, b in ((matrix(2, 6, 3), matrix(2, 6, 2)), (matrix(3, 5), matrix(3)),
                 (matrix(2, 5, 3), matrix(2, 5))):
        ours = linalg.lstsq(aj.tensor(a), aj.tensor(b), driver=driver)
        theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        assert type(ours).__name__ == "linalg_lstsq"
        assert ours._fields == type(theirs).__match_args__
        for mine, reference in zip(ours, theirs, strict=True):
            assert tuple(mine.shape) == tuple(reference.shape), (driver, mine, reference)
            assert_close(mine, reference, rtol=1e-8)


def test_lstsq_of_a_rank_deficient_matrix_is_the_minimum_norm_solution():
    a = matrix(6, 3)
    a[:, 2] = a[:, 0] + a[:, 1]
    b = matrix(6, 2)
    for driver in ("gelsy", "gelsd"):
        ours = linalg.lstsq(aj.tensor(a), aj.tensor(b), driver=driver)
        theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        assert_close(ours.solution, theirs.solution, rtol=1e-7, atol=1e-9)
        assert ours.rank.item() == theirs.rank.item() == 2
        assert ours.residuals.shape == theirs.residuals.shape == (0,)


def test_compiled_lstsq_residuals_follow_the_rank_of_each_call():
    # torch's residuals are empty unless A has full rank: inside a compiled function the
    # trace decides on the call's ranks, checked on every run, and no call runs eagerly.
    full, deficient = matrix(6, 3), matrix(6, 3)
    deficient[:, 2] = deficient[:, 0] + deficient[:, 1]
    b = matrix(6, 2)
    compiled = aj.compile(lambda a, b: linalg.lstsq(a, b, driver="gelsd"), fullgraph=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for a in (full, deficient, full):
            ours = compiled(aj.tensor(a), aj.tensor(b))
            theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver="gelsd")
            for mine, reference in zip(ours, theirs, strict=True):
                assert tuple(mine.shape) == tuple(reference.shape)
                assert_close(mine, reference, rtol=1e-7, atol=1e-9)
    assert compiled.stats().eager_calls == 0 and compiled.stats().graph_breaks == 0


# ---- gradients --------------------------------------------------------------------------------

def _svd_loss(L, a):
    u, s, vh = L.svd(a, full_matrices=False)
    return (u * u.sum(-2, keepdim=True)).sum() + (s * s).sum() + (vh.sin() * vh).sum()


def _eigh_loss(L, a):
    values, vectors = L.eigh(a + a.mT)
    return (values.exp()).sum() + (vectors * vectors.sum(-2, keepdim=True) * values.unsqueeze(-2)
                                   ).sum()


def _qr_loss(L, a):
    q, r = L.qr(a)
    return (q * q.sum(-2, keepdim=True)).sum() + (r * r.sum(-1, keepdim=True)).sum()


GRADIENTS = [
    ("inv", lambda L, a: L.inv(a).sin().sum(), [regular(2, 3, 3)]),
    ("solve", lambda L, a, b: (L.solve(a, b) ** 2).sum(), [regular(3, 3), matrix(2, 3, 2)]),
    ("solve_triangular", lambda L, a, b: L.solve_triangular(a, b, upper=True).exp().sum(),
     [regular(3, 3), matrix(3, 2)]),
    ("cholesky", lambda L, a: L.cholesky(a @ a.mT + _eye(a, 3)).cos().sum(), [matrix(2, 3, 3)]),
    ("det", lambda L, a: (L.det(a) ** 2).sum(), [regular(2, 3, 3)]),
    ("det singular", lambda L, a: L.det(a).sum(), [np.array([[1.0, 2.0], [2.0, 4.0]])]),
    ("det identity", lambda L, a: L.det(a).sum(), [np.eye(3)]),
    ("slogdet", lambda L, a: (L.slogdet(a).logabsdet ** 2).sum(), [regular(2, 3, 3)]),
    ("qr", _qr_loss, [matrix(4, 3)]),
    ("qr wide", _qr_loss, [matrix(3, 5)]),
    ("svd", _svd_loss, [matrix(2, 4, 3)]),
    ("svd wide", _svd_loss, [matrix(3, 5)]),
    ("svdvals", lambda L, a: (L.svdvals(a) ** 3).sum(), [matrix(3, 5)]),
    ("eigh", _eigh_loss, [matrix(2, 3, 3)]),
    ("eigvalsh", lambda L, a: (L.eigvalsh(a + a.mT) ** 3).sum(), [matrix(3, 3)]),
    ("pinv", lambda L, a: L.pinv(a).sin().sum(), [matrix(4, 3)]),
    ("pinv of the identity", lambda L, a: L.pinv(a).sin().sum(), [np.eye(3)]),
    ("lstsq", lambda L, a, b: L.lstsq(a, b).solution.cos().sum(), [matrix(5, 3), matrix(5, 2)]),
    ("lstsq residuals", lambda L, a, b: L.lstsq(a, b, driver="gelsd").residuals.sum(),
     [matrix(5, 3), matrix(5, 2)]),
    ("matrix_power -2", lambda L, a: L.matrix_power(a, -2).sum(), [regular(3, 3)]),
    ("matrix_norm 2", lambda L, a: L.matrix_norm(a, 2).sum(), [matrix(2, 3, 4)]),
    ("matrix_norm nuc", lambda L, a: L.matrix_norm(a, "nuc").sum(), [matrix(3, 4)]),
    ("matrix_norm -1", lambda L, a: L.matrix_norm(a, -1).sum(), [matrix(3, 4)]),
    ("multi_dot", lambda L, a, b, c: L.multi_dot([a, b, c]).sum(),
     [matrix(2, 3), matrix(3, 4), matrix(4)]),
    ("cross", lambda L, a, b: (L.cross(a, b) ** 2).sum(), [matrix(2, 3), matrix(2, 3)]),
]


@pytest.mark.parametrize(("loss", "arrays"), [case[1:] for case in GRADIENTS],
                         ids=[case[0] for case in GRADIENTS])
def test_first_and_second_derivatives_match_torch(loss, arrays):
    ours = [aj.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    first = aj.autograd.grad(loss(linalg, *ours), ours, create_graph=True)
    reference = torch.autograd.grad(loss(torch.linalg, *theirs), theirs, create_graph=True)
    for mine, expected in zip(first, reference, strict=True):
        assert_close(mine, expected, rtol=1e-7, atol=1e-9)
    second = aj.autograd.grad(sum((g * g).sum() for g in first), ours)
    reference = torch.autograd.grad(sum((g * g).sum() for g in reference), theirs)
    for mine, expected in zip(second, reference, strict=True):
        assert_close(mine, expected, rtol=1e-6, atol=1e-8)


def test_gradients_where_torch_has_none_finite():
    """Repeated singular values: U's gradient is not finite (torch: NaN), S's alone is."""
    ours, theirs = both(np.eye(3), requires_grad=True)
    weights = np.arange(9.0).reshape(3, 3)
    (gradient,) = aj.autograd.grad((linalg.svd(ours).U * aj.tensor(weights)).sum(), ours)
    (expected,) = torch.autograd.grad((torch.linalg.svd(theirs).U * torch.tensor(weights)).sum(),
                                      theirs)
    assert np.isnan(gradient.numpy()).all() and torch.isnan(expected).all()
    (gradient,) = aj.autograd.grad(linalg.svd(ours).S.sum(), ours)
    (expected,) = torch.autograd.grad(torch.linalg.svd(theirs).S.sum(), theirs)
    assert_close(gradient, expected)
    (gradient,) = aj.autograd.grad(linalg.eigh(ours).eigenvalues.sum(), ours)
    (expected,) = torch.autograd.grad(torch.linalg.eigh(theirs).eigenvalues.sum(), theirs)
    assert_close(gradient, expected)


def test_differentiating_qr_where_torch_cannot_raises_its_error():
    for mode, shape, message in (
            ("r", (3, 3), "The derivative of linalg.qr depends on Q"),
            ("complete", (4, 3), "not differentiable when mode='complete' and nrows > ncols")):
        ours = aj.tensor(matrix(*shape), requires_grad=True)
        theirs = torch.tensor(matrix(*shape), requires_grad=True)
        with pytest.raises(RuntimeError, match=message):
            torch.linalg.qr(theirs, mode).R.sum().backward()
        with pytest.raises(RuntimeError, match=message):
            linalg.qr(ours, mode).R.sum().backward()


@pytest.mark.parametrize(("determinant", "matrices"), [
    ("det", [regular(3, 3), np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])]),
    ("det", [regular(3, 3), regular(3, 3)]),
    ("slogdet", [regular(3, 3), regular(3, 3)])], ids=["det singular", "det", "slogdet"])
def test_determinant_gradients_compiled_match_eager_and_torch(determinant, matrices):
    """In a trace the values are unknown, so the VJP computes both of its formulas and picks
    one per matrix; eagerly it takes the formula each matrix needs (a singular one: the SVD's).
    Both give torch's values, to second order, for a loss whose cotangent depends on A."""
    a = np.stack(matrices)

    def loss(L, x):
        value = L.det(x) if determinant == "det" else L.slogdet(x).logabsdet
        return (value ** 2).sum()

    def first_and_second(x):
        (first,) = aj.autograd.grad(loss(linalg, x), x, create_graph=True)
        return first, aj.autograd.grad((first * first).sum(), x)[0]

    compiled = aj.compile(first_and_second)
    expected = first_and_second(aj.tensor(a, requires_grad=True))
    actual = compiled(aj.tensor(a, requires_grad=True))
    assert compiled.eager_reason is None
    t = torch.tensor(a, requires_grad=True)
    (first,) = torch.autograd.grad(loss(torch.linalg, t), t, create_graph=True)
    second = torch.autograd.grad((first * first).sum(), t)[0]
    for mine, eager, reference in zip(actual, expected, (first, second), strict=True):
        assert_close(mine, eager, rtol=1e-9, atol=1e-10)
        assert_close(eager, reference, rtol=1e-8, atol=1e-9)


# ---- errors -----------------------------------------------------------------------------------

SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
ERRORS = [
    ("inv singular", lambda L, T: L.inv(T(SINGULAR))),
    ("inv singular in a batch", lambda L, T: L.inv(T(np.stack([np.eye(2), SINGULAR])))),
    ("inv of zeros", lambda L, T: L.inv(T(np.zeros((3, 3))))),
    ("solve singular", lambda L, T: L.solve(T(SINGULAR), T(np.ones(2)))),
    ("solve singular in a batch", lambda L, T: L.solve(T(np.stack([np.eye(2), SINGULAR])),
                                                       T(np.ones((2, 2, 1))))),
    ("cholesky not positive-definite", lambda L, T: L.cholesky(T(-np.eye(3)))),
    ("cholesky batch", lambda L, T: L.cholesky(T(np.stack([np.eye(3), np.diag([1.0, 2, -1])])))),
    ("cholesky NaN", lambda L, T: L.cholesky(T(np.full((2, 2), np.nan)))),
    ("svd NaN", lambda L, T: L.svd(T(np.stack([np.eye(2), np.full((2, 2), np.nan)])))),
    ("svdvals NaN", lambda L, T: L.svdvals(T(np.full((2, 2), np.nan)))),
    ("inv integer", lambda L, T: L.inv(T(np.ones((2, 2), np.int64)))),
    ("det integer", lambda L, T: L.det(T(np.ones((2, 2), np.int64)))),
    ("svd integer", lambda L, T: L.svdvals(T(np.ones((2, 2), np.int64)))),
    ("matrix_norm integer", lambda L, T: L.matrix_norm(T(np.ones((2, 2), np.int64)))),
    ("vector_norm integer", lambda L, T: L.vector_norm(T(np.ones(2, np.int64)))),
    ("lstsq integer", lambda L, T: L.lstsq(T(np.ones((2, 2), np.int64)),
                                           T(np.ones((2, 2), np.int64)))),
    ("pinv integer", lambda L, T: L.pinv(T(np.ones((3, 3), np.int64)))),
    ("inv 1-D", lambda L, T: L.inv(T(np.ones(3)))),
    ("qr 1-D", lambda L, T: L.qr(T(np.ones(3)))),
    ("eigh 1-D", lambda L, T: L.eigh(T(np.ones(3)))),
    ("inv not square", lambda L, T: L.inv(T(np.ones((2, 3))))),
    ("slogdet not square", lambda L, T: L.slogdet(T(np.ones((2, 3))))),
    ("eigvalsh not square", lambda L, T: L.eigvalsh(T(np.ones((2, 3))))),
    ("matrix_power not square", lambda L, T: L.matrix_power(T(np.ones((2, 3))), 2)),
    ("solve shapes", lambda L, T: L.solve(T(np.eye(3)), T(np.ones((2, 4))))),
    ("solve vector left=False", lambda L, T: L.solve(T(np.eye(3)), T(np.ones(3)), left=False)),
    ("solve dtypes", lambda L, T: L.solve(T(np.eye(3)), T(np.ones(3, np.float32)))),
    ("solve_triangular 1-D", lambda L, T: L.solve_triangular(T(np.eye(3)), T(np.ones(3)),
                                                             upper=True)),
    ("solve_triangular shapes", lambda L, T: L.solve_triangular(T(np.eye(3)),
                                                                T(np.ones((2, 3))), upper=True)),
    ("qr mode", lambda L, T: L.qr(T(np.eye(2)), mode="foo")),
    ("eigh UPLO", lambda L, T: L.eigh(T(np.eye(2)), UPLO="X")),
    ("svd driver", lambda L, T: L.svd(T(np.eye(2)), driver="gesvd")),
    ("cross length", lambda L, T: L.cross(T(np.ones(2)), T(np.ones(2)))),
    ("cross dims", lambda L, T: L.cross(T(np.ones((2, 3))), T(np.ones(3)))),
    ("cross dtypes", lambda L, T: L.cross(T(np.ones(3, np.float32)), T(np.ones(3)))),
    ("vecdot dtypes", lambda L, T: L.vecdot(T(np.ones(3, np.float32)), T(np.ones(3)))),
    ("multi_dot one", lambda L, T: L.multi_dot([T(np.ones((2, 2)))])),
    ("multi_dot 3-D", lambda L, T: L.multi_dot([T(np.ones((2, 2, 2))), T(np.ones((2, 2)))])),
    ("multi_dot shapes", lambda L, T: L.multi_dot([T(np.ones((2, 3))), T(np.ones((4, 2)))])),
    ("multi_dot middle", lambda L, T: L.multi_dot([T(np.ones((2, 3))), T(np.ones(3)),
                                                   T(np.ones(3))])),
    ("multi_dot dtypes", lambda L, T: L.multi_dot([T(np.ones((2, 3), np.float32)),
                                                   T(np.ones((3, 2)))])),
    ("matrix_norm order", lambda L, T: L.matrix_norm(T(np.ones((2, 2))), ord=3)),
    ("matrix_norm dims", lambda L, T: L.matrix_norm(T(np.ones((2, 2))), dim=(0, 0))),
    ("matrix_norm one dim", lambda L, T: L.matrix_norm(T(np.ones((2, 2))), dim=(0,))),
    ("norm 3-D with ord", lambda L, T: L.norm(T(np.ones((2, 2, 2))), ord=2)),
    ("norm dims", lambda L, T: L.norm(T(np.ones((2, 3, 4))), dim=(0, 1, 2))),
    ("norm fro of a vector", lambda L, T: L.norm(T(np.ones(2)), ord="fro")),
    ("vector_norm str", lambda L, T: L.vector_norm(T(np.ones((2, 2))), ord="fro")),
    ("vector_norm inf of nothing", lambda L, T: L.vector_norm(T(np.ones((0, 2))), ord=math.inf)),
    ("vector_norm -1 of an empty dim", lambda L, T: L.vector_norm(T(np.ones((0, 2))), ord=-1,
                                                                   dim=0)),
    ("vector_norm dtype", lambda L, T: L.vector_norm(T(np.ones(2)), dtype=_narrowing(L))),
    ("lstsq rows", lambda L, T: L.lstsq(T(np.ones((3, 2))), T(np.ones((4, 2))))),
    ("lstsq driver", lambda L, T: L.lstsq(T(np.ones((3, 2))), T(np.ones((3, 2))), driver="x")),
    ("lstsq 1-D", lambda L, T: L.lstsq(T(np.ones(3)), T(np.ones(3)))),
    ("lstsq dims", lambda L, T: L.lstsq(T(np.ones((2, 3, 5))), T(np.ones(3)))),
    ("lstsq dtypes", lambda L, T: L.lstsq(T(np.ones((3, 2))), T(np.ones((3, 2), np.float32)))),
]


def _narrowing(L):
    return aj.float32 if L is linalg else torch.float32


@pytest.mark.parametrize("call", [case[1] for case in ERRORS], ids=[case[0] for case in ERRORS])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as expected:
        call(torch.linalg, torch.tensor)
    with pytest.raises(Exception) as raised:
        call(linalg, aj.tensor)
    assert str(raised.value) == str(expected.value)
    if isinstance(expected.value, torch.linalg.LinAlgError):
        assert isinstance(raised.value, linalg.LinAlgError)
    assert isinstance(raised.value, type(expected.value).__mro__[
        1 if type(expected.value).__name__ == "_LinAlgError" else 0])


def test_singular_matrix_error_in_compiled_code_is_eager_s():
    compiled = aj.compile(lambda a: linalg.inv(a) * 2)
    compiled(aj.tensor(np.eye(2)))
    with pytest.raises(linalg.LinAlgError, match="The diagonal element 2 is zero"):
        compiled(aj.tensor(SINGULAR))


def test_low_precision_is_refused_as_in_torch():
    with pytest.raises(RuntimeError, match="linalg.inv: Low precision dtypes not supported. Got "
                       "Half"):
        linalg.inv(aj.eye(2, dtype=aj.float16))


# ---- result types, forms and out= ----------------------------------------------------------

def test_result_types_have_torch_names_and_fields():
    a = aj.tensor(regular(3, 3))
    t = torch.tensor(a.numpy())
    pairs = [(linalg.qr(a), torch.linalg.qr(t)), (linalg.svd(a), torch.linalg.svd(t)),
             (linalg.eigh(a), torch.linalg.eigh(t)), (linalg.slogdet(a), torch.linalg.slogdet(t)),
             (linalg.lstsq(a, a), torch.linalg.lstsq(t, t)), (aj.slogdet(a), torch.slogdet(t)),
             (aj.svd(a), torch.svd(t))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs.append((aj.qr(a), torch.qr(t)))
    for ours, theirs in pairs:
        assert type(ours).__name__ == type(theirs).__name__
        assert ours._fields == type(theirs).__match_args__


def test_top_level_forms_and_methods():
    a = regular(2, 3, 3)
    x, t = both(a)
    assert_close(aj.inverse(x), torch.inverse(t))
    assert_close(x.inverse(), t.inverse())
    assert_close(aj.det(x), torch.det(t))
    assert_close(x.det(), t.det())
    assert_close(x.logdet(), t.logdet())
    assert_close(x.slogdet().logabsdet, t.slogdet().logabsdet)
    assert_close(x.matrix_power(-2), t.matrix_power(-2))
    assert_close(aj.pinverse(x, rcond=0.1), torch.pinverse(t, rcond=0.1))
    assert_close(x.pinverse(), t.pinverse())
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(3)
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        assert_close(aj.tensor(spd).cholesky(upper=True), torch.tensor(spd).cholesky(upper=True))
    with pytest.warns(UserWarning, match="torch.qr is deprecated"):
        q, r = aj.tensor(matrix(3, 4)).qr(some=False)
    assert tuple(q.shape) == (3, 3) and tuple(r.shape) == (3, 4)
    u, s, v = aj.tensor(matrix(5, 3)).svd(some=False)
    assert tuple(u.shape) == (5, 5) and tuple(v.shape) == (3, 3)
    u, s, v = aj.svd(aj.tensor(matrix(5, 3)), compute_uv=False)
    tu, ts, tv = torch.svd(torch.tensor(matrix(5, 3)), compute_uv=False)
    assert u.tolist() == tu.tolist() and v.tolist() == tv.tolist()
    # logdet of a negative determinant is NaN, of a singular matrix -inf
    assert math.isnan(aj.logdet(aj.tensor([[0.0, 1.0], [1.0, 0.0]])).item())
    assert aj.logdet(aj.tensor(SINGULAR)).item() == -math.inf
    # an integer matrix to a non-negative power
    assert aj.tensor([[1, 1], [1, 0]]).matrix_power(5).tolist() == [[8, 5], [5, 3]]
    assert aj.matrix_power(aj.tensor(regular(3, 3), requires_grad=True), 0).requires_grad


def test_linalg_imports_as_a_module():
    import importlib

    module = importlib.import_module("autojit.linalg")
    assert module is aj.linalg
    from autojit.linalg import LinAlgError, norm  # noqa: F401

    assert issubclass(LinAlgError, RuntimeError)
    assert set(aj.linalg.__all__) <= set(dir(torch.linalg)) | {"LinAlgError"}


def test_out_arguments_follow_torch():
    a = regular(3, 3)
    x, t = both(a)
    out, torch_out = aj.empty(0, dtype=aj.float64), torch.empty(0, dtype=torch.float64)
    result = linalg.inv(x, out=out)
    torch.linalg.inv(t, out=torch_out)
    assert result is out and tuple(out.shape) == (3, 3)
    assert_close(out, torch_out)
    q, r = aj.empty(3, 3, dtype=aj.float64), aj.empty(3, 3, dtype=aj.float64)
    returned = linalg.qr(x, out=(q, r))
    assert returned.Q is q and returned.R is r
    assert_close(q @ r, t)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        linalg.det(x, out=aj.empty(2, dtype=aj.float64))
    for ours, theirs in (
            (lambda: linalg.inv(x, out=aj.empty(3, 3)),
             lambda: torch.linalg.inv(t, out=torch.empty(3, 3))),
            (lambda: linalg.inv(aj.tensor(a, requires_grad=True), out=aj.empty(0,
                                                                                dtype=aj.float64)),
             lambda: torch.linalg.inv(torch.tensor(a, requires_grad=True),
                                      out=torch.empty(0, dtype=torch.float64))),
            (lambda: linalg.svd(aj.tensor(a, requires_grad=True), out=(
                aj.empty(0, dtype=aj.float64),) * 3),
             lambda: torch.linalg.svd(torch.tensor(a, requires_grad=True), out=(
                 torch.empty(0, dtype=torch.float64),) * 3)),
            (lambda: linalg.norm(x, out=aj.empty(())),
             lambda: torch.linalg.norm(t, out=torch.empty(()))),
            (lambda: linalg.multi_dot([x, x], out=aj.empty(3, 3)),
             lambda: torch.linalg.multi_dot([t, t], out=torch.empty(3, 3)))):
        with pytest.raises(RuntimeError) as expected:
            theirs()
        with pytest.raises(RuntimeError, match=f"^{_escaped(expected.value)}$"):
            ours()


def _escaped(error) -> str:
    import re

    return re.escape(str(error))


def _positive_definite_by_float32_rounding_only():
    """An RBF kernel matrix, rounded to float32, whose float32 Cholesky (OpenBLAS's spotrf)
    completes and whose float64 one fails at order 7 (gpytorch's psd_safe_cholesky met one)."""
    g = np.random.default_rng(27)
    n = int(g.integers(8, 30))
    x = np.sort(g.random(n)) * g.uniform(0.5, 3)
    return np.exp(-(x[:, None] - x[None, :]) ** 2 / g.uniform(0.3, 2)).astype(np.float32)


def test_cholesky_ex_without_checks_never_raises_and_its_info_matches_the_factor():
    A = aj.tensor(_positive_definite_by_float32_rounding_only())
    L, info = linalg.cholesky_ex(A)  # raised "order 0" when the info came from float32 potrf
    # autojit's float32 Cholesky computes in float64: the info is that computation's, and
    # cholesky names the same minor (torch's MKL float32 routine may complete it: info 0)
    assert info.item() == 7 and bool(L.isfinite().all())
    with pytest.raises(RuntimeError, match="leading minor of order 7 is not positive-definite"):
        linalg.cholesky(A)
    with pytest.raises(RuntimeError, match="order 7"):
        linalg.cholesky_ex(A, check_errors=True)
    # the usual case agrees with torch: a matrix failing in any precision
    B = np.diag([1.0, -1.0, 2.0]).astype(np.float32)
    assert linalg.cholesky_ex(aj.tensor(B)).info.item() == \
        torch.linalg.cholesky_ex(torch.tensor(B)).info.item() == 2
