"""Writes at index positions: index_add, index_copy, index_fill, index_put, put, and take.

All composites of indexing/__init__.py's primitives: index_add/index_copy/index_fill are index_put
on one dim (accumulating for index_add), index_put and put address x's flat positions, and take
reads them with `index`. So their gradients, double backward, compiled kernels and CUDA
kernels are those of index and index_put. Each function checks its arguments as torch does,
with torch's messages (which differ from op to op), and passes its index through
`check_index` (ops/indexing/checks.py), so that compiled code raises eager's error.
"""

from __future__ import annotations

from ...tensor import dtypes
from ...tensor.dtypes import scalar_type_name
from ...tensor.tensor import Tensor, normalize_dim
from .. import elementwise as ew
from ..autocast import PROMOTE, autocast_op
from ..inplace import write_out
from ..layout import expand, expand_rule, reshape, unsqueeze
from ..limited_rules import COMPLEX32, refuse_limited
from . import _INDEX_DTYPES, index_tensor
from . import index_put as put_at
from .checks import check_index
from .scatter import _scalar_for
from .subscript import getitem


def _as_vector(index: Tensor) -> Tensor:
    return reshape(index, -1) if index.ndim != 1 else index


def _put_on_dim(x: Tensor, dim: int, index: Tensor, values, accumulate: bool) -> Tensor:
    """x with `values` written (added) at the checked 1-D `index` along `dim`."""
    if x.ndim == 0:
        if isinstance(values, Tensor):
            values = reshape(values, -1)
        return reshape(put_at(reshape(x, 1), values, unsqueeze(index, 0), (0,), accumulate),
                       ())
    if isinstance(values, Tensor) and values.ndim == 0:
        values = reshape(values, (1,) * x.ndim)
    return put_at(x, values, unsqueeze(index, 0), (dim,), accumulate)


def _extent(x: Tensor, dim: int) -> int:
    return x.shape[dim] if x.ndim else 1


def _size_at(source: Tensor, dim: int) -> int:
    return source.shape[dim] if source.ndim else 1


def index_add(x: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1,
              out=None) -> Tensor:
    """x with `alpha * source` added at positions `index` (1-D) along `dim`:
    `out[index[i]] += alpha * source[i]` for dim 0, likewise for other dims."""
    refuse_limited("scatter_gather_tensor_cpu", x, taken=COMPLEX32)
    return _out(_index_add(x, dim, index, source, alpha), out, "index_add")


def _out(result: Tensor, out, name: str, dtype_error: Exception | None = None,
         inputs: tuple = ()) -> Tensor:
    """result, or written into `out` (torch's out= argument); `inputs`: the tensors out may
    not overlap (inplace.check_no_overlap)."""
    return result if out is None else write_out(out, result, name, dtype_error, inputs=inputs)


