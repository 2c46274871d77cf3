"""Matrix products in native code generated through LLVM, with CBLAS's ?gemm signature.

blas.py hands compiled plans' products to CBLAS ?gemm, one call per core (gemm_records). On
the AVX-512 machine measured, OpenBLAS's single-threaded sgemm reached 101-149 GF/s on the
training benchmarks' product shapes where the core's fused multiply-adds peak at about
214 GF/s. The product here reached 127-165 GF/s on the same shapes (measured in
docs/notes/cpu-codegen.md; `bench/gemm_products.py` compares the two), so gemm_records calls
it in place of the library's wherever `address` has one.

One module per dtype holds the four functions (transpose a, transpose b), which share their tiles
and packing routines (packing.py renders the latter); it is compiled once per process (or loaded
from the kernel disk cache) for the host CPU, as written (the IR is vectorized by hand: no pass
pipeline), on a compile thread that the schedule starts when it meets a product (`prepare`,
codegen/cpu/compile_threads.py). Each function takes the row-major CBLAS arguments
`(order, transpose_a, transpose_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)` with 64-bit
integers, so the workers' gemm_part calls it exactly as it calls the library. As in GotoBLAS,
both operands are copied into packed blocks that the register tiles read contiguously:

- for each block of KC k's, and in it each block of MC rows, the rows' tiles of a are packed
  (a tile's rows side by side for each k: a plain copy where a is transposed, squares
  transposed in registers where it is not), so a tile reads one stream of a at fixed offsets
  whatever lda is;
- then for each panel of 2 vectors of columns (NR: 32 float32 or 16 float64) the KC x NR
  block of b is packed (zero-padded past N): two masked vector loads per row where b's
  columns are contiguous, squares transposed in registers where b is transposed;
- tiles of 12 rows (then 8, 4, 2, 1 for the last rows) hold their 24 accumulators in
  registers while k runs, each step loading two vectors of the packed b and broadcasting one
  element of the packed a per row;
- a tile first prefetches its block of C for writing, so that the stores at its end (and
  the loads of C where beta is not 0) find C's lines in L2;
- each k block adds `alpha * sum` into C: the first with `beta * C` (C is not read when beta
  is 0, as BLAS), the later ones with C itself. Sums run over k in order, one fused
  multiply-add per step.

Both packed blocks live on the calling thread's stack (432 KiB in all). The rows are split
into equal blocks of at most MC rows, since each block packs all of b again. The module also
holds, for a program's products that share their b, a function packing all of b at once and
the ?gemm variants reading it packed (prepacked.py).
"""

from __future__ import annotations

import os
from concurrent.futures import Future

import numpy as np

from .... import config
from .. import compile_threads
from . import prepacked as prepacked_gemm
from .packing import (
    TILE_ROWS,
    VECTORS,
    masked_load,
    pack_a,
    pack_b,
    width_masks,
)

_TYPES = {np.dtype(np.float32): ("float", 16, "f32"), np.dtype(np.float64): ("double", 8, "f64")}
# KC: b's packed block is 256 x 32 x 4 = 32 KiB of float32 (256 x 16 x 8 of float64), in the
# 48 KiB L1 with the tile's stream of a. A block of a's rows packed for the tiles (MC x KC),
# at most 400 rows of float32 or 200 of float64, takes at most 400 KiB of the 2 MiB L2; both
# blocks are on the stack. Measured float32 against KC 128 and a 96 KiB block of a: 3-10%
# faster on the training benchmarks' shapes; against a 96 KiB block with KC 256, 3-10% (b
# packed half as often). Against 192 KiB blocks (392 rows in three blocks, b packed three
# times), the MLP step's two weight updates took 10-49 us less each inside the step, in three
# runs (docs/notes/cpu-codegen.md).
_BLOCK_DEPTH = 256
_PACKED_A_BYTES = 400 * 1024
# Products with fewer rows, or fewer columns than one and a half vectors, stay with the
# library: measured float32, 2x256x256 took 9.9 us here and 6.1 with OpenBLAS, 128x256x16
# 14.8 and 11.1, 128x256x1 14.6 and 3.1; 128x256x24 took 15.1 against 17.3.
_MIN_ROWS = 16
_state: dict = {}  # dtype -> {(transpose a, transpose b): address}, or its Future


