"""Op table rows for the LU family and the factorization solvers (ops/linalg/lu.py): the
factorization primitive and the permutation of its pivots, torch's lu, lu_solve and lu_unpack,
cholesky_solve, cholesky_inverse, triangular_solve and matrix_exp.

The references are SciPy's (LAPACK's getrf, as the primitive runs it, so the pivots agree).
As torch's OpInfos do, the Cholesky rows pass the factor through tril inside the function, so
that finite differences and the gradient see the same function of the input (the value reads
one triangle; the gradient, as torch's, reaches both). The primitives run on the host, so the
rows are not run on CUDA.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg as scipy_linalg

import autojit as aj
from autojit import linalg

from . import OpInfo, Sample, uniform


def _regular(rng, shape, dtype):
    return (uniform(rng, shape, dtype, -1.0, 1.0) + 2 * np.eye(shape[-1])).astype(dtype)


def _lower(rng, n, dtype):
    return (np.tril(uniform(rng, (n, n), dtype, -0.5, 0.5)) + 2 * np.eye(n)).astype(dtype)


def _lu_factor_np(a):
    lu, pivots = scipy_linalg.lu_factor(a)
    return lu.astype(a.dtype), (pivots + 1).astype(np.int32)


def _lu_np(a):
    p, lower, upper = scipy_linalg.lu(a)
    return p.astype(a.dtype), lower.astype(a.dtype), upper.astype(a.dtype)


def _unpacked_np(lu, pivots):
    m, n = lu.shape
    k = min(m, n)
    order = np.arange(m)
    for i, pivot in enumerate(pivots[:k] - 1):
        order[[i, pivot]] = order[[pivot, i]]
    permutation = np.zeros((m, m), lu.dtype)
    permutation[order, np.arange(m)] = 1
    lower = np.tril(lu, -1)[:, :k] + np.eye(m, k, dtype=lu.dtype)
    return permutation, lower, np.triu(lu)[:k, :]


def _lu_solve_samples(rng, dtype):
    lu, pivots = _lu_factor_np(_regular(rng, (3, 3), dtype))
    return [Sample((uniform(rng, (3, 2), dtype), lu, pivots))]


def _lu_solve_np(b, lu, pivots):
    return scipy_linalg.lu_solve((lu, pivots - 1), b).astype(b.dtype)


def _cholesky_solve_np(b, factor, upper=False):
    factor = np.triu(factor) if upper else np.tril(factor)
    a = factor.T @ factor if upper else factor @ factor.T
    return np.linalg.solve(a, b).astype(b.dtype)


def _triangular_solve_np(b, a, upper=True, transpose=False):
    triangle = np.triu(a) if upper else np.tril(a)
    solution = scipy_linalg.solve_triangular(triangle, b, lower=not upper,
                                             trans=1 if transpose else 0)
    return solution.astype(b.dtype), a  # the coefficient copied whole


ROWS = [
    OpInfo("linalg.lu_factor", linalg.lu_factor, _lu_factor_np, lambda rng, dtype: [
        Sample((_regular(rng, (4, 4), dtype),))], primitives=("linalg_lu_factor",), cuda=False,
        grad_inputs=(0,)),
    OpInfo("linalg.lu", linalg.lu, _lu_np, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype),)), Sample((uniform(rng, (4, 3), dtype),))],
        primitives=("linalg_lu_factor", "lu_pivots_to_permutation"), cuda=False),
    OpInfo("lu", lambda a: aj.lu(a), _lu_factor_np, lambda rng, dtype: [
        Sample((_regular(rng, (3, 3), dtype),))], cuda=False),
    OpInfo("lu_unpack", aj.lu_unpack, _unpacked_np, lambda rng, dtype: [
        Sample(_lu_factor_np(uniform(rng, (4, 3), dtype)))], cuda=False, grad_inputs=(0,)),
    OpInfo("lu_solve", aj.lu_solve, _lu_solve_np, _lu_solve_samples, cuda=False,
           grad_inputs=(0, 1)),
    OpInfo("cholesky_solve", lambda b, factor, upper=False: aj.cholesky_solve(
        b, aj.triu(factor) if upper else aj.tril(factor), upper), _cholesky_solve_np,
        lambda rng, dtype: [Sample((uniform(rng, (3, 2), dtype), _lower(rng, 3, dtype))),
                            Sample((uniform(rng, (3, 2), dtype), _lower(rng, 3, dtype).T),
                                   {"upper": True})], cuda=False),
    OpInfo("cholesky_inverse", lambda factor: aj.cholesky_inverse(aj.tril(factor)),
           lambda factor: np.linalg.inv(np.tril(factor) @ np.tril(factor).T).astype(
               factor.dtype), lambda rng, dtype: [Sample((_lower(rng, 3, dtype),))],
           cuda=False),
    OpInfo("triangular_solve", aj.triangular_solve, _triangular_solve_np, lambda rng, dtype: [
        Sample((uniform(rng, (3, 2), dtype), _regular(rng, (3, 3), dtype))),
        Sample((uniform(rng, (3, 2), dtype), _regular(rng, (3, 3), dtype)),
               {"upper": False, "transpose": True})], cuda=False),
    OpInfo("matrix_exp", aj.matrix_exp, lambda a: np.stack([
        scipy_linalg.expm(m) for m in a.reshape(-1, *a.shape[-2:])]).reshape(a.shape).astype(
            a.dtype), lambda rng, dtype: [Sample((uniform(rng, (2, 3, 3), dtype),)),
                                          Sample((uniform(rng, (3, 3), dtype, -4, 4),))],
        cuda=False, atol=1e-4, rtol=1e-4),
]
