"""The packing routines of the generated ?gemm (kernel.py): the LLVM IR of the functions that
copy a block of b into NR-column panels (`pack`: rows of b read by masked vector loads, or
squares of a transposed b transposed in registers) and a block of a's rows into the tiles'
order (`pack_a`: a tile's rows side by side for each k), zero-padded past the matrix's edge,
with the masked loads and stores and the in-register transposes they share with the tiles.

kernel.py renders one module per dtype from these and its tiles and drivers; the register
tiles read what these write, contiguously, whatever lda and ldb are.
"""

from __future__ import annotations

TILE_ROWS = (12, 8, 4, 2, 1)  # 12 rows x 2 vectors: 24 accumulators of the 32 registers


VECTORS = 2


def lane_indices(lanes: int, first: int) -> str:
    return "<" + ", ".join(f"i64 {first + lane}" for lane in range(lanes)) + ">"


def pack_b(transpose_b: bool, names: dict) -> str:
    """`pack(block, b, ldb, depth, width)`: block[k][j] = b(k, j) for j < width, else 0, for a
    block of NR columns and `depth` rows of b."""
    return _pack_transposed(names) if transpose_b else _pack_rows(names)


def masked_load(names: dict, target: str, address: str, mask: str) -> str:
    return (f"  {target} = call {names['vector']} @llvm.masked.load.v{names['lanes']}"
            f"{names['short']}.p0(ptr {address}, i32 4, <{names['lanes']} x i1> {mask}, "
            f"{names['vector']} zeroinitializer)")


def width_masks(names: dict) -> list:
    """IR setting %mask0, %mask1: the lanes of each vector of a panel left of %width."""
    lanes = names["lanes"]
    lines = [f"  %width_one = insertelement <{lanes} x i64> poison, i64 %width, i32 0",
             f"  %width_all = shufflevector <{lanes} x i64> %width_one, <{lanes} x i64> poison,"
             f" <{lanes} x i32> zeroinitializer"]
    lines += [f"  %mask{part} = icmp slt <{lanes} x i64> {lane_indices(lanes, part * lanes)}, "
              "%width_all" for part in range(VECTORS)]
    return lines


def _pack_rows(names: dict) -> str:
    """b's columns are contiguous: each row of the block is two (masked) vector loads."""
    scalar, vector, lanes, panel = names["scalar"], names["vector"], names["lanes"], \
        names["panel"]
    lines = [f"define internal void @{names['symbol']}_pack(ptr noalias %block, ptr noalias %b, "
             "i64 %ldb, i64 %depth, i64 %width) noinline {", "entry:", *width_masks(names),
             "  br label %rows", "rows:", "  %k = phi i64 [0, %entry], [%k_next, %rows]",
             "  %source_row = mul i64 %k, %ldb", f"  %target_row = mul i64 %k, {panel}"]
    for part in range(VECTORS):
        lines += [f"  %source_index{part} = add i64 %source_row, {part * lanes}",
                  f"  %source{part} = getelementptr {scalar}, ptr %b, i64 %source_index{part}",
                  masked_load(names, f"%row{part}", f"%source{part}", f"%mask{part}"),
                  f"  %target_index{part} = add i64 %target_row, {part * lanes}",
                  f"  %target{part} = getelementptr {scalar}, ptr %block, "
                  f"i64 %target_index{part}",
                  f"  store {vector} %row{part}, ptr %target{part}, align 64"]
    lines += ["  %k_next = add i64 %k, 1", "  %more = icmp slt i64 %k_next, %depth",
              "  br i1 %more, label %rows, label %done", "done:", "  ret void", "}"]
    return "\n".join(lines)


