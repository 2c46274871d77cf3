"""What the read recorder (compiler/recorder.py) knows without following code: which files
it follows, the models of the builtins' reads (what `len`, `getattr`, `dict.get`, `list.append`
... read of their arguments), and the instruction table that maps each opcode to the read it
makes of the objects on the value stack.

The recorder calls `MODELS[function]` for a call into code it does not follow and the handler
of `instruction_table(code)` for each instruction of code it does; both tell the recorder
(their first argument) what was read. See docs/notes/guards.md.
"""

from __future__ import annotations

import builtins
import collections
import dis
import functools
import os
import sys
import types
import warnings

from ..tensor.graph_break import graph_break
from ..tensor.state import state
from .frame_stack import NULL

_VERSION = sys.version_info[:2]
# Resolved, as `_followed` resolves the files it is asked about: under an install reached
# through a symbolic link (a linked home or virtualenv), the unresolved path would match no
# resolved file, and the recorder would follow autojit's own code.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
# autojit's layers whose code is not followed: what they read of Python objects is what they
# are given (docs/notes/guards.md).
_UNFOLLOWED_AUTOJIT = tuple(os.path.join(_PACKAGE, name) + os.sep for name in (
    "tensor", "ops", "autograd", "ir", "compiler", "codegen", "cuda", "interop", "amp",
    "backends"))
_UNFOLLOWED_MODULES = ("numpy", "scipy", "numba", "llvmlite", "typing", "abc", "enum",
                       "threading", "warnings", "linecache", "traceback", "inspect", "dis",
                       "ast", "re", "sre_compile", "sre_parse", "logging", "importlib",
                       "tokenize", "_weakrefset", "weakref", "contextlib", "functools",
                       "dataclasses", "_collections_abc", "collections", "posixpath",
                       "ntpath", "genericpath", "os", "fnmatch", "sysconfig")
_CONTAINERS = (list, tuple, dict, set, frozenset, collections.deque)
_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


@functools.lru_cache(maxsize=8192)
def _followed(filename: str) -> bool:
    """Whether the code of `filename` runs under the recorder's eye."""
    if filename.startswith("<"):
        return not filename.startswith("<frozen")
    real = os.path.realpath(filename)
    if real.startswith(_UNFOLLOWED_AUTOJIT):
        return False
    for name in _UNFOLLOWED_MODULES:
        module = sys.modules.get(name)
        location = getattr(module, "__file__", None)
        if not location:
            continue
        base = os.path.dirname(location) if os.path.basename(location) == "__init__.py" \
            else location
        if real == base or real.startswith(base + os.sep) or real == location:
            return False
    return real != os.path.realpath(__file__)


def _key_fragment(key) -> str | None:
    """A dict key as reachability.Walk spells it in a path (`['lr']`, `[W1234]`)."""
    if isinstance(key, (str, int, float, bool, bytes, type(None))):
        return repr(key)
    return f"W{id(key)}"


def _lookup(kind: type, name: str):
    """(the class in `kind`'s MRO that defines `name`, the attribute there), or (None, None)."""
    for cls in kind.__mro__:
        attributes = cls.__dict__
        if name in attributes:
            return cls, attributes[name]
    return None, None


def _is_data_descriptor(value) -> bool:
    kind = type(value)
    return hasattr(kind, "__set__") or hasattr(kind, "__delete__")


def _runs_followed_code(function) -> bool:
    """Whether calling `function` runs Python code the recorder follows (which then records
    its own reads)."""
    code = None
    if isinstance(function, types.FunctionType):
        code = function.__code__
    elif isinstance(function, types.MethodType) and isinstance(function.__func__,
                                                               types.FunctionType):
        code = function.__func__.__code__
    elif isinstance(function, type):
        init = _lookup(function, "__init__")[1]
        new = _lookup(function, "__new__")[1]
        if isinstance(init, types.FunctionType) and _followed(init.__code__.co_filename) or \
                isinstance(new, (types.FunctionType, staticmethod)) and _followed(
                    getattr(new, "__func__", new).__code__.co_filename):
            return True
        return function.__init__ is object.__init__ and function.__new__ is object.__new__
    elif not isinstance(function, (types.BuiltinFunctionType, types.BuiltinMethodType,
                                   types.MethodDescriptorType, types.WrapperDescriptorType,
                                   types.MethodWrapperType, functools.partial)):
        call = _lookup(type(function), "__call__")[1]
        if isinstance(call, types.FunctionType):
            code = call.__code__
    return code is not None and _followed(code.co_filename)


# ---- builtins whose reads are known ---------------------------------------------------------