def enabled() -> bool:
    """Whether compiled plans' products use this module (AUTOJIT_GEMM=blas turns it off)."""
    return os.environ.get("AUTOJIT_GEMM", "native").strip().lower() != "blas"


def address(dtype, transpose_a: bool, transpose_b: bool, rows: int = _MIN_ROWS,
            columns: int = 0) -> int | None:
    """The native ?gemm for a rows x columns product of this dtype with these transpositions,
    or None where the library's does better or there is none (not float32 or float64, not a
    CPU with AVX-512, turned off, or a product narrower than a vector and a half or shorter
    than _MIN_ROWS: each call packs b, and half-empty panels waste the tiles' lanes). Waits
    for the compile `prepare` started, if it is still under way."""
    dtype = np.dtype(dtype)
    if dtype not in _TYPES or not enabled() or rows < _MIN_ROWS or \
            (columns and columns * 2 < _TYPES[dtype][1] * 3):
        return None
    found = _state.get(dtype)
    if found is None:
        found = _state[dtype] = _build(dtype)
    elif isinstance(found, Future):
        found = _state[dtype] = found.result()
    return found.get((bool(transpose_a), bool(transpose_b)))


def prepacked_functions(dtype, transpose_a: bool, transpose_b: bool, function: int):
    """(pack address, address of the ?gemm reading b packed, lanes, panel width) for b of
    this transposition, where `function` is this module's ?gemm of `dtype` with these
    transpositions (compiled already), else None (prepacked.py)."""
    dtype = np.dtype(dtype)
    found = _state.get(dtype)
    if not isinstance(found, dict) or found.get((transpose_a, transpose_b)) != function:
        return None
    pack, packed = found.get(("pack", transpose_b)), found.get((transpose_a, "packed"))
    if pack is None or packed is None:
        return None
    _, lanes, _ = _TYPES[dtype]
    return pack, packed, lanes, VECTORS * lanes


def prepare(dtype, rows: int = _MIN_ROWS, columns: int = 0) -> None:
    """Start compiling the ?gemm functions of `dtype` on a compile thread (compile_threads.py)
    where `address` would make them for a rows x columns product: the schedule calls this for
    the products it meets, so that they compile while it builds the rest of the plan, which
    waits for them before its first run (jit.wait_at_block_end; docs/notes/compile-latency.md).
    """
    from .. import jit

    dtype = np.dtype(dtype)
    if dtype not in _TYPES or not enabled() or rows < _MIN_ROWS or \
            (columns and columns * 2 < _TYPES[dtype][1] * 3):
        return
    found = _state.get(dtype)
    if found is not None:
        # Started already (by backend.prepare, before the passes ran): this block waits too.
        if isinstance(found, Future):
            jit.wait_at_block_end(found)
        return
    future = compile_threads.submit(_build, dtype)
    if future is not None:
        _state.setdefault(dtype, future)
        jit.wait_at_block_end(future)


def _build(dtype: np.dtype) -> dict:
    """{(transpose a, transpose b): address} of the four ?gemm functions of `dtype`, with
    (transpose a, "packed") for the two reading b packed and ("pack", transpose b) for the two
    packing it (prepacked.py), or {}."""
    from .. import jit as cpu
    from ..helper_modules import compile_module

    if not cpu.has_avx512():
        return {}
    text, symbols = render_module(dtype)
    # Written vectorized: the O3 pipeline made the code no faster (a 256x784x512 float32
    # product took 1.90 ms as written, 1.91-1.92 ms after it) and doubled the module's compile
    # time (0.095 s of CPU as written, 0.194 s with O3; the three modules of one function each
    # that this replaces took 0.42 s).
    addresses = compile_module(text, list(symbols.values()), ("gemm", text), optimize=False)
    config.log("kernels", f"native gemm {', '.join(symbols.values())} ready")
    return dict(zip(symbols, addresses))


def symbol(dtype, transpose_a: bool, transpose_b: bool | None) -> str:
    """The name of the ?gemm function of `dtype` with these transpositions (transpose_b None:
    the variant reading b packed beforehand)."""
    short = _TYPES[np.dtype(dtype)][2]
    side_b = "p" if transpose_b is None else "t" if transpose_b else "n"
    return f"autojit_gemm_{short}_{'t' if transpose_a else 'n'}{side_b}"


