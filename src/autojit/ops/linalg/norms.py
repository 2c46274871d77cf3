"""Norms of torch.linalg: vector_norm, matrix_norm and norm, written from existing ops.

vector_norm is the p-norm of composite.norm (with torch's gradients at zero) after torch.linalg's
argument checks. matrix_norm computes each order as torch does: 'fro' as a vector 2-norm, the
1- and inf-norms as the largest (-1, -inf: smallest) absolute column or row sum, and 2, -2 and
'nuc' from the singular values (linalg.svdvals), so their gradients are torch's too.
"""

from __future__ import annotations

import math

from ...tensor import dtypes
from ...tensor.tensor import Tensor, normalize_dim
from .. import elementwise as ew
from ..autocast import FP32_SET_OPT_DTYPE, autocast_op, float32_inside
from ..composite import norm as p_norm
from ..layout import permute, reshape
from ..reduction import amax, amin, sum_
from ..registry import bind
from ..shape_rules import normalize_dims
from .common import SCALAR_TYPE, check_tensor, with_out
from .decompositions import SVDVALS


def _check_input(x: Tensor, name: str) -> None:
    if x.dtype.category < dtypes.FLOATING:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_TYPE[x.dtype.name]}")


def _convert(x: Tensor, dtype, name: str) -> Tensor:
    """x in the dtype= of a norm, with torch's checks."""
    if dtype is None:
        return x
    dtype = dtypes.to_dtype(dtype)
    if dtype.category < dtypes.FLOATING:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{SCALAR_TYPE[dtype.name]}")
    if dtypes.promote(x.dtype, dtype) is not dtype:
        raise RuntimeError(f"{name}: the dtype of the input ({SCALAR_TYPE[x.dtype.name]}) "
                           "should be convertible without narrowing to the specified dtype "
                           f"({SCALAR_TYPE[dtype.name]})")
    return x.to(dtype)


def _format_order(ord) -> str:
    return f"{ord:g}" if isinstance(ord, float) else str(ord)


@autocast_op(cuda=FP32_SET_OPT_DTYPE)
@float32_inside()
def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None,
                out=None) -> Tensor:
    """The vector ord-norm of x over `dim` (all of x, flattened, when None): the sum of |x|^ord
    to the power 1/ord; inf and -inf give the largest and smallest |x|, 0 the count of
    nonzeros."""
    name = "linalg.vector_norm"
    check_tensor(x, name)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    _check_input(x, name)
    x = _convert(x, dtype, name)
    dims = normalize_dims(dim, x.ndim)
    if ord < 0 or ord == math.inf:
        # No identity: a reduction over an empty dim has no value.
        if dim is None and x.numel() == 0:
            raise RuntimeError(f"{name} cannot compute the {_format_order(ord)} norm on an "
                               "empty tensor because the operation does not have an identity")
        for axis in dims:
            if x.shape[axis] == 0:
                raise RuntimeError(f"{name} cannot compute the {_format_order(ord)} norm on the "
                                   f"dimension {axis}because this dimension is empty and the "
                                   "operation does not have an identity")
    if math.isnan(ord):
        result = sum_(ew.abs(x), dims, keepdim) * math.nan
    else:
        result = p_norm(x, ord, dims, keepdim)
    return with_out(result, out, "linalg_vector_norm", (x,))


MATRIX_ORDERS = ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf)


def _matrix_dims(A: Tensor, dim, name: str) -> tuple:
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        shown = " ".join(str(d) for d in dim) if isinstance(dim, (tuple, list)) else dim
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {shown}")
    first, second = (normalize_dim(int(d), A.ndim) for d in dim)
    if first == second:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return first, second


def _spectral(A: Tensor, rows: int, columns: int, reduce) -> Tensor:
    """reduce(singular values) of the matrices in dims (rows, columns) of A, without keepdim."""
    others = [axis for axis in range(A.ndim) if axis not in (rows, columns)]
    values = bind(SVDVALS, (permute(A, *others, rows, columns),), {})
    return reduce(values)


@autocast_op(cuda=FP32_SET_OPT_DTYPE)
def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None,
                out=None) -> Tensor:
    """The matrix ord-norm over the two dims `dim`: 'fro' (Frobenius), 'nuc' (nuclear), 2 and
    -2 (largest and smallest singular value), 1 and -1 (largest and smallest absolute column
    sum), inf and -inf (the same of the rows)."""
    name = "linalg.matrix_norm"
    check_tensor(A, name)
    if ord not in MATRIX_ORDERS or isinstance(ord, bool):
        raise RuntimeError(f"{name}: Order {ord} not supported.")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    _check_input(A, name)
    A = _convert(A, dtype, name)
    rows, columns = _matrix_dims(A, dim, name)
    if ord == "fro":
        result = p_norm(A, 2, (rows, columns), keepdim)
    elif A.numel() == 0:
        result = sum_(A, (rows, columns), keepdim)  # torch gives 0 for every order
    elif ord in ("nuc", 2, -2):
        reduce = {"nuc": lambda s: sum_(s, -1), 2: lambda s: amax(s, -1),
                  -2: lambda s: amin(s, -1)}[ord]
        result = _spectral(A, rows, columns, reduce)
        if keepdim:
            for axis in sorted((rows, columns)):
                result = reshape(result, tuple(result.shape[:axis]) + (1,) +
                                 tuple(result.shape[axis:]))
    else:
        # 1: the largest absolute column sum (summed over the rows); inf: over the columns.
        summed, extreme_dim = (rows, columns) if ord in (1, -1) else (columns, rows)
        sums = sum_(ew.abs(A), summed, keepdim=True)
        extreme = amax if ord in (1, math.inf) else amin
        result = extreme(sums, extreme_dim, keepdim=True)
        if not keepdim:
            result = reshape(result, tuple(extent for axis, extent in enumerate(result.shape)
                                           if axis not in (rows, columns)))
    if out is None:
        return result
    from .common import write_out

    return write_out(out, result.detach(), "linalg.matrix_norm expected out tensor dtype {Want} "
                     "but got: {Got}")


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, out=None,
         dtype=None) -> Tensor:
    """A vector or matrix norm: a matrix norm when `ord` is a string or `dim` has two dims (or
    A is 2-D and ord is given without dim), else a vector norm (over all of A when neither ord
    nor dim is given)."""
    name = "linalg.norm"
    check_tensor(A, name)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"{name}: If dim is specified, it must be of length 1 or 2. Got "
                               f"{list(dims)}")
        matrix = len(dims) == 2
    else:
        dims = None
        if ord is not None and not isinstance(ord, str) and A.ndim not in (1, 2):
            raise RuntimeError(f"{name}: If dim is not specified but ord is, the input must be "
                               f"1D or 2D. Got {A.ndim}D.")
        matrix = isinstance(ord, str) or (ord is not None and A.ndim == 2)
    if matrix:
        result = matrix_norm(A, "fro" if ord is None else ord,
                             (-2, -1) if dims is None else dims, keepdim, dtype=dtype)
    else:
        result = vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if out is None:
        return result
    from .common import write_out

    return write_out(out, result.detach(), "linalg.norm expected out tensor dtype {Want} but "
                     "got: {Got}")
