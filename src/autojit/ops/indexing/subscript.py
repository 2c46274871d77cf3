"""x[key] and x[key] = value: torch's indexing semantics on the layout and index primitives.

Basic indexing (ints, slices, None, Ellipsis, a Python bool) gives views: a slice of every
indexed dim (SLICE), then one reshape that drops the dims of ints and inserts those of None
(RESHAPE). Tensor and list indices gather with the `index` primitive (indexing/__init__.py) on the
dims they address, boolean masks through their nonzero positions (data-dependent, so a graph
break while tracing unless the trace specializes on the count); eagerly, large broadcasting
index tensors on adjacent dims are merged into one row of flat positions first
(`_flat_positions`). A write goes through the flat
positions the same key addresses in a tensor of positions, one `index_put`. Eager keys of
ints, slices, None and Ellipsis on tensors that need no autograd node are one NumPy view,
made in getitem with the same chain of primitives recorded (layout/eager_views.py).
"""

from __future__ import annotations

import warnings

import numpy as np

from ...tensor import dtypes
from ...tensor.state import SPECIAL, state
from ...tensor.symbolic import as_size
from ...tensor.tensor import Tensor, VersionCounter
from .. import registry
from ..elementwise.where_cast import fill_like
from ..inplace import apply_inplace
from ..layout import (
    RESHAPE,
    SLICE,
    cat,
    expand,
    expand_rule,
    reshape,
    slice_dims,
    slice_length,
    unsqueeze,
)
from ..layout.eager_views import LazySource
from ..limited_rules import not_implemented
from ..shape_rules import broadcast_shapes
from ..view_creation import meta_of_new_view
from . import _INDEX_DTYPES, _as_index_tensor, index_put, index_tensor, nonzero
from .checks import check_index

_new = object.__new__


def _prepare(item):
    """Lists and arrays as tensors; integer 0-d tensors with data as plain ints, 0-d bool
    tensors as Python bools."""
    # x[range(n), y], x[(0, 1), :]: a sequence of positions (a tuple inside the key is one)
    if isinstance(item, (list, tuple, range, np.ndarray)):
        item = _as_index_tensor(item)
    if isinstance(item, Tensor):
        if item.dtype is dtypes.uint8:
            # torch's older masks: a uint8 index is a boolean mask, with its warning.
            warnings.warn("indexing with dtype autojit.uint8 is now deprecated, please use a "
                          "dtype autojit.bool instead.", UserWarning, stacklevel=4)
            item = item.to(dtypes.bool_)
        if item.dtype not in (*_INDEX_DTYPES, dtypes.bool_):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if item.ndim == 0 and item.dtype is not dtypes.bool_ and item._payload is not None:
            return int(item._payload)
        if item.ndim == 0 and item.dtype is dtypes.bool_:
            # A 0-d mask is a Python bool: a new dim of 1 (True) or 0 (False); traced, the
            # value is a decision checked on every call.
            return bool(item)
    return item


def _mask_to_indices(mask: Tensor, shape, position: int) -> list:
    """A boolean mask over dims position.. as one integer index tensor per dim."""
    if mask._payload is None and (state.tracer is None or not state.tracer.evaluates):
        from ...tensor.graph_break import graph_break

        graph_break("boolean mask indexing")
    covered = tuple(shape[position:position + mask.ndim])
    for axis, extent in enumerate(mask.shape):
        if axis >= len(covered) or covered[axis] != extent:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {axis} does not "
                             f"match the shape of the indexed tensor {list(shape)} at index "
                             f"{position + axis}")
    return list(nonzero(mask, as_tuple=True))