def render_module(dtype) -> tuple:
    """(the LLVM IR of one module holding the ?gemm functions of `dtype`, which share their
    tiles, {key: function name} with _build's keys)."""
    names = _names(dtype, symbol(dtype, False, False))
    prefix = f"autojit_gemm_{names['short']}"
    parts = [_DECLARATIONS.format(**names)]
    parts.extend(_tile(rows, {**names, "symbol": prefix}) for rows in TILE_ROWS)
    for transposed in (False, True):
        side = "t" if transposed else "n"
        parts.append(pack_a(transposed, {**names, "symbol": f"{prefix}_a{side}"}))
        parts.append(pack_b(transposed, {**names, "symbol": f"{prefix}_b{side}"}))
    symbols = {}
    for transpose_a in (False, True):
        for transpose_b in (False, True, None):  # None: b packed beforehand (prepacked_gemm)
            name = symbol(dtype, transpose_a, transpose_b)
            symbols[(transpose_a, "packed" if transpose_b is None else transpose_b)] = name
            parts.append(_main(transpose_a, bool(transpose_b), {
                **names, "symbol": name, "tiles": prefix,
                "pack_a": f"{prefix}_a{'t' if transpose_a else 'n'}_pack_a",
                "pack_b": f"{prefix}_b{'t' if transpose_b else 'n'}_pack"},
                prepacked=transpose_b is None))
    for transpose_b in (False, True):
        parts.append(prepacked_gemm.pack_all_text(transpose_b, names, prefix))
        symbols[("pack", transpose_b)] = f"{prefix}_pack_b{'t' if transpose_b else 'n'}"
    return "\n".join(parts), symbols


def _names(dtype, symbol: str) -> dict:
    scalar, lanes, short = _TYPES[np.dtype(dtype)]
    size = np.dtype(dtype).itemsize
    return {"scalar": scalar, "lanes": lanes, "vector": f"<{lanes} x {scalar}>",
            "short": short, "panel": VECTORS * lanes, "depth": _BLOCK_DEPTH, "size": size,
            "block_rows": _PACKED_A_BYTES // (_BLOCK_DEPTH * size), "symbol": symbol,
            "align": 64}


_DECLARATIONS = """
declare void @llvm.prefetch.p0(ptr, i32, i32, i32)
declare {vector} @llvm.fma.v{lanes}{short}({vector}, {vector}, {vector})
declare {vector} @llvm.masked.load.v{lanes}{short}.p0(ptr, i32, <{lanes} x i1>, {vector})
declare void @llvm.masked.store.v{lanes}{short}.p0({vector}, ptr, i32, <{lanes} x i1>)
"""


