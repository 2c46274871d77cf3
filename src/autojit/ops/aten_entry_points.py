"""torch's aten entry points of the ops layer, which programs and libraries call by their aten
names (`torch._softmax_backward_data`, `torch.segment_reduce`, `torch.ops.aten.slice.Tensor`):
the softmax backward formulas, the softmax that gives fully masked rows 0, slicing one dim, the
masked index ops, dropout's and max pooling's backwards, _chunk_cat and segment reductions.

_chunk_cat cuts each tensor into chunks along a dim and concatenates the chunks' flattened
rests; the masked index ops are those of torch's decompositions (indices clamped into range,
the entries a mask leaves out filled or not added). Each has torch's signature, results and
errors.

They are composites of public ops (the softmax backwards are the primitives softmax_backward
and log_softmax_backward themselves), so their gradients are those ops' to any order.
Each is registered in the aten namespace (ops/aten_namespace.py); the top-level names torch
has are exported by autojit/__init__.py. The entry points of nn's ops (native_layer_norm,
native_batch_norm, ...) are in nn/aten_entry_points.py.
"""

from __future__ import annotations

from ..tensor import dtypes
from ..tensor.creation import arange, zeros
from ..tensor.dtypes import SCALAR_TYPE_NAMES
from ..tensor.tensor import Tensor, normalize_dim
from . import checks
from . import elementwise as ew
from .aten_namespace import register
from .indexing.checks import check_index
from .layout import cat
from .nn.softmax import LOG_SOFTMAX_BACKWARD, SOFTMAX_BACKWARD, _floating_input, safe_softmax_along
from .registry import bind


def _scalar_type(dtype) -> str:
    return SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)


# ---- softmax ------------------------------------------------------------------------------------

def _backward_data(op, grad_output: Tensor, output: Tensor, dim: int) -> Tensor:
    if grad_output.dtype != output.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type(grad_output.dtype)} but found "
                           f"{_scalar_type(output.dtype)}")
    if tuple(grad_output.shape) != tuple(output.shape):
        raise RuntimeError(f"Expected tensor for argument #1 'grad' to have the same size as "
                           f"tensor for argument #2 'output'; but {list(grad_output.shape)} does "
                           f"not equal {list(output.shape)}")
    dim = normalize_dim(dim, grad_output.ndim)
    if grad_output.ndim == 0:
        return _backward_data(op, grad_output.reshape(1), output.reshape(1), 0).reshape(())
    return bind(op, (grad_output, output), {"dim": dim})


def _softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                           input_dtype) -> Tensor:
    """softmax's backward: `output * (grad_output - sum(grad_output * output, dim))`, the
    gradient of softmax's input from its result (in grad_output's dtype, as torch's CPU
    kernel gives it)."""
    return _backward_data(SOFTMAX_BACKWARD, grad_output, output, dim)


def _log_softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int,
                               input_dtype) -> Tensor:
    """log_softmax's backward: `grad_output - exp(output) * sum(grad_output, dim)`."""
    return _backward_data(LOG_SOFTMAX_BACKWARD, grad_output, output, dim)


def _safe_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:  # noqa: A002 - torch's names
    """softmax over `dim`, with 0 for the rows whose entries are all -inf (attention's fully
    masked rows), where softmax gives NaN."""
    input = _floating_input("softmax", input, dim, dtype)
    dim = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        return safe_softmax_along(input.reshape(1), 0).reshape(())
    return safe_softmax_along(input, dim)


# ---- slicing and the masked index ops -----------------------------------------------------------

def _slice_tensor(input: Tensor, dim: int = 0, start=None, end=None,  # noqa: A002
                  step: int = 1) -> Tensor:
    """The view of `input` at start:end:step along `dim` (start and end wrapped and clamped
    as Python's slices are)."""
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return input[(slice(None),) * dim + (slice(start, end, step),)]


def _slice_list(values: list, start=None, end=None, step: int = 1) -> list:
    """A list's items at start:end:step."""
    return list(values[start:end:step])


