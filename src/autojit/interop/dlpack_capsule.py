"""DLPack's C structures in ctypes: building the capsule a tensor exports, and reading one.

dlpack.py uses this for CUDA tensors, whose device memory NumPy cannot export, and for raw
capsules handed to `from_dlpack`. The structures follow dlpack.h (v1.0):

- DLManagedTensor (capsule name "dltensor"), the form every consumer reads, and
  DLManagedTensorVersioned ("dltensor_versioned"), which a consumer asks for by passing
  `max_version=(1, ...)` to `__dlpack__`;
- a consumer takes the tensor by renaming the capsule "used_dltensor[_versioned]" and later
  calls the tensor's deleter; a capsule that dies unconsumed calls the deleter itself.

An exported tensor keeps its structures and the memory's owner in `_EXPORTS` until its deleter
runs, so the memory outlives the exporting Python object for as long as the consumer holds it.
Nothing here depends on the device: `pointer` is a host or a device address alike.
"""

from __future__ import annotations

import ctypes

import numpy as np

NAME = b"dltensor"
USED_NAME = b"used_dltensor"
VERSIONED_NAME = b"dltensor_versioned"
USED_VERSIONED_NAME = b"used_dltensor_versioned"
VERSION = (1, 0)
FLAG_READ_ONLY = 1
FLAG_IS_COPIED = 2

# kDLInt, kDLUInt, kDLFloat, kDLComplex, kDLBool
_TYPE_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_KINDS = {code: kind for kind, code in _TYPE_CODES.items()}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER)]
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion),
                                     ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                                     ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


def _python_function(name: str, result, *arguments):
    # Each its own prototype (PYFUNCTYPE keeps the GIL), so the raw-pointer form used inside
    # the capsule destructor does not change ctypes.pythonapi's shared attributes.
    return ctypes.PYFUNCTYPE(result, *arguments)((name, ctypes.pythonapi))


_capsule_new = _python_function("PyCapsule_New", ctypes.py_object, ctypes.c_void_p,
                                ctypes.c_char_p, ctypes.c_void_p)
_capsule_is_valid = _python_function("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object,
                                     ctypes.c_char_p)
_capsule_pointer = _python_function("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object,
                                    ctypes.c_char_p)
_capsule_set_name = _python_function("PyCapsule_SetName", ctypes.c_int, ctypes.py_object,
                                     ctypes.c_char_p)
_raw_capsule_name = _python_function("PyCapsule_GetName", ctypes.c_char_p, ctypes.c_void_p)
_raw_capsule_pointer = _python_function("PyCapsule_GetPointer", ctypes.c_void_p,
                                        ctypes.c_void_p, ctypes.c_char_p)

# address of a managed tensor we exported -> (structure, shape array, owner of the memory)
_EXPORTS: dict = {}


@DELETER
def _release_export(address):
    _EXPORTS.pop(address, None)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # A consumer renames the capsule when it takes the tensor; under the original name nobody
    # took it, and the capsule owns the export.
    name = _raw_capsule_name(capsule)
    if name in (NAME, VERSIONED_NAME):
        _EXPORTS.pop(_raw_capsule_pointer(capsule, name), None)


def data_type(dtype: np.dtype) -> DLDataType:
    dtype = np.dtype(dtype)
    return DLDataType(_TYPE_CODES[dtype.kind], dtype.itemsize * 8, 1)


def numpy_dtype(dl_type: DLDataType) -> np.dtype:
    kind = _KINDS.get(dl_type.code)
    width = 8 if kind == "b" else dl_type.bits
    widths = (64, 128) if kind == "c" else (8, 16, 32, 64)  # complex32 (chalf) has none
    if kind is None or dl_type.lanes != 1 or dl_type.bits != width or width not in widths:
        raise BufferError(f"from_dlpack: DLPack data type (code {dl_type.code}, "
                          f"{dl_type.bits} bits, {dl_type.lanes} lanes) has no autojit dtype")
    return np.dtype(f"{kind}{dl_type.bits // 8}") if kind != "b" else np.dtype(bool)


def export(pointer: int, device: tuple, shape: tuple, dtype, owner, *, versioned: bool,
           copied: bool = False):
    """A capsule describing C-contiguous memory at `pointer` on `device` (DLPack's
    (device type, index)); `owner` is kept alive until the consumer is done with it."""
    shape_array = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    tensor = DLTensor(pointer, DLDevice(*device), len(shape), data_type(dtype),
                      shape_array, None, 0)  # strides NULL: compact row-major
    if versioned:
        managed = DLManagedTensorVersioned(DLPackVersion(*VERSION), None, _release_export,
                                           FLAG_IS_COPIED if copied else 0, tensor)
        name = VERSIONED_NAME
    else:
        managed = DLManagedTensor(tensor, None, _release_export)
        name = NAME
    address = ctypes.addressof(managed)
    _EXPORTS[address] = (managed, shape_array, owner)
    return _capsule_new(address, name, ctypes.cast(_capsule_destructor, ctypes.c_void_p))


class Imported:
    """A DLPack tensor taken from a capsule: its memory, described, and the obligation to call
    the producer's deleter once nothing reads the memory any more (when this object dies)."""

    def __init__(self, address: int, versioned: bool):
        structure = DLManagedTensorVersioned if versioned else DLManagedTensor
        self._managed = structure.from_address(address)
        self._address = address
        tensor = self._managed.dl_tensor
        self.device = (int(tensor.device.device_type), int(tensor.device.device_id))
        self.dtype = numpy_dtype(tensor.dtype)
        self.shape = tuple(int(tensor.shape[axis]) for axis in range(tensor.ndim))
        self.strides = None if not tensor.strides else \
            tuple(int(tensor.strides[axis]) for axis in range(tensor.ndim))
        self.pointer = (tensor.data or 0) + int(tensor.byte_offset)
        self.read_only = bool(versioned and self._managed.flags & FLAG_READ_ONLY)

    def is_c_contiguous(self) -> bool:
        if self.strides is None:
            return True
        expected = 1
        for extent, stride in zip(reversed(self.shape), reversed(self.strides)):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True

    def __del__(self):
        deleter = self._managed.deleter
        if deleter:
            deleter(self._address)


def _unconsumed(capsule) -> tuple:
    """(address of the managed tensor, versioned) of an unconsumed DLPack capsule."""
    for name, versioned in ((NAME, False), (VERSIONED_NAME, True)):
        if _capsule_is_valid(capsule, name):
            return _capsule_pointer(capsule, name), versioned
    raise BufferError("from_dlpack: the capsule is not an unconsumed DLPack tensor (its name is "
                      "not 'dltensor' or 'dltensor_versioned'); a DLPack capsule can be "
                      "consumed only once")


def take(capsule) -> Imported:
    """Consume a "dltensor" or "dltensor_versioned" capsule (renaming it, as the protocol asks)."""
    address, versioned = _unconsumed(capsule)
    if versioned:
        major = DLManagedTensorVersioned.from_address(address).version.major
        if major != VERSION[0]:
            raise BufferError(f"from_dlpack: DLPack version {major}.x is not supported "
                              f"(autojit reads {VERSION[0]}.x)")
    _capsule_set_name(capsule, USED_VERSIONED_NAME if versioned else USED_NAME)
    return Imported(address, versioned)


def device_of(capsule) -> tuple:
    """DLPack's (device type, index) of an unconsumed capsule, without consuming it."""
    address, versioned = _unconsumed(capsule)
    structure = DLManagedTensorVersioned if versioned else DLManagedTensor
    device = structure.from_address(address).dl_tensor.device
    return int(device.device_type), int(device.device_id)
