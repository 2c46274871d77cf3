"""torch.save's file format, read and written without torch: autojit.save's default format.

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
load as views of one array again. Reading goes through pickle_reader.py, whose allow-list here holds
torch's rebuild functions, storage types, dtypes, `torch.Size`, `torch.device` and plain containers,
and nothing that runs code. Older files are read too: torch's format before the zip archive
(`_use_new_zipfile_serialization=False`, a sequence of pickles followed by the storages' bytes).
bfloat16 is stored as torch stores it (two bytes an element, the high half of the float32 autojit
holds) and loads as autojit.bfloat16. torch's dtypes that autojit lacks are widened (the unsigned
integers wider than uint8 to int64, with a warning).
"""

from __future__ import annotations

import io
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np

from ..tensor import dtypes
from ..tensor.device import CPU, device, runtime
from ..tensor.tensor import Size, Tensor
from . import object_pickle, safe_globals
from .pickle_reader import RestrictedUnpickler, UnpicklingError
from .pickle_writer import Call, Global, PersistentId, write_pickle

__all__ = ["save_torch", "load_torch_zip", "load_legacy", "torch_zip_folder",
           "TENSOR_CLASSES", "NotData"]

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
        data = value._data
        kind = value.__class__
        return (kind is Tensor or kind in TENSOR_CLASSES.values()) and (
            data is None or data.__class__ is np.ndarray or hasattr(data, "device_index"))

    def tensor(self, value: Tensor, where: str) -> Call:
        if value._data is None:
            raise RuntimeError(f"autojit.save: the tensor at {where} is symbolic (it is being "
                               "traced); save outside the compiled function")
        if not self.writes(value):
            raise NotData(f"autojit.save: a {type(value).__name__} (at {where}) is not data")
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
        data = value._data
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


# ---- reading ----------------------------------------------------------------------------------

# torch's message where a weights-only load meets what it refuses, the refusal after it.
WEIGHTS_ONLY_FAILED = (
    "Weights only load failed. This file can still be loaded, to do so you have one option, do "
    "it only if you trust the source of the checkpoint.\n\t(1) Re-running `autojit.load` with "
    "`weights_only` set to `False` will likely succeed, but it can result in arbitrary code "
    "execution. Do it only if you got the file from a trusted source.\n\tWeightsUnpickler "
    "error: {}\n\nautojit.load's weights_only=True reads tensors, Parameters, storages, "
    "dtypes, devices, torch.Size and plain containers (dict, OrderedDict, list, tuple, set, "
    "str, bytes and numbers), and the globals declared safe with "
    "autojit.serialization.add_safe_globals or safe_globals, for a file from a trusted source.")

class _StorageType:
    """What a global such as torch.FloatStorage becomes: the dtype of its elements."""

    def __init__(self, dtype_name: str):
        self.dtype_name = dtype_name


class _Marker:
    """torch.Tensor or torch.nn.Parameter named as the type in _rebuild_from_type_v2."""

    def __init__(self, name: str):
        self.name = name


class _LoadedStorage:
    def __init__(self, dtype_name: str, data: bytes, numel: int, location: str, byteorder: str):
        numpy_dtype = np.dtype(_TORCH_DTYPES[dtype_name][0])
        if byteorder != "little":
            numpy_dtype = numpy_dtype.newbyteorder(">")
        if len(data) < numel * numpy_dtype.itemsize:
            raise RuntimeError(f"autojit.load: a storage of {numel} elements of "
                               f"torch.{dtype_name} holds only {len(data)} bytes")
        self.raw = np.frombuffer(data, dtype=numpy_dtype, count=numel)
        self.dtype_name, self.location = dtype_name, location
        self.arrays: dict = {}  # the storage as autojit stores it, per autojit dtype

    def as_dtype(self, dtype_name: str) -> tuple[np.ndarray, dtypes.DType]:
        """The storage's elements read as dtype_name (a typed storage's own, or what an untyped
        storage's bytes hold), as a writable array in the dtype autojit loads them as."""
        found = self.arrays.get(dtype_name)
        if found is not None:
            return found
        raw = self.raw
        if dtype_name != self.dtype_name:  # an untyped storage's bytes
            wanted = np.dtype(_TORCH_DTYPES[dtype_name][0]).newbyteorder(raw.dtype.byteorder)
            raw = raw.view(np.uint8)[:raw.nbytes - raw.nbytes % wanted.itemsize].view(wanted)
        if dtype_name == "bfloat16":  # the high half of a float32, as autojit stores it
            array = (raw.astype(np.uint32) << 16).view(np.float32)
        elif dtype_name == "complex32":  # float16 parts, stored as complex64
            array = raw[:raw.size - raw.size % 2].astype(np.float32).view(np.complex64)
        else:
            array = raw.astype(np.dtype(_TORCH_DTYPES[dtype_name][0]).newbyteorder("="))
        found = self.arrays[dtype_name] = (array, dtypes.from_name(dtype_name))
        return found


