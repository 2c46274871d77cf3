"""The per-call check of a native program's inputs, done in native code by the runner.

A program (program.py) repeats a recorded call. Before it runs, the call's input arrays must have
the recorded shapes, strides and dtypes, and each captured tensor that a kernel writes in place must
still be writeable, C-contiguous and clear of every other input's memory
(codegen/schedule/in_place.py). In Python these checks read a dozen attributes of each array, about
6.5 us of a compiled MLP step's call with warm caches (docs/notes/cpu-codegen.md). The runner does
them instead, from the ndarray objects' fields, before it patches any pointer:

- for each input: its type is ndarray, and its number of dimensions, dimensions, strides,
  dtype object (identity: NumPy's built-in dtypes are singletons) and the flags a target
  needs are the recorded ones;
- for each target and each other input: their memory ranges, the recorded extents around
  their data pointers, do not overlap.

Any difference answers CHANGED, and Program.run falls back to the checks in Python, which
decide exactly as before (an equal dtype that is another object passes there). A program whose
recorded call did not write every target in place, or a NumPy whose object layout was not
found, has no table, and Python checks every call.
"""

from __future__ import annotations

import ctypes

import numpy as np
from numpy.lib.array_utils import byte_bounds

CHANGED = -1  # the runner's status when an input differs from the recorded call
_WORD = ctypes.sizeof(ctypes.c_void_p)
# NumPy's flags: a target is written through its data pointer as one C-ordered block.
_WRITEABLE, _C_CONTIGUOUS = 0x0400, 0x0001
_state: dict = {}


def array_fields(data_offset: int) -> dict | None:
    """Byte offsets of an ndarray object's type, nd, dimensions, strides, descr and flags, or
    None. NumPy's PyArrayObject is {PyObject_HEAD; char *data; int nd; npy_intp *dimensions;
    npy_intp *strides; PyObject *base; PyArray_Descr *descr; int flags; ...}: the fields are
    taken to follow data in that order, then checked on arrays of several shapes, strides,
    dtypes and flags, and refused if any differs."""
    if "fields" in _state:
        return _state["fields"]
    offsets = {"type": _WORD, "nd": data_offset + _WORD, "dimensions": data_offset + 2 * _WORD,
               "strides": data_offset + 3 * _WORD, "descr": data_offset + 5 * _WORD,
               "flags": data_offset + 6 * _WORD}
    read_only = np.arange(6.0)
    read_only.flags.writeable = False
    probes = [np.empty((3, 5), np.float32)[:, ::2], np.empty(7, np.int64), read_only,
              np.empty((2, 3, 4), np.float64).transpose(2, 0, 1)]
    found = offsets
    for array in probes:
        if _read(array, offsets) != _expected(array):
            found = None
    _state["fields"] = found
    return found


def _read(array: np.ndarray, offsets: dict) -> tuple:
    address = id(array)

    def word(offset):
        return ctypes.c_ssize_t.from_address(address + offset).value

    nd = ctypes.c_int.from_address(address + offsets["nd"]).value
    if not 0 <= nd <= 64:
        return ()
    dimensions = tuple((ctypes.c_ssize_t * nd).from_address(word(offsets["dimensions"])))
    strides = tuple((ctypes.c_ssize_t * nd).from_address(word(offsets["strides"])))
    flags = ctypes.c_int.from_address(address + offsets["flags"]).value
    return (word(offsets["type"]), nd, dimensions, strides, word(offsets["descr"]), flags)


def _expected(array: np.ndarray) -> tuple:
    return (id(type(array)), array.ndim, array.shape, array.strides, id(array.dtype),
            array.flags.num)


def table(inputs: list, targets: list, fields: dict | None) -> np.ndarray | None:
    """The int64 check table of a program recorded with these input arrays, `targets` being
    the positions of those written in place; None without the fields' offsets. Layout: the
    number of inputs and of pairs, the address of the ndarray type (a word of the table, not
    of the IR, whose text is then the same in every process and found in the disk cache);
    per input its position, dtype object, required flags, nd,
    dimensions and strides; per pair (target first) the two positions and each one's byte
    extents below and above its data pointer."""
    if fields is None:
        return None
    # The dtype objects are compared by address: the program keeps them alive (its recorded
    # layouts hold them), so no other object can take their place.
    words = [len(inputs), len(targets) * (len(inputs) - 1), id(np.ndarray)]
    for position, array in enumerate(inputs):
        needed = _WRITEABLE | _C_CONTIGUOUS if position in targets else 0
        words += [position, id(array.dtype), needed, array.ndim, *array.shape, *array.strides]
    extents = [_extent(array) for array in inputs]
    for target in targets:
        for other in range(len(inputs)):
            if other != target:
                words += [target, *extents[target], other, *extents[other]]
    return np.array(words, np.int64)


