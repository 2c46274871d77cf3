"""The LLVM IR of the convolution routines vectorized over channels, for images whose output
grid is small (docs/notes/convolution.md, "Small images"): one module per dtype, driven by the
tables channels.py builds.

ir.py's products put a vector of output positions in each lane set; a 4x4 image
padded by one is a grid of 19 positions, which fills 16 of a panel's 32 lanes. Here the lanes
are output channels instead (the weight's rows, packed k-major and padded to whole vectors),
and each tile row is one output position, read from the laid-out image by a broadcast at its
own address, so only the positions that exist are computed. The entry points, each
`i32 f(argument, part)` as the native workers call a part (workers.py):

- `products`: the forward product and the input gradient. The part's images are laid out a
  group at a time (convolution_ir's `prepare`); for each job, block of rows and tile of
  positions (the group's positions in turn, across its images), `ctile{R}x{V}` sums
  `a[k, row] * source[offset(position) + b(k)]` over the job's k's into R x V vector
  accumulators, which are then stored at the positions' output offsets, a channel apart.
- `weight`: a chunk of images' share of the weight gradient: each image laid out, and its
  gradient transposed to position-major rows of channels; `wctile{R}x{V}` sums
  `grad[o, position] * source[offset(column) + grid(position)]` over the chunk's images and
  positions for R columns and V vectors of channels, then adds them into the chunk's float64
  partial sums, which weight_ir.py's `weight_sum` adds in chunk order.
- `weight_stage` and `weight_gemm`: the weight gradient of few terms as one product (the
  comment at STAGE_ARGUMENT), `wgtile{R}x{V}` summing tiles of output channels x columns.
"""

from __future__ import annotations

import numpy as np

from ..llvm.ir_text import Function
from .ir import TYPES, _prepare, _rows, load_words, zero_elements
from .weight_ir import weight_sum

# The k's of the weight packed together, a row of the block at a time (_pack).
_PACK_DEPTH = 16
# Tile heights (positions, or weight-gradient columns) by the host's registers and the
# vectors of channels a tile holds. A tile keeps R x V accumulators, V vectors of the
# weight and R broadcasts in registers: with AVX-512's 32, 8 x 2 (12 x 2 spilled four
# accumulators and broadcasts on every k: 77 us against 61 for the 16 -> 32 forward product
# on 4x4 images) or 16 x 1; with AVX2's 16, 4 x 2 or 6 x 1.
HEIGHTS = {True: {2: (8, 4, 2, 1), 1: (16, 8, 4, 2, 1)},
           False: {2: (4, 2, 1), 1: (6, 4, 2, 1)}}
# by_rows: each part takes every image and its share of each job's blocks of rows (packing
# only those), rather than its share of the images with every row (channels.py says when).
PRODUCTS_ARGUMENT = ("source", "source_image", "weight", "out", "out_image", "scratch",
                     "scratch_part", "table", "images", "parts", "by_rows")
PRODUCTS_TABLE = ("channels", "source_channel", "scratch_channel", "records", "records_at",
                  "slack_start", "image_scratch", "group_images", "jobs", "jobs_at", "pairs_at",
                  "positions_at", "packed_at", "zero_output")
# A job: `rows` output channels (the weight's rows a_at + row * a_row), `depth` k's whose
# (a, b) offsets are pairs[pairs:], `count` positions per image at positions[positions:]
# (each a word pair: the laid-out grid offset, the output offset), the weight packed at
# packed_at in blocks of `block` rows (one or two vectors).
JOB = ("rows", "depth", "a_at", "a_row", "b_at", "pairs", "positions", "count", "out_at",
       "out_channel", "packed_at", "block")
WEIGHT_ARGUMENT = ("source", "source_image", "grad", "grad_image", "scratch", "scratch_part",
                   "table", "images", "chunk", "partials", "partials_part", "chunks", "parts")
# The weight gradient of few terms (images times positions), as one product: `weight_stage`
# (parts over images) writes each term's columns of the laid-out source (x: a row of
# `columns`, padded to x_stride) and its gradient's channels (g: a row of grad_stride);
# `weight_gemm` (parts over blocks of columns) sums g[t, o] * x[t, col] over the terms into
# the output directly.
STAGE_ARGUMENT = ("source", "source_image", "grad", "grad_image", "scratch", "scratch_part",
                  "table", "images", "parts", "x", "x_stride", "g")
GEMM_ARGUMENT = ("x", "x_stride", "g", "g_stride", "terms", "out", "rows", "columns", "parts")
# weight_gemm's blocks of columns per group (8: runs of 256 float32 columns, 1 KiB, per row).
GEMM_GROUP = 8
WEIGHT_TABLE = ("channels", "source_channel", "scratch_channel", "records", "records_at",
                "slack_start", "scratch_image", "rows", "count", "positions_at", "grad_plane",
                "columns", "offsets_at", "grad_stride")
# The entry points of each module: two, so that a first call compiles the one it needs while
# a compile thread makes the other (as convolution_ir.MODULES).
MODULES = {"products": ("products",),
           "weight": ("weight", "weight_sum", "weight_stage", "weight_gemm")}


