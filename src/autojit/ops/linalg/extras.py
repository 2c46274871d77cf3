"""torch.linalg's functions composed of the other linalg ops: diagonal, the `_ex` forms that
report LAPACK's info instead of raising (inv_ex, solve_ex, cholesky_ex), cond, matrix_rank,
tensorinv, tensorsolve, householder_product and ormqr (products of Householder reflectors,
differentiable as written), and the wrappers of lapack.py's primitives (geqrf,
ldl_factor, ldl_factor_ex, ldl_solve).

The `_ex` forms factor once and read the info from that factorization, as torch does: inv_ex
and solve_ex through lu_factor_ex and lu_solve (a singular U gives infinities, not an error),
cholesky_ex through potrf's info, its factor computed on the matrices that succeeded (a
failing matrix's factor is the identity's, where torch's holds LAPACK's partial work).
"""

from __future__ import annotations

import math
from collections import namedtuple

from ...tensor import dtypes
from ...tensor.creation import eye
from ...tensor.tensor import Tensor
from ...tensor.type_info import finfo
from .. import elementwise as ew
from ..complex_rules import conj
from ..layout import movedim, reshape
from ..layout.diagonal import diagonal as _diagonal
from ..layout.triangular import tril
from ..reduction import amax, amin, sum_
from . import matmul
from .common import (
    LinAlgError,
    check_out_tensor,
    check_square_floating,
    check_tensor,
    copy_out,
    mH,
    with_out,
    write_outs,
)
from .decompositions import eigvalsh, svdvals
from .lapack import cholesky_info, geqrf_parts, ldl_parts, ldl_solve_matrix
from .lu import lu_factor_ex, lu_solve
from .norms import matrix_norm
from .solvers import cholesky, inv, solve

InvExResult = namedtuple("linalg_inv_ex", ["inverse", "info"])
SolveExResult = namedtuple("linalg_solve_ex", ["result", "info"])
CholeskyExResult = namedtuple("linalg_cholesky_ex", ["L", "info"])
GeqrfResult = namedtuple("geqrf", ["a", "tau"])
LDLFactorResult = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
LDLFactorExResult = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of each matrix of A (a view): torch.diagonal with the matrix dims last."""
    return _diagonal(A, offset, dim1, dim2)


def _eye_like(A: Tensor) -> Tensor:
    n = A.shape[-1]
    return eye(n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))


def _raise_info(info: Tensor, name: str, what: str) -> None:
    """Raises torch's LinAlgError (which libraries catch: linear_operator's psd_safe_cholesky,
    BoTorch) for the first matrix whose LAPACK info is not 0."""
    if info._payload is not None and info.numel() and bool((info != 0).any()):
        flat = info.reshape(-1)
        index = int((flat != 0).to(dtypes.int32).argmax())
        prefix = f"(Batch element {index}): " if info.ndim else ""
        raise LinAlgError(f"{name}: {prefix}{what.format(int(flat[index]))}")


def inv_ex(A: Tensor, *, check_errors: bool = False, out=None) -> InvExResult:
    """(inverse, info): A's inverse through its LU factorization, and LAPACK's info (nonzero
    where A is singular, whose inverse then holds infinities)."""
    check_square_floating(A, "linalg.inv_ex")
    lu, pivots, info = lu_factor_ex(A)
    if check_errors:
        _raise_info(info, "linalg.inv_ex", "The diagonal element {} is zero, the inversion "
                                           "could not be completed because the input matrix is "
                                           "singular.")
    result = InvExResult(lu_solve(lu, pivots, _eye_like(A)), info)
    return result if out is None else write_outs(out, result, "linalg_inv_ex", (A,))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out=None) -> SolveExResult:
    """(result, info): the solution of AX = B (XA = B with left=False) through A's LU
    factorization, and LAPACK's info (nonzero where A is singular)."""
    check_square_floating(A, "linalg.solve_ex")
    check_tensor(B, "linalg.solve_ex")
    lu, pivots, info = lu_factor_ex(A)
    if check_errors:
        _raise_info(info, "torch.linalg.solve_ex", "The solver failed because the input "
                                                   "matrix is singular.")
    # torch's rule for a vector right-hand side: B is 1-D, or A's batch and rows.
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        result = SolveExResult(lu_solve(lu, pivots, B.unsqueeze(-1), left=left).squeeze(-1),
                               info)
    else:
        result = SolveExResult(lu_solve(lu, pivots, B, left=left), info)
    return result if out is None else write_outs(out, result, "_linalg_solve_ex", (A, B))


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out=None):
    """(L, info): the Cholesky factor of A and LAPACK's info (the order of the first leading
    minor that is not positive-definite, else 0)."""
    check_square_floating(A, "linalg.cholesky_ex")
    info = cholesky_info(A.detach())
    if check_errors:
        _raise_info(info, "linalg.cholesky_ex", "The factorization could not be completed "
                                                "because the input is not positive-definite "
                                                "(the leading minor of order {} is not "
                                                "positive-definite).")
    failed = reshape(info != 0, tuple(info.shape) + (1, 1))
    safe = ew.where(failed, _eye_like(A), A)
    result = CholeskyExResult(cholesky(safe, upper=upper), info)
    return result if out is None else write_outs(out, result, "linalg_cholesky_ex", (A,))


