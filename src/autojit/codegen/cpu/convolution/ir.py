"""The LLVM IR of the native convolution routines: one module per dtype (float32, float64),
driven by the tables convolution/__init__.py builds (docs/notes/convolution.md).

Three entry points, each `i32 f(ptr argument, i64 part)` as the native workers call a part of
a job (workers.py):

- `products`: the forward product and the input gradient, as an implicit gemm. For each image
  of the part, the image is first laid out in a scratch buffer as the product reads it
  (`prepare`: rows copied from the image, with zeros for the padding, split by stride
  phase); then for each job (a group, or a group and stride phase of the input gradient),
  each panel of 2 vectors of output positions and each tile of rows, `tile{R}` sums
  `a[row, k] * source[offset_b(k) + position]` over the job's k's, k's offsets read from a
  table of (a, b) pairs, the source read where the image is laid out, into a staging block,
  which is copied to the output positions the panel holds (positions past the end of an
  output row are computed and dropped).
- `weight`: a chunk of images' share of the weight gradient, `sum over positions of
  grad[o, position] * source[offset(k) + position]`, tiles of ro x rk dot products whose
  vector accumulators run over the chunk's images and positions, then summed across their
  lanes and added into the chunk's float64 partial sums.
- `weight_sum`: the chunks' partial sums added in chunk order and rounded once.

This module holds the tables' layouts, the prepare routine, the helpers both modules share and
the products; weight_ir.py renders the weight gradient's two entry points.
"""

from __future__ import annotations

import numpy as np

from ..llvm.ir_text import Function

# dtype -> (scalar, lanes of a vector with 32 registers of 512 bits, short name)
TYPES = {np.dtype(np.float32): ("float", 16, "f32"), np.dtype(np.float64): ("double", 8, "f64")}
# The tiles' shapes by the registers the host has. With AVX-512's 32: tiles of rows x 2
# vectors of 16 float32 lanes (12 x 2 = 24 accumulators), weight tiles of 4 x 5. With AVX2's
# 16 registers of 256 bits, the same tiles would spill most accumulators on every k: vectors
# of 8 lanes, 6 x 2 = 12 accumulators, weight tiles of 4 x 3 (docs/notes/convolution.md).
TILES = {True: {"divisor": 1, "rows": (12, 8, 4, 2, 1), "weight_rows": (4, 2, 1),
                "weight_columns": 5},
         False: {"divisor": 2, "rows": (6, 4, 2, 1), "weight_rows": (4, 2, 1),
                 "weight_columns": 3}}
# A prepare record: rows of `left` zeros, `count` elements read `step` apart, `right` zeros;
# `rows` of them, dst_pitch and src_pitch elements apart.
RECORD = ("dst", "src", "left", "count", "right", "step", "rows", "dst_pitch", "src_pitch")
RECORD_WORDS = len(RECORD)
JOB_WORDS = 18
# Words of the products' argument, the weight's, the weight sum's and their tables.
PRODUCTS_ARGUMENT = ("source", "source_image", "weight", "out", "out_image", "scratch",
                     "scratch_part", "table", "images", "parts")
PRODUCTS_TABLE = ("channels", "source_channel", "scratch_channel", "records", "records_at",
                  "slack_start", "slack_end", "jobs", "jobs_at", "pairs_at", "packed_at",
                  "stage_at", "zero_output")
# A part's scratch: the image laid out (slack_end elements); at packed_at the weight packed for
# the tiles (each job's rows x depth at the job's packed_at); at stage_at a panel's sums for
# all of a job's rows. zero_output: whether each output image is zeroed first (an input
# gradient with stride phases no tap reaches, which have no job). The tiles read the panel's
# source where the image is laid out, through the pairs' b offsets (docs/notes/convolution.md).
JOB = ("rows", "depth", "a_at", "a_row", "b_at", "pairs", "grid", "grid_plane", "grid_row",
       "valid_rows", "valid_columns", "out_at", "out_plane", "out_row", "out_step",
       "out_channel", "packed_at", "block")
WEIGHT_ARGUMENT = ("source", "source_image", "grad", "grad_image", "scratch", "scratch_part",
                   "table", "images", "chunk", "partials", "partials_part", "chunks", "parts")
