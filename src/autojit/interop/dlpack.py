"""DLPack and the CUDA Array Interface: zero-copy exchange of tensors with other libraries.

- CPU tensors export through NumPy's DLPack support: `Tensor.__dlpack__` hands out the capsule
  of the ndarray in `_payload`, so `np.from_dlpack(t)` and `torch.from_dlpack(t)` share memory.
- CUDA tensors export a capsule built here (dlpack_capsule.py: DLPack's structures in ctypes)
  around the device buffer, so `torch.from_dlpack(t)` and `cupy.from_dlpack(t)` share it; they
  also expose `__cuda_array_interface__` (numba's device array's, with the tensor's shape).
- `from_dlpack(obj)` takes a CPU DLPack exporter (NumPy arrays, torch CPU tensors) through
  `np.from_dlpack`, a CUDA DLPack exporter (torch CUDA tensors, CuPy arrays) through its
  capsule, an object with only `__cuda_array_interface__` through `numba.cuda.as_cuda_array`,
  and a bare DLPack capsule; each result shares memory with `obj`.

Streams: autojit launches its kernels on the legacy default stream. An export to a consumer on
another stream (`stream=2` or a stream handle) first waits for the device, so the consumer
never reads a buffer a kernel is still writing; an import asks the producer for the legacy
default stream (`stream=1`).

The CUDA half (exporting a device buffer, reading a CUDA capsule or array) is the CUDA
runtime's (autojit/cuda/dlpack.py), reached through the runtime registered with
tensor/device.py. ops/tensor_methods.py attaches `__dlpack__`, `__dlpack_device__` and
`__cuda_array_interface__` to Tensor; `autojit.from_dlpack` is this module's function. See
docs/cuda.md.
"""

from __future__ import annotations

import numpy as np

from ..tensor import dtypes
from ..tensor.device import runtime
from ..tensor.tensor import Tensor
from . import dlpack_capsule

CPU_DEVICE_TYPE = 1  # DLPack's kDLCPU
CUDA_DEVICE_TYPE = 2  # kDLCUDA


def check_exportable(x: Tensor) -> None:
    if x._dtype is dtypes.bfloat16:
        # Its storage is float32 (tensor/dtypes.py): there is no bfloat16 memory to share.
        raise BufferError("bfloat16 tensors cannot be exported: autojit stores their values as "
                          "float32; convert with .float() first")
    if x._dtype is dtypes.complex32:  # likewise: complex64 storage (docs/notes/complex32.md)
        raise BufferError("complex32 tensors cannot be exported: autojit stores their values "
                          "as complex64; convert with .cfloat() first")
    if x._requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if x._is_conj:
        # torch refuses it (its memory holds the values unconjugated); autojit's memory holds
        # them conjugated, but is refused alike, so that a program behaves as with torch.
        raise BufferError("Can't export tensors with the conjugate bit set")
    x._concrete("Tensor.__dlpack__()")


