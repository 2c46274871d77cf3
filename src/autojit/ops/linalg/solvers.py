"""Linear solvers of torch.linalg: inv, solve, solve_triangular and cholesky, each a primitive
run by LAPACK (NumPy, and SciPy's BLAS for triangular solves), with torch's errors and VJPs.

The VJPs are written in these same ops (inv's gradient is -A^-H g A^-H, solve's is two
solves; for real matrices the conjugate transposes are transposes), so second derivatives
come from differentiating them again; so are the JVPs (inv's tangent is -A^-1 dA A^-1,
solve's one more solve, cholesky's L Phi(L^-1 dA L^-H)). Compiled
plans run these primitives through their NumPy impls (their lowerings are `Extern` routines no
code generator implements, docs/notes/op-facts.md); on CUDA tensors they run on the host.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor.tensor import Tensor
from .. import batching
from ..autocast import FP32, autocast_op
from ..dtype_rules import rule_first
from ..layout import reshape
from ..registry import Extern, bind, define_op
from ..shape_rules import broadcast_shapes
from . import matmul
from .common import (
    batch_prefix,
    check_floating,
    check_square_floating,
    check_tensor,
    first_lapack_failure,
    linalg_failure,
    mH,
    triangle,
    with_out,
)


def square_rule(shape):
    """The shape of a result that is one square matrix per input matrix (inv, cholesky)."""
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"expected batches of square matrices, got shape {list(shape)}")
    return tuple(shape)


# ---- inv ---------------------------------------------------------------------------------------

def _inv_impl(a):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        index, info = first_lapack_failure(a, "getrf")
        raise linalg_failure(
            f"linalg.inv: {batch_prefix(a.shape, index or 0)}The diagonal element {info} is "
            "zero, the inversion could not be completed because the input matrix is "
            "singular.") from None


def _inv_vjp(ctx, g):
    inverse_t = mH(ctx.out)
    return (-matmul(matmul(inverse_t, g), inverse_t),)


def _inv_jvp(inputs, tangents, out, attrs):
    (tangent,) = tangents
    return None if tangent is None else -matmul(matmul(out, tangent), out)


INV = define_op(name="linalg_inv", arity=1, shape=square_rule, dtype=rule_first,
                impl=_inv_impl, vjp=_inv_vjp, jvp=_inv_jvp, saves=("out",),
                lowering=Extern("matrix_inverse", ("data",)), grad_name="LinalgInvExBackward0",
                batch=batching.leading_batch_rule, complex=True)


@autocast_op(cpu=FP32)
def inv(A: Tensor, *, out=None) -> Tensor:
    """The inverse of a square matrix (or of each in a batch); a singular one raises
    LinAlgError."""
    check_square_floating(A, "linalg.inv")
    return with_out(bind(INV, (A,), {}), out, "linalg_inv_ex", (A,))


@autocast_op(cpu=FP32)
def inverse(input: Tensor, *, out=None) -> Tensor:  # noqa: A002 - torch's name
    """The inverse of a square matrix (torch.inverse, an alias of linalg.inv)."""
    return inv(input, out=out)


# ---- solve -----------------------------------------------------------------------------------

def _solve_rule(a_shape, b_shape):
    if a_shape[-1] != b_shape[-2]:
        raise ValueError(f"A of shape {list(a_shape)} and B of shape {list(b_shape)} do not "
                         "fit AX = B")
    return broadcast_shapes(a_shape[:-2], b_shape[:-2]) + (a_shape[-2], b_shape[-1])


def _solve_impl(a, b):
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        index, _ = first_lapack_failure(np.broadcast_to(a, batch + a.shape[-2:]), "getrf")
        prefix = batch_prefix(batch + a.shape[-2:], index or 0)
        raise linalg_failure(f"torch.linalg.solve: {prefix}The solver failed because the input "
                             "matrix is singular.") from None


def _solve_vjp(ctx, g):
    a, _ = ctx.inputs
    gradient_b = bind(SOLVE, (mH(a), g), {})
    need_a, need_b = ctx.needs_input_grad
    return (-matmul(gradient_b, mH(ctx.out)) if need_a else None,
            gradient_b if need_b else None)


def _solve_jvp(inputs, tangents, out, attrs):
    # A X = B, so A dX = dB - dA X: one more solve with the same A.
    a, _ = inputs
    tangent_a, tangent_b = tangents
    right = None if tangent_a is None else -matmul(tangent_a, out)
    if tangent_b is not None:
        right = tangent_b if right is None else right + tangent_b
    return None if right is None else bind(SOLVE, (a, right), {})


SOLVE = define_op(name="linalg_solve", arity=2, shape=_solve_rule, dtype=rule_first,
                  impl=_solve_impl, vjp=_solve_vjp, jvp=_solve_jvp, saves=(0, "out"),
                  lowering=Extern("linear_solve", ("left", "right")),
                  grad_name="LinalgSolveExBackward0", batch=batching.linear_solve_rule,
                  complex=True)


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    """torch's rule: B is a batch of vectors when it is 1-D, or when it has one dim less than
    A and the shape of A without its last dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _check_solve(A, B, name: str) -> None:
    check_tensor(A, name)
    check_tensor(B, name)
    check_floating(A, name)
    check_square_floating(A, name)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of "
                           f"type {_torch_type(A)} and B of type {_torch_type(B)} instead")


