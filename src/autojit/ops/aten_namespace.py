"""autojit.ops.aten (this module's `aten`, which ops/__init__.py exports): torch.ops.aten's
names for the aten operators that programs and libraries call directly
(`torch.ops.aten.slice.Tensor(x, 1, 0, 2)`, `torch.ops.aten.native_layer_norm`), each an
OpOverloadPacket whose overloads (`.default`, `.Tensor`, `.vec`, ...) are OpOverloads.

Under the drop-in `torch.ops` is this package (`autojit.ops`), so `torch.ops.aten.X.overload`
reaches these. The namespace holds only what the modules defining aten's entry points register
(`register`), each function defined once, where its public op is (ops/aten_entry_points.py,
nn/aten_entry_points.py): a name none registered raises torch's AttributeError. The entry points
of layers above ops register when their module is imported; `LOADERS` holds the hooks that
import them (installed by autojit/__init__.py), run the first time a name is not found.

Calling a packet calls the first of its overloads whose parameters bind the arguments, as
torch's packet picks the overload whose schema matches; a packet registered with `call` uses
that function instead (one that tells its overloads apart by the arguments' types).
"""

from __future__ import annotations

import inspect

from ..tensor import torch_dispatch

# Hooks importing the higher layers' entry points (they call `register`); each runs once.
LOADERS: list = []


class OpOverload:
    """One overload of an aten operator: `aten.slice.Tensor`."""

    def __init__(self, packet: OpOverloadPacket, overload: str, function):
        self.overloadpacket, self._overloadname, self._function = packet, overload, function
        self.namespace = packet.namespace
        self._opname = packet._opname
        self.__name__ = f"{packet._opname}.{overload}"
        self.__doc__ = function.__doc__

    def __call__(self, *args, **kwargs):
        if torch_dispatch.ACTIVE:  # a __torch_dispatch__ subclass's instance is an argument
            found = torch_dispatch.dispatching_arguments(args)
            if kwargs:
                found = torch_dispatch.dispatching_arguments(kwargs.values(), found)
            if found is not None:
                return torch_dispatch.call(self, found, args, kwargs)
        return self._function(*args, **kwargs)

    def name(self) -> str:
        return f"{self.namespace}::{self._opname}" + ("" if self._overloadname == "default"
                                                      else f".{self._overloadname}")

    def __str__(self) -> str:
        return f"{self.namespace}.{self._opname}.{self._overloadname}"

    def __repr__(self) -> str:
        return (f"<OpOverload(op='{self.namespace}.{self._opname}', "
                f"overload='{self._overloadname}')>")


class OpOverloadPacket:
    """An aten operator with its overloads: `aten.slice` (calling it picks an overload); or an
    operator of another namespace (autojit/library.py's custom operators)."""

    def __init__(self, name: str, overloads: dict, call=None, namespace: str = "aten"):
        self._opname = self.__name__ = name
        self.namespace = namespace
        self._qualified_op_name = f"{namespace}::{name}"
        self._overloads = {key: OpOverload(self, key, function)
                           for key, function in overloads.items()}
        self._call = call
        first = call or next(iter(overloads.values()), None)
        self.__doc__ = getattr(first, "__doc__", None)

    def overloads(self) -> list:
        return list(self._overloads)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._overloads[name]
        except KeyError:
            raise AttributeError(f"The underlying op of '{self.namespace}.{self._opname}' has "
                                 f"no overload name '{name}'") from None

    def __call__(self, *args, **kwargs):
        if self._call is not None and not (
                torch_dispatch.ACTIVE and torch_dispatch.dispatching_arguments(
                    (*args, *kwargs.values())) is not None):
            # (an instance of a __torch_dispatch__ subclass is handed the overload whose
            # parameters bind, below)
            return self._call(*args, **kwargs)
        overloads = list(self._overloads.values())
        if self.namespace != "aten":  # a custom operator: its first (default) overload
            return overloads[0](*args, **kwargs)
        for overload in overloads:
            try:
                inspect.signature(overload._function).bind(*args, **kwargs)
            except TypeError:
                continue
            return overload(*args, **kwargs)
        return overloads[0](*args, **kwargs)   # the first one's TypeError

    def __str__(self) -> str:
        return f"{self.namespace}.{self._opname}"

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self.namespace}.{self._opname}')>"


