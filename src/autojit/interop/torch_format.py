"""torch.save's file format, read and written without torch: autojit.save's default format,
and its writer (save_torch; the reader is torch_format_reader.py).

A file is a zip archive (stored, not compressed) whose entries sit in one folder (`archive/`
when autojit writes it; torch names it after the file):

- `data.pkl`: the saved object, pickled (protocol 2). A tensor is the call
  `torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
  OrderedDict())`, a Parameter `torch._utils._rebuild_parameter(tensor, requires_grad,
  OrderedDict())`; a storage is the persistent id `('storage', torch.FloatStorage, key,
  location, numel)`, whose bytes are the entry `data/<key>`;
- `byteorder` (`little`), `version` (`3`), `.format_version` (`1`) and `.storage_alignment`
  (`64`): each entry's data starts at a multiple of 64 bytes, as torch's do.

An object that is not data (a whole module, a NumPy array) is pickled by Python's pickler instead
(object_pickle.py), its tensors written the same way, and read back only with weights_only=False.
Tensors that are views of one NumPy array share one storage, with their offsets and strides, and
load as views of one array again. Reading is torch_format_reader.py's: through pickle_reader.py,
whose allow-list there holds torch's rebuild functions, storage types, dtypes, `torch.Size`,
`torch.device` and plain containers, and nothing that runs code. Older files are read too: torch's
format before the zip archive (`_use_new_zipfile_serialization=False`, a sequence of pickles
followed by the storages' bytes). bfloat16 is stored as torch stores it (two bytes an element, the
high half of the float32 autojit holds) and loads as autojit.bfloat16. torch's dtypes that autojit
lacks are widened (the unsigned integers wider than uint8 to int64, with a warning).
"""

from __future__ import annotations

import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np

from ..tensor import dtypes
from ..tensor.device import device
from ..tensor.tensor import Size, Tensor
from . import object_pickle
from .pickle_writer import Call, Global, PersistentId, write_pickle

__all__ = ["save_torch", "SPARSE_LAYOUTS", "TENSOR_CLASSES", "NotData"]

_ALIGNMENT = 64
# torch's dtypes: name -> (NumPy dtype of the stored bytes, the storage class torch pickles;
# None for the dtypes torch has no typed storage class of, whose tensors it writes as
# _rebuild_tensor_v3 calls naming the dtype over an UntypedStorage of bytes).
_TORCH_DTYPES = {
    "float32": ("<f4", "FloatStorage"), "float64": ("<f8", "DoubleStorage"),
    "float16": ("<f2", "HalfStorage"), "bfloat16": ("<u2", "BFloat16Storage"),
    "int64": ("<i8", "LongStorage"), "int32": ("<i4", "IntStorage"),
    "int16": ("<i2", "ShortStorage"), "int8": ("i1", "CharStorage"),
    "uint8": ("u1", "ByteStorage"), "bool": ("?", "BoolStorage"),
    "complex64": ("<c8", "ComplexFloatStorage"), "complex128": ("<c16", "ComplexDoubleStorage"),
    "uint16": ("<u2", None), "uint32": ("<u4", None), "uint64": ("<u8", None),
    "complex32": ("<f2", None),  # pairs of float16 parts, as torch stores complex32
}
_STORAGE_DTYPE = {storage: name for name, (_, storage) in _TORCH_DTYPES.items() if storage}
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001

# Tensor classes whose kind torch's files record: serialization.py's registry (nn/parameter.py
# registers Parameter as "parameter"), shared here.
TENSOR_CLASSES: dict = {}
# Sparse layouts torch's files hold, by layout name: (the parts torch pickles of a tensor,
# the function that builds one of them), registered by ops/sparse (a layer above this one).
SPARSE_LAYOUTS: dict = {}


# ---- writing ----------------------------------------------------------------------------------

class _Storage:
    """One storage being written: the contiguous array whose bytes are the entry."""

    def __init__(self, key: str, array: np.ndarray, location: str):
        self.key, self.array, self.location = key, array, location
        self.untyped = False  # an UntypedStorage: its size counted in bytes