WEIGHT_TABLE = ("channels", "source_channel", "scratch_channel", "records", "records_at",
                "slack_start", "scratch_image", "grad_channels", "grad_channel", "grid",
                "grad_records", "grad_records_at", "groups", "group_rows", "columns",
                "offsets_at", "group_stride", "steps")
SUM_ARGUMENT = ("partials", "chunks", "partials_part", "count", "out")


def symbol(dtype, name: str) -> str:
    return f"autojit_conv_{TYPES[np.dtype(dtype)][2]}_{name}"


def lanes(dtype, wide: bool) -> int:
    """The lanes of the routines' vectors of `dtype`, with 512-bit registers (wide) or not."""
    return TYPES[np.dtype(dtype)][1] // TILES[wide]["divisor"]


# The entry points of each module: the forward and input-gradient product, and the weight
# gradient's two. Two modules, so that a first eager call compiles the one it needs now while a
# compile thread makes the other (about 0.15 s and 0.22 s of O3 on the Zen 5 machine, 0.38 s
# as one module).
MODULES = {"products": ("products",), "weight": ("weight", "weight_sum")}


def render_module(dtype, wide: bool = True, module: str = "products") -> tuple:
    """(the IR text of `module`, the names of its entry points), with the tiles of a host
    with 32 vector registers of 512 bits (wide) or 16 of 256."""
    scalar, _, short = TYPES[np.dtype(dtype)]
    count, tiles = lanes(dtype, wide), TILES[wide]
    names = {"scalar": scalar, "lanes": count, "short": short, "panel": 2 * count,
             "vector": f"<{count} x {scalar}>", "prefix": f"autojit_conv_{short}",
             "tile_rows": tiles["rows"], "weight_rows": tiles["weight_rows"],
             "weight_columns": tiles["weight_columns"]}
    parts = [_DECLARATIONS.format(**names), _prepare(names)]
    if module == "products":
        parts += [_tile(rows, names, vectors) for rows in names["tile_rows"]
                  for vectors in (1, 2)]
        parts.append(_products(names))
    else:
        from . import weight_ir  # which builds on this module's helpers

        parts += [weight_ir.weight_tile(rows, columns, names) for rows in names["weight_rows"]
                  for columns in range(1, names["weight_columns"] + 1)]
        parts += [weight_ir.weight(names), weight_ir.weight_sum(names)]
    entries = [symbol(dtype, name) for name in MODULES[module]]
    return "\n\n".join(parts), entries


_DECLARATIONS = """
declare {vector} @llvm.fma.v{lanes}{short}({vector}, {vector}, {vector})
declare {scalar} @llvm.vector.reduce.fadd.v{lanes}{short}({scalar}, {vector})
declare {vector} @llvm.masked.load.v{lanes}{short}.p0(ptr, i32, <{lanes} x i1>, {vector})
declare void @llvm.masked.store.v{lanes}{short}.p0({vector}, ptr, i32, <{lanes} x i1>)
declare void @llvm.prefetch.p0(ptr, i32, i32, i32)
"""


def prefetch(f: Function, scalar: str, base: str, elements) -> None:
    """Ask for the cache lines of base[0:elements] to be brought into L2: the next image's,
    while this one is laid out and multiplied. With the operands out of the caches (as an
    activation the forward pass made is when its weight gradient runs), a 16-channel 32x32
    product took 230-340 us more than with them in L2; the prefetch takes back 20-90 us of it
    (one thread; prefetching the output's lines for writing as well gained nothing)."""
    step = 64 // (4 if scalar == "float" else 8)
    with f.loop(0, elements, step, hint="pf") as index:
        f.emit(f"call void @llvm.prefetch.p0(ptr {f.element(scalar, base, index)}, "
               "i32 0, i32 2, i32 1)")