def symbol(dtype, name: str) -> str:
    return f"autojit_convch_{TYPES[np.dtype(dtype)][2]}_{name}"


def render_module(dtype, wide: bool = True, module: str = "products") -> tuple:
    """(the IR text of `module`, the names of its entry points), with the tiles of a host
    with 32 vector registers of 512 bits (wide) or 16 of 256."""
    scalar, count, short = TYPES[np.dtype(dtype)]
    count //= 1 if wide else 2
    names = {"scalar": scalar, "lanes": count, "short": short, "vector": f"<{count} x {scalar}>",
             "prefix": f"autojit_convch_{short}", "heights": HEIGHTS[wide]}
    parts = [_DECLARATIONS.format(**names), _prepare(names)]
    tiles, entries = ([_tile], [_products]) if module == "products" else \
        ([_weight_tile, _gemm_tile], [_weight, weight_sum, _weight_stage, _weight_gemm])
    parts += [tile(rows, vectors, names) for tile in tiles
              for vectors, heights in names["heights"].items() for rows in heights]
    parts += [entry(names) for entry in entries]
    return "\n\n".join(parts), [symbol(dtype, name) for name in MODULES[module]]


_DECLARATIONS = """
declare {vector} @llvm.fma.v{lanes}{short}({vector}, {vector}, {vector})
declare {vector} @llvm.masked.load.v{lanes}{short}.p0(ptr, i32, <{lanes} x i1>, {vector})
declare void @llvm.masked.store.v{lanes}{short}.p0({vector}, ptr, i32, <{lanes} x i1>)
declare void @llvm.prefetch.p0(ptr, i32, i32, i32)
"""


def _accumulate(lines: list, names: dict, rows: int, vectors: int, loop: str, entry: str,
                body: list) -> None:
    """The phis of the R x V accumulators of a loop block `loop` entered from `entry`, then
    `body` (which defines %sum{r}_{v})."""
    vector = names["vector"]
    lines += [f"  %acc{r}_{v} = phi {vector} [zeroinitializer, %{entry}], [%sum{r}_{v}, %{loop}]"
              for r in range(rows) for v in range(vectors)]
    lines += body


def _multiply(names: dict, rows: int, vectors: int, weights: str, first: str, sources: str,
              shift: str) -> list:
    """One k of a tile: %sum{r}_{v} = {sources}{r}[shift] broadcast * %w{v} + %acc{r}_{v},
    where %w{v} is the vector at weights[first + v * lanes]."""
    scalar, vector, lanes = names["scalar"], names["vector"], names["lanes"]
    fma = f"@llvm.fma.v{lanes}{names['short']}"
    lines = []
    for v in range(vectors):
        lines += [f"  %w_index{v} = add i64 {first}, {v * lanes}",
                  f"  %w_address{v} = getelementptr {scalar}, ptr {weights}, i64 %w_index{v}",
                  f"  %w{v} = load {vector}, ptr %w_address{v}, align 4"]
    for r in range(rows):
        lines += [f"  %s_address{r} = getelementptr {scalar}, ptr {sources}{r}, i64 {shift}",
                  f"  %s{r} = load {scalar}, ptr %s_address{r}",
                  f"  %s_one{r} = insertelement {vector} poison, {scalar} %s{r}, i32 0",
                  f"  %s_all{r} = shufflevector {vector} %s_one{r}, {vector} poison, "
                  f"<{lanes} x i32> zeroinitializer"]
        lines += [f"  %sum{r}_{v} = call {vector} {fma}({vector} %s_all{r}, {vector} %w{v}, "
                  f"{vector} %acc{r}_{v})" for v in range(vectors)]
    return lines


def _spill(lines: list, names: dict, rows: int, vectors: int, phi_from: tuple) -> None:
    """The accumulators' final values (phis over `phi_from`: (zero's block, loop's block))
    stored to the stack buffer %buffer, row r's vector v at (r * V + v) * lanes."""
    scalar, vector, lanes = names["scalar"], names["vector"], names["lanes"]
    slots = [(r, v) for r in range(rows) for v in range(vectors)]
    lines += [f"  %final{r}_{v} = phi {vector} [zeroinitializer, %{phi_from[0]}], "
              f"[%sum{r}_{v}, %{phi_from[1]}]" for r, v in slots]
    for r, v in slots:
        lines += [f"  %spill{r}_{v} = getelementptr {scalar}, ptr %buffer, "
                  f"i64 {(r * vectors + v) * lanes}",
                  f"  store {vector} %final{r}_{v}, ptr %spill{r}_{v}, align 4"]