def _normalize_slice(item: slice, extent: int) -> tuple:
    if item.step is not None and int(item.step) == 0:
        raise ValueError("slice step cannot be zero")
    if item.step is not None and int(item.step) < 0:
        raise ValueError("step must be greater than zero")
    if isinstance(extent, int):
        return slice(item.start, item.stop, item.step).indices(extent)
    # A symbolic extent (a dynamic trace): slice.indices needs an int, so clamp by hand (step
    # >= 1 here); the comparisons become guards only where a bound is given.
    step = 1 if item.step is None else as_size(item.step)

    def bound(value, default):
        if value is None:
            return default
        value = as_size(value)
        if value < 0:
            value = value + extent
            return value if value > 0 else 0
        return value if value < extent else extent

    return bound(item.start, 0), bound(item.stop, extent), step


def _sequence_as_tuple(key: list):
    """torch's reading of a list index (NumPy's old rule): a list of fewer than 32 items
    holding a slice, Ellipsis, None, a tensor or a sequence is a tuple of indices, so
    `x[[[0, 4], [2, 2]]]` is `x[[0, 4], [2, 2]]`; otherwise it is one index of positions."""
    if len(key) < 32:
        for item in key:
            if item is None or item is Ellipsis or isinstance(
                    item, (slice, Tensor, list, tuple, np.ndarray)):
                warnings.warn(
                    "Using a non-tuple sequence for multidimensional indexing is deprecated and "
                    "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                    "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                    "which will result either in an error or a different result", UserWarning,
                    stacklevel=3)
                return tuple(key)
    return key


def getitem(x: Tensor, key) -> Tensor:
    """x[key] with torch's semantics: basic indexing gives views, tensors and lists gather.

    A key of ints, slices of step >= 1 with int or None bounds, None and one Ellipsis on a
    CPU tensor that needs no autograd node (layout/eager_views.py's conditions) is one NumPy view,
    made here; anything else, an int out of range, an empty result or one of x's shape (x[:]
    is x itself) takes `_general`, which raises torch's errors."""
    if key.__class__ is list:
        key = _sequence_as_tuple(key)
    data = x._payload
    if data.__class__ is not np.ndarray or registry.STEP is not None:
        return _general(x, key)
    mode = state.dispatch
    if mode == SPECIAL:
        return _general(x, key)
    if mode and x._requires_grad:
        found = _slices_of(key, data.shape)
        if found is None:
            return _general(x, key)
        slices, shape = found
        result = registry.bind(SLICE, (x,), {"slices": slices})
        return result if shape is None else registry.bind(RESHAPE, (result,), {"shape": shape})
    shape = data.shape
    ndim = len(shape)
    if key.__class__ is int:
        if not ndim or not -shape[0] <= key < shape[0]:
            return _general(x, key)
        result = data[key] if ndim > 1 else data[key, ...]
        selects = True
    elif key is None:
        inserted = (1,) + shape
        result = data.reshape(inserted)  # RESHAPE's impl: see `inserts` below
        selects = False
    elif key.__class__ is slice and ndim:
        start, stop, step = key.start, key.stop, key.step
        if not ((start is None or start.__class__ is int)
                and (stop is None or stop.__class__ is int)
                and (step is None or (step.__class__ is int and step > 0))):
            return _general(x, key)
        result = data[key]
        selects = True
    else:
        items = key if key.__class__ is tuple else (key,)
        dim = 0
        ellipsis = selects = inserts = False
        for position, item in enumerate(items):
            kind = item.__class__
            if kind is int:
                if dim >= ndim or not -shape[dim] <= item < shape[dim]:
                    return _general(x, key)
                dim += 1
                selects = True
            elif kind is slice:
                start, stop, step = item.start, item.stop, item.step
                if start is not None or stop is not None or step is not None:
                    if not ((start is None or start.__class__ is int)
                            and (stop is None or stop.__class__ is int)
                            and (step is None or (step.__class__ is int and step > 0))):
                        return _general(x, key)
                    selects = True
                dim += 1
            elif item is None:
                inserts = True
            elif item is Ellipsis and not ellipsis:
                ellipsis = True
                rest = 0
                for later in items[position + 1:]:
                    if later is not None:
                        rest += 1
                if ndim - rest < dim:
                    return _general(x, key)
                dim = ndim - rest
            else:
                return _general(x, key)
        if dim > ndim:
            return _general(x, key)
        result = data[items] if ellipsis else data[items + (Ellipsis,)]
        if inserts and result.size:
            # NumPy's new axes have stride 0, where the general path's reshape gives a new dim
            # the step of the dims inside it, as torch does: make its arrays, a slice that
            # keeps the indexed dims (as SLICE's impl does) and a reshape (RESHAPE's).
            if selects:
                result = data[tuple([slice(item, item + 1 or None) if item.__class__ is int
                                     else item for item in items if item is not None])
                              ].reshape(result.shape)
            else:
                result = data.reshape(result.shape)
    if not result.size or result.shape == shape:
        return _general(x, key)
    counter = x._counter
    if counter is None:
        counter = x._counter = _new(VersionCounter)
        counter.value = 0
    if selects:
        source = _new(LazySource)
        source.source = x
        source.data = data
        source.version = counter.value
        source.steps = _view_steps
        source.key = key
        source.made = None
    else:
        source = (x, RESHAPE, {"shape": inserted if key is None else result.shape})
    # eager_views.view_of's body, inlined: this is the data path's most frequent call.
    out = _new(Tensor)
    out._payload = result
    out._dtype = x._dtype
    out._requires_grad = False
    out._grad = None
    out.grad_fn = None
    out._output_nr = 0
    out._counter = counter
    fields = out.__dict__
    base = x._base
    fields["_base"] = x if base is None else base
    fields["_view_source"] = source
    fields["_view_version"] = counter.value
    if x._is_conj:
        fields["_is_conj"] = True  # torch's views keep the conjugate bit
    if x._is_neg:
        fields["_is_neg"] = True  # and the negative bit
    if not state.grad_enabled or x._creation_meta is not None:
        fields["_creation_meta"] = meta_of_new_view(x)
    return out