def _lane_mask(f: Function, lanes: int, first: str, low: str, high: str) -> str:
    """The lanes i of a vector whose index first + i lies in [low, high)."""
    indices = "<" + ", ".join(f"i64 {lane}" for lane in range(lanes)) + ">"
    splat = []
    for value in (first, low, high):
        one = f.op(f"insertelement <{lanes} x i64> poison, i64 {value}, i32 0")
        splat.append(f.op(f"shufflevector <{lanes} x i64> {one}, <{lanes} x i64> poison, "
                          f"<{lanes} x i32> zeroinitializer"))
    index = f.op(f"add <{lanes} x i64> {splat[0]}, {indices}")
    above = f.op(f"icmp sge <{lanes} x i64> {index}, {splat[1]}")
    below = f.op(f"icmp slt <{lanes} x i64> {index}, {splat[2]}")
    return f.op(f"and <{lanes} x i1> {above}, {below}", "mask")


def _vector_copy(f: Function, names: dict, target: str, source: str, total: str,
                 low: str = "0", high: str | None = None) -> None:
    """target[i] = source[i] for i in [low, high), 0 elsewhere, for i < total, a vector at
    a time with masked loads and stores (source[i] is not read outside [low, high))."""
    lanes, vector, short = names["lanes"], names["vector"], names["short"]
    high = total if high is None else high
    with f.loop(0, total, lanes, hint="v") as first:
        read = _lane_mask(f, lanes, first, low, high)
        written = _lane_mask(f, lanes, first, "0", total)
        at = f.element(names["scalar"], source, first)
        value = f.op(f"call {vector} @llvm.masked.load.v{lanes}{short}.p0(ptr {at}, i32 4, "
                     f"<{lanes} x i1> {read}, {vector} zeroinitializer)")
        stored = f.element(names["scalar"], target, first)
        f.emit(f"call void @llvm.masked.store.v{lanes}{short}.p0({vector} {value}, "
               f"ptr {stored}, i32 4, <{lanes} x i1> {written})")


def load_words(function: Function, base: str, fields: tuple, pointers=()) -> dict:
    """Each named word of a table as a value (pointers as ptr)."""
    return {field: (function.pointer if field in pointers else function.word)(
        base, index, field) for index, field in enumerate(fields)}


def _prepare(names: dict) -> str:
    """`prepare(dst, src, records, count, channels, dst_channel, src_channel)`: for each
    channel and record, `rows` rows of `left` zeros, `count` elements of src read `step`
    apart, `right` zeros (element offsets within the channel). Rows of step 1 or 2 are
    copied a vector at a time, every row of the record at once (the masks are the same)."""
    scalar, lanes, vector, short = names["scalar"], names["lanes"], names["vector"], \
        names["short"]
    f = Function(f"define internal void @{names['prefix']}_prepare(ptr noalias %dst, "
                 "ptr noalias %src, ptr %records, i64 %count, i64 %channels, "
                 "i64 %dst_channel, i64 %src_channel) {")
    with f.loop(0, "%channels", hint="c") as channel:
        dst_c = f.element(scalar, "%dst", f.binary("mul", channel, "%dst_channel"))
        src_c = f.element(scalar, "%src", f.binary("mul", channel, "%src_channel"))
        with f.loop(0, "%count", hint="r") as record:
            first = f.binary("mul", record, RECORD_WORDS)
            at = f.op(f"getelementptr i64, ptr %records, i64 {first}")
            fields = load_words(f, at, RECORD)
            rows = f.element(scalar, dst_c, fields["dst"])
            copied = f.binary("add", fields["left"], fields["count"])
            total = f.binary("add", copied, fields["right"])
            # Where element i of a row reads: src + (i - left) * step.
            shifted = f.element(scalar, src_c, f.binary(
                "sub", fields["src"], f.binary("mul", fields["left"], fields["step"])))
            kinds = [f.label("unit"), f.label("pair"), f.label("strided")]
            done = f.label("record")
            f.emit(f"switch i64 {fields['step']}, label {kinds[2]} "
                   f"[i64 1, label {kinds[0]} i64 2, label {kinds[1]}]")
            for kind, block in zip((1, 2), kinds[:2], strict=True):
                f.block(block)
                with f.loop(0, total, lanes, hint="v") as start:
                    read = _lane_mask(f, lanes, start, fields["left"], copied)
                    written = _lane_mask(f, lanes, start, "0", total)
                    with f.loop(0, fields["rows"], hint="row") as row:
                        source = f.element(scalar, shifted, f.binary("add", f.binary(
                            "mul", row, fields["src_pitch"]), f.binary("mul", start, kind)))
                        value = _load_every(f, names, source, read, kind)
                        target = f.element(scalar, rows, f.binary("add", f.binary(
                            "mul", row, fields["dst_pitch"]), start))
                        f.emit(f"call void @llvm.masked.store.v{lanes}{short}.p0("
                               f"{vector} {value}, ptr {target}, i32 4, "
                               f"<{lanes} x i1> {written})")
                f.branch(done)
            f.block(kinds[2])
            with f.loop(0, fields["rows"], hint="row") as row:
                target = f.element(scalar, rows, f.binary("mul", row, fields["dst_pitch"]))
                source = f.element(scalar, shifted, f.binary("mul", row, fields["src_pitch"]))
                with f.loop(0, total, hint="k") as index:
                    after = f.op(f"icmp sge i64 {index}, {fields['left']}")
                    inside = f.op(f"and i1 {after}, {f.less(index, copied)}")
                    value_slot = f.variable("0.0", scalar)
                    with f.when(inside):
                        read = f.element(scalar, source, f.binary("mul", index, fields["step"]))
                        f.emit(f"store {scalar} {f.op(f'load {scalar}, ptr {read}')}, "
                               f"ptr {value_slot}")
                    value = f.op(f"load {scalar}, ptr {value_slot}")
                    f.emit(f"store {scalar} {value}, ptr {f.element(scalar, target, index)}")
            f.branch(done)
            f.block(done)
    f.emit("ret void")
    return f.text()