def _tile(rows: int, vectors: int, names: dict) -> str:
    """`ctile{R}x{V}(a, block, b, pairs, depth, offsets, out, out_channel, valid)`: for each
    of R positions r (offsets[2r]: where it lies in the laid-out image b; offsets[2r + 1]:
    its output offset) and channel c < valid, out[offsets[2r + 1] + c * out_channel] = the
    sum over k < depth of a[k * block + c] * b[offsets[2r] + pairs[2k + 1]]."""
    scalar, lanes = names["scalar"], names["lanes"]
    lines = [f"define internal void @{names['prefix']}_ctile{rows}x{vectors}(ptr noalias %a, "
             "i64 %block, ptr noalias %b, ptr noalias %pairs, i64 %depth, ptr noalias %offsets, "
             "ptr noalias %out, i64 %out_channel, i64 %valid) noinline {", "entry:",
             f"  %buffer = alloca [{rows * vectors * lanes} x {scalar}], align 64"]
    for r in range(rows):
        lines += [f"  %b_word{r} = getelementptr i64, ptr %offsets, i64 {2 * r}",
                  f"  %b_at{r} = load i64, ptr %b_word{r}",
                  f"  %b_row{r} = getelementptr {scalar}, ptr %b, i64 %b_at{r}"]
    lines += ["  %empty = icmp sle i64 %depth, 0", "  br i1 %empty, label %sums, label %loop",
              "loop:", "  %k = phi i64 [0, %entry], [%k_next, %loop]"]
    body = ["  %pair = shl i64 %k, 1", "  %pair_b = or i64 %pair, 1",
            "  %pair_word = getelementptr i64, ptr %pairs, i64 %pair_b",
            "  %shift = load i64, ptr %pair_word", "  %a_k = mul i64 %k, %block"]
    body += _multiply(names, rows, vectors, "%a", "%a_k", "%b_row", "%shift")
    body += ["  %k_next = add i64 %k, 1", "  %more = icmp slt i64 %k_next, %depth",
             "  br i1 %more, label %loop, label %sums"]
    _accumulate(lines, names, rows, vectors, "loop", "entry", body)
    lines.append("sums:")
    _spill(lines, names, rows, vectors, ("entry", "loop"))
    # Each position's channels are a channel apart in the output: stored a row at a time.
    lines += [f"  %o_word{r} = getelementptr i64, ptr %offsets, i64 {2 * r + 1}" for r in
              range(rows)]
    lines += [f"  %o_at{r} = load i64, ptr %o_word{r}" for r in range(rows)]
    lines += ["  %none = icmp sle i64 %valid, 0", "  br i1 %none, label %done, label %store",
              "store:", "  %c = phi i64 [0, %sums], [%c_next, %store]",
              "  %channel_at = mul i64 %c, %out_channel"]
    for r in range(rows):
        lane = f"{r * vectors * lanes}"
        lines += [f"  %in{r} = add i64 %c, {lane}",
                  f"  %in_address{r} = getelementptr {scalar}, ptr %buffer, i64 %in{r}",
                  f"  %value{r} = load {scalar}, ptr %in_address{r}",
                  f"  %to{r} = add i64 %o_at{r}, %channel_at",
                  f"  %to_address{r} = getelementptr {scalar}, ptr %out, i64 %to{r}",
                  f"  store {scalar} %value{r}, ptr %to_address{r}"]
    lines += ["  %c_next = add i64 %c, 1", "  %more_c = icmp slt i64 %c_next, %valid",
              "  br i1 %more_c, label %store, label %done", "done:", "  ret void", "}"]
    return "\n".join(lines)


def _call(f: Function, names: dict, function: str, height: str, vectors: int,
          arguments: str) -> None:
    """A call of `{function}{R}x{vectors}` for the tile height R."""
    prefix, heights = names["prefix"], names["heights"][vectors]
    number = f.label("call")[1:]
    done = f"%called_{number}"
    cases = " ".join(f"i64 {rows}, label %h{rows}_{number}" for rows in heights[1:])
    f.emit(f"switch i64 {height}, label %h{heights[0]}_{number} [{cases}]")
    for rows in heights:
        f.block(f"%h{rows}_{number}")
        f.emit(f"call void @{prefix}_{function}{rows}x{vectors}{arguments}")
        f.branch(done)
    f.block(done)


def _widths(f: Function, wide: str):
    """Yields 2 and then 1: the body written for each runs where `wide` holds, or not."""
    number = f.label("width")[1:]
    f.emit(f"br i1 {wide}, label %v2_{number}, label %v1_{number}")
    for vectors in (2, 1):
        f.block(f"%v{vectors}_{number}")
        yield vectors
        f.branch(f"%widths_{number}")
    f.block(f"%widths_{number}")


def _lay_out(f: Function, names: dict, arg: dict, table: dict, records: str, image: str,
             scratch: str, index: str, size: str) -> None:
    """Source image `image` laid out at scratch + index * table[size] (convolution_ir's
    `prepare`), the slack after its channels zeroed."""
    scalar = names["scalar"]
    source = f.element(scalar, arg["source"], f.binary("mul", image, arg["source_image"]))
    laid = f.element(scalar, scratch, f.binary("mul", index, table[size]))
    f.emit(f"call void @{names['prefix']}_prepare(ptr {laid}, ptr {source}, ptr {records}, "
           f"i64 {table['records']}, i64 {table['channels']}, "
           f"i64 {table['scratch_channel']}, i64 {table['source_channel']})")
    zero_elements(f, scalar, laid, table["slack_start"], table[size])


