"""The read recorder: what a traced call read of the Python state its guards check.

compiler/tracing.py runs the user's function under a Recorder. Every instruction of the code
it follows is seen before it runs (sys.settrace's opcode events up to Python 3.11,
sys.monitoring's INSTRUCTION events from 3.12), with the objects on the value stack that the
instruction is about to use (frame_stack.py). The recorder keeps what was read, by object
identity, for the objects the walk before the trace found (`known`, reachability.py):

- `items`: (id(owner), fragment) for an attribute read (`.lr`), a dict or sequence item
  (`['lr']`, `[0]`), a global (`['EPS']` of the module's globals), a class attribute
  (`.__dict__['forward']` of the class that defines it);
- `absent`: (id(owner), name) where an attribute was looked for in an object's `__dict__` and
  found elsewhere (a method) or not at all (nn.Module's `__getattr__`), and (id(dict), key)
  where a key was missing;
- `lengths`: ids of containers whose length (or key set) the code depended on (`len(x)`, a
  negative index, a key test);
- `whole`: ids of containers read whole (iterated, unpacked, copied): their length or keys,
  and each item's value;
- `deep`: ids of objects passed to code the recorder does not follow (C functions, the
  tensor and op layers of autojit, NumPy): everything reachable from them counts as read;
- `identity`: ids of objects whose identity decided something (`is`, `id`, `hash`);
- `stored`: (id(owner), fragment) for each attribute or dict item stored into (not a read:
  writebacks.py repeats such a store on every run even where it left the value unchanged);
- `cells`: ids of closure cells read; `codes`: the code objects that ran.

The code followed is the user's and every library's, except the layers below the compiler
(tensor, ops, autograd, ir, compiler, codegen) and NumPy, SciPy, Numba and llvmlite: what those
do with Python objects is a function of their arguments, which count as passed where the
recorder cannot see (deep) unless they are tensors or scalars. compiler/read_selection.py
turns the record into the guards' observations. See docs/notes/guards.md.
"""

from __future__ import annotations

import builtins
import collections
import dis
import functools
import gc
import os
import sys
import threading
import types
import warnings

from ..tensor.graph_break import GraphBreak, graph_break
from . import frame_stack
from .frame_stack import NULL, read_slot

_VERSION = sys.version_info[:2]
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


class Reads:
    """What one trace read (see the module docstring)."""

    def __init__(self):
        self.items: set = set()
        # (id(owner), name or key) -> ("attribute" or "key", the owner, kept alive)
        self.absent: dict = {}
        # ids of objects and user classes whose set of own attributes mattered
        self.attribute_keys: set = set()
        self.lengths: set = set()
        self.whole: set = set()
        self.deep: set = set()
        self.identity: set = set()
        self.cells: set = set()
        self.codes: set = set()
        self.appended: set = set()  # ids of lists `.append` was called on
        # (id(owner), fragment) of each `obj.name = v` and `container[key] = v` on a known
        # object: a store eager makes on every call, even of the value already there
        self.stored: set = set()
        self.failure: str | None = None  # why the record cannot be trusted

    def append_only(self) -> set:
        """The ids of the lists the call appended to and read nothing of (`losses.append(
        loss.item())`): each run appends its values, and nothing of them is guarded."""
        read = self.whole | self.lengths | self.deep | self.identity | \
            {owner for owner, _ in self.items}
        return self.appended - read