def _model_key(function):
    if isinstance(function, types.BuiltinMethodType) and function.__self__ is not None and \
            not isinstance(function.__self__, types.ModuleType):
        # A method of a builtin object bound to it: modelled by its descriptor.
        descriptor = getattr(type(function.__self__), function.__name__, None)
        return descriptor if descriptor is not None else function
    return function


def _bound(function, arguments: list) -> list:
    """The arguments with a bound builtin method's object first."""
    owner = getattr(function, "__self__", None)
    if isinstance(function, types.BuiltinMethodType) and owner is not None and \
            not isinstance(owner, types.ModuleType):
        return [owner, *arguments]
    return arguments


def _reads_nothing(recorder, function, arguments) -> None:
    return None


def _whole_arguments(recorder, function, arguments) -> None:
    for argument in _bound(function, arguments):
        recorder.whole(argument)


def _whole_owner(recorder, function, arguments) -> None:
    arguments = _bound(function, arguments)
    if arguments:
        recorder.whole(arguments[0])


def _length(recorder, function, arguments) -> None:
    for argument in _bound(function, arguments):
        recorder.length(argument)


def _identity(recorder, function, arguments) -> None:
    for argument in arguments:
        recorder.identity(argument)


def _getattr(recorder, function, arguments) -> None:
    if len(arguments) >= 2 and isinstance(arguments[1], str):
        recorder.attribute(arguments[0], arguments[1])


def _dict_get(recorder, function, arguments) -> None:
    arguments = _bound(function, arguments)
    if len(arguments) >= 2:
        recorder.subscript(arguments[0], arguments[1])


def _writes_with_argument(recorder, function, arguments) -> None:
    """A mutator (list.extend, dict.update, ...): the object it changes is not read; what it
    takes from is read whole."""
    for argument in _bound(function, arguments)[1:]:
        recorder.whole(argument)
        recorder.opaque(argument) if not isinstance(argument, _CONTAINERS) else None


def _object_getattribute(recorder, function, arguments) -> None:
    if len(arguments) >= 2 and isinstance(arguments[1], str):
        recorder.attribute(arguments[0], arguments[1])


_MODELS: dict = {}


def _model(handler, *functions) -> None:
    for function in functions:
        _MODELS[function] = handler


def _truth_arguments(recorder, function, arguments) -> None:
    for argument in arguments:
        recorder.truth(argument)


def _warning_by_bound_name(recorder, function, arguments) -> None:
    # ir/printing.py makes a traced `warnings.warn(...)` an effect each run gives again by
    # replacing the module's attribute; a name bound to the function before the trace
    # (`from warnings import warn`) calls the C function itself, which would warn while
    # tracing only. Stopped before it warns, the call runs eagerly (or splits there).
    tracer = state.tracer
    if tracer is not None and tracer.backward_depth:
        # Given by the backward traced for results differentiated outside the call (a module's
        # full backward hook warns there), which eager gives when that backward runs.
        text = str(arguments[0]).split("\n")[0][:80] if arguments else ""
        graph_break(f"a warning given in the backward of the results ({text!r}), which a "
                    "compiled backward cannot give", needs_data=False)
    graph_break(f"warnings.{function.__name__} called through a name bound before compiling "
                "(`from warnings import warn`), which a compiled run cannot give again; "
                "`warnings.warn(...)` can be", needs_data=False)


_model(_warning_by_bound_name, warnings.warn, warnings.warn_explicit)
_model(_reads_nothing, builtins.isinstance, builtins.issubclass, builtins.type,
       builtins.callable, builtins.setattr, builtins.delattr, builtins.super,
       builtins.range, builtins.abs, builtins.round, builtins.float, builtins.int,
       builtins.divmod, builtins.pow,
       list.insert, list.clear, list.pop, set.add, set.discard, set.clear,
       dict.clear, dict.__setitem__, dict.popitem, collections.deque.append,
       collections.deque.appendleft, object.__setattr__, object.__init__, object.__new__)
_model(_whole_arguments, builtins.iter, builtins.list, builtins.tuple, builtins.set,
       builtins.frozenset, builtins.sorted, builtins.reversed, builtins.enumerate, builtins.zip,
       builtins.sum, builtins.min, builtins.max, builtins.any, builtins.all, builtins.map,
       builtins.filter, builtins.dict, builtins.next,
       str.join, list.index, list.count, list.copy, list.__contains__, tuple.index,
       tuple.count, dict.keys, dict.values, dict.items, dict.copy, set.copy, set.union,
       set.intersection, set.difference, set.issubset, set.issuperset, frozenset.union)