def _load_every(f: Function, names: dict, source: str, mask: str, step: int) -> str:
    """The vector of source[i * step] for the lanes i of `mask` (0 elsewhere): one masked
    load for step 1; for step 2, two masked loads and the even lanes picked out."""
    lanes, vector, short = names["lanes"], names["vector"], names["short"]
    load = f"@llvm.masked.load.v{lanes}{short}.p0"
    if step == 1:
        return f.op(f"call {vector} {load}(ptr {source}, i32 4, <{lanes} x i1> {mask}, "
                    f"{vector} zeroinitializer)")
    halves = []
    for half in range(2):
        # Lane j of this half reads source[half * lanes + j]: an even one is element
        # (half * lanes + j) / 2, read where the mask has that element; odd ones are not read
        # (index `lanes` picks the false of the second operand).
        picks = ", ".join(f"i32 {(half * lanes + lane) // 2 if lane % 2 == 0 else lanes}"
                          for lane in range(lanes))
        widened = f.op(f"shufflevector <{lanes} x i1> {mask}, <{lanes} x i1> zeroinitializer, "
                       f"<{lanes} x i32> <{picks}>")
        at = f.element(names["scalar"], source, half * lanes)
        halves.append(f.op(f"call {vector} {load}(ptr {at}, i32 4, <{lanes} x i1> {widened}, "
                           f"{vector} zeroinitializer)"))
    evens = ", ".join(f"i32 {2 * lane}" for lane in range(lanes))
    return f.op(f"shufflevector {vector} {halves[0]}, {vector} {halves[1]}, "
                f"<{lanes} x i32> <{evens}>")


def zero_elements(f: Function, scalar: str, base: str, start, stop) -> None:
    with f.loop(start, stop, hint="s") as index:
        f.emit(f"store {scalar} 0.0, ptr {f.element(scalar, base, index)}")


