"""Op table rows for torch.linalg (ops/linalg/*.py) and its top-level forms.

Matrices are well conditioned (a random matrix plus a multiple of the identity, or a product
with distinct singular values), so that the gradients exist and finite differences see them.
Decompositions are only defined up to the signs of their vectors, and LAPACK reads one triangle
of a symmetric input, so some rows check a function of the op that is invariant to both, as
torch's OpInfos do with their gradcheck wrappers: cholesky and eigh get A A^T + n I or A + A^T,
and the columns of U, V and Q are multiplied by their own sums (which flips with them). The
NumPy references compute the same functions through numpy.linalg, which runs the same LAPACK
routines, so the forward is checked exactly.

On CUDA tensors the primitives run on the host (one HostFallbackWarning each), so the CUDA op
table runs a representative subset: the rows of solve, cholesky, det (both of its gradient
formulas), svd (a packed result), lstsq (empty results) and matrix_norm (composites of
svdvals); `cuda=False` marks the others.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

import autojit as aj
from autojit import linalg

from . import OpInfo, Sample, uniform

# ---- inputs ------------------------------------------------------------------------------------


def _regular(rng, shape, dtype):
    """Well-conditioned square matrices: uniform entries plus twice the identity."""
    return (uniform(rng, shape, dtype, -1.0, 1.0) + 2 * np.eye(shape[-1])).astype(dtype)


def _matrix(rng, shape, dtype):
    return uniform(rng, shape, dtype, -1.0, 1.0)


def _rank_deficient(rng, n, dtype):
    """An n x n matrix of rank n - 1 with distinct singular values."""
    left, _ = np.linalg.qr(rng.standard_normal((n, n)))
    right, _ = np.linalg.qr(rng.standard_normal((n, n)))
    values = np.linspace(2.0, 1.0, n)
    values[-1] = 0.0
    return ((left * values) @ right).astype(dtype)


def _symmetric_np(a):
    return a + np.swapaxes(a, -1, -2)


def _spd_np(a):
    n = a.shape[-1]
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=a.dtype)


def _symmetric(a):
    return a + a.mT


def _spd(a):
    n = a.shape[-1]
    return a @ a.mT + n * aj.eye(n, dtype=a.dtype, device=a.device)


def _signless_np(vectors, axis):
    """Vectors (columns for axis -2, rows for -1) times their sums: invariant to their signs."""
    return vectors * vectors.sum(axis, keepdims=True)


def _signless(vectors, axis):
    return vectors * vectors.sum(axis, keepdim=True)


def _one(shape, make=_regular, **kwargs):
    return lambda rng, dtype: [Sample((make(rng, shape, dtype),), dict(kwargs))]


# ---- solvers -----------------------------------------------------------------------------------

def _solve_samples(rng, dtype):
    return [
        Sample((_regular(rng, (3, 3), dtype), _matrix(rng, (3, 2), dtype))),
        Sample((_regular(rng, (2, 3, 3), dtype), _matrix(rng, (3,), dtype))),  # a vector
        Sample((_regular(rng, (3, 3), dtype), _matrix(rng, (2, 2, 3), dtype)), {"left": False}),
    ]


def _solve_np(a, b, left=True):
    if not left:
        return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)),
                           -1, -2)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    if vector:
        return np.linalg.solve(a, b[..., None])[..., 0]
    return np.linalg.solve(a, b)


def _triangular_samples(rng, dtype):
    return [
        Sample((_regular(rng, (3, 3), dtype), _matrix(rng, (3, 2), dtype)), {"upper": True}),
        Sample((_regular(rng, (2, 3, 3), dtype), _matrix(rng, (4, 3), dtype)),
               {"upper": False, "left": False, "unitriangular": True}),
    ]


def _triangular_np(a, b, upper, left=True, unitriangular=False):
    a = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        a = a - np.diagonal(a, axis1=-2, axis2=-1)[..., None] * np.eye(a.shape[-1]) + \
            np.eye(a.shape[-1])
    return _solve_np(a.astype(b.dtype), b, left)


def _cholesky(a, upper=False):
    return linalg.cholesky(_spd(a), upper=upper)


def _cholesky_np(a, upper=False):
    factor = np.linalg.cholesky(_spd_np(a))
    return np.swapaxes(factor, -1, -2) if upper else factor


# ---- determinants ---------------------------------------------------------------------------

def _det_samples(rng, dtype):
    mixed = np.stack([_regular(rng, (3, 3), dtype), _rank_deficient(rng, 3, dtype)])
    return [Sample((_regular(rng, (3, 3), dtype),)), Sample((mixed,))]


def _slogdet_samples(rng, dtype):
    negative = _regular(rng, (2, 3, 3), dtype)
    negative[0] = negative[0][[1, 0, 2]]  # a row swap: a negative determinant
    return [Sample((_regular(rng, (3, 3), dtype),)), Sample((negative,))]


def _slogdet_np(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return np.asarray(sign, a.dtype), np.asarray(logabsdet, a.dtype)


# ---- decompositions ---------------------------------------------------------------------------

def _qr_samples(rng, dtype):
    return [Sample((_matrix(rng, (4, 3), dtype),)),
            Sample((_matrix(rng, (2, 3, 5), dtype),), {"mode": "reduced"}),
            Sample((_matrix(rng, (3, 3), dtype),), {"mode": "complete"})]


def _qr(a, mode="reduced"):
    q, r = linalg.qr(a, mode)
    return _signless(q, -2), r * r.sum(-1, keepdim=True)


def _qr_np(a, mode="reduced"):
    q, r = np.linalg.qr(a, mode=mode)
    return _signless_np(q, -2), _signless_np(r, -1)


def _svd_samples(rng, dtype):
    return [Sample((_matrix(rng, (4, 3), dtype),), {"full_matrices": False}),
            Sample((_matrix(rng, (2, 3, 5), dtype),))]


def _svd(a, full_matrices=True):
    u, s, vh = linalg.svd(a, full_matrices)
    k = s.shape[-1]
    # With full_matrices, the columns of U past k (rows of Vh) are any completion of the basis.
    return _signless(u[..., :k], -2), s, _signless(vh[..., :k, :], -1)


def _svd_np(a, full_matrices=True):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    return _signless_np(u[..., :k], -2), s, _signless_np(vh[..., :k, :], -1)


def _svd_top(a, some=True):
    u, s, v = aj.svd(a, some)
    return _signless(u, -2), s, _signless(v, -2)


def _svd_top_np(a, some=True):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return _signless_np(u, -2), s, _signless_np(np.swapaxes(vh, -1, -2), -2)


def _eigh(a, UPLO="L"):
    values, vectors = linalg.eigh(_symmetric(a), UPLO)
    return values, _signless(vectors, -2)


def _eigh_np(a, UPLO="L"):
    values, vectors = np.linalg.eigh(_symmetric_np(a), UPLO=UPLO)
    return values, _signless_np(vectors, -2)


def _square_samples(rng, dtype, **kwargs):
    return [Sample((_matrix(rng, (3, 3), dtype),)),
            Sample((_matrix(rng, (2, 3, 3), dtype),), dict(kwargs))]


def _eig_parts(a):
    values, vectors = linalg.eig(a)
    return values.real, values.imag, vectors.abs()


def _eigvals_parts(a):
    values = linalg.eigvals(a)
    return values.real, values.imag


def _eig_parts_np(a):
    values, vectors = np.linalg.eig(a)
    values = values.astype(np.result_type(a.dtype, np.complex64))
    return values.real, values.imag, np.abs(vectors)


def _pinv_samples(rng, dtype):
    return [Sample((_matrix(rng, (4, 3), dtype),)), Sample((_matrix(rng, (2, 3, 5), dtype),)),
            Sample((_regular(rng, (3, 3), dtype),), {"hermitian": True})]


def _pinv(a, hermitian=False):
    # hermitian: only one triangle is read, so the row symmetrizes its input.
    return linalg.pinv(_symmetric(a) if hermitian else a, hermitian=hermitian)


def _pinv_np(a, hermitian=False, rtol=None):
    if rtol is None:
        rtol = np.finfo(a.dtype).eps * max(a.shape[-2:])
    a = _symmetric_np(a) if hermitian else a
    return np.linalg.pinv(a, rcond=rtol, hermitian=hermitian).astype(a.dtype)


def _quietly(function):
    """function with the deprecation warning of torch.cholesky and torch.qr silenced."""
    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="torch.(cholesky|qr) is deprecated")
            return function(*args, **kwargs)

    return call


def _lstsq_samples(rng, dtype):
    return [Sample((_matrix(rng, (5, 3), dtype), _matrix(rng, (5, 2), dtype))),
            # a batch of vectors, with gels's residuals
            Sample((_matrix(rng, (2, 5, 3), dtype), _matrix(rng, (2, 5), dtype)),
                   {"driver": "gels"})]


def _lstsq_np(a, b, driver=None):
    vector = b.ndim == a.ndim - 1
    b_matrix = b[..., None] if vector else b
    solution = np.linalg.pinv(a) @ b_matrix
    empty = np.zeros(0, a.dtype)
    if driver == "gels":
        residuals = ((a @ solution - b_matrix) ** 2).sum(-2) if a.shape[-2] > a.shape[-1] \
            else empty
        rank = np.zeros(0, np.int64)
    else:
        residuals = empty
        rank = np.linalg.matrix_rank(a).astype(np.int64)
    return (solution[..., 0] if vector else solution), residuals, rank, empty


# ---- products and norms --------------------------------------------------------------------------

def _power_samples(rng, dtype):
    return [Sample((_regular(rng, (3, 3), dtype) / 2, 3)),
            Sample((_regular(rng, (2, 3, 3), dtype) / 2, -2)),
            Sample((_regular(rng, (3, 3), dtype), 0))]


def _multi_dot_samples(rng, dtype):
    return [Sample(([_matrix(rng, s, dtype) for s in ((3,), (3, 4), (4, 2), (2,))],)),
            Sample(([_matrix(rng, s, dtype) for s in ((2, 3), (3, 4), (4, 5))],))]


def _multi_dot_np(arrays):
    return np.linalg.multi_dot(arrays)


def _cross_samples(rng, dtype):
    return [Sample((_matrix(rng, (4, 3), dtype), _matrix(rng, (1, 3), dtype))),
            Sample((_matrix(rng, (3, 2), dtype), _matrix(rng, (3, 2), dtype)), {"dim": 0})]


def _cross_np(a, b, dim=-1):
    return np.cross(a, b, axis=dim).astype(np.result_type(a, b))


def _vecdot_samples(rng, dtype):
    return [Sample((_matrix(rng, (2, 3), dtype), _matrix(rng, (3,), dtype))),
            Sample((_matrix(rng, (3, 2), dtype), _matrix(rng, (3, 2), dtype)), {"dim": 0})]


VECTOR_ORDERS = (2, 1, math.inf, -math.inf, 0, 3.5, -1.5)


def _vector_norm_samples(rng, dtype):
    x = _matrix(rng, (3, 4), dtype)
    x = np.where(np.abs(x) < 0.1, 0.3, x).astype(dtype)  # no zeros: |x|^p is smooth
    samples = [Sample((x,), {"ord": order}) for order in VECTOR_ORDERS]
    samples += [Sample((x,), {"ord": 2, "dim": 1, "keepdim": True}),
                Sample((x,), {"ord": 1, "dim": (0, 1)})]
    return samples


def _vector_norm_np(x, ord=2, dim=None, keepdim=False):
    axes = tuple(range(x.ndim)) if dim is None else ((dim,) if isinstance(dim, int) else dim)
    a = np.abs(x.astype(np.float64))
    if ord == math.inf:
        result = a.max(axes, keepdims=keepdim)
    elif ord == -math.inf:
        result = a.min(axes, keepdims=keepdim)
    elif ord == 0:
        result = (a != 0).sum(axes, keepdims=keepdim).astype(np.float64)
    else:
        result = (a ** ord).sum(axes, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(result, x.dtype)


MATRIX_ORDERS = ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf)


def _matrix_norm_samples(rng, dtype):
    samples = [Sample((_matrix(rng, (3, 4), dtype),), {"ord": order}) for order in MATRIX_ORDERS]
    samples.append(Sample((_matrix(rng, (2, 3, 4), dtype),),
                          {"ord": 2, "dim": (2, 0), "keepdim": True}))
    return samples


def _matrix_norm_np(a, ord="fro", dim=(-2, -1), keepdim=False):
    result = np.linalg.norm(a.astype(np.float64), ord=ord, axis=dim, keepdims=keepdim)
    return np.asarray(result, a.dtype)


def _norm_samples(rng, dtype):
    return [Sample((_matrix(rng, (2, 3, 4), dtype),)),
            Sample((_matrix(rng, (3, 4), dtype),), {"ord": "nuc"}),
            Sample((_matrix(rng, (3, 4), dtype),), {"ord": 1, "dim": 1}),
            Sample((_matrix(rng, (2, 3, 4), dtype),), {"ord": -1, "dim": (0, 2)})]


def _norm_np(a, ord=None, dim=None, keepdim=False):
    if dim is None and ord is None:
        return np.asarray(np.linalg.norm(a.astype(np.float64).ravel()), a.dtype)
    return np.asarray(np.linalg.norm(a.astype(np.float64), ord=ord, axis=dim,
                                     keepdims=keepdim), a.dtype)


ROWS = [
    # solvers
    OpInfo("linalg.inv", linalg.inv, np.linalg.inv, lambda rng, dtype: [
        Sample((_regular(rng, (3, 3), dtype),)), Sample((_regular(rng, (2, 3, 3), dtype),))],
        primitives=("linalg_inv", "matmul"), cuda=False),
    OpInfo("inverse", aj.inverse, np.linalg.inv, _one((3, 3)), primitives=("linalg_inv",),
           cuda=False),
    OpInfo("linalg.solve", linalg.solve, _solve_np, _solve_samples,
           primitives=("linalg_solve", "matmul")),
    OpInfo("linalg.solve_triangular", linalg.solve_triangular, _triangular_np,
           _triangular_samples, primitives=("linalg_solve_triangular", "matmul"), cuda=False),
    OpInfo("linalg.cholesky", _cholesky, _cholesky_np, lambda rng, dtype: [
        Sample((_matrix(rng, (3, 3), dtype),)),
        Sample((_matrix(rng, (2, 3, 3), dtype),), {"upper": True})],
        primitives=("linalg_cholesky", "linalg_solve_triangular")),
    OpInfo("cholesky", _quietly(lambda a: aj.cholesky(_spd(a))),
           lambda a: np.linalg.cholesky(_spd_np(a)), _one((3, 3), _matrix),
           primitives=("linalg_cholesky",), cuda=False),
    # determinants
    OpInfo("linalg.det", linalg.det, np.linalg.det, _det_samples,
           primitives=("linalg_det", "linalg_inv", "linalg_svd")),
    OpInfo("det", aj.det, np.linalg.det, _one((3, 3)), primitives=("linalg_det",), cuda=False),
    OpInfo("linalg.slogdet", linalg.slogdet, _slogdet_np, _slogdet_samples,
           primitives=("linalg_slogdet", "linalg_inv"), cuda=False),
    OpInfo("slogdet", aj.slogdet, _slogdet_np, _one((3, 3)), primitives=("linalg_slogdet",),
           cuda=False),
    OpInfo("logdet", lambda a: aj.logdet(_spd(a)),
           lambda a: np.linalg.slogdet(_spd_np(a))[1].astype(a.dtype), _one((2, 3, 3), _matrix),
           primitives=("linalg_slogdet",), cuda=False),
    # decompositions (functions of them invariant to the signs of the vectors)
    OpInfo("linalg.qr", _qr, _qr_np, _qr_samples,
           primitives=("linalg_qr", "linalg_solve_triangular"), cuda=False),
    OpInfo("qr", _quietly(lambda a, some=True: aj.qr(a, some)), lambda a, some=True: np.linalg.qr(
        a, mode="reduced" if some else "complete"), _one((3, 4), _matrix, some=False),
        primitives=("linalg_qr",), cuda=False),
    OpInfo("linalg.svd", _svd, _svd_np, _svd_samples, primitives=("linalg_svd",)),
    OpInfo("svd", _svd_top, _svd_top_np, _one((4, 3), _matrix), primitives=("linalg_svd",),
           cuda=False),
    OpInfo("linalg.svdvals", linalg.svdvals,
           lambda a: np.linalg.svd(a, compute_uv=False), lambda rng, dtype: [
               Sample((_matrix(rng, (4, 3), dtype),)), Sample((_matrix(rng, (2, 3, 5), dtype),))],
           primitives=("linalg_svdvals", "linalg_svd"), cuda=False),
    OpInfo("linalg.eigh", _eigh, _eigh_np,
           lambda rng, dtype: _square_samples(rng, dtype, UPLO="U"), primitives=("linalg_eigh",),
           cuda=False),
    OpInfo("linalg.eigvalsh", lambda a, UPLO="L": linalg.eigvalsh(_symmetric(a), UPLO),
           lambda a, UPLO="L": np.linalg.eigvalsh(_symmetric_np(a), UPLO=UPLO),
           lambda rng, dtype: _square_samples(rng, dtype, UPLO="U"),
           primitives=("linalg_eigvalsh", "linalg_eigh"), cuda=False),
    # eig's results are complex: the rows compare their real parts, imaginary parts and (for
    # the vectors, unique up to a phase) moduli; compiled, they run by their impls.
    OpInfo("linalg.eig", _eig_parts, _eig_parts_np, _square_samples, primitives=("linalg_eig",),
           cuda=False),
    OpInfo("linalg.eigvals", _eigvals_parts, lambda a: _eig_parts_np(a)[:2], _square_samples,
           primitives=("linalg_eigvals", "linalg_eig"), cuda=False),
    OpInfo("linalg.pinv", _pinv, _pinv_np, _pinv_samples, primitives=("linalg_pinv",), cuda=False),
    OpInfo("pinverse", aj.pinverse, lambda a: _pinv_np(a, rtol=1e-15), _one((4, 3), _matrix),
           primitives=("linalg_pinv",), cuda=False),
    OpInfo("linalg.lstsq", linalg.lstsq, _lstsq_np, _lstsq_samples,
           primitives=("linalg_pinv", "linalg_svdvals", "matmul")),
    # products and norms (composites)
    OpInfo("linalg.matrix_power", linalg.matrix_power, np.linalg.matrix_power, _power_samples,
           primitives=("matmul", "linalg_inv"), cuda=False),
    OpInfo("matrix_power", aj.matrix_power, np.linalg.matrix_power,
           lambda rng, dtype: [Sample((_regular(rng, (3, 3), dtype) / 2, 2))],
           primitives=("matmul",), cuda=False),
    OpInfo("linalg.multi_dot", linalg.multi_dot, _multi_dot_np, _multi_dot_samples,
           primitives=("matmul",), cuda=False),
    OpInfo("linalg.cross", linalg.cross, _cross_np, _cross_samples, cuda=False),
    OpInfo("linalg.vecdot", linalg.vecdot,
           lambda x, y, dim=-1: (x * y).sum(dim).astype(x.dtype), _vecdot_samples, cuda=False),
    OpInfo("linalg.vector_norm", linalg.vector_norm, _vector_norm_np, _vector_norm_samples,
           cuda=False),
    OpInfo("linalg.matrix_norm", linalg.matrix_norm, _matrix_norm_np, _matrix_norm_samples,
           primitives=("linalg_svdvals",)),
    OpInfo("linalg.norm", linalg.norm, _norm_np, _norm_samples,
           primitives=("linalg_svdvals",), cuda=False),
]
