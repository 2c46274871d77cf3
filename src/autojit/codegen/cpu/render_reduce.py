"""The reducing loops of a rendered CPU kernel: accumulators, their identities and combines.

render_llvm.KernelRenderer builds every loop nest; this mixin holds what only reducing kernels
need. A kernel reducing over its innermost loops keeps one accumulator per reduced output in a
register; a kernel reducing over outer axes only accumulates in memory, into the output row
(kernel.accumulates_in_memory). Either way, a float32 sum would add each element into
a partial sum that grows with the number of elements, so its error grew with it (a mean of
10^7 values of 0.1 was 7e-4 off). Such sums (kernel.WIDER_ACCUMULATOR) are accumulated in two
levels instead:

- a float32 partial sum over a block of elements (REDUCE_BLOCK of the innermost reduce loop,
  which the loop vectorizer still splits over its lanes; ROW_BLOCK rows in memory order, in
  pairs), so the loop keeps the vector width it has without the wide type (a float64 value
  in the loop halves it, which halved the speed of the fused elementwise benchmark's kernel);
- a float64 total that each block's partial sum is added into, rounded to float32 once at
  the end.

In memory order the totals of a tile of TILE_WIDTH kept positions live in a stack array
(`emit_tiled`). See docs/notes/accurate-numerics.md.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ...tensor import dtypes
from ..kernel import accumulator_dtype, identity_value
from .llvm.expression import INT64, Typed, constant, convert, intrinsic, register_type

REDUCE_COMBINE = {"sum": ("fadd", "add", "or_"), "prod": ("fmul", "mul", "and_")}
# Elements of the innermost reduce loop per float32 partial sum. The vectorizer splits a block
# over its lanes (16 float lanes interleaved 4 times in a plain sum: 16 elements each; 8 lanes
# of a loop computing in double, once: 128), and sums the lanes as a tree at the block's end.
# Each block's end costs that tree: in one process, a sum over a 100 x 1e6 broadcast (in
# cache) took 2.21 ms with float32 accumulators, 2.47 ms with blocks of 512, 2.36 ms with
# 1024, 2.28 ms with 2048; sums of 1e6 values of 0.1 were 1.4e-7 (plain), 4.0e-7 (of sin),
# 2.3e-7 (of x**1.5) from exact with 1024, but 1.5e-6 (of x**1.5) with 2048. What bounds the
# error is how many elements each lane adds, and an AVX2 host's lanes are half as many: there,
# with blocks of 1024, 512 and 256, the sums of 1e6 values of 0.1 were 2.5e-6, 1.5e-6 and
# 1.8e-7 off (of x**1.5) and 2.9e-6, 5.9e-7 and 4.3e-7 (of sin), so they take blocks of 256.
REDUCE_BLOCK = 1024


def reduce_block() -> int:
    """The block of REDUCE_BLOCK's comment for the host's vector width."""
    from .jit import has_avx512

    return REDUCE_BLOCK if has_avx512() else REDUCE_BLOCK // 4
# Rows per float32 partial sum in memory order, where each column adds its rows one after
# another: rows are taken in pairs (the two values added first), so a block's partial sum
# is 16 additions from exact (16 additions of 0.1 are 1.5e-7 off, 32 are 3e-7). Pairs also
# halve the partial sums' loads and stores: against float32 accumulators in the output row,
# column sums of 10000x1000, 2000x1000, 256x512 and 65536x4 took 1.02-1.08x, 1.08-1.13x,
# 1.10-1.13x and 0.46x the time (one process), one row at a time in blocks of 16 0.99x,
# 1.13x, 1.18x and 0.50x.
ROW_BLOCK = 32
# Kept positions per tile in memory order (`emit_tiled`): the tile's float64 totals (8 KB)
# and float32 partial sums stay in L1 while the rows are folded into them.
TILE_WIDTH = 1024


class ReducingLoops:
    """Mixin of render_llvm.KernelRenderer: the accumulators of reducing kernels."""

    def allocate_accumulators(self):
        """Stack slots for the reduced outputs, in the entry block: a register accumulator
        each (in the wider dtype where there is one, then with a float32 block partial), or
        accumulating in memory, a tile of totals and one of partial sums for the wide ones."""
        b = self.b
        self.accumulators, self.partials, self.tiles, self.tile_partials = {}, {}, {}, {}
        self.tile_position = None  # the position in the tile, inside emit_tiled's loops
        self.pending = None  # inside a pair of rows: the first row's values, by output
        self.complex_totals = {}  # complex sums in registers: index -> (dtype, part slots)
        for index, output in enumerate(self.kernel.outputs):
            if output.reduce is None:
                continue
            if output.dtype.category == dtypes.COMPLEX:
                # A complex sum: in memory, into the output row as any sum of its dtype; in
                # registers, one total per part, complex64's in double (no float32 blocks).
                if not self.in_memory:
                    total = dtypes.complex128
                    self.complex_totals[index] = (total, tuple(
                        b.alloca(ir.DoubleType(), name=f"acc{index}_{part}")
                        for part in ("re", "im")))
                continue
            wide = accumulator_dtype(output)
            own = register_type(output.dtype)
            if not self.in_memory:
                self.accumulators[index] = b.alloca(register_type(wide), name=f"acc{index}")
                if wide is not output.dtype:
                    self.partials[index] = b.alloca(own, name=f"partial{index}")
            elif wide is not output.dtype:
                self.tiles[index] = b.alloca(ir.ArrayType(register_type(wide), TILE_WIDTH),
                                             name=f"tile{index}")
                self.tile_partials[index] = b.alloca(ir.ArrayType(own, TILE_WIDTH),
                                                     name=f"tile_partial{index}")

    # ---- accumulating in registers ------------------------------------------------------------

    def emit_reduction(self, plan, offsets):
        """Reset the accumulators, run the reduce loops `plan`, store the results."""
        for index, pointer in self.accumulators.items():
            output = self.kernel.outputs[index]
            self.b.store(self.identity(output.reduce, accumulator_dtype(output)).value, pointer)
        for _, slots in self.complex_totals.values():
            for slot in slots:
                self.b.store(ir.Constant(ir.DoubleType(), 0.0), slot)
        self.emit_reduce_loops(plan, offsets)
        for index, (total, slots) in self.complex_totals.items():
            value = Typed(tuple(self.b.load(slot) for slot in slots), total)
            self.store(len(self.kernel.inputs) + index, offsets,
                       convert(self.b, value, self.kernel.outputs[index].dtype))
        for index, pointer in self.accumulators.items():
            output = self.kernel.outputs[index]
            value = Typed(self.b.load(pointer), accumulator_dtype(output))
            self.store(len(self.kernel.inputs) + index, offsets,
                       convert(self.b, value, output.dtype))

    def emit_reduce_loops(self, plan, offsets):
        if any(extent == 0 for extent, _, _ in plan):
            return
        if not plan:
            self.emit_partial_block(offsets, lambda: self.emit_body(offsets, reduce_stores=True))
            return
        if len(plan) == 1 and self.partials:
            extent, strides, _ = plan[0]

            def block(block_offsets, count):
                self.emit_partial_block(block_offsets, lambda: self.emit_loop(
                    (count, strides, True), block_offsets,
                    lambda inner: self.emit_body(inner, reduce_stores=True)))

            self.emit_blocks(plan[0], offsets, reduce_block(), block)
            return
        self.emit_loop(plan[0], offsets, lambda inner: self.emit_reduce_loops(plan[1:], inner))

    def emit_partial_block(self, offsets, emit):
        """`emit()` with the float32 partial sums reset before and added to the totals after."""
        b = self.b
        for index, pointer in self.partials.items():
            b.store(self.identity("sum", self.kernel.outputs[index].dtype).value, pointer)
        emit()
        for index, pointer in self.partials.items():
            total = self.accumulators[index]
            wide = accumulator_dtype(self.kernel.outputs[index])
            partial = convert(b, Typed(b.load(pointer), self.kernel.outputs[index].dtype), wide)
            b.store(b.fadd(b.load(total), partial.value), total)

    def emit_blocks(self, level, offsets, size, emit_block):
        """`level`'s loop cut into blocks of `size` iterations and the rest:
        `emit_block(offsets, count)` emits the loop over one block of `count` iterations
        starting at `offsets`."""
        b = self.b
        extent, strides, _ = level
        if isinstance(extent, int):
            blocks, rest = divmod(extent, size)
        else:
            blocks = b.udiv(extent, ir.Constant(INT64, size))
            rest = b.urem(extent, ir.Constant(INT64, size))
        block_strides = [stride * size if isinstance(stride, int) else
                         b.mul(stride, ir.Constant(INT64, size)) for stride in strides]
        self.emit_if_positive(blocks, lambda: self.emit_loop(
            (blocks, block_strides, False), offsets, lambda inner: emit_block(inner, size)))

        def last():
            start = blocks * size if isinstance(blocks, int) else \
                b.mul(blocks, ir.Constant(INT64, size))
            moved = [offset if isinstance(stride, int) and stride == 0 else
                     b.add(offset, b.mul(_value(start), _value(stride)))
                     for offset, stride in zip(offsets, strides)]
            emit_block(moved, rest)

        self.emit_if_positive(rest, last)

    def emit_if_positive(self, count, emit):
        """`emit()` where `count` (a constant, or a value read at run time) is above 0."""
        if isinstance(count, int):
            if count > 0:
                emit()
            return
        b = self.b
        then = self.function.append_basic_block("then")
        after = self.function.append_basic_block("endif")
        b.cbranch(b.icmp_signed(">", count, ir.Constant(INT64, 0)), then, after)
        b.position_at_end(then)
        emit()
        b.branch(after)
        b.position_at_end(after)

    # ---- accumulating in memory ---------------------------------------------------------------

    def emit_identity_fill(self):
        """Set every reduced output to its reduction's identity (accumulating in memory)."""
        first_output = len(self.kernel.inputs)
        fills = iter(self.fill_sizes)
        for index, output in enumerate(self.kernel.outputs):
            if output.reduce is None:
                continue
            size = math.prod(self.kernel.output_shape(output))
            if self.kernel.generic:
                runtime_size = next(fills)
                if size == 0:
                    continue
                size = runtime_size
            if size == 0:
                continue
            array = first_output + index
            identity = self.identity(output.reduce, output.dtype)
            offsets = [ir.Constant(INT64, 0)] * self.arrays
            strides = [1 if position == array else 0 for position in range(self.arrays)]
            self.emit_loop((size, strides, False), offsets,
                           lambda inner, array=array, identity=identity: self.store(
                               array, inner, identity))

    def emit_tiled(self, plan, offsets):
        """The loops of a kernel accumulating in memory whose sums have wider totals.

        In memory order (every loop kept, `loop_plan`) the output row itself holds the sums,
        in the output's dtype. Here the innermost loop (kept: along the rows) is cut into
        tiles of TILE_WIDTH positions, and for each tile the reduced rows are folded into the
        tile's float32 partial sums, ROW_BLOCK rows at a time and two rows per step (their
        values added first), each block's partial sums then added into the tile's float64
        totals, which are rounded and stored once at the end.
        The kept loops run outside the tile (those between reduced ones move out), so an
        output position is finished before the next tile starts; a tile reads its rows'
        segments contiguously. Other reduced outputs still accumulate in their output row.
        """
        b = self.b
        probe = len(self.kernel.inputs) + next(iter(self.tiles))
        reducing = [isinstance(strides[probe], int) and strides[probe] == 0
                    for _, strides, _ in plan]
        kept = [level for level, reduces in zip(plan[:-1], reducing) if not reduces]
        reduced = [level for level, reduces in zip(plan, reducing) if reduces]
        extent, strides, _ = plan[-1]
        row_strides = reduced[-1][1] if reduced else [0] * self.arrays
        count = -(-extent // TILE_WIDTH) if isinstance(extent, int) else b.udiv(
            b.add(extent, ir.Constant(INT64, TILE_WIDTH - 1)), ir.Constant(INT64, TILE_WIDTH))
        tile_level = (count, [stride * TILE_WIDTH if isinstance(stride, int) else
                              b.mul(stride, ir.Constant(INT64, TILE_WIDTH))
                              for stride in strides], False)

        def tile(tile_offsets, tile_index):
            rest = b.sub(_value(extent), b.mul(tile_index, ir.Constant(INT64, TILE_WIDTH)))
            width = intrinsic(b, "smin", [rest, ir.Constant(INT64, TILE_WIDTH)])
            columns = (width, strides, False)
            self.emit_loop(columns, tile_offsets, lambda _, at: self.tile_step(at, "reset"),
                           with_index=True)

            def row(row_offsets, at):
                self.tile_position = at
                self.emit_body(row_offsets, reduce_stores=False)

            def pair(row_offsets, at):
                # Two rows' values are added to each other, then to the partial sum.
                self.tile_position, self.pending = at, {}
                self.emit_body(row_offsets, reduce_stores=False)
                self.emit_body(_moved(b, row_offsets, row_strides, 1), reduce_stores=False)
                self.pending = None

            def rows(block_offsets, number):
                if isinstance(number, int):
                    pairs, odd = divmod(number, 2)
                else:
                    pairs = b.lshr(number, ir.Constant(INT64, 1))
                    odd = b.and_(number, ir.Constant(INT64, 1))
                pair_strides = [_scaled(b, stride, 2) for stride in row_strides]
                self.emit_if_positive(pairs, lambda: self.emit_loop(
                    (pairs, pair_strides, False), block_offsets,
                    lambda inner: self.emit_loop(columns, inner, pair, with_index=True)))
                self.emit_if_positive(odd, lambda: self.emit_loop(
                    columns, _moved(b, block_offsets, pair_strides, pairs), row,
                    with_index=True))
                self.emit_loop(columns, block_offsets, lambda _, at: self.tile_step(at, "add"),
                               with_index=True)

            if reduced:
                self.emit_nest(reduced[:-1], tile_offsets,
                               lambda inner: self.emit_blocks(reduced[-1], inner, ROW_BLOCK, rows))
            else:  # only axes of extent 1 are reduced: one row
                rows(tile_offsets, 1)
            self.emit_loop(columns, tile_offsets,
                           lambda inner, at: self.tile_step(at, "store", inner), with_index=True)

        self.emit_nest(kept, offsets, lambda inner: self.emit_loop(tile_level, inner, tile,
                                                                   with_index=True))

    def emit_nest(self, levels, offsets, emit_inner):
        if not levels:
            emit_inner(offsets)
            return
        self.emit_loop(levels[0], offsets,
                       lambda inner: self.emit_nest(levels[1:], inner, emit_inner))

    def tile_slot(self, tiles, index, position):
        return self.b.gep(tiles[index], [ir.Constant(INT64, 0), position], inbounds=True)

    def tile_step(self, position, action, offsets=None):
        """At one tile position, for each tiled output: "reset" its total and partial sum,
        "add" the partial sum into the total (and reset it), or "store" the total, rounded to
        the output's dtype, at `offsets`."""
        b = self.b
        for index in self.tiles:
            output = self.kernel.outputs[index]
            wide = accumulator_dtype(output)
            total = self.tile_slot(self.tiles, index, position)
            partial = self.tile_slot(self.tile_partials, index, position)
            if action == "store":
                value = convert(b, Typed(b.load(total), wide), output.dtype)
                self.store(len(self.kernel.inputs) + index, offsets, value)
                continue
            if action == "add":
                added = convert(b, Typed(b.load(partial), output.dtype), wide)
                b.store(b.fadd(b.load(total), added.value), total)
            else:
                b.store(self.identity(output.reduce, wide).value, total)
            b.store(self.identity(output.reduce, output.dtype).value, partial)

    # ---- one element ----------------------------------------------------------------------------

    def accumulate(self, index, output, offsets, value: Typed, reduce_stores: bool):
        """Fold one element's value of reduced output `index` into its accumulator."""
        b = self.b
        if index in self.tiles:  # a sum with wider totals, in memory order
            if self.pending is not None:
                if index not in self.pending:  # the first row of a pair
                    self.pending[index] = value
                    return
                value = Typed(b.fadd(self.pending[index].value, value.value), value.dtype)
            # Not reassociated: LLVM could otherwise add a pair's rows to the partial sum one
            # by one, a chain twice as long (each column is its own chain: nothing to split).
            slot = self.tile_slot(self.tile_partials, index, self.tile_position)
            b.store(b.fadd(b.load(slot), value.value), slot)
            return
        if self.in_memory:
            array = len(self.kernel.inputs) + index
            current = self.load(array, offsets, output.dtype)
            self.store(array, offsets, Typed(self.combine(output.reduce, current, value),
                                             output.dtype))
            return
        if not reduce_stores:
            return
        if index in self.complex_totals:
            total, slots = self.complex_totals[index]
            parts = convert(b, value, total).value
            for slot, part in zip(slots, parts):
                b.store(b.fadd(b.load(slot), part, flags=("reassoc", "nsz")), slot)
            return
        slot = self.partials.get(index, self.accumulators[index])
        dtype = output.dtype if index in self.partials else accumulator_dtype(output)
        b.store(self.combine(output.reduce, Typed(b.load(slot), dtype),
                             convert(b, value, dtype)), slot)

    def identity(self, kind, dtype) -> Typed:
        return constant(identity_value(kind, dtype), dtype)

    def combine(self, kind, accumulator: Typed, value: Typed):
        """One reduction step. Float sum/prod may reassociate (so they vectorize, as NumPy's
        pairwise sum also reorders); max/min propagate NaN like np.max."""
        b, dtype = self.b, value.dtype
        if dtype.category == dtypes.COMPLEX:  # a sum: the schedule reduces no other complex
            return tuple(b.fadd(x, y, flags=("reassoc", "nsz"))
                         for x, y in zip(accumulator.value, value.value))
        if kind in REDUCE_COMBINE:
            float_name, int_name, bool_name = REDUCE_COMBINE[kind]
            if dtype.is_floating_point:
                return getattr(b, float_name)(accumulator.value, value.value,
                                              flags=("reassoc", "nsz"))
            name = bool_name if dtype is dtypes.bool_ else int_name
            return getattr(b, name)(accumulator.value, value.value)
        if dtype is dtypes.bool_:
            combine = b.or_ if kind == "max" else b.and_
            return combine(accumulator.value, value.value)
        if dtype.is_floating_point:
            name = "maximum" if kind == "max" else "minimum"
        elif dtype.is_signed:
            name = "smax" if kind == "max" else "smin"
        else:
            name = "umax" if kind == "max" else "umin"
        return intrinsic(b, name, [accumulator.value, value.value])


def _scaled(b, stride, factor: int):
    return stride * factor if isinstance(stride, int) else \
        b.mul(stride, ir.Constant(INT64, factor))


def _moved(b, offsets, strides, count):
    """The offsets `count` (a constant or a value) steps of `strides` further."""
    return [offset if isinstance(stride, int) and stride == 0 else
            b.add(offset, b.mul(_value(count), _value(stride)))
            for offset, stride in zip(offsets, strides)]


def _value(number):
    """An extent, stride or offset as an IR value: a constant, or a value already loaded."""
    return ir.Constant(INT64, number) if isinstance(number, int) else number
