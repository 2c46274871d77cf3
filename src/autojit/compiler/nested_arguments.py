"""Tensors inside a compiled function's container arguments, as inputs of its graph.

A training step takes its batch as `(x, y)` from a DataLoader, torch.func code passes a dict of
parameters, `vjp_fn(*tangents)` gets a tuple: tensors inside lists, tuples and dicts of the
call's arguments. A generation loop passes a cache object whose layers hold key and value
tensors (`cache.layers[0].keys`), a new cache for each generation: tensors that need no
gradient in the attributes of plain objects among the arguments. Captured like closure
tensors, each would be a constant of the trace guarded by identity, so every new batch (or
cache) would trace again until the recompile limit sends the function back to eager. Instead
the compiled function's call (api.py) appends them to its positional arguments (`flatten`):
each is an "arg" input of the graph, read afresh on every call and guarded by shape, dtype and
device only, exactly like a tensor passed on its own. The containers themselves stay guarded
by the walk of the arguments (their class, length and keys; an object's class and the
attributes read, compiler/reachability.py), so a flat position always names the same place in
them.

While tracing, `place` puts the symbolic tensors where the real ones were, so the function
reads them there; lists, dicts and objects are written in place and put back after the call
(the function may keep the container), tuples are rebuilt.

A plain object is one whose class sets and reads attributes as `object` does and comes from
outside autojit: modules, optimizers, schedulers and distributions are left alone (their
tensors stay captured), and so is an object reached a second time (a cycle, or one object
held twice), whose tensors would otherwise be two inputs for one tensor.
"""

from __future__ import annotations

import dataclasses
import types
from collections import OrderedDict

from ..tensor.tensor import Tensor

# More tensors than this inside the arguments stay captured constants: each flat tensor costs
# its guards on every call.
MAX_NESTED_TENSORS = 256
MAX_DEPTH = 4
# At most this many items are looked at below plain objects on each call (flatten runs on every
# call): an object holding a long list (a history of losses) is not walked through each time;
# a container that would take the count past it is not looked into (its tensors stay captured).
MAX_OBJECT_ITEMS = 1024
_MAPPINGS = (dict, OrderedDict)


class Attribute(str):
    """A path key naming an object's attribute (a plain key names an item)."""

    def __repr__(self) -> str:
        return f"Attribute({str(self)!r})"


def _key_text(key) -> str:
    return f".{key}" if type(key) is Attribute else f"[{key!r}]"


class FlatArguments(tuple):
    """A call's arguments followed by the tensors found inside their containers.

    `given` is the call's own argument tuple; `paths[k]` says where `self[len(given) + k]`
    sits in it: the argument's position, then the keys or indices down to the tensor."""

    given: tuple
    paths: tuple


def given_arguments(args: tuple) -> tuple:
    """The arguments the function is called with (without the appended tensors)."""
    return args.given if type(args) is FlatArguments else args


def describe(args: tuple, position: int) -> str:
    """How messages name the tensor at `position` of (possibly flat) `args`."""
    given = given_arguments(args)
    if position < len(given):
        return f"argument {position}"
    index, *keys = args.paths[position - len(given)]
    return f"args[{index}]" + "".join(map(_key_text, keys))


def tensor_paths(walk) -> dict:
    """id(tensor) -> every (path, display) the walk reached that tensor at."""
    paths: dict = {}
    for observation in walk.observations:
        if observation.kind == "tensor":
            paths.setdefault(id(observation.value), []).append(
                (observation.path, observation.display))
    return paths