def _index_add(x: Tensor, dim: int, index: Tensor, source: Tensor, alpha) -> Tensor:
    dim = normalize_dim(dim, x.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {scalar_type_name(index.dtype)} and size: "
                         f"{list(index.shape)}")
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index.dtype)}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_add_(): self ({scalar_type_name(x.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    if dim != 0 and dim >= source.ndim:
        raise RuntimeError(f"index_add_(): Indexing dim {dim} is out of bounds of the source "
                           f"tensor with dim {source.ndim}")
    count = index.numel()
    if count != _size_at(source, dim):
        raise RuntimeError(f"index_add_(): Number of indices ({count}) should be equal to "
                           f"source.size(dim): ({_size_at(source, dim)}), for dim: {dim}")
    if x.ndim and source.ndim and (x.ndim != source.ndim or any(
            a != b for axis, (a, b) in enumerate(zip(x.shape, source.shape)) if axis != dim)):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} "
                           f"source.shape = {list(source.shape)}")
    if alpha != 1:
        source = source * _scalar_for(x, alpha)
        source = source if source.dtype is x.dtype else source.to(x.dtype)
    index = check_index(_as_vector(index), _extent(x, dim), "gather", dim=dim)
    return _put_on_dim(x, dim, index, source, accumulate=True)


def _sizes_text(sizes) -> str:
    return " ".join(str(extent) for extent in sizes)


@autocast_op(cpu=PROMOTE)
def index_copy(x: Tensor, dim: int, index: Tensor, source: Tensor, *, out=None) -> Tensor:
    """x with the slices of `source` written at positions `index` (1-D) along `dim`:
    `out[index[i]] = source[i]` for dim 0, likewise for other dims."""
    refuse_limited("index_copy_cpu", x, taken=COMPLEX32)
    return _out(_index_copy(x, dim, index, source), out, "index_copy")


def _index_copy(x: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    dim = normalize_dim(dim, x.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{scalar_type_name(index.dtype)}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {scalar_type_name(x.dtype)} and (source) "
                           f"{scalar_type_name(source.dtype)}")
    if source.ndim and x.ndim != source.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({x.ndim})")
    x_slice = [extent for axis, extent in enumerate(x.shape) if axis != dim]
    source_slice = [extent for axis, extent in enumerate(source.shape) if axis != dim]
    if source.ndim and x_slice != source_slice:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {_sizes_text(x_slice)} at "
                           f"dimension {dim} and source slice shape: "
                           f"{_sizes_text(source_slice)} at dimension 0.")
    count = index.numel()
    if index.ndim and count != _size_at(source, dim):
        raise IndexError(f"index_copy_(): Number of indices ({count}) should be equal to "
                         f"source.size(dim) ({_size_at(source, dim)})")
    index = check_index(_as_vector(index), _extent(x, dim), "index_copy", dim=dim)
    return _put_on_dim(x, dim, index, source, accumulate=False)


def index_fill(x: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """x with `value` (a number or a 0-d tensor) written at positions `index` (1-D) along
    `dim`; negative indices count from the end."""
    refuse_limited("index_fill_cpu", x, taken=COMPLEX32)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        value = value if value.dtype is x.dtype else value.to(x.dtype)
    else:
        value = _scalar_for(x, value)
    dim = normalize_dim(dim, x.ndim)
    if index.dtype is not dtypes.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    index = check_index(_as_vector(index), _extent(x, dim), "index", dim=dim, wrap=True)
    if not isinstance(value, Tensor):
        return _put_on_dim(x, dim, index, value, accumulate=False)
    # A tensor value is selected where a mask of the filled positions is set, so that its
    # gradient sums each position once however often the index names it (torch's: over the
    # unique indices), and x's is zero there.
    from ...tensor.creation import ones, zeros

    extent = _extent(x, dim)
    marks = put_at(zeros((extent,), dtype=dtypes.bool_, device=x.device),
                   ones((1,), dtype=dtypes.bool_, device=x.device), unsqueeze(index, 0), (0,),
                   False)
    shape = [1] * x.ndim
    if x.ndim:
        shape[dim] = extent
    return ew.where(reshape(marks, tuple(shape)), value, x)


# ---- flat positions: index_put, put, take ------------------------------------------------------

def _positions(x: Tensor, key) -> Tensor:
    """The flat positions of x that x[key] addresses (an int64 tensor of x[key]'s shape),
    found by indexing a tensor of positions the same way, with getitem's checks and errors."""
    from ...tensor.creation import arange

    numbers = arange(x.numel(), dtype=dtypes.int64, device=x.device if x.is_cuda else None)
    return getitem(reshape(numbers, tuple(x.shape)), key)


def _write_flat(x: Tensor, positions: Tensor, values, accumulate: bool) -> Tensor:
    """x with `values` (of positions' shape, or a number) written (added) at flat positions."""
    if isinstance(values, Tensor):
        values = reshape(values, -1)
    written = put_at(reshape(x, -1), values, unsqueeze(reshape(positions, -1), 0), (0,),
                        accumulate)
    return reshape(written, tuple(x.shape))


@autocast_op(cuda=PROMOTE)
def index_put(x: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """x with `values` written at x[indices] (a tuple of integer or bool index tensors), or
    added there with accumulate=True (repeated positions then add up)."""
    return _index_put(x, indices, values, accumulate, 1)


def tensor_index_put(x: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """x with `values` written at x[indices] (a tuple of integer or bool index tensors), or
    added there with accumulate=True (the method form of index_put)."""
    return _index_put(x, indices, values, accumulate, 0)


def _index_put(x: Tensor, indices, values, accumulate: bool, position: int) -> Tensor:
    # `position`: where torch's argument parser counts the indices (the method skips self).
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 3) must be Tensor, not "
                        f"{type(values).__name__}")
    for element, item in enumerate(indices):
        if not isinstance(item, Tensor):
            raise TypeError(f"expected Tensor as element {element} in argument {position}, but "
                            f"got {type(item).__name__}")
    # torch writes one value through one mask with masked_fill_: both refuse uint64
    refuse_limited("masked_fill" if not accumulate and values.numel() == 1 and
                   _one_mask(indices) else "index_put", x, taken=COMPLEX32)
    if not accumulate and values.numel() == 1 and _one_mask(indices):
        # torch fills through masked_fill_ here, which takes the one value in x's dtype and
        # shape; autograd still sees index_put.
        values = reshape(values, ()).to(x.dtype)
    if values.dtype is not x.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(x.dtype)} for the destination and "
                           f"{scalar_type_name(values.dtype)} for the source.")
    positions = _positions(x, tuple(indices))
    target = tuple(positions.shape)
    try:
        expand_rule(tuple(values.shape), target)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot "
                           f"be broadcast to indexing result of shape {list(target)}") from None
    return _write_flat(x, positions, expand(values, target), accumulate)


def _one_mask(indices) -> bool:
    """Whether indices are one bool mask."""
    return len(indices) == 1 and indices[0].dtype is dtypes.bool_


def take(x: Tensor, index: Tensor, *, out=None) -> Tensor:
    """The entries of x, read as a flat (C-ordered) tensor, at `index` (any shape; negative
    indices count from the end)."""
    refuse_limited("take_cpu", x)
    if not isinstance(index, Tensor) or index.dtype is not dtypes.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{scalar_type_name(index.dtype)}")
    if out is not None and isinstance(out, Tensor) and out.dtype is not x.dtype:
        raise RuntimeError(f"take(): self and out expected to have the same dtype, but got "
                           f"self.dtype = {scalar_type_name(x.dtype)} and out.dtype = "
                           f"{scalar_type_name(out.dtype)}")
    index = check_index(index, x.numel(), "take", wrap=True)
    return _out(index_tensor(reshape(x, -1), unsqueeze(index, 0), (0,)), out, "take",
                inputs=(x, index))


def put(x: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """x with `source` written (added, with accumulate) at `index` into x read as a flat
    tensor; negative indices count from the end."""
    refuse_limited("take_put_cpu", x)
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{scalar_type_name(index.dtype)}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {scalar_type_name(x.dtype)} and source.dtype = "
                           f"{scalar_type_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() = "
                         f"{index.numel()}")
    if index.numel() == 0:
        return x.clone()
    index = check_index(index, x.numel(), "take", wrap=True)
    return _write_flat(x, index, source, accumulate)

