"""Indexing primitives: index and index_put, gather/scatter_add, index_select, flip, nonzero,
masked_fill, max/min with indices.

This package holds the indexing family: this module's primitives, the index checks of eager
and compiled code (checks.py), x[key] (subscript.py), the writes at index positions
(update.py), scatter (scatter.py, scatter_views.py), masks (masked.py) and the eager row
accumulation (row_accumulation.py). It sits on the registry (ops/registry.py).

Four primitives, each the other's adjoint in pairs:
  index      x[i_1, ..., i_k] on given dims (advanced indexing)   VJP: accumulating index_put
  index_put  x with values written (or added) at those positions  VJP: index
  gather     x picked along one dim by an index of x's rank       VJP: scatter_add into zeros
  scatter_add  src added into x along one dim                      VJP: gather
All four are linear in their float inputs, so each JVP is the op itself on the tangents.
Advanced indices travel as one stacked int tensor of shape (k, *broadcast shape), so each
primitive has a fixed arity. x[key] and x[key] = value (subscript.py) do the basic part of a
key with the layout primitives and hand tensor and list indices to `index` and `index_put`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...tensor import dtypes
from ...tensor.state import SPECIAL, state
from ...tensor.tensor import Tensor, normalize_dim, plain_tensor
from .. import api, batching, registry
from .. import elementwise as ew
from ..dtype_rules import rule_first
from ..elementwise.math_primitives import no_matching_form
from ..inplace import write_out
from ..layout import embed_slice, expand, reshape, squeeze, unsqueeze
from ..layout import flip as flip  # the layout primitive's function, read from here too
from ..limited_rules import (
    ALL_LIMITED,
    COMPLEX32,
    FLOAT8,
    UNSIGNED,
    not_implemented,
    refuse_limited,
)
from ..reduction import extreme, index_of_extreme
from ..registry import Extern, bind, define_op
from ..shape_rules import broadcast_shapes
from .checks import check_index
from .row_accumulation import add_rows
from .static_nonzero import _nonzero_static

_INDEX_DTYPES = (dtypes.int64, dtypes.int32)
_least, _most = np.minimum.reduce, np.maximum.reduce


def _zeros(shape, like: Tensor) -> Tensor:
    """Zeros of `shape` with like's dtype, on like's device."""
    if like._payload.__class__ is np.ndarray and state.dispatch != SPECIAL:
        # On the CPU with nothing tracing and no inference mode, the zeros themselves:
        # creation.zeros' device, dtype and size checks took twice as long as np.zeros at an
        # embedding gradient's sizes, once per lookup of an eager loop.
        return plain_tensor(np.zeros(shape, like._dtype.numpy), like._dtype)
    return _creation().zeros(tuple(shape), dtype=like.dtype, device=like.device)


def _creation():
    """tensor/creation.py, imported on first use (an import statement in every call of an
    index's VJP cost as much as the zeros)."""
    global _CREATION
    if _CREATION is None:
        from ...tensor import creation as _CREATION
    return _CREATION


_CREATION = None


def _as_index_tensor(value) -> Tensor:
    from ...tensor.creation import as_tensor

    if isinstance(value, Tensor):
        return value
    if isinstance(value, (list, tuple, range)) and _no_numbers(value):
        return as_tensor(value, dtype=dtypes.int64)  # x[[]]: no positions, as torch reads it
    return as_tensor(value)


def _no_numbers(value) -> bool:
    return all(isinstance(item, (list, tuple, range)) and _no_numbers(item) for item in value)


# ---- index / index_put ------------------------------------------------------------------------
# `dims` are the (increasing) dims of x that the k stacked index rows address. As in NumPy, the
# broadcast index dims replace the indexed dims in place when those are adjacent and go first
# otherwise.

def _key(ndim: int, indices: np.ndarray, dims: tuple) -> tuple:
    key = [slice(None)] * ndim
    for row, dim in enumerate(dims):
        key[dim] = indices[row]
    return tuple(key)


def _indexed_shape(shape, index_shape, dims) -> tuple:
    if len(index_shape) < 1 or index_shape[0] != len(dims):
        raise ValueError(f"expected {len(dims)} stacked index rows, got shape {list(index_shape)}")
    if dims and dims[-1] >= len(shape):
        raise ValueError(f"too many indices for tensor of dimension {len(shape)}")
    broadcast = tuple(index_shape[1:])
    rest = [extent for axis, extent in enumerate(shape) if axis not in dims]
    adjacent = list(dims) == list(range(dims[0], dims[0] + len(dims)))
    at = dims[0] if adjacent else 0
    return tuple(rest[:at]) + broadcast + tuple(rest[at:])


def _gathered(x: np.ndarray, indices: np.ndarray, dims: tuple) -> np.ndarray:
    """x indexed by the stacked rows, C-contiguous (NumPy's fancy indexing may give other
    strides, x[:, rows] a transposed layout, where torch's result of a contiguous x is
    contiguous, which code viewing it relies on)."""
    result = x[_key(x.ndim, indices, dims)]
    # (np.ascontiguousarray would make a 0-d result 1-d)
    return result if result.flags.c_contiguous else np.ascontiguousarray(result)


def _torch_indices(ctx, saved, raw: bool) -> tuple:
    """torch's `indices` of an index node: per dim up to the last one indexed, its index
    tensor, None for a dim taken whole (`x[:, i]` gives (None, i))."""
    dims, rows = ctx.attrs["dims"], saved(1)
    return tuple(saved(None) if dim not in dims else rows if raw else rows[dims.index(dim)]
                 for dim in range(dims[-1] + 1))


INDEX = define_op(
    name="index", arity=2, shape=lambda shape, index_shape, dims: _indexed_shape(
        shape, index_shape, dims),
    dtype=rule_first, impl=lambda x, indices, dims: _gathered(x, indices, dims),
    vjp=lambda ctx, g: (index_put(_zeros(ctx.input_meta[0][0], g), g, ctx.inputs[1],
                                  ctx.attrs["dims"], accumulate=True), None),
    jvp=lambda inputs, tangents, out, attrs: (
        None if tangents[0] is None else bind(INDEX, (tangents[0], inputs[1]), attrs)),
    saves=(1,), lowering=Extern("indexed_gather", ("data", "host_index")),
    batch=batching.index_rule, complex=True, limited=ALL_LIMITED,
    saved_names={"indices": _torch_indices,
                 "self_sym_sizes": lambda ctx, saved, raw: tuple(ctx.input_meta[0][0])})


def _index_put_rule(shape, values_shape, index_shape, dims, accumulate):
    target = _indexed_shape(shape, index_shape, dims)
    try:
        if broadcast_shapes(values_shape, target) != target:
            raise ValueError
    except ValueError:
        raise ValueError(f"shape mismatch: value tensor of shape {list(values_shape)} cannot be "
                         f"broadcast to indexing result of shape {list(target)}") from None
    return tuple(shape)


def _index_put_impl(x, values, indices, dims, accumulate):
    out = x.copy()
    if accumulate and dims == (0,) and x.ndim > 1:
        return _add_rows_at(out, np.asarray(values), indices[0])
    key = _key(x.ndim, indices, dims)
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values
    return out


def _add_rows_at(out, values, index):
    """np.add.at(out, index, values) for an index into out's first dim, in rounds where that
    pays (row_accumulation.py)."""
    if values.dtype != out.dtype or index.dtype.kind not in "iu":
        np.add.at(out, index, values)
        return out
    rows = index.reshape(-1)
    if rows.size and _least(rows) < 0:  # (the ufunc's reduction: min()'s wrapper costs more)
        rows = np.where(rows < 0, rows + out.shape[0], rows)
        if _least(rows) < 0:  # out of range: np.add.at raises NumPy's IndexError
            np.add.at(out, index, values)
            return out
    shape = index.shape + out.shape[1:]
    if values.shape != shape:  # (np.broadcast_to's checks cost more than a small add)
        values = np.broadcast_to(values, shape)
    return add_rows(out, rows, values.reshape((rows.size,) + out.shape[1:]))


def _index_put_vjp(ctx, g):
    indices = ctx.inputs[2]
    dims, accumulate = ctx.attrs["dims"], ctx.attrs["accumulate"]
    need_x, need_values = ctx.needs_input_grad[:2]
    # Overwritten positions do not see the old value, so its gradient is zero there.
    grad_x = (g if accumulate else index_put(g, 0, indices, dims)) if need_x else None
    grad_values = index_tensor(g, indices, dims) if need_values else None
    return grad_x, grad_values, None


def _index_put_jvp(inputs, tangents, out, attrs):
    x, _, indices = inputs
    tangent_x, tangent_values, _ = tangents
    if tangent_values is None:
        if tangent_x is None:
            return None
        # Written positions hold values that do not move; added ones keep x's tangent.
        return tangent_x if attrs["accumulate"] else bind(INDEX_PUT, (tangent_x, 0, indices),
                                                          attrs)
    if tangent_x is None:
        tangent_x = _zeros(x.shape, tangent_values)
    return bind(INDEX_PUT, (tangent_x, tangent_values, indices), attrs)


def _index_put_dtype(inputs, attrs):
    """x's dtype; a write (not an addition) takes uint16, uint32 and uint64 too, as torch's
    copy through basic indexing (`x[0] = 5`) does, where setitem uses this op: the public
    index_put_ and the other composites refuse them with torch's errors themselves."""
    dtype = inputs[0]._dtype
    if attrs["accumulate"] and dtype.limited and dtype is not dtypes.complex32:
        raise not_implemented("index_put", dtype)
    return None, dtype


INDEX_PUT = define_op(name="index_put", arity=3, shape=_index_put_rule, dtype=_index_put_dtype,
                      impl=_index_put_impl, vjp=_index_put_vjp, jvp=_index_put_jvp, saves=(2,),
                      lowering=Extern("indexed_scatter", ("data", "values", "host_index")),
                      batch=batching.index_put_rule, complex=True, limited=ALL_LIMITED)


def index_tensor(x: Tensor, indices: Tensor, dims) -> Tensor:
    """x[indices[0], ..., indices[k-1]] on `dims` (indices stacked: shape (k, *broadcast))."""
    return bind(INDEX, (x, indices), {"dims": tuple(dims)})


def index_put(x: Tensor, values, indices: Tensor, dims, accumulate: bool = False) -> Tensor:
    """x with `values` written (or added, with accumulate) at stacked `indices` on `dims`."""
    return bind(INDEX_PUT, (x, values, indices), {"dims": tuple(dims),
                                                  "accumulate": bool(accumulate)})


# ---- gather / scatter_add -------------------------------------------------------------------

def _along_key(index: np.ndarray, dim: int) -> tuple:
    """The NumPy key that picks, at every position of `index`, x[..., index[...], ...]."""
    key = []
    for axis, extent in enumerate(index.shape):
        if axis == dim:
            key.append(index)
        else:
            shape = [1] * index.ndim
            shape[axis] = extent
            key.append(np.arange(extent).reshape(shape))
    return tuple(key)


def _gather_rule(shape, index_shape, dim):
    # torch counts a 0-d tensor as 1-d here (ensure_nonempty_dim)
    if (len(index_shape) or 1) != (len(shape) or 1):
        raise ValueError("Index tensor must have the same number of dimensions as input tensor")
    for axis, (a, b) in enumerate(zip(index_shape, shape, strict=False)):
        if axis != dim and a > b:
            raise ValueError(f"Size does not match at dimension {axis} expected index "
                             f"{list(index_shape)} to be no larger than self {list(shape)} "
                             f"apart from dimension {dim}")
    return tuple(index_shape)


def _gather_vjp(ctx, g):
    grad = _scatter_add(_zeros(ctx.input_meta[0][0], g), ctx.attrs["dim"], ctx.inputs[1], g)
    return grad, None


GATHER = define_op(name="gather", arity=2, shape=_gather_rule, dtype=rule_first,
                   impl=lambda x, index, dim: x[_along_key(index, dim)], vjp=_gather_vjp,
                   jvp=lambda inputs, tangents, out, attrs: (
                       None if tangents[0] is None else
                       bind(GATHER, (tangents[0], inputs[1]), attrs)),
                   saves=(1,), lowering=Extern("gather_along_dim", ("data", "index")),
                   # sort's, which takes uint64 (the public gather refuses it, as torch's)
                   batch=batching.dim_rule("dim"), complex=True, limited=UNSIGNED)


def _scatter_rule(shape, index_shape, src_shape, dim):
    _gather_rule(shape, index_shape, dim)
    for axis, (a, b) in enumerate(zip(index_shape, src_shape, strict=False)):
        if a > b:
            raise ValueError(f"Size does not match at dimension {axis} expected index "
                             f"{list(index_shape)} to be no larger than src {list(src_shape)}")
    return tuple(shape)


def _scatter_impl(x, index, src, dim):
    out = x.copy()
    np.add.at(out, _along_key(index, dim), src[tuple(slice(0, n) for n in index.shape)])
    return out


def _scatter_vjp(ctx, g):
    index = ctx.inputs[1]
    dim = ctx.attrs["dim"]
    need_x, _, need_src = ctx.needs_input_grad
    grad_src = None
    if need_src:
        # Only the index-shaped corner of src is read; the rest gets a zero gradient.
        grad_src = _gather(g, dim, index)
        src_shape = ctx.input_meta[2][0]
        if tuple(grad_src.shape) != tuple(src_shape):
            grad_src = embed_slice(grad_src, src_shape, [(0, n, 1) for n in index.shape])
    return (g if need_x else None), None, grad_src


def _scatter_jvp(inputs, tangents, out, attrs):
    x, index, _ = inputs
    tangent_x, _, tangent_src = tangents
    if tangent_src is None:
        return tangent_x
    if tangent_x is None:
        tangent_x = _zeros(x.shape, tangent_src)
    return bind(SCATTER_ADD, (tangent_x, index, tangent_src), attrs)


SCATTER_ADD = define_op(name="scatter_add", arity=3, shape=_scatter_rule, dtype=rule_first,
                        impl=_scatter_impl, vjp=_scatter_vjp, jvp=_scatter_jvp, saves=(1,),
                        lowering=Extern("scatter_add_along_dim", ("data", "index", "values")),
                        batch=batching.dim_rule("dim"),
                        grad_name="ScatterAddBackward0", complex=True)


def _rule_call(rule, *args):
    """A shape rule's ValueError as torch's RuntimeError, with the same message."""
    try:
        return rule(*args)
    except ValueError as error:
        raise RuntimeError(str(error)) from None


def _gather(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """The gather primitive on an index known to be in range (a VJP's, argmax's)."""
    return bind(GATHER, (x, index), {"dim": dim})


def _scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return bind(SCATTER_ADD, (x, index, src), {"dim": dim})


def _out(result: Tensor, out, name: str, inputs: tuple = ()) -> Tensor:
    """result, or written into `out` (torch's out= argument, inplace.write_out); `inputs`: the
    tensors out may not overlap (inplace.check_no_overlap)."""
    if out is None:
        return result
    return write_out(out, result, name, inputs=inputs)


def gather(x: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out=None) -> Tensor:
    """The entries of x along `dim` at `index`: `out[i][j][k] = x[index[i][j][k]][j][k]` for
    dim 0, likewise for other dims."""
    if not isinstance(index, Tensor) or (index.dtype not in _INDEX_DTYPES and index.numel()):
        # torch checks the dtype of a non-empty index only
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    dim = normalize_dim(dim, x.ndim)
    if not index.numel():  # torch checks no shapes either: an empty result of index's shape
        nothing = reshape(x, (x.numel(),))[:0]
        return _out(reshape(nothing, tuple(index.shape)), out, "gather", (x, index))
    _rule_call(_gather_rule, tuple(x.shape), tuple(index.shape), dim)
    refuse_limited("scatter_gather_tensor_cpu", x)
    if index.dtype not in _INDEX_DTYPES:
        index = index.to(dtypes.int64)
    index = check_index(index, x.shape[dim] if x.ndim else 1, "gather", dim=dim)
    if x.ndim == 0 or index.ndim == 0:  # a 0-d x or index is read as 1-d
        flat = _gather(reshape(x, (x.numel(),)), 0, reshape(index, (index.numel(),)))
        result = reshape(flat, tuple(index.shape))
    else:
        result = _gather(x, dim, index)
    if sparse_grad:
        result = api.gather_sparse_grad(x, dim, index, result)
    return _out(result, out, "gather", (x, index))


def take_along_dim(x: Tensor, indices: Tensor, dim: int | None = None, *,
                   out=None) -> Tensor:
    """`gather` with x and `indices` broadcast against each other outside `dim`; over the
    flattened x when dim is None."""
    return _out(_take_along_dim(x, indices, dim), out, "take_along_dim")


def _take_along_dim(x: Tensor, indices: Tensor, dim: int | None) -> Tensor:
    if not isinstance(indices, Tensor) or indices.dtype is not dtypes.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{dtypes.scalar_type_name(indices.dtype)}")
    if dim is None:
        return gather(reshape(x, -1), 0, reshape(indices, -1))
    dim = normalize_dim(dim, x.ndim)
    if x.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {x.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    x_shape, index_shape = list(x.shape), list(indices.shape)
    x_shape[dim] = index_shape[dim] = 1
    common = list(_rule_call(broadcast_shapes, tuple(x_shape), tuple(index_shape)))
    x_target, index_target = list(common), list(common)
    x_target[dim], index_target[dim] = x.shape[dim], indices.shape[dim]
    # torch takes every index modulo the size (so -1 is the last entry, and so is size - 1 +
    # size); a size of 0 raises remainder's ZeroDivisionError, as in torch.
    indices = ew.remainder(indices, x.shape[dim])
    return gather(expand(x, x_target), dim, expand(indices, index_target))


def index_select(x: Tensor, dim: int, index: Tensor, *, out=None) -> Tensor:
    """The entries of x at positions `index` (1-D) along `dim`."""
    if x.ndim <= 1:  # torch's kernel for vectors; it copies the slices of a matrix, any dtype
        refuse_limited("index_select", x, taken=COMPLEX32 + FLOAT8)
    return _out(_index_select(x, dim, index), out, "index_select", (x, index))


def _index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    if not isinstance(index, Tensor) or index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if dim == 0:
        rows = _eager_rows(x, index)
        if rows is not None:
            return rows
    dim = normalize_dim(dim, x.ndim)
    extent = x.shape[dim] if x.ndim else 1
    if x.ndim > 1 and extent == 0 and index.numel():
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    # torch's CPU kernel takes another path, with another message, along dim 1.
    index = check_index(index, extent, "select_inner" if dim == 1 and x.ndim > 1 else "select")
    if x.ndim == 0:
        if index.numel() != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                               f"{index.numel()} value(s)")
        return reshape(x, ())  # torch: a 0-d x gives a 0-d result
    return index_tensor(x, unsqueeze(reshape(index, -1), 0), (dim,))


def _eager_rows(x: Tensor, index: Tensor) -> Tensor | None:
    """The rows of a matrix x at a non-empty vector `index` whose entries are in range (an
    embedding's lookup), bound as the general path binds them: INDEX of x and a (1, n) view of
    the index, which shares its version counter and is saved for the gradient. Taken where
    nothing traces, no VJP chain is recorded and no mode is SPECIAL, so the check_index node
    (there so that a traced check runs before the gather) and the reshapes around it are left
    out; None elsewhere, and where an entry is out of range (the general path raises)."""
    data, ids = x._payload, index._payload
    if data.__class__ is not np.ndarray or ids.__class__ is not np.ndarray or \
            data.ndim != 2 or ids.ndim != 1 or not ids.size or registry.STEP is not None or \
            state.dispatch == SPECIAL:
        return None
    # (the ufuncs' reductions themselves: np.min's Python wrapper costs more than a batch)
    if int(_least(ids)) < 0 or int(_most(ids)) >= data.shape[0]:
        return None
    return bind(INDEX, (x, unsqueeze(index, 0)), {"dims": (0,)})


# ---- nonzero and masks ----------------------------------------------------------------------

def nonzero(x: Tensor, *, as_tuple: bool = False):
    """Indices of the non-zero entries: an (n, ndim) int64 tensor, or one 1-D tensor per dim.

    The result's shape depends on the data, so while tracing this is a graph break.
    """
    refuse_limited("nonzero_count_cpu", x, taken=COMPLEX32)
    tracer = state.tracer
    if x._payload is None and x.ndim > 0 and tracer is not None and tracer.evaluates and \
            not x._batched:
        # While tracing: the count is a graph value, a graph break compiled as a split; later
        # ops trace with a size symbol for it, bound on each run once the graph has computed
        # it (a count of 0 or 1 is specialized on, checked on every run: tensor/shape_env.py).
        count = tracer.env.size_from_value((x != 0).sum().item(), "nonzero() (its result's "
                                           "size depends on the data)")
        positions = _nonzero_static(x, count, -1, None)
        if as_tuple:
            return tuple(positions[:, axis] for axis in range(x.ndim))
        return positions
    # A CUDA tensor's data is copied to the host: the result's size must be known there.
    data = x._host("nonzero()")
    positions = np.argwhere(data.reshape(1) if data.ndim == 0 else data).astype(np.int64)
    if as_tuple:
        results = tuple(Tensor._make(np.ascontiguousarray(positions[:, axis]), dtypes.int64)
                        for axis in range(positions.shape[1]))
        return results if not x.is_cuda else tuple(r.to(x.device) for r in results)
    # A 0-d x is searched as one element: (count, 0) positions, as torch gives.
    result = Tensor._make(np.ascontiguousarray(positions[:, :data.ndim]), dtypes.int64)
    return result if not x.is_cuda else result.to(x.device)


def masked_fill(x: Tensor, mask: Tensor, value) -> Tensor:
    """x with `value` where mask is True (mask broadcasts to x)."""
    if not isinstance(mask, Tensor) or mask.dtype is not dtypes.bool_:
        dtype = dtypes.c_type_name(mask.dtype) if isinstance(mask, Tensor) else \
            type(mask).__name__
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{dtype}")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    refuse_limited("masked_fill", x, taken=COMPLEX32)
    if not x.dtype.is_complex and _imaginary(value):
        # torch converts the value to x's scalar type, refusing to drop an imaginary part.
        c_type = _FIXED_WIDTH.get(x.dtype.name, dtypes.c_type_name(x.dtype))
        raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
    if isinstance(value, Tensor):
        value = value.to(x.dtype)
    result = ew.where(mask, value, x)
    return result if result.dtype is x.dtype else result.to(x.dtype)


# The C++ types torch's scalar conversion names, where they are not c_type_name's.
_FIXED_WIDTH = {"int64": "int64_t", "int32": "int32_t", "int16": "int16_t", "int8": "int8_t",
                "uint8": "uint8_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _imaginary(value) -> bool:
    """Whether masked_fill's value has a nonzero imaginary part (read from a complex tensor's
    data)."""
    if isinstance(value, complex):
        return value.imag != 0
    return isinstance(value, Tensor) and value.dtype.is_complex and value.imag.item() != 0


# ---- max / min with indices -------------------------------------------------------------------

max_return = namedtuple("max", ["values", "indices"])
min_return = namedtuple("min", ["values", "indices"])


def _extreme(x, dim, keepdim, other, name):
    elementwise, result_type = {"max": (ew.maximum, max_return),
                                "min": (ew.minimum, min_return)}[name]
    if isinstance(dim, Tensor):
        dim, other = None, dim
    if other is not None:
        if not isinstance(x, Tensor):  # torch.max(2, y): torch's forms all take a Tensor first
            raise no_matching_form(name, (x, other), (
                "Tensor input, *, Tensor out = None",
                "Tensor input, Tensor other, *, Tensor out = None",
                "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None"))
        return elementwise(x, other)
    # torch's kernels: max_all over all of x, max_cpu along a dim (min's alike).
    refuse_limited(f"{name}_all" if dim is None else f"{name}_cpu", x)
    if dim is None:
        if x.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        return extreme(x, name)
    dim = normalize_dim(dim, x.ndim)
    source = reshape(x, 1) if x.ndim == 0 else x
    indices = index_of_extreme(source, name, dim, keepdim=True, caller=name)
    # Only the selected entry gets the gradient (unlike amax, which shares it among ties).
    values = _gather(source, dim, indices)
    if x.ndim == 0:
        return result_type(reshape(values, ()), reshape(indices, ()))
    if not keepdim:
        values, indices = squeeze(values, dim), squeeze(indices, dim)
    return result_type(values, indices)


def max(x: Tensor, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001
    """max(x): the largest value; max(x, dim): (values, indices); max(x, other): maximum."""
    return _extreme(x, dim, keepdim, other, "max")


def min(x: Tensor, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001
    """min(x): the smallest value; min(x, dim): (values, indices); min(x, other): minimum."""
    return _extreme(x, dim, keepdim, other, "min")