def _pack_transposed(names: dict) -> str:
    """b's rows are contiguous (b(k, j) = b[j * ldb + k]): lanes x lanes squares are loaded
    a row of b per vector, transposed in registers and stored a row of the block per
    vector. Rows of the block past `depth` (up to the next multiple of lanes) receive zeros,
    and the tiles never read them."""
    scalar, vector, lanes, panel = names["scalar"], names["vector"], names["lanes"], \
        names["panel"]
    lines = [f"define internal void @{names['symbol']}_pack(ptr noalias %block, ptr noalias %b, "
             "i64 %ldb, i64 %depth, i64 %width) noinline {", "entry:", "  br label %squares",
             "squares:", "  %k = phi i64 [0, %entry], [%k_next, %squares]",
             *_depth_mask(lanes)]
    for part in range(VECTORS):
        rows = []
        for row in range(lanes):
            column = part * lanes + row
            name = f"p{part}r{row}"
            lines += [f"  %{name}_inside = icmp slt i64 {column}, %width",
                      f"  %{name}_mask = select i1 %{name}_inside, <{lanes} x i1> "
                      f"%inside_depth, <{lanes} x i1> zeroinitializer",
                      f"  %{name}_row = mul i64 {column}, %ldb",
                      f"  %{name}_index = add i64 %{name}_row, %k",
                      f"  %{name}_address = getelementptr {scalar}, ptr %b, i64 %{name}_index",
                      masked_load(names, f"%{name}_s0", f"%{name}_address", f"%{name}_mask")]
            rows.append(f"%{name}_s0")
        rows = _transpose(lines, rows, f"p{part}", names)
        for row in range(lanes):
            name = f"p{part}k{row}"
            lines += [f"  %{name}_k = add i64 %k, {row}",
                      f"  %{name}_row = mul i64 %{name}_k, {panel}",
                      f"  %{name}_index = add i64 %{name}_row, {part * lanes}",
                      f"  %{name}_address = getelementptr {scalar}, ptr %block, "
                      f"i64 %{name}_index",
                      f"  store {vector} {rows[row]}, ptr %{name}_address, align 64"]
    lines += [f"  %k_next = add i64 %k, {lanes}", "  %more = icmp slt i64 %k_next, %depth",
              "  br i1 %more, label %squares, label %done", "done:", "  ret void", "}"]
    return "\n".join(lines)


def _depth_mask(lanes: int) -> list:
    """IR setting %left (depth - k) and %inside_depth: the lanes of a square of k's, from k
    on, that are inside the depth."""
    return ["  %left = sub i64 %depth, %k",
            f"  %left_one = insertelement <{lanes} x i64> poison, i64 %left, i32 0",
            f"  %left_all = shufflevector <{lanes} x i64> %left_one, <{lanes} x i64> poison, "
            f"<{lanes} x i32> zeroinitializer",
            f"  %inside_depth = icmp slt <{lanes} x i64> {lane_indices(lanes, 0)}, %left_all"]