def _share(f: Function, count, parts, block=1) -> tuple:
    """(start, stop) of part %part's share of range(count) in whole blocks of `block` (the
    last block may be short): parts take equal numbers of blocks, give or take one."""
    blocks = f.binary("sdiv", f.binary("add", count, f.binary("sub", block, 1)), block)

    def edge(part):
        return f.binary("mul", f.binary("sdiv", f.binary("mul", part, blocks), parts), block)

    return edge("%part"), f.minimum(count, edge(f.binary("add", "%part", 1)))


def _row_range(f: Function, job: dict, arg: dict) -> tuple:
    """The rows of `job` the part takes: all of them, or by_rows its share of the job's
    blocks of rows."""
    start, stop = _share(f, job["rows"], arg["parts"], job["block"])
    by_rows = f.op(f"icmp ne i64 {arg['by_rows']}, 0")
    return (f.op(f"select i1 {by_rows}, i64 {start}, i64 0"),
            f.op(f"select i1 {by_rows}, i64 {stop}, i64 {job['rows']}"))


def _pack(f: Function, scalar: str, job: dict, weight: str, packed: str, pairs: str,
          rows: tuple) -> None:
    """The job's weight packed k-major in blocks of `block` rows, zeros past its rows:
    packed[packed_at + first * depth + k * block + r] = weight[a_at + (first + r) * a_row
    + pairs[k].a] for the block of rows from `first`, over the blocks in `rows` (start,
    stop)."""
    source = f.element(scalar, weight, job["a_at"])
    with f.loop(rows[0], rows[1], job["block"], hint="pb") as first:
        target = f.element(scalar, packed, f.binary("add", job["packed_at"],
                                                    f.binary("mul", first, job["depth"])))
        valid = f.minimum(job["block"], f.binary("sub", job["rows"], first))
        # 16 k's at a time, each row of the block read along them: read across the rows,
        # each k's rows lie a_row apart, and with a_row a multiple of 2 KiB (512 channels
        # times 9 taps) they share two of L1's sets, more rows than its ways.
        with f.loop(0, job["depth"], _PACK_DEPTH, hint="pk") as k_first:
            k_last = f.minimum(job["depth"], f.binary("add", k_first, _PACK_DEPTH))
            with f.loop(0, valid, hint="pr") as r:
                start = f.element(scalar, source, f.binary("mul", f.binary("add", first, r),
                                                           job["a_row"]))
                column = f.element(scalar, target, r)
                with f.loop(k_first, k_last, hint="pkk") as k:
                    at = f.word(pairs, f.binary("shl", k, 1), "a_at")
                    value = f.op(f"load {scalar}, ptr {f.element(scalar, start, at)}")
                    to = f.element(scalar, column, f.binary("mul", k, job["block"]))
                    f.emit(f"store {scalar} {value}, ptr {to}")
        with f.loop(0, job["depth"], hint="pz") as k:
            row = f.element(scalar, target, f.binary("mul", k, job["block"]))
            zero_elements(f, scalar, row, valid, job["block"])


def _strided_row(f: Function, scalar: str, target: str, source: str, step: str, count: str,
                 total: str) -> None:
    """target[i] = source[i * step] for i < count, 0 for count <= i < total: two plain loops,
    no branch or stack slot in them (the channel modules are compiled without the pass
    pipeline, which would have made those registers)."""
    with f.loop(0, count, hint="sr") as index:
        read = f.element(scalar, source, f.binary("mul", index, step))
        value = f.op(f"load {scalar}, ptr {read}")
        f.emit(f"store {scalar} {value}, ptr {f.element(scalar, target, index)}")
    with f.loop(count, total, hint="sz") as index:
        f.emit(f"store {scalar} 0.0, ptr {f.element(scalar, target, index)}")