def _tile(rows: int, names: dict, parts: int = 2) -> str:
    """`tile{rows}(a, b, depth, c, ldc, accumulate, pairs)`: c[row * ldc + p] (+)= the sum over
    k < depth of a[k * rows + row] * b[pairs[2k + 1] + p], for p < 2 vectors: a holds the
    tile's rows of the weight, packed, and b is the panel's first position in the laid-out
    image; c is added to where `accumulate` is not 0 (a later block of k's). With `parts` 1,
    `tile{rows}_narrow`, for p < 1 vector: a job's last panel where it holds no more
    positions (an 8x8 image padded to 10x10 is a grid of 78 positions: panels of 32, 32 and
    14, 80 positions computed instead of 96)."""
    scalar, vector, lanes = names["scalar"], names["vector"], names["lanes"]
    fma = f"@llvm.fma.v{lanes}{names['short']}"
    slots = [(row, part) for row in range(rows) for part in range(parts)]
    suffix = "" if parts == 2 else "_narrow"
    lines = [f"define internal void @{names['prefix']}_tile{rows}{suffix}(ptr noalias %a, "
             "ptr noalias %b, i64 %depth, ptr noalias %c, i64 %ldc, i64 %accumulate, "
             "ptr noalias %pairs) noinline {", "entry:", "  %empty = icmp sle i64 %depth, 0",
             "  br i1 %empty, label %sums, label %loop", "loop:",
             "  %k = phi i64 [0, %entry], [%k_next, %loop]"]
    lines += [f"  %acc{row}_{part} = phi {vector} [zeroinitializer, %entry], "
              f"[%sum{row}_{part}, %loop]" for row, part in slots]
    # b is the panel's first position in the laid-out image; k's source lies at the pair's b
    # offset from it, read unaligned where it lies: packing a block of it for the tiles
    # (aligned, contiguous) cost a quarter of a 16-row product's time.
    lines += ["  %pair = shl i64 %k, 1", "  %pair_b = or i64 %pair, 1",
              "  %pair_word = getelementptr i64, ptr %pairs, i64 %pair_b",
              "  %b_at = load i64, ptr %pair_word"]
    lines += [f"  %b_first = getelementptr {scalar}, ptr %b, i64 %b_at",
              f"  %b0 = load {vector}, ptr %b_first, align 4"]
    if parts == 2:
        lines += [f"  %b_second = getelementptr {scalar}, ptr %b_first, i64 {lanes}",
                  f"  %b1 = load {vector}, ptr %b_second, align 4"]
    lines.append(f"  %a_row = mul i64 %k, {rows}")
    for row in range(rows):
        lines += [f"  %a_index{row} = add i64 %a_row, {row}",
                  f"  %a_address{row} = getelementptr {scalar}, ptr %a, i64 %a_index{row}",
                  f"  %a{row} = load {scalar}, ptr %a_address{row}",
                  f"  %a_one{row} = insertelement {vector} poison, {scalar} %a{row}, i32 0",
                  f"  %a_all{row} = shufflevector {vector} %a_one{row}, {vector} poison, "
                  f"<{lanes} x i32> zeroinitializer"]
        lines += [f"  %sum{row}_{part} = call {vector} {fma}({vector} %a_all{row}, "
                  f"{vector} %b{part}, {vector} %acc{row}_{part})" for part in range(parts)]
    lines += ["  %k_next = add i64 %k, 1", "  %more = icmp slt i64 %k_next, %depth",
              "  br i1 %more, label %loop, label %sums", "sums:"]
    lines += [f"  %result{row}_{part} = phi {vector} [zeroinitializer, %entry], "
              f"[%sum{row}_{part}, %loop]" for row, part in slots]
    for row, part in slots:
        lines += [f"  %c_row{row}_{part} = mul i64 {row}, %ldc",
                  f"  %c_index{row}_{part} = add i64 %c_row{row}_{part}, {part * lanes}",
                  f"  %c{row}_{part} = getelementptr {scalar}, ptr %c, i64 %c_index{row}_{part}"]
    lines += ["  %adding = icmp ne i64 %accumulate, 0",
              "  br i1 %adding, label %add, label %store", "add:"]
    for row, part in slots:
        lines += [f"  %old{row}_{part} = load {vector}, ptr %c{row}_{part}, align 64",
                  f"  %added{row}_{part} = fadd {vector} %old{row}_{part}, %result{row}_{part}"]
    lines += ["  br label %store", "store:"]
    lines += [f"  %final{row}_{part} = phi {vector} [%result{row}_{part}, %sums], "
              f"[%added{row}_{part}, %add]" for row, part in slots]
    lines += [f"  store {vector} %final{row}_{part}, ptr %c{row}_{part}, align 64"
              for row, part in slots]
    lines += ["  ret void", "}"]
    return "\n".join(lines)


