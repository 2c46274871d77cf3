"""Linear algebra: the `matmul` primitive and the products written from it.

This package holds the ops layer's linear algebra: this module's matmul; the products and
norms torch's top level writes from it (products.py, contractions.py, einsum.py,
grouped_products.py, vector_norm.py); and torch.linalg (namespace.py gathers it as
`autojit.linalg` from common.py, solvers.py, decompositions.py, determinants.py, eig.py, lu.py,
lapack.py, lowrank.py, norms.py, linalg_products.py and extras.py). Like every op family it
sits on the registry (ops/registry.py); autograd, tracing and codegen (BLAS, LAPACK externs)
take it from there.

`matmul` is the one primitive here: operands of two or more dims, with the batch dims
broadcast, run by np.matmul eagerly and lowered to an extern (BLAS) call. The torch functions
matmul (with its 1-D cases), mm, bmm, dot and outer are composites that add and remove unit
dims around it, so they share its VJP and kernel. Tensor's `@` maps to `matmul`
(tensor_methods.py).
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .. import batching
from ..autocast import LOWER, PROMOTE, autocast_op
from ..complex_rules import conj
from ..dtype_rules import rule_first
from ..layout import reshape, transpose
from ..limited_rules import refuse_limited
from ..registry import Extern, bind, define_op
from ..shape_rules import broadcast_shapes


def _matmul_rule(x_shape, y_shape):
    if len(x_shape) < 2 or len(y_shape) < 2:
        raise ValueError(f"matmul expects operands of at least 2 dims, got {list(x_shape)} and "
                         f"{list(y_shape)}")
    if x_shape[-1] != y_shape[-2]:
        raise ValueError(f"mat1 and mat2 shapes cannot be multiplied ({x_shape[-2]}x"
                         f"{x_shape[-1]} and {y_shape[-2]}x{y_shape[-1]})")
    batch = broadcast_shapes(x_shape[:-2], y_shape[:-2])
    return batch + (x_shape[-2], y_shape[-1])


def _matmul_vjp(ctx, g):
    # Gradients come out in the broadcast batch shape; the engine's conform sums them back.
    # Complex operands: g Y^H and X^H g (conj is nothing on real ones).
    x, y = ctx.inputs
    need_x, need_y = ctx.needs_input_grad
    return (bind(MATMUL, (g, conj(transpose(y, -2, -1))), {}) if need_x else None,
            bind(MATMUL, (conj(transpose(x, -2, -1)), g), {}) if need_y else None)


def _matmul_jvp(inputs, tangents, out, attrs):
    # d(XY) = dX Y + X dY, each term only where its tangent is not zero.
    x, y = inputs
    tangent_x, tangent_y = tangents
    pushed = None if tangent_x is None else bind(MATMUL, (tangent_x, y), {})
    if tangent_y is not None:
        term = bind(MATMUL, (x, tangent_y), {})
        pushed = term if pushed is None else pushed + term
    return pushed


MATMUL = define_op(name="matmul", arity=2, shape=_matmul_rule, dtype=rule_first,
                   impl=np.matmul, vjp=_matmul_vjp, jvp=_matmul_jvp, saves=((1, 0), (0, 1)),
                   lowering=Extern("batched_gemm", ("left", "right")), grad_name="MmBackward0",
                   batch=batching.matmul_rule, static_vjp=True, complex=True,
                   kernel="addmm_impl_cpu_")


def _check_operands(x, y, name: str) -> None:
    for operand in (x, y):
        if not isinstance(operand, Tensor):
            raise TypeError(f"{name}(): argument must be Tensor, not {type(operand).__name__}")


def _dtype_error(x: Tensor, y: Tensor, kernel: str) -> RuntimeError:
    """torch's message for operands of two dtypes, in the words of the kernel it runs: a matrix
    product ("mm"), a batched one ("bmm"), a dot product ("dot") or a matrix-vector product
    ("mv", where torch names the vector's dtype, the matrix's and the vector's again)."""
    if kernel == "mm":
        return RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                            f"{dtypes.c_type_name(x.dtype)} != {dtypes.c_type_name(y.dtype)}")
    first, second = dtypes.scalar_type_name(x.dtype), dtypes.scalar_type_name(y.dtype)
    if kernel == "bmm":
        return RuntimeError(f"expected scalar type {first} but found {second}")
    if kernel == "dot":
        return RuntimeError(f"dot : expected both vectors to have same dtype, but found {first} "
                            f"and {second}")
    return RuntimeError(f"addmv input tensors must have the same dtype, but got {second}, "
                        f"{first}, and {second}")


def _matmul2(x: Tensor, y: Tensor) -> Tensor:
    """The primitive, with torch's error for mismatched inner dims."""
    try:
        _matmul_rule(tuple(x.shape), tuple(y.shape))
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    return bind(MATMUL, (x, y), {})


# sparse/coo.py's product, for an operand that is a sparse tensor (installed when that module
# is imported, with the first sparse tensor's class).
SPARSE_PRODUCT = None


