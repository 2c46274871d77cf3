"""b packed once for the native products that share it: the pack function's IR and the
rewrite of a recorded program's gemm calls.

The generated ?gemm (kernel.py) packs b's panels again on every call. A recurrent model's
products read the same weight at every time step: an LSTM layer's 64 products `h_t @ W_hh^T`
each pack the whole 1 MB of W_hh, about 30 of a 32 x 256 x 1024 product's 179 us here
(measured: 179, 328, 624 and 1208 us for 32, 64, 128 and 256 rows; docs/notes/cpu-codegen.md).
When a program (cpu/program.py) is assembled, `rewrite` finds the gemm records that read the
same b (address, leading dimension, transposition, depth and width) from an input array that
no step writes in place before the last of them, inserts one call of the pack function before
the first, and points each of those records at the packed copy, with the ?gemm variant that
reads it where it lies. The packed copy holds every k block and panel exactly as the per-call
packing writes them, so the products' results are the same bits.

Layout of the packed copy, for a K x N b: the k blocks (KC deep, the last `depth` rows) one
after the other, each `roundup(N, NR) x roundup(depth, lanes)`: the panel starting at column
j0 at `k0 * roundup(N, NR) + j0 * roundup(depth, lanes)` elements, holding `depth` rows of NR
(the transposed pack writes zero rows up to the next multiple of the lanes, which no tile
reads). `packed_elements` gives its size.
"""

from __future__ import annotations

import numpy as np

from .. import workers

_FIELDS = {name: index for index, (name, _) in enumerate(workers.GEMM_RECORD)}
_WORDS = workers.GEMM_RECORD_WORDS
# Packed copies a program may hold, in bytes: beyond it, the products pack b per call.
_MOST_BYTES = 64 << 20
# The fewest calls (operations) of the program whose records share b for it to be packed once.
# The parts of one product split over the cores each pack b at the same time, which costs no
# more than one pack run before them while the other core waits (the transformer step's
# products); and in the gradient penalty step, two calls sharing each of four weights took
# 750-766 us with the copies against 712-726 without (three rounds each): the copy, packed on
# one core, is read from the other's cache by the part there, where a per-call pack is read
# from its own L1.
_FEWEST_CALLS = 3


def pack_all_text(transpose_b: bool, names: dict, prefix: str) -> str:
    """`pack_b{n,t}(order, ..., b, ldb, ..., packed, ...)`: all of b packed into `packed` (the
    c argument of the ?gemm signature, so that the workers' gemm_part calls it as a product);
    only n, k, b, ldb and c are read."""
    scalar, panel, depth, lanes = names["scalar"], names["panel"], names["depth"], \
        names["lanes"]
    side = "t" if transpose_b else "n"
    row, column = ("%j0", "%k0") if transpose_b else ("%k0", "%j0")
    return "\n".join([
        f"define void @{prefix}_pack_b{side}(i32 %order, i32 %transpose_a, i32 %transpose_b, "
        f"i64 %m, i64 %n, i64 %k, {scalar} %alpha, ptr noalias %a, i64 %lda, ptr noalias %b, "
        f"i64 %ldb, {scalar} %beta, ptr noalias %c, i64 %ldc) {{",
        "entry:", f"  %n_up = add i64 %n, {panel - 1}", f"  %n_pad = and i64 %n_up, -{panel}",
        "  %no_columns = icmp sle i64 %n, 0", "  %no_depth = icmp sle i64 %k, 0",
        "  %skip = or i1 %no_columns, %no_depth",
        "  br i1 %skip, label %exit, label %blocks",
        "blocks:", "  %k0 = phi i64 [0, %entry], [%k0_next, %block_done]",
        "  %deep_left = sub i64 %k, %k0", f"  %shallow = icmp slt i64 %deep_left, {depth}",
        f"  %depth = select i1 %shallow, i64 %deep_left, i64 {depth}",
        f"  %depth_up = add i64 %depth, {lanes - 1}",
        f"  %depth_pad = and i64 %depth_up, -{lanes}",
        "  %block_base = mul i64 %k0, %n_pad",
        "  br label %panels",
        "panels:", "  %j0 = phi i64 [0, %blocks], [%j0_next, %panels]",
        "  %left = sub i64 %n, %j0", f"  %narrow = icmp slt i64 %left, {panel}",
        f"  %width = select i1 %narrow, i64 %left, i64 {panel}",
        f"  %b_offset_row = mul i64 {row}, %ldb", f"  %b_offset = add i64 %b_offset_row, {column}",
        f"  %b_start = getelementptr {scalar}, ptr %b, i64 %b_offset",
        "  %panel_offset = mul i64 %j0, %depth_pad",
        "  %block_offset = add i64 %block_base, %panel_offset",
        f"  %block = getelementptr {scalar}, ptr %c, i64 %block_offset",
        f"  call void @{prefix}_b{side}_pack(ptr %block, ptr %b_start, i64 %ldb, i64 %depth, "
        "i64 %width)",
        f"  %j0_next = add i64 %j0, {panel}", "  %more = icmp slt i64 %j0_next, %n",
        "  br i1 %more, label %panels, label %block_done",
        "block_done:", "  %k0_next = add i64 %k0, %depth",
        "  %more_blocks = icmp slt i64 %k0_next, %k",
        "  br i1 %more_blocks, label %blocks, label %exit",
        "exit:", "  ret void", "}"])


