"""Writes into slices and strided reads: select_scatter, slice_scatter, diagonal_scatter,
index_reduce, as_strided, Tensor.unfold, fill_diagonal_, sum_to_size and storage_offset.

The *_scatter ops are functional writes: the source is embedded in zeros of the input's shape
by the adjoint of the view (embed_slice, embed_diagonal) and selected where a mask embedded the
same way is True, so the gradients are the view's and its adjoint's, and no op mutates.
index_reduce is scatter_reduce with the index spread along the source's dims. unfold reads the
windows through one index_select; fill_diagonal_ is an in-place `where` over a constant mask of
the diagonal's flat positions. as_strided reads the tensor's storage at the positions the sizes
and strides name, through take: the result is a copy, not a view (docs/differences.md). Under
vmap, strided_vmap.py checks the call as torch does and says where each example reads from.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor import dtypes
from ...tensor.once import warn_once
from ...tensor.state import state
from ...tensor.tensor import Tensor, normalize_dim
from .. import elementwise as ew
from .. import layout, storage
from ..inplace import apply_inplace
from ..layout import embed_slice
from ..layout.diagonal import diagonal, embed_diagonal
from ..reduction import sum_
from ..registry import share_node
from . import _index_select, index_put, strided_vmap
from .scatter import scatter_reduce

# ---- the *_scatter ops ------------------------------------------------------------------------


def _check_source(src: Tensor, view_shape: tuple) -> None:
    if tuple(src.shape) != tuple(view_shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view_shape)}")


def _written(input: Tensor, src: Tensor, embed) -> Tensor:  # noqa: A002 - torch's names
    """input where `embed` (a view's adjoint) puts src, input elsewhere."""
    mask = embed(ew.fill_like(src.detach(), True).to(dtypes.bool_))
    return ew.where(mask, embed(src.to(input.dtype)), input)


def _slices(x: Tensor, dim: int, start: int, stop: int, step: int) -> tuple:
    slices = [(0, n, 1) for n in x.shape]
    slices[dim] = (start, stop, step)
    return tuple(slices)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """x with `src` written at `index` along `dim` (the slice `select(x, dim, index)`), as a
    new tensor."""
    view = layout.select(input, dim, index)
    _check_source(src, view.shape)
    dim = normalize_dim(dim, input.ndim)
    index = int(index) % input.shape[dim]
    slices = _slices(input, dim, index, index + 1, 1)
    return _written(input, layout.unsqueeze(src, dim),
                    lambda t: embed_slice(t, tuple(input.shape), slices))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None,  # noqa: A002
                  step: int = 1) -> Tensor:
    """x with `src` written at the slice `start:end:step` along `dim`, as a new tensor."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = normalize_dim(dim, input.ndim)
    start, stop, step = slice(start, end, step).indices(input.shape[dim])
    stop = max(stop, start)
    slices = _slices(input, dim, start, stop, step)
    _check_source(src, layout.slice_dims(input.detach(), slices).shape)
    return _written(input, src, lambda t: embed_slice(t, tuple(input.shape), slices))


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,  # noqa: A002
                     dim2: int = 1) -> Tensor:
    """x with `src` written on the diagonal `offset` of dims dim1 and dim2, as a new tensor."""
    view = diagonal(input.detach(), offset, dim1, dim2)
    _check_source(src, view.shape)
    first, second = normalize_dim(dim1, input.ndim), normalize_dim(dim2, input.ndim)
    return _written(input, src, lambda t: embed_diagonal(t, tuple(input.shape), offset, first,
                                                         second))


# ---- index_reduce ----------------------------------------------------------------------------

def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,  # noqa: A002
                 include_self: bool = True) -> Tensor:
    """x with the slices of `source` combined by `reduce` ("prod", "mean", "amax" or "amin")
    into the slices of x along `dim` that `index` names, x's own values included unless
    include_self=False."""
    warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time.",
              UserWarning, stacklevel=2)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    dim = normalize_dim(dim, max(input.ndim, 1))
    if index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError("index_reduce_(): Expected a long or int tensor for index, but got "
                           f"{dtypes.SCALAR_TYPE_NAMES[index.dtype.name]}")
    if input.dtype is not source.dtype:
        raise RuntimeError("index_reduce_(): self and source must have the same scalar type")
    count = source.shape[dim] if source.ndim else 1
    if index.numel() != count:
        raise RuntimeError("index_reduce_(): Index should have dimension 1 or 0 (got "
                           f"{index.ndim})" if index.numel() == 0 else
                           "index_reduce_(): Number of indices should be equal to "
                           "source.size(dim)")
    if input.ndim == 0:
        return layout.reshape(index_reduce(layout.reshape(input, (1,)), 0, index,
                                           layout.reshape(source, (1,)), reduce,
                                           include_self=include_self), ())
    shape = [1] * source.ndim
    shape[dim] = -1
    spread = layout.expand(layout.reshape(index.to(dtypes.int64), shape), tuple(source.shape))
    return scatter_reduce(input, dim, spread, source, reduce, include_self=include_self)


# ---- windows, diagonals and sums ---------------------------------------------------------------

def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """The windows of `size` entries along `dimension`, `step` apart, as a new last dim (the
    windowed dim holds their count)."""
    if self.ndim == 0:
        if size > 1:
            raise RuntimeError(f"maximum size for tensor at dimension 0 is 1 but size is {size}")
        return layout.reshape(self, (1,))
    dim = normalize_dim(dimension, self.ndim)
    extent = self.shape[dim]
    if size > extent:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {extent} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (extent - size) // step + 1
    from ...tensor.creation import tensor

    positions = (np.arange(count)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    windows = _index_select(self, dim, tensor(positions.astype(np.int64), device=self.device))
    shape = tuple(self.shape[:dim]) + (count, size) + tuple(self.shape[dim + 1:])
    return layout.movedim(layout.reshape(windows, shape), dim + 1, -1)


def _diagonal_positions(shape: tuple, wrap: bool) -> np.ndarray:
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    numel = math.prod(shape)
    strides = np.cumprod((1,) + shape[::-1][:-1])[::-1]
    step = int(strides.sum())
    count = min(shape)
    if len(shape) == 2 and wrap and shape[0] > shape[1] + 1:
        count = (numel + step - 1) // step  # the diagonal restarts below every ncols + 1 rows
    return np.arange(count, dtype=np.int64) * step


def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Fill the main diagonal of x (a matrix, or a tensor with all dims equal) with
    `fill_value`, in place; with `wrap`, a tall matrix's diagonal restarts below every N + 1
    rows."""
    shape = tuple(self.shape)
    positions = _diagonal_positions(shape, wrap)
    mask_array = np.zeros(math.prod(shape), bool)
    mask_array[positions] = True
    from ...tensor.creation import tensor

    mask = tensor(mask_array.reshape(shape), device=self.device)
    return apply_inplace(self, "fill_diagonal_",
                         lambda source: ew.where(mask, ew.fill_like(source, fill_value), source))