def _sparse(x, y) -> bool:
    return SPARSE_PRODUCT is not None and (x.__class__ in SPARSE_PRODUCT[0] or
                                           y.__class__ in SPARSE_PRODUCT[0])


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def matmul(x: Tensor, y: Tensor) -> Tensor:
    """Matrix product with torch.matmul's rules: dot, matrix-vector, vector-matrix, matrix
    and batched (broadcast) products."""
    if x.__class__ is not Tensor and _sparse(x, y) or y.__class__ is not Tensor and \
            _sparse(x, y):
        return SPARSE_PRODUCT[1](x, y)
    _check_operands(x, y, "matmul")
    x_ndim, y_ndim = x.ndim, y.ndim
    if x_ndim == 0 or y_ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{x_ndim}D and {y_ndim}D")
    if x.dtype is not y.dtype:  # torch's message is its kernel's for these ranks
        raise _dtype_error(x, y, "dot" if x_ndim == 1 and y_ndim == 1 else
                           "mv" if y_ndim == 1 else "mm" if y_ndim == 2 else "bmm")
    # torch's kernel for these ranks, as its error for uint64 names it
    refuse_limited("dot" if x_ndim == 1 and y_ndim == 1 else "addmv_impl_cpu"
                   if y_ndim == 1 and x_ndim == 2 else "addmm_impl_cpu_"
                   if y_ndim == 2 or (y_ndim == 1 and x_ndim == 1) else "bmm", x)
    if x_ndim == 1 and y_ndim == 1:
        return dot(x, y)
    if x_ndim == 1:
        # A row vector; the inserted dim is removed from the result.
        out = _matmul2(reshape(x, 1, x.shape[0]), y)
        return reshape(out, tuple(out.shape[:-2]) + (out.shape[-1],))
    if y_ndim == 1:
        if x_ndim == 2 and x.shape[1] != y.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({x.shape[0]}), mat "
                               f"({x.shape[0]}x{x.shape[1]}), vec ({y.shape[0]})")
        out = _matmul2(x, reshape(y, y.shape[0], 1))
        return reshape(out, tuple(out.shape[:-1]))
    if y_ndim == 2 and x_ndim > 2:
        # As torch does, x's batch dims fold into its rows: one product (and one for y's
        # gradient) instead of a product per batch entry, and a sum over them in backward.
        batch = tuple(x.shape[:-1])
        rows = 1
        for extent in batch:
            rows *= extent
        out = _matmul2(reshape(x, rows, x.shape[-1]), y)
        return reshape(out, batch + (y.shape[-1],))
    return _matmul2(x, y)


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def mm(x: Tensor, y: Tensor) -> Tensor:
    """The product of two matrices (2-D only; one of them may be sparse)."""
    if x.__class__ is not Tensor and _sparse(x, y) or y.__class__ is not Tensor and \
            _sparse(x, y):
        return SPARSE_PRODUCT[1](x, y)
    _check_operands(x, y, "mm")
    if x.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if y.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if x.dtype is not y.dtype:
        raise _dtype_error(x, y, "mm")
    return _matmul2(x, y)


@autocast_op(cpu=LOWER, cuda=LOWER, round_once=True)
def bmm(x: Tensor, y: Tensor) -> Tensor:
    """Batched matrix product of (b, n, m) and (b, m, p) with equal batch sizes."""
    _check_operands(x, y, "bmm")
    if x.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if x.dtype is not y.dtype:
        raise _dtype_error(x, y, "bmm")
    refuse_limited("bmm", x)
    expected = [x.shape[0], x.shape[2]]
    if list(y.shape[:2]) != expected:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"{expected} but got: {list(y.shape[:2])}.")
    return _matmul2(x, y)


@autocast_op(cuda=PROMOTE)
def dot(x: Tensor, y: Tensor) -> Tensor:
    """The inner product of two 1-D tensors (a 0-d result)."""
    _check_operands(x, y, "dot")
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors")
    if x.dtype is not y.dtype:
        raise _dtype_error(x, y, "dot")
    refuse_limited("dot", x)
    if x.shape[0] != y.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src "
                           f"[{y.shape[0]}] to have the same number of elements, but got "
                           f"{x.shape[0]} and {y.shape[0]} elements respectively")
    return reshape(_matmul2(reshape(x, 1, -1), reshape(y, -1, 1)), ())


def outer(x: Tensor, y: Tensor) -> Tensor:
    """Outer product of 1-D x and y: `out[i][j] = x[i] * y[j]`."""
    for operand in (x, y):
        if not isinstance(operand, Tensor) or operand.ndim != 1:
            raise RuntimeError(f"outer: expected 1D tensors, but got "
                               f"{getattr(x, 'ndim', 0)}D and {getattr(y, 'ndim', 0)}D tensors")
    # A broadcast product promotes mixed dtypes as torch.outer does; no reduction is needed.
    return reshape(x, -1, 1) * reshape(y, 1, -1)