def _slices_of(key, shape: tuple) -> tuple | None:
    """For a key of ints in range, slices (int or None bounds, steps of at least 1) and at most
    one Ellipsis: the (start, stop, step) of each dim as `_general` normalizes them, and the
    shape without the dims of the ints (None when there are none), so that x[key] is that
    SLICE and that reshape, as `_general` makes them (a rotary embedding's `x[..., :half]`, a
    classifier's `x[:, 0]` of a tensor that needs a node). None for any other key, which
    `_general` reads (and raises torch's errors for)."""
    items = key if key.__class__ is tuple else (key,)
    at = None
    ints = False
    for position, item in enumerate(items):
        kind = item.__class__
        if kind is slice:
            start, stop, step = item.start, item.stop, item.step
            if not ((start is None or start.__class__ is int) and
                    (stop is None or stop.__class__ is int) and
                    (step is None or (step.__class__ is int and step > 0))):
                return None
        elif kind is int:
            ints = True
        elif item is Ellipsis and at is None:
            at = position
        else:
            return None
    ndim = len(shape)
    count = len(items) - (at is not None)
    if count > ndim or not ndim:  # (x[...] of a 0-d tensor is a reshape)
        return None
    if at is None:
        at = len(items)
    full = (slice(None),) * (ndim - count)
    items = items[:at] + full + items[at + 1:] if at < len(items) else items + full
    if not ints:
        return tuple(item.indices(extent) for item, extent in zip(items, shape)), None
    slices, kept = [], []
    for item, extent in zip(items, shape):
        if item.__class__ is int:
            if not -extent <= item < extent:
                return None
            start = item + extent if item < 0 else item
            slices.append((start, start + 1, 1))
        else:
            bounds = item.indices(extent)
            slices.append(bounds)
            kept.append(slice_length(*bounds))
    return tuple(slices), tuple(kept)