_NORM_ORDERS = (None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1)


def cond(A: Tensor, p=None, *, out=None) -> Tensor:
    """The condition number of A in the `p` norm: the ratio of extreme singular values for
    p in (None, 2, -2), else norm(A, p) * norm(inv(A), p) (inf where A is singular)."""
    if out is not None and not isinstance(out, Tensor):  # torch's parser: two forms
        got = ", ".join(["Tensor", *([type(p).__name__] if p is not None else []),
                         f"out={type(out).__name__}"])
        raise TypeError(f"linalg_cond() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n"
                        " * (Tensor input, Number p = None, *, Tensor out = None)\n"
                        " * (Tensor input, str p, *, Tensor out = None)\n")
    result = _cond(A, p)
    return result if out is None else copy_out(out, result, "linalg.cond", "linalg_cond")


def _cond(A: Tensor, p) -> Tensor:
    check_tensor(A, "linalg.cond")
    if p not in _NORM_ORDERS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.cond: The input tensor must have at least 2 dimensions. "
                           f"Got {A.ndim} dimensions.")
    if p in (None, 2, -2):
        s = svdvals(A)
        if s.shape[-1] == 0:
            return sum_(s, -1)
        largest, smallest = amax(s, -1), amin(s, -1)
        return smallest / largest if p == -2 else largest / smallest
    check_square_floating(A, "linalg.cond")
    if A.shape[-1] == 0:
        return sum_(sum_(A, -1), -1)
    inverse, info = inv_ex(A)
    result = matrix_norm(A, p) * matrix_norm(inverse, p)
    return ew.where(info > 0, math.inf, result)


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None,
                out=None) -> Tensor:
    """The number of singular values of A (eigenvalues, by magnitude, if hermitian) above
    max(atol, rtol * the largest); rtol defaults to eps * max(m, n) when neither is given."""
    check_tensor(A, "linalg.matrix_rank")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor A must have at least 2 "
                           "dimensions.")
    if tol is not None:
        atol, rtol = tol, 0.0
    s = ew.abs(eigvalsh(A)) if hermitian else svdvals(A)
    s = s.detach()
    if atol is None and rtol is None:
        rtol = finfo(A.dtype).eps * max(A.shape[-2], A.shape[-1])
    atol = 0.0 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    largest = amax(s, -1, keepdim=True) if s.shape[-1] else sum_(s, -1, keepdim=True)
    atol = atol.unsqueeze(-1) if isinstance(atol, Tensor) and atol.ndim else atol
    rtol = rtol.unsqueeze(-1) if isinstance(rtol, Tensor) and rtol.ndim else rtol
    tolerance = ew.maximum(ew.mul(rtol, largest), ew.fill_like(largest, 0) + atol)
    rank = sum_((s > tolerance).to(dtypes.int64), -1)
    return rank if out is None else out.copy_(rank)


