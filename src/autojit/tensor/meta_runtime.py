"""The meta device's runtime (tensor/device.py's RUNTIMES["meta"]), as cuda/runtime.py is CUDA's.

`check`, `from_host` and `move` of tensors onto the meta device (meta.py), and META, the device
itself. Registered when autojit.tensor is imported.
"""

from __future__ import annotations

import sys

from .device import register_runtime
from .meta import META, MetaArray, read_error  # noqa: F401 - META: device.check_device reads it
from .tensor import Tensor


def check(index) -> None:
    """Every meta device is usable (there is one, and it needs no hardware)."""


def from_host(array, index=None) -> MetaArray:
    """A meta array of array's shape and dtype (its values are dropped)."""
    return MetaArray(array.shape, array.dtype)


def move(x, target):
    """x on `target`: to the meta device, a tensor of x's shape and dtype (requiring grad when
    x does); off it, torch's error."""
    if target.type != "meta":
        raise read_error("Tensor.to")
    if x._payload.__class__ is MetaArray:
        return x
    moved = Tensor._make(MetaArray(x.shape, x._payload.dtype if x._payload is not None else
                                   x.dtype.numpy), x.dtype)
    if x.requires_grad:
        moved.requires_grad_(True)
    return moved


register_runtime("meta", sys.modules[__name__])