def _slice_str(string: str, start=None, end=None, step: int = 1) -> str:
    """A string's characters at start:end:step."""
    return string[start:end:step]


def _slice(*args, **kwargs):
    """aten.slice: the overload for a tensor, a list or a string."""
    first = args[0] if args else kwargs.get("self", kwargs.get("l", kwargs.get("string")))
    if isinstance(first, str):
        return _slice_str(*args, **kwargs)
    if isinstance(first, Tensor):
        return _slice_tensor(*args, **kwargs)
    return _slice_list(*args, **kwargs)


def _checked_mask(indices, mask: Tensor) -> Tensor:
    """The mask as bools, once every index is an int64 or int32 tensor (torch's error names
    _unsafe_masked_index for both ops)."""
    for index in indices:
        if index is not None and index.dtype not in (dtypes.int64, dtypes.int32):
            raise RuntimeError(f"_unsafe_masked_index found unexpected index type "
                               f"{_scalar_type(index.dtype)}")
    return mask if mask.dtype == dtypes.bool_ else mask.to(dtypes.bool_)


def _clamped(x: Tensor, indices, low_wraps: bool) -> tuple:
    """The index tuple of x[...] with each index clamped into its dim (from -size where
    negative indices wrap), None standing for the whole dim."""
    key = []
    for dim, index in enumerate(indices):
        if index is None:
            key.append(slice(None))
            continue
        size = int(x.shape[dim])
        key.append(index.clamp(-size if low_wraps else 0, size - 1))
    return tuple(key)


def _unsafe_masked_index(input: Tensor, mask: Tensor, indices, fill) -> Tensor:  # noqa: A002
    """`input[indices]` where `mask`, else `fill`; the indices are clamped into range first,
    so the entries `mask` leaves out may hold any index."""
    indices = list(indices)
    mask = _checked_mask(indices, mask)
    if input.numel() == 0:
        # the shape input[indices] has: that of a probe whose indexed dims have one element,
        # indexed at 0 (an expanded zero, holding no memory of its own)
        probe_shape = tuple(1 if i is not None else int(n)
                            for i, n in zip(indices, input.shape, strict=False)) + \
            tuple(input.shape[len(indices):])
        probe = zeros((), dtype=input.dtype, device=input.device).expand(probe_shape)
        key = tuple(slice(None) if i is None else ew.fill_like(i, 0) for i in indices)
        return input.new_full(tuple(probe[key].shape), fill)
    return input[_clamped(input, indices, False)].masked_fill(~mask, fill)


def _unsafe_masked_index_put_accumulate(input: Tensor, mask: Tensor, indices,  # noqa: A002
                                        values: Tensor) -> Tensor:
    """`input` with `values` added at `indices` where `mask` (the indices clamped into range
    first, so the entries `mask` leaves out may hold any index)."""
    indices = list(indices)
    mask = _checked_mask(indices, mask)
    if input.numel() == 0:
        return input.clone()
    key = _clamped(input, indices, True)
    masked = values.masked_fill(~mask, 0)
    if all(isinstance(k, Tensor) for k in key):
        return input.index_put(key, masked, accumulate=True)
    # a None (a whole dim) among the indices: the flat positions input[key] names
    shape = tuple(input.shape)
    positions = arange(input.numel(), device=input.device).reshape(shape)[key]
    try:
        masked = masked.expand(tuple(positions.shape))
    except RuntimeError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(masked.shape)} cannot "
                           f"be broadcast to indexing result of shape "
                           f"{list(positions.shape)}") from None
    flat = input.reshape(-1).index_put((positions.reshape(-1),), masked.reshape(-1),
                                       accumulate=True)
    return flat.reshape(shape)


# ---- dropout's backward, _chunk_cat -------------------------------------------------------------

def native_dropout_backward(grad_output: Tensor, mask: Tensor, scale: float) -> Tensor:
    """native_dropout's backward: `grad_output * mask * scale`."""
    return grad_output * (mask.to(grad_output.dtype) * scale)