def _tile_rows(f: Function, left: str, heights: tuple) -> str:
    """The height of the next tile for `left` rows: the tallest of `heights` that fits, but
    two equal tiles rather than the tallest and a short one (8 + 8 rather than 12 + 4 of
    (12, 8, 4, 2, 1); 4 + 4 rather than 6 + 2 of (6, 4, 2, 1))."""
    top = heights[0]
    height = "1"
    for rows in reversed(heights[:-1]):
        fits = f.op(f"icmp sge i64 {left}, {rows}")
        height = f.op(f"select i1 {fits}, i64 {rows}, i64 {height}")
    remainder = f.op(f"urem i64 {left}, {top}")
    above = f.op(f"icmp sgt i64 {left}, {top}")
    for rows in heights[1:]:
        short = 2 * rows - top
        if 0 < short < top and short in heights:
            split = f.op(f"and i1 {f.op(f'icmp eq i64 {remainder}, {short}')}, {above}")
            height = f.op(f"select i1 {split}, i64 {rows}, i64 {height}")
    return height


def _products(names: dict) -> str:
    scalar, prefix = names["scalar"], names["prefix"]
    f = Function(f"define i32 @{prefix}_products(ptr %argument, i64 %part) {{")
    arg = load_words(f, "%argument", PRODUCTS_ARGUMENT,
                      ("source", "weight", "out", "scratch", "table"))
    table = load_words(f, arg["table"], PRODUCTS_TABLE)
    first = f.binary("sdiv", f.binary("mul", "%part", arg["images"]), arg["parts"])
    following = f.binary("add", "%part", 1)
    last = f.binary("sdiv", f.binary("mul", following, arg["images"]), arg["parts"])
    scratch = f.element(scalar, arg["scratch"], f.binary("mul", "%part", arg["scratch_part"]))
    records = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['records_at']}")
    pairs_base = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['pairs_at']}")
    packed = f.element(scalar, scratch, table["packed_at"])
    stage = f.element(scalar, scratch, table["stage_at"])
    with f.loop(0, table["jobs"], hint="pack") as job:
        at = f.binary("add", table["jobs_at"], f.binary("mul", job, JOB_WORDS))
        words = load_words(f, f.op(f"getelementptr i64, ptr {arg['table']}, i64 {at}"), JOB)
        _pack(f, scalar, words, arg["weight"], packed, pairs_base, names["tile_rows"])
    with f.loop(first, last, hint="n") as image:
        source = f.element(scalar, arg["source"], f.binary("mul", image, arg["source_image"]))
        out = f.element(scalar, arg["out"], f.binary("mul", image, arg["out_image"]))
        following = f.binary("add", image, 1)
        with f.when(f.less(following, last)):
            prefetch(f, scalar, f.element(scalar, source, arg["source_image"]),
                      arg["source_image"])
        f.emit(f"call void @{prefix}_prepare(ptr {scratch}, ptr {source}, ptr {records}, "
               f"i64 {table['records']}, i64 {table['channels']}, "
               f"i64 {table['scratch_channel']}, i64 {table['source_channel']})")
        zero_elements(f, scalar, scratch, table["slack_start"], table["slack_end"])
        with f.when(f.op(f"icmp ne i64 {table['zero_output']}, 0")):
            zero_elements(f, scalar, out, 0, arg["out_image"])
        with f.loop(0, table["jobs"], hint="job") as job:
            at = f.binary("add", table["jobs_at"], f.binary("mul", job, JOB_WORDS))
            words = load_words(f, f.op(f"getelementptr i64, ptr {arg['table']}, i64 {at}"), JOB)
            _job(f, names, words, packed, scratch, out, pairs_base, stage)
    f.emit("ret i32 0")
    return f.text()


def _rows(f: Function, rows: str, heights: tuple):
    """A loop over tiles of rows: yields (first row, height); the caller's body runs once per
    tile (_tile_rows' heights)."""
    slot = f.variable(0)
    head, body, done = f.label("rows_head"), f.label("rows_body"), f.label("rows_done")
    f.branch(head)
    f.block(head)
    row = f.op(f"load i64, ptr {slot}", "row")
    f.emit(f"br i1 {f.less(row, rows)}, label {body}, label {done}")
    f.block(body)
    height = _tile_rows(f, f.binary("sub", rows, row), heights)
    yield row, height
    f.emit(f"store i64 {f.binary('add', row, height)}, ptr {slot}")
    f.branch(head)
    f.block(done)


