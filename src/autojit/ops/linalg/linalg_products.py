"""Pseudo-inverses, least squares and products of torch.linalg: pinv (a primitive), and lstsq,
matrix_power, multi_dot and cross written from existing ops.

pinv is a primitive with torch's VJP (pinv_backward, the derivative of the pseudo-inverse at
constant rank): written through its SVD it would inherit the SVD's infinite gradients at
repeated singular values, where the pseudo-inverse itself is smooth (the identity, say).

lstsq follows the semantics of LAPACK's gelsy, torch's CPU default: the minimum-norm
least-squares solution, matrices of rank below full included, the rank being the number of
singular values above rcond times the largest (rcond defaults to eps * max(m, n)). It is
computed as pinv(A, rtol=rcond) @ B, which gives gelsy's solution (up to rounding, and up to
how a singular value right at the threshold is counted: gelsy estimates the rank from its QR
factor, this from the SVD) and torch's gradients, which torch also computes through pinv.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .. import batching
from .. import elementwise as ew
from ..autocast import FP32, LOWER, autocast_op
from ..complex_rules import conj
from ..dtype_rules import rule_first
from ..layout import broadcast_to, reshape, select, stack
from ..limited_rules import refuse_limited
from ..reduction import sum_
from ..registry import Extern, bind, define_op
from ..shape_rules import broadcast_shapes
from . import matmul
from .common import (
    SCALAR_TYPE,
    LstsqResult,
    check_floating,
    check_square,
    check_tensor,
    identity_like,
    mH,
    real_part,
    with_out,
)
from .decompositions import SVDVALS
from .solvers import inv

# ---- pinv ------------------------------------------------------------------------------------


def _pinv_rule(shape, atol, rtol, hermitian):
    return tuple(shape[:-2]) + (shape[-1], shape[-2])


def _default_rtol(shape, dtype, atol, rtol) -> float:
    """torch's rule: rtol is eps * max(m, n) unless given, or 0 when only a positive atol is."""
    if rtol is not None:
        return rtol
    if atol is not None and atol > 0:
        return 0.0
    return float(np.finfo(dtype).eps) * max(shape[-2], shape[-1])


def _pinv_impl(a, atol, rtol, hermitian):
    rtol = _default_rtol(a.shape, a.dtype, atol, rtol)
    atol = 0.0 if atol is None else atol
    if 0 in a.shape[-2:]:
        return np.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    if hermitian:
        values, vectors = np.linalg.eigh(a)
        magnitudes = np.abs(values)
        tolerance = np.maximum(atol, rtol * magnitudes.max(axis=-1, keepdims=True))
        with np.errstate(divide="ignore"):
            inverses = np.where(magnitudes > tolerance, 1 / values, 0).astype(a.dtype)
        return np.matmul(vectors * inverses[..., None, :], _conjugate_transpose(vectors))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    tolerance = np.maximum(atol, rtol * s[..., :1])
    with np.errstate(divide="ignore"):
        inverses = np.where(s > tolerance, 1 / s, 0).astype(a.dtype)
    return np.matmul(_conjugate_transpose(vh) * inverses[..., None, :], _conjugate_transpose(u))


