"""How eager lays out the array of a value computed while tracing: the stand-in ir/aliasing.py
decides views by.

Whether eager's reshape (or view, flatten) of a tensor aliases it depends on the tensor's
strides, and eager's arrays are not always row-major: elementwise ops follow their operands'
layout (NumPy's ufuncs allocate in the operands' order, as torch's TensorIterator does), so
`a.clone()` or `a * 2` of a transposed argument `a` is stored transposed, and its
`reshape(-1)` is a copy. Compiled kernels write row-major arrays, but a write through that
reshape must still miss the tensor, as in eager.

`eager_stand_in` walks back from a value to the real arrays the call was given, through the
ops that pass a layout on: those that follow their operands (ops.lowering.follows_operands:
the result is laid out as NumPy's ufuncs lay it out for uint8 stand-ins of the operands, and
as torch's TensorIterator where the operands order their dims differently:
ops/iterator_layout.py) and
Layout lowerings (the op's NumPy impl applied to the operands' stand-ins: a transpose of a
row-major value is column-major). Every other op makes a row-major array, as eager's NumPy
references do (ops/registry.row_major_result); where a trace records primitives for what
eager computes in one routine of its own layout, the tracer says so
(Tracer.note_eager_layout). A tensor written in place keeps its storage, so ir/aliasing.py
asks for the layout of the value it had before its first write (`Tracer.first_values`). See
docs/notes/aliasing.md.
"""

from __future__ import annotations

import numpy as np

from ..ops.iterator_layout import relaid
from ..ops.lowering import follows_operands
from ..ops.registry import Layout
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
    """The real host array behind a graph input (an argument or a captured tensor), or None.
    The trace now depends on its layout (layout_signature): the tracer notes the input."""
    found = tracer._real_inputs.get(id(value))
    if found is None:
        # A captured tensor's data; other inputs (random draws) hold no array.
        found = next((getattr(entry.tensor, "_payload", None) for entry in tracer.graph.inputs
                      if entry.value is value), None)
    # A device array: the device's eager kernels write row-major results.
    if found.__class__ is not np.ndarray:
        return None
    if found.ndim >= 2:
        # One axis (or none): every layout gives row-major results through these ops.
        tracer.layout_reads[id(value)] = value
    return found