def _chunk_cat_dim(tensors, dim: int, num_chunks: int) -> int:
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    if len(tensors) == 0:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    for tensor in tensors:
        if tensor.numel() == 0:
            raise RuntimeError("_chunk_cat expects non-empty tensor")
        if tensor.dtype != tensors[0].dtype:
            raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
        if tensor.device != tensors[0].device:
            raise RuntimeError("_chunk_cat expects all inputs tensors on the same device")
    if all(tensor.ndim == tensors[0].ndim for tensor in tensors):
        dim = normalize_dim(dim, tensors[0].ndim)
    else:
        if dim < 0:
            raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have "
                               "different ndims")
        if any(dim >= tensor.ndim for tensor in tensors):
            raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    leading = tuple(tensors[0].shape[:dim])
    if any(tuple(tensor.shape[:dim]) != leading for tensor in tensors):
        raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all "
                           "tensors")
    return dim


def _chunk_cat(tensors, dim: int, num_chunks: int) -> Tensor:
    """Each tensor cut into `num_chunks` chunks along `dim` (zero-padded to a multiple of it),
    each chunk flattened from `dim` on; the chunks of all tensors concatenated: a tensor of
    shape `tensors[0].shape[:dim] + (num_chunks, total)`."""
    tensors = list(tensors)
    dim = _chunk_cat_dim(tensors, dim, num_chunks)
    pieces = []
    for tensor in tensors:
        size = int(tensor.shape[dim])
        padded = -(-size // num_chunks) * num_chunks
        if padded != size:
            shape = tuple(tensor.shape[:dim]) + (padded - size,) + tuple(tensor.shape[dim + 1:])
            tensor = cat([tensor, zeros(shape, dtype=tensor.dtype, device=tensor.device)], dim)
        pieces.append(tensor.reshape(tuple(tensor.shape[:dim]) + (num_chunks, -1)))
    return cat(pieces, dim + 1)


# ---- segment reductions -------------------------------------------------------------------------

_SEGMENT_REDUCTIONS = ("sum", "prod", "mean", "max", "min")


def segment_reduce(data: Tensor, reduce: str, *, lengths=None, indices=None, offsets=None,
                   axis: int = 0, unsafe: bool = False, initial=None) -> Tensor:
    """The reduction (`sum`, `prod`, `mean`, `max` or `min`) of each segment of `data` along
    `axis`, the segments given by their `lengths` or by `offsets` (their bounds), `initial`
    taking part in each reduction (and the value of an empty segment; without it an empty
    segment's max is -inf, min inf, sum 0, prod 1, mean NaN)."""
    reduce = {"amax": "max", "amin": "min"}.get(reduce, reduce)  # torch's names for both
    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    axis = normalize_dim(axis, data.ndim)
    if lengths is not None:
        kernel = "_segment_reduce_lengths_cpu_kernel1"
        bounds = lengths
    else:
        kernel = "_segment_reduce_offsets_cpu_kernel1"
        bounds = offsets
    if bounds.dtype not in (dtypes.int64, dtypes.int32):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_scalar_type(bounds.dtype)}'")
    if lengths is not None:
        lengths = lengths + _checked_segments(lengths, int(data.shape[axis]), not unsafe)
        ends = lengths.cumsum(-1)
        starts = ends - lengths
    else:
        starts, ends = offsets[..., :-1], offsets[..., 1:]
        starts = starts + _checked_segments(ends - starts, None, False)
        lengths = ends - starts
    return _reduce_segments(data, reduce, starts, ends, lengths, axis, initial)


def _failing(bad: Tensor, form: str) -> Tensor:
    """Zeros of bad's shape once no entry of the mask `bad` is set, else torch's error of
    `form` (index_checks.FORMS): a check_index node, so compiled code checks it too."""
    return check_index(ew.cast(bad, dtypes.int64), 1, form)