def _conjugate_transpose(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def _pinv_vjp(ctx, g):
    # The adjoint of d(A+) = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+.
    a = ctx.inputs[0]
    p = ctx.out
    p_t, g_t = mH(p), mH(g)
    first = -matmul(matmul(p_t, g), p_t)
    right = matmul(g_t, matmul(p, p_t))
    second = right - matmul(a, matmul(p, right))
    left = matmul(matmul(p_t, p), g_t)
    third = left - matmul(matmul(left, p), a)
    return (first + second + third,)


def _pinv_jvp(inputs, tangents, out, attrs):
    # d(A+) = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+.
    (a,), (tangent,) = inputs, tangents
    if tangent is None:
        return None
    p, tangent_t = out, mH(tangent)
    first = -matmul(matmul(p, tangent), p)
    left = matmul(matmul(p, mH(p)), tangent_t)
    second = left - matmul(matmul(left, a), p)
    right = matmul(tangent_t, matmul(mH(p), p))
    third = right - matmul(p, matmul(a, right))
    return first + second + third


PINV = define_op(name="linalg_pinv", arity=1, shape=_pinv_rule, dtype=rule_first,
                 impl=_pinv_impl, vjp=_pinv_vjp, jvp=_pinv_jvp, saves=(0, "out"),
                 lowering=Extern("pseudo_inverse", ("data",)), grad_name="LinalgPinvBackward0",
                 batch=batching.leading_batch_rule, complex=True)


def _tolerance(value, name: str):
    if value is None:
        return None
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise NotImplementedError(f"linalg.pinv: a {name} tensor with dimensions is not "
                                      "supported; pass a number")
        value = value.item()
    return float(value)


@autocast_op(cpu=FP32)
def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False, out=None,
         rcond=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, from the SVD (the eigendecomposition with
    hermitian=True): singular values at most max(atol, rtol * the largest) count as zero.
    `rcond` is the older name of rtol."""
    check_tensor(A, "linalg.pinv")
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype is dtypes.float16 \
            or A.ndim < 2:
        raise RuntimeError(f"linalg.pinv({SCALAR_TYPE[A.dtype.name]}{{{list(A.shape)}}}): "
                           "expected a tensor with 2 or more dimensions of float, double, "
                           "cfloat or cdouble types")
    if rcond is not None:
        if rtol is not None:
            raise TypeError("linalg.pinv(): rcond and rtol are the same argument; give one")
        rtol = rcond
    attrs = {"atol": _tolerance(atol, "atol"), "rtol": _tolerance(rtol, "rtol"),
             "hermitian": bool(hermitian)}
    return with_out(bind(PINV, (A,), attrs), out, "linalg_pinv", (A,))


@autocast_op(cpu=FP32)
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:  # noqa: A002 - torch's name
    """The pseudo-inverse (torch.pinverse): linalg.pinv with rtol=rcond."""
    return pinv(input, rtol=rcond)


# ---- lstsq -------------------------------------------------------------------------------------

LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _empty(like: Tensor, dtype) -> Tensor:
    from ...tensor.creation import empty

    return empty(0, dtype=dtype, device=like.device if like.is_cuda else None)


@autocast_op(cpu=FP32)
def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """The least-squares solution of AX = B, with the residuals, the rank and the singular
    values of A as torch's CPU drivers give them (gelsy by default: the rank, no singular
    values; gelsd and gelss: both; gels: neither). The residuals, the squared norms of
    AX - B's columns, are computed when A is tall and of full rank (not by gelsy)."""
    name = "torch.linalg.lstsq"
    check_tensor(A, name)
    check_tensor(B, name)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {SCALAR_TYPE[A.dtype.name]} and other's dtype "
                           f"{SCALAR_TYPE[B.dtype.name]}")
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype is dtypes.float16:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if not (A.ndim >= B.ndim and A.ndim - B.ndim <= 1):
        raise RuntimeError(f"{name}: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    driver = "gelsy" if driver is None else driver
    if driver not in LSTSQ_DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           "gelss)")
    vector = B.ndim == A.ndim - 1
    B_matrix = reshape(B, tuple(B.shape) + (1,)) if vector else B
    if A.shape[-2] != B_matrix.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2], A.shape[-1]
    if rcond is None:
        rcond = float(np.finfo(A.dtype.numpy).eps) * max(m, n)
    try:
        batch = broadcast_shapes(tuple(A.shape[:-2]), tuple(B_matrix.shape[:-2]))
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    A_full = broadcast_to(A, batch + (m, n))
    solution = matmul(bind(PINV, (A_full,), {"atol": None, "rtol": float(rcond),
                                              "hermitian": False}), B_matrix)
    values = bind(SVDVALS, (A_full.detach(),), {}) if m and n else None
    rank = _empty(A, dtypes.int64)
    if driver != "gels" and values is not None:
        # The singular values above rcond times the largest (the first) count.
        threshold = reshape(select(values, -1, 0), batch + (1,)) * float(rcond)
        rank = sum_((values > threshold).to(dtypes.int64), -1)
    real_dtype = A.dtype.to_real()
    residuals = _empty(A, real_dtype)
    if m > n and driver != "gelsy" and _full_rank(rank, n, driver):
        residual = matmul(A_full, solution) - B_matrix
        residuals = sum_(real_part(conj(residual) * residual), -2)
    singular_values = values if driver in ("gelsd", "gelss") and values is not None \
        else _empty(A, real_dtype)
    if vector:
        solution = reshape(solution, tuple(solution.shape[:-1]))
    return LstsqResult(solution, residuals, rank, singular_values)


def _full_rank(rank: Tensor, n, driver: str) -> bool:
    """Whether every matrix has rank n, which decides whether residuals are computed (gels
    assumes full rank)."""
    if driver == "gels":
        return True
    if rank._payload is None:
        # While tracing: decided on this call's ranks, a check on every run (a split where
        # the answer differs), as torch's shape depends on it.
        return bool((rank == n).all())
    return bool((np.asarray(rank.cpu()._payload) == n).all())


# ---- matrix_power ----------------------------------------------------------------------------

def matrix_power(A: Tensor, n: int, *, out=None) -> Tensor:
    """A multiplied by itself n times (by repeated squaring); n = 0 gives identity matrices and
    a negative n powers of the inverse."""
    check_tensor(A, "linalg.matrix_power")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    check_square(A, "linalg.matrix_power")
    n = int(n)
    kernel = "matmul"
    if n == 0:
        result = ew.fill_like(A, 0) + identity_like(A, A.shape[-1]).to(A.dtype)
    else:
        base = A
        if n < 0:
            check_floating(A, "linalg.inv")
            base, n, kernel = inv(A), -n, "linalg_inv_ex"
        result = None
        while True:
            if n & 1:
                result = base if result is None else matmul(result, base)
            n >>= 1
            if not n:
                break
            base = matmul(base, base)
    return with_out(result, out, kernel, (A,))


