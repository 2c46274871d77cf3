"""The LLVM IR text of the native program's runner and of the combines of split reductions.

program.py compiles these once per process (helper_modules.py, kept in the disk cache): the
runner calls a program's operations in order (a split one through the workers), after checking
the call's inputs (input_checks.py) and patching the per-call pointers into the operations'
words; a copy operation; and a combine per reduction kind and dtype, folding the partial blocks
of a reduction split over the cores as NumPy's reduce does.
"""

from __future__ import annotations


def runner_text(prefix: str, item_offset: int, data_offset: int) -> str:
    """The runner's module (`{prefix}_run`, `{prefix}_copy`), for these CPython and NumPy
    object layouts (where a list keeps its items, an ndarray its data pointer)."""
    return _RUNNER_IR.format(prefix=prefix, item_offset=item_offset, data_offset=data_offset,
                             copy_loads=_argument_loads(_COPY_WORDS),
                             call_loads=_argument_loads(CALL_WORDS, "call"))


def combine_text(name: str, kind: str, type_name: str) -> str:
    """The combine `name` of a split reduction's partial blocks: kind sum, prod, max or min,
    over LLVM type `type_name`."""
    return _COMBINE_IR.format(name=name, type=type_name, fold=_fold(kind, type_name),
                              loads=_argument_loads(_COMBINE_WORDS))


_RUNNER_IR = """
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

define i64 @{prefix}_run(ptr %call, ptr %arrays) {{
entry:
  ; The call's constant words (Program._call_words): two arguments cost ctypes less than eight.
{call_loads}
  ; The call's arrays: a Python list of ndarrays, whose data pointers are read where the
  ; CPython and NumPy ABIs put them (cpu.object_layout).
  %items_slot = getelementptr i8, ptr %arrays, i64 {item_offset}
  %items = load ptr, ptr %items_slot
  %checking = icmp ne ptr %checks, null
  br i1 %checking, label %check_inputs, label %patch

check_inputs:
  ; input_checks.py: the inputs are those of the recorded call, or nothing runs.
  %check_status = call i64 @{prefix}_check_inputs(ptr %checks, ptr %items)
  %inputs_differ = icmp ne i64 %check_status, 0
  br i1 %inputs_differ, label %differ, label %patch

differ:
  ret i64 %check_status

patch:
  %patch_index = phi i64 [ 0, %entry ], [ 0, %check_inputs ], [ %patch_next, %patch_body ]
  %patching = icmp slt i64 %patch_index, %patch_count
  br i1 %patching, label %patch_body, label %loop

patch_body:
  ; (word position, array number, byte offset): the word becomes that array's data
  ; pointer plus the offset.
  %patch_entry = getelementptr [3 x i64], ptr %patches, i64 %patch_index
  %word_position = load i64, ptr %patch_entry
  %array_slot = getelementptr i64, ptr %patch_entry, i64 1
  %array_number = load i64, ptr %array_slot
  %offset_slot = getelementptr i64, ptr %patch_entry, i64 2
  %byte_offset = load i64, ptr %offset_slot
  %item_address = getelementptr ptr, ptr %items, i64 %array_number
  %item = load ptr, ptr %item_address
  %data_slot = getelementptr i8, ptr %item, i64 {data_offset}
  %data = load i64, ptr %data_slot
  %pointer = add i64 %data, %byte_offset
  %word = getelementptr i64, ptr %operations, i64 %word_position
  store i64 %pointer, ptr %word
  %patch_next = add i64 %patch_index, 1
  br label %patch

loop:
  %index = phi i64 [ 0, %patch ], [ %next, %continue ]
  %more = icmp slt i64 %index, %count
  br i1 %more, label %body, label %done

body:
  %operation = getelementptr [3 x i64], ptr %operations, i64 %index
  %function = load ptr, ptr %operation
  %argument_slot = getelementptr i64, ptr %operation, i64 1
  %argument = load ptr, ptr %argument_slot
  %parts_slot = getelementptr i64, ptr %operation, i64 2
  %parts = load i64, ptr %parts_slot
  %split = icmp sgt i64 %parts, 1
  br i1 %split, label %shared, label %alone

alone:
  %alone_status = call i32 %function(ptr %argument, i64 0)
  br label %check

shared:
  %shared_status = call i32 %workers_run(ptr %workers_state, ptr %function, ptr %argument,
                                         i64 %parts)
  br label %check

check:
  %status = phi i32 [ %alone_status, %alone ], [ %shared_status, %shared ]
  %next = add i64 %index, 1
  %failed = icmp ne i32 %status, 0
  br i1 %failed, label %fail, label %continue

continue:
  br label %loop

fail:
  ; The operation's number (from 1) in the high word, its status in the low one.
  %wide = zext i32 %status to i64
  %position = shl i64 %next, 32
  %result = or i64 %position, %wide
  ret i64 %result

done:
  ret i64 0
}}

define i32 @{prefix}_copy(ptr %argument, i64 %part) {{
{copy_loads}
  call void @llvm.memcpy.p0.p0.i64(ptr %destination, ptr %source, i64 %bytes, i1 false)
  ret i32 0
}}
"""