def _general(x: Tensor, key) -> Tensor:
    """x[key] through the primitives: slice and reshape, then `index` for tensor indices."""
    if not isinstance(key, tuple) and x.ndim == 0:
        if isinstance(key, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            if key == 0:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in "
                                 "Python or `tensor.item<T>()` in C++ to convert a 0-dim "
                                 "tensor to a number")
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size 0")
    items = [_prepare(item) for item in (key if isinstance(key, tuple) else (key,))]
    shape = tuple(x.shape)
    ndim = len(shape)
    slices, new_shape, advanced, empty_dims = _basic_pass(shape, _expand(items, ndim))
    result = slice_dims(x, slices) if ndim else x
    if tuple(result.shape) != tuple(new_shape):
        result = reshape(result, tuple(new_shape))
    if result is x and not advanced:
        # x[:], x[...], x[()]: a view of x, as torch's (a tensor of its own, with a node of its
        # own: a hook on it sees its own gradient, not all of x's)
        result = (registry.bind(SLICE, (x,), {"slices": tuple(slices)}) if ndim
                  else registry.bind(RESHAPE, (x,), {"shape": ()}))
    for position in empty_dims:
        result = slice_dims(result, [(0, 0 if axis == position else n, 1)
                                     for axis, n in enumerate(result.shape)])
    if not advanced:
        return result
    dims = tuple(position for position, _ in advanced)
    rows = [row for _, row in advanced]
    sizes = [result.shape[dim] for dim in dims]
    flat = _flat_positions(result, rows, dims, sizes)
    if flat is not None:
        merged = (*result.shape[:dims[0]], int(np.prod(sizes)), *result.shape[dims[-1] + 1:])
        return index_tensor(reshape(result, merged), unsqueeze(flat, 0), dims[:1])
    stacked = _stack_indices(rows, x)
    if 0 in sizes and stacked.numel():
        raise IndexError("index is out of bounds for dimension with size 0")
    # torch names the k-th index tensor's dim as dimension k.
    return index_tensor(result, check_index(stacked, sizes, "index", wrap=True), dims)


def _expand(items: list, ndim: int) -> list:
    """The key's items with its Ellipsis, or the missing trailing dims, as full slices."""
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = 0
    for item in items:
        if isinstance(item, Tensor) and item.dtype is dtypes.bool_:
            consumed += item.ndim
        elif item is not None and item is not Ellipsis and not isinstance(item, bool):
            consumed += 1
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if any(item is Ellipsis for item in items):
        at = next(i for i, item in enumerate(items) if item is Ellipsis)
        items[at:at + 1] = [slice(None)] * (ndim - consumed)
    else:
        items += [slice(None)] * (ndim - consumed)
    return items


def _basic_pass(shape: tuple, items: list) -> tuple:
    """The basic part of an expanded key: a (start, stop, step) per input dim, the shape of
    the one reshape that then drops ints and inserts Nones, the advanced (position, index
    tensor) pairs, and the positions of new dims of extent 0 (a False)."""
    slices, new_shape, advanced, empty_dims = [], [], [], []
    dim = 0
    for item in items:
        if item is None or isinstance(item, bool):
            if item is False:
                empty_dims.append(len(new_shape))
            new_shape.append(1)
        elif isinstance(item, slice):
            start, stop, step = _normalize_slice(item, shape[dim])
            slices.append((start, stop, step))
            new_shape.append(slice_length(start, stop, step))
            dim += 1
        elif isinstance(item, Tensor):
            rows = (_mask_to_indices(item, shape, dim) if item.dtype is dtypes.bool_
                    else [item])
            for row in rows:
                slices.append((0, shape[dim], 1))
                advanced.append((len(new_shape), row))
                new_shape.append(shape[dim])
                dim += 1
        else:
            index = int(item)
            if not -shape[dim] <= index < shape[dim]:
                raise IndexError(f"index {index} is out of bounds for dimension {dim} with size "
                                 f"{shape[dim]}")
            index %= shape[dim]
            slices.append((index, index + 1, 1))
            dim += 1
    return slices, new_shape, advanced, empty_dims