def _tile(rows: int, names: dict) -> str:
    """`tile{rows}(a, block, depth, c, ldc, alpha, beta, width)`: C's rows x width block
    (width <= NR) = alpha * a @ block + beta * C (C unread when beta is 0), where a is the
    tile's rows packed by pack_a (a(row, k) at k * rows + row) and block is b's
    packed block."""
    scalar, vector, lanes = names["scalar"], names["vector"], names["lanes"]
    fma = f"@llvm.fma.v{lanes}{names['short']}"
    accumulators = [(row, part) for row in range(rows) for part in range(VECTORS)]
    lines = [f"define internal void @{names['symbol']}_tile{rows}(ptr noalias %a, "
             f"ptr noalias %b, i64 %depth, ptr noalias %c, i64 %ldc, "
             f"{scalar} %alpha, {scalar} %beta, i64 %width) noinline {{",
             "entry:", *_prefetch_tile(rows, names), "  br label %loop", "loop:",
             "  %k = phi i64 [0, %entry], [%k_next, %loop]"]
    lines += [f"  %acc{row}_{part} = phi {vector} [zeroinitializer, %entry], "
              f"[%sum{row}_{part}, %loop]" for row, part in accumulators]
    lines.append(f"  %b_row = mul i64 %k, {names['panel']}")
    for part in range(VECTORS):
        lines += [f"  %b_index{part} = add i64 %b_row, {part * lanes}",
                  f"  %b_address{part} = getelementptr {scalar}, ptr %b, i64 %b_index{part}",
                  f"  %b{part} = load {vector}, ptr %b_address{part}, align 64"]
    lines.append(f"  %a_row = mul i64 %k, {rows}")
    for row in range(rows):
        lines += [f"  %a_index{row} = add i64 %a_row, {row}",
                  f"  %a_address{row} = getelementptr {scalar}, ptr %a, i64 %a_index{row}",
                  f"  %a{row} = load {scalar}, ptr %a_address{row}",
                  f"  %a_one{row} = insertelement {vector} poison, {scalar} %a{row}, i32 0",
                  f"  %a_all{row} = shufflevector {vector} %a_one{row}, {vector} poison, "
                  f"<{lanes} x i32> zeroinitializer"]
        lines += [f"  %sum{row}_{part} = call {vector} {fma}({vector} %a_all{row}, "
                  f"{vector} %b{part}, {vector} %acc{row}_{part})" for part in range(VECTORS)]
    lines += ["  %k_next = add i64 %k, 1", "  %more = icmp slt i64 %k_next, %depth",
              "  br i1 %more, label %loop, label %scale", "scale:",
              f"  %alpha_one = insertelement {vector} poison, {scalar} %alpha, i32 0",
              f"  %alpha_all = shufflevector {vector} %alpha_one, {vector} poison, "
              f"<{lanes} x i32> zeroinitializer",
              f"  %beta_one = insertelement {vector} poison, {scalar} %beta, i32 0",
              f"  %beta_all = shufflevector {vector} %beta_one, {vector} poison, "
              f"<{lanes} x i32> zeroinitializer",
              *width_masks(names)]
    for row, part in accumulators:
        lines += [f"  %c_row{row}_{part} = mul i64 {row}, %ldc",
                  f"  %c_index{row}_{part} = add i64 %c_row{row}_{part}, {part * lanes}",
                  f"  %c_address{row}_{part} = getelementptr {scalar}, ptr %c, "
                  f"i64 %c_index{row}_{part}",
                  f"  %scaled{row}_{part} = fmul {vector} %alpha_all, %sum{row}_{part}"]
    lines += [f"  %overwrite = fcmp oeq {scalar} %beta, 0.0",
              "  br i1 %overwrite, label %store, label %accumulate", "accumulate:"]
    for row, part in accumulators:
        lines += [masked_load(names, f"%old{row}_{part}", f"%c_address{row}_{part}",
                               f"%mask{part}"),
                  f"  %added{row}_{part} = call {vector} {fma}({vector} %beta_all, "
                  f"{vector} %old{row}_{part}, {vector} %scaled{row}_{part})"]
    lines.append("  br label %store")
    lines.append("store:")
    lines += [f"  %result{row}_{part} = phi {vector} [%scaled{row}_{part}, %scale], "
              f"[%added{row}_{part}, %accumulate]" for row, part in accumulators]
    lines += [f"  call void @llvm.masked.store.v{lanes}{names['short']}.p0("
              f"{vector} %result{row}_{part}, ptr %c_address{row}_{part}, i32 4, "
              f"<{lanes} x i1> %mask{part})" for row, part in accumulators]
    lines += ["  ret void", "}"]
    return "\n".join(lines)


def _prefetch_tile(rows: int, names: dict) -> list:
    """IR asking for the lines of the tile's block of C, for writing, into L2, before k runs:
    the stores (and the loads of C where beta is not 0) at the end then find them there, where
    C's last use was long before (a weight that the step's update reads and writes, a product
    result's buffer). Measured in the MLP step, with the equal row blocks of _main, against
    neither: its two weight updates took 664-670 and 441-443 us inside the step against
    739-740 and 501-510, its 256 x 10 x 512 product 34-36 us against 48; products repeated
    alone do not change (docs/notes/cpu-codegen.md)."""
    scalar, last = names["scalar"], names["panel"] - 1
    lines = []
    for row in range(rows):
        lines += [f"  %prefetch_offset{row} = mul i64 {row}, %ldc",
                  f"  %prefetch_first{row} = getelementptr {scalar}, ptr %c, "
                  f"i64 %prefetch_offset{row}",
                  f"  %prefetch_last{row} = getelementptr {scalar}, ptr %prefetch_first{row}, "
                  f"i64 {last}"]
        # Arguments: address, write (1), locality 2 (kept in L2), data cache (1).
        lines += [f"  call void @llvm.prefetch.p0(ptr %prefetch_{end}{row}, i32 1, i32 2, i32 1)"
                  for end in ("first", "last")]
    return lines