# The combine of a split reduction's partial blocks (parallel.SplitKernel), as NumPy's
# `ufunc.reduce(blocks, axis=0)` does it: block 0, then each further block folded in order.
_COMBINE_IR = """
define i32 @{name}(ptr %argument, i64 %part) {{
entry:
{loads}
  br label %element

element:
  %index = phi i64 [ 0, %entry ], [ %index_next, %store ]
  %more = icmp slt i64 %index, %count
  br i1 %more, label %first, label %done

first:
  %first_address = getelementptr {type}, ptr %blocks, i64 %index
  %first_value = load {type}, ptr %first_address
  br label %block

block:
  %block_index = phi i64 [ 1, %first ], [ %block_next, %fold ]
  %acc = phi {type} [ %first_value, %first ], [ %combined, %fold ]
  %blocks_left = icmp slt i64 %block_index, %parts
  br i1 %blocks_left, label %fold, label %store

fold:
  %offset = mul i64 %block_index, %stride
  %block_start = getelementptr i8, ptr %blocks, i64 %offset
  %address = getelementptr {type}, ptr %block_start, i64 %index
  %value = load {type}, ptr %address
{fold}
  %block_next = add i64 %block_index, 1
  br label %block

store:
  %out_address = getelementptr {type}, ptr %out, i64 %index
  store {type} %acc, ptr %out_address
  %index_next = add i64 %index, 1
  br label %element

done:
  ret i32 0
}}
"""


# The argument words of the copy and of a combine, in order, with the types they are read as.
_COPY_WORDS = (("destination", "ptr"), ("source", "ptr"), ("bytes", "i64"))
_COMBINE_WORDS = (("blocks", "ptr"), ("parts", "i64"), ("stride", "i64"), ("count", "i64"),
                  ("out", "ptr"))


# The runner's words for one program (program.py's Program._call_words), in order.
CALL_WORDS = (("workers_state", "ptr"), ("workers_run", "ptr"), ("operations", "ptr"),
               ("count", "i64"), ("patches", "ptr"), ("patch_count", "i64"), ("checks", "ptr"))


def _argument_loads(words: tuple, block: str = "argument") -> str:
    """IR reading each word of %block into a value of its name."""
    lines = []
    for index, (name, kind) in enumerate(words):
        lines.append(f"  %{name}_slot = getelementptr i64, ptr %{block}, i64 {index}")
        lines.append(f"  %{name} = load {kind}, ptr %{name}_slot")
    return "\n".join(lines)


def _fold(kind: str, type_name: str) -> str:
    """IR making %combined from %acc and %value: NumPy's add, multiply, maximum or minimum
    (a float maximum keeps the first operand when it is >= the second or nan)."""
    floating = type_name in ("float", "double")
    if kind in ("sum", "prod"):
        instruction = {("sum", True): "fadd", ("sum", False): "add",
                       ("prod", True): "fmul", ("prod", False): "mul"}[kind, floating]
        return f"  %combined = {instruction} {type_name} %acc, %value"
    if floating:
        order = "oge" if kind == "max" else "ole"
        return (f"  %ordered = fcmp {order} {type_name} %acc, %value\n"
                f"  %nan = fcmp uno {type_name} %acc, %acc\n"
                f"  %keep = or i1 %ordered, %nan\n"
                f"  %combined = select i1 %keep, {type_name} %acc, {type_name} %value")
    order = "sge" if kind == "max" else "sle"
    return (f"  %keep = icmp {order} {type_name} %acc, %value\n"
            f"  %combined = select i1 %keep, {type_name} %acc, {type_name} %value")
