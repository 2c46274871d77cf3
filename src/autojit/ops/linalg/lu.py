"""LU factorization and the solvers built on factorizations: linalg.lu_factor, lu_factor_ex,
lu, lu_solve and torch's lu, lu_solve and lu_unpack; cholesky_solve, cholesky_inverse,
triangular_solve; and matrix_exp.

Two primitives: the factorization, run by LAPACK's getrf (SciPy), whose result packs LU and the
(1-based) pivots side by side as the other decompositions pack theirs (linalg_common.pack), with
torch's VJP (linalg_lu_backward: square, wide and tall matrices) written in triangular solves
so that it differentiates again; and the permutation a pivot sequence stands for, which is not
differentiable. Everything else is a composite: L and U are triangles of LU, P compares
positions with the permutation, lu_solve is triangular solves (its gradients are
solve_triangular's), the Cholesky solvers solve with L L^T (so that, as in torch, the gradient
reaches both triangles of the factor, though the value reads one), and matrix_exp is Higham's
scaling and squaring with a [13/13] Pade approximant, whose number of squarings is read from
the norm of the input (an int the trace specializes on: docs/differences.md).
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple

import numpy as np

from ...tensor import dtypes
from ...tensor.once import warn_once
from ...tensor.tensor import Tensor
from .. import batching
from .. import elementwise as ew
from ..dtype_rules import rule_first
from ..indexing import gather
from ..layout import cat, expand, narrow, reshape, unsqueeze
from ..reduction import amax, sum_
from ..registry import NOT_DIFFERENTIABLE, Extern, bind, define_op
from . import matmul
from .common import (
    SCALAR_TYPE,
    LinAlgError,
    batch_prefix,
    check_floating,
    check_matrix,
    check_square,
    check_tensor,
    identity_like,
    mH,
    mT,
    pack,
    real_part,
    triangle,
    unpack,
    write_outs,
)
from .solvers import SOLVE, SOLVE_TRIANGULAR

LUFactorResult = namedtuple("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LUResult = namedtuple("linalg_lu", ["P", "L", "U"])
LUUnpackResult = namedtuple("lu_unpack", ["P", "L", "U"])
LUWithInfoResult = namedtuple("_lu_with_info", ["LU", "pivots", "info"])
TriangularSolveResult = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


# ---- the primitives -----------------------------------------------------------------------------

def _lu_shapes(m, n) -> tuple:
    return (m, n), (min(m, n),)


def _lu_rule(shape):
    m, n = shape[-2], shape[-1]
    return tuple(shape[:-2]) + (m * n + min(m, n),)


def _lu_impl(a):
    batch = a.shape[:-2]
    if a.size == 0:
        k = min(a.shape[-2:])
        return pack([a.copy(), np.arange(1, k + 1) * np.ones(batch + (k,))], batch).astype(
            a.dtype)
    from scipy.linalg import lu_factor  # on first use: SciPy costs `import autojit` 0.1 s

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LAPACK's "exactly zero" pivot: a value, as in torch
        lu, pivots = lu_factor(a, check_finite=False)
    return pack([lu, (pivots + 1).astype(a.dtype)], batch)


def _permutation_impl(pivots, m):
    """The rows of A in the order P^T A has them, from LAPACK's row swaps (1-based)."""
    batch = pivots.shape[:-1]
    flat = pivots.reshape(math.prod(batch), pivots.shape[-1]).astype(np.int64) - 1
    order = np.tile(np.arange(m, dtype=np.int64), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for i in range(flat.shape[1]):
        j = flat[:, i]
        swapped = order[rows, j].copy()
        order[rows, j] = order[:, i]
        order[:, i] = swapped
    return order.reshape(batch + (m,))


PERMUTATION = define_op(
    name="lu_pivots_to_permutation", arity=1,
    shape=lambda shape, m: tuple(shape[:-1]) + (m,),
    dtype=lambda inputs, attrs: (None, dtypes.int64), impl=_permutation_impl,
    vjp=NOT_DIFFERENTIABLE, saves=(), lowering=Extern("lu_permutation", ("data",)),
    batch=batching.leading_batch_rule)


def _parts(packed: Tensor, m, n):
    """(LU, pivots as int32) of the packed factorization."""
    lu, pivots = unpack(packed, _lu_shapes(m, n))
    return lu, real_part(pivots).to(dtypes.int32)


def _unpacked(lu: Tensor, pivots: Tensor):
    """(P, L, U) from LU and its pivots."""
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    lower = narrow(triangle(lu, upper=False, diagonal=-1), -1, 0, k)
    lower = lower + narrow(identity_like(lu, m), -1, 0, k)
    upper = narrow(triangle(lu, upper=True), -2, 0, k)
    return _permutation_matrix(pivots, m, lu), lower, upper


def _permutation_matrix(pivots: Tensor, m, like: Tensor) -> Tensor:
    order = bind(PERMUTATION, (pivots,), {"m": m})
    from ...tensor.creation import arange

    rows = reshape(arange(m, dtype=dtypes.int64, device=like.device if like.is_cuda else None),
                   (m, 1))
    return (rows == unsqueeze(order, -2)).to(like.dtype)


def _lu_backward(g_lower, g_upper, P, L, U):
    """torch's linalg_lu_backward for A = P L U (m x n), from the gradients of L and U (their
    structural zeros and unit diagonal masked out)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    g_lower = triangle(g_lower, upper=False, diagonal=-1)
    g_upper = triangle(g_upper, upper=True)
    unit_lower_t = {"upper": True, "left": True, "unitriangular": True}
    if m <= n:
        U1 = narrow(U, -1, 0, k)
        g_u1 = narrow(g_upper, -1, 0, k)
        lower_part = matmul(mH(L), g_lower)
        if n > m:
            g_u2 = narrow(g_upper, -1, k, n - k)
            lower_part = lower_part - matmul(g_u2, mH(narrow(U, -1, k, n - k)))
        middle = (triangle(lower_part, upper=False, diagonal=-1)
                  + triangle(matmul(g_u1, mH(U1)), upper=True))
        gradient = bind(SOLVE_TRIANGULAR, (mH(U1), middle),
                        {"upper": False, "left": False, "unitriangular": False})
        if n > m:
            gradient = cat([gradient, g_u2], -1)
        gradient = bind(SOLVE_TRIANGULAR, (mH(L), gradient), unit_lower_t)
        return matmul(P, gradient)
    L1, L2 = narrow(L, -2, 0, k), narrow(L, -2, k, m - k)
    g_l1, g_l2 = narrow(g_lower, -2, 0, k), narrow(g_lower, -2, k, m - k)
    middle = (triangle(matmul(mH(L1), g_l1), upper=False, diagonal=-1)
              + triangle(matmul(g_upper, mH(U)) - matmul(mH(L2), g_l2), upper=True))
    gradient = cat([bind(SOLVE_TRIANGULAR, (mH(L1), middle), unit_lower_t), g_l2], -2)
    gradient = bind(SOLVE_TRIANGULAR, (mH(U), gradient),
                    {"upper": False, "left": False, "unitriangular": False})
    return matmul(P, gradient)


def _lu_vjp(ctx, g):
    a = ctx.inputs[0]
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    P, L, U = _unpacked(*_parts(ctx.out, m, n))
    g_lu, _ = unpack(g, _lu_shapes(m, n))
    return (_lu_backward(narrow(g_lu, -1, 0, k), narrow(g_lu, -2, 0, k), P, L, U),)


def _lu_jvp(inputs, tangents, out, attrs):
    """torch's linalg_lu_jvp: with P^T A = L U, phi = L1^-1 (P^T dA)_1 U1^-1 over the leading
    k x k block gives dL1 = L1 tril(phi, -1) and dU1 = triu(phi) U1; the rest of a wide U or a
    tall L follows from its block of P^T dA. The pivots' tangent is 0."""
    (tangent,) = tangents
    if tangent is None:
        return None
    a = inputs[0]
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    P, L, U = _unpacked(*_parts(out, m, n))
    permuted = matmul(mT(P), tangent)
    L1, U1 = narrow(L, -2, 0, k), narrow(U, -1, 0, k)
    unit_lower = {"upper": False, "left": True, "unitriangular": True}
    upper_right = {"upper": True, "left": False, "unitriangular": False}
    block = narrow(narrow(permuted, -2, 0, k), -1, 0, k)
    phi = bind(SOLVE_TRIANGULAR, (U1, bind(SOLVE_TRIANGULAR, (L1, block), unit_lower)),
               upper_right)
    phi_lower = triangle(phi, upper=False, diagonal=-1)
    d_lower = matmul(L1, phi_lower)  # k x k
    d_upper = matmul(triangle(phi, upper=True), U1)  # k x k
    if n > m:  # wide: dU2 = L^-1 (P^T dA)_2 - tril(phi, -1) U2
        rest = bind(SOLVE_TRIANGULAR, (L1, narrow(permuted, -1, k, n - k)), unit_lower)
        d_upper = cat([d_upper, rest - matmul(phi_lower, narrow(U, -1, k, n - k))], -1)
    elif m > n:  # tall: dL2 = ((P^T dA)_2 - L2 dU) U^-1
        rest = narrow(permuted, -2, k, m - k) - matmul(narrow(L, -2, k, m - k), d_upper)
        d_lower = cat([d_lower, bind(SOLVE_TRIANGULAR, (U1, rest), upper_right)], -2)
    # The packed tangent: dL's strict lower part and dU's upper part, in an m x n matrix.
    if n > m:
        d_lower = cat([d_lower, ew.fill_like(narrow(tangent, -1, k, n - k), 0.0)], -1)
    elif m > n:
        d_upper = cat([d_upper, ew.fill_like(narrow(tangent, -2, k, m - k), 0.0)], -2)
    d_lu = triangle(d_lower, upper=False, diagonal=-1) + triangle(d_upper, upper=True)
    batch = tuple(a.shape[:-2])
    pivots = ew.fill_like(narrow(reshape(out, batch + (-1,)), -1, 0, k), 0.0)
    return cat([reshape(d_lu, batch + (m * n,)), pivots], -1)


LU_FACTOR = define_op(name="linalg_lu_factor", arity=1, shape=_lu_rule, dtype=rule_first,
                      impl=_lu_impl, vjp=_lu_vjp, jvp=_lu_jvp, saves=(0, "out"),
                      lowering=Extern("lu_factor", ("data",)),
                      grad_name="LinalgLuFactorExBackward0", batch=batching.leading_batch_rule,
                      complex=True)


# ---- factorizations ---------------------------------------------------------------------------

def _check_lu_input(A, name: str, pivot: bool) -> None:
    check_tensor(A, name)
    if A.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A.shape)} instead")
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype in (dtypes.float16,
                                                                             dtypes.bfloat16):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{SCALAR_TYPE[A.dtype.name]}'")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _info(lu: Tensor) -> Tensor:
    """LAPACK's info: the 1-based position of the first zero on U's diagonal, else 0."""
    diagonal = lu.detach().diagonal(0, -2, -1)
    zero = (diagonal == 0).to(dtypes.int32)
    if diagonal.shape[-1] == 0:
        return sum_(zero, -1).to(dtypes.int32)
    first = ew.where(amax(zero, -1) > 0, zero.argmax(-1) + 1, 0)
    return first.to(dtypes.int32)