def _main(transpose_a: bool, transpose_b: bool, names: dict, prepacked: bool = False) -> str:
    """The ?gemm itself: for each k block, for each block of MC rows, the rows' tiles of a
    are packed, then for each panel b's block is packed and the rows' tiles run. `prepacked`:
    b is all of b packed beforehand (prepacked.py's layout; ldb is not read), and each
    panel's block is read where it lies instead."""
    scalar, panel, depth, symbol = names["scalar"], names["panel"], names["depth"], \
        names["symbol"]
    if prepacked:
        lanes = names["lanes"]
        block_space: list = []
        padding = [f"  %n_up = add i64 %n, {panel - 1}", f"  %n_pad = and i64 %n_up, -{panel}"]
        depth_padding = [f"  %depth_up = add i64 %depth, {lanes - 1}",
                         f"  %depth_pad = and i64 %depth_up, -{lanes}",
                         "  %block_base = mul i64 %k0, %n_pad"]
        panel_block = ["  %panel_offset = mul i64 %j0, %depth_pad",
                       "  %block_offset = add i64 %block_base, %panel_offset",
                       f"  %block = getelementptr {scalar}, ptr %b, i64 %block_offset"]
    else:
        block_space = [f"  %block = alloca [{depth * panel} x {scalar}], align {names['align']}"]
        padding, depth_padding = [], []
        panel_block = [*_offset("b", *(("%j0", "%k0") if transpose_b else ("%k0", "%j0"))),
                       f"  %b_start = getelementptr {scalar}, ptr %b, i64 %b_offset",
                       f"  call void @{names['pack_b']}(ptr %block, ptr %b_start, i64 %ldb, "
                       "i64 %depth, i64 %width)"]
    block_rows = names["block_rows"]
    tile_arguments = (f"(ptr %a_tile, ptr %block, i64 %depth, ptr %c_tile, i64 %ldc, "
                      f"{scalar} %alpha, {scalar} %beta_block, i64 %width)")
    pack_arguments = "(ptr %packed_tile, ptr %a_start, i64 %lda, i64 %depth, i64 %pack_rows)"
    # Where a tile's rows start in a, a(row, k0).
    a_start = _offset("a", *(("%k0", "%pack_row") if transpose_a else ("%pack_row", "%k0")))
    return "\n".join([
        f"define void @{symbol}(i32 %order, i32 %transpose_a, i32 %transpose_b, i64 %m, "
        f"i64 %n, i64 %k, {scalar} %alpha, ptr noalias %a, i64 %lda, ptr noalias %b, "
        f"i64 %ldb, {scalar} %beta, ptr noalias %c, i64 %ldc) {{",
        "entry:",
        *block_space,
        f"  %packed = alloca [{depth * block_rows} x {scalar}], align {names['align']}",
        "  %empty = icmp sle i64 %m, 0", "  %no_columns = icmp sle i64 %n, 0",
        "  %nothing = or i1 %empty, %no_columns",
        "  %no_depth = icmp sle i64 %k, 0", "  %skip = or i1 %nothing, %no_depth",
        "  br i1 %skip, label %exit, label %start",
        # The rows split into equal blocks of at most MC: 392 rows make one block, not
        # 192 + 192 + 8, each of which packs all of b again.
        "start:", f"  %rows_up = add i64 %m, {block_rows - 1}",
        f"  %row_block_count = udiv i64 %rows_up, {block_rows}",
        "  %even_up = add i64 %m, %row_block_count", "  %even_up_less = sub i64 %even_up, 1",
        "  %even_rows = udiv i64 %even_up_less, %row_block_count",
        *padding,
        "  br label %blocks",
        "blocks:", "  %k0 = phi i64 [0, %start], [%k0_next, %block_done]",
        "  %deep_left = sub i64 %k, %k0",
        f"  %shallow = icmp slt i64 %deep_left, {depth}",
        f"  %depth = select i1 %shallow, i64 %deep_left, i64 {depth}",
        "  %first = icmp eq i64 %k0, 0",
        f"  %beta_block = select i1 %first, {scalar} %beta, {scalar} 1.0",
        *depth_padding,
        "  br label %row_blocks",
        "row_blocks:", "  %m0 = phi i64 [0, %blocks], [%m0_next, %row_block_done]",
        "  %block_left = sub i64 %m, %m0",
        "  %few = icmp slt i64 %block_left, %even_rows",
        "  %block_rows = select i1 %few, i64 %block_left, i64 %even_rows",
        "  br label %packs",
        "packs:", "  %p = phi i64 [0, %row_blocks], [%p_next, %packs]",
        "  %pack_left = sub i64 %block_rows, %p",
        *_tile_choice("pack"),
        "  %pack_row = add i64 %m0, %p",
        *a_start,
        f"  %a_start = getelementptr {scalar}, ptr %a, i64 %a_offset",
        "  %packed_offset = mul i64 %p, %depth",
        f"  %packed_tile = getelementptr {scalar}, ptr %packed, i64 %packed_offset",
        f"  call void @{names['pack_a']}{pack_arguments}",
        "  %p_next = add i64 %p, %pack_rows",
        "  %more_packs = icmp slt i64 %p_next, %block_rows",
        "  br i1 %more_packs, label %packs, label %panels",
        "panels:", "  %j0 = phi i64 [0, %packs], [%j0_next, %panel_done]",
        "  %left = sub i64 %n, %j0",
        f"  %narrow = icmp slt i64 %left, {panel}",
        f"  %width = select i1 %narrow, i64 %left, i64 {panel}",
        *panel_block,
        "  br label %tiles",
        "tiles:", "  %i = phi i64 [0, %panels], [%i_next, %tile_done]",
        "  %tile_left = sub i64 %block_rows, %i",
        *_tile_choice("tile"),
        "  %a_offset_packed = mul i64 %i, %depth",
        f"  %a_tile = getelementptr {scalar}, ptr %packed, i64 %a_offset_packed",
        "  %c_row = add i64 %m0, %i",
        "  %c_offset_row = mul i64 %c_row, %ldc", "  %c_offset = add i64 %c_offset_row, %j0",
        f"  %c_tile = getelementptr {scalar}, ptr %c, i64 %c_offset",
        *_switch("tile", f"call void @{names['tiles']}_tile{{rows}}{tile_arguments}"),
        "  %i_next = add i64 %i, %tile_rows",
        "  %more_tiles = icmp slt i64 %i_next, %block_rows",
        "  br i1 %more_tiles, label %tiles, label %panel_done",
        "panel_done:",
        f"  %j0_next = add i64 %j0, {panel}",
        "  %more_panels = icmp slt i64 %j0_next, %n",
        "  br i1 %more_panels, label %panels, label %row_block_done",
        "row_block_done:",
        "  %m0_next = add i64 %m0, %even_rows",
        "  %more_row_blocks = icmp slt i64 %m0_next, %m",
        "  br i1 %more_row_blocks, label %row_blocks, label %block_done",
        "block_done:",
        "  %k0_next = add i64 %k0, %depth",
        "  %more_blocks = icmp slt i64 %k0_next, %k",
        "  br i1 %more_blocks, label %blocks, label %exit",
        "exit:", "  ret void", "}"])