def _transpose(lines: list, rows: list, prefix: str, names: dict) -> list:
    """Appends IR transposing the lanes x lanes square whose rows are the vectors `rows`
    (values or constants): log2(lanes) stages of shuffles that swap ever smaller sub-blocks.
    Returns the names of the square's columns."""
    vector, lanes = names["vector"], names["lanes"]
    stage, size = 0, lanes // 2
    while size >= 1:
        stage += 1
        new = list(rows)
        for row in range(lanes):
            if (row // size) % 2:
                continue
            low, high = [], []
            for lane in range(lanes):
                group, offset = divmod(lane, 2 * size)
                base = group * 2 * size
                # lanes 0..lanes-1 name the first vector's, lanes.. the second's
                low.append(base + offset if offset < size else lanes + base + offset - size)
                high.append(base + size + offset if offset < size else lanes + base + offset)
            for target, picks in ((row, low), (row + size, high)):
                mask = ", ".join(f"i32 {pick}" for pick in picks)
                name = f"%{prefix}r{target}_s{stage}"
                lines.append(f"  {name} = shufflevector {vector} {rows[row]}, "
                             f"{vector} {rows[row + size]}, <{lanes} x i32> <{mask}>")
                new[target] = name
        rows, size = new, size // 2
    return rows


def pack_a(transpose_a: bool, names: dict) -> str:
    """`pack_a(packed, a, lda, depth, rows)`: packed[k * rows + row] = a(row, k) for a tile
    of `rows` (at most TILE_ROWS[0]) rows and `depth` k's, so that the tile reads one
    contiguous stream of a at fixed offsets. Where a is transposed, a(row, k) = a[k * lda +
    row] and each k is a contiguous copy of the tile's rows; otherwise squares of `lanes` rows
    and k's are transposed in registers (rows past the tile's load as zeros, never stored)."""
    scalar, lanes = names["scalar"], names["lanes"]
    parts = range(-(-TILE_ROWS[0] // lanes))
    lines = [f"define internal void @{names['symbol']}_pack_a(ptr noalias %packed, "
             "ptr noalias %a, i64 %lda, i64 %depth, i64 %rows) noinline {", "entry:"]
    for part in parts:
        # The lanes of each vector of a packed k that hold the tile's rows.
        lines += [f"  %count{part} = sub i64 %rows, {part * lanes}",
                  f"  %count_one{part} = insertelement <{lanes} x i64> poison, "
                  f"i64 %count{part}, i32 0",
                  f"  %count_all{part} = shufflevector <{lanes} x i64> %count_one{part}, "
                  f"<{lanes} x i64> poison, <{lanes} x i32> zeroinitializer",
                  f"  %rows_mask{part} = icmp slt <{lanes} x i64> {lane_indices(lanes, 0)}, "
                  f"%count_all{part}"]
    lines += ["  br label %steps", "steps:", "  %k = phi i64 [0, %entry], [%k_next, %steps]"]
    if transpose_a:
        lines += ["  %source_row = mul i64 %k, %lda", "  %target_row = mul i64 %k, %rows"]
        for part in parts:
            lines += [f"  %source_index{part} = add i64 %source_row, {part * lanes}",
                      f"  %source{part} = getelementptr {scalar}, ptr %a, "
                      f"i64 %source_index{part}",
                      masked_load(names, f"%values{part}", f"%source{part}",
                                   f"%rows_mask{part}"),
                      f"  %target_index{part} = add i64 %target_row, {part * lanes}",
                      f"  %target{part} = getelementptr {scalar}, ptr %packed, "
                      f"i64 %target_index{part}",
                      masked_store(names, f"%values{part}", f"%target{part}",
                                    f"%rows_mask{part}")]
        step = 1
    else:
        lines += _depth_mask(lanes)
        for part in parts:
            square = []
            for lane in range(lanes):
                row = part * lanes + lane
                if row >= TILE_ROWS[0]:
                    square.append("zeroinitializer")
                    continue
                name = f"q{part}r{lane}"
                lines += [f"  %{name}_inside = icmp slt i64 {row}, %rows",
                          f"  %{name}_mask = select i1 %{name}_inside, <{lanes} x i1> "
                          f"%inside_depth, <{lanes} x i1> zeroinitializer",
                          f"  %{name}_row = mul i64 {row}, %lda",
                          f"  %{name}_index = add i64 %{name}_row, %k",
                          f"  %{name}_address = getelementptr {scalar}, ptr %a, "
                          f"i64 %{name}_index",
                          masked_load(names, f"%{name}_s0", f"%{name}_address",
                                       f"%{name}_mask")]
                square.append(f"%{name}_s0")
            columns = _transpose(lines, square, f"q{part}", names)
            for lane in range(lanes):
                name = f"q{part}k{lane}"
                lines += [f"  %{name}_inside = icmp slt i64 {lane}, %left",
                          f"  %{name}_mask = select i1 %{name}_inside, <{lanes} x i1> "
                          f"%rows_mask{part}, <{lanes} x i1> zeroinitializer",
                          f"  %{name}_k = add i64 %k, {lane}",
                          f"  %{name}_row = mul i64 %{name}_k, %rows",
                          f"  %{name}_index = add i64 %{name}_row, {part * lanes}",
                          f"  %{name}_address = getelementptr {scalar}, ptr %packed, "
                          f"i64 %{name}_index",
                          masked_store(names, columns[lane], f"%{name}_address",
                                        f"%{name}_mask")]
        step = lanes
    lines += [f"  %k_next = add i64 %k, {step}", "  %more = icmp slt i64 %k_next, %depth",
              "  br i1 %more, label %steps, label %done", "done:", "  ret void", "}"]
    return "\n".join(lines)


def masked_store(names: dict, value: str, address: str, mask: str) -> str:
    return (f"  call void @llvm.masked.store.v{names['lanes']}{names['short']}.p0("
            f"{names['vector']} {value}, ptr {address}, i32 4, <{names['lanes']} x i1> {mask})")
