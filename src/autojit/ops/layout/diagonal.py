"""Diagonals: the `diagonal` view and its adjoint `embed_diagonal`; diag, diag_embed, diagflat,
trace written from them.

`diagonal(x, offset, dim1, dim2)` is a view, as torch's: its elements are x's, at the stride
of dim1 plus the stride of dim2, so a write through it is seen in x (the impl returns a
writable strided NumPy view; NumPy's own np.diagonal is read-only). Kernels read it through
strides where the offset is 0 (Layout.fold). Its VJP writes the gradient on the diagonal of
zeros (`embed_diagonal`), whose VJP reads the diagonal again, as slice and embed_slice are
each other's adjoint; both are linear, their JVPs the ops themselves on the tangent.
Everything else here is a composite of those two.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor, normalize_dim
from .. import batching
from .. import elementwise as ew
from ..autocast import FP32, autocast_op
from ..dtype_rules import rule_first
from ..inplace import write_out
from ..limited_rules import refuse_limited
from ..reduction import sum_
from ..registry import Layout, bind, define_op, linear_jvp
from .primitives import reshape


def diagonal_length(shape, offset: int, dim1: int, dim2: int) -> int:
    """The number of entries on the diagonal `offset` of dims dim1 and dim2 of `shape`."""
    rows, columns = shape[dim1], shape[dim2]
    if offset >= 0:
        return max(0, min(rows, columns - offset))
    return max(0, min(rows + offset, columns))


def _diagonal_shape(shape, offset, dim1, dim2):
    rest = tuple(extent for axis, extent in enumerate(shape) if axis not in (dim1, dim2))
    return rest + (diagonal_length(shape, offset, dim1, dim2),)


def writable_diagonal(x: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """np.diagonal(x, offset, dim1, dim2) as a view that can be written when x can."""
    view = np.diagonal(x, offset, dim1, dim2)
    start = [slice(None)] * x.ndim
    if offset >= 0:
        start[dim2] = slice(min(offset, x.shape[dim2]), None)
    else:
        start[dim1] = slice(min(-offset, x.shape[dim1]), None)
    return np.lib.stride_tricks.as_strided(x[tuple(start)], view.shape, view.strides,
                                           writeable=x.flags.writeable)


def _fold_diagonal(shape, strides, output_shape, attrs):
    # The main diagonal starts at the first element, so strides say it all; another starts
    # further in, which strides cannot express.
    if attrs["offset"] != 0:
        return None
    dim1, dim2 = attrs["dim1"], attrs["dim2"]
    rest = tuple(stride for axis, stride in enumerate(strides) if axis not in (dim1, dim2))
    return rest + (strides[dim1] + strides[dim2],)


def _embed_impl(g, full_shape, offset, dim1, dim2):
    out = np.zeros(full_shape, dtype=g.dtype)
    writable_diagonal(out, offset, dim1, dim2)[...] = g
    return out


DIAGONAL = define_op(
    name="diagonal", arity=1, shape=_diagonal_shape, dtype=rule_first, impl=writable_diagonal,
    vjp=lambda ctx, g: (embed_diagonal(g, ctx.input_meta[0][0], ctx.attrs["offset"],
                                       ctx.attrs["dim1"], ctx.attrs["dim2"]),),
    saves=(), lowering=Layout("diagonal", _fold_diagonal), view=True,
    jvp=lambda inputs, tangents, out, attrs: linear_jvp(DIAGONAL, tangents, attrs),
    batch=batching.dim_rule("dim1", "dim2"))
EMBED_DIAGONAL = define_op(
    name="embed_diagonal", arity=1,
    shape=lambda shape, full_shape, offset, dim1, dim2: tuple(full_shape), dtype=rule_first,
    impl=_embed_impl,
    vjp=lambda ctx, g: (bind(DIAGONAL, (g,), {key: ctx.attrs[key] for key in (
        "offset", "dim1", "dim2")}),), saves=(), lowering=Layout("pad"),
    jvp=lambda inputs, tangents, out, attrs: linear_jvp(EMBED_DIAGONAL, tangents, attrs),
    batch=batching.shape_rule("full_shape", "dim1", "dim2"))


def embed_diagonal(g: Tensor, shape, offset: int, dim1: int, dim2: int) -> Tensor:
    """Zeros of `shape` with g on the diagonal `offset` of dims dim1 and dim2: the adjoint of
    `diagonal`."""
    return bind(EMBED_DIAGONAL, (g,), {"full_shape": tuple(shape), "offset": int(offset),
                                       "dim1": dim1, "dim2": dim2})


def _diagonal_dims(ndim: int, dim1: int, dim2: int) -> tuple:
    first, second = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if first == second:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return first, second


def diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal `offset` (above the main one when positive) of dims dim1 and dim2, as a
    view with those dims removed and the diagonal appended as the last dim."""
    dim1, dim2 = _diagonal_dims(x.ndim, dim1, dim2)
    return bind(DIAGONAL, (x,), {"offset": int(offset), "dim1": dim1, "dim2": dim2})


def diag_embed(x: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Tensors whose diagonals (`offset`, over the new dims dim1 and dim2) hold the last dim
    of x; zeros elsewhere."""
    ndim = x.ndim + 1
    dim1, dim2 = _diagonal_dims(ndim, dim1, dim2)
    size = x.shape[-1] + abs(int(offset))
    rest = iter(x.shape[:-1])
    shape = tuple(size if axis in (dim1, dim2) else next(rest) for axis in range(ndim))
    return embed_diagonal(x, shape, offset, dim1, dim2)


def diag(x: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """A 1-D x as the diagonal `diagonal` of a square matrix (zeros elsewhere); of a matrix
    x, that diagonal as a new 1-D tensor."""
    result = _diag(x, diagonal)
    if out is None:
        return result
    return write_out(out, result, "diag")


def _diag(x: Tensor, diagonal: int) -> Tensor:
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim == 2:
        return ew.clone(bind(DIAGONAL, (x,), {"offset": int(diagonal), "dim1": 0, "dim2": 1}))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")


def diagflat(x: Tensor, offset: int = 0) -> Tensor:
    """The flattened x as the diagonal `offset` of a square matrix, zeros elsewhere."""
    return diag_embed(reshape(x, -1), offset)


@autocast_op(cpu=FP32)
def trace(x: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers sum in int64)."""
    refuse_limited("trace", x)
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    if x.dtype is dtypes.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return sum_(bind(DIAGONAL, (x,), {"offset": 0, "dim1": 0, "dim2": 1}))