def sum_to_size(self: Tensor, *size) -> Tensor:
    """x summed down to `size`, a shape x can be expanded from (the reduction a broadcast's
    gradient needs)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    shape = tuple(self.shape)
    try:
        layout.expand_rule(size, shape)
        if len(size) > len(shape):
            raise ValueError
    except (ValueError, RuntimeError):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}."
                           ) from None
    if not size:  # torch's sum_to: an empty target shape is always a full sum (bool: int64)
        return self.sum()
    lead = len(shape) - len(size)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size)
                                      if s == 1 and shape[lead + i] != 1)
    if not dims:
        return self
    return layout.reshape(sum_(self, dims, keepdim=True), size)


# ---- storage: as_strided, storage_offset -------------------------------------------------------

def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _storage(x: Tensor):
    """(the tensor whose elements in memory order are x's storage, x's offset in it): x's base
    when x is a view, the memory set_ put it on or that it shares as a detached view
    (ops/storage.py's storage_owner), its own storage otherwise, read in memory order;
    symbolic tensors have no strides, so while tracing x is its own row-major storage."""
    owner = x._base if x._base is not None and x._base._payload is None else \
        storage.storage_owner(x)
    if x._payload is None or owner._payload is None or owner._payload.__class__ is not np.ndarray:
        return layout.reshape(x, -1), 0
    if owner is not x and x._payload.flags.c_contiguous and x._payload.size == owner._payload.size \
            and _address(x._payload) == _address(owner._payload):
        owner = x  # a view of the whole storage in order (a dual tensor's primal, say)
    data = owner._payload
    order = sorted(range(data.ndim), key=lambda d: -data.strides[d])
    dense = layout.permute(owner, order)
    expected = data.itemsize
    for d in reversed(order):
        # (an empty storage has no memory to lay out, whatever NumPy's strides say)
        if data.size and data.shape[d] != 1 and data.strides[d] != expected:
            raise NotImplementedError("as_strided: a tensor whose storage is not dense (a view "
                                      "of a strided view) is not supported")
        expected *= data.shape[d]
    offset = 0
    if x._payload is not data:
        offset = (_address(x._payload) - _address(data)) // data.itemsize
    return layout.reshape(dense, -1), offset


def storage_offset(self: Tensor) -> int:
    """The position of x's first element in its storage (its base's, for a view)."""
    return _storage(self)[1]


def as_strided(input: Tensor, size, stride, storage_offset=None) -> Tensor:  # noqa: A002
    """The elements of x's storage at `storage_offset + sum(i_k * stride_k)` for each index i
    of `size` (x's own offset by default), as a new tensor: a copy, where torch's is a view.
    Its node is torch's AsStridedBackward0, which shows the size, stride and offset given."""
    result = _as_strided(input, size, stride, storage_offset)
    if result.grad_fn is None:
        return result
    return share_node((result,), (input,), "AsStridedBackward0", lambda: {
        "size": tuple(int(s) for s in size), "stride": tuple(int(s) for s in stride),
        "storage_offset": None if storage_offset is None else int(storage_offset)})[0]


def _as_strided(input: Tensor, size, stride, storage_offset=None) -> Tensor:  # noqa: A002
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if input._batched:
        found = strided_vmap.check(input, size, stride, storage_offset)
        if found is not None:
            return _batched_as_strided(input, size, stride, storage_offset, *found)
    for tangent in (input._tangents or {}).values():
        # forward AD's as_strided of the tangent, which vmap checks as any batched tensor's
        if isinstance(tangent, Tensor) and tangent._batched:
            strided_vmap.check(tangent, size, stride, storage_offset)
    flat, own_offset = _storage(input)
    real = _argument_view(input)
    if real is not None:  # a traced argument that is a view: its base's storage, as eager's
        flat, own_offset = _storage(real)
    offset = own_offset if storage_offset is None else int(storage_offset)
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    available = flat.shape[0]
    if needed > available:
        itemsize = input.dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {needed * itemsize} are out of bounds for storage of size "
                           f"{available * itemsize}")
    flat = _with_own_elements(flat, input, own_offset) if real is None else \
        _with_own_elements(flat, input, own_offset, real._payload)
    index = _strided_positions(size, stride, offset, input.device)
    return layout.reshape(_index_select(flat, 0, index), size)


