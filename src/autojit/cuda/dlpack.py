"""DLPack and `__cuda_array_interface__` for CUDA tensors: the device half of
interop/dlpack.py, which reaches it through this runtime (cuda/runtime.py).

An export wraps the device buffer in a DLPack capsule (interop/dlpack_capsule.py) or hands out
numba's array interface with the tensor's shape; an import wraps a CUDA capsule or a foreign
CUDA array in a CudaArray sharing its memory. Streams: autojit launches its kernels on the
legacy default stream, so an export to a consumer on another stream first waits for the device.
"""

from __future__ import annotations

import numpy as np

from ..interop import dlpack_capsule
from ..interop.dlpack import dlpack_device, exact_dtype
from ..tensor.tensor import Tensor
from .array import CudaArray
from .availability import driver, is_simulator


def export(x: Tensor, stream, max_version, dl_device, copy):
    """Tensor.__dlpack__ of a CUDA tensor: a capsule around its buffer (a copy's with copy)."""
    device = dlpack_device(x)
    if dl_device is not None and tuple(dl_device) != device:
        raise BufferError(f"__dlpack__: the tensor is on {x.device} (DLPack device {device}); "
                          f"it cannot be exported to DLPack device {tuple(dl_device)}; move it "
                          "with .to() first")
    if is_simulator():
        raise BufferError("__dlpack__: Numba's CUDA simulator has no device pointers to share")
    if stream == 0:
        raise ValueError("__dlpack__: stream 0 is ambiguous for CUDA; pass 1 for the legacy "
                         "default stream, 2 for the per-thread default stream, or a stream "
                         "handle")
    data = x._payload.copy() if copy else x._payload
    if stream not in (None, 1, -1):
        driver().synchronize()
    pointer = data.flat.__cuda_array_interface__["data"][0] if data.size else 0
    versioned = max_version is not None and tuple(max_version)[0] >= dlpack_capsule.VERSION[0]
    return dlpack_capsule.export(pointer, device, data.shape, data.dtype, data,
                                 versioned=versioned, copied=bool(copy))


def array_interface(x: Tensor) -> dict:
    """Tensor.__cuda_array_interface__ (version 3) of a CUDA tensor."""
    if is_simulator():
        raise AttributeError("__cuda_array_interface__: Numba's CUDA simulator has no device "
                             "pointers to share")
    data = x._payload
    interface = dict(data.flat.__cuda_array_interface__)
    interface["shape"] = tuple(data.shape)
    interface["strides"] = None  # C-contiguous
    interface["version"] = 3
    return interface


def import_capsule(imported: dlpack_capsule.Imported) -> Tensor:
    """A tensor sharing the device memory of a consumed CUDA DLPack capsule."""
    dtype = exact_dtype(imported.dtype, "a CUDA array")
    if not imported.is_c_contiguous():
        raise BufferError(f"from_dlpack: the CUDA tensor of shape {imported.shape} has strides "
                          f"{imported.strides}; autojit shares only C-contiguous device memory "
                          "(make it contiguous first)")
    if imported.read_only:
        raise BufferError("from_dlpack: the CUDA tensor is marked read-only by its producer; "
                          "autojit tensors are writable, so it cannot be shared (copy it first)")
    count = int(np.prod(imported.shape, dtype=np.int64))
    if count == 0:
        return Tensor._make(CudaArray(imported.shape, imported.dtype, imported.device[1]), dtype)
    flat = driver().from_cuda_array_interface(
        {"data": (imported.pointer, imported.read_only), "shape": (count,), "strides": None,
         "typestr": imported.dtype.str, "version": 3}, owner=imported, sync=False)
    data = CudaArray.wrap(flat, imported.shape, owner=imported, device_index=imported.device[1])
    return Tensor._make(data, dtype)


def import_array(obj) -> Tensor:
    """A tensor sharing the memory of an object exposing only `__cuda_array_interface__`."""
    device_array = driver().as_cuda_array(obj)
    dtype = exact_dtype(device_array.dtype, "a CUDA array")
    if not device_array.is_c_contiguous():
        raise BufferError("from_dlpack: the CUDA array is not C-contiguous; autojit shares only "
                          "contiguous device memory (make it contiguous first)")
    data = CudaArray.wrap(device_array.reshape(device_array.size), device_array.shape,
                          owner=obj)
    return Tensor._make(data, dtype)