def tensorinv(A: Tensor, ind: int = 2, *, out=None) -> Tensor:
    """The inverse of A read as a matrix of its first `ind` dims by the others."""
    check_out_tensor("linalg_tensorinv", out)
    check_tensor(A, "linalg.tensorinv")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, columns = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(rows) != math.prod(columns):
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got "
                           f"{math.prod(columns)} != {math.prod(rows)}")
    matrix = reshape(A, (math.prod(rows), math.prod(columns)))
    result = reshape(inv(matrix), columns + rows)
    return result if out is None else copy_out(out, result, "tensorinv", "linalg_tensorinv")


def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out=None) -> Tensor:
    """The X with tensordot(A, X, X.ndim) = B: A's dims `dims` moved last, then A read as a
    matrix of B's dims by the rest."""
    check_out_tensor("linalg_tensorsolve", out)
    check_tensor(A, "linalg.tensorsolve")
    check_tensor(B, "linalg.tensorsolve")
    if dims is not None:
        dims = list(dims)
        A = movedim(A, dims, list(range(A.ndim - len(dims), A.ndim)))
    result_shape = tuple(A.shape[B.ndim:])
    rows, columns = B.numel(), math.prod(result_shape)
    if rows != columns:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(result_shape) == other.numel(), but got {columns} != {rows}")
    solution = solve(reshape(A, (rows, columns)), reshape(B, (rows,)))
    result = reshape(solution, result_shape)
    return result if out is None else copy_out(out, result, "tensorsolve", "linalg_tensorsolve")


def _reflectors(A: Tensor, k: int) -> Tensor:
    """The Householder vectors of A's first k columns: 1 on the diagonal, 0 above it."""
    m = A.shape[-2]
    below = tril(A[..., :, :k], -1)
    return below + eye(m, k, dtype=A.dtype, device=A.device)


