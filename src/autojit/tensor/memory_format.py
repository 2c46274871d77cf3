"""Memory formats: `autojit.contiguous_format`, `channels_last`, `channels_last_3d` and
`preserve_format` (instances of `autojit.memory_format`), and the layouts they name.

A CPU tensor's data is a NumPy array, which has strides, so a memory format is a real layout
here: `x.to(memory_format=autojit.channels_last)` gives an (N, C, H, W) tensor over NHWC
storage (strides (H*W*C, 1, W*C, C)), with the same values, and NumPy's elementwise ops keep
that layout in their results, as torch's kernels do. The functions here compute layouts; the
Tensor methods that take `memory_format=` (to, contiguous, is_contiguous, clone and the
factories) are in ops/memory_formats.py and tensor/creation.py. Tensors on a GPU and symbolic
ones (traced) are always in the contiguous layout: there the format changes nothing.
"""

from __future__ import annotations

import numpy as np

from .dtypes import REPR_PREFIX


class memory_format:  # noqa: N801 - torch's name
    """A memory layout of a tensor's elements; `autojit.channels_last` and its kin are the
    instances."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"{REPR_PREFIX[0]}.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return self.name  # pickled by reference: the module attribute of that name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# The order of the dims in memory, outermost first: NCHW stored as NHWC.
_ORDERS = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}
# The ranks that have a channels-last format.
FORMAT_RANKS = frozenset(rank for rank, _ in _ORDERS.values())


def check_format(fmt, where: str = "memory_format") -> None:
    """TypeError unless fmt is a memory format."""
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{where}(): argument 'memory_format' must be autojit.memory_format, not "
                        f"{type(fmt).__name__}")


def order_of(fmt, ndim: int):
    """The dims in memory order for a channels-last format (None for the contiguous one), with
    torch's error for a tensor of the wrong rank."""
    if fmt not in _ORDERS:
        return None
    rank, order = _ORDERS[fmt]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    return order


def _dense_strides(shape, order) -> list:
    """The element strides of `shape` laid out with its dims in `order` (outermost first)."""
    strides = [0] * len(shape)
    step = 1
    for dim in reversed(order):
        strides[dim] = step
        step *= max(int(shape[dim]), 1)
    return strides


