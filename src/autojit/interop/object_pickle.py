"""Pickles of arbitrary objects in torch.save's format: what autojit.save writes when the object
is more than data (a whole nn.Module, a NumPy array, an object of the user's class), and what
autojit.load(weights_only=False) reads.

torch.save pickles any object with Python's pickle, its tensors written as calls of torch's
rebuild functions over storages (torch_format.py). `dumps` does the same with Python's own
pickler, whose objects reduce as they always do (a module by its class and __dict__, an array
by NumPy's reconstruct), with the tensors, dtypes, devices and sizes it meets written under
torch's names: `torch.load(f, weights_only=False)` rebuilds them as torch tensors, wherever the
classes around them can be imported. The names are written as globals without importing
torch (Python's pickler would look each one up to check it).

`FullUnpickler` reads such a pickle, and torch's, with Python's unpickler, which imports and
calls whatever the file names: only with weights_only=False, as torch.load. torch's names of
tensors, storages, dtypes and devices are read as autojit's (the rebuild functions of
torch_format.py); every other global is imported by name (a torch module object needs torch).
"""

from __future__ import annotations

import io
import pickle

from ..tensor import dtypes
from ..tensor.device import device
from ..tensor.tensor import Size, Tensor
from .pickle_writer import Call, Global, PersistentId

__all__ = ["dumps", "FullUnpickler"]


class _Function(Global):
    """A global called on load: Python's pickler checks that a reduction's function is
    callable; this one names the function only."""

    def __call__(self, *args):
        raise TypeError(f"{self.module}.{self.name} is called when the file is read")


class _Pickler(pickle._Pickler):
    """Python's pickler (its pure-Python form, whose dispatch table can be extended), with
    autojit's tensors and torch's globals written as torch.save writes them."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol: int, tensors):
        super().__init__(file, protocol)
        self.tensors = tensors  # torch_format._TensorWriter: rebuild calls and storages

    def persistent_id(self, obj):
        return obj.value if obj.__class__ is PersistentId else None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor) and self.tensors.writes(obj):
            obj = self.tensors.tensor(obj, "the object")
        elif isinstance(obj, device):
            obj = Call(Global("torch", "device"), (str(obj),))
        elif isinstance(obj, Size):
            obj = Call(Global("torch", "Size"), (tuple(obj),))
        if obj.__class__ is Call:
            return _Function(obj.function.module, obj.function.name), obj.args
        return NotImplemented

    def save_global_name(self, obj) -> None:
        """A global by its module and name (GLOBAL), looked up by the reader alone."""
        self.write(b"c" + f"{obj.module}\n{obj.name}\n".encode())

    def save_dtype(self, obj) -> None:
        self.save_global_name(Global("torch", obj.name))

    dispatch[Global] = dispatch[_Function] = save_global_name
    dispatch[dtypes.DType] = save_dtype


def dumps(obj, protocol: int, tensors) -> bytes:
    """The pickle of any picklable obj, its tensors written through `tensors` (a
    torch_format._TensorWriter, which collects their storages)."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol, tensors).dump(obj)
    return buffer.getvalue()


class FullUnpickler(pickle.Unpickler):
    """Python's unpickler (it runs the code the file names), with torch's names of tensors,
    storages, dtypes and devices read as autojit's: `allowed` maps those names (the weights-only
    reader's allow-list), `persistent_load` reads storages."""

    def __init__(self, file, allowed: dict, persistent_load, **options):
        super().__init__(file, **options)
        self.allowed = allowed
        self.storage_loader = persistent_load

    def persistent_load(self, pid):
        return self.storage_loader(pid)

    def find_class(self, module: str, name: str):
        found = self.allowed.get(f"{module}.{name}")
        if found is not None and module.split(".")[0] == "torch":
            return found
        return super().find_class(module, name)