def _factor(A: Tensor):
    m, n = A.shape[-2], A.shape[-1]
    return _parts(bind(LU_FACTOR, (A,), {}), m, n)


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out=None):
    """(LU, pivots, info): the LU factorization of A with partial pivoting, packed as LAPACK
    packs it, the 1-based row swaps, and LAPACK's info (nonzero where U is singular)."""
    _check_lu_input(A, "linalg.lu_factor_ex", pivot)
    lu, pivots = _factor(A)
    if check_errors:
        _raise_singular(lu, "torch.linalg.lu_factor_ex")
    result = LUFactorExResult(lu, pivots, _info(lu))
    return result if out is None else write_outs(out, result, "linalg_lu_factor_ex", (A,))


def lu_factor(A: Tensor, *, pivot: bool = True, out=None):
    """(LU, pivots): the LU factorization of A with partial pivoting; a singular U raises."""
    _check_lu_input(A, "linalg.lu_factor", pivot)
    lu, pivots = _factor(A)
    _raise_singular(lu, "torch.linalg.lu_factor")
    result = LUFactorResult(lu, pivots)
    return result if out is None else write_outs(out, result, "linalg_lu_factor", (A,))


def _raise_singular(lu: Tensor, name: str) -> None:
    if lu._payload is None:  # while tracing: eager raises, the compiled result holds inf
        return
    info = _info(lu)
    if info.numel() and bool((info > 0).any()):
        flat = info.reshape(-1)
        index = int((flat > 0).to(dtypes.int32).argmax())
        position = int(flat[index])
        prefix = batch_prefix(tuple(lu.shape), index) if lu.ndim > 2 else ""
        raise RuntimeError(
            f"{name}: {prefix}U[{position},{position}] is zero and using it on lu_solve would "
            "result in a division by zero. If you still want to perform the factorization, "
            "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu(A: Tensor, *, pivot: bool = True, out=None):
    """(P, L, U): A = P L U, with P a permutation matrix, L unit lower triangular (m x k) and
    U upper triangular (k x n), k = min(m, n)."""
    _check_lu_input(A, "linalg.lu", pivot)
    result = LUResult(*_unpacked(*_factor(A)))
    return result if out is None else write_outs(out, result, "linalg_lu", (A,))


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,  # noqa: N803
              unpack_pivots: bool = True, *, out=None):
    """(P, L, U) from a packed LU factorization and its pivots (empty tensors for the parts
    not asked for)."""
    if LU_pivots.dtype is not dtypes.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype. Note: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    P, L, U = _unpacked(LU_data, LU_pivots)
    empty = ew.fill_like(reshape(LU_data.detach(), -1)[:0], 0)
    result = LUUnpackResult(P if unpack_pivots else empty, L if unpack_data else empty,
                            U if unpack_data else empty)
    return result if out is None else write_outs(out, result, "lu_unpack", (LU_data,))