class _TorchReader:
    """Rebuilds the objects of one torch-format pickle, its storages read through `record`."""

    def __init__(self, record, byteorder: str, map_location, legacy: bool = False):
        self.record, self.byteorder = record, byteorder
        self.map_location, self.legacy = map_location, legacy
        self.storages: dict[str, _LoadedStorage] = {}
        self.allowed = self.allow_list()

    def allow_list(self) -> dict:
        allowed = {
            "collections.OrderedDict": OrderedDict, "builtins.set": set,
            "builtins.frozenset": frozenset, "builtins.complex": complex,
            "builtins.bytearray": bytearray, "builtins.int": int, "builtins.float": float,
            "builtins.bool": bool, "_codecs.encode": _encode, "torch.Size": _size,
            "torch.device": _device, "torch.Tensor": _Marker("Tensor"),
            "torch.nn.parameter.Parameter": _Marker("Parameter"),
            "torch._utils._rebuild_tensor": self.rebuild_tensor,
            "torch._utils._rebuild_tensor_v2": self.rebuild_tensor_v2,
            "torch._utils._rebuild_tensor_v3": self.rebuild_tensor_v3,
            "torch._utils._rebuild_parameter": self.rebuild_parameter,
            "torch._utils._rebuild_parameter_with_state": self.rebuild_parameter,
            "torch._tensor._rebuild_from_type_v2": self.rebuild_from_type,
            "torch.UntypedStorage": _StorageType("uint8"),
            "torch.storage.UntypedStorage": _StorageType("uint8"),
        }
        for storage, name in _STORAGE_DTYPE.items():
            allowed[f"torch.{storage}"] = _StorageType(name)
        for name in _TORCH_DTYPES:
            allowed[f"torch.{name}"] = dtypes.from_name(name)
        return allowed

    def load(self, pickled: bytes, weights_only: bool = True, options: dict | None = None):
        if not weights_only:
            return object_pickle.FullUnpickler(io.BytesIO(pickled), self.allowed,
                                               self.persistent_load, **(options or {})).load()
        safe = safe_globals.allowed()  # the program's own classes it declared safe
        classes = tuple(value for value in safe.values() if isinstance(value, type))
        try:
            return RestrictedUnpickler(io.BytesIO(pickled), {**self.allowed, **safe},
                                       self.persistent_load, _builder(classes),
                                       _new_object(classes)).load()
        except UnpicklingError as error:
            raise UnpicklingError(WEIGHTS_ONLY_FAILED.format(error)) from None

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid or pid[0] != "storage" or \
                len(pid) not in (5, 6) or not isinstance(pid[1], _StorageType):
            raise UnpicklingError(f"autojit.load: unknown persistent id {pid!r}")
        storage_type, key, location, numel = pid[1:5]
        if len(pid) == 6 and pid[5] is not None:
            raise UnpicklingError("autojit.load: storage views of torch's oldest format are "
                                  "not supported")
        key = str(key)
        storage = self.storages.get(key)
        if storage is None:
            if storage_type.dtype_name not in _TORCH_DTYPES or not isinstance(numel, int) or \
                    numel < 0:
                raise UnpicklingError(f"autojit.load: bad storage size {numel!r}")
            storage = self.storages[key] = _LoadedStorage(
                storage_type.dtype_name, self.record(key, storage_type.dtype_name, numel),
                numel, str(location), self.byteorder)
        return storage

    # -- the rebuild functions the file's pickle calls --

    def rebuild_tensor(self, storage, storage_offset, size, stride):
        return self.rebuild_tensor_v3(storage, storage_offset, size, stride, False, None,
                                      None)

    def rebuild_tensor_v2(self, storage, storage_offset, size, stride, requires_grad,
                          backward_hooks, metadata=None):
        return self.rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad,
                                      backward_hooks, None)

    def rebuild_tensor_v3(self, storage, storage_offset, size, stride, requires_grad,
                          backward_hooks, dtype=None, metadata=None):
        if not isinstance(storage, _LoadedStorage):
            raise UnpicklingError("autojit.load: a tensor without a storage")
        name = storage.dtype_name if dtype is None else \
            (dtype.name if isinstance(dtype, dtypes.DType) else None)
        if name is None:
            raise UnpicklingError(f"autojit.load: bad tensor dtype {dtype!r}")
        array, autojit_dtype = storage.as_dtype(name)
        view = _strided(array, storage_offset, size, stride)
        target = self.target(storage.location)
        if target.type != "cpu":
            view = runtime("cuda").from_host(np.ascontiguousarray(view), target.index or 0)
        tensor = Tensor._make(view, autojit_dtype)
        if requires_grad:
            tensor.requires_grad_(True)
        return tensor

    def rebuild_parameter(self, data, requires_grad, backward_hooks, state=None):
        cls = TENSOR_CLASSES.get("parameter")
        if not isinstance(data, Tensor) or cls is None:
            raise UnpicklingError("autojit.load: a Parameter without a tensor")
        return cls(data, requires_grad=bool(requires_grad))

    def rebuild_from_type(self, function, new_type, args, state):
        if function not in (self.rebuild_tensor, self.rebuild_tensor_v2,
                            self.rebuild_tensor_v3, self.rebuild_parameter) or \
                not isinstance(new_type, _Marker) or not isinstance(args, tuple):
            raise UnpicklingError("autojit.load: a tensor subclass that is not Tensor or "
                                  "Parameter")
        tensor = function(*args)
        if new_type.name == "Parameter" and TENSOR_CLASSES.get("parameter") is not None:
            tensor = TENSOR_CLASSES["parameter"](tensor, requires_grad=tensor.requires_grad)
        _build(tensor, state)
        return tensor

    def target(self, location: str) -> device:
        """Where a storage saved at `location` loads, after map_location."""
        mapped = self.map_location
        if isinstance(mapped, dict):
            mapped = mapped.get(location, location)
        elif callable(mapped):
            mapped = location  # torch calls it with a storage; autojit's stay on the host
        chosen = device(str(mapped) if mapped is not None else location)
        if chosen.type == "cuda":
            try:
                runtime("cuda").check(chosen.index or 0)
            except Exception:
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but "
                    "autojit.cuda.is_available() is False. If you are running on a CPU-only "
                    "machine, please use autojit.load with map_location=autojit.device('cpu') "
                    "to map your storages to the CPU.") from None
        return chosen if chosen.type == "cuda" else CPU


