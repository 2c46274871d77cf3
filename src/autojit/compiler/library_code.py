"""Which objects are a library's: the standard library's, installed packages', autojit's own and
its dependencies' functions, classes and modules. The walk over a compiled function's state
(reachability.py) assumes them constant, guards them by identity and does not walk into them;
tracing.py finds the user's frame of an error by them.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import sysconfig
import types


def _dependency_folders():
    """The folders of autojit's own dependencies wherever they are installed (a PYTHONPATH
    folder, pip's --target): their state is never the user's. Found without importing them."""
    for name in ("numpy", "scipy", "numba", "numba_cuda", "llvmlite"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):  # a module in sys.modules without a __spec__
            continue
        if spec is not None and spec.submodule_search_locations:
            yield from spec.submodule_search_locations


LIBRARY_ROOTS = tuple(os.path.realpath(path) + os.sep for path in {
    sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"],
    sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
    os.path.dirname(os.path.abspath(__file__)), *_dependency_folders()})


def is_library(obj) -> bool:
    """Functions, classes and modules of the standard library, of installed packages and of
    autojit itself: assumed constant, guarded by identity, not walked."""
    if isinstance(obj, types.ModuleType):
        return library_module(obj.__name__)
    if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType, types.CodeType,
                        types.WrapperDescriptorType, types.MethodDescriptorType,
                        types.GetSetDescriptorType, types.MemberDescriptorType)):
        return True
    if isinstance(obj, (type, types.FunctionType)):
        name = getattr(obj, "__module__", None)
        if name is not None and not isinstance(name, str):
            # A class whose __module__ is a descriptor of its own (cuda-bindings' CUdeviceptr,
            # whose metaclass-less C type exposes a getset there) comes from a library.
            return True
        if name in ("__main__", "builtins") and _made_by_program(obj):
            return False
        return library_module(name or "")
    return False


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made at run time, not a C type


def _made_by_program(obj) -> bool:
    """Whether a function or class named as `__main__`'s or `builtins`' is the program's own:
    code exec'd into a namespace (a notebook's cell: its classes are builtins' where the
    namespace has no `__name__`, `__main__`'s in a kernel whose `__main__` is a library's
    launcher) is, unless the code it runs lies in a library's file."""
    if isinstance(obj, type):
        if not obj.__flags__ & _HEAP_TYPE:
            return False  # a C type: builtins' own
        code = next((value.__code__ for value in vars(obj).values()
                     if isinstance(value, types.FunctionType)), None)
    else:
        code = getattr(obj, "__code__", None)
    return code is None or not os.path.realpath(code.co_filename).startswith(LIBRARY_ROOTS)


@functools.lru_cache(maxsize=4096)
def library_module(name: str) -> bool:
    top = name.partition(".")[0]
    if top in ("builtins", "autojit") or top in getattr(sys, "stdlib_module_names", ()):
        return True
    module = sys.modules.get(name) or sys.modules.get(top)
    filename = getattr(module, "__file__", None)
    if not filename:
        return False  # a module made at run time (types.ModuleType), __main__ run from stdin
    return os.path.realpath(filename).startswith(LIBRARY_ROOTS)