class _TensorWriter:
    """Turns tensors into rebuild calls, collecting the storages they live in."""

    def __init__(self, legacy: bool = False):
        self.legacy = legacy  # torch's format before the zip archive: a sixth id field
        self.storages: dict[tuple, _Storage] = {}  # (id(root array), dtype) -> storage
        self.roots: list = []  # the root arrays, kept alive so their ids stay theirs

    def __call__(self, value, where: str) -> Call:
        if isinstance(value, Tensor):
            return self.tensor(value, where)
        if isinstance(value, dtypes.DType):
            return Global("torch", value.name)  # read back as the dtype
        if isinstance(value, device):
            return Call(Global("torch", "device"), (str(value),))
        if isinstance(value, (np.bool_, np.integer, np.floating)):
            return value.item()  # as the Python scalar
        if isinstance(value, Size):
            return Call(Global("torch", "Size"), (tuple(value),))
        # Subclasses of the plain containers (defaultdict, a named tuple) are saved as the
        # container: torch.load(weights_only=True) would refuse their classes.
        for plain in (OrderedDict, dict, list, tuple):
            if isinstance(value, plain):
                return plain(value)
        raise NotData(f"autojit.save: {type(value).__name__} (at {where}) is not data")

    def writes(self, value: Tensor) -> bool:
        """Whether value is written as torch's rebuild call: a Tensor or Parameter with data
        (an uninitialized parameter, or a Tensor subclass of the user's, pickles as itself)."""
        data = value._payload
        kind = value.__class__
        if value.layout.name in SPARSE_LAYOUTS:
            return True
        return (kind is Tensor or kind in TENSOR_CLASSES.values()) and (
            data is None or data.__class__ is np.ndarray or hasattr(data, "device_index"))

    def tensor(self, value: Tensor, where: str) -> Call:
        if value._payload is None:
            raise RuntimeError(f"autojit.save: the tensor at {where} is symbolic (it is being "
                               "traced); save outside the compiled function")
        if not self.writes(value):
            raise NotData(f"autojit.save: a {type(value).__name__} (at {where}) is not data")
        sparse = SPARSE_LAYOUTS.get(value.layout.name)
        if sparse is not None:  # torch's call: the layout and the dense parts
            parts = tuple(self(part, where) if not isinstance(part, bool) else part
                          for part in sparse[0](value))
            layout = Call(Global("torch.serialization", "_get_layout"),
                          (f"torch.{value.layout.name}",))
            return Call(Global("torch._utils", "_rebuild_sparse_tensor"), (layout, parts))
        name = value.dtype.name
        storage, offset, stride = self.storage_of(value, name)
        storage_class = _TORCH_DTYPES[name][1]
        if storage_class is None:  # bytes, their dtype named by the rebuild call (uint64)
            storage.untyped = True
            persistent = ("storage", Global("torch.storage", "UntypedStorage"), storage.key,
                          storage.location, int(storage.array.nbytes))
        else:
            persistent = ("storage", Global("torch", storage_class), storage.key,
                          storage.location, int(storage.array.size))
        persistent = PersistentId(persistent + (None,) if self.legacy else persistent)
        arguments = (persistent, offset, tuple(value.shape), stride, bool(value.requires_grad),
                     Call(Global("collections", "OrderedDict"), ()))
        rebuilt = Call(Global("torch._utils", "_rebuild_tensor_v2"), arguments) \
            if storage_class is not None else \
            Call(Global("torch._utils", "_rebuild_tensor_v3"), (*arguments, Global("torch", name)))
        for flag, cls in TENSOR_CLASSES.items():
            if flag == "parameter" and isinstance(value, cls):
                return Call(Global("torch._utils", "_rebuild_parameter"),
                            (rebuilt, bool(value.requires_grad),
                             Call(Global("collections", "OrderedDict"), ())))
        return rebuilt

    def storage_of(self, value: Tensor, name: str) -> tuple[_Storage, int, tuple]:
        """The storage holding value's data, the offset into it and the strides, in elements."""
        data = value._payload
        if name == "bfloat16":  # float32 values rounded to bfloat16: their high halves
            host = data if data.__class__ is np.ndarray else value._host("save")
            bits = np.ascontiguousarray(host, dtype=np.float32).view(np.uint32) >> 16
            return self.new_storage(bits.astype("<u2").reshape(-1), "cpu"), 0, \
                _contiguous_strides(value.shape)
        if name == "complex32":  # complex64 holding float16 parts: the parts, as float16
            parts = np.ascontiguousarray(data, dtype=np.complex64).reshape(-1).view(np.float32)
            return self.new_storage(parts.astype("<f2"), "cpu"), 0, \
                _contiguous_strides(value.shape)
        if data.__class__ is not np.ndarray:  # a GPU tensor: its own storage, copied
            return self.new_storage(value._host("save"), f"cuda:{value.device.index or 0}"), \
                0, _contiguous_strides(value.shape)
        root = data
        while isinstance(root.base, np.ndarray):
            root = root.base
        placed = _place_in(data, root)
        if placed is None:  # not expressible as a view of its base: stored on its own
            return self.new_storage(np.ascontiguousarray(data), "cpu", data), 0, \
                _contiguous_strides(data.shape)
        key = (id(root), root.dtype.str)
        storage = self.storages.get(key)
        if storage is None:
            storage = self.new_storage(root.reshape(-1), "cpu", root)
        return (storage,) + placed

    def new_storage(self, array: np.ndarray, location: str, root=None) -> _Storage:
        storage = _Storage(str(len(self.storages)), array, location)
        root = array if root is None else root
        self.roots.append(root)
        self.storages[(id(root), root.dtype.str)] = storage
        return storage