def _batched_as_strided(x: Tensor, size: tuple, stride: tuple, storage_offset, physical: Tensor,
                        levels: list, base: int) -> Tensor:
    """as_strided of a tensor batched under vmap, its call checked (strided_vmap.py): read from
    each example's own elements where they are its storage, else from the physical tensor's
    storage with the batch dims' strides."""
    dims = len(levels)
    flat = strided_vmap.example_storage(x, physical, dims)
    if flat is None:
        batch = tuple(physical.shape)[:dims]
        steps = storage._layout(physical)[2][:dims]
        return strided_vmap.rebatched(
            _as_strided(physical, batch + size, steps + stride, storage_offset), levels)
    offset = 0 if storage_offset is None else int(storage_offset) - base
    index = _strided_positions(size, stride, offset, x.device)
    return layout.reshape(_index_select(flat, 0, index), size)


def _argument_view(x: Tensor):
    """The real argument a traced argument view stands for (None for any other tensor)."""
    tracer = state.tracer
    if x._payload is not None or tracer is None or not hasattr(tracer, "argument_view"):
        return None
    return tracer.argument_view(x)


def _with_own_elements(flat: Tensor, x: Tensor, offset: int, array=None) -> Tensor:
    """The storage `flat` of x's base with x's own elements put in at their positions, where x
    requires grad or has tangents: the storage read from the base carries the base's gradient
    path (and tangents), which a view made a leaf of its own (`base[5:15].requires_grad_()`),
    a tensor set_ on other memory or a detached view of a dual tensor (ops/storage.py) is not
    on. The values are the same (x shares the base's memory); torch's gradient reaches x's
    elements and no others. `array`: the real array of a traced argument x, whose elements are
    always put in (the base's storage is read as it was before the call; x's value is its value
    now)."""
    if array is None and (storage.storage_owner(x) is x or
                          not (x._requires_grad or x._tangents) or
                          x._payload is None or x._payload.__class__ is not np.ndarray):
        return flat
    if x.numel() == 0 or (array is None and x.numel() == flat.shape[0]):
        return flat
    array = x._payload if array is None else array
    steps = tuple(s // array.itemsize for s in array.strides)
    positions = _strided_positions(tuple(x.shape), steps, offset, x.device)
    return index_put(flat, layout.reshape(x, -1), layout.unsqueeze(positions, 0), (0,))


def _strided_positions(size: tuple, stride: tuple, offset: int, device) -> Tensor:
    """The storage positions of a strided view's elements, row-major (an int64 vector)."""
    from ...tensor.creation import tensor

    positions = np.full(size, offset, np.int64)
    for axis, (extent, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[axis] = extent
        positions = positions + (np.arange(extent, dtype=np.int64) * step).reshape(shape)
    return tensor(positions.reshape(-1), device=device)


def as_strided_scatter(input: Tensor, src: Tensor, size, stride,  # noqa: A002
                       storage_offset=None) -> Tensor:
    """A copy of input whose elements at input.as_strided(size, stride, storage_offset) are
    src's (torch: out = input.clone(); out.as_strided(...).copy_(src)); input read as its
    row-major storage."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    flat = layout.reshape(input, -1)
    offset = 0 if storage_offset is None else int(storage_offset)
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > flat.shape[0]:
        itemsize = input.dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {needed * itemsize} are out of bounds for storage of size "
                           f"{flat.shape[0] * itemsize}")
    index = _strided_positions(size, stride, offset, input.device)
    values = layout.reshape(src.to(input.dtype), -1)
    written = index_put(flat, values, layout.unsqueeze(index, 0), (0,))
    return layout.reshape(written, tuple(input.shape))
