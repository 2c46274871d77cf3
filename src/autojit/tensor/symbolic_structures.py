"""Symbolic scalars inside Python structures: shapes, op attributes, nested data.

tensor/symbolic.py re-exports these. `substitute` evaluates every SymInt and SymFloat in a
structure under a binding (ir/instantiate.py); `specialize_values` replaces those read at run
time by their hints, guarded (an op attribute is a constant of the graph, ir/trace.py);
`as_size`, `same_shape` and `size_product` handle extents that may be symbolic.
"""

from __future__ import annotations

from .symbolic_scalars import SymFloat, SymInt, is_runtime


def substitute(value, binding: dict):
    """`value` with every SymInt and SymFloat in it (through tuples, lists, dicts and slices)
    replaced by its value under `binding`."""
    if isinstance(value, (SymInt, SymFloat)):
        return value.evaluate(binding)
    if isinstance(value, tuple):
        items = tuple(substitute(item, binding) for item in value)
        return items if any(a is not b for a, b in zip(items, value)) else value
    if isinstance(value, list):
        return [substitute(item, binding) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, binding) for key, item in value.items()}
    if isinstance(value, slice):
        return slice(substitute(value.start, binding), substitute(value.stop, binding),
                     substitute(value.step, binding))
    return value


def specialize_values(value):
    """`value` with every symbolic scalar read at run time in it (through tuples, lists, dicts
    and slices) replaced by its hint, each recorded as a specialization: what must be a
    constant of the graph (an op's attribute, a size)."""
    if isinstance(value, SymInt) and value.is_value:
        return value.specialize("a constant of the graph was needed")
    if isinstance(value, SymFloat) and value.is_value:
        return value.specialize("a constant of the graph was needed")
    if isinstance(value, tuple) and any(is_runtime(item) or isinstance(item, (
            tuple, list, dict, slice)) for item in value):
        items = tuple(specialize_values(item) for item in value)
        return type(value)(*items) if hasattr(type(value), "_fields") else items
    if isinstance(value, list):
        return [specialize_values(item) for item in value]
    if isinstance(value, dict):
        return {key: specialize_values(item) for key, item in value.items()}
    if isinstance(value, slice):
        return slice(specialize_values(value.start), specialize_values(value.stop),
                     specialize_values(value.step))
    return value


def contains_runtime(value) -> bool:
    if isinstance(value, (SymInt, SymFloat)):
        return value.is_value
    if isinstance(value, (tuple, list)):
        return any(contains_runtime(item) for item in value)
    if isinstance(value, dict):
        return any(contains_runtime(item) for item in value.values())
    if isinstance(value, slice):
        return any(contains_runtime(item) for item in (value.start, value.stop, value.step))
    return False


def contains_symbolic(value) -> bool:
    if isinstance(value, (SymInt, SymFloat)):
        return True
    if isinstance(value, (tuple, list)):
        return any(contains_symbolic(item) for item in value)
    if isinstance(value, dict):
        return any(contains_symbolic(item) for item in value.values())
    if isinstance(value, slice):
        return any(contains_symbolic(item) for item in (value.start, value.stop, value.step))
    return False


def symbols_in(value) -> set:
    """The names of the symbols in `value` (through tuples, lists, dicts and slices)."""
    if isinstance(value, (SymInt, SymFloat)):
        return value.names()
    if isinstance(value, (tuple, list)):
        return set().union(*(symbols_in(item) for item in value)) if value else set()
    if isinstance(value, dict):
        return set().union(*(symbols_in(item) for item in value.values())) if value else set()
    if isinstance(value, slice):
        return symbols_in((value.start, value.stop, value.step))
    return set()


def as_size(value):
    """An extent as given by a user or a shape: an int (NumPy ints and other integer types
    converted), or a SymInt of sizes left symbolic (one read at run time specializes)."""
    return value if isinstance(value, SymInt) and not value.is_value else int(value)


def same_shape(first, second) -> bool:
    """Whether two shapes are equal, comparing lengths first: a tuple comparison would compare
    a symbolic extent with an unrelated one of a longer shape, and guard on the outcome."""
    return len(first) == len(second) and all(a == b for a, b in zip(first, second))


def size_product(extents) -> int:
    """The product of extents, symbolic if any of them is."""
    total = 1
    for extent in extents:
        total = total * extent
    return total