def strides_of(data) -> tuple:
    """The element strides of an array (a GPU array is contiguous)."""
    if data.__class__ is np.ndarray:
        steps = tuple(step // data.itemsize for step in data.strides)
        # An empty array NumPy made with steps of 0: torch's empty tensors have dense strides
        # (`torch.zeros(0).stride()` is (1,), `zeros(2, 0, 3)`'s (3, 3, 1)).
        if not data.size and 0 in steps:
            return tuple(_dense_strides(data.shape, range(len(data.shape))))
        return steps
    declared = getattr(data, "element_strides", None)  # a wrapper subclass's (meta.py)
    if declared is not None:
        return declared
    return tuple(_dense_strides(data.shape, range(len(data.shape))))


def is_laid_out(data, fmt) -> bool:
    """Whether the array's strides are `fmt`'s (dims of size 1 may have any stride, as in
    torch); a tensor of another rank is not channels-last."""
    shape, strides = data.shape, strides_of(data)
    if fmt in _ORDERS:
        rank, order = _ORDERS[fmt]
        if len(shape) != rank:
            return False
    else:
        if not data.size:  # an empty tensor is contiguous whatever its strides, as in torch
            return True
        order = range(len(shape))
    expected = 1
    for dim in reversed(tuple(order)):
        if shape[dim] != 1:
            if strides[dim] != expected:
                return False
            expected *= shape[dim]
    return True


def laid_out(data: np.ndarray, order) -> np.ndarray:
    """A copy of data with its dims in memory in `order` (outermost first), with torch's
    strides (a dim of size 1 too has the step of the dims inside it)."""
    stored = np.ascontiguousarray(data.transpose(order))
    steps = [step * data.itemsize for step in _dense_strides(data.shape, order)]
    return np.lib.stride_tricks.as_strided(stored, data.shape, steps)


def suggested_format(data):
    """torch's suggest_memory_format: channels_last (or channels_last_3d) where the strides
    order the dims as it does, the ambiguous cases (size-1 dims) counting as contiguous."""
    for fmt, (rank, order) in _ORDERS.items():
        if data.ndim != rank:
            continue
        shape, strides = data.shape, strides_of(data)
        if strides[1] == 0:
            return contiguous_format
        smallest = 0
        # torch's walk from the innermost dim of the format outwards (c10's
        # is_channels_last_strides_2d_s4 and _3d_s5).
        for dim in (1, *reversed(order[1:-1]), 0):
            if shape[dim] == 0 or strides[dim] < smallest or (
                    dim == 0 and smallest == strides[1]):
                return contiguous_format
            smallest = strides[dim] * (shape[dim] if shape[dim] > 1 else 1)
        return fmt
    return contiguous_format


def preserved_order(data):
    """The memory order of data's dims when it is dense and non-overlapping and not in the
    contiguous layout (torch's preserve_format keeps its strides), else None."""
    if data.__class__ is not np.ndarray or data.ndim < 2 or (
            data.flags.c_contiguous and 1 not in data.shape):  # the common case, at once
        return None
    if data.ndim not in FORMAT_RANKS and data.nbytes:
        # Gaps between the elements (a slice): not dense, and no channels-last format of this
        # rank for suggested_format to find, so the contiguous layout, at once. (A loop: a
        # generator's sum cost a third of a small randn_like of a crop.)
        span = 0
        for n, step in zip(data.shape, data.strides):
            span += (n - 1) * (step if step > 0 else -step)
        if span >= data.nbytes:
            return None
    strides = strides_of(data)
    if list(strides) == _dense_strides(data.shape, range(data.ndim)):
        return None
    order = sorted(range(data.ndim), key=lambda dim: -strides[dim])
    dense = _dense_strides(data.shape, order)
    if all(size == 1 or stride == want
           for size, stride, want in zip(data.shape, strides, dense, strict=True)):
        return tuple(order)
    fmt = suggested_format(data)
    return order_of(fmt, data.ndim)


def layout_for(fmt, source_data, ndim: int):
    """The memory order a result in format `fmt` takes (preserve_format: source_data's own),
    or None for the contiguous one."""
    if fmt is None or fmt is preserve_format:
        return preserved_order(source_data) if source_data is not None else None
    return order_of(fmt, ndim)


def is_dense(data) -> bool:
    """torch's is_non_overlapping_and_dense: the elements fill a block of memory without gaps
    or overlaps, in some order of the dims (dims of size 1 may have any stride). A reversed
    dim (a negative NumPy stride, which torch has no form of) is not."""
    if data.__class__ is not np.ndarray or data.flags.c_contiguous:
        return True
    shape, strides = data.shape, strides_of(data)
    expected = 1
    for dim in sorted((dim for dim in range(data.ndim) if shape[dim] != 1),
                      key=lambda dim: strides[dim]):
        if strides[dim] != expected:
            return False
        expected *= shape[dim]
    return True


def obeys_grad_layout(grad, param) -> bool:
    """torch's gradient layout contract (autograd's obeys_layout_contract): a .grad of a dense
    parameter has the parameter's strides (in the dims of size above 1; no dim of stride 0),
    of any other parameter, the contiguous layout."""
    if grad.__class__ is not np.ndarray or param.__class__ is not np.ndarray:
        return True  # a device array: the device's tensors are contiguous
    if not is_dense(param):
        return grad.flags.c_contiguous
    if grad.strides == param.strides and grad.itemsize == param.itemsize:
        return True
    itemsize = grad.itemsize
    return all(step == want * itemsize if size != 1 else step != 0
               for size, step, want in zip(grad.shape, grad.strides, strides_of(param)))


def new_grad_array(grad, param, owned: bool = False):
    """The array of a new .grad of `param` from a gradient array, laid out as torch's
    AccumulateGrad lays it out: the gradient itself when it obeys the layout contract
    (obeys_grad_layout; a copy in its own layout unless `owned`: made for this .grad alone),
    else a copy with the parameter's strides when the parameter is dense, else a contiguous
    copy (torch's clone_obey_contract)."""
    if grad.__class__ is not np.ndarray or param.__class__ is not np.ndarray:
        return grad if owned else grad.copy()
    if grad.flags.c_contiguous and param.flags.c_contiguous and grad.shape == param.shape:
        return grad if owned else grad.copy()  # the common case: both row-major
    if obeys_grad_layout(grad, param):
        return grad if owned else np.array(grad, order="K", copy=True)
    strides = strides_of(param)
    if not is_dense(param) or list(strides) == _dense_strides(param.shape, range(param.ndim)):
        return np.array(grad, order="C", copy=True)
    buffer = np.empty(grad.size, dtype=grad.dtype)
    result = np.lib.stride_tricks.as_strided(
        buffer, grad.shape, tuple(step * grad.itemsize for step in strides))
    np.copyto(result, grad)
    return result
