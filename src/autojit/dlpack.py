"""DLPack and the CUDA Array Interface: zero-copy exchange of tensors with other libraries.

- CPU tensors export through NumPy's DLPack support: `Tensor.__dlpack__` hands out the capsule
  of the ndarray in `_data`, so `np.from_dlpack(t)` and `torch.from_dlpack(t)` share memory.
- CUDA tensors export `__cuda_array_interface__` (numba's device array's, with the tensor's
  shape): CuPy (`cupy.asarray`), torch (`torch.as_tensor(t, device="cuda")`) and numba read it
  without copying. numba device arrays have no DLPack export, so `__dlpack__` on a CUDA tensor
  raises BufferError naming the interface to use instead.
- `from_dlpack(obj)` takes a CPU DLPack exporter (NumPy arrays, torch CPU tensors) through
  `np.from_dlpack`, and an object with `__cuda_array_interface__` (CuPy arrays, torch CUDA
  tensors) through `numba.cuda.as_cuda_array`; both share memory with `obj`.

tensor_methods.py attaches `__dlpack__`, `__dlpack_device__` and `__cuda_array_interface__` to
Tensor; `autojit.from_dlpack` is this module's function. See docs/cuda.md.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .tensor import Tensor

CPU_DEVICE_TYPE = 1  # DLPack's kDLCPU
CUDA_DEVICE_TYPE = 2  # kDLCUDA


def _check_exportable(x: Tensor) -> None:
    if x._requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    x._concrete("Tensor.__dlpack__()")


def dlpack(x: Tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Tensor.__dlpack__: a DLPack capsule sharing x's memory (CPU tensors)."""
    _check_exportable(x)
    data = x._data
    if data.__class__ is not np.ndarray:
        raise BufferError(f"__dlpack__: a {x.device} tensor cannot be exported through DLPack "
                          "by autojit (its device arrays have no DLPack support); use its "
                          "__cuda_array_interface__ (cupy.asarray(t), torch.as_tensor(t, "
                          "device='cuda')) or copy it with .cpu()")
    options = {"stream": stream}
    if max_version is not None:
        options["max_version"] = max_version
    if dl_device is not None:
        options["dl_device"] = dl_device
    if copy is not None:
        options["copy"] = copy
    return data.__dlpack__(**options)


def dlpack_device(x: Tensor) -> tuple:
    """Tensor.__dlpack_device__: (device type, index), 1 for the CPU and 2 for CUDA."""
    if x.is_cuda:
        return CUDA_DEVICE_TYPE, x._data.device_index
    return CPU_DEVICE_TYPE, 0


def cuda_array_interface(x: Tensor) -> dict:
    """Tensor.__cuda_array_interface__ (version 3) of a CUDA tensor."""
    if not x.is_cuda:
        raise AttributeError("__cuda_array_interface__ exists on CUDA tensors only")
    _check_exportable(x)
    from .cuda import is_simulator

    if is_simulator():
        raise AttributeError("__cuda_array_interface__: Numba's CUDA simulator has no device "
                             "pointers to share")
    data = x._data
    interface = dict(data.flat.__cuda_array_interface__)
    interface["shape"] = tuple(data.shape)
    interface["strides"] = None  # C-contiguous
    interface["version"] = 3
    return interface


def _exact_dtype(numpy_dtype, what: str) -> dtypes.DType:
    found = dtypes._BY_NUMPY.get(np.dtype(numpy_dtype))
    if found is None:
        raise TypeError(f"from_dlpack: {what} of dtype {np.dtype(numpy_dtype)} cannot be shared "
                        "(autojit tensors hold float64, float32, float16, int64, int32 or bool)")
    return found


def from_dlpack(obj) -> Tensor:
    """A tensor sharing memory with `obj`: a DLPack exporter on the CPU (NumPy arrays, torch
    CPU tensors), or a CUDA array exposing `__cuda_array_interface__` (CuPy, torch CUDA)."""
    if isinstance(obj, Tensor):
        return Tensor._make(obj._concrete("from_dlpack()"), obj._dtype)
    device_type = None
    if hasattr(obj, "__dlpack_device__"):
        device_type = int(obj.__dlpack_device__()[0])
    if device_type == CPU_DEVICE_TYPE:
        array = np.from_dlpack(obj)
        return Tensor._make(array, _exact_dtype(array.dtype, "an array"))
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cuda_array(obj)
    if device_type is None:
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or "
                        f"__cuda_array_interface__, got {type(obj).__name__}")
    raise BufferError(f"from_dlpack: DLPack device type {device_type} is not supported (autojit "
                      "reads CPU DLPack capsules, and CUDA arrays through "
                      "__cuda_array_interface__)")


def _from_cuda_array(obj) -> Tensor:
    from .cuda import driver
    from .cuda.array import CudaArray

    device_array = driver().as_cuda_array(obj)
    dtype = _exact_dtype(device_array.dtype, "a CUDA array")
    if not device_array.is_c_contiguous():
        raise BufferError("from_dlpack: the CUDA array is not C-contiguous; autojit shares only "
                          "contiguous device memory (make it contiguous first)")
    data = CudaArray.wrap(device_array.reshape(device_array.size), device_array.shape,
                          owner=obj)
    return Tensor._make(data, dtype)