def _strided(array: np.ndarray, offset, size, stride) -> np.ndarray:
    """A view of array as a tensor with these offset, sizes and strides (in elements), after
    checking that it stays inside the array."""
    if not (isinstance(offset, int) and isinstance(size, tuple) and isinstance(stride, tuple)
            and len(size) == len(stride)
            and all(isinstance(item, int) and item >= 0 for item in (offset, *size, *stride))):
        raise UnpicklingError(f"autojit.load: bad tensor geometry: offset {offset!r}, size "
                              f"{size!r}, stride {stride!r}")
    numel = int(np.prod(size, dtype=object)) if size else 1
    if numel:
        last = offset + sum((extent - 1) * step for extent, step in zip(size, stride,
                                                                         strict=True))
        if last >= array.size:
            raise UnpicklingError(f"autojit.load: a tensor of size {size} and stride {stride} "
                                  f"at offset {offset} reaches past its storage of "
                                  f"{array.size} elements")
    else:
        return np.zeros(size, dtype=array.dtype)
    itemsize = array.itemsize
    return np.lib.stride_tricks.as_strided(array[offset:], shape=size,
                                           strides=tuple(step * itemsize for step in stride))


def _build(obj, state) -> None:
    """BUILD as torch's weights-only reader allows it: attributes of an OrderedDict (a state
    dict's _metadata) or a tensor, never a private or special name."""
    if state is None or state == {} or state == ():
        return
    if isinstance(state, tuple) and len(state) == 2 and not state[1]:
        state = state[0]  # (dict state, slots state) with no slots
    if not isinstance(obj, (OrderedDict, Tensor)) or not isinstance(state, dict) or \
            any(not isinstance(key, str) or key.startswith("__") or
                (isinstance(obj, Tensor) and key.startswith("_")) for key in state):
        raise UnpicklingError(f"autojit.load: setting the state of a {type(obj).__name__} is "
                              "refused; autojit.load never runs code from a file")
    for key, value in state.items():
        setattr(obj, key, value)