def layout_signature(array) -> tuple:
    """What eager's layout decisions read of an array's strides: its axes ordered by stride,
    which neighbours in that order are packed against each other, whether the innermost is
    packed, and the reversed and broadcast axes. Extents are left out, so that a new batch
    size keeps the signature; size-1 axes are too, as NumPy's contiguity ignores them."""
    strides, shape = array.strides, array.shape
    axes = [axis for axis, extent in enumerate(shape) if extent != 1]
    order = sorted(axes, key=lambda axis: -abs(strides[axis]))
    packed = tuple(abs(strides[outer]) == abs(strides[inner]) * shape[inner]
                   for outer, inner in zip(order, order[1:]))
    innermost = not order or abs(strides[order[-1]]) == array.itemsize
    return (tuple(order), packed, innermost, tuple(strides[axis] < 0 for axis in axes),
            tuple(strides[axis] == 0 for axis in axes))


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
    if follows_operands(node.op) and operands:
        if all(known[id(item)] is _ROW_MAJOR for item in operands):
            return _ROW_MAJOR
        arrays = [_array(known[id(item)], item) for item in operands]
        # A ufunc's own allocation (np.empty_like differs for a broadcast operand).
        result = np.positive(arrays[0]) if len(arrays) == 1 else arrays[0]
        for other in arrays[1:]:
            result = np.bitwise_or(result, other)  # NumPy's choice of layout for the result
        if len(arrays) > 1:
            # Operands ordering their dims differently: eager lays the result out as torch
            # does, not as NumPy (ops/iterator_layout.py).
            result = relaid(result, arrays)
    elif isinstance(lowering, Layout) and len(operands) == len(node.inputs) and \
            len(node.outputs) == 1:
        # The op's own impl on the stand-ins: a transpose of a row-major value is
        # column-major, a cat of channels-last values channels-last.
        try:
            result = node.op.impl(*[_array(known[id(item)], item) for item in operands],
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
    if node is None or not (follows_operands(node.op) or isinstance(node.op.lowering, Layout)):
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


class OutputLayout:
    """How eager lays out a returned value: its element strides and offset in a buffer of
    `span` elements at the traced `shape`, and its axes from outermost to innermost (the
    layout kept when a dynamic size changes the shape)."""

    def __init__(self, stand_in):
        base = stand_in
        while base.base is not None:
            base = base.base
        itemsize = stand_in.itemsize
        self.shape = stand_in.shape
        self.strides = tuple(stride // itemsize for stride in stand_in.strides)
        self.offset = (stand_in.__array_interface__["data"][0] -
                       base.__array_interface__["data"][0]) // base.itemsize
        self.span = base.size
        self.order = tuple(sorted(range(stand_in.ndim),
                                  key=lambda axis: -abs(stand_in.strides[axis])))


def eager_output_layout(tracer, tensor) -> OutputLayout | None:
    """The layout of eager's array for a tensor the traced call returns, or None when it is
    row-major (as the compiled run's arrays are): the layout of the value it had before its
    first in-place write, which its storage keeps."""
    value = tracer.first_values.get(id(tensor), (None, tensor._value))[1]
    if value is None or value.producer is None:
        return None
    stand_in = eager_stand_in(tracer, value)
    return None if stand_in is None else OutputLayout(stand_in)


def assigned_grad_layout(tracer, tensor) -> OutputLayout:
    """The layout of a tensor the traced call assigned to a .grad (`p.grad = g`), row-major
    included: eager's .grad is that tensor, whose layout the parameter's does not decide
    (compiler/executable.py lays each run's .grad out so, instead of as torch's AccumulateGrad
    lays out a .grad it makes). A tensor from outside the call has its own array's layout."""
    data = tensor._payload
    if data is None:
        layout = eager_output_layout(tracer, tensor)
        if layout is not None:
            return layout
        shape = _hinted_shape(tensor._value)
    elif data.__class__ is np.ndarray:
        return OutputLayout(data)
    else:  # a device array: row-major
        shape = data.shape
    return OutputLayout(np.empty(shape, np.uint8))


def lay_out(array, layout: OutputLayout, owned: bool = False):
    """A compiled run's `array` laid out as eager's (OutputLayout): at the traced shape, in a
    buffer of the same span, strides and offset (a view of a larger value, a broadcast, a
    transposition); at another shape, its axes in the same order. `owned`: the run made the
    array's buffer for it alone, so an array already laid out so is returned as it is (the
    transposed view of a product that eager transposes too); any other is a copy."""
    if array.__class__ is not np.ndarray:
        return array  # a device array: the device's eager kernels write row-major results
    if owned and _laid_out_as(array, layout):
        return array
    if array.shape == layout.shape:
        buffer = np.empty(layout.span, dtype=array.dtype)
        result = np.lib.stride_tricks.as_strided(
            buffer[layout.offset:], array.shape,
            tuple(stride * array.itemsize for stride in layout.strides))
    else:
        inverse = np.argsort(layout.order)
        result = np.empty(tuple(array.shape[axis] for axis in layout.order),
                          dtype=array.dtype).transpose(inverse)
    np.copyto(result, array)
    return result


def _laid_out_as(array: np.ndarray, layout: OutputLayout) -> bool:
    """Whether `array` is the whole of a dense buffer laid out as `layout` says: eager's
    layout is a permutation of its axes (no window of a larger value, no broadcast)."""
    base = array if array.base is None else array.base
    if layout.offset or layout.span != int(np.prod(layout.shape)) or \
            getattr(base, "size", None) != array.size:
        return False
    if array.shape == layout.shape:
        return array.strides == tuple(stride * array.itemsize for stride in layout.strides)
    return array.ndim == len(layout.order) and array.transpose(layout.order).flags.c_contiguous