def _contiguous_strides(shape) -> tuple:
    strides, step = [], 1
    for size in reversed(tuple(shape)):
        strides.append(step)
        step *= max(int(size), 1)
    return tuple(reversed(strides))


def _place_in(data: np.ndarray, root: np.ndarray):
    """(offset, strides) in elements of data within the C-contiguous root, or None."""
    if root.dtype != data.dtype or not root.flags.c_contiguous or data.size == 0:
        return None
    itemsize = data.itemsize
    start = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if start % itemsize:
        return None
    strides = []
    for size, stride, contiguous in zip(data.shape, data.strides,
                                        _contiguous_strides(data.shape), strict=True):
        if size == 1:  # any stride is the same for one element: torch's contiguous one
            stride = contiguous * itemsize
        if stride < 0 or stride % itemsize:
            return None
        strides.append(stride // itemsize)
    return start // itemsize, tuple(strides)


def _bytes_of(array: np.ndarray) -> memoryview:
    """The array's elements as bytes, without a copy when it is contiguous."""
    return memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8))


def _aligned_entry(archive: zipfile.ZipFile, name: str, data, handle) -> None:
    """Write one stored entry whose data starts at a multiple of _ALIGNMENT in the file."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    large = len(data) >= zipfile.ZIP64_LIMIT
    header = 30 + len(name.encode("utf-8")) + 4 + (20 if large else 0)
    padding = -(handle.tell() + header) % _ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", padding) + b"Z" * padding  # torch's padding field
    with archive.open(info, "w", force_zip64=large) as entry:
        entry.write(data)


class NotData(TypeError):
    """An object the data-only pickle writer does not write: the whole object is then pickled
    by Python's pickler (object_pickle.py)."""


def save_torch(obj, handle, protocol: int = 2, legacy: bool = False) -> None:
    """Write obj in torch's format (the zip archive, or with `legacy` the format before it).
    Data (tensors, containers, numbers, strings) is written by autojit's own writer, so that
    torch.load(weights_only=True) reads it; anything else by Python's pickler, as torch.save
    writes it (object_pickle.py)."""
    tensors = _TensorWriter(legacy)
    try:
        pickled = write_pickle(obj, protocol, tensors)
    except NotData:
        tensors = _TensorWriter(legacy)
        pickled = object_pickle.dumps(obj, protocol, tensors)
    if legacy:
        _save_legacy(pickled, tensors, handle, protocol)
        return
    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED) as archive:
        _aligned_entry(archive, "archive/data.pkl", pickled, handle)
        _aligned_entry(archive, "archive/.format_version", b"1", handle)
        _aligned_entry(archive, "archive/.storage_alignment", b"64", handle)
        _aligned_entry(archive, "archive/byteorder", sys.byteorder.encode(), handle)
        for storage in tensors.storages.values():
            _aligned_entry(archive, f"archive/data/{storage.key}",
                           _bytes_of(storage.array), handle)
        _aligned_entry(archive, "archive/version", b"3\n", handle)


def _save_legacy(pickled: bytes, tensors: _TensorWriter, handle, protocol: int) -> None:
    """torch's format before 1.6: header pickles, the object, the storage keys, their bytes."""
    def small_pickle(value) -> bytes:
        return write_pickle(value, protocol, tensors)

    handle.write(small_pickle(_LEGACY_MAGIC))
    handle.write(small_pickle(_LEGACY_PROTOCOL))
    handle.write(small_pickle({"protocol_version": _LEGACY_PROTOCOL,
                               "little_endian": sys.byteorder == "little",
                               "type_sizes": {"short": 2, "int": 4, "long": 4}}))
    handle.write(pickled)
    storages = list(tensors.storages.values())
    handle.write(small_pickle([storage.key for storage in storages]))
    for storage in storages:
        array = np.ascontiguousarray(storage.array)
        handle.write(struct.pack("<q", array.nbytes if storage.untyped else array.size))
        handle.write(_bytes_of(array))