_LU_DEPRECATION = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


def lu_top_level(A: Tensor, pivot: bool = True, get_infos: bool = False, out=None):
    """(LU, pivots), with info when get_infos: the deprecated torch.lu (linalg.lu_factor_ex;
    a singular U does not raise)."""
    warnings.warn(_LU_DEPRECATION, UserWarning, stacklevel=2)
    lu_, pivots, info = lu_factor_ex(A, pivot=pivot)
    result = LUWithInfoResult(lu_, pivots, info) if get_infos else (lu_, pivots)
    return result if out is None else write_outs(out, result, "lu", (A,))


lu_top_level.__name__ = lu_top_level.__qualname__ = "lu"


# ---- solvers -----------------------------------------------------------------------------------

def _permuted_rows(B: Tensor, order: Tensor, inverse: bool) -> Tensor:
    """P^T B (rows in `order`), or P B with inverse=True."""
    if inverse:
        from ..sorting import argsort

        order = argsort(order, -1)
    index = expand(unsqueeze(order, -1), tuple(B.shape))
    return gather(B, -2, index)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,  # noqa: N803
             adjoint: bool = False, out=None) -> Tensor:
    """The solution X of A X = B (X A = B with left=False; A^H in place of A with adjoint)
    from A's LU factorization."""
    name = "linalg.lu_solve"
    check_tensor(B, name)
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {SCALAR_TYPE[LU.dtype.name]} and B of type "
                           f"{SCALAR_TYPE[B.dtype.name]} instead")
    if not left:
        return mH(lu_solve(LU, pivots, mH(B), left=True, adjoint=not adjoint, out=None)) \
            if out is None else _written(lu_solve(LU, pivots, B, left=False, adjoint=adjoint),
                                         out, (LU, B))
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {n} matrices")
    if B.shape[-2] != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    from ..registry import broadcast_shapes

    batch = broadcast_shapes(tuple(LU.shape[:-2]), tuple(pivots.shape[:-1]),
                             tuple(B.shape[:-2]))
    B = expand(B, batch + tuple(B.shape[-2:]))
    order = expand(bind(PERMUTATION, (pivots,), {"m": n}), batch + (n,))
    unit_lower = {"upper": False, "left": True, "unitriangular": True}
    upper = {"upper": True, "left": True, "unitriangular": False}
    if not adjoint:
        X = bind(SOLVE_TRIANGULAR, (LU, _permuted_rows(B, order, False)), unit_lower)
        X = bind(SOLVE_TRIANGULAR, (LU, X), upper)
    else:  # A^H X = B: U^H L^H P^T X = B
        X = bind(SOLVE_TRIANGULAR, (mH(LU), B), {**upper, "upper": False})
        X = bind(SOLVE_TRIANGULAR, (mH(LU), X), {**unit_lower, "upper": True})
        X = _permuted_rows(X, order, True)
    return X if out is None else _written(X, out, (LU, B))


