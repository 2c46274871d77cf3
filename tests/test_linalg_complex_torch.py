"""autojit.linalg's decompositions, solvers and determinants on complex matrices against torch's:
values and dtypes, the gradient of a real loss (torch's conjugate Wirtinger convention) and its
second derivative, compiled against eager, gradcheck and gradgradcheck over real coordinates,
and torch's error where a loss depends on the arbitrary phases of singular vectors or
eigenvectors.

Each loss weights the real and imaginary parts of every result with fixed random weights, so
that a conjugate missing from a VJP shows; losses of eigenvectors and singular vectors read
them through gauge-invariant products (U diag(S) Vh, |V|), as torch requires.

The default run checks a few decompositions by gradcheck and compiles a few; with
AUTOJIT_LINALG_COMPLEX_FULL=1 every one listed, gradgradcheck included (about 10 s more).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import autojit as aj
from autojit.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(54)
FULL = bool(os.environ.get("AUTOJIT_LINALG_COMPLEX_FULL"))


def _complex(*shape) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


A = _complex(3, 3)
TALL = _complex(4, 3)
WIDE = _complex(2, 4)
B = _complex(3, 2)
# Hermitian positive-definite, and Hermitian with well-separated eigenvalues.
HPD = A @ A.conj().T + 3 * np.eye(3)
HERMITIAN = HPD - 4 * np.eye(3)


def _weighted(library, results) -> object:
    """sum over results of Re(r) * w1 + Im(r) * w2, with weights fixed per position."""
    weights = np.random.default_rng(5)
    total = 0
    for result in results:
        shape = tuple(result.shape)
        first = library.tensor(weights.standard_normal(shape))
        second = library.tensor(weights.standard_normal(shape))
        if result.is_complex():
            total = total + (result.real * first).sum() + (result.imag * second).sum()
        else:
            total = total + (result * first).sum()
    return total


# name -> (function of (library, *matrices), inputs)
CASES = {
    "solve": (lambda f, a, b: f.linalg.solve(a, b), (A, B)),
    "solve_left_false": (lambda f, a, b: f.linalg.solve(a, b.mT, left=False), (A, B)),
    "inv": (lambda f, a: f.linalg.inv(a), (A,)),
    "det": (lambda f, a: f.linalg.det(a), (A,)),
    "slogdet": (lambda f, a: tuple(f.linalg.slogdet(a)), (A,)),
    "logdet": (lambda f, a: f.logdet(a), (HPD,)),
    "cholesky": (lambda f, a: f.linalg.cholesky(a), (HPD,)),
    "cholesky_upper": (lambda f, a: f.linalg.cholesky(a, upper=True), (HPD,)),
    "cholesky_solve": (lambda f, factor, b: f.cholesky_solve(b, factor),
                       (np.linalg.cholesky(HPD), B)),
    "solve_triangular": (lambda f, a, b: f.linalg.solve_triangular(a.triu(), b, upper=True),
                         (A + 3 * np.eye(3), B)),
    "qr_tall": (lambda f, a: tuple(f.linalg.qr(a)), (TALL,)),
    "qr_wide": (lambda f, a: tuple(f.linalg.qr(a)), (WIDE,)),
    "svd": (lambda f, a: (lambda u, s, vh: (u @ (s.to(u.dtype)[:, None] * vh), s))(
        *f.linalg.svd(a, full_matrices=False)), (TALL,)),
    "svd_vectors": (lambda f, a: (lambda u, s, vh: (u.abs(), vh.abs()))(
        *f.linalg.svd(a, full_matrices=False)), (WIDE,)),
    "svdvals": (lambda f, a: f.linalg.svdvals(a), (TALL,)),
    "eigh": (lambda f, a: (lambda w, v: (w, v.abs()))(*f.linalg.eigh(a)), (HERMITIAN,)),
    "eigvalsh": (lambda f, a: f.linalg.eigvalsh(a), (HERMITIAN,)),
    "eig": (lambda f, a: (lambda w, v: (w, v.abs()))(*f.linalg.eig(a)), (A,)),
    "lu": (lambda f, a: tuple(f.linalg.lu(a))[1:], (A,)),
    "lu_solve": (lambda f, a, b: f.linalg.lu_solve(*f.linalg.lu_factor(a), b, adjoint=True),
                 (A, B)),
    "pinv": (lambda f, a: f.linalg.pinv(a), (TALL,)),
    "lstsq": (lambda f, a, b: f.linalg.lstsq(a, b).solution, (TALL, _complex(4, 2))),
    "matrix_exp": (lambda f, a: f.linalg.matrix_exp(a), (0.5 * A,)),
    "matrix_norm_nuc": (lambda f, a: f.linalg.matrix_norm(a, "nuc"), (TALL,)),
}


def _values(x) -> np.ndarray:
    return x.detach().resolve_conj().numpy()


def _as_tuple(result) -> tuple:
    return result if isinstance(result, tuple) else (result,)


def _run(library, name, dtype="complex128", create_graph=False):
    function, inputs = CASES[name]
    leaves = [library.tensor(x.astype(dtype), requires_grad=True) for x in inputs]
    results = _as_tuple(function(library, *leaves))
    grads = library.autograd.grad(_weighted(library, results), leaves,
                                  create_graph=create_graph)
    return leaves, results, grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_agree_with_torch(name):
    _, mine, my_grads = _run(aj, name)
    _, theirs, their_grads = _run(torch, name)
    for m, t in zip(mine + my_grads, theirs + their_grads, strict=True):
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(_values(m), _values(t), rtol=1e-7,
                                   atol=1e-9)


@pytest.mark.parametrize("name", ["solve", "inv", "det", "slogdet", "cholesky_upper", "qr_tall",
                                  "qr_wide", "svd", "eigh", "eig", "lu", "pinv"])
def test_second_derivatives_agree_with_torch(name):
    results = []
    for library in (aj, torch):
        leaves, _, grads = _run(library, name, create_graph=True)
        results.append(library.autograd.grad(_weighted(library, grads), leaves))
    for m, t in zip(*results, strict=True):
        np.testing.assert_allclose(_values(m), _values(t), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["cholesky_upper", "slogdet", "qr_tall", "qr_wide", "svd",
                                  "svd_vectors", "eigh", "eig"])
def test_forward_mode_agrees_with_torch(name):
    function, (matrix,) = CASES[name]
    tangent = _complex(*matrix.shape)
    if name.startswith(("cholesky", "eigh")):  # a Hermitian direction
        tangent = tangent + tangent.conj().T
    results = []
    for library, jvp in ((aj, aj.func.jvp), (torch, torch.func.jvp)):
        _, pushed = jvp(lambda a, library=library: _as_tuple(function(library, a)),
                        (library.tensor(matrix),), (library.tensor(tangent),))
        results.append(pushed)
    for m, t in zip(*results, strict=True):
        np.testing.assert_allclose(_values(m), _values(t), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["solve", "slogdet", "cholesky", "qr_wide", "svd", "eigh"]
                         if FULL else ["slogdet", "svd", "eigh"])
def test_gradcheck_and_gradgradcheck(name):
    function, inputs = CASES[name]
    leaves = tuple(aj.tensor(x, requires_grad=True) for x in inputs)
    if name in ("cholesky", "eigh"):  # they read one triangle: checked on A + A^H, as torch's
        leaves = (aj.tensor(0.5 * inputs[0], requires_grad=True),)
        base = function
        function = lambda f, a: base(f, a + a.mH)  # noqa: E731

    def loss(*matrices):  # a real scalar, so that the phases of vectors stay out of it
        return _weighted(aj, _as_tuple(function(aj, *matrices)))

    assert gradcheck(loss, leaves)
    if FULL:
        assert gradgradcheck(loss, leaves)


@pytest.mark.parametrize("name", ["solve", "inv", "slogdet", "cholesky", "qr_tall", "svd",
                                  "eigh", "lu"] if FULL else ["slogdet", "svd", "eigh"])
def test_compiled_gradients_equal_eager(name):
    function, inputs = CASES[name]
    leaves = [aj.tensor(x.astype("complex64"), requires_grad=True) for x in inputs]

    @aj.compile(fullgraph=True)
    def step(*matrices):
        loss = _weighted(aj, _as_tuple(function(aj, *matrices)))
        return aj.autograd.grad(loss, matrices)

    eager = aj.autograd.grad(_weighted(aj, _as_tuple(function(aj, *leaves))), leaves)
    # The compiled backward fuses its complex elementwise chains and sums (in another order
    # than NumPy's: docs/notes/complex.md), so a few float32 ulps apart.
    for compiled, expected in zip(step(*leaves), eager, strict=True):
        np.testing.assert_allclose(_values(compiled), _values(expected), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("function", [
    lambda f, a: f.linalg.svd(a)[0].real.sum(),
    lambda f, a: f.linalg.eigh(a)[1].real.sum(),
    lambda f, a: f.linalg.eig(a)[1].real.sum(),
])
def test_a_loss_of_the_phases_raises_torchs_error(function):
    messages = []
    for library in (aj, torch):
        a = library.tensor(A, requires_grad=True)
        with pytest.raises(RuntimeError) as error:
            function(library, a).backward()
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_real_results_of_complex_matrices():
    """Singular values, Hermitian eigenvalues, logabsdet and lstsq's residuals are real."""
    a = aj.tensor(TALL)
    assert aj.linalg.svdvals(a).dtype is aj.float64
    assert aj.linalg.svd(a).S.dtype is aj.float64
    assert aj.linalg.eigvalsh(aj.tensor(HERMITIAN)).dtype is aj.float64
    sign, logabsdet = aj.linalg.slogdet(aj.tensor(A))
    assert (sign.dtype, logabsdet.dtype) == (aj.complex128, aj.float64)
    b = _complex(4, 2)
    residuals = aj.linalg.lstsq(a, aj.tensor(b), driver="gelsd").residuals
    expected = torch.linalg.lstsq(torch.tensor(TALL), torch.tensor(b), driver="gelsd").residuals
    assert residuals.dtype is aj.float64 and tuple(residuals.shape) == tuple(expected.shape)
