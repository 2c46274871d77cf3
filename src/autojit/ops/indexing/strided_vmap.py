"""as_strided under vmap: torch's checks of an as_strided call on a batched tensor, and where
the values of each example come from (scatter_views.py's as_strided calls both).

Under vmap torch runs `x.as_strided(size, stride, offset)` on the physical tensor, whose
batch dims keep their own strides: example i reads the memory at `offset + i * batch_stride`
onwards. Before that it checks that each example stays inside the memory its slice of the
physical tensor can reach (`[base, base + extent]`, base being the physical tensor's storage
offset), and torch's first vmap (torch._vmap_internals._vmap) also that the batch dims are
the outermost in memory. Forward AD's as_strided runs it on the tangent too, so a tangent
batched by vmap is checked the same way.

An example whose elements fill the memory its slice reaches (dense, in some order of its
dims) is its own storage: the result is read from it in memory order, with autojit ops on the
logical tensor, so autograd and forward AD at the vmap level see it. Any other example (one
with gaps, or with dims that overlap) may read memory outside its elements, even another
example's: that result is read from the physical tensor's storage, as torch's.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor.state import state
from ...tensor.tensor import Tensor
from .. import layout, storage
from ..batching import batched


def physical_layout(x: Tensor):
    """(the tensor under every vmap level of batched x, its levels outermost first), or None
    where it has no CPU memory to read the strides of (symbolic while tracing, on a device)."""
    levels = []
    physical = x
    while physical._batched:
        levels.insert(0, physical._value.level)
        physical = physical._value.physical
    if physical._payload.__class__ is not np.ndarray:
        return None
    return physical, levels


def _reach(size, stride, offset: int):
    """One past the last memory position a (size, stride) tensor at `offset` reaches (torch's
    maximum_indexable_location), or None for an empty one."""
    if 0 in size:
        return None
    return offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))


def check(x: Tensor, size: tuple, stride: tuple, storage_offset):
    """torch's refusals of `x.as_strided(size, stride, storage_offset)` for a batched x; returns
    (physical tensor, levels, its storage offset), or None where x has no CPU memory."""
    found = physical_layout(x)
    if found is None:
        return None
    physical, levels = found
    dims = len(levels)
    _, base, strides = storage._layout(physical)
    legacy = state.vmap_randomness == "legacy"
    batch, example = strides[:dims], strides[dims:]
    if legacy and example and min(batch) < max(example):
        raise RuntimeError(
            "vmap: Calling Tensor.as_strided is not supported unless the batch dims being "
            "vmapped over are at the front of the tensor (in memory layout). When they are not "
            "at the front of the tensor this operation can be error prone so we actively "
            "discourage it; please file us a bug report and/or try to express the as_strided "
            "operation in terms of PyTorch view operations")
    offset = base if storage_offset is None else int(storage_offset)
    reach = _reach(size, stride, offset)
    if reach is None:
        return physical, levels, base
    # torch's first vmap writes its message without some of the second's spaces
    gap, space = ("", "") if legacy else (" ", " ")
    call = (f"result = tensor.as_strided({list(size)},{gap}{list(stride)},{gap}{offset})"
            f"{space}can access memory outside of `tensor`. ")
    ending = (f"This is not supported inside of vmap, please try to{space}rewrite the "
              "`as_strided` call as a sequence of PyTorch view operations")
    extent = _reach(tuple(physical.shape)[dims:], example, base)
    if extent is None:
        raise RuntimeError(call + "`tensor` has no storage but the passed-in (size, stride, "
                           "storage_offset) imply a result with some storage. This is not "
                           "supported inside of vmap, please try to rewrite the `as_strided` "
                           "call as a sequence of PyTorch view operations")
    if reach > extent or offset < base:
        raise RuntimeError(call + f"`result` can access some{space}memory in range [{offset}, "
                           f"{reach}], but `tensor` can only access some memory in range "
                           f"[{base}, {extent}]. " + ending)
    return physical, levels, base


def example_storage(x: Tensor, physical: Tensor, dims: int):
    """The elements of each example of batched x in memory order, a batched vector: the
    example's storage where its elements fill the memory its slice reaches; None otherwise."""
    shape = tuple(physical.shape)[dims:]
    strides = storage._layout(physical)[2][dims:]
    order = sorted(range(len(shape)), key=lambda d: -strides[d])
    expected = 1
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != expected:
            return None
        expected *= shape[d]
    if math.prod(shape) == 0:
        return None
    return layout.reshape(layout.permute(x, order), -1)


def rebatched(physical: Tensor, levels: list) -> Tensor:
    """A physical result, its batch dims first (outermost level first), batched again at
    `levels`."""
    for level in levels:
        physical = batched(physical, level)
    return physical