def _builder(safe_classes: tuple):
    """BUILD: _build's, and the state of an object of a class declared safe (safe_globals.py),
    set by its __setstate__ or into its __dict__."""
    def build(obj, state) -> None:
        if not safe_classes or not isinstance(obj, safe_classes):
            _build(obj, state)
            return
        setstate = getattr(type(obj), "__setstate__", None)
        if setstate is not None:
            setstate(obj, state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            obj.__dict__.update(state)
        for key, value in (slots or {}).items():
            setattr(obj, key, value)

    return build


def _new_object(safe_classes: tuple):
    """NEWOBJ, of a class declared safe only."""
    def new_object(cls, args):
        if not (isinstance(cls, type) and cls in safe_classes):
            raise UnpicklingError(f"autojit.load: making an object of {cls!r} is refused; "
                                  "autojit.load never runs code from a file")
        return cls.__new__(cls, *args)

    return new_object


def _encode(text, encoding="utf-8"):
    if encoding not in ("latin1", "latin-1", "utf-8", "utf8", "ascii"):
        raise UnpicklingError(f"autojit.load: encoding {encoding!r} is refused")
    return text.encode(encoding)


def _size(dims=()):
    return Size(tuple(dims))


def _device(kind, index=None):
    return device(kind, index)


# ---- files --------------------------------------------------------------------------------

def torch_zip_folder(archive: zipfile.ZipFile) -> str | None:
    """The folder of a torch.save zip archive's entries ("archive/"), or None."""
    for name in archive.namelist():
        if name.endswith("data.pkl") and name.count("/") == 1:
            return name[:-len("data.pkl")]
    return None


def load_torch_zip(archive: zipfile.ZipFile, prefix: str, map_location,
                   weights_only: bool = True, options: dict | None = None):
    names = set(archive.namelist())
    if f"{prefix}constants.pkl" in names or f"{prefix}code/" in names or \
            any(name.startswith(f"{prefix}code/") for name in names):
        raise RuntimeError("autojit.load: this is a TorchScript archive (torch.jit.save), which "
                           "holds code; autojit reads files of torch.save")
    byteorder = "little"
    if f"{prefix}byteorder" in names:
        byteorder = archive.read(f"{prefix}byteorder").decode().strip()

    def record(key: str, dtype_name: str, numel: int) -> bytes:
        name = f"{prefix}data/{key}"
        if name not in names:
            raise RuntimeError(f"autojit.load: the archive has no entry {name}")
        return archive.read(name)

    return _TorchReader(record, byteorder, map_location).load(
        archive.read(f"{prefix}data.pkl"), weights_only, options)


def load_legacy(handle, map_location):
    """torch's format before the zip archive (see _save_legacy). The storages' bytes follow
    the object's pickle, so the pickle is read twice: first only to reach its end (rebuilding
    nothing), then, with the bytes in hand, for real."""
    def next_pickle():
        return RestrictedUnpickler(handle, {}).load()

    try:
        magic = next_pickle()
    except UnpicklingError as error:
        if "global" in str(error):
            raise UnpicklingError(WEIGHTS_ONLY_FAILED.format(error)) from None
        raise RuntimeError("autojit.load: not a file written by autojit.save or torch.save "
                           "(neither a zip archive nor a pickle)") from None
    if magic != _LEGACY_MAGIC:
        raise RuntimeError("autojit.load: not a file written by autojit.save or torch.save "
                           "(invalid magic number)")
    if next_pickle() != _LEGACY_PROTOCOL:
        raise RuntimeError("autojit.load: unsupported version of torch's legacy format")
    system = next_pickle()
    byteorder = "little" if not isinstance(system, dict) or \
        system.get("little_endian", True) else "big"
    start = handle.tell()
    contents: dict[str, bytes] = {}
    reader = _TorchReader(lambda key, dtype_name, numel: contents[key], byteorder,
                          map_location, legacy=True)
    skipping = dict(reader.allowed)
    for name in _REBUILDERS:
        skipping[name] = _ignore
    sizes: dict[str, int] = {}

    def note_storage(pid):
        if isinstance(pid, tuple) and len(pid) >= 5 and isinstance(pid[1], _StorageType):
            sizes[str(pid[2])] = np.dtype(_TORCH_DTYPES[pid[1].dtype_name][0]).itemsize
        return None

    try:
        RestrictedUnpickler(handle, skipping, note_storage, _ignore).load()
    except UnpicklingError as error:
        raise UnpicklingError(WEIGHTS_ONLY_FAILED.format(error)) from None
    keys = next_pickle()
    if not isinstance(keys, list):
        raise RuntimeError("autojit.load: the file's list of storages is missing")
    for key in keys:
        key = str(key)
        if key not in sizes:
            raise RuntimeError(f"autojit.load: the file has bytes for an unknown storage {key}")
        count = struct.unpack("<q", handle.read(8))[0]
        data = handle.read(count * sizes[key])
        if count < 0 or len(data) != count * sizes[key]:
            raise RuntimeError(f"autojit.load: storage {key} is truncated")
        contents[key] = data
    handle.seek(start)
    return reader.load(handle.read())


_REBUILDERS = ("torch._utils._rebuild_tensor", "torch._utils._rebuild_tensor_v2",
               "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_parameter",
               "torch._utils._rebuild_parameter_with_state",
               "torch._tensor._rebuild_from_type_v2")


def _ignore(*args, **kwargs):
    return None