def _checked_segments(lengths: Tensor, size, safe: bool) -> Tensor:
    """Zeros of lengths' shape, which the caller adds to the segments so that what it
    computes depends on the checks: with `safe` (unsafe=False) no length is negative and each
    row sums to `size` (torch's argument checks), and always no length is negative (its
    kernel's check)."""
    checks = zeros(tuple(lengths.shape), dtype=dtypes.int64, device=lengths.device)
    if safe:
        checks = checks + _failing(lengths < 0, "segment_negative")
        checks = checks + _failing(lengths.sum(-1) != size, "segment_sum").unsqueeze(-1)
    return (checks + _failing(lengths < 0, "segment_length")).to(lengths.dtype)


def _reduce_segments(data: Tensor, reduce: str, starts: Tensor, ends: Tensor,
                     lengths: Tensor, axis: int, initial) -> Tensor:
    # member[..., s, j]: whether position j along axis is in segment s, broadcast against data
    # with the segments' dim inserted before axis (data's leading dims are lengths').
    rest = data.ndim - axis - 1
    position = arange(int(data.shape[axis]), device=data.device)
    member = (position >= starts.unsqueeze(-1)) & (position < ends.unsqueeze(-1))
    member = member.reshape(tuple(member.shape) + (1,) * rest)
    spread = data.unsqueeze(axis)
    count = lengths.reshape(tuple(lengths.shape) + (1,) * rest)
    start = None if initial is None else zeros((), dtype=data.dtype, device=data.device) \
        + initial
    if reduce in ("sum", "mean"):
        total = ew.where(member, spread, 0).sum(axis + 1)
        if start is not None:
            total = total + start
        if reduce == "sum":
            return total
        empty = count == 0
        mean = total / ew.where(empty, 1, count).to(data.dtype)
        return ew.where(empty, start if start is not None else float("nan"), mean)
    if reduce == "prod":
        product = ew.where(member, spread, 1).prod(axis + 1)
        return product if start is None else product * start
    fill = float("-inf") if reduce == "max" else float("inf")
    reduced = ew.where(member, spread, fill)
    reduced = reduced.amax(axis + 1) if reduce == "max" else reduced.amin(axis + 1)
    if start is None:
        return reduced
    # torch's kernel starts from `initial`: it wins where the segment's values do not pass it
    # (a NaN among them passes), and the gradient goes to the values equal to the result.
    beaten = reduced < start if reduce == "max" else reduced > start
    return ew.where(beaten, start, reduced)


# ---- max pooling's backward ---------------------------------------------------------------------

def max_pool2d_with_indices_backward(grad_output: Tensor, input: Tensor,  # noqa: A002
                                     kernel_size, stride, padding, dilation, ceil_mode: bool,
                                     indices: Tensor) -> Tensor:
    """The gradient of max_pool2d's input: each of grad_output's values added at the flat
    position (within its plane) that `indices` names."""
    plane = tuple(input.shape[:-2]) + (-1,)
    # zeros connected to input with a zero gradient, as torch's derivative in input is
    base = ew.fill_like(input, 0).to(grad_output.dtype)
    return base.reshape(plane).scatter_add(
        -1, indices.reshape(plane), grad_output.reshape(plane)).reshape(tuple(input.shape))


register("_softmax_backward_data", default=_softmax_backward_data)
register("_log_softmax_backward_data", default=_log_softmax_backward_data)
register("_safe_softmax", default=_safe_softmax)
register("slice", call=_slice, Tensor=_slice_tensor, t=_slice_list, str=_slice_str)
register("_unsafe_masked_index", default=_unsafe_masked_index)
register("_unsafe_masked_index_put_accumulate", default=_unsafe_masked_index_put_accumulate)
register("native_dropout_backward", default=native_dropout_backward)
register("_chunk_cat", default=_chunk_cat)
register("segment_reduce", default=segment_reduce)
register("max_pool2d_with_indices_backward", default=max_pool2d_with_indices_backward)
register("_assert_scalar", default=checks.assert_scalar)
register("_assert_tensor_metadata", default=checks.assert_tensor_metadata)
register("_assert_async", default=checks.assert_async,
         msg=lambda input, assert_msg: checks.assert_async(input, assert_msg))  # noqa: A006
register("sym_constrain_range_for_size", default=checks.sym_constrain_range_for_size)
