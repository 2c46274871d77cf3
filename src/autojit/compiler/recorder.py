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

import functools
import gc
import logging
import sys
import threading
import types

from ..tensor.graph_break import GraphBreak
from . import frame_stack
from .frame_stack import read_slot
from .recorder_rules import (
    _CONTAINERS,
    _DICT_VIEWS,
    _MODELS,
    _VERSION,
    _followed,
    _instruction_table,
    _is_data_descriptor,
    _key_fragment,
    _lookup,
    _model_key,
    _runs_followed_code,
)


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
        # The global trace function while recording with sys.settrace (3.10, 3.11), else None;
        # it is off while the ops layer traces a primitive (ops/registry.py `_run`), where
        # only autojit's own code runs.
        self.trace_function = None

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
            self.trace_function = self._call_tracer()
            sys.settrace(self.trace_function)
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
        if isinstance(obj, (logging.Logger, logging.LoggerAdapter)):
            self._logger(obj)
            return
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

    def _logger(self, logger) -> None:
        """A logger given to logging's code (`log.info(...)`): what decides whether the call
        logs is read (its `disabled` flag, its level or the first level set among its
        parents, the manager's `disable`). The record itself is emitted by each run through
        the handlers and filters of that moment (ir/printing.LogEffect): they, the logger
        registry and the rest are not guarded, so that a logger made after the trace (by
        another thread, or the compiler's own imports) does not trace the call again."""
        if isinstance(logger, logging.LoggerAdapter):
            self.attribute(logger, "logger")
            self.attribute(logger, "extra")
            logger = logger.logger
            if not isinstance(logger, logging.Logger):
                self.opaque(logger)
                return
        self.attribute(logger, "disabled")
        self.attribute(logger, "manager")
        self.attribute(logger.manager, "disable")
        current = logger
        while current is not None:
            self.attribute(current, "level")
            if current.level:
                break
            self.attribute(current, "parent")
            current = current.parent

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