def _torch_type(x: Tensor) -> str:
    from .common import SCALAR_TYPE

    return SCALAR_TYPE[x.dtype.name]


@autocast_op(cpu=FP32)
def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """The solution X of AX = B (XA = B with left=False) for square A, with batch dims
    broadcast; B may be a vector (or a batch of them)."""
    _check_solve(A, B, "linalg.solve")
    # A vector right-hand side is a column (with left=False it cannot fit, as in torch).
    vector = _is_vector_rhs(A, B)
    B_matrix = reshape(B, tuple(B.shape) + (1,)) if vector else B
    rows = B_matrix.shape[-2] if left else B_matrix.shape[-1]
    if A.shape[-1] != rows:
        shape = (B_matrix.shape[-2], B_matrix.shape[-1])
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{equation} ({A.shape[-2]}x{A.shape[-1]} and {shape[0]}x{shape[1]})")
    if left:
        result = bind(SOLVE, (A, B_matrix), {})
    else:
        # X A = B as A^H X^H = B^H, torch's way: the result has the conjugate bit.
        result = mH(bind(SOLVE, (mH(A), mH(B_matrix)), {}))
    if vector:
        result = reshape(result, tuple(result.shape[:-1]))
    return with_out(result, out, "_linalg_solve_ex", (A, B))


# ---- solve_triangular -----------------------------------------------------------------------

def _triangular_rule(a_shape, b_shape, upper, left, unitriangular):
    inner = b_shape[-2] if left else b_shape[-1]
    if a_shape[-1] != inner:
        raise ValueError(f"A of shape {list(a_shape)} and B of shape {list(b_shape)} do not "
                         "fit the triangular system")
    return broadcast_shapes(a_shape[:-2], b_shape[:-2]) + tuple(b_shape[-2:])


def _triangular_impl(a, b, upper, left, unitriangular):
    # BLAS trsm, matrix by matrix: like torch (and unlike LAPACK's trtrs) it does not check the
    # diagonal, so a zero on it gives infinities instead of an error.
    from scipy.linalg import blas

    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    count = math.prod(batch)  # not -1: ambiguous when a matrix is empty
    a_flat = np.broadcast_to(a, batch + a.shape[-2:]).reshape((count,) + a.shape[-2:])
    b_flat = np.broadcast_to(b, batch + b.shape[-2:]).reshape((count,) + b.shape[-2:])
    result = np.empty(b_flat.shape, dtype=b.dtype)
    if result.size:
        trsm = blas.get_blas_funcs("trsm", (a_flat,))
        for index in range(a_flat.shape[0]):
            result[index] = trsm(1.0, a_flat[index], b_flat[index], side=0 if left else 1,
                                 lower=0 if upper else 1, diag=1 if unitriangular else 0)
    return result.reshape(batch + b.shape[-2:])


