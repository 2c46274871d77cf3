"""How eager lays out the array of a value computed while tracing: the stand-in ir/aliasing.py
decides views by.

Whether eager's reshape (or view, flatten) of a tensor aliases it depends on the tensor's
strides, and eager's arrays are not always row-major: elementwise ops follow their operands'
layout (NumPy's ufuncs allocate in the operands' order, as torch's TensorIterator does), so
`a.clone()` or `a * 2` of a transposed argument `a` is stored transposed, and its
`reshape(-1)` is a copy. Compiled kernels write row-major arrays, but a write through that
reshape must still miss the tensor, as in eager.

`eager_stand_in` walks back from a value to the real arrays the call was given, through the
ops that pass a layout on: Elementwise lowerings (the result is laid out as NumPy's ufuncs
lay it out for uint8 stand-ins of the operands) and Layout lowerings (the op's NumPy impl
applied to the operand's stand-in: a transpose of a row-major value is column-major). Every
other op makes a row-major array, as eager's NumPy references do. A tensor written in place
keeps its storage, so ir/aliasing.py asks for the layout of the value it had before its first
write (`Tracer.first_values`). See docs/notes/aliasing.md.
"""

from __future__ import annotations

import numpy as np

from ..ops.registry import Elementwise, Layout
from .graph import Value

_ROW_MAJOR = None  # the stand-in of a value laid out row-major, as kernels and copies make it


def _hinted_shape(value) -> tuple:
    return tuple(getattr(extent, "hint", extent) for extent in value.shape)


def _hinted(item):
    if isinstance(item, tuple):
        return tuple(_hinted(part) for part in item)
    if isinstance(item, list):
        return [_hinted(part) for part in item]
    return getattr(item, "hint", item)


def _input_array(tracer, value):
    """The real host array behind a graph input (an argument or a captured tensor), or None."""
    found = tracer._real_inputs.get(id(value))
    if found is None:
        # A captured tensor's data; other inputs (random draws) hold no array.
        found = next((getattr(entry.tensor, "_data", None) for entry in tracer.graph.inputs
                      if entry.value is value), None)
    # A device array: the device's eager kernels write row-major results.
    return found if found.__class__ is np.ndarray else None


def _array(stand_in, value):
    """A uint8 array of value's shape laid out as `stand_in` (row-major when it is None)."""
    if stand_in is None:
        return np.empty(_hinted_shape(value), dtype=np.uint8)
    return stand_in if stand_in.dtype == np.uint8 else np.empty_like(stand_in, dtype=np.uint8)


def _laid_out(tracer, value, known: dict):
    """value's stand-in from its operands' (all in `known`): None when row-major."""
    node = value.producer
    if node is None:
        return _input_array(tracer, value)
    operands = [item for item in node.inputs if isinstance(item, Value)]
    lowering = node.op.lowering
    if isinstance(lowering, Elementwise) and operands:
        if all(known[id(item)] is _ROW_MAJOR for item in operands):
            return _ROW_MAJOR
        arrays = [_array(known[id(item)], item) for item in operands]
        result = np.empty_like(arrays[0]) if len(arrays) == 1 else arrays[0]
        for other in arrays[1:]:
            result = np.bitwise_or(result, other)  # NumPy's choice of layout for the result
    elif isinstance(lowering, Layout) and len(operands) == 1 and len(node.outputs) == 1:
        try:
            result = node.op.impl(_array(known[id(operands[0])], operands[0]),
                                  **{name: _hinted(item) for name, item in node.attrs.items()})
        except (ValueError, TypeError):  # a size only known symbolically
            return _ROW_MAJOR
    else:
        return _ROW_MAJOR
    if result.__class__ is not np.ndarray or result.flags.c_contiguous:
        return _ROW_MAJOR
    return result


def _sources(tracer, value) -> list:
    node = value.producer
    if node is None or not isinstance(node.op.lowering, (Elementwise, Layout)):
        return []
    return [item for item in node.inputs if isinstance(item, Value)]


def eager_stand_in(tracer, value):
    """An array laid out as eager's array for `value` (its dtype and values are not eager's),
    or None when eager's array is row-major."""
    known = tracer.eager_layouts
    # Depth-first without recursion: a long chain of elementwise ops is a deep walk.
    pending = [(value, False)]
    while pending:
        current, ready = pending.pop()
        if id(current) in known:
            continue
        if ready:
            known[id(current)] = _laid_out(tracer, current, known)
            continue
        pending.append((current, True))
        pending.extend((source, False) for source in _sources(tracer, current)
                       if id(source) not in known)
    return known[id(value)]