def _extent(array: np.ndarray) -> tuple:
    """(first byte, one past the last byte) of the array's memory, from its data pointer."""
    if array.size == 0:
        return 0, 0
    low, high = byte_bounds(array)
    start = array.__array_interface__["data"][0]
    return low - start, high - start


# `{prefix}_check_inputs(table, items)`: 0 when the arrays of the Python list's item vector
# `items` pass the table (see `table`), else CHANGED. The type word is read before any other
# field, so an object that is not an ndarray is never read as one.
CHECK_IR = """
define i64 @{prefix}_check_inputs(ptr %table, ptr %items) {{
entry:
  %input_count = load i64, ptr %table
  %pair_count_slot = getelementptr i64, ptr %table, i64 1
  %pair_count = load i64, ptr %pair_count_slot
  %array_type_slot = getelementptr i64, ptr %table, i64 2
  %array_type = load i64, ptr %array_type_slot
  br label %inputs

inputs:
  %input = phi i64 [ 0, %entry ], [ %input_next, %input_done ]
  %at = phi i64 [ 3, %entry ], [ %at_next, %input_done ]
  %inputs_left = icmp slt i64 %input, %input_count
  br i1 %inputs_left, label %input_body, label %pairs

input_body:
  %item = call ptr @{prefix}_check_item(ptr %table, ptr %items, i64 %at)
  %type_slot = getelementptr i8, ptr %item, i64 {type_offset}
  %type = load i64, ptr %type_slot
  %is_array = icmp eq i64 %type, %array_type
  br i1 %is_array, label %fields, label %changed

fields:
  %descr_at = add i64 %at, 1
  %descr_slot = getelementptr i64, ptr %table, i64 %descr_at
  %descr_wanted = load i64, ptr %descr_slot
  %needed_at = add i64 %at, 2
  %needed_slot = getelementptr i64, ptr %table, i64 %needed_at
  %needed = load i64, ptr %needed_slot
  %nd_at = add i64 %at, 3
  %nd_slot = getelementptr i64, ptr %table, i64 %nd_at
  %nd_wanted = load i64, ptr %nd_slot
  %item_descr_slot = getelementptr i8, ptr %item, i64 {descr_offset}
  %item_descr = load i64, ptr %item_descr_slot
  %item_nd_slot = getelementptr i8, ptr %item, i64 {nd_offset}
  %item_nd_narrow = load i32, ptr %item_nd_slot
  %item_nd = sext i32 %item_nd_narrow to i64
  %item_flags_slot = getelementptr i8, ptr %item, i64 {flags_offset}
  %item_flags_narrow = load i32, ptr %item_flags_slot
  %item_flags = sext i32 %item_flags_narrow to i64
  %flags_held = and i64 %item_flags, %needed
  %same_descr = icmp eq i64 %item_descr, %descr_wanted
  %same_nd = icmp eq i64 %item_nd, %nd_wanted
  %same_flags = icmp eq i64 %flags_held, %needed
  %same_header = and i1 %same_descr, %same_nd
  %header_ok = and i1 %same_header, %same_flags
  %dimensions_slot = getelementptr i8, ptr %item, i64 {dimensions_offset}
  %dimensions = load ptr, ptr %dimensions_slot
  %strides_slot = getelementptr i8, ptr %item, i64 {strides_offset}
  %strides = load ptr, ptr %strides_slot
  %shape_at = add i64 %at, 4
  br i1 %header_ok, label %axes, label %changed

axes:
  %axis = phi i64 [ 0, %fields ], [ %axis_next, %axis_body ]
  %axes_left = icmp slt i64 %axis, %nd_wanted
  br i1 %axes_left, label %axis_body, label %input_done

axis_body:
  %dimension_at = add i64 %shape_at, %axis
  %dimension_slot = getelementptr i64, ptr %table, i64 %dimension_at
  %dimension_wanted = load i64, ptr %dimension_slot
  %stride_at = add i64 %dimension_at, %nd_wanted
  %stride_slot = getelementptr i64, ptr %table, i64 %stride_at
  %stride_wanted = load i64, ptr %stride_slot
  %item_dimension_slot = getelementptr i64, ptr %dimensions, i64 %axis
  %item_dimension = load i64, ptr %item_dimension_slot
  %item_stride_slot = getelementptr i64, ptr %strides, i64 %axis
  %item_stride = load i64, ptr %item_stride_slot
  %same_dimension = icmp eq i64 %item_dimension, %dimension_wanted
  %same_stride = icmp eq i64 %item_stride, %stride_wanted
  %same_axis = and i1 %same_dimension, %same_stride
  %axis_next = add i64 %axis, 1
  br i1 %same_axis, label %axes, label %changed

input_done:
  %twice_nd = shl i64 %nd_wanted, 1
  %at_next = add i64 %shape_at, %twice_nd
  %input_next = add i64 %input, 1
  br label %inputs

pairs:
  %pair = phi i64 [ 0, %inputs ], [ %pair_next, %pair_done ]
  %pair_at = phi i64 [ %at, %inputs ], [ %pair_at_next, %pair_done ]
  %pairs_left = icmp slt i64 %pair, %pair_count
  br i1 %pairs_left, label %pair_body, label %passed

pair_body:
  %first_low = call i64 @{prefix}_check_bound(ptr %table, ptr %items, i64 %pair_at, i64 1)
  %first_high = call i64 @{prefix}_check_bound(ptr %table, ptr %items, i64 %pair_at, i64 2)
  %second_at = add i64 %pair_at, 3
  %second_low = call i64 @{prefix}_check_bound(ptr %table, ptr %items, i64 %second_at, i64 1)
  %second_high = call i64 @{prefix}_check_bound(ptr %table, ptr %items, i64 %second_at, i64 2)
  %first_below = icmp slt i64 %first_low, %second_high
  %second_below = icmp slt i64 %second_low, %first_high
  %overlap = and i1 %first_below, %second_below
  %pair_at_next = add i64 %pair_at, 6
  %pair_next = add i64 %pair, 1
  br i1 %overlap, label %changed, label %pair_done

pair_done:
  br label %pairs

passed:
  ret i64 0

changed:
  ret i64 {changed}
}}

; The ndarray whose position in the call's list is table[at].
define internal ptr @{prefix}_check_item(ptr %table, ptr %items, i64 %at) {{
entry:
  %position_slot = getelementptr i64, ptr %table, i64 %at
  %position = load i64, ptr %position_slot
  %item_slot = getelementptr ptr, ptr %items, i64 %position
  %item = load ptr, ptr %item_slot
  ret ptr %item
}}

; The data pointer of the input at table[at] plus the extent at table[at + which].
define internal i64 @{prefix}_check_bound(ptr %table, ptr %items, i64 %at, i64 %which) {{
entry:
  %item = call ptr @{prefix}_check_item(ptr %table, ptr %items, i64 %at)
  %data_slot = getelementptr i8, ptr %item, i64 {data_offset}
  %data = load i64, ptr %data_slot
  %extent_at = add i64 %at, %which
  %extent_slot = getelementptr i64, ptr %table, i64 %extent_at
  %extent = load i64, ptr %extent_slot
  %bound = add i64 %data, %extent
  ret i64 %bound
}}
"""


def check_ir(prefix: str, data_offset: int, fields: dict | None) -> str:
    """The IR of `{prefix}_check_inputs` for the runner's module. Without the fields' offsets
    no program has a table, and the function is never called: it is made with zeros."""
    fields = fields or {"type": 0, "nd": 0, "dimensions": 0, "strides": 0, "descr": 0,
                        "flags": 0}
    return CHECK_IR.format(prefix=prefix, data_offset=data_offset, changed=CHANGED,
                           **{f"{name}_offset": offset for name, offset in fields.items()})


def passes(table: np.ndarray, arrays: list) -> bool:
    """Whether the runner's check passes these arrays (a Python list) against `table`."""
    from . import jit as cpu
    from . import program

    check = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)(
        program._runner()["check_inputs"])
    items = ctypes.c_void_p.from_address(id(arrays) + cpu.layout()[0]).value
    return check(table.ctypes.data, items) == 0
