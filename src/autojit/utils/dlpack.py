"""autojit.utils.dlpack: torch.utils.dlpack's names for exchanging tensors with other libraries
through DLPack (interop/dlpack.py holds the protocol): `to_dlpack(tensor)` gives a capsule,
`from_dlpack(obj)` takes one or any object with `__dlpack__`, and DLDeviceType numbers the
devices as the DLPack standard does."""

from __future__ import annotations

import enum

from ..interop.dlpack import from_dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device types, numbered as the standard (and torch) number them."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def to_dlpack(tensor):
    """A DLPack capsule sharing `tensor`'s memory (its `__dlpack__()`), for a library that takes
    capsules; one consumer may take it, once."""
    return tensor.__dlpack__()