def _view_steps(shape: tuple, key) -> list:
    """The (op, attrs) of the primitives getitem binds for a basic key on a tensor of
    `shape`, in order: what a view made by getitem's fast path was made by."""
    items = _expand([_prepare(item) for item in (key if isinstance(key, tuple) else (key,))],
                    len(shape))
    slices, new_shape, _, _ = _basic_pass(shape, items)
    steps, sliced = [], shape
    if shape and not all(s == (0, n, 1) for s, n in zip(slices, shape, strict=True)):
        slices = tuple(slices)
        steps.append((SLICE, {"slices": slices}))
        sliced = tuple(slice_length(*s) for s in slices)
    if sliced != tuple(new_shape):
        steps.append((RESHAPE, {"shape": tuple(new_shape)}))
    return steps


# The fewest entries of a stacked index (k rows of the broadcast shape) that _flat_positions
# replaces: below it the stacked rows cost little, and its extra ops would cost an eager loop.
_FLAT_AT_LEAST = 1 << 16


def _flat_positions(x: Tensor, rows: list, dims: tuple, sizes: list) -> Tensor | None:
    """The positions that k > 1 index rows on adjacent dims address, as one index into those
    dims merged into one, for an eager CPU x whose rows are all in range; None otherwise.

    The stacked rows (_stack_indices) hold k entries for every position of their broadcast
    shape, and x[i, j] saves them for its backward: torchvision's roi_align in Python reads a
    feature map through four rows broadcasting to 1000 x 256 x 7 x 7 x 2 x 2 (boxes, channels,
    bins, samples), 1.6 GB of stacked int64 rows per read where the values read are 200 MB.
    One flat row is a k-th of that, and half again as int32. Rows out of range (or not
    broadcasting together) take the stacked path, whose check raises torch's error for the
    first offending entry.
    """
    k = len(rows)
    if k < 2 or dims[-1] - dims[0] != k - 1 or x._payload.__class__ is not np.ndarray \
            or 0 in sizes:
        return None
    arrays = [row._payload for row in rows]
    if any(array.__class__ is not np.ndarray for array in arrays):
        return None
    try:
        common = np.broadcast_shapes(*(array.shape for array in arrays))
    except ValueError:
        return None
    if k * int(np.prod(common)) < _FLAT_AT_LEAST:
        return None
    for array, size in zip(arrays, sizes, strict=True):
        if array.size and not (-size <= int(array.min()) and int(array.max()) < size):
            return None
    # int32 positions where they fit: half the bytes again (the index primitive takes both)
    dtype = dtypes.int32 if int(np.prod(sizes)) <= np.iinfo(np.int32).max else dtypes.int64
    flat, stride = None, 1
    for row, size in zip(reversed(rows), reversed(sizes), strict=True):
        term = row.to(dtype) % size  # negative positions count from the end
        if stride != 1:
            term = term * stride
        flat = term if flat is None else flat + term
        stride *= size
    return flat if tuple(flat.shape) == common else expand(flat, common)


def _stack_indices(rows: list, x: Tensor) -> Tensor:
    """Broadcast integer index tensors together and stack them as int64 rows on x's device.

    Index tensors may live on the CPU or on x's device (lists become CPU tensors), so CPU rows
    are copied to a CUDA x's device before they are stacked; a CUDA index for a CPU x is an
    error, as in torch.
    """
    if x.is_cuda:
        rows = [row if row.is_cuda or row.is_symbolic else row.to(x.device) for row in rows]
    elif not x.is_symbolic and any(row.is_cuda for row in rows):
        raise RuntimeError("indices should be either on cpu or on the same device as the "
                           f"indexed tensor ({x.device})")
    try:
        common = broadcast_shapes(*(tuple(row.shape) for row in rows))
    except ValueError:
        shapes = ", ".join(str(list(row.shape)) for row in rows)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {shapes}") from None
    rows = [unsqueeze(expand(row.to(dtypes.int64), common), 0) for row in rows]
    return rows[0] if len(rows) == 1 else cat(rows, 0)


