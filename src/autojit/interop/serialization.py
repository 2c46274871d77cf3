"""autojit.save and autojit.load: tensors, state dicts and other objects in torch.save's files;
the module torch.serialization is (autojit.serialization), with its safe globals
(safe_globals.py).

autojit.save writes torch.save's format by default (torch_format.py: a zip archive of a pickle
and the tensors' bytes, which `torch.load(f, weights_only=True)` reads when the object is data,
object_pickle.py's pickle of any object otherwise), and autojit.load reads files of torch.save
(that format and torch's older one) through a reader that builds data only and never runs code
from the file (pickle_reader.py), or, with weights_only=False, through Python's unpickler. The
format autojit wrote before, kept loadable and still written with `format="npz"`, is an
ordinary NumPy .npz archive (numpy.savez), loaded with allow_pickle=False, with:

- one array per distinct tensor, named ``tensor0``, ``tensor1``, ... in the order first met;
- ``__manifest__``: a uint8 array holding UTF-8 JSON that describes the saved object::

      {"format": "autojit", "version": 1, "root": NODE}

  where NODE is one of
      {"type": "tensor", "array": "tensor0", "dtype": "float32", "requires_grad": false,
       "parameter": false}
      {"type": "dict", "ordered": true, "items": [[KEY, NODE], ...]}   (keys: str, int,
                                                                       float, bool or None)
      {"type": "list", "items": [NODE, ...]}      {"type": "tuple", "items": [NODE, ...]}
      {"type": "str", "value": "..."}    {"type": "int", "value": 3}
      {"type": "float", "value": "0.1"} (repr text, so inf and nan survive)
      {"type": "bool", "value": true}    {"type": "none"}

A tensor that appears twice in the object (a shared parameter) is stored once and loads as one
tensor. Gradients and autograd history are not saved; requires_grad, the dtype and whether a
tensor is an nn.Parameter are. The format is described in docs/nn.md as well.
"""

from __future__ import annotations

import io
import json
import numbers
import os
import zipfile
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from ..tensor import dtypes
from ..tensor.tensor import Tensor
from . import torch_format, torch_format_reader
from .safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "safe_globals", "DEFAULT_PROTOCOL", "MAP_LOCATION", "SourceChangeWarning"]

# torch.serialization's other names that programs import: the pickle protocol torch.save
# writes with, the type of load's map_location, and the warning of torch's old whole-module
# pickles (which autojit never gives: it does not compare a class's source).
DEFAULT_PROTOCOL = 2
MAP_LOCATION = Callable | str | dict | None


class SourceChangeWarning(Warning):
    """torch's warning that a saved module's class source changed since it was saved."""

_FORMAT = "autojit"
_VERSION = 1
_MANIFEST = "__manifest__"
_SUPPORTED = "Tensor, dict, list, tuple, str, int, float, bool and None"

# Tensor classes whose kind is saved (a flag of that name in the tensor's node, a rebuild call
# of torch's in its format) and remade on load: nn/parameter.py registers Parameter as
# "parameter" (nn sits above this layer).
TENSOR_CLASSES = torch_format.TENSOR_CLASSES


def register_tensor_class(flag: str, cls) -> None:
    """Save instances of `cls` with `flag` set, and load them as `cls(tensor, requires_grad)`."""
    TENSOR_CLASSES[flag] = cls


class _Writer:
    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}
        self.names: dict[int, str] = {}  # id(tensor) -> array name, for shared tensors

    def node(self, value, where: str) -> dict:
        if isinstance(value, Tensor):
            if value._payload is None:
                raise RuntimeError(f"autojit.save: the tensor at {where} is symbolic (it is "
                                   "being traced); save outside the compiled function")
            name = self.names.get(id(value))
            if name is None:
                name = self.names[id(value)] = f"tensor{len(self.names)}"
                self.arrays[name] = value._payload
            node = {"type": "tensor", "array": name, "dtype": value.dtype.name,
                    "requires_grad": value.requires_grad}
            for flag, cls in TENSOR_CLASSES.items():
                node[flag] = isinstance(value, cls)
            return node
        if isinstance(value, dict):
            items = []
            for key, item in value.items():
                if not (key is None or isinstance(key, (str, int, float))):
                    raise TypeError(f"autojit.save: dict key {key!r} at {where} has type "
                                    f"{type(key).__name__}; keys must be str, int, float, bool "
                                    "or None")
                items.append([self.node(key, where), self.node(item, f"{where}[{key!r}]")])
            return {"type": "dict", "ordered": isinstance(value, OrderedDict), "items": items}
        if isinstance(value, (list, tuple)):
            kind = "list" if isinstance(value, list) else "tuple"
            return {"type": kind, "items": [self.node(item, f"{where}[{index}]")
                                            for index, item in enumerate(value)]}
        if value is None:
            return {"type": "none"}
        if isinstance(value, (bool, np.bool_)):
            return {"type": "bool", "value": bool(value)}
        if isinstance(value, numbers.Integral):
            return {"type": "int", "value": int(value)}
        if isinstance(value, numbers.Real):
            return {"type": "float", "value": repr(float(value))}
        if isinstance(value, str):
            return {"type": "str", "value": value}
        raise TypeError(f"autojit.save: cannot save an object of type {type(value).__name__} "
                        f"(at {where}); supported are {_SUPPORTED}")