def aliased_arguments(args: tuple, walk) -> frozenset:
    """Positions of the tensor arguments (nested ones included) that the function also reaches
    some other way: through its state (a parameter passed in and held by the optimizer the
    function steps), or, requiring grad, twice among its arguments. A symbolic stand-in would
    be a second object for one tensor, with a .grad of its own that the other path never sees
    (the optimizer would find no gradient): such a tensor is traced as itself, a captured
    tensor guarded by identity at every path, and a new one traces again. (Data passed twice,
    `f(x, x)`, stays two inputs: written_input_conditions handles writes through one.)"""
    paths = tensor_paths(walk)
    count = len(given_arguments(args))
    seen: dict = {}
    for argument in args:
        if isinstance(argument, Tensor):
            seen[id(argument)] = seen.get(id(argument), 0) + 1
    # A nested tensor's own path is one the walk found (its container is a walk root); a
    # positional tensor is no root, so any path the walk found is another.
    return frozenset(
        position for position, argument in enumerate(args)
        if isinstance(argument, Tensor) and argument._payload is not None and (
            (seen[id(argument)] > 1 and argument._requires_grad) or
            len(paths.get(id(argument), ())) > (1 if position >= count else 0)))


def flatten(args: tuple) -> tuple:
    """`args` with the tensors inside its lists, tuples and dicts appended (FlatArguments), or
    `args` itself when there are none (or too many)."""
    for argument in args:
        kind = type(argument)
        if kind is Tensor:
            continue
        if kind is list or kind is tuple or kind is dict or _is_container(argument) or \
                _is_plain_object(argument):
            break
    else:
        return args
    found: list = []
    visit = _Visit()
    for position, argument in enumerate(args):
        if not isinstance(argument, Tensor) and not _collect(argument, (position,), found, 0,
                                                             visit, False):
            return args
    if not found:
        return args
    flat = FlatArguments(args + tuple(tensor for _, tensor in found))
    flat.given = args
    flat.paths = tuple(path for path, _ in found)
    return flat


def _is_container(value) -> bool:
    return _is_mapping(type(value)) or \
        isinstance(value, tuple) and hasattr(type(value), "_fields")


_MAPPING_CLASSES: dict = {dict: True, OrderedDict: True}  # class -> whether a mapping here


def _is_mapping(kind) -> bool:
    """Whether instances of `kind` are dicts looked into by their items: dict, OrderedDict,
    and their subclasses from outside autojit that store items as dict does, or that are
    dataclasses (transformers' ModelOutput, whose `__setitem__` also sets the attribute of
    that name: an encoder's output handed to the decoder's step)."""
    found = _MAPPING_CLASSES.get(kind)
    if found is None:
        if not issubclass(kind, dict) or _from_autojit(kind):
            found = False
        elif dataclasses.is_dataclass(kind):
            found = True
        else:
            found = kind.__setitem__ in (dict.__setitem__, OrderedDict.__setitem__) and \
                kind.__getitem__ in (dict.__getitem__, OrderedDict.__getitem__)
        _MAPPING_CLASSES[kind] = found
    return found


def _from_autojit(kind) -> bool:
    """Whether `kind` or a class it derives from (object aside) is autojit's own."""
    return any((getattr(base, "__module__", None) or "").split(".")[0] == "autojit"
               for base in kind.__mro__[:-1])


# Classes whose instances are never looked into, whatever their attributes.
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.MethodType,
           types.BuiltinFunctionType)
_PLAIN: dict = {}  # class -> whether its instances are plain objects
_ATOMS = frozenset({int, float, bool, str, bytes, complex, type(None)})


def _is_plain_object(value) -> bool:
    """Whether `value`'s attributes are looked into for tensors (see the module docstring)."""
    kind = type(value)
    plain = _PLAIN.get(kind)
    if plain is None:
        plain = _PLAIN[kind] = (
            kind.__setattr__ is object.__setattr__ and
            kind.__getattribute__ is object.__getattribute__ and
            not issubclass(kind, (Tensor, *_OPAQUE, tuple, list, dict, set, frozenset)) and
            not _from_autojit(kind))
    return plain and isinstance(getattr(value, "__dict__", None), dict)


class _Visit:
    """What one flatten looked into: the ids of the plain objects, and how many more items
    below them it may look at (MAX_OBJECT_ITEMS)."""

    __slots__ = ("objects", "items_left")

    def __init__(self):
        self.objects: set = set()
        self.items_left = MAX_OBJECT_ITEMS