def _offset(matrix: str, row: str, column: str) -> list:
    """IR setting %{matrix}_offset to row * lead + column (lead: %lda or %ldb)."""
    return [f"  %{matrix}_offset_row = mul i64 {row}, %ld{matrix}",
            f"  %{matrix}_offset = add i64 %{matrix}_offset_row, {column}"]


def _tile_choice(prefix: str) -> list:
    """IR setting %{prefix}_rows: the tallest tile height that fits in %{prefix}_left."""
    lines = []
    previous = "1"
    for rows in reversed(TILE_ROWS[:-1]):
        lines += [f"  %{prefix}_fits{rows} = icmp sge i64 %{prefix}_left, {rows}",
                  f"  %{prefix}_choice{rows} = select i1 %{prefix}_fits{rows}, i64 {rows}, "
                  f"i64 {previous}"]
        previous = f"%{prefix}_choice{rows}"
    lines.append(f"  %{prefix}_rows = add i64 {previous}, 0")
    return lines


def _switch(prefix: str, call: str) -> list:
    """IR branching on %{prefix}_rows to `call` (with {rows} filled in) for that tile height,
    every branch then meeting at %{prefix}_done."""
    cases = " ".join(f"i64 {rows}, label %{prefix}{rows}" for rows in TILE_ROWS[1:])
    lines = [f"  switch i64 %{prefix}_rows, label %{prefix}{TILE_ROWS[0]} [{cases}]"]
    for rows in TILE_ROWS:
        lines += [f"{prefix}{rows}:", "  " + call.format(rows=rows),
                  f"  br label %{prefix}_done"]
    return lines + [f"{prefix}_done:"]