def save(obj, f, pickle_module=None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False,
         *, format: str = "torch") -> None:  # noqa: A002 - the format's name
    """Write obj to f, a path or a binary file object, in torch.save's format (with
    `_use_new_zipfile_serialization=False`, torch's format before 1.6).

    Data (tensors, Parameters, and dicts, lists, tuples and sets of them and of Python scalars,
    strings and bytes) is written as a pickle of data only, which `torch.load(f,
    weights_only=True)` and autojit.load read; tensors that are views of one another share one
    storage in it. Any other picklable object (a whole nn.Module, a NumPy array, an object of
    the program's class) is pickled by Python's pickle, as torch.save does, and is read back by
    `autojit.load(f, weights_only=False)` (and by `torch.load(f, weights_only=False)`, its
    tensors as torch's, where the classes around them can be imported). `format="npz"` writes
    autojit's earlier format, a NumPy .npz archive with a JSON manifest (this module's
    docstring; data only). `pickle_module` may only be Python's pickle.

        >>> import io, autojit
        >>> buffer = io.BytesIO()
        >>> autojit.save({"w": autojit.ones(2), "step": 3}, buffer)
        >>> _ = buffer.seek(0)
        >>> autojit.load(buffer)
        {'w': tensor([1., 1.]), 'step': 3}
    """
    import pickle

    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError("autojit.save writes its own pickle of data only; pickle_module must "
                         "be None or Python's pickle")
    if not 2 <= pickle_protocol <= 5:
        raise ValueError(f"autojit.save: pickle_protocol must be 2 to 5, got {pickle_protocol}")
    if format not in ("torch", "npz"):
        raise ValueError(f"autojit.save: format must be 'torch' or 'npz', got {format!r}")
    if isinstance(f, (str, os.PathLike)):
        # Through an open file: given a path, numpy.savez would append ".npz" to it.
        with open(f, "wb") as handle:
            save(obj, handle, pickle_module, pickle_protocol, _use_new_zipfile_serialization,
                 _disable_byteorder_record, format=format)
        return
    if format == "torch":
        torch_format.save_torch(obj, f, pickle_protocol,
                                legacy=not _use_new_zipfile_serialization)
        return
    writer = _Writer()
    manifest = {"format": _FORMAT, "version": _VERSION, "root": writer.node(obj, "the root")}
    encoded = np.frombuffer(json.dumps(manifest).encode("utf-8"), dtype=np.uint8)
    arrays = dict(writer.arrays)
    arrays[_MANIFEST] = encoded
    np.savez(f, **arrays)


