"""From what a trace read to what its guards check: the walk's observations the reads select.

The walk before a trace (reachability.py) names every object the function can reach by a
path, and observes each (a scalar's value, a container's length or keys, an object's class).
The recorder (recorder.py) says which of those objects the traced call read, and how. This
module keeps the observations those reads depend on, and adds the few the walk does not make:

- an attribute or item read: the observations at its path (the value's class, a scalar's
  value, a tensor, a function's code), and the class of the object it was read from;
- a container read whole (iterated, copied): its length or keys and its items' values; only
  its length (`len(x)`, `if x:`, a negative index, a key test): its length or keys;
- an object passed where the recorder cannot see: every observation under its path;
- a method or other class attribute: that the instance's `__dict__` does not hold the name
  (the walk would guard every key of it), and the class attribute itself where the class is
  the user's;
- an object whose identity was compared, or that the walk reached by more than one path and
  that a read went through: its identity at the path the guards read it by (a read through
  one path, guarded at another, would check another object once either is rebound);
- the globals, closure cells and defaults of the code that ran;
- the containers a tensor argument is nested in (nested_arguments.py names it by its place).

What nothing read is not guarded: an optimizer's state the step never looks at (LBFGS's
history), a cache an eager call replaces. See docs/notes/guards.md.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .reachability import Observation, Walk

# Observations that describe a value itself (kept where a read reached it), against those
# that describe a container's structure (kept where a read depended on it).
_STRUCTURE = frozenset({"len", "keys", "set"})
# Children of a value that say which value it is: a function's code, a bound method's function
# and object, a property's getter, a static or class method's function, a weakref's object.
_IDENTIFYING = frozenset({".__code__", ".__func__", ".__self__", ".fget", "()"})


@dataclasses.dataclass
class Selection:
    """The observations a trace's guards check, and which tensors and arrays it read."""
    observations: list
    tensors: set  # ids of the tensors read (their metadata is guarded)
    tensor_paths: dict  # id(tensor) -> the (path, display) pairs the trace read it by
    arrays: set  # ids of the NumPy arrays read (their values are compared)


def select(walk: Walk, reads) -> Selection:
    """The observations of `walk` that `reads` (recorder.Reads) depend on, in walk order, with
    the ones the walk does not make appended (see the module docstring)."""
    paths = walk.object_paths
    read_paths: set = set()
    owners: set = set()
    structure: set = set()
    whole: set = set()
    deep: list = []
    for owner, fragment in reads.items:
        path = paths.get(owner)
        if path is not None:
            read_paths.add((*path, fragment))
            owners.add(path)
    for cell in reads.cells:
        path = walk.cell_paths.get(cell)
        if path is not None:
            read_paths.add(path)
    for identity in reads.lengths:
        if identity in paths:
            structure.add(paths[identity])
    for identity in reads.attribute_keys:
        if identity in paths:
            structure.add((*paths[identity], ".__dict__"))
    for identity in reads.whole:
        if identity in paths:
            whole.add(paths[identity])
            structure.add(paths[identity])
            structure.add((*paths[identity], ".__dict__"))
    for identity in reads.deep:
        if identity in paths:
            deep.append(paths[identity])
    for code in reads.codes:
        for path in walk.function_paths.get(id(code), ()):
            read_paths.add((*path, ".__code__"))
            deep.append((*path, ".__defaults__"))
            deep.append((*path, ".__kwdefaults__"))
    for observation in walk.observations:
        if observation.kind == "tensor" and observation.path[0] == "args":
            # A tensor inside a container argument is an input by its place there
            # (nested_arguments.py): the containers' classes, lengths and keys name it.
            for length in range(2, len(observation.path)):
                owners.add(observation.path[:length])
                structure.add(observation.path[:length])
            read_paths.add(observation.path)
    deep_set = set(deep)

    def under_deep(path: tuple) -> bool:
        return any(path[:length] in deep_set for length in range(1, len(path) + 1))

    def is_value_path(path: tuple) -> bool:
        if path in read_paths or len(path) == 2 and path[0] == "args":
            return True
        if len(path) > 1 and path[-1] in _IDENTIFYING and is_value_path(path[:-1]):
            return True
        return len(path) > 1 and path[:-1] in whole and path[-1].startswith(("[", "."))

    kept = []
    aliased = set()  # ids of objects the walk reached by a second path
    for observation in walk.observations:
        path, kind = observation.path, observation.kind
        if kind == "is":
            aliased.add(id(observation.value))
        if under_deep(path):
            kept.append(observation)
        elif kind in _STRUCTURE:
            if path in structure:
                kept.append(observation)
        elif kind == "class" and path in owners or is_value_path(path):
            kept.append(observation)
    # Identity where a read went through an object reached by two paths, or decided by it.
    at_path = {path: identity for identity, path in paths.items()}
    present = {(observation.path, observation.kind) for observation in kept}
    displays = _displays(walk)
    identities = set(reads.identity) | {at_path[path] for path in owners
                                        if at_path.get(path) in aliased}
    for identity in identities:
        path = paths.get(identity)
        obj = walk._seen.get(identity)
        if path is None or obj is None or len(path) == 1 or (path, "is") in present:
            continue
        kept.append(Observation(path, "is", obj, _display(displays, path)))
    for (identity, name), (kind, _) in reads.absent.items():
        path = paths.get(identity)
        if path is None:
            continue
        if kind == "key":
            kept.append(Observation(path, "missing", name, _display(displays, path)))
        else:
            kept.append(Observation((*path, ".__dict__"), "missing", name,
                                    f"{_display(displays, path)}.__dict__"))
    tensors, tensor_paths, arrays = set(), {}, set()
    for observation in kept:
        if observation.kind == "tensor":
            tensors.add(id(observation.value))
            tensor_paths.setdefault(id(observation.value), []).append(
                (observation.path, observation.display))
        elif observation.kind == "is" and isinstance(observation.value, np.ndarray):
            arrays.add(id(observation.value))
    return Selection(kept, tensors, tensor_paths, arrays)


def _displays(walk: Walk) -> dict:
    """How the walk displayed the object at each path: its first observation there's display.
    (One pass: looking each path up by a scan of the observations took 0.7-0.8 s of a large
    model's guard stage, 1,795 scans of 15,530 observations.)"""
    displays: dict = {}
    for observation in walk.observations:
        displays.setdefault(observation.path, observation.display)
    return displays


def _display(displays: dict, path: tuple) -> str:
    """How the walk displayed the object at `path` (`_displays`), else the path's text."""
    return displays[path] if path in displays else "".join(path)
