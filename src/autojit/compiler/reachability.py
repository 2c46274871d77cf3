"""What a compiled function can reach: the complete walk its guards are made from.

api.py walks, before each trace, everything the function can reach from its roots (the arguments
that are not tensors, the object it is a method of, its closure cells and the globals its code
loads: walk_roots.py finds them) and records one *observation* per thing the trace may depend on:

- a Python scalar (bool, int, float, complex, str, bytes, None): its value;
- a list, tuple, deque, dict or an object's attribute dict: its length, and a dict's keys in
  order (the items are walked; a missing dict key or attribute fails its path); a set: its
  contents (its items that are not scalars are walked too); a bytearray or array.array: a
  copy of its contents; an empty `__slots__` slot: that it is still empty;
- an object: its class; a class or function of the user's own code: its attributes (a
  class's metaclass too), and for a function its code object, closure cells, defaults and
  the globals its code loads (a global it loads that is not defined: that it still is not,
  as a builtin shadowed later would be read instead); a module of the user's own: its
  attributes; a weakref: the object it refers to;
- a NumPy array: its identity, and a copy (`arrays`: api.py guards the values of those
  the graph does not read itself, guard_conditions.arrays_to_compare);
- what the walk does not enter (library functions, classes and modules, other objects
  without attributes): the object's identity;
- a tensor: its path (api.py guards the tensors the trace read by identity, shape, dtype,
  requires_grad and hooks);
- an object reached a second time by another path: that path's identity, so that rebinding
  either path is seen;
- the floats under the attributes a class names in `_runtime_scalar_attributes` (an
  optimizer's `param_groups`): their paths too (`declared_runtime`), which api.py traces as
  runtime floats from the first trace on; and the objects whose `_makes_state_on_call()`
  says the call will make state they keep (`makes_state`: an optimizer before its first
  step), which make api.py run a function's first call eagerly.

Library code (the standard library, installed packages, autojit itself) is assumed not to
change while the program runs; everything else is the program's own state and is walked
through, at any depth: there is no depth or length limit. A walk that visits more than
`MAX_OBJECTS` objects stops and says so (`complete` is False): api.py then runs the function
eagerly, with a warning, rather than guard part of what it can reach.

The same walk, repeated after the trace, tells what the traced call did to Python state
(compiler/writebacks.py): a scalar it wrote (`model.eval()`, `self.steps += 1`), a container
it grew, a NumPy array it wrote into, or a symbolic value it stored somewhere
(`history.append(loss.item())`), which must never outlive the trace. See
docs/notes/guards.md.
"""

from __future__ import annotations

import array
import collections
import functools
import io
import logging
import random
import re
import types
import warnings
import weakref

import numpy as np

from ..ir.deferred_calls import opaque_classes
from ..ir.printing import TOKEN_MARK
from ..tensor.symbolic import is_symbolic
from ..tensor.tensor import Tensor
from ..tensor.traced_scalar import TracedList
from .array_values import ArrayDigest, same_array
from .library_code import is_library
from .walk_roots import global_names

SCALAR_TYPES = (bool, int, float, complex, str, bytes, type(None))
MAX_OBJECTS = 20000
MAX_OBSERVATIONS = 50000
# The bytes of the NumPy arrays whose values the guards compare on each call (api.py).
MAX_ARRAY_BYTES = 1 << 16
# A larger array is remembered by a hash of its bytes, not a copy (StateChanges, restore).
_COPIED_ARRAY_BYTES = 1 << 24
_CONTAINERS = (list, tuple, dict, set, frozenset)
_SEQUENCES = (list, tuple, collections.deque)
# Mutable buffers of scalars: observed by a copy of their contents.
_BUFFERS = (bytearray, array.array)

