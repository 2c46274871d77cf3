"""Reading torch.save's file format without torch: the zip archive (`load_torch_zip`, its
folder found by `torch_zip_folder`) and the format before it (`load_legacy`), what autojit.load
calls for a file that is not NumPy's.

The format, and the writer, are torch_format.py's; this module reads what it describes. The
object's pickle is read by pickle_reader.py's restricted unpickler, whose allow-list here holds
torch's rebuild functions, storage types, dtypes, `torch.Size`, `torch.device` and plain
containers (with weights_only=False, by object_pickle.py's full unpickler); each storage's bytes
become one NumPy array, and the tensors on it views of that array, placed on the device
map_location names.
"""

from __future__ import annotations

import io
import struct
import zipfile
from collections import OrderedDict

import numpy as np

from ..tensor import dtypes, layouts, torch_dispatch
from ..tensor.device import CPU, device, runtime
from ..tensor.tensor import Size, Tensor
from . import object_pickle, safe_globals
from .pickle_reader import RestrictedUnpickler, UnpicklingError
from .torch_format import (
    _LEGACY_MAGIC,
    _LEGACY_PROTOCOL,
    _STORAGE_DTYPE,
    _TORCH_DTYPES,
    SPARSE_LAYOUTS,
    TENSOR_CLASSES,
)

__all__ = ["load_torch_zip", "load_legacy", "torch_zip_folder"]

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
        else:  # in place where the bytes are a mapped file's (load(mmap=True)), else copied
            array = raw.astype(np.dtype(_TORCH_DTYPES[dtype_name][0]).newbyteorder("="),
                               copy=not raw.flags.writeable)
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
            "torch._utils._rebuild_wrapper_subclass": self.rebuild_wrapper_subclass,
            "torch._utils._rebuild_sparse_tensor": _rebuild_sparse,
            "torch.serialization._get_layout": _get_layout,
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

    def rebuild_wrapper_subclass(self, cls, dtype, size, stride, storage_offset, layout, device,
                                 requires_grad):
        """An instance of a __torch_dispatch__ wrapper subclass (torch_geometric's EdgeIndex),
        before _rebuild_from_type_v2 sets its attributes; its class came through the
        unpickler's checks (a class declared safe, under weights_only)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)) or \
                not isinstance(dtype, dtypes.DType):
            raise UnpicklingError("autojit.load: a wrapper subclass that is not a Tensor "
                                  "subclass")
        return torch_dispatch._rebuild_wrapper_subclass(
            cls, dtype, tuple(size), tuple(stride), storage_offset, layout, device,
            requires_grad)

    def rebuild_from_type(self, function, new_type, args, state):
        if function == self.rebuild_wrapper_subclass and isinstance(args, tuple) and \
                isinstance(new_type, type) and issubclass(new_type, Tensor):
            return torch_dispatch._rebuild_from_type_v2(function, new_type, args, state)
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


def _get_layout(name: str):
    """torch.serialization._get_layout: a layout by its printed name ("torch.sparse_coo")."""
    found = getattr(layouts, str(name).rpartition(".")[2], None)
    if not isinstance(found, layouts.layout):
        raise UnpicklingError(f"autojit.load: unknown layout {name!r}")
    return found


def _rebuild_sparse(layout, data):
    """torch._utils._rebuild_sparse_tensor: a sparse tensor of `layout` from its parts."""
    found = SPARSE_LAYOUTS.get(getattr(layout, "name", None))
    if found is None:
        raise UnpicklingError(f"autojit.load: a sparse tensor of layout {layout}, which "
                              "autojit does not have")
    return found[1](*data)


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


def _mapped_entry(archive: zipfile.ZipFile, name: str, mapped: np.ndarray):
    """An uncompressed entry's bytes within the mapped file (torch.save stores its entries
    uncompressed), or None for a compressed one."""
    info = archive.getinfo(name)
    if info.compress_type != zipfile.ZIP_STORED:
        return None
    header = bytes(mapped[info.header_offset:info.header_offset + 30])
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    start = info.header_offset + 30 + name_length + extra_length
    return mapped[start:start + info.file_size]


def load_torch_zip(archive: zipfile.ZipFile, prefix: str, map_location,
                   weights_only: bool = True, options: dict | None = None, mapped=None):
    """The object of a torch.save zip archive; with `mapped` (the file mapped into memory,
    load(mmap=True)), storages are read in place there."""
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
        if mapped is not None:
            found = _mapped_entry(archive, name, mapped)
            if found is not None:
                return found
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