def _triangular_vjp(ctx, g):
    a, _ = ctx.inputs
    attrs = ctx.attrs
    upper, left, unitriangular = attrs["upper"], attrs["left"], attrs["unitriangular"]
    gradient_b = bind(SOLVE_TRIANGULAR, (mH(a), g),
                      {"upper": not upper, "left": left, "unitriangular": unitriangular})
    need_a, need_b = ctx.needs_input_grad
    gradient_a = None
    if need_a:
        x = ctx.out
        full = -matmul(gradient_b, mH(x)) if left else -matmul(mH(x), gradient_b)
        # Only A's triangle is read, so only it gets a gradient (not its unit diagonal).
        shift = 1 if unitriangular else 0
        gradient_a = triangle(full, upper, shift if upper else -shift)
    return gradient_a, gradient_b if need_b else None


def _triangular_jvp(inputs, tangents, out, attrs):
    # A dX = dB - dA X (dX A = dB - X dA with left=False), dA only where A is read.
    a, _ = inputs
    tangent_a, tangent_b = tangents
    upper, left, unitriangular = attrs["upper"], attrs["left"], attrs["unitriangular"]
    right = None
    if tangent_a is not None:
        shift = 1 if unitriangular else 0
        read = triangle(tangent_a, upper, shift if upper else -shift)
        right = -matmul(read, out) if left else -matmul(out, read)
    if tangent_b is not None:
        right = tangent_b if right is None else right + tangent_b
    return None if right is None else bind(SOLVE_TRIANGULAR, (a, right), attrs)


SOLVE_TRIANGULAR = define_op(
    name="linalg_solve_triangular", arity=2, shape=_triangular_rule, dtype=rule_first,
    impl=_triangular_impl, vjp=_triangular_vjp, jvp=_triangular_jvp, saves=(0, "out"),
    lowering=Extern("triangular_solve", ("left", "right")),
    grad_name="LinalgSolveTriangularBackward0", batch=batching.linear_solve_rule,
    complex=True)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out=None) -> Tensor:
    """The solution X of AX = B (XA = B with left=False) for triangular A: only its upper or
    lower triangle is read (and not its diagonal when unitriangular)."""
    name = "linalg.solve_triangular"
    check_tensor(A, name)
    check_tensor(B, name)
    for operand, label in ((A, "A"), (B, "B")):
        if operand.ndim < 2:
            raise RuntimeError(f"{name}: The input tensor {label} must have at least 2 "
                               "dimensions.")
    check_floating(A, name)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of "
                           f"type {_torch_type(A)} and B of type {_torch_type(B)} instead")
    check_square_floating(A, name)
    inner = B.shape[-2] if left else B.shape[-1]
    if A.shape[-1] != inner:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {equation} "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    result = bind(SOLVE_TRIANGULAR, (A, B), {"upper": bool(upper), "left": bool(left),
                                             "unitriangular": bool(unitriangular)})
    return with_out(result, out, "linalg_solve_triangular", (A, B))


# ---- cholesky ---------------------------------------------------------------------------------

def _cholesky_impl(a, upper=False):
    if upper:  # U = L^H, L the factor of the Hermitian matrix A's upper triangle gives
        return np.conj(np.swapaxes(_cholesky_impl(np.conj(np.swapaxes(a, -1, -2))), -1, -2))
    factor = None
    try:
        factor = np.linalg.cholesky(a)
        if np.isfinite(factor).all():
            return factor
    except np.linalg.LinAlgError:
        pass
    # Not positive-definite, or a NaN that NumPy's LAPACK let through (torch's check fails on
    # it): the leading minor that fails, as LAPACK's potrf counts it.
    index, order = first_lapack_failure(a, "potrf")
    if index is None and factor is not None:
        return factor
    raise linalg_failure(
        f"linalg.cholesky: {batch_prefix(a.shape, index)}The factorization could not be "
        "completed because the input is not positive-definite (the leading minor of order "
        f"{order} is not positive-definite).")