_TENSOR_KEY = "\x00"  # around a tensor key's id in a display, until the walk names it
_PLACEHOLDER = re.compile(f"{_TENSOR_KEY}([0-9]+){_TENSOR_KEY}")
_GENERATORS = (np.random.Generator, np.random.RandomState, random.Random)
_TENSOR_HOOKS = ("_backward_hooks", "_post_accumulate_hooks")
_LOGGER_ATTRIBUTES = ("name", "level", "parent", "propagate", "handlers", "disabled", "filters",
                      "manager")


def _logging_attributes(obj) -> tuple | None:
    """What of logging's objects a call can depend on: a logger's level, flags, handlers and
    filters, and the manager's `disable`; not the registry of every logger, nor the level
    cache logging fills itself (a logger made after the trace, by the compiler's imports say,
    or a cache a call fills is no change of the program's state)."""
    if isinstance(obj, logging.Logger):
        return _LOGGER_ATTRIBUTES
    if isinstance(obj, logging.Manager):
        return ("disable",)
    return None


def rng_state(generator=None):
    """Where a random generator stands (the global NumPy and Python generators for None), as
    something == compares."""
    if generator is None:
        return (rng_state(np.random.mtrand._rand), random.getstate())
    if isinstance(generator, np.random.Generator):
        found = generator.bit_generator.state
        if found["bit_generator"] == "MT19937":  # autojit's Generator keeps a normal too
            return (found["state"]["pos"], found["state"]["key"].tobytes(),
                    getattr(generator, "_normal_cache", [None])[0])
        return repr(found)
    if isinstance(generator, np.random.RandomState):
        state = generator.get_state(legacy=False)
        return (state["state"]["pos"], state["state"]["key"].tobytes())
    if isinstance(generator, random.SystemRandom):
        return None  # the system's entropy: no state to guard, and getstate() raises
    return generator.getstate()


def _is_iterator(obj) -> bool:
    return getattr(type(obj), "__next__", None) is not None and not isinstance(obj, io.IOBase)


def iterator_progress(obj, depth: int = 0):
    """Where an iterator stands, as something == compares: a generator's position and
    locals; otherwise what it pickles to (a list iterator's index, itertools.count's next
    value) or its attributes (an iterator class of Python's: a DataLoader's), with the
    iterators it holds followed in turn. Objects inside count by identity."""
    if isinstance(obj, types.GeneratorType):
        frame = obj.gi_frame
        if frame is None:
            return ("finished",)
        return (frame.f_lasti, tuple((name, _progress_part(value, depth))
                                     for name, value in frame.f_locals.items()))
    attributes = getattr(obj, "__dict__", None)
    if isinstance(attributes, dict):
        return tuple((name, _progress_part(value, depth)) for name, value in
                     list(attributes.items()))
    try:
        with warnings.catch_warnings():  # itertools' pickling is deprecated in Python 3.12
            warnings.simplefilter("ignore", DeprecationWarning)
            reduced = obj.__reduce__()
    except Exception:  # nothing to read the position from: the object stands for itself
        return id(obj)
    if not isinstance(reduced, tuple):
        return id(obj)
    return tuple(_progress_part(part, depth) for part in reduced[1:])


def _progress_part(value, depth: int):
    if isinstance(value, SCALAR_TYPES):
        return value
    if depth < 4 and _is_iterator(value):
        return iterator_progress(value, depth + 1)
    if isinstance(value, tuple) and depth < 4:
        return tuple(_progress_part(item, depth + 1) for item in value)
    if isinstance(value, list):  # what an exhausted dict iterator pickles to: its remaining
        return (id(value), len(value))
    return id(value)


class Observation:
    """One thing the trace may depend on: `kind` of the object at `path` is `value`.

    path: a tuple (root expression, fragment, fragment, ...) whose concatenation is a Python
    expression; display: the same path as the user would write it."""

    __slots__ = ("path", "kind", "value", "display")

    def __init__(self, path: tuple, kind: str, value, display: str):
        self.path, self.kind, self.value, self.display = path, kind, value, display

    def same(self, other: Observation) -> bool:
        if self.kind != other.kind:
            return False
        if self.kind in ("rng", "progress"):
            return self.value == other.value
        if self.kind in ("unset", "absent"):
            return True  # the same path: the same attribute or key
        if self.kind == "keys":
            return len(self.value) == len(other.value) and all(
                mine is theirs for mine, theirs in zip(self.value, other.value))
        if self.kind == "contents":
            return self.value == other.value
        if self.kind in ("scalar", "len", "set"):
            return type(self.value) is type(other.value) and (
                self.value == other.value or (self.value != self.value and
                                              other.value != other.value))  # nan
        return self.value is other.value