def _products(names: dict) -> str:
    scalar, prefix, heights = names["scalar"], names["prefix"], names["heights"]
    f = Function(f"define i32 @{prefix}_products(ptr %argument, i64 %part) {{")
    arg = load_words(f, "%argument", PRODUCTS_ARGUMENT,
                      ("source", "weight", "out", "scratch", "table"))
    table = load_words(f, arg["table"], PRODUCTS_TABLE)
    by_rows = f.op(f"icmp ne i64 {arg['by_rows']}, 0")
    share = _share(f, arg["images"], arg["parts"])
    first = f.op(f"select i1 {by_rows}, i64 0, i64 {share[0]}")
    last = f.op(f"select i1 {by_rows}, i64 {arg['images']}, i64 {share[1]}")
    scratch = f.element(scalar, arg["scratch"], f.binary("mul", "%part", arg["scratch_part"]))
    records = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['records_at']}")
    pairs_base = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['pairs_at']}")
    positions = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['positions_at']}")
    packed = f.element(scalar, scratch, table["packed_at"])
    offsets = f.stack(f"[{2 * max(h[0] for h in heights.values())} x i64]")

    def job_words(job: str) -> dict:
        at = f.binary("add", table["jobs_at"], f.binary("mul", job, len(JOB)))
        return load_words(f, f.op(f"getelementptr i64, ptr {arg['table']}, i64 {at}"), JOB)

    def job_pairs(words: dict) -> str:
        return f.op(f"getelementptr i64, ptr {pairs_base}, "
                    f"i64 {f.binary('shl', words['pairs'], 1)}")

    with f.loop(0, table["jobs"], hint="pack") as job:
        words = job_words(job)
        _pack(f, scalar, words, arg["weight"], packed, job_pairs(words),
              _row_range(f, words, arg))
    with f.loop(first, last, table["group_images"], hint="g") as group:
        count = f.minimum(table["group_images"], f.binary("sub", last, group))
        with f.loop(0, count, hint="n") as index:
            image = f.binary("add", group, index)
            _lay_out(f, names, arg, table, records, image, scratch, index, "image_scratch")
            with f.when(f.op(f"icmp ne i64 {table['zero_output']}, 0")):
                out_image = f.element(scalar, arg["out"], f.binary("mul", image,
                                                                   arg["out_image"]))
                zero_elements(f, scalar, out_image, 0, arg["out_image"])
        out = f.element(scalar, arg["out"], f.binary("mul", group, arg["out_image"]))
        with f.loop(0, table["jobs"], hint="job") as job:
            words = job_words(job)
            sizes = {"image_scratch": table["image_scratch"], "out_image": arg["out_image"],
                     "total": f.binary("mul", count, words["count"])}
            _job(f, names, words, sizes, job_pairs(words), packed, scratch, positions,
                 offsets, out, _row_range(f, words, arg))
    f.emit("ret i32 0")
    return f.text()


def _job(f: Function, names: dict, job: dict, sizes: dict, pairs: str, packed: str,
         scratch: str, positions: str, offsets: str, out: str, rows: tuple) -> None:
    """One job over a group's images: for each block of rows (channels) in `rows` (start,
    stop) and each tile of positions (the group's, image after image), the tile's offsets
    written to `offsets`, then the tile called."""
    scalar = names["scalar"]
    laid = f.element(scalar, scratch, job["b_at"])
    kept = f.op(f"getelementptr i64, ptr {positions}, i64 {f.binary('shl', job['positions'], 1)}")
    with f.loop(rows[0], rows[1], job["block"], hint="rb") as row:
        a = f.element(scalar, packed, f.binary("add", job["packed_at"],
                                               f.binary("mul", row, job["depth"])))
        valid = f.minimum(job["block"], f.binary("sub", job["rows"], row))
        wide = f.op(f"icmp sgt i64 {valid}, {names['lanes']}")
        out_row = f.binary("add", job["out_at"], f.binary("mul", row, job["out_channel"]))
        # Position `within` of image `image` of the group, counted on, not divided out.
        image_slot, within_slot = f.variable(0), f.variable(0)
        for vectors in _widths(f, wide):
            for _, height in _rows(f, sizes["total"], names["heights"][vectors]):
                with f.loop(0, height, hint="r") as r:
                    image = f.op(f"load i64, ptr {image_slot}", "image")
                    within = f.op(f"load i64, ptr {within_slot}", "within")
                    following = f.binary("add", within, 1)
                    wrapped = f.op(f"icmp sge i64 {following}, {job['count']}")
                    restarted = f.op(f"select i1 {wrapped}, i64 0, i64 {following}")
                    f.emit(f"store i64 {restarted}, ptr {within_slot}")
                    next_image = f.binary("add", image, f.op(f"zext i1 {wrapped} to i64"))
                    f.emit(f"store i64 {next_image}, ptr {image_slot}")
                    grid = f.word(kept, f.binary("shl", within, 1))
                    at = f.word(kept, f.binary("add", f.binary("shl", within, 1), 1))
                    b_at = f.binary("add", f.binary("mul", image, sizes["image_scratch"]), grid)
                    out_at = f.binary("add", f.binary("mul", image, sizes["out_image"]),
                                      f.binary("add", out_row, at))
                    slot = f.binary("shl", r, 1)
                    for word, value in ((slot, b_at), (f.binary("add", slot, 1), out_at)):
                        address = f.op(f"getelementptr i64, ptr {offsets}, i64 {word}")
                        f.emit(f"store i64 {value}, ptr {address}")
                _call(f, names, "ctile", height, vectors,
                      f"(ptr {a}, i64 {job['block']}, ptr {laid}, ptr {pairs}, "
                      f"i64 {job['depth']}, ptr {offsets}, ptr {out}, "
                      f"i64 {job['out_channel']}, i64 {valid})")