def _refuse_limited_write(x: Tensor, items: tuple, value) -> None:
    """torch's error for a write into a uint16, uint32 or uint64 tensor through a mask (its
    masked_fill_, for one value) or index tensors (its index_put_), whose kernels take none of
    them; a write through basic indexing (ints, slices, 0-d index tensors) is a copy, which
    does."""
    masks = indices = False
    for item in items:
        if isinstance(item, Tensor):
            if item.dtype is dtypes.bool_ or item.dtype is dtypes.uint8:
                masks = True
            elif item.ndim:
                indices = True
        elif isinstance(item, (list, tuple, np.ndarray)):
            indices = True
    if masks and not indices and (not isinstance(value, Tensor) or value.ndim == 0):
        raise not_implemented("masked_fill", x.dtype)
    if masks or indices:
        raise not_implemented("index_put", x.dtype)


def setitem(x: Tensor, key, value) -> None:
    """x[key] = value, in place: differentiable w.r.t. the old x (zero where overwritten) and
    w.r.t. value (summed over broadcast)."""
    from ...tensor.creation import arange
    if key.__class__ is list:
        key = _sequence_as_tuple(key)
    items = key if isinstance(key, tuple) else (key,)
    if (not isinstance(value, Tensor) or value.ndim == 0) and any(
            isinstance(item, Tensor) and item.dtype is dtypes.uint8 for item in items):
        # torch writes a number through a mask with masked_fill_, which takes bool masks only.
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "unsigned char")
    if x.dtype.limited and x.dtype is not dtypes.complex32:  # (complex32's kernels take it)
        _refuse_limited_write(x, items, value)
    if value.__class__ is int and x.dtype.category == dtypes.INTEGER:
        # torch reads the number as an int64 first, then converts it as a fill (-1 as uint8
        # is 255; 300 does not fit int8)
        if not -2 ** 63 <= value < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
        dtypes.check_fits(value, x.dtype)
        value = dtypes.wrap_integer(value, x.dtype)
    data = x._payload
    if data.__class__ is np.ndarray and not data.flags.writeable and all(
            item is None or item is Ellipsis or item.__class__ in (int, slice) for item in items):
        # an expanded tensor (read-only broadcast memory): as torch, the view x[key] is written,
        # which inplace.write_storage allows where its elements do not share memory
        view = getitem(x, key)
        # a copy, not a fill, even of a number: torch refuses it where elements share memory
        view.copy_(value if isinstance(value, Tensor) else fill_like(view, value))
        return
    shape = tuple(x.shape)
    # The flat positions that x[key] addresses, found by indexing a tensor of positions the
    # same way; this works unchanged with symbolic index tensors while tracing.
    positions = getitem(reshape(arange(x.numel(), dtype=dtypes.int64,
                                       device=None if x.is_cpu else x.device), shape), key)
    target = tuple(positions.shape)
    if isinstance(value, Tensor):
        value_shape = tuple(value.shape)
        while len(value_shape) > len(target) and value_shape[0] == 1:
            value_shape = value_shape[1:]
        try:
            expand_rule(value_shape, target)
        except ValueError as error:
            raise RuntimeError(str(error)) from None
        if value_shape != tuple(value.shape):
            value = reshape(value, value_shape)
    elif isinstance(value, complex) and not x.dtype.is_complex:
        dtypes.check_fits(value, x.dtype)  # torch's error: no real dtype holds it
    elif not isinstance(value, (bool, int, float, complex)):
        value = _as_index_tensor(value)
        return setitem(x, key, value)
    flat_positions = unsqueeze(reshape(positions, -1), 0)

    def compute(source: Tensor) -> Tensor:
        values = value
        if isinstance(values, Tensor) and values.dtype.is_complex and not x.dtype.is_complex:
            values = values.to(x.dtype)  # torch's copy: the imaginary parts dropped, warning
        if isinstance(values, Tensor):
            values = reshape(expand(values, target), -1) if target else reshape(values, (1,))
        written = index_put(reshape(source, -1), values, flat_positions, (0,))
        return reshape(written, shape)

    apply_inplace(x, "setitem", compute)