_model(_whole_owner, dict.pop, dict.setdefault, list.remove)
def _append(recorder, function, arguments) -> None:
    arguments = _bound(function, arguments)
    if arguments and id(arguments[0]) in recorder._known:
        recorder.reads.appended.add(id(arguments[0]))


_model(_append, list.append)
_model(_length, builtins.len)
_model(lambda recorder, function, arguments: [recorder.attributes(argument)
                                             for argument in arguments], builtins.vars)
_model(_truth_arguments, builtins.bool)
_model(_identity, builtins.id, builtins.hash)
_model(_getattr, builtins.getattr, builtins.hasattr)
_model(_object_getattribute, object.__getattribute__)
_model(_dict_get, dict.get, dict.__getitem__, dict.__contains__)
_model(_writes_with_argument, list.extend, dict.update, set.update, collections.deque.extend)


# ---- the instruction table ------------------------------------------------------------------

def _load_attr(recorder, peek, name, arg):
    recorder.attribute(peek(0), name)


def _store_attr(recorder, peek, name, arg):
    owner = peek(0)
    if id(owner) in recorder._known:
        recorder.reads.stored.add((id(owner), f".{name}"))


def _store_subscr(recorder, peek, name, arg):
    key, container = peek(0), peek(1)
    if id(container) in recorder._known and isinstance(container, dict):
        fragment = _key_fragment(key)
        if fragment is not None:
            recorder.reads.stored.add((id(container), f"[{fragment}]"))


def _load_super_attr(recorder, peek, name, arg):
    # 3.12: [super, class, self]
    owner, cls = peek(0), peek(1)
    if isinstance(cls, type) and isinstance(owner, object):
        mro = type(owner).__mro__ if not isinstance(owner, type) else owner.__mro__
        if cls in mro:
            recorder._class_attribute(cls, name, mro[mro.index(cls) + 1:])


def _load_global(recorder, peek, name, arg):
    scope = peek.frame.f_globals
    if id(scope) in recorder._known:
        recorder.reads.items.add((id(scope), f"[{name!r}]"))


def _load_name(recorder, peek, name, arg):
    frame = peek.frame
    if frame.f_locals is not frame.f_globals and name in frame.f_locals:
        return
    _load_global(recorder, peek, name, arg)


def _load_deref(recorder, peek, name, arg):
    cell = peek.cell(arg)
    if id(cell) in recorder._cells:
        recorder.reads.cells.add(id(cell))


def _binary_subscr(recorder, peek, name, arg):
    recorder.subscript(peek(1), peek(0))


def _binary_slice(recorder, peek, name, arg):
    recorder.whole(peek(2))


def _whole_top(recorder, peek, name, arg):
    recorder.whole(peek(0))


def _contains(recorder, peek, name, arg):
    container = peek(0)
    if id(container) in recorder._attribute_owners:  # `name in obj.__dict__`
        recorder.subscript(container, peek(1))
    elif isinstance(container, dict) and type(container).__contains__ is dict.__contains__:
        recorder.length(container)  # a key test: the dict's keys
    else:
        recorder.whole(container)


def _compare(recorder, peek, name, arg):
    for operand in (peek(1), peek(0)):
        if isinstance(operand, _CONTAINERS):
            recorder.opaque(operand)
        else:
            recorder.identity(operand)


def _is_op(recorder, peek, name, arg):
    left, right = peek(1), peek(0)
    if left is not None and right is not None:  # `x is None` reads no more than x's class
        recorder.identity(left)
        recorder.identity(right)


def _binary_op(recorder, peek, name, arg):
    for operand in (peek(1), peek(0)):
        if isinstance(operand, _CONTAINERS):
            recorder.whole(operand)


def _format(recorder, peek, name, arg):
    has_spec = arg is not None and (arg & 0x04)
    value = peek(1 if has_spec else 0)
    if isinstance(value, _CONTAINERS):
        recorder.opaque(value)


def _format_top(recorder, peek, name, arg):
    if isinstance(peek(0), _CONTAINERS):
        recorder.opaque(peek(0))


def _format_with_spec(recorder, peek, name, arg):
    if isinstance(peek(1), _CONTAINERS):
        recorder.opaque(peek(1))


def _call_stack(recorder, peek, count: int, with_names: bool) -> None:
    """A CALL with `count` arguments, by the interpreter's layout: the callable is read first,
    and the arguments only where the callee is not Python code the recorder follows."""
    shift = 1 if with_names else 0
    if _VERSION >= (3, 13):
        function, owner = peek(count + 1 + shift), peek(count + shift)
    else:
        first, owner = peek(count + 1 + shift), peek(count + shift)
        function, owner = (owner, NULL) if first is NULL else (first, owner)
    if _runs_followed_code(function):
        return
    arguments = [peek(shift + index) for index in range(count - 1, -1, -1)]
    if owner is not NULL:
        arguments.insert(0, owner)
    recorder.call(function, arguments)