def _weight_tile(rows: int, vectors: int, names: dict) -> str:
    """`wctile{R}x{V}(g, g_stride, s, s_image, offsets, positions, count, images, out,
    out_row, valid)`: out[c * out_row + r] += the sum over images i and positions p < count
    of g[(i * count + p) * g_stride + c] * s[i * s_image + offsets[r] + positions[2p]], in
    float64, for the R columns r and channels c < valid."""
    scalar, vector, lanes = names["scalar"], names["vector"], names["lanes"]
    lines = [f"define internal void @{names['prefix']}_wctile{rows}x{vectors}(ptr noalias %g, "
             "i64 %g_stride, ptr noalias %s, i64 %s_image, ptr noalias %offsets, "
             "ptr noalias %positions, i64 %count, i64 %images, ptr noalias %out, i64 %out_row, "
             "i64 %valid) noinline {", "entry:",
             f"  %buffer = alloca [{rows * vectors * lanes} x {scalar}], align 64"]
    for r in range(rows):
        lines += [f"  %offset_word{r} = getelementptr i64, ptr %offsets, i64 {r}",
                  f"  %offset{r} = load i64, ptr %offset_word{r}"]
    lines += ["  %terms = mul i64 %images, %count", "  %empty = icmp sle i64 %terms, 0",
              "  br i1 %empty, label %sums, label %image", "image:",
              "  %i = phi i64 [0, %entry], [%i_next, %image_done]"]
    lines += [f"  %outer{r}_{v} = phi {vector} [zeroinitializer, %entry], "
              f"[%sum{r}_{v}, %image_done]" for r in range(rows) for v in range(vectors)]
    lines += ["  %s_at = mul i64 %i, %s_image",
              f"  %s_image_base = getelementptr {scalar}, ptr %s, i64 %s_at"]
    lines += [f"  %s_base{r} = getelementptr {scalar}, ptr %s_image_base, i64 %offset{r}"
              for r in range(rows)]
    lines += ["  %g_first = mul i64 %i, %count", "  br label %step", "step:",
              "  %p = phi i64 [0, %image], [%p_next, %step]"]
    lines += [f"  %acc{r}_{v} = phi {vector} [%outer{r}_{v}, %image], [%sum{r}_{v}, %step]"
              for r in range(rows) for v in range(vectors)]
    lines += ["  %grid_index = shl i64 %p, 1",
              "  %grid_word = getelementptr i64, ptr %positions, i64 %grid_index",
              "  %grid = load i64, ptr %grid_word", "  %g_term = add i64 %g_first, %p",
              "  %g_at = mul i64 %g_term, %g_stride"]
    lines += _multiply(names, rows, vectors, "%g", "%g_at", "%s_base", "%grid")
    lines += ["  %p_next = add i64 %p, 1", "  %more = icmp slt i64 %p_next, %count",
              "  br i1 %more, label %step, label %image_done", "image_done:",
              "  %i_next = add i64 %i, 1", "  %more_images = icmp slt i64 %i_next, %images",
              "  br i1 %more_images, label %image, label %sums", "sums:"]
    _spill(lines, names, rows, vectors, ("entry", "image_done"))
    lines += ["  %none = icmp sle i64 %valid, 0", "  br i1 %none, label %done, label %add",
              "add:", "  %c = phi i64 [0, %sums], [%c_next, %add]",
              "  %out_at = mul i64 %c, %out_row",
              "  %out_c = getelementptr double, ptr %out, i64 %out_at"]
    for r in range(rows):
        lines += [f"  %in{r} = add i64 %c, {r * vectors * lanes}",
                  f"  %in_address{r} = getelementptr {scalar}, ptr %buffer, i64 %in{r}",
                  f"  %value{r} = load {scalar}, ptr %in_address{r}"]
        value = f"%value{r}"
        if scalar != "double":
            lines.append(f"  %wide{r} = fpext {scalar} %value{r} to double")
            value = f"%wide{r}"
        lines += [f"  %to_address{r} = getelementptr double, ptr %out_c, i64 {r}",
                  f"  %old{r} = load double, ptr %to_address{r}",
                  f"  %new{r} = fadd double %old{r}, {value}",
                  f"  store double %new{r}, ptr %to_address{r}"]
    lines += ["  %c_next = add i64 %c, 1", "  %more_c = icmp slt i64 %c_next, %valid",
              "  br i1 %more_c, label %add, label %done", "done:", "  ret void", "}"]
    return "\n".join(lines)