class Walk:
    """The observations, tensors and snapshots of one walk from `roots`.

    roots: (path tuple, display name, object) triples."""

    def __init__(self, roots: list, constants: dict | None = None, limit: int = MAX_OBJECTS,
                 copies: bool = True, appended: frozenset = frozenset(),
                 skipped: frozenset = frozenset()):
        self.observations: list[Observation] = []
        self.tensors: dict = {}  # id(tensor) -> (path, display, tensor), the first path found
        # id(tensor) -> the most readable of the displays it was reached by (graph input
        # names: `model[0].weight` rather than `opt.param_groups[0]['params'][0]`)
        self.tensor_names: dict = {}
        self.snapshots: dict = {}  # id(container) -> (container, shallow copy of its contents)
        # id(container) -> (path, display) of the first path that reached it
        self.container_paths: dict = {}
        # path -> the object there, for what the walk went into (a walk after a trace only:
        # compiler/writebacks.py looks for objects the trace made)
        self.objects: dict = {}
        # The paths of lists the function only appends to (compiler/writebacks.py): their
        # items are nothing a trace reads, so only their class is observed.
        self._appended = appended
        # Paths the function only ever assigns (compiler/writebacks.py): what is there before
        # a call is nothing a trace reads, so it is not observed.
        self._skipped = skipped
        self.codes: list = []  # the code objects of the user's functions reached
        # id(array) -> (path, display, array, a copy or an ArrayDigest; None without
        # `copies`): the NumPy arrays reached, whose values api.py guards unless the graph
        # itself reads them (guard_conditions.arrays_to_compare)
        self.arrays: dict = {}
        self._copies = copies
        # Progress bars' classes (ir/deferred_calls.py): their instances are seen by identity
        self._opaque = opaque_classes()
        # names the paths use for objects held as constants (the roots' too)
        self.constants: dict = dict(constants or {})
        self.complete = True
        self.too_large = ""  # where the walk stopped, when it did
        self._seen: dict = {}  # id(object) -> the object (kept alive while walking)
        # Where the walk found things first, by identity (read_selection.py maps a recorded
        # read to the observations at its path): id(object) -> path, for the objects walked
        # into and the globals dicts of the user's functions; id(cell) -> the path of its
        # contents; id(code) -> the paths of the functions running it.
        self.object_paths: dict = {}
        self.cell_paths: dict = {}
        self.function_paths: dict = {}
        self.attribute_owners: dict = {}  # id(an object's __dict__) -> id(the object)
        # id(dict) -> the display of the object whose attributes its entries stand for (an
        # nn.Module's _modules, _parameters, _buffers: `model.fc1.weight`, `model[0]`)
        self._attribute_dicts: dict = {}
        self._paths: set = set()
        # Floats a class says a trace should read on every call (`_runtime_scalar_attributes`:
        # an optimizer's hyperparameters, which schedulers change): their paths, and the
        # paths of the attributes they are found under.
        self.declared_runtime: list = []
        self._runtime_roots: set = set()
        # The objects that say a call will make state they keep (`_makes_state_on_call()`:
        # an optimizer before its first step): their displays.
        self.makes_state: list = []
        self._keyed: dict = {}  # id -> the tensors used as dict keys (named after the walk)
        self._limit = limit
        self._walk(roots)
        self._name_tensor_keys()

    # ---- the walk -------------------------------------------------------------------------------

    def _walk(self, roots: list) -> None:
        frontier = list(roots)
        while frontier:
            following = []
            for path, display, obj in frontier:
                following.extend(self._visit(path, display, obj))
                if len(self._seen) > self._limit or \
                        len(self.observations) > MAX_OBSERVATIONS:
                    self.complete = False
                    self.too_large = display
                    return
            frontier = following

    def _name_tensor_keys(self) -> None:
        """Displays with a tensor as a dict key (an optimizer's state) name it as the user
        does (`opt.state[model[0].weight]`), by the most readable path the walk found to it,
        which it may have found after the key."""
        if not self._keyed:
            return
        names = {str(identity): self.tensor_names.get(
            identity, f"<{type(tensor).__name__} at {identity:#x}>")
            for identity, tensor in self._keyed.items()}

        def name_of(match) -> str:
            return names.get(match.group(1), match.group(0))

        def named(display: str) -> str:
            for _ in range(4):  # a key's name may hold another key (a state's state)
                if _TENSOR_KEY not in display:
                    break
                display = _PLACEHOLDER.sub(name_of, display)
            return display

        for observation in self.observations:
            observation.display = named(observation.display)
        self.tensors = {key: (path, named(display), tensor)
                        for key, (path, display, tensor) in self.tensors.items()}
        self.tensor_names = {key: named(display) for key, display in self.tensor_names.items()}
        self.container_paths = {key: (path, named(display))
                                for key, (path, display) in self.container_paths.items()}
        self.arrays = {key: (path, named(display), *rest)
                       for key, (path, display, *rest) in self.arrays.items()}

    def _observe(self, path: tuple, kind: str, value, display: str) -> None:
        self.observations.append(Observation(path, kind, value, display))

    def _visit(self, path: tuple, display: str, obj) -> list:
        if path in self._paths:  # a global two functions load, say: one path, one object
            return []
        self._paths.add(path)
        if path in self._skipped:
            return []
        if is_symbolic(obj) or isinstance(obj, TracedList):
            # A symbolic scalar (`.item()` of a traced tensor) kept in Python state.
            self._observe(path, "symbolic", obj, display)
            return []
        if isinstance(obj, SCALAR_TYPES):
            if obj.__class__ is str and TOKEN_MARK in obj:
                # Text formatted from a traced value (ir/printing.py's tokens) stored in state.
                self._observe(path, "symbolic", obj, display)
                return []
            self._observe(path, "scalar", obj, display)
            if obj.__class__ is float and self._runtime_roots and any(
                    path[:end] in self._runtime_roots for end in range(2, len(path))):
                self.declared_runtime.append(path)
            return []
        if isinstance(obj, Tensor):
            self.tensors.setdefault(id(obj), (path, display, obj))
            named = self.tensor_names.get(id(obj))
            if named is None or _readability(display) < _readability(named):
                self.tensor_names[id(obj)] = display
            self._observe(path, "tensor", obj, display)
            # Its hooks run in a traced backward: what they reach (a list a hook appends to)
            # is state the call can change.
            return [((*path, f".{name}"), f"{display}.{name}", getattr(obj, name))
                    for name in _TENSOR_HOOKS if getattr(obj, name)]
        if id(obj) in self._seen:
            self._observe(path, "is", obj, display)
            return []
        if isinstance(obj, np.ndarray):
            self._observe(path, "is", obj, display)
            if id(obj) not in self.arrays:
                self.arrays[id(obj)] = (path, display, obj, (obj.copy() if obj.nbytes <= \
                    _COPIED_ARRAY_BYTES else ArrayDigest(obj)) if self._copies else None)
            return []
        if is_library(obj):
            self._observe(path, "is", obj, display)
            return []
        if isinstance(obj, _GENERATORS):
            # Which generator, and where it stands: a trace that draws from it moved it, and
            # a graph cannot draw from it again (StateChanges sees the move).
            self._observe(path, "is", obj, display)
            self._observe(path, "rng", rng_state(obj), display)
            return []
        if _is_iterator(obj):
            # Where an iterator stands (a generator, `iter(list)`, a DataLoader's iterator): a
            # trace that took an item from it moved it, and a graph cannot take another
            # (StateChanges sees the move, as it sees a random generator's).
            self._observe(path, "progress", iterator_progress(obj), display)
        self._seen[id(obj)] = obj
        self.object_paths[id(obj)] = path
        if not self._copies:
            self.objects[path] = obj
        kind = type(obj)
        if len(path) > 1:  # a constant root is that very object: its class cannot change
            self._observe(path, "class", kind, display)
        if path in self._appended and isinstance(obj, list):
            self._snapshot(obj, list, path, display)
            return []
        if kind in (set, frozenset) or isinstance(obj, (set, frozenset)):
            return self._set(path, display, obj)
        if isinstance(obj, _SEQUENCES):
            if not isinstance(obj, tuple):
                self._snapshot(obj, list, path, display)
            self._observe(path, "len", len(obj), display)
            return [((*path, f"[{index}]"), f"{display}[{index}]", item)
                    for index, item in enumerate(obj)]
        if isinstance(obj, dict):
            self._snapshot(obj, dict, path, display)
            self._keys(path, obj, display)
            owner = self._attribute_dicts.get(id(obj))
            return [((*path, f"[{self._key(key)}]"), f"{display}[{self._key_text(key)}]"
                     if owner is None else _attribute_display(owner, key), value)
                    for key, value in list(obj.items())]
        if isinstance(obj, _BUFFERS):
            self._observe(path, "contents", obj[:], display)
            return []
        if isinstance(obj, weakref.ref):  # what it refers to, read through it
            return [((*path, "()"), f"{display}()", obj())]
        if isinstance(obj, types.FunctionType):
            return self._function(path, display, obj)
        if isinstance(obj, types.MethodType):
            return [((*path, ".__self__"), f"{display}.__self__", obj.__self__),
                    ((*path, ".__func__"), f"{display}.__func__", obj.__func__)]
        if isinstance(obj, functools.partial):
            return [((*path, ".func"), f"{display}.func", obj.func),
                    ((*path, ".args"), f"{display}.args", obj.args),
                    ((*path, ".keywords"), f"{display}.keywords", obj.keywords)]
        if isinstance(obj, type):
            return self._class(path, display, obj)
        if isinstance(obj, types.ModuleType):
            return self._attributes(path, display, obj, vars(obj))
        if self._opaque and isinstance(obj, self._opaque):  # a progress bar: its identity
            self._observe(path, "is", obj, display)
            return []
        named = getattr(kind, "_reachable_attributes", None) or _logging_attributes(obj)
        if named is not None:  # an object that says what of it a trace can depend on
            return [((*path, f".{name}"), f"{display}.{name}", getattr(obj, name))
                    for name in named]
        children = []
        for name in getattr(kind, "_runtime_scalar_attributes", ()):
            self._runtime_roots.add((*path, f".{name}"))
        if getattr(kind, "_makes_state_on_call", None) is not None and \
                obj._makes_state_on_call():
            self.makes_state.append(display)
        attributes = getattr(obj, "__dict__", None)
        if isinstance(attributes, dict):
            children = self._attributes(path, display, obj, attributes)
        for name in _slot_names(kind):
            if hasattr(obj, name):
                children.append(((*path, f".{name}"), f"{display}.{name}", getattr(obj, name)))
            else:  # an empty slot: setting it later must be seen
                self._observe((*path, f".{name}"), "unset", name, f"{display}.{name}")
        if not isinstance(attributes, dict) and not _slot_names(kind):
            self._observe(path, "is", obj, display)  # nothing to look into: which object
        return children + self._class_children(kind)

    def _keys(self, path: tuple, mapping, display: str) -> None:
        """A dict's keys in order: code that iterates over it (a Sequential's modules,
        vars(obj)) sees them in that order, and a tensor in a dict argument is read by its
        position among them (nested_arguments.py), so one key is guarded by name too."""
        if not mapping:
            self._observe(path, "len", 0, display)
        else:
            self._observe(path, "keys", tuple(mapping), display)

    def _attributes(self, path: tuple, display: str, obj, attributes: dict) -> list:
        self.attribute_owners[id(attributes)] = id(obj)
        self._snapshot(attributes, dict, (*path, ".__dict__"), f"{display}.__dict__")
        self._keys((*path, ".__dict__"), attributes, f"{display}.__dict__")
        # A class may say which of its attributes are dicts whose entries users reach as
        # attributes (nn.Module: `model.fc1` is model._modules["fc1"]): their entries are
        # displayed as such.
        for name in getattr(type(obj), "_attribute_dicts", ()):
            if isinstance(attributes.get(name), dict):
                self._attribute_dicts[id(attributes[name])] = display
        return [((*path, f".{name}"), f"{display}.{name}", value)
                for name, value in list(attributes.items())
                if isinstance(name, str) and name.isidentifier() and not (
                    name.startswith("__") and name.endswith("__"))]

    def _class_children(self, kind: type) -> list:
        """The user's own classes in an object's MRO, walked once each (class attributes)."""
        children = []
        for cls in kind.__mro__:
            if cls is object or is_library(cls) or id(cls) in self._seen:
                continue
            children.append(((self.constant_path(cls),), cls.__qualname__, cls))
        return children

    def _class(self, path: tuple, display: str, cls: type) -> list:
        attributes = cls.__dict__
        self._keys((*path, ".__dict__"), attributes, f"{display}.__dict__")
        children = []
        for name, value in list(attributes.items()):
            if name.startswith("__") and name.endswith("__"):
                continue
            where = (*path, f".__dict__[{name!r}]")
            if isinstance(value, (staticmethod, classmethod)):
                where, value = (*where, ".__func__"), value.__func__
            elif isinstance(value, property):
                where, value = (*where, ".fget"), value.fget
            children.append((where, f"{display}.{name}", value))
        # A metaclass of the user's holds attributes its classes read (`Model.factor`).
        return children + self._class_children(cls) + self._class_children(type(cls))

    def _function(self, path: tuple, display: str, function) -> list:
        constant = len(path) == 1  # the compiled function itself, held by the guards
        self.codes.append(function.__code__)
        self.function_paths.setdefault(id(function.__code__), []).append(path)
        if not constant:  # another function at this path has other code
            self._observe((*path, ".__code__"), "is", function.__code__, f"{display}.__code__")
        children = []
        for index, (name, cell) in enumerate(zip(function.__code__.co_freevars,
                                                 function.__closure__ or (), strict=False)):
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            # A function's cells are fixed: the constant function's own are held directly.
            where = (self.constant_path(cell), ".cell_contents") if constant else (
                *path, f".__closure__[{index}].cell_contents")
            self.cell_paths.setdefault(id(cell), where)
            children.append((where, name, contents))
        if function.__defaults__:
            children.append(((*path, ".__defaults__"), f"{display}.__defaults__",
                             function.__defaults__))
        if function.__kwdefaults__:
            children.append(((*path, ".__kwdefaults__"), f"{display}.__kwdefaults__",
                             function.__kwdefaults__))
        scope = function.__globals__
        root = self.constant_path(scope)
        self.object_paths.setdefault(id(scope), (root,))
        if id(scope) not in self.snapshots:  # the globals it stores are put back from it
            self._snapshot(scope, dict, (root,), "globals")
        for name in global_names(function.__code__):
            where = (root, f"[{name!r}]")
            if name in scope:
                children.append((where, name, scope[name]))
            elif where not in self._paths:  # a builtin, or undefined: a global defined
                self._paths.add(where)      # later is read instead
                self._observe(where, "absent", name, name)
        return children

    def _set(self, path: tuple, display: str, obj) -> list:
        """Its contents (items compare by identity first), and the items that are not
        scalars, walked from a constant path each (a set has no path to an item)."""
        self._observe(path, "set", frozenset(obj), display)
        if isinstance(obj, set):
            self._snapshot(obj, set, path, display)
        return [((self.constant_path(item),), f"{display} item {_key_text(item)}", item)
                for item in obj if not isinstance(item, SCALAR_TYPES)]

    # ---- constants and snapshots ----------------------------------------------------------------

    def constant_path(self, obj) -> str:
        """A root expression for an object the guard code holds as a constant."""
        name = f"W{id(obj)}"
        self.constants[name] = obj
        return name

    def _key_text(self, key) -> str:
        """A dict key as a display shows it; a tensor by a placeholder named after the walk."""
        if isinstance(key, Tensor):
            self._keyed[id(key)] = key
            return f"{_TENSOR_KEY}{id(key)}{_TENSOR_KEY}"
        return _key_text(key)

    def _key(self, key) -> str:
        if isinstance(key, (str, int, float, bool, bytes, type(None))):
            return repr(key)
        return self.constant_path(key)

    def _snapshot(self, container, copy, path: tuple, display: str) -> None:
        self.snapshots[id(container)] = (container, copy(container))
        self.container_paths.setdefault(id(container), (path, display))

    def restore(self) -> None:
        """Put every container the walk saw back as it was (what a trace that did not finish
        changed): lists, dicts, sets and objects' attributes."""
        for container, contents in self.snapshots.values():
            if _unchanged(container, contents):
                continue
            if isinstance(container, list):
                container[:] = contents
            elif isinstance(container, collections.deque):
                container.clear()
                container.extend(contents)
            elif isinstance(container, dict):
                # Entry by entry: a module's globals are never emptied, even for a moment.
                for key in [key for key in container if key not in contents]:
                    del container[key]
                for key, value in contents.items():
                    if key not in container or container[key] is not value:
                        container[key] = value
                if list(container) != list(contents):  # the order its iteration sees
                    container.clear()
                    container.update(contents)
            elif isinstance(container, set):
                container.clear()
                container.update(contents)
        for _, _, array_, copy in self.arrays.values():
            if isinstance(copy, np.ndarray) and array_.shape == copy.shape and \
                    array_.dtype == copy.dtype and array_.flags.writeable and \
                    not same_array(array_, copy):
                array_[...] = copy

    def by_path(self) -> dict:
        return {(observation.path, observation.kind): observation
                for observation in self.observations}