# ---- multi_dot -------------------------------------------------------------------------------

_LOWER_NAMES = dtypes.C_TYPE_NAMES


def _chain_order(shapes: list) -> dict:
    """The matrix-chain split table: split[i, j] is where to split tensors i..j so that the
    product costs fewest multiplications (dynamic programming, as torch's multi_dot)."""
    count = len(shapes)
    dims = [shapes[0][0]] + [shape[1] for shape in shapes]
    cost = {(i, i): 0 for i in range(count)}
    split = {}
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            best = None
            for k in range(i, j):
                candidate = cost[i, k] + cost[k + 1, j] + dims[i] * dims[k + 1] * dims[j + 1]
                if best is None or candidate < best:
                    best, split[i, j] = candidate, k
            cost[i, j] = best
    return split


def _chain_product(tensors: list, split: dict, i: int, j: int) -> Tensor:
    if i == j:
        return tensors[i]
    k = split[i, j]
    return matmul(_chain_product(tensors, split, i, k), _chain_product(tensors, split, k + 1, j))


def multi_dot(tensors, *, out=None) -> Tensor:
    """The product of a chain of matrices in the order that needs fewest multiplications; the
    first may be a row vector and the last a column vector (1-D)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for index, tensor in enumerate(tensors[1:-1], start=1):
        if tensor.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {index} must be 2D but got {tensor.ndim}D")
    for index, tensor in enumerate(tensors[1:], start=1):
        if tensor.dtype is not first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_LOWER_NAMES[first.dtype.name]} and tensor {index} "
                               f"{_LOWER_NAMES[tensor.dtype.name]}")
    matrices = list(tensors)
    if first.ndim == 1:
        matrices[0] = reshape(first, 1, -1)
    if last.ndim == 1:
        matrices[-1] = reshape(last, -1, 1)
    for index in range(len(matrices) - 1):
        left, right = matrices[index], matrices[index + 1]
        if left.shape[1] != right.shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {index} and {index + 1} with shapes "
                f"{list(tensors[index].shape)} and {list(tensors[index + 1].shape)} cannot be "
                "multiplied")
    shapes = [tuple(matrix.shape) for matrix in matrices]
    result = _chain_product(matrices, _chain_order(shapes), 0, len(matrices) - 1)
    shape = ([] if first.ndim == 1 else [result.shape[0]]) + \
        ([] if last.ndim == 1 else [result.shape[1]])
    result = reshape(result, tuple(shape))
    if out is not None:
        return with_out(result, out, "mm", tuple(tensors),
                        "multi_dot(): expected out tensor to have dtype {want} but got {got}")
    return result


# ---- cross -----------------------------------------------------------------------------------

def cross(input: Tensor, other: Tensor, *, dim: int = -1, out=None) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along `dim`, the operands (of equal dims) broadcast to
    each other."""
    refuse_limited("cross", input, other)
    check_tensor(input, "linalg.cross")
    check_tensor(other, "linalg.cross")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE[input.dtype.name]} but found "
                           f"{SCALAR_TYPE[other.dtype.name]}")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    sizes = []
    for operand in (input, other):
        axis = dim + operand.ndim if dim < 0 else dim
        if not 0 <= axis < max(operand.ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(operand.ndim, 1)}, {max(operand.ndim, 1) - 1}], but got "
                             f"{dim})")
        sizes.append(operand.shape[axis] if operand.ndim else 1)
    if sizes[0] != 3 or sizes[1] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{sizes[0]} and {sizes[1]}")
    try:
        shape = broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    a, b = broadcast_to(input, shape), broadcast_to(other, shape)
    a0, a1, a2 = (select(a, dim, i) for i in range(3))
    b0, b1, b2 = (select(b, dim, i) for i in range(3))
    result = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0],
                   dim if dim >= 0 else dim + len(shape))
    return with_out(result, out, "linalg_cross", (input, other))



# ---- vecdot ------------------------------------------------------------------------------------

@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """The dot product of vectors along `dim`, the operands broadcast to each other: x's
    conjugate times y for complex vectors, as torch's."""
    check_tensor(x, "linalg.vecdot")
    check_tensor(y, "linalg.vecdot")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {SCALAR_TYPE[x.dtype.name]} and y of type "
                           f"{SCALAR_TYPE[y.dtype.name]} instead")
    try:
        result = sum_((x.conj() if x.dtype.is_complex else x) * y, dim)
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    return with_out(result, out, "linalg_vecdot", (x, y))