def _weight(names: dict) -> str:
    """`weight(argument, part)`: the chunks part, part + parts, ... of the images, each laid
    out in the part's scratch with its gradient transposed, and summed into the chunk's own
    float64 partials (rows of `columns`, one per output channel)."""
    scalar, prefix, heights = names["scalar"], names["prefix"], names["heights"]
    lanes = names["lanes"]
    f = Function(f"define i32 @{prefix}_weight(ptr %argument, i64 %part) {{")
    arg = load_words(f, "%argument", WEIGHT_ARGUMENT,
                      ("source", "grad", "scratch", "table", "partials"))
    table = load_words(f, arg["table"], WEIGHT_TABLE)
    scratch = f.element(scalar, arg["scratch"], f.binary("mul", "%part", arg["scratch_part"]))
    records = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['records_at']}")
    positions = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['positions_at']}")
    offsets = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['offsets_at']}")
    image_terms = f.binary("mul", table["count"], table["grad_stride"])
    grads = f.element(scalar, scratch, f.binary("mul", arg["chunk"], table["scratch_image"]))
    block = 2 * lanes
    with f.loop("%part", arg["chunks"], arg["parts"], hint="chunk") as chunk:
        first = f.binary("mul", chunk, arg["chunk"])
        count = f.binary("sub", f.minimum(f.binary("add", first, arg["chunk"]), arg["images"]),
                         first)
        with f.loop(0, count, hint="n") as index:
            image = f.binary("add", first, index)
            _lay_out(f, names, arg, table, records, image, scratch, index, "scratch_image")
            grad = f.element(scalar, arg["grad"], f.binary("mul", image, arg["grad_image"]))
            rows = f.element(scalar, grads, f.binary("mul", index, image_terms))
            with f.loop(0, table["count"], hint="p") as position:
                at = f.word(positions, f.binary("add", f.binary("shl", position, 1), 1))
                row = f.element(scalar, rows, f.binary("mul", position, table["grad_stride"]))
                _strided_row(f, scalar, row, f.element(scalar, grad, at), table["grad_plane"],
                             table["rows"], table["grad_stride"])
        partials = f.op(f"getelementptr double, ptr {arg['partials']}, "
                        f"i64 {f.binary('mul', chunk, arg['partials_part'])}")
        with f.loop(0, f.binary("mul", table["rows"], table["columns"]), hint="z") as index:
            f.emit(f"store double 0.0, ptr {f.element('double', partials, index)}")
        with f.loop(0, table["rows"], block, hint="ob") as row:
            valid = f.minimum(block, f.binary("sub", table["rows"], row))
            wide = f.op(f"icmp sgt i64 {valid}, {lanes}")
            g = f.element(scalar, grads, row)
            out_rows = f.element("double", partials, f.binary("mul", row, table["columns"]))
            for vectors in _widths(f, wide):
                for column, height in _rows(f, table["columns"], heights[vectors]):
                    column_offsets = f.op(f"getelementptr i64, ptr {offsets}, i64 {column}")
                    out = f.element("double", out_rows, column)
                    _call(f, names, "wctile", height, vectors,
                          f"(ptr {g}, i64 {table['grad_stride']}, ptr {scratch}, "
                          f"i64 {table['scratch_image']}, ptr {column_offsets}, "
                          f"ptr {positions}, i64 {table['count']}, i64 {count}, ptr {out}, "
                          f"i64 {table['columns']}, i64 {valid})")
    f.emit("ret i32 0")
    return f.text()


def _gemm_tile(rows: int, vectors: int, names: dict) -> str:
    """`wgtile{R}x{V}(x, x_stride, g, g_stride, terms, out, out_row, valid)`: out[r * out_row
    + c] = the sum over terms t of g[t * g_stride + r] * x[t * x_stride + c], for the R rows
    (output channels) r and the columns c < valid of V vectors, stored in the dtype (the sums
    of one chunk: nothing to add them to)."""
    scalar, vector, lanes = names["scalar"], names["vector"], names["lanes"]
    lines = [f"define internal void @{names['prefix']}_wgtile{rows}x{vectors}(ptr noalias %x, "
             "i64 %x_stride, ptr noalias %g, i64 %g_stride, i64 %terms, ptr noalias %out, "
             "i64 %out_row, i64 %valid) noinline {", "entry:"]
    lines += [f"  %g_base{r} = getelementptr {scalar}, ptr %g, i64 {r}" for r in range(rows)]
    lines += ["  %empty = icmp sle i64 %terms, 0", "  br i1 %empty, label %sums, label %step",
              "step:", "  %t = phi i64 [0, %entry], [%t_next, %step]"]
    lines += [f"  %acc{r}_{v} = phi {vector} [zeroinitializer, %entry], [%sum{r}_{v}, %step]"
              for r in range(rows) for v in range(vectors)]
    lines += ["  %x_at = mul i64 %t, %x_stride", "  %g_at = mul i64 %t, %g_stride"]
    lines += _multiply(names, rows, vectors, "%x", "%x_at", "%g_base", "%g_at")
    lines += ["  %t_next = add i64 %t, 1", "  %more = icmp slt i64 %t_next, %terms",
              "  br i1 %more, label %step, label %sums", "sums:"]
    lines += [f"  %final{r}_{v} = phi {vector} [zeroinitializer, %entry], [%sum{r}_{v}, %step]"
              for r in range(rows) for v in range(vectors)]
    lines += ["  %limit = trunc i64 %valid to i32",
              f"  %limit_one = insertelement <{lanes} x i32> poison, i32 %limit, i32 0",
              f"  %limits = shufflevector <{lanes} x i32> %limit_one, <{lanes} x i32> poison, "
              f"<{lanes} x i32> zeroinitializer"]
    store = f"@llvm.masked.store.v{lanes}{names['short']}.p0"
    for v in range(vectors):
        indices = ", ".join(f"i32 {v * lanes + lane}" for lane in range(lanes))
        lines.append(f"  %mask{v} = icmp slt <{lanes} x i32> <{indices}>, %limits")
    for r in range(rows):
        lines += [f"  %row_at{r} = mul i64 %out_row, {r}"]
        for v in range(vectors):
            lines += [f"  %out_at{r}_{v} = add i64 %row_at{r}, {v * lanes}",
                      f"  %to{r}_{v} = getelementptr {scalar}, ptr %out, i64 %out_at{r}_{v}",
                      f"  call void {store}({vector} %final{r}_{v}, ptr %to{r}_{v}, i32 4, "
                      f"<{lanes} x i1> %mask{v})"]
    lines += ["  ret void", "}"]
    return "\n".join(lines)