def _pack(f: Function, scalar: str, job: dict, weight: str, packed: str,
          pairs_base: str, heights: tuple) -> None:
    """The job's rows of the weight packed for the tiles: tile rows [row, row + height) at
    packed_at + row * depth, k-major: element (k, r) = weight[a_at + (row + r) * a_row +
    pairs[k].a]."""
    pairs = f.op(f"getelementptr i64, ptr {pairs_base}, i64 {f.binary('shl', job['pairs'], 1)}")
    source = f.element(scalar, weight, job["a_at"])
    target = f.element(scalar, packed, job["packed_at"])
    for row, height in _rows(f, job["rows"], heights):
        tile = f.element(scalar, target, f.binary("mul", row, job["depth"]))
        with f.loop(0, job["depth"], hint="pk") as k:
            at = f.word(pairs, f.binary("shl", k, 1), "a_at")
            with f.loop(0, height, hint="pr") as within:
                read = f.binary("add", at, f.binary("mul", f.binary("add", row, within),
                                                    job["a_row"]))
                value = f.op(f"load {scalar}, ptr {f.element(scalar, source, read)}")
                written = f.binary("add", f.binary("mul", k, height), within)
                f.emit(f"store {scalar} {value}, ptr {f.element(scalar, tile, written)}")


def _job(f: Function, names: dict, job: dict, packed: str, scratch: str, out: str,
         pairs_base: str, stage: str) -> None:
    """One job's panels: for each block of k's, every tile of rows adds its sums into the
    stage; then the stage is copied to the positions."""
    scalar, panel = names["scalar"], names["panel"]
    a = f.element(scalar, packed, job["packed_at"])
    b = f.element(scalar, scratch, job["b_at"])
    pairs = f.op(f"getelementptr i64, ptr {pairs_base}, i64 {f.binary('shl', job['pairs'], 1)}")
    target = f.element(scalar, out, job["out_at"])
    # At least one block, so that a job of no k's (a stride phase no tap reaches) stores 0.
    blocks = f.op(f"select i1 {f.less(job['depth'], 1)}, i64 1, i64 {job['depth']}")
    with f.loop(0, job["grid"], panel, hint="j") as start:
        end = f.minimum(f.binary("add", start, panel), job["grid"])
        narrow = f.op(f"icmp sle i64 {f.binary('sub', end, start)}, {names['lanes']}")
        b_panel = f.element(scalar, b, start)
        with f.loop(0, blocks, job["block"], hint="kb") as first:
            depth = f.minimum(job["block"], f.binary("sub", job["depth"], first))
            block_pairs = f.op(f"getelementptr i64, ptr {pairs}, "
                               f"i64 {f.binary('shl', first, 1)}")
            for row, height in _rows(f, job["rows"], names["tile_rows"]):
                a_rows = f.element(scalar, a, f.binary("add", f.binary("mul", row, job["depth"]),
                                                       f.binary("mul", first, height)))
                c = f.element(scalar, stage, f.binary("mul", row, panel))
                _call_tile(f, names, height, f"(ptr {a_rows}, ptr {b_panel}, i64 {depth}, "
                                             f"ptr {c}, i64 {panel}, i64 {first}, "
                                             f"ptr {block_pairs})", narrow)
        _copy_out(f, names, job, stage, target, start, end)


def _call_tile(f: Function, names: dict, height: str, arguments: str, narrow: str) -> None:
    """A call of the tile function of this height, of one vector where `narrow` holds."""
    prefix = names["prefix"]
    number = f.label("tiles")[1:]
    called = f"%tiles_done_{number}"
    heights = names["tile_rows"]
    f.emit(f"br i1 {narrow}, label %narrow_{number}, label %wide_{number}")
    for kind, suffix in (("wide", ""), ("narrow", "_narrow")):
        f.block(f"%{kind}_{number}")
        cases = " ".join(f"i64 {rows}, label %{kind}{rows}_{number}" for rows in heights[1:])
        f.emit(f"switch i64 {height}, label %{kind}{heights[0]}_{number} [{cases}]")
        for rows in heights:
            f.block(f"%{kind}{rows}_{number}")
            f.emit(f"call void @{prefix}_tile{rows}{suffix}{arguments}")
            f.branch(called)
    f.block(called)