def _written(result: Tensor, out, inputs) -> Tensor:
    from .common import with_out

    return with_out(result, out, "linalg_lu_solve", inputs)


_LU_SOLVE_DEPRECATION = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)")


def lu_solve_top_level(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *,  # noqa: N803
                       out=None) -> Tensor:
    """The deprecated torch.lu_solve(b, LU_data, LU_pivots): linalg.lu_solve with its
    arguments reversed."""
    warnings.warn(_LU_SOLVE_DEPRECATION, UserWarning, stacklevel=2)
    return lu_solve(LU_data, LU_pivots, b, out=out)


lu_solve_top_level.__name__ = lu_solve_top_level.__qualname__ = "lu_solve"


def _lower_factor(L: Tensor, upper: bool) -> Tensor:  # noqa: N803
    """The lower Cholesky factor read from L's triangle, whose gradient reaches all of L (the
    other triangle too), as torch's cholesky_solve and cholesky_inverse differentiate: the
    value is the triangle, the derivative that of L itself."""
    factor = mH(L) if upper else L
    return factor + (triangle(factor, upper=False) - factor).detach()


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False, *, out=None) -> Tensor:  # noqa: N803
    """The solution X of A X = B for A = L L^T given its Cholesky factor L (A = U^T U with
    upper=True)."""
    for operand, label in ((B, "b"), (L, "u")):
        if operand.ndim < 2:
            raise RuntimeError(f"{label} should have at least 2 dimensions, but has "
                               f"{operand.ndim} dimensions instead")
    if B.dtype is not L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{SCALAR_TYPE[B.dtype.name]} and A of type "
                           f"{SCALAR_TYPE[L.dtype.name]} instead.")
    factor = _lower_factor(L, upper)
    X = bind(SOLVE, (matmul(factor, mH(factor)), B), {})
    if out is None:
        return X
    from .common import with_out

    return with_out(X, out, "cholesky_solve", (B, L))