def _weight_stage(names: dict) -> str:
    """`weight_stage(argument, part)`: for the part's share of the images, each laid out in
    the part's scratch, and for each of its positions (a term t), the row x[t] of its columns'
    source values (zeros up to x_stride) and the row g[t] of its gradient's channels."""
    scalar, prefix = names["scalar"], names["prefix"]
    f = Function(f"define i32 @{prefix}_weight_stage(ptr %argument, i64 %part) {{")
    arg = load_words(f, "%argument", STAGE_ARGUMENT,
                      ("source", "grad", "scratch", "table", "x", "g"))
    table = load_words(f, arg["table"], WEIGHT_TABLE)
    scratch = f.element(scalar, arg["scratch"], f.binary("mul", "%part", arg["scratch_part"]))
    records = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['records_at']}")
    positions = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['positions_at']}")
    offsets = f.op(f"getelementptr i64, ptr {arg['table']}, i64 {table['offsets_at']}")
    first, last = _share(f, arg["images"], arg["parts"])
    with f.loop(first, last, hint="n") as image:
        _lay_out(f, names, arg, table, records, image, scratch, "0", "scratch_image")
        grad = f.element(scalar, arg["grad"], f.binary("mul", image, arg["grad_image"]))
        with f.loop(0, table["count"], hint="p") as position:
            grid = f.word(positions, f.binary("shl", position, 1))
            at = f.word(positions, f.binary("add", f.binary("shl", position, 1), 1))
            term = f.binary("add", f.binary("mul", image, table["count"]), position)
            row = f.element(scalar, arg["x"], f.binary("mul", term, arg["x_stride"]))
            source = f.element(scalar, scratch, grid)
            with f.loop(0, table["columns"], hint="col") as column:
                read = f.element(scalar, source, f.word(offsets, column))
                value = f.op(f"load {scalar}, ptr {read}")
                f.emit(f"store {scalar} {value}, ptr {f.element(scalar, row, column)}")
            zero_elements(f, scalar, row, table["columns"], arg["x_stride"])
            grad_row = f.element(scalar, arg["g"], f.binary("mul", term, table["grad_stride"]))
            _strided_row(f, scalar, grad_row, f.element(scalar, grad, at), table["grad_plane"],
                         table["rows"], table["grad_stride"])
    f.emit("ret i32 0")
    return f.text()


def _weight_gemm(names: dict) -> str:
    """`weight_gemm(argument, part)`: the part's share of the blocks of two vectors of
    columns, GEMM_GROUP blocks at a time: for each tile of rows (wgtile), the group's blocks
    in turn, over all terms. Each tile row's stores then run along its row: a block at a time
    down all rows, the stores of a 512 x 4608 gradient left the caches 18 KiB apart, one
    stream per row, and took 3.6 ms where the sums took 1.5."""
    prefix, heights, lanes = names["prefix"], names["heights"], names["lanes"]
    scalar = names["scalar"]
    f = Function(f"define i32 @{prefix}_weight_gemm(ptr %argument, i64 %part) {{")
    arg = load_words(f, "%argument", GEMM_ARGUMENT, ("x", "g", "out"))
    block = 2 * lanes
    first, last = _share(f, arg["columns"], arg["parts"], block)
    with f.loop(first, last, GEMM_GROUP * block, hint="cg") as group:
        stop = f.minimum(last, f.binary("add", group, GEMM_GROUP * block))
        for row, height in _rows(f, arg["rows"], heights[2]):
            g = f.element(scalar, arg["g"], row)
            out_row = f.element(scalar, arg["out"], f.binary("mul", row, arg["columns"]))
            with f.loop(group, stop, block, hint="cb") as column:
                valid = f.minimum(block, f.binary("sub", last, column))
                wide = f.op(f"icmp sgt i64 {valid}, {lanes}")
                x = f.element(scalar, arg["x"], column)
                out = f.element(scalar, out_row, column)
                for vectors in _widths(f, wide):
                    _call(f, names, "wgtile", height, vectors,
                          f"(ptr {x}, i64 {arg['x_stride']}, ptr {g}, i64 {arg['g_stride']}, "
                          f"i64 {arg['terms']}, ptr {out}, i64 {arg['columns']}, "
                          f"i64 {valid})")
    f.emit("ret i32 0")
    return f.text()