def _call(recorder, peek, name, arg):
    _call_stack(recorder, peek, arg, False)


def _call_kw(recorder, peek, name, arg):  # 3.13: the names tuple on top
    _call_stack(recorder, peek, arg, True)


def _call_function(recorder, peek, name, arg):  # 3.10
    function = peek(arg)
    recorder.call(function, [peek(index) for index in range(arg - 1, -1, -1)])


def _call_function_kw(recorder, peek, name, arg):  # 3.10: the names tuple on top
    function = peek(arg + 1)
    recorder.call(function, [peek(index) for index in range(arg, 0, -1)])


def _call_method(recorder, peek, name, arg):  # 3.10
    first, second = peek(arg + 1), peek(arg)
    arguments = [peek(index) for index in range(arg - 1, -1, -1)]
    if first is NULL:
        recorder.call(second, arguments)
    else:
        recorder.call(first, [second, *arguments])


def _call_function_ex(recorder, peek, name, arg):
    keywords = bool(arg & 1)
    positional = peek(1 if keywords else 0)
    mapping = peek(0) if keywords else {}
    # 3.10-3.12: [NULL (3.11, 3.12), callable, args, kwargs]; 3.13: [callable, NULL, ...].
    function = peek(2 + keywords) if _VERSION >= (3, 13) else peek(1 + keywords)
    arguments = list(positional) if isinstance(positional, tuple) else [positional]
    if isinstance(mapping, dict):
        arguments.extend(mapping.values())
    recorder.call(function, arguments)


def _truth(recorder, peek, name, arg):
    recorder.truth(peek(0))


_HANDLERS = {
    "LOAD_ATTR": _load_attr,
    "LOAD_METHOD": _load_attr,
    "LOAD_SUPER_ATTR": _load_super_attr,
    "STORE_ATTR": _store_attr,
    "STORE_SUBSCR": _store_subscr,
    "LOAD_GLOBAL": _load_global,
    "LOAD_NAME": _load_name,
    "LOAD_DEREF": _load_deref,
    "LOAD_CLASSDEREF": _load_deref,
    "LOAD_FROM_DICT_OR_DEREF": _load_deref,
    "BINARY_SUBSCR": _binary_subscr,
    "BINARY_SLICE": _binary_slice,
    "GET_ITER": _whole_top,
    "GET_YIELD_FROM_ITER": _whole_top,
    "UNPACK_SEQUENCE": _whole_top,
    "UNPACK_EX": _whole_top,
    "LIST_EXTEND": _whole_top,
    "SET_UPDATE": _whole_top,
    "DICT_UPDATE": _whole_top,
    "DICT_MERGE": _whole_top,
    "CONTAINS_OP": _contains,
    "COMPARE_OP": _compare,
    "IS_OP": _is_op,
    "BINARY_OP": _binary_op,
    "BINARY_ADD": _binary_op,
    "FORMAT_VALUE": _format,
    "FORMAT_SIMPLE": _format_top,
    "FORMAT_WITH_SPEC": _format_with_spec,
    "CALL": _call,
    "CALL_KW": _call_kw,
    "CALL_FUNCTION": _call_function,
    "CALL_FUNCTION_KW": _call_function_kw,
    "CALL_METHOD": _call_method,
    "CALL_FUNCTION_EX": _call_function_ex,
    "POP_JUMP_IF_FALSE": _truth,
    "POP_JUMP_IF_TRUE": _truth,
    "POP_JUMP_FORWARD_IF_FALSE": _truth,
    "POP_JUMP_FORWARD_IF_TRUE": _truth,
    "POP_JUMP_BACKWARD_IF_FALSE": _truth,
    "POP_JUMP_BACKWARD_IF_TRUE": _truth,
    "JUMP_IF_FALSE_OR_POP": _truth,
    "JUMP_IF_TRUE_OR_POP": _truth,
    "UNARY_NOT": _truth,
    "TO_BOOL": _truth,
    "MATCH_MAPPING": _whole_top,
    "MATCH_SEQUENCE": _whole_top,
    "MATCH_KEYS": _binary_slice,
    "MATCH_CLASS": _whole_top,
}


@functools.lru_cache(maxsize=8192)
def _instruction_table(code) -> dict:
    table = {}
    for instruction in dis.get_instructions(code):
        handler = _HANDLERS.get(instruction.opname)
        if handler is None:
            continue
        table[instruction.offset] = (handler, instruction.argval, instruction.arg)
    return table