def _copy_out(f: Function, names: dict, job: dict, stage: str, target: str, start: str,
              end: str) -> None:
    """The stage's rows for grid positions [start, end) stored at their output positions:
    grid position j is (plane, row, column) = (j / grid_plane, j % grid_plane / grid_row,
    j % grid_row), kept where row < valid_rows and column < valid_columns."""
    scalar, panel = names["scalar"], names["panel"]
    position_slot = f.variable(start)
    head, body, done = f.label("runs_head"), f.label("runs_body"), f.label("runs_done")
    f.branch(head)
    f.block(head)
    position = f.op(f"load i64, ptr {position_slot}", "position")
    f.emit(f"br i1 {f.less(position, end)}, label {body}, label {done}")
    f.block(body)
    plane = f.binary("sdiv", position, job["grid_plane"])
    within = f.binary("srem", position, job["grid_plane"])
    grid_row = f.binary("sdiv", within, job["grid_row"])
    column = f.binary("srem", within, job["grid_row"])
    run = f.minimum(f.binary("sub", job["grid_row"], column), f.binary("sub", end, position))
    inside = f.op(f"and i1 {f.less(grid_row, job['valid_rows'])}, "
                  f"{f.less(column, job['valid_columns'])}")
    with f.when(inside):
        count = f.minimum(run, f.binary("sub", job["valid_columns"], column))
        at = f.binary("add", f.binary("mul", plane, job["out_plane"]),
                      f.binary("add", f.binary("mul", grid_row, job["out_row"]),
                               f.binary("mul", column, job["out_step"])))
        offset = f.binary("sub", position, start)
        unit = f.op(f"icmp eq i64 {job['out_step']}, 1")
        unit_block, strided, rows_done = f.label("unit"), f.label("strided"), f.label("rows")
        f.emit(f"br i1 {unit}, label {unit_block}, label {strided}")
        f.block(unit_block)
        # A run lies inside the panel (2 vectors): each row is two masked copies.
        lanes, vector, short = names["lanes"], names["vector"], names["short"]
        masks = [_lane_mask(f, lanes, str(part * lanes), "0", count) for part in range(2)]
        with f.loop(0, job["rows"], hint="r") as row:
            staged = f.element(scalar, stage, f.binary("add", f.binary("mul", row, panel),
                                                        offset))
            channel = f.binary("mul", row, job["out_channel"])
            stored = f.element(scalar, target, f.binary("add", channel, at))
            for part, mask in enumerate(masks):
                read = f.element(scalar, staged, part * lanes)
                value = f.op(f"call {vector} @llvm.masked.load.v{lanes}{short}.p0(ptr {read}, "
                             f"i32 4, <{lanes} x i1> {mask}, {vector} poison)")
                written = f.element(scalar, stored, part * lanes)
                f.emit(f"call void @llvm.masked.store.v{lanes}{short}.p0({vector} {value}, "
                       f"ptr {written}, i32 4, <{lanes} x i1> {mask})")
        f.branch(rows_done)
        f.block(strided)
        with f.loop(0, job["rows"], hint="r") as row:
            staged = f.element(scalar, stage, f.binary("add", f.binary("mul", row, panel),
                                                        offset))
            channel = f.binary("mul", row, job["out_channel"])
            stored = f.element(scalar, target, f.binary("add", channel, at))
            with f.loop(0, count, hint="q") as index:
                value = f.op(f"load {scalar}, ptr {f.element(scalar, staged, index)}")
                step = f.binary("mul", index, job["out_step"])
                f.emit(f"store {scalar} {value}, ptr {f.element(scalar, stored, step)}")
        f.branch(rows_done)
        f.block(rows_done)
    f.emit(f"store i64 {f.binary('add', position, run)}, ptr {position_slot}")
    f.branch(head)
    f.block(done)


