"""What the factories (creation.py, random_factories.py) make of their arguments: a size given
as extents or as one sequence (`_size`), the device of a `_like` factory's result
(`_like_device`), and a fresh result laid out in a requested memory format (`_in_format`).
"""

from __future__ import annotations

import numpy as np

from .memory_format import (
    check_format,
    contiguous_format,
    laid_out,
    layout_for,
    preserve_format,
    preserved_order,
)
from .state import state
from .symbolic import as_size
from .tensor import Tensor


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    for extent in size:
        if extent.__class__ is not int:
            return tuple(_extent(s, position) for position, s in enumerate(size))
    return tuple(size)  # plain ints, as factories are mostly called


def _extent(value, position: int):
    """One extent of a factory's size: torch refuses a float or a string (`int()` made
    `rand(2.5)` a tensor of 2 elements); integer types and 0-d integer tensors are sizes."""
    if isinstance(value, (float, complex, str, bytes, np.floating, np.complexfloating)):
        raise TypeError(f"argument 'size' must be tuple of ints, but found element of type "
                        f"{type(value).__name__} at pos {position}")
    return as_size(value)


def _in_format(result: Tensor, memory_format, source, where: str) -> Tensor:
    """A fresh factory result laid out in `memory_format` (preserve_format: source's layout;
    tensor/memory_format.py), on the CPU; values are unchanged."""
    source_data = None if source is None else source._payload
    if memory_format is preserve_format and source_data.__class__ is np.ndarray and \
            source_data.flags.c_contiguous:
        return result  # contiguous in torch's sense (a size-1 dim's stride does not count)
    if source_data is None and source is not None and state.tracer is not None:
        # A traced tensor: laid out as eager lays it out (ir/eager_layout.py).
        source_data = state.tracer.eager_layout(source)
    if memory_format is contiguous_format or memory_format is preserve_format and (
            source is None or preserved_order(source_data) is None):
        return result  # the common cases, at once
    check_format(memory_format, where)
    data = result._payload
    if data.__class__ is np.ndarray:
        order = layout_for(memory_format, source_data, data.ndim)
        if order is not None:
            result._payload = laid_out(data, order)
    return result


def _like_device(x: Tensor, device):
    """The *_like factories keep x's device unless device= says otherwise (as torch does); a
    symbolic x's is eager's (the GPU of a traced call's tensors, ir/trace_devices.py)."""
    return x.device if device is None else device