def cholesky_inverse(L: Tensor, upper: bool = False, *, out=None) -> Tensor:  # noqa: N803
    """The inverse of A = L L^T (U^T U with upper=True) from its Cholesky factor."""
    name = "cholesky_inverse"
    if L.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    check_square(L, name)
    check_floating(L, name)
    if L._payload is not None:  # potri's check: a zero on the factor's diagonal (eager only)
        info = _info(L)
        if info.numel() and bool((info > 0).any()):
            flat = info.reshape(-1)
            index = int((flat > 0).to(dtypes.int32).argmax())
            raise LinAlgError(f"{name}: {batch_prefix(tuple(L.shape), index)}The diagonal "
                              f"element {int(flat[index])} is zero, the inversion could not be "
                              "completed because the input matrix is singular.")
    identity = expand(identity_like(L, L.shape[-1]), tuple(L.shape))
    return cholesky_solve(identity, L, upper, out=out)


_TRIANGULAR_SOLVE_DEPRECATION = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
    "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
    "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).")


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,  # noqa: N803
                     unitriangular: bool = False, *, out=None):
    """(solution, cloned_coefficient): X with A X = b (A^T X = b with transpose) for a
    triangular A, and a copy of A (deprecated in torch for linalg.solve_triangular)."""
    warn_once("triangular_solve", _TRIANGULAR_SOLVE_DEPRECATION, UserWarning, stacklevel=2)
    for operand, label in ((b, "b"), (A, "A")):
        if operand.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {label} to have at least 2 "
                               f"dimensions, but it has {operand.ndim} dimensions instead")
    coefficient = mT(A) if transpose else A
    solution = bind(SOLVE_TRIANGULAR, (coefficient, b), {
        "upper": bool(upper) != bool(transpose), "left": True,
        "unitriangular": bool(unitriangular)})
    from ..registry import broadcast_shapes

    batch = broadcast_shapes(tuple(A.shape[:-2]), tuple(b.shape[:-2]))
    result = TriangularSolveResult(solution, expand(A, batch + tuple(A.shape[-2:])).clone())
    return result if out is None else write_outs(out, result, "triangular_solve", (b, A))


# ---- matrix_exp --------------------------------------------------------------------------------

# Higham's [13/13] Pade coefficients and the 1-norm up to which it is accurate to double
# precision without squaring ("The scaling and squaring method for the matrix exponential
# revisited", 2005).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _squarings(A: Tensor) -> int:
    """How many times the scaled exponential is squared: the largest 1-norm of A's matrices
    over theta13, as a power of 2 (an int read from A's values)."""
    norm = amax(sum_(ew.abs(A.detach()), -2), -1)
    largest = float(amax(reshape(norm, -1), 0)) if norm.numel() else 0.0
    if not math.isfinite(largest) or largest <= _THETA13:
        return 0
    return max(0, math.ceil(math.log2(largest / _THETA13)))


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix, `sum A^k / k!`."""
    name = "linalg.matrix_exp"
    check_tensor(A, name)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_TYPE[A.dtype.name]}")
    check_matrix(A, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    n = A.shape[-1]
    if n == 0 or A.numel() == 0:
        return A.clone()
    if n == 1:
        return ew.exp(A)
    squarings = _squarings(A)
    scaled = A * (0.5 ** squarings) if squarings else A
    b = _PADE13
    identity = identity_like(scaled, n)
    A2 = matmul(scaled, scaled)
    A4 = matmul(A2, A2)
    A6 = matmul(A4, A2)
    odd = matmul(scaled, matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2)
                 + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * identity)
    even = (matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4
            + b[2] * A2 + b[0] * identity)
    result = bind(SOLVE, (even - odd, even + odd), {})
    for _ in range(squarings):
        result = matmul(result, result)
    return result