def _collect(value, path: tuple, found: list, depth: int, visit: _Visit, inside: bool) -> bool:
    """Append (path, tensor) for the tensors inside `value`; False when over the limits.
    `inside`: whether `value` lies below a plain object (its items count against the
    budget)."""
    kind = type(value)
    attributes = False
    if kind is list or kind is tuple:
        items = enumerate(value)
    elif kind in _MAPPINGS or _is_mapping(kind):
        items = value.items()
    elif isinstance(value, tuple) and hasattr(kind, "_fields"):
        items = enumerate(value)
    else:
        plain = _PLAIN.get(kind)
        if plain is None:
            plain = _is_plain_object(value)
        if not plain or id(value) in visit.objects:
            return True
        held = getattr(value, "__dict__", None)
        if held.__class__ is not dict:
            return True
        visit.objects.add(id(value))
        attributes = inside = True
        items = held.items()
    if depth >= MAX_DEPTH:
        return True  # deeper tensors stay captured (guarded by identity)
    if inside:
        visit.items_left -= len(value if not attributes else held)
        if visit.items_left < 0:
            return True  # past the budget: stays captured
    for key, item in items:
        kind = type(item)
        if kind in _ATOMS:  # most attributes: nothing inside (flatten runs on every call)
            continue
        if attributes:
            if type(key) is not str:
                continue
            key = Attribute(key)
        if kind is Tensor or isinstance(item, Tensor):
            # An object's tensor that requires grad (a parameter it holds) stays captured:
            # its .grad and the optimizer that holds it see the tensor itself.
            if item._payload is not None and not (attributes and item._requires_grad):
                found.append(((*path, key), item))
                if len(found) > MAX_NESTED_TENSORS:
                    return False
        elif (kind is list or kind is dict or kind is tuple or _PLAIN.get(kind) is not False
              or _is_mapping(kind)) and \
                not _collect(item, (*path, key), found, depth + 1, visit, inside):
            return False
    return True


def place(given: list, paths: tuple, symbolic: list) -> tuple[list, list]:
    """The arguments to trace the function with: `given` (the call's arguments, a tensor
    already its symbolic stand-in) with `symbolic[k]` at `paths[k]`, and the writes into
    lists and dicts that `put_back` undoes."""
    call = list(given)
    writes: list = []
    for position in sorted({path[0] for path in paths}):
        below = {path[1:]: tensor for path, tensor in zip(paths, symbolic)
                 if path[0] == position}
        call[position] = _placed(given[position], (), below, writes)
    return call, writes


def _placed(container, prefix: tuple, below: dict, writes: list):
    keys = {path[len(prefix)] for path in below if path[:len(prefix)] == prefix}
    if not keys:
        return container
    if type(next(iter(keys))) is Attribute:  # a plain object's attributes
        for key in keys:
            old = getattr(container, key)
            new = below[(*prefix, key)] if (*prefix, key) in below else \
                _placed(old, (*prefix, key), below, writes)
            if new is not old:
                writes.append((container, key, old, new))
                setattr(container, key, new)
        return container
    if isinstance(container, tuple):
        items = [below.get((*prefix, index), None) if (*prefix, index) in below else
                 _placed(item, (*prefix, index), below, writes)
                 for index, item in enumerate(container)]
        return type(container)._make(items) if hasattr(type(container), "_fields") else \
            tuple(items)
    for key in keys:
        old = container[key]
        new = below[(*prefix, key)] if (*prefix, key) in below else \
            _placed(old, (*prefix, key), below, writes)
        if new is not old:
            writes.append((container, key, old, new))
            container[key] = new
    return container


def put_back(writes: list) -> None:
    """Undo `place`'s writes where the function left them (a slot it wrote itself keeps what
    the function put there, as eager would leave it)."""
    for container, key, old, new in reversed(writes):
        if type(key) is Attribute:
            if getattr(container, key, None) is new:
                setattr(container, key, old)
            continue
        try:
            if container[key] is new:
                container[key] = old
        except (IndexError, KeyError):
            pass