def packed_elements(inner: int, columns: int, lanes: int, panel: int) -> int:
    """Elements of the packed copy of an inner x columns b (see the module docstring)."""
    return -(-inner // lanes) * lanes * (-(-columns // panel) * panel)


def rewrite(operations: list, gemm_part: int, functions, input_of, unwritten) -> tuple:
    """(the operations with b packed once per group of records that share it, the packed
    copies to keep alive). `operations`: Recording.operations, (function, words, pointer
    positions, parts, step); `functions(kind, transpose_a, transpose_b, function)`: (pack
    address, packed ?gemm address, lanes, panel) where `function` is the generated ?gemm
    that has them, else None; `input_of(address)`: the input index holding that byte, or
    None; `unwritten(input, step)`: whether no step up to `step` wrote the input in place."""
    groups: dict = {}
    for number, (function, words, _, parts, step) in enumerate(operations):
        if function != gemm_part:
            continue
        for part in range(parts):
            record = words[part * _WORDS:(part + 1) * _WORDS]
            kind, transpose_b = record[_FIELDS["kind"]], record[_FIELDS["transpose_b"]]
            key = (kind, record[_FIELDS["b"]], record[_FIELDS["lead_b"]], transpose_b,
                   record[_FIELDS["inner"]], record[_FIELDS["columns"]])
            groups.setdefault(key, []).append((number, part, step))
    inserted: dict = {}  # operation number -> pack operations to run before it
    changed: dict = {}  # (operation number, part) -> (packed ?gemm, packed copy's address)
    kept, total = [], 0
    for key, uses in groups.items():
        kind, b, _, transpose_b, inner, columns = key
        if len({number for number, _, _ in uses}) < _FEWEST_CALLS:
            continue
        index = input_of(b)
        if index is None or not unwritten(index, uses[-1][2]):
            continue
        records = [operations[number][1][part * _WORDS:(part + 1) * _WORDS]
                   for number, part, _ in uses]
        variants = [functions(kind, record[_FIELDS["transpose_a"]], transpose_b,
                              record[_FIELDS["function"]]) for record in records]
        if None in variants:
            continue
        pack, _, lanes, panel = variants[0]
        first = records[0]
        itemsize = 4 if kind == 0 else 8
        size = packed_elements(inner, columns, lanes, panel) * itemsize
        if total + size > _MOST_BYTES:
            continue
        total += size
        copy = _aligned_bytes(size)
        kept.append(copy)
        address = workers.data_address(copy)
        words = [0] * _WORDS
        for name, value in (("function", pack), ("kind", kind), ("order", first[_FIELDS["order"]]),
                            ("transpose_b", transpose_b), ("columns", columns),
                            ("inner", inner), ("b", b), ("lead_b", first[_FIELDS["lead_b"]]),
                            ("c", address)):
            words[_FIELDS[name]] = value
        inserted.setdefault(uses[0][0], []).append(
            (gemm_part, words, [_FIELDS["b"], _FIELDS["c"]], 1, uses[0][2]))
        for (number, part, _), variant in zip(uses, variants):
            changed[(number, part)] = (variant[1], address)
    if not changed:
        return operations, kept
    result = []
    for number, operation in enumerate(operations):
        result.extend(inserted.get(number, ()))
        function, words, positions, parts, step = operation
        if any((number, part) in changed for part in range(parts)):
            words = list(words)
            for part in range(parts):
                found = changed.get((number, part))
                if found is not None:
                    words[part * _WORDS + _FIELDS["function"]] = found[0]
                    words[part * _WORDS + _FIELDS["b"]] = found[1]
            operation = (function, words, positions, parts, step)
        result.append(operation)
    return result, kept


def _aligned_bytes(size: int) -> np.ndarray:
    """A uint8 array of `size` bytes starting on a 64-byte boundary (the packed blocks are
    stored with aligned vector stores)."""
    raw = np.empty(size + 64, np.uint8)
    start = -workers.data_address(raw) % 64
    return raw[start:start + size]