class Recorder:
    """Records the reads of one traced call (a context manager around it)."""

    def __init__(self, known: dict, cells: dict, attribute_owners: dict):
        """known: id -> anything, for the objects the walk found (their reads are recorded);
        cells: id(cell) -> path, the closure cells it found; attribute_owners: id(an object's
        `__dict__`) -> id(the object), for the objects it walked the attributes of (a read of
        `obj.__dict__[name]` is a read of `obj.name`)."""
        self.reads = Reads()
        self._known = known
        self._cells = cells
        self._attribute_owners = attribute_owners
        self._reader = frame_stack.reader()
        self._thread = threading.get_ident()
        self._tables: dict = {}
        self._previous = None
        self._tool = None
        self._enabled_codes: list = []
        self._active = False

    @staticmethod
    def available() -> str | None:
        """None when reads can be recorded here, else why not."""
        if frame_stack.reader() is None:
            return f"no stack reader for Python {sys.version.split()[0]}"
        if _VERSION < (3, 12) and sys.gettrace() is not None:
            return "another trace function (a debugger or coverage) is installed"
        if _VERSION >= (3, 12) and frame_stack.free_tool_id() is None:
            return "no free sys.monitoring tool id"
        return None

    # ---- installing --------------------------------------------------------------------------

    def __enter__(self) -> Recorder:
        self._active = True
        if _VERSION < (3, 12):
            self._previous = sys.gettrace()
            sys.settrace(self._call_tracer())
        else:
            monitoring = sys.monitoring
            self._tool = frame_stack.free_tool_id()
            monitoring.use_tool_id(self._tool, "autojit guards")
            monitoring.register_callback(self._tool, monitoring.events.PY_START,
                                         self._on_start)
            monitoring.register_callback(self._tool, monitoring.events.PY_RESUME,
                                         self._on_start)
            monitoring.register_callback(self._tool, monitoring.events.INSTRUCTION,
                                         self._on_instruction)
            monitoring.set_events(self._tool, monitoring.events.PY_START |
                                  monitoring.events.PY_RESUME)
        return self

    def __exit__(self, *exc) -> None:
        if not self._active:
            return
        self._active = False
        if _VERSION < (3, 12):
            sys.settrace(self._previous)
            return
        monitoring = sys.monitoring
        monitoring.set_events(self._tool, 0)
        for code in self._enabled_codes:
            monitoring.set_local_events(self._tool, code, 0)
        for event in (monitoring.events.PY_START, monitoring.events.PY_RESUME,
                      monitoring.events.INSTRUCTION):
            monitoring.register_callback(self._tool, event, None)
        monitoring.free_tool_id(self._tool)

    def _table(self, code):
        """offset -> (handler, argval, arg) of the instructions of `code` that read, or None
        for code the recorder does not follow."""
        table = self._tables.get(code, False)
        if table is False:
            table = _instruction_table(code) if _followed(code.co_filename) else None
            self._tables[code] = table
            if table is not None:
                self.reads.codes.add(code)
        return table

    # sys.settrace (3.10, 3.11)

    def _call_tracer(self):
        """The global trace function: a frame of followed code gets the local trace function
        of its code (made once per code object), with opcode events on."""
        tables = {}
        table_of = self._table
        handle = self._handle
        locate = self._reader.locate

        def on_call(frame, event, arg):
            code = frame.f_code
            table = tables.get(code, False)
            if table is False:
                table = tables[code] = table_of(code)
            if table is None:
                return None
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            located = None

            # One local trace function per frame: it locates the frame's stack once.
            def local(frame, event, arg):
                nonlocal located
                if event == "opcode":
                    entry = table.get(frame.f_lasti)
                    if entry is not None:
                        if located is None:
                            located = locate(frame)
                        handle(entry, frame, frame.f_lasti, located)
                return local
            return local

        return on_call

    # sys.monitoring (3.12, 3.13)

    def _on_start(self, code, offset):
        if threading.get_ident() != self._thread:
            return
        if code not in self._tables and self._table(code) is not None:
            sys.monitoring.set_local_events(self._tool, code,
                                            sys.monitoring.events.INSTRUCTION)
            self._enabled_codes.append(code)

    def _on_instruction(self, code, offset):
        if threading.get_ident() != self._thread:
            return
        table = self._tables.get(code)
        entry = table.get(offset) if table else None
        if entry is not None:
            self._handle(entry, sys._getframe(1), offset)

    # ---- the instructions ----------------------------------------------------------------------

    def _handle(self, entry, frame, offset: int, located=None) -> None:
        if self.reads.failure is not None:
            return
        handler, argval, arg = entry
        try:
            handler(self, _Peek(self._reader, frame, offset, located), argval, arg)
        except GraphBreak:
            raise  # a call the trace cannot stand for, stopped before it runs
        except Exception as error:  # noqa: BLE001 - never into the user's code
            self.reads.failure = f"{type(error).__name__} reading {handler.__name__}: {error}"

    def known(self, obj) -> bool:
        return id(obj) in self._known

    # reads by kind, called by the handlers below

    def attribute(self, owner, name: str) -> None:
        """`owner.name` read (LOAD_ATTR, getattr, hasattr)."""
        reads = self.reads
        if type(owner) is super:
            self._super_attribute(owner, name)
            return
        if id(owner) not in self._known:
            return
        if isinstance(owner, type):
            meta = type(owner)
            descriptor = _lookup(meta, name)[1]
            if descriptor is not None and _is_data_descriptor(descriptor) or \
                    _lookup(owner, name)[0] is None:
                # `Model.factor` held by the metaclass (or one of its descriptors)
                self._class_attribute(owner, name, owner.__mro__)
                self._class_attribute(meta, name, meta.__mro__)
            else:
                self._class_attribute(owner, name, owner.__mro__)
            return
        if isinstance(owner, types.ModuleType):
            reads.items.add((id(owner), f".{name}"))
            return
        if name == "__dict__":  # what is read of it is recorded as attribute reads
            return
        kind = type(owner)
        defining, descriptor = _lookup(kind, name)
        try:
            attributes = object.__getattribute__(owner, "__dict__")
        except (AttributeError, TypeError):
            attributes = None
        if descriptor is not None and _is_data_descriptor(descriptor):
            # A property's getter runs (and records) itself; a slot is read at its path.
            reads.items.add((id(owner), f".{name}"))
            self._class_attribute(kind, name, kind.__mro__)
            return
        if isinstance(attributes, dict) and name in attributes:
            reads.items.add((id(owner), f".{name}"))
            return
        if isinstance(attributes, dict):
            reads.absent[(id(owner), name)] = ("attribute", owner)
        if defining is None and descriptor is None:
            # `__getattr__` (recorded where it is Python) or an AttributeError: whatever
            # class gains the attribute later would be read instead.
            for cls in kind.__mro__:
                if id(cls) in self._known:
                    reads.attribute_keys.add(id(cls))
            return
        self._class_attribute(kind, name, kind.__mro__)

    def _class_attribute(self, cls: type, name: str, mro) -> None:
        for base in mro:
            if name in base.__dict__:
                if id(base) in self._known:
                    self.reads.items.add((id(base), f".__dict__[{name!r}]"))
                return
            if id(base) in self._known:  # it must not gain the attribute
                self.reads.attribute_keys.add(id(base))

    def _super_attribute(self, proxy, name: str) -> None:
        start = getattr(proxy, "__thisclass__", None)
        bound = getattr(proxy, "__self_class__", None)
        if start is None or bound is None:
            return
        mro = bound.__mro__
        self._class_attribute(bound, name, mro[mro.index(start) + 1:])

    def subscript(self, container, key) -> None:
        """`container[key]` read."""
        owner = self._attribute_owners.get(id(container))
        if owner is not None and isinstance(key, str):  # `obj.__dict__[name]`
            if key in container:
                self.reads.items.add((owner, f".{key}"))
            else:
                self.reads.absent[(owner, key)] = ("attribute", container)
            return
        if id(container) not in self._known:
            return
        reads = self.reads
        if isinstance(key, slice):
            reads.whole.add(id(container))
        elif isinstance(container, dict):
            if type(container).__getitem__ is not dict.__getitem__ and not isinstance(
                    type(container).__getitem__, types.WrapperDescriptorType):
                return  # a Python __getitem__: recorded as it runs
            try:
                present = key in container
            except TypeError:  # unhashable: the read raises
                return
            if present:
                reads.items.add((id(container), f"[{_key_fragment(key)}]"))
            else:
                reads.absent[(id(container), key)] = ("key", container)
        elif isinstance(container, (list, tuple)) and isinstance(key, int):
            index = key if key >= 0 else key + len(container)
            if key < 0 or not 0 <= index < len(container):
                reads.lengths.add(id(container))
            if 0 <= index < len(container):
                reads.items.add((id(container), f"[{index}]"))
        elif isinstance(container, _CONTAINERS):
            reads.whole.add(id(container))
        else:
            reads.deep.add(id(container))

    def whole(self, obj) -> None:
        """A container read whole (iterated, unpacked, copied): its length or keys and each
        item; an object's attributes (`vars(obj)`, `obj.__dict__`); an iterator: all of it
        (its position)."""
        if isinstance(obj, _DICT_VIEWS):
            for mapping in gc.get_referents(obj):
                if isinstance(mapping, dict):
                    self.whole(mapping)
            return
        owner = self._attribute_owners.get(id(obj))
        if owner is not None:  # `vars(obj)` iterated
            self.reads.whole.add(owner)
            return
        if id(obj) not in self._known:
            return
        if isinstance(obj, _CONTAINERS):
            self.reads.whole.add(id(obj))
        elif not isinstance(_lookup(type(obj), "__iter__")[1], types.FunctionType):
            # An iterator (its position), or iteration in C over an object: everything. A
            # Python __iter__ records what it reads itself.
            self.reads.deep.add(id(obj))

    def attributes(self, obj) -> None:
        """Every attribute of `obj` read (`vars(obj)`)."""
        if id(obj) in self._known:
            self.reads.whole.add(id(obj))

    def truth(self, obj) -> None:
        """`if obj:` and `not obj`: a container's length; an object's __bool__ or __len__,
        recorded where it is Python."""
        if id(obj) in self._attribute_owners:
            self.length(obj)
            return
        if id(obj) not in self._known:
            return
        if isinstance(obj, _CONTAINERS):
            self.reads.lengths.add(id(obj))
            return
        kind = type(obj)
        for name in ("__bool__", "__len__"):
            method = _lookup(kind, name)[1]
            if method is not None:
                if not isinstance(method, types.FunctionType):
                    self.reads.deep.add(id(obj))
                return

    def length(self, obj) -> None:
        owner = self._attribute_owners.get(id(obj))
        if owner is not None:
            self.reads.attribute_keys.add(owner)
        elif id(obj) in self._known:
            self.reads.lengths.add(id(obj))

    def identity(self, obj) -> None:
        if id(obj) in self._known:
            self.reads.identity.add(id(obj))

    def opaque(self, obj, depth: int = 0) -> None:
        """`obj` went where the recorder does not follow: everything it reaches is read.
        A container the trace made is looked into for the objects it holds."""
        if id(obj) in self._known:
            self.reads.deep.add(id(obj))
            return
        if depth < 4 and type(obj) in (list, tuple, dict, set, frozenset):
            for item in (obj.items() if type(obj) is dict else obj):
                if type(obj) is dict:
                    self.opaque(item[0], depth + 1)
                    self.opaque(item[1], depth + 1)
                else:
                    self.opaque(item, depth + 1)
        elif isinstance(obj, (types.MethodType, types.BuiltinMethodType)):
            owner = getattr(obj, "__self__", None)
            if owner is not None and not isinstance(owner, types.ModuleType):
                self.opaque(owner, depth + 1)
        elif isinstance(obj, functools.partial):
            self.opaque(obj.func, depth + 1)
            self.opaque(obj.args, depth + 1)
            self.opaque(obj.keywords, depth + 1)

    def call(self, function, arguments: list) -> None:
        """A call: Python code the recorder follows records itself; a modelled builtin reads
        what it is known to; anything else gets its arguments as read through and through."""
        if _runs_followed_code(function):
            return
        model = _MODELS.get(_model_key(function))
        if model is not None:
            model(self, function, arguments)
            return
        self.opaque(function)
        for argument in arguments:
            self.opaque(argument)


class _Peek:
    """The value stack of one frame at one instruction: `peek(0)` is the top. The frame's
    stack is located once, on the first read."""

    __slots__ = ("reader", "frame", "offset", "located", "_stack")

    def __init__(self, reader, frame, offset: int, located=None):
        self.reader, self.frame, self.offset, self._stack = reader, frame, offset, None
        self.located = located  # StackReader.locate(frame), where the caller has it

    def __call__(self, index: int):
        stack = self._stack
        if stack is None:
            located = self.located
            stack = self._stack = located.stack(self.offset) if located is not None else \
                self.reader.stack(self.frame, self.offset)
        return read_slot(*stack, index)

    def cell(self, slot: int):
        return self.reader.cell(self.frame, slot)


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