def _cholesky_vjp(ctx, g):
    # torch's formula: gA = L^-H Phi(L^H gL) L^-1, with Phi the lower triangle with half its
    # diagonal, made Hermitian but for the imaginary part of its diagonal. With upper=True it
    # is the same formula at L = U^H, gL = gU^H, not conjugate-transposed back: the two
    # differ in that imaginary part, which a Hermitian A does not read.
    factor = ctx.out
    if ctx.attrs.get("upper"):
        factor, g = mH(factor), mH(g)
    inner = triangle(matmul(mH(factor), g), upper=False)
    inner = 0.5 * (inner + mH(triangle(inner, upper=False, diagonal=-1)))
    attrs = {"upper": True, "left": True, "unitriangular": False}
    inner = bind(SOLVE_TRIANGULAR, (mH(factor), inner), attrs)
    attrs = {"upper": False, "left": False, "unitriangular": False}
    return (bind(SOLVE_TRIANGULAR, (factor, inner), attrs),)


def _cholesky_jvp(inputs, tangents, out, attrs):
    # dL = L Phi(L^-1 dA L^-H), Phi the lower triangle with half its diagonal; dA is taken
    # Hermitian, as the VJP's gradient is, so that the two are each other's adjoint.
    (tangent,) = tangents
    if tangent is None:
        return None
    factor = mH(out) if attrs.get("upper") else out
    symmetric = 0.5 * (tangent + mH(tangent))
    inner = bind(SOLVE_TRIANGULAR, (factor, symmetric),
                 {"upper": False, "left": True, "unitriangular": False})
    inner = bind(SOLVE_TRIANGULAR, (mH(factor), inner),
                 {"upper": True, "left": False, "unitriangular": False})
    phi = 0.5 * (triangle(inner, upper=False) + triangle(inner, upper=False, diagonal=-1))
    tangent_factor = matmul(factor, phi)
    return mH(tangent_factor) if attrs.get("upper") else tangent_factor


CHOLESKY = define_op(name="linalg_cholesky", arity=1, shape=lambda shape, upper=False:
                     square_rule(shape), dtype=rule_first,
                     impl=_cholesky_impl, vjp=_cholesky_vjp, jvp=_cholesky_jvp, saves=("out",),
                     lowering=Extern("cholesky", ("data",)),
                     grad_name="LinalgCholeskyExBackward0", batch=batching.leading_batch_rule,
                     complex=True)


@autocast_op(cpu=FP32)
def cholesky(A: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """The Cholesky factor L of a symmetric positive-definite A = L L^T, read from A's lower
    triangle (with upper=True, U = L^T from A's upper triangle); raises LinAlgError when A is
    not positive-definite."""
    check_square_floating(A, "linalg.cholesky")
    result = bind(CHOLESKY, (A,), {"upper": True} if upper else {})
    return with_out(result, out, "linalg_cholesky_ex", (A,))


_CHOLESKY_DEPRECATION = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
    "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for "
    "all valid (symmetric positive definite) inputs.")


@autocast_op(cpu=FP32)
def cholesky_top_level(input: Tensor, upper: bool = False, *, out=None) -> Tensor:  # noqa: A002
    """The Cholesky factor of a symmetric positive-definite matrix (the deprecated
    torch.cholesky: linalg.cholesky with its own error prefix)."""
    import warnings

    warnings.warn(_CHOLESKY_DEPRECATION, UserWarning, stacklevel=2)
    try:
        return cholesky(input, upper=upper, out=out)
    except RuntimeError as error:
        message = str(error)
        if message.startswith("linalg.cholesky: "):
            raise type(error)("cholesky: " + message[len("linalg.cholesky: "):]) from None
        raise


cholesky_top_level.__name__ = cholesky_top_level.__qualname__ = "cholesky"
