"""Tensor's conversion methods, attached to the Tensor class on import (tensor_methods.py
imports this module): to, cuda and cpu, the dtype methods (float, double, half, long, ...),
type_as, __dlpack__ and __dlpack_device__, __cuda_array_interface__, __dir__, and contiguous,
is_contiguous, stride, share_memory_ and is_shared.
"""

from __future__ import annotations

from ..interop import dlpack as _dlpack
from ..tensor import dtypes, sharing
from ..tensor.device import DEVICE_TYPES, check_device, runtime
from ..tensor.state import state
from ..tensor.tensor import Tensor
from . import elementwise as ew
from . import memory_formats


def _is_device(value) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool) or \
        hasattr(value, "index") and hasattr(value, "type")


_DTYPES = (dtypes.DType,)


def _to_arguments(args: tuple, dtype, device, non_blocking, copy) -> tuple:
    """(dtype, device, copy) from torch's three forms: to(dtype, non_blocking, copy),
    to(device, dtype, non_blocking, copy) and to(other, non_blocking, copy)."""
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        dtype = other.dtype
        device = other.device  # a symbolic one's is eager's (ir/trace_devices.py)
    elif rest and isinstance(rest[0], _DTYPES):
        dtype = rest.pop(0)
    elif rest and (rest[0] is None or _is_device(rest[0])):  # to(None, ...): no device given
        given = rest.pop(0)
        device = device if given is None else given
        if isinstance(device, str) and device.split(":")[0] not in DEVICE_TYPES:
            raise RuntimeError(f"Invalid device string: '{device}'")
        if rest and (rest[0] is None or isinstance(rest[0], _DTYPES)):
            given = rest.pop(0)
            dtype = dtype if given is None else given
    flags = [non_blocking, copy]
    for position, value in enumerate(rest):
        if position >= 2 or not isinstance(value, bool):
            got = ", ".join(type(arg).__name__ if not isinstance(arg, dtypes.DType)
                            else "autojit.dtype" for arg in args)
            raise TypeError(f"to() received an invalid combination of arguments - got ({got})")
        flags[position] = value
    return dtype, device, flags[1]


def to(self, *args, dtype=None, device=None, non_blocking: bool = False, copy: bool = False,
       memory_format=None):
    """x converted to a dtype and/or moved to a device (or to another tensor's), as
    `to(dtype)`, `to(device, dtype)` or `to(other)`, and laid out in `memory_format`
    (autojit.channels_last, ...); x itself when nothing changes, unless copy=True."""
    dtype, device, copy = _to_arguments(args, dtype, device, non_blocking, copy)
    if memory_format is not None:
        memory_formats.check_format(memory_format, "to")
    result = self
    if device is not None:
        # A device copy by the runtime of the device that is not the CPU
        # (autojit/cuda/transfer.py): differentiable, the gradient goes back.
        device = check_device(device)
        if self.is_meta and device.type != "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        tracer = state.tracer
        if self._payload is None and tracer is not None and tracer.device is not None:
            # A graph value lives where the compiled graph runs, on the call's device; a copy
            # anywhere else needs the data, and breaks the graph.
            result = self if device == tracer.device else self._concrete("Tensor.to(device)")
        else:
            other = device if device.type != "cpu" else self.device
            result = self if other.type == "cpu" else runtime(other.type).move(self, device)
    if dtype is not None:
        result = ew.cast(result, dtypes.to_dtype(dtype))
    if copy and result is self:
        result = memory_formats.clone(result)
    return memory_formats.to_format(result, self, memory_format, copied=result is not self)


def _to_method(dtype):
    def method(self, memory_format=None):
        return to(self, dtype, memory_format=memory_format)

    method.__doc__ = (f"`x.to(autojit.{dtype.name}, memory_format=...)`: x converted to "
                      f"{dtype.name}, laid out in `memory_format` (preserve_format: as x).")
    return method


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """x copied to a GPU (`device`: an index or a device, the current GPU by default), laid
    out in `memory_format`."""
    if device is None:
        device = "cuda"
    elif isinstance(device, int):
        device = f"cuda:{device}"
    return to(self, device, memory_format=memory_format)


def cpu(self, memory_format=None):
    """x copied to host memory (laid out in `memory_format`); x itself when it is there
    already."""
    return to(self, "cpu", memory_format=memory_format)


def dlpack(self, **options):
    """The DLPack capsule of x's data, for another library's from_dlpack (no copy)."""
    return _dlpack.dlpack(self, **options)


def dlpack_device(self):
    """The DLPack (device type, index) of x's data."""
    return _dlpack.dlpack_device(self)


def type_as(self, other):
    """x converted to `other`'s dtype."""
    return to(self, other.dtype)


Tensor.to = to
Tensor.cuda = cuda
Tensor.cpu = cpu
Tensor.__dlpack__ = dlpack
Tensor.__dlpack_device__ = dlpack_device
Tensor.__cuda_array_interface__ = property(
    lambda self: _dlpack.cuda_array_interface(self),
    doc="The CUDA array interface of a GPU tensor's data, for Numba and CuPy (no copy).")
Tensor.type_as = type_as


def _dir(self) -> list:
    """The tensor's attribute names, as torch lists them: the CUDA array interface only where
    it can be read (a CUDA tensor)."""
    keys = object.__dir__(self)
    if not self.is_cuda and "__cuda_array_interface__" in keys:
        keys.remove("__cuda_array_interface__")
    return sorted(keys)


Tensor.__dir__ = _dir
# Tensor.float(), .double(), ...: the conversions torch names after their dtypes.
for _name, _dtype in (("float", dtypes.float32), ("double", dtypes.float64),
                      ("half", dtypes.float16), ("long", dtypes.int64), ("int", dtypes.int32),
                      ("short", dtypes.int16), ("char", dtypes.int8), ("byte", dtypes.uint8),
                      ("bool", dtypes.bool_), ("bfloat16", dtypes.bfloat16),
                      ("cfloat", dtypes.complex64), ("cdouble", dtypes.complex128),
                      ("chalf", dtypes.complex32)):
    _method = _to_method(_dtype)
    _method.__name__ = _method.__qualname__ = _name
    setattr(Tensor, _name, _method)
Tensor.contiguous = memory_formats.contiguous
Tensor.is_contiguous = memory_formats.is_contiguous
Tensor.stride = memory_formats.stride
Tensor.share_memory_ = sharing.share_memory_
Tensor.is_shared = sharing.is_shared