def _key_text(key) -> str:
    """A dict key as the display of a path shows it (a tensor key is not printed in full)."""
    if isinstance(key, SCALAR_TYPES):
        return repr(key)
    return f"<{type(key).__name__} at {id(key):#x}>"


def _unchanged(container, contents) -> bool:
    if len(container) != len(contents):
        return False
    if isinstance(container, dict):
        return all(key in container and container[key] is value
                   for key, value in contents.items())
    if isinstance(container, set):
        return container == contents
    return all(mine is theirs for mine, theirs in zip(container, contents))


@functools.cache
def _readability(display: str) -> tuple:
    """Fewer subscripts first, then shorter: how readable a display path is as a name."""
    return display.count("["), len(display)


def _attribute_display(owner: str, key) -> str:
    """How the user writes the entry `key` of a dict an object's attributes are kept in:
    `owner.name`, or `owner[0]` for a Sequential's numbered children."""
    if isinstance(key, str) and key.isidentifier():
        return f"{owner}.{key}"
    if isinstance(key, str) and key.isdigit():
        return f"{owner}[{key}]"
    return f"{owner}[{_key_text(key)}]"


def _slot_names(kind: type) -> tuple:
    """The attribute names of every slot in the MRO (a private `__name` slot is stored under
    its mangled name, `_Class__name`)."""
    names = []
    for cls in kind.__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__") and cls.__name__.strip("_"):
                name = f"_{cls.__name__.lstrip('_')}{name}"
            if name not in names:
                names.append(name)
    return tuple(names)