def dlpack(x: Tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Tensor.__dlpack__: a DLPack capsule sharing x's memory (or a copy's, with copy=True)."""
    check_exportable(x)
    data = x._payload
    if data.__class__ is np.ndarray:
        options = {"stream": stream}
        if max_version is not None:
            options["max_version"] = max_version
        if dl_device is not None:
            options["dl_device"] = dl_device
        if copy is not None:
            options["copy"] = copy
        return data.__dlpack__(**options)
    return runtime(x.device.type).dlpack_export(x, stream, max_version, dl_device, copy)


def cuda_array_interface(x: Tensor) -> dict:
    """Tensor.__cuda_array_interface__ (version 3) of a CUDA tensor."""
    if not x.is_cuda:
        raise AttributeError("__cuda_array_interface__ exists on CUDA tensors only")
    check_exportable(x)
    return runtime("cuda").cuda_array_interface(x)


def dlpack_device(x: Tensor) -> tuple:
    """Tensor.__dlpack_device__: (device type, index), 1 for the CPU and 2 for CUDA."""
    if x.is_cuda:
        return CUDA_DEVICE_TYPE, x._payload.device_index
    return CPU_DEVICE_TYPE, 0


def exact_dtype(numpy_dtype, what: str) -> dtypes.DType:
    found = dtypes._BY_NUMPY.get(np.dtype(numpy_dtype))
    if found is None:
        raise TypeError(f"from_dlpack: {what} of dtype {np.dtype(numpy_dtype)} cannot be shared "
                        "(autojit tensors hold float64, float32, float16, complex128, "
                        "complex64, int64, int32, int16, int8, uint64, uint32, uint16, uint8 or "
                        "bool)")
    return found


def from_dlpack(obj, *, device=None, copy=None) -> Tensor:
    """A tensor sharing memory with `obj`: a DLPack exporter (NumPy arrays, torch tensors, CuPy
    arrays), a DLPack capsule, or a CUDA array exposing only `__cuda_array_interface__`.
    `device`: where the tensor is to be (a copy where obj is elsewhere); `copy`: True for a
    copy always, False to refuse (BufferError) where a copy would be needed, None for a copy
    only where needed, as the array API's from_dlpack."""
    shared = _shared(obj)
    if device is not None:
        moved = shared.to(device)
        if moved is not shared:
            if copy is False:
                raise BufferError(f"from_dlpack: the tensor is on {shared.device}, and moving "
                                  f"it to {moved.device} needs a copy, which copy=False refuses")
            return moved
    return shared.clone() if copy else shared


def _shared(obj) -> Tensor:
    if isinstance(obj, Tensor):
        return Tensor._make(obj._concrete("from_dlpack()"), obj._dtype)
    if type(obj).__name__ == "PyCapsule":
        return _from_capsule(obj)
    device_type = None
    if hasattr(obj, "__dlpack_device__"):
        device_type = int(obj.__dlpack_device__()[0])
    if device_type == CPU_DEVICE_TYPE:
        array = np.from_dlpack(obj)
        return Tensor._make(array, exact_dtype(array.dtype, "an array"))
    if device_type == CUDA_DEVICE_TYPE and hasattr(obj, "__dlpack__"):
        try:
            capsule = obj.__dlpack__(stream=1, max_version=dlpack_capsule.VERSION)
        except TypeError:  # a producer older than DLPack 1.0's keywords
            capsule = obj.__dlpack__(stream=1)
        return _from_capsule(capsule)
    if hasattr(obj, "__cuda_array_interface__"):
        return runtime("cuda").cuda_array_import(obj)
    if device_type is None:
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or "
                        f"__cuda_array_interface__, got {type(obj).__name__}")
    raise _unsupported_device(device_type)


def _unsupported_device(device_type: int) -> BufferError:
    return BufferError(f"from_dlpack: DLPack device type {device_type} is not supported "
                       f"(autojit reads CPU ({CPU_DEVICE_TYPE}) and CUDA ({CUDA_DEVICE_TYPE}) "
                       "tensors)")


class _HostMemory:
    """A consumed CPU capsule seen through NumPy's array interface: the ndarray made from it
    keeps this object, and so the producer's memory, alive."""

    def __init__(self, imported: dlpack_capsule.Imported):
        itemsize = imported.dtype.itemsize
        self._imported = imported
        self.__array_interface__ = {
            "data": (imported.pointer, imported.read_only), "shape": imported.shape,
            "typestr": imported.dtype.str, "version": 3,
            "strides": None if imported.strides is None else
            tuple(stride * itemsize for stride in imported.strides)}


def _from_capsule(capsule) -> Tensor:
    device = dlpack_capsule.device_of(capsule)
    if device[0] not in (CPU_DEVICE_TYPE, CUDA_DEVICE_TYPE):
        raise _unsupported_device(device[0])
    imported = dlpack_capsule.take(capsule)
    if device[0] == CPU_DEVICE_TYPE:
        dtype = exact_dtype(imported.dtype, "an array")
        if 0 in imported.shape:
            return Tensor._make(np.empty(imported.shape, imported.dtype), dtype)
        return Tensor._make(np.asarray(_HostMemory(imported)), dtype)
    return runtime("cuda").dlpack_import(imported)