def _apply(vectors: Tensor, tau: Tensor, X: Tensor, order, left: bool,
           adjoint: bool = False) -> Tensor:
    """X with H_i = I - tau_i v_i v_i^H (its adjoint H_i^H = I - conj(tau_i) v_i v_i^H with
    adjoint) applied in `order`: from the left (H X) or from the right (X H)."""
    if adjoint:
        tau = conj(tau)
    for i in order:
        v = vectors[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        if left:
            X = X - matmul(v * t, matmul(mH(v), X))
        else:
            X = X - matmul(matmul(X, v) * t, mH(v))
    return X


def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H, the Householder
    vectors v_i stored in A's columns below the diagonal (LAPACK's orgqr)."""
    check_tensor(A, "linalg.householder_product")
    check_tensor(tau, "linalg.householder_product")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 "
                           "dimensions.")
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    identity = eye(m, n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))
    result = _apply(_reflectors(A, k), tau, identity, reversed(range(k)), left=True)
    if k == 0:  # no reflector reads A; its gradient is 0, and the result requires grad as A
        result = result + (A - A.detach()) * 0
    return result if out is None else out.copy_(result)


def orgqr(input: Tensor, input2: Tensor, *, out=None) -> Tensor:  # noqa: A002
    """torch.orgqr: householder_product under its older name, with torch's parameter names
    (input the reflectors from geqrf, input2 their tau)."""
    return householder_product(input, input2, out=out)


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,  # noqa: A002
          transpose: bool = False, *, out=None) -> Tensor:
    """input3 (the other matrix) multiplied by Q (Q^H with transpose) from the left or the
    right, Q the product of the Householder reflectors stored in input and input2 (tau), as
    LAPACK's ormqr; the parameters have torch's names."""
    tau, other = input2, input3
    for value in (input, tau, other):
        check_tensor(value, "ormqr")
    for value, name in ((input, "input"), (other, "other")):
        if value.ndim < 2:
            raise RuntimeError(f"torch.ormqr: {name} must have at least 2 dimensions.")
    k = tau.shape[-1]
    side = other.shape[-2] if left else other.shape[-1]
    if k != min(side, input.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to "
                           f"min(other.shape[{-2 if left else -1}], input.shape[-1])")
    if side != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{-2 if left else -1}] must be equal to "
                           f"input.shape[-2]")
    vectors = _reflectors(input, k)
    # Q = H_1 ... H_k: Q C applies H_k first, Q^H C H_1 first; from the right the reverse.
    order = range(k) if transpose == left else reversed(range(k))
    result = _apply(vectors, tau, other, order, left, adjoint=bool(transpose))
    return result if out is None else out.copy_(result)


def geqrf(input: Tensor, *, out=None) -> GeqrfResult:  # noqa: A002
    """(a, tau): LAPACK's geqrf, the QR factorization of input with R on and above a's
    diagonal and the Householder vectors below it, scaled by tau."""
    check_tensor(input, "geqrf")
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    a, tau = geqrf_parts(input)
    result = GeqrfResult(a.contiguous(), tau.contiguous())
    if out is not None:
        out[0].copy_(result.a)
        out[1].copy_(result.tau)
        return GeqrfResult(*out)
    return result


def _raise_unknown_info(info: Tensor, name: str) -> None:
    """torch's check of an info it has no message for (sytrf's exactly singular D): a
    RuntimeError naming the first nonzero code, without the batch element. torch raises it as
    an internal assert, whose prefix (its C++ source line, "please report a bug") is left out."""
    if info._payload is not None and info.numel() and bool((info != 0).any()):
        flat = info.reshape(-1)
        code = int(flat[int((flat != 0).to(dtypes.int32).argmax())])
        raise RuntimeError(f"{name}: Unknown error code: {code}.")


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False,
                  out=None):
    """(LD, pivots, info): the Bunch-Kaufman factorization A = L D L^T of a symmetric A in
    LAPACK's compact form (sytrf), and LAPACK's info."""
    check_square_floating(A, "torch.linalg.ldl_factor_ex")
    factors, pivots, info = ldl_parts(A, hermitian)
    if check_errors:
        _raise_unknown_info(info, "torch.linalg.ldl_factor_ex")
    result = LDLFactorExResult(factors.contiguous(), pivots.contiguous(), info)
    # Not differentiable: torch refuses out= only where out itself requires grad.
    return result if out is None else write_outs(out, result, "aten::linalg_ldl_factor_ex", (),
                                                 "linalg_ldl_factor_ex")


def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None) -> LDLFactorResult:
    """(LD, pivots): ldl_factor_ex, raising where the factorization fails."""
    factors, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    _raise_unknown_info(info, "torch.linalg.ldl_factor")
    result = LDLFactorResult(factors, pivots)
    return result if out is None else write_outs(out, result, "aten::linalg_ldl_factor_ex", (),
                                                 "linalg_ldl_factor")


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *,  # noqa: N803 - torch's names
              hermitian: bool = False, out=None) -> Tensor:
    """The solution of A X = B from A's ldl_factor (sytrs)."""
    check_out_tensor("linalg_ldl_solve", out)
    for value in (LD, pivots, B):
        check_tensor(value, "torch.linalg.ldl_solve")
    if B.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_solve: Expected B to have at least 2 dimensions, "
                           f"but it has {B.ndim} dimensions instead")
    result = ldl_solve_matrix(LD, pivots, B, hermitian)
    return result if out is None else with_out(result, out, "aten::linalg_ldl_solve", ())
