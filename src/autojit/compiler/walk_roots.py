"""Where the walk of a compiled function's reach starts (reachability.py's Walk): the roots of a
call (`function_roots`: the arguments that are not tensors, the callable with its closure,
defaults and globals, a bound method's object), the process-wide containers the layers above
register as roots for every call (`register_root`: nn's global module hooks), and the global
names a code object loads or stores (`global_names`), which the walk follows into a
function's globals.

compiler/tracing.py walks from these before and after each trace; the walk itself, and what
it observes, are reachability.py's.
"""

from __future__ import annotations

import dis
import functools
import types

from ..tensor.tensor import Tensor

__all__ = ["function_roots", "global_names", "register_root"]


@functools.lru_cache(maxsize=512)
def global_names(code: types.CodeType) -> tuple:
    """The global names `code` (and the functions and comprehensions nested in it) loads or
    stores (`global LAST; LAST = ...`: what it leaves there is Python state it writes).

    co_names also lists attribute names (`box.scale` names "scale"); a global that happens to
    share an attribute's name is not read by the function and must not be guarded.
    """
    names = []
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL") and \
                instruction.argval not in names:
            names.append(instruction.argval)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names.extend(name for name in global_names(constant) if name not in names)
    return tuple(names)


# Process-wide containers of the layers above whose items run inside any traced call (nn's
# global module hooks): (display, container). The walk starts at each one that is not empty,
# so that the state a hook there keeps (a counter in its closure) is guarded and written back
# like the function's own. Registered with register_root.
_REGISTERED_ROOTS: list = []


def register_root(display: str, container) -> None:
    """Walk `container` (a dict or list the registering layer keeps for the whole process)
    with every function's roots while it holds anything."""
    _REGISTERED_ROOTS.append((display, container))


def function_roots(fn, args: tuple) -> tuple[list, dict]:
    """Where the walk starts, and the constants its root paths name: the arguments that are
    not tensors, the callable itself (a function: its closure, defaults and the globals
    its code loads; a bound method: its object too; a callable object such as a Module: its
    attributes and class), and the registered process-wide containers that hold anything."""
    constants: dict = {}
    roots = [(("args", f"[{index}]"), f"args[{index}]", argument)
             for index, argument in enumerate(args) if not isinstance(argument, Tensor)]
    name = f"W{id(fn)}"
    constants[name] = fn
    if isinstance(fn, types.MethodType):
        roots.append(((name, ".__self__"), "self", fn.__self__))
        fn, name = fn.__func__, f"W{id(fn.__func__)}"
        constants[name] = fn
    display = getattr(fn, "__qualname__", None) or type(fn).__name__
    roots.append(((name,), display, fn))
    for index, (display, container) in enumerate(_REGISTERED_ROOTS):
        if container:
            constants[f"R{index}"] = container
            roots.append(((f"R{index}",), display, container))
    return roots, constants
