"""LAPACK routines of torch's that have no derivative there, as primitives on SciPy's LAPACK:
geqrf (Householder QR in LAPACK's compact form), sytrf and sytrs (the Bunch-Kaufman LDL^T
factorization and its solve: torch.linalg.ldl_factor_ex, ldl_solve), and potrf's info (whether
and where a Cholesky factorization fails: torch.linalg.cholesky_ex).

Each takes real and complex matrices (SciPy's s, d, c and z routines); with hermitian=True a
complex matrix is factored by hetrf and solved by hetrs, as torch's are.

A primitive has one result, so geqrf's (a, tau) and sytrf's (LD, pivots, info) are packed
side by side after the batch dims (linalg_common.pack) and taken apart as views; integer parts
travel as floats (exact: they are small). The lowering is an Extern with a routine no backend
implements, so a compiled plan runs the NumPy impl (docs/notes/op-facts.md). Their results do
not require grad, as torch's do not.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor import dtypes
from .. import batching
from ..dtype_rules import rule_first
from ..registry import NOT_DIFFERENTIABLE, Extern, bind, define_op
from .common import nan_pivot, numpy_precision, pack, real_part, unpack


def _matrices(a: np.ndarray) -> np.ndarray:
    return a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:])


_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def _lapack(name: str, a: np.ndarray):
    from scipy.linalg import lapack  # on first use: SciPy costs `import autojit` time

    return getattr(lapack, _PREFIX[a.dtype.name] + name)


def _symmetric(name: str, a: np.ndarray, hermitian: bool) -> str:
    """sytrf/sytrs, or hetrf/hetrs for a Hermitian complex matrix (a real symmetric one is
    Hermitian: sytrf serves both)."""
    return ("he" + name[2:]) if hermitian and a.dtype.kind == "c" else name


# ---- geqrf ------------------------------------------------------------------------------------

def geqrf_shapes(m: int, n: int) -> tuple:
    return (m, n), (min(m, n),)


def _geqrf_impl(a):
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    flat = _matrices(a)
    reflectors = np.empty(flat.shape, a.dtype)
    taus = np.zeros((flat.shape[0], min(m, n)), a.dtype)
    if a.size:
        routine = _lapack("geqrf", a)
        for index, matrix in enumerate(flat):
            qr, tau, _, _ = routine(matrix)
            reflectors[index], taus[index] = qr, tau
    return pack([reflectors.reshape(batch + (m, n)), taus.reshape(batch + (min(m, n),))],
                batch)


GEQRF = define_op(name="geqrf", arity=1,
                  shape=lambda shape: tuple(shape[:-2]) + (shape[-2] * shape[-1]
                                                           + min(shape[-2:]),),
                  dtype=rule_first, impl=_geqrf_impl, vjp=NOT_DIFFERENTIABLE, saves=(),
                  lowering=Extern("geqrf", ("data",)), batch=batching.leading_batch_rule,
                  complex=True)


def geqrf_parts(A):
    """(a, tau) of A: the reflectors below R and their scales."""
    m, n = A.shape[-2], A.shape[-1]
    return unpack(bind(GEQRF, (A,), {}), geqrf_shapes(m, n))


# ---- sytrf / sytrs ----------------------------------------------------------------------------

def _ldl_impl(a, hermitian=False):
    batch, n = a.shape[:-2], a.shape[-1]
    flat = _matrices(a)
    factors = np.zeros(flat.shape, a.dtype)
    pivots = np.zeros((flat.shape[0], n), a.dtype)
    infos = np.zeros((flat.shape[0], 1), a.dtype)
    if a.size:
        routine = _lapack(_symmetric("sytrf", a, hermitian), a)
        for index, matrix in enumerate(flat):
            ld, ipiv, info = routine(matrix, lower=1)
            factors[index] = np.tril(ld)  # torch zeroes what sytrf leaves above the diagonal
            pivots[index], infos[index] = ipiv, info
    if hermitian and a.dtype.kind == "c":  # hetrf's D has a real diagonal; torch's says so
        diagonal = np.einsum("...ii->...i", factors)
        diagonal.imag = 0
    return pack([factors.reshape(batch + (n, n)), pivots.reshape(batch + (n,)),
                 infos.reshape(batch + (1,))], batch)


LDL_FACTOR = define_op(name="linalg_ldl_factor", arity=1,
                       shape=lambda shape, hermitian=False: tuple(shape[:-2])
                       + (shape[-1] * shape[-1] + shape[-1] + 1,),
                       dtype=rule_first, impl=_ldl_impl, vjp=NOT_DIFFERENTIABLE, saves=(),
                       lowering=Extern("sytrf", ("data",)), batch=batching.leading_batch_rule,
                       complex=True)


def ldl_parts(A, hermitian: bool = False):
    """(LD, pivots as int32, info as int32) of the symmetric (or Hermitian) A."""
    n = A.shape[-1]
    attrs = {"hermitian": True} if hermitian and A.dtype.is_complex else {}
    factors, pivots, info = unpack(bind(LDL_FACTOR, (A,), attrs), ((n, n), (n,), (1,)))
    return (factors, real_part(pivots).to(dtypes.int32),
            real_part(info).to(dtypes.int32).squeeze(-1))


def _ldl_solve_impl(factors, pivots, b, hermitian=False):
    batch = np.broadcast_shapes(factors.shape[:-2], pivots.shape[:-1], b.shape[:-2])
    n, k = b.shape[-2], b.shape[-1]
    count = math.prod(batch)
    flat_f = np.broadcast_to(factors, batch + factors.shape[-2:]).reshape(
        (count,) + factors.shape[-2:])
    flat_p = np.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape(
        (count, pivots.shape[-1]))
    flat_b = np.broadcast_to(b, batch + (n, k)).reshape((count, n, k))
    result = np.empty((count, n, k), b.dtype)
    if result.size:
        routine = _lapack(_symmetric("sytrs", flat_b, hermitian), flat_b)
        for index in range(count):
            result[index] = routine(flat_f[index], flat_p[index].astype(np.int32),
                                    flat_b[index], lower=1)[0]
    return result.reshape(batch + (n, k))


LDL_SOLVE = define_op(name="linalg_ldl_solve", arity=3,
                      shape=lambda f, p, b, hermitian=False:
                      tuple(np.broadcast_shapes(f[:-2], p[:-1], b[:-2])) + tuple(b[-2:]),
                      dtype=lambda inputs, attrs: (inputs[2].dtype, inputs[2].dtype),
                      impl=_ldl_solve_impl, vjp=NOT_DIFFERENTIABLE, saves=(),
                      lowering=Extern("sytrs", ("data", "data", "data")), uncast=(1,),
                      complex=True)


def ldl_solve_matrix(factors, pivots, B, hermitian: bool = False):
    attrs = {"hermitian": True} if hermitian and B.dtype.is_complex else {}
    return bind(LDL_SOLVE, (factors, pivots, B), attrs)


# ---- potrf's info -----------------------------------------------------------------------------

def _cholesky_info_impl(a):
    batch = a.shape[:-2]
    # In the precision of the factor (solvers.py's NumPy Cholesky), so that the info says 0
    # exactly when the factor exists: cholesky_ex with check_errors=False never raises.
    a = numpy_precision(a)
    flat = _matrices(a)
    infos = np.zeros(flat.shape[0], np.int32)
    if a.size:
        routine = _lapack("potrf", a)
        for index, matrix in enumerate(flat):
            factor, info = routine(matrix, lower=1, clean=0)
            # A NaN pivot fails in torch's LAPACK, not in NumPy's (common.nan_pivot): such a
            # matrix's info is not 0, so cholesky_ex does not factor it again and raise.
            infos[index] = info or nan_pivot(factor)
    return infos.reshape(batch)


CHOLESKY_INFO = define_op(name="linalg_cholesky_info", arity=1,
                          shape=lambda shape: tuple(shape[:-2]),
                          dtype=lambda inputs, attrs: (inputs[0].dtype, dtypes.int32),
                          impl=_cholesky_info_impl, vjp=NOT_DIFFERENTIABLE, saves=(),
                          lowering=Extern("potrf", ("data",)), complex=True)


def cholesky_info(A):
    """LAPACK's potrf info for each matrix of A: 0, or the order of the first leading minor
    that is not positive-definite."""
    return bind(CHOLESKY_INFO, (A,), {})