_PACKETS: dict = {}


def register(name: str, call=None, **overloads) -> None:
    """Put aten's operator `name` in the namespace, with its overloads (`default=f`,
    `Tensor=g`, ...; listed in the order a packet call tries them)."""
    _PACKETS[name] = OpOverloadPacket(name, overloads, call)


def _load() -> None:
    while LOADERS:
        LOADERS.pop(0)()


class _OpNamespace:
    """torch.ops.aten: the registered operators by name."""

    name = "aten"

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        if name not in _PACKETS:
            _load()
        try:
            return _PACKETS[name]
        except KeyError:
            raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute "
                                 f"'{name}'") from None

    def __dir__(self):
        _load()
        return sorted(_PACKETS)

    def __repr__(self) -> str:
        return "<module 'autojit.ops.aten'>"


aten = _OpNamespace()


class CustomNamespace:
    """torch.ops.<ns> of a namespace autojit/library.py's operators live in (torch.library)."""

    def __init__(self, name: str):
        self.name = name
        self._packets: dict = {}

    def packet(self, name: str) -> OpOverloadPacket:
        """The operator `name` of this namespace, made empty when first asked for."""
        found = self._packets.get(name)
        if found is None:
            found = self._packets[name] = OpOverloadPacket(name, {}, namespace=self.name)
        return found

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        found = self._packets.get(name)
        if found is None or not found._overloads:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                                 f"'{name}'")
        return found

    def __dir__(self):
        return sorted(name for name, packet in self._packets.items() if packet._overloads)

    def __repr__(self) -> str:
        return f"<module 'torch.ops.{self.name}' from 'torch.ops'>"


NAMESPACES: dict = {}  # name -> CustomNamespace
# name -> a function that defines the namespace (a layer above registers it: the profiler's
# torch.ops.profiler), called the first time torch.ops.<name> is asked for.
NAMESPACE_LOADERS: dict = {}


def register_namespace(name: str) -> CustomNamespace:
    """torch.ops.<name>, made when a library first defines or implements operators in it."""
    found = NAMESPACES.get(name)
    if found is None:
        found = NAMESPACES[name] = CustomNamespace(name)
    return found



def define_builtin(namespace: str, name: str, **overloads) -> None:
    """torch.ops.<namespace>.<name>, an operator of torch's own that autojit gives as Python
    functions (`default=f`, other overloads by their names)."""
    packet = register_namespace(namespace).packet(name)
    for key, function in overloads.items():
        packet._overloads[key] = OpOverload(packet, key, function)

# The paths of the shared libraries load_library loaded, as torch.ops.loaded_libraries.
loaded_libraries: set = set()
# Libraries of torch operators whose operators autojit writes itself, by (the folder holding
# the library, the file name up to its first dot) -> a function defining them: installed by
# the drop-in (drop_in/torchvision_ops.py: ("torchvision", "_C")), a layer above this one.
EXTENSION_LOADERS: dict = {}


def load_library(path) -> None:
    """torch.ops.load_library: load a shared library (ctypes), whose initializers register
    operators with the framework that loads it. A library of torch custom operators links
    libtorch, which autojit is not: loading it raises OSError (libc10.so or a torch symbol not
    found), as torch's does for a library that will not load, and libraries that check for
    their compiled operators catch it and run without them. A library named in
    EXTENSION_LOADERS (torchvision's, under the drop-in) is not loaded: its loader defines
    autojit's versions of its operators instead."""
    import ctypes
    import os

    path = os.path.realpath(os.fspath(path))
    loader = EXTENSION_LOADERS.get((os.path.basename(os.path.dirname(path)),
                                    os.path.basename(path).partition(".")[0]))
    if loader is not None:
        loader()
    else:
        ctypes.CDLL(path)
    loaded_libraries.add(path)
