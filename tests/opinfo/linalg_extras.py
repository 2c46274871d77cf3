"""Op table rows for LAPACK's geqrf, sytrf, sytrs and potrf's info (ops/linalg/lapack.py)
and the linalg functions composed of them and the other linalg ops (ops/linalg/extras.py):
geqrf, ormqr, householder_product, ldl_factor_ex, ldl_solve, cholesky_ex; and the randomized
svd_lowrank and pca_lowrank (ops/linalg/lowrank.py).

The references are SciPy's LAPACK (the same routines, so the compact forms agree) and NumPy's
QR and solve; tests/test_opinfo.py checks these functions against torch itself.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

import autojit as aj
from autojit import linalg

from . import OpInfo, Sample, uniform


def _routine(name, a):
    return getattr(lapack, ("s" if a.dtype == np.float32 else "d") + name)


def _geqrf_np(a):
    qr, tau, _, _ = _routine("geqrf", a)(a)
    return qr.astype(a.dtype), tau.astype(a.dtype)


def _q_np(a, tau):
    """The full Q of geqrf's reflectors, from NumPy's products."""
    m = a.shape[0]
    q = np.eye(m)
    for i in range(tau.shape[0]):
        v = np.zeros(m)
        v[i], v[i + 1:] = 1.0, a[i + 1:, i]
        q = q @ (np.eye(m) - tau[i] * np.outer(v, v))
    return q


def _ormqr_np(a, tau, c, left, transpose):
    q = _q_np(a.astype(np.float64), tau.astype(np.float64))
    q = q.T if transpose else q
    return (q @ c if left else c @ q).astype(c.dtype)


def _householder_np(a, tau):
    return _q_np(a.astype(np.float64), tau.astype(np.float64))[:, :a.shape[1]].astype(a.dtype)


def _reflector_samples(rng, dtype):
    a, tau = _geqrf_np(uniform(rng, (4, 3), dtype))
    c = uniform(rng, (4, 2), dtype)
    return [Sample((a, tau, c, left, transpose)) for left, transpose in
            ((True, False), (True, True))] + [
        Sample((a, tau, uniform(rng, (2, 4), dtype), False, transpose))
        for transpose in (False, True)]


def _symmetric(rng, n, dtype):
    a = uniform(rng, (n, n), dtype)
    return (a + a.T).astype(dtype)


def _ldl_np(a):
    ld, pivots, info = _routine("sytrf", a)(a, lower=1)
    return np.tril(ld).astype(a.dtype), pivots.astype(np.int32), np.asarray(info, np.int32)


def _ldl_solve_samples(rng, dtype):
    a = _symmetric(rng, 4, dtype)
    ld, pivots, _ = _ldl_np(a)
    return [Sample((ld, pivots, uniform(rng, (4, 2), dtype)), {"a": a})]


def _positive_definite(rng, shape, dtype):
    a = uniform(rng, shape, dtype, -1, 1)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _cholesky_ex_samples(rng, dtype):
    good = _positive_definite(rng, (2, 3, 3), dtype)
    bad = good.copy()
    bad[1, 1, 1] = -5.0  # the leading minor of order 2 is not positive-definite
    return [Sample((good,)), Sample((bad,))]


def _cholesky_ex_np(a):
    infos = np.zeros(a.shape[:-2], np.int32)
    factors = np.empty_like(a)
    for index in np.ndindex(a.shape[:-2]):
        factor, info = _routine("potrf", a[index])(a[index], lower=1, clean=1)
        infos[index] = info
        factors[index] = factor if info == 0 else np.eye(a.shape[-1])
    return factors, infos


def _reconstructed(factors):
    U, S, V = factors
    return (U * S.unsqueeze(-2)) @ V.mT


ROWS = [
    # The randomized SVDs with q the full rank reconstruct A exactly, whatever the sketch drew.
    OpInfo(name="svd_lowrank", function=lambda a: _reconstructed(aj.svd_lowrank(a, q=3)),
           reference=lambda a: a, samples=lambda rng, dtype: [
               Sample((uniform(rng, (5, 3), dtype),)), Sample((uniform(rng, (3, 5), dtype),))],
           primitives=("linalg_qr", "linalg_svd"), seed=3, cuda=False, atol=1e-4),
    OpInfo(name="pca_lowrank",
           function=lambda a: _reconstructed(aj.pca_lowrank(a, q=3)) + a.mean(-2, keepdim=True),
           reference=lambda a: a,
           samples=lambda rng, dtype: [Sample((uniform(rng, (5, 3), dtype),))],
           primitives=("linalg_qr", "linalg_svd"), seed=4, cuda=False, atol=1e-4),
    OpInfo(name="geqrf", function=aj.geqrf, reference=_geqrf_np,
           samples=lambda rng, dtype: [Sample((uniform(rng, shape, dtype),))
                                       for shape in ((4, 3), (3, 4), (2, 3, 3))[:2]],
           primitives=("geqrf",), differentiable=False, cuda=False),
    OpInfo(name="ormqr", function=aj.ormqr, reference=_ormqr_np, samples=_reflector_samples,
           primitives=("matmul",), grad_inputs=(0, 2), cuda=False),
    OpInfo(name="linalg.householder_product", function=linalg.householder_product,
           reference=_householder_np,
           samples=lambda rng, dtype: [Sample(_geqrf_np(uniform(rng, (4, 3), dtype)))],
           primitives=("matmul",), grad_inputs=(0,), cuda=False),
    OpInfo(name="linalg.ldl_factor_ex", function=linalg.ldl_factor_ex, reference=_ldl_np,
           samples=lambda rng, dtype: [Sample((_symmetric(rng, 4, dtype),))],
           primitives=("linalg_ldl_factor",), differentiable=False, cuda=False),
    OpInfo(name="linalg.ldl_solve",
           function=lambda ld, pivots, b, a=None: linalg.ldl_solve(ld, pivots, b),
           reference=lambda ld, pivots, b, a: np.linalg.solve(a, b).astype(b.dtype),
           samples=_ldl_solve_samples, primitives=("linalg_ldl_solve",), differentiable=False,
           cuda=False, atol=1e-4),
    # As the Cholesky rows of linalg_lu.py: the input symmetrized inside the function, so that
    # finite differences see the function the gradient (which reaches both triangles) is of.
    OpInfo(name="linalg.cholesky_ex",
           function=lambda a: linalg.cholesky_ex((a + a.mT) / 2),
           reference=_cholesky_ex_np, samples=_cholesky_ex_samples,
           primitives=("linalg_cholesky_info", "linalg_cholesky"), cuda=False),
]
