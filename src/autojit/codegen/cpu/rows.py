"""Rows read or written at indices, natively: the index and index_put of a compiled plan where
they address one dim with one index tensor (an embedding's lookup, and its gradient added into
a table, on the first dim; a decoding cache's keys written at a position, on the third: one
call for each block of the dims before it), so that such a plan still runs as one native
program (program.py).

Three functions, each `i32 f(ptr argument, i64 part)` reading its words from `argument` as
the native runner's operations do (codegen/schedule/row_steps.py's IndexedRowsStep makes them):

- gather (source, index, out, count, row bytes, rows): out row i = source row index[i];
- put (target, values, index, count, row bytes, rows): target row index[i] = values row i;
- add_<type> (target, values, index, count, row elements, rows): target row index[i] +=
  values row i, one element at a time in the order of i, which is the order NumPy's
  `np.add.at` (the op's impl) adds repeated indices in, so sums agree to the last bit.

The eager accumulating index_put runs add too (`add_rows`, through
ops/indexing/row_accumulation.py's NATIVE slot), for the same bits in one call.

An index below 0 counts from the end once (as NumPy's); one outside the rows returns the
index error of llvm_expression.ERRORS, before anything is written for it. The plan's
check_index node has reported such an index already; this keeps memory safe regardless.
"""

from __future__ import annotations

import ctypes

import numpy as np

_ADD_TYPES = {np.dtype(np.float32): ("float", "fadd"), np.dtype(np.float64): ("double", "fadd"),
              np.dtype(np.int32): ("i32", "add"), np.dtype(np.int64): ("i64", "add")}
_CALL = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)
_state: dict = {}

_WORDS = ("first", "second", "index", "count", "row", "rows")

_ROW_LOOP = """
define i32 @{name}(ptr %argument, i64 %part) {{
entry:
{loads}
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %next, %{continue_block} ]
  %more = icmp slt i64 %i, %count
  br i1 %more, label %body, label %done

body:
  %slot = getelementptr i64, ptr %index, i64 %i
  %raw = load i64, ptr %slot
  %negative = icmp slt i64 %raw, 0
  %wrapped = add i64 %raw, %rows
  %j = select i1 %negative, i64 %wrapped, i64 %raw
  %outside = icmp uge i64 %j, %rows
  br i1 %outside, label %fail, label %in_range

in_range:
{row}
  %next = add i64 %i, 1
  br label %loop

fail:
  ret i32 {error}

done:
  ret i32 0
}}
"""

# gather: out row i <- first (the source) row j; put: first (the target) row j <- second row i.
_COPY = """  %from_offset = mul i64 {from_row}, %row
  %from = getelementptr i8, ptr {from_pointer}, i64 %from_offset
  %to_offset = mul i64 {to_row}, %row
  %to = getelementptr i8, ptr {to_pointer}, i64 %to_offset
  call void @llvm.memcpy.p0.p0.i64(ptr %to, ptr %from, i64 %row, i1 false)
  br label %copied

copied:"""

_ADD = """  %to_row = mul i64 %j, %row
  %from_row = mul i64 %i, %row
  br label %elements

elements:
  %e = phi i64 [ 0, %in_range ], [ %e_next, %element ]
  %e_more = icmp slt i64 %e, %row
  br i1 %e_more, label %element, label %added

element:
  %to_index = add i64 %to_row, %e
  %to = getelementptr {type}, ptr %first, i64 %to_index
  %from_index = add i64 %from_row, %e
  %from = getelementptr {type}, ptr %second, i64 %from_index
  %old = load {type}, ptr %to
  %value = load {type}, ptr %from
  %sum = {instruction} {type} %old, %value
  store {type} %sum, ptr %to
  %e_next = add i64 %e, 1
  br label %elements

added:"""


def _loads() -> str:
    lines = []
    for position, name in enumerate(_WORDS):
        kind = "ptr" if name in ("first", "second", "index") else "i64"
        lines.append(f"  %{name}_slot = getelementptr i64, ptr %argument, i64 {position}")
        lines.append(f"  %{name} = load {kind}, ptr %{name}_slot")
    return "\n".join(lines)


def _text(name: str, row: str, continue_block: str) -> str:
    from .llvm.expression import INDEX_OUT_OF_RANGE

    return _ROW_LOOP.format(name=name, loads=_loads(), row=row, continue_block=continue_block,
                            error=INDEX_OUT_OF_RANGE)


def function(kind: str, dtype=None) -> int | None:
    """The address of `kind` ("gather", "put" or "add" for `dtype`), or None where there is
    none (an add of another dtype)."""
    key = (kind, None if kind != "add" else np.dtype(dtype))
    if key in _state:
        return _state[key]
    from .helper_modules import compile_module

    prefix = "autojit_rows"
    if kind == "add":
        found = _ADD_TYPES.get(np.dtype(dtype))
        if found is None:
            _state[key] = None
            return None
        type_name, instruction = found
        name = f"{prefix}_add_{type_name}"
        text = _text(name, _ADD.format(type=type_name, instruction=instruction), "added")
    else:
        name = f"{prefix}_{kind}"
        row = _COPY.format(from_row="%j", from_pointer="%first", to_row="%i",
                           to_pointer="%second") if kind == "gather" else \
            _COPY.format(from_row="%i", from_pointer="%second", to_row="%j",
                         to_pointer="%first")
        text = _text(name, row, "copied")
    text = "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)\n" + text
    (address,) = compile_module(text, [name], ("rows", name, text))
    _state[key] = address
    return address


def add_rows(out: np.ndarray, index: np.ndarray, values: np.ndarray) -> bool:
    """out[index[j]] += values[j] for j in order, by the add routine, for the eager accumulating
    index_put (ops/indexing/row_accumulation.py); the index 1-D and in range (negatives
    wrapped), values of shape (len(index), *out.shape[1:]) and out's dtype. False where there
    is no routine (another dtype, a strided out, no LLVM)."""
    if out.__class__ is not np.ndarray or not out.flags.c_contiguous or \
            values.dtype != out.dtype or out.dtype not in _ADD_TYPES:
        return False
    try:
        address = function("add", out.dtype)
    except ImportError:  # no llvmlite
        return False
    if address is None:
        return False
    from .workers import data_address, run_routine

    values = np.ascontiguousarray(values)
    index = np.ascontiguousarray(index, np.int64)
    words = np.array([data_address(out), data_address(values), data_address(index),
                      index.shape[0], out.size // out.shape[0], out.shape[0]], np.int64)
    run_routine(None, address, words, 1, "accumulation of rows")
    return True


def call(address: int, words: np.ndarray) -> int:
    """Run one of the functions on its words (an int64 array) from Python; its status."""
    return _CALL(address)(words.ctypes.data, 0)