class _Reader:
    def __init__(self, archive):
        self.archive = archive
        self.tensors: dict[str, Tensor] = {}

    def node(self, node: dict):
        kind = node.get("type")
        if kind == "tensor":
            name = node["array"]
            tensor = self.tensors.get(name)
            if tensor is None:
                tensor = self.tensors[name] = self.tensor(node)
            return tensor
        if kind == "dict":
            pairs = [(self.node(key), self.node(value)) for key, value in node["items"]]
            return OrderedDict(pairs) if node.get("ordered") else dict(pairs)
        if kind == "list":
            return [self.node(item) for item in node["items"]]
        if kind == "tuple":
            return tuple(self.node(item) for item in node["items"])
        if kind == "none":
            return None
        if kind == "bool":
            return bool(node["value"])
        if kind == "int":
            return int(node["value"])
        if kind == "float":
            return float(node["value"])
        if kind == "str":
            return str(node["value"])
        raise RuntimeError(f"autojit.load: unknown node type {kind!r} in the manifest")

    def tensor(self, node: dict) -> Tensor:
        dtype = dtypes.from_name(node["dtype"])
        data = np.array(self.archive[node["array"]], dtype=dtype.numpy)
        tensor = Tensor._make(data, dtype)
        for flag, cls in TENSOR_CLASSES.items():
            if node.get(flag):
                return cls(tensor, requires_grad=bool(node.get("requires_grad")))
        if node.get("requires_grad"):
            tensor.requires_grad_(True)
        return tensor


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args):
    """Read an object written by torch.save or autojit.save from a path or a binary file.

    By default (`weights_only=None` is True, torch's default since 2.6, unless `pickle_module`
    is given) files are read as torch.load(weights_only=True) reads them, without torch: their
    pickle may only rebuild tensors, Parameters, storages and plain containers, and a file that
    names anything else (a class, or a function such as os.system) is refused with torch's
    pickle.UnpicklingError before anything is called. With `weights_only=False` the pickle is
    read by Python's pickle, which imports and runs what the file names (only for files from a
    trusted source): whole modules, NumPy arrays, objects of the program's classes, as
    torch.load(weights_only=False) reads them, their tensors and parameters rebuilt as
    autojit's (torch's format before 1.6 is read weights-only either way). `map_location` (a
    device, a device name, a dict from saved location to location, or a function, which leaves
    storages on the CPU) says where tensors go; `pickle_module` may only be Python's pickle,
    `mmap=True` maps a torch.save file named by a path into memory, its tensors over the
    mapped bytes (privately: writes stay in this process), and `pickle_load_args` (such as
    encoding="latin1" for Python 2 files) go to Python's unpickler.

        >>> import os, tempfile, autojit
        >>> with tempfile.TemporaryDirectory() as directory:
        ...     path = os.path.join(directory, "weights.pt")
        ...     autojit.save({"w": autojit.arange(3)}, path)
        ...     autojit.load(path)
        {'w': tensor([0, 1, 2])}
    """
    import pickle

    from ..tensor.device import check_device

    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError("autojit.load reads pickles with its own data-only reader or Python's "
                         "pickle; pickle_module must be None or Python's pickle")
    if weights_only is None:
        weights_only = pickle_module is None
    elif weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if mmap:
        return _load_mapped(f, map_location, weights_only, pickle_load_args)
    if map_location is not None and not callable(map_location) and \
            not isinstance(map_location, dict):
        check_device(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as handle:
            return load(io.BytesIO(handle.read()), map_location, weights_only=weights_only,
                        **pickle_load_args)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    start = f.tell()
    if not f.read(4).startswith(b"PK"):  # not a zip archive: torch's format before it
        f.seek(start)
        return torch_format_reader.load_legacy(f, map_location)
    f.seek(start)
    with zipfile.ZipFile(f) as archive:
        folder = torch_format_reader.torch_zip_folder(archive)
        if folder is not None:
            return torch_format_reader.load_torch_zip(archive, folder, map_location,
                                                      weights_only, pickle_load_args)
    f.seek(start)
    return _load_npz(f)


def _load_mapped(f, map_location, weights_only: bool, options: dict):
    """load(mmap=True): the file mapped into memory (privately: writes to the tensors stay in
    this process), each storage's tensors over its bytes there rather than read into memory,
    as torch's mmap loads; only a torch.save zip archive named by a path can be mapped."""
    if not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    mapped = np.memmap(f, dtype=np.uint8, mode="c")
    with open(f, "rb") as handle:
        folder = None
        if handle.read(4).startswith(b"PK"):
            handle.seek(0)
            with zipfile.ZipFile(handle) as archive:
                folder = torch_format_reader.torch_zip_folder(archive)
                if folder is not None:
                    return torch_format_reader.load_torch_zip(
                        archive, folder, map_location, weights_only, options, mapped=mapped)
    raise RuntimeError("mmap can only be used with files saved with "
                       f"`torch.save({os.fspath(f)}, _use_new_zipfile_serialization=True), "
                       "please torch.save your checkpoint with this option in order to use "
                       "mmap.")


def _load_npz(f):
    try:
        archive = np.load(f, allow_pickle=False)
    except (ValueError, OSError) as error:
        raise RuntimeError(f"autojit.load: not a file written by autojit.save or torch.save "
                           f"(neither torch's format nor a .npz archive with a manifest): "
                           f"{error}") from None
    with archive:
        if not hasattr(archive, "files") or _MANIFEST not in archive.files:
            raise RuntimeError("autojit.load: not a file written by autojit.save or torch.save: "
                               f"the archive has no {_MANIFEST} entry")
        manifest = json.loads(bytes(archive[_MANIFEST]).decode("utf-8"))
        if manifest.get("format") != _FORMAT:
            raise RuntimeError(f"autojit.load: unknown format {manifest.get('format')!r}")
        if manifest.get("version", 0) > _VERSION:
            raise RuntimeError(f"autojit.load: the file has format version "
                               f"{manifest['version']}, newer than this autojit reads "
                               f"({_VERSION})")
        return _Reader(archive).node(manifest["root"])
