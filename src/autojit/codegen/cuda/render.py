"""Kernel -> the Python source of a numba.cuda kernel: the CUDA renderer.

It renders the same Kernel description (kernel.py) the CPU renderer does, from the same
per-op expression templates of the registry: the template parser (`parse`) is the CPU
renderer's, and the loop plan (`loop_plan`: which axes merge, reduce axes innermost) follows the
CPU renderer's without its in-memory accumulation; what differs is only the loop structure and
the text each expression node becomes (expression.py's walker).

- An elementwise kernel is a grid-stride loop over the elements of its (merged) space: each
  thread turns a linear index into the per-array offsets through the loops' extents and
  strides, evaluates the steps and stores the outputs. When every array walks the innermost
  loop contiguously or not at all, a vector loop comes first (`vector_plan`): each thread takes
  2 or 4 adjacent elements at a time, read and written with one 8- or 16-byte access
  (codegen/cuda/vector.py), and the scalar loop takes what is left: the last partial group, or
  everything when the launch finds an array off the vectors' alignment.
- A reducing kernel gives each block one kept position (grid-stride over blocks); its threads
  stride over the reduced positions, each folding into its own accumulators (and storing any
  elementwise outputs on the way), then the block combines the accumulators through shared
  memory (a tree), finishing with warp shuffles (`cuda.shfl_down_sync`) when `warp_shuffle`
  is set: on real GPUs only, the simulator has no shuffles. A sum over many elements into few
  kept positions (a loss) is split over several blocks per position, whose partial sums are
  added atomically (`cuda.atomic.add`) into outputs zeroed before the launch.
- A kernel reducing over outer axes only (a column sum, a bias gradient: what the CPU
  renderer accumulates in memory) runs column-wise instead (`render_columns`): a block covers
  a tile of adjacent kept positions by a few rows of threads, adjacent threads on adjacent
  columns, so every load of a warp is coalesced; the rows meet in shared memory, and tall sums
  split over blocks the same way.

Kernels receive flat arrays (CudaArray.flat) and compute every offset themselves. Values are
cast to their dtype after each step with NumPy's scalar types (`f32(...)`), which numba.cuda
compiles as casts and the simulator runs as NumPy scalars. Function names in the expressions
(`exp`, `sigmoid`, `maximum_`...) are looked up in the namespace cuda/kernels.py builds: math
functions on a GPU, NumPy's scalar functions under the simulator (so inf and nan stay values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from ...ops.registry import Elementwise
from ...tensor import dtypes
from ..expression import RenderError, parse
from ..kernel import (
    REDUCTION_KINDS,
    Kernel,
    accumulates_in_memory,
    accumulator_dtype,
    identity_value,
)
from ..kernel import loop_plan as kernel_loop_plan
from .expression import CAST, CudaExpression, cast_name, literal

# Output dtypes cuda.atomic.add takes: sums of these may be split over several blocks.
ATOMIC_SUM = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)
# Reduced positions a thread folds into a partial sum in the output's dtype before adding it
# into its wider accumulator (kernel.accumulator_dtype): one float64 addition per 16 elements.
CHUNK = 16


def loop_plan(kernel: Kernel):
    """The kernel's loops (kernel.loop_plan) with the reduce axes last, in memory
    accumulation or not: both reducing schedules split the plan into kept and reduced loops (a
    column reduction walks the kept loops across threads, the reduced ones within a thread)."""
    return kernel_loop_plan(kernel, in_memory=False)


@dataclass(frozen=True)
class RenderedCuda:
    name: str
    source: str
    reduces: bool
    total: int  # elements (elementwise) or blocks of work (reducing)
    block: int
    zeroed: tuple = ()  # outputs to fill with 0 before the launch (split sums add into them)
    # Split sums with a wider accumulator: the blocks add into a zeroed float64 array per
    # such output (the kernel's arguments after the outputs, `wide0`, ...), which is then
    # rounded into the output.
    wide: tuple = ()
    # Elementwise kernels with a vector path (see `CudaRenderer.vector_plan`): elements per
    # vector access (0: none), the arrays accessed so (inputs then outputs) and the number of
    # vector groups; the kernel takes that number, or 0 to run every element scalar, as its
    # last argument `groups`.
    vector_width: int = 0
    vector_arrays: tuple = ()
    groups: int = 0
    # Whether a step can report an error (an index out of range, an integer division by 0, a
    # negative integer power): the kernel then takes a last argument `status`, an int32
    # device array of one element that it sets to 1 (cuda/kernels.py reads it).
    checks: bool = False


class VectorPlan(NamedTuple):
    """An elementwise kernel's vector path (`CudaRenderer.vector_plan`)."""

    width: int  # elements per access
    loops: list  # the kernel's loops over groups of `width` elements
    arrays: tuple  # the arrays accessed by vectors, inputs then outputs
    groups: int


class CudaRenderer:
    def __init__(self, kernel: Kernel, name: str, block: int, warp_shuffle: bool,
                 max_blocks: int = 4096):
        for step in kernel.steps:
            if not isinstance(step.op.lowering, Elementwise):
                raise RenderError(f"{step.op.name}: only elementwise steps can be rendered, "
                                  f"its lowering is {step.op.lowering!r}")
            if step.out_dtype is dtypes.float16:
                raise RenderError(f"{step.op.name}: the CUDA backend does not support float16")
        for output in kernel.outputs:
            if output.reduce is not None and output.reduce not in REDUCTION_KINDS:
                raise RenderError(f"kernel {kernel.name}: unknown reduction {output.reduce!r}")
        self.kernel = kernel
        self.name = name
        self.block = block
        self.warp_shuffle = warp_shuffle
        self.max_blocks = max_blocks
        self.splits = 1
        self.tiles = 0  # blocks of work before splitting (reducing kernels)
        self.lines: list = []
        self.arrays = [f"in{i}" for i in range(len(kernel.inputs))] + \
            [f"out{i}" for i in range(len(kernel.outputs))]
        self.checks = False  # a step can report an error: the kernel takes `status`

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def render(self) -> RenderedCuda:
        kernel = self.kernel
        if any(entry.offset for entry in kernel.inputs) or \
                any(output.strides is not None for output in kernel.outputs):
            raise RenderError(f"kernel {kernel.name}: inputs read from inside their arrays "
                              "(a folded slice) and outputs stored into part of one are for "
                              "host plans")
        plan = loop_plan(kernel)
        kept = [level for level in plan if not level[2]]
        reduced = [level for level in plan if level[2]]
        reduces = any(output.reduce for output in kernel.outputs)
        kept_total = math.prod(level[0] for level in kept)
        vector = None if reduces else self.vector_plan(kept, kept_total)
        if not reduces:
            self.line(1, "start = cuda.grid(1)")
            self.line(1, "stride = cuda.gridsize(1)")
            first = "start"
            if vector is not None:
                self.render_vector(vector)
                first = f"groups * {vector.width} + start"
            self.line(1, f"for linear in range({first}, {kept_total}, stride):")
            offsets = self.offsets(2, kept, "linear", "o")
            self.body(2, offsets, accumulate=False)
        elif accumulates_in_memory(kernel):
            self.render_columns(kept, reduced, kept_total)
        else:
            self.render_reducing(kept, reduced, kept_total)
        self.line(1, "return")
        split = [index for index, output in enumerate(kernel.outputs)
                 if output.reduce and self.splits > 1]
        wide = tuple(index for index in split if self.wide(kernel.outputs[index]))
        zeroed = tuple(index for index in split if index not in wide)
        # The signature last: which wider arrays a split sum adds into, and whether a step
        # can report an error (`status`), are known by now.
        parameters = self.arrays + [f"wide{index}" for index in wide] + \
            (["groups"] if vector else []) + (["status"] if self.checks else [])
        self.lines.insert(0, f"def {self.name}({', '.join(parameters)}):")
        total = self.tiles if reduces else kept_total
        width, arrays, groups = (vector.width, vector.arrays, vector.groups) if vector \
            else (0, (), 0)
        return RenderedCuda(self.name, "\n".join(self.lines) + "\n", reduces,
                            total * self.splits, self.block, zeroed, wide, width, arrays,
                            groups, self.checks)

    def offsets(self, depth, levels, linear, prefix) -> list:
        """Lines turning `linear` (C order over `levels`) into one offset per array."""
        count = len(self.arrays)
        if not levels:
            return ["0"] * count
        names = []
        rest = linear
        for position in range(len(levels) - 1, -1, -1):
            extent = levels[position][0]
            index = f"{prefix}i{position}"
            if position == 0:
                self.line(depth, f"{index} = {rest}")
            else:
                self.line(depth, f"{index} = {rest} % {extent}")
                self.line(depth, f"{prefix}r{position} = {rest} // {extent}")
                rest = f"{prefix}r{position}"
            names.append(index)
        names.reverse()
        result = []
        for array in range(count):
            terms = [f"{name} * {level[1][array]}" if level[1][array] != 1 else name
                     for name, level in zip(names, levels) if level[1][array] != 0]
            result.append(" + ".join(terms) if terms else "0")
        return result

    def steps(self, depth: int, load, suffix: str = "") -> list:
        """Lines computing the kernel's steps, as (text, dtype) per step: `load(index)` gives
        an input's text (emitting its load on first use), `suffix` ends the values' names."""
        kernel = self.kernel
        values = []
        for position, step in enumerate(kernel.steps):
            operands = []
            for operand in step.operands:
                if operand.kind == "input":
                    text, dtype = load(operand.index), kernel.inputs[operand.index].dtype
                elif operand.kind == "step":
                    text, dtype = values[operand.index]
                else:
                    dtype = step.compute_dtype or dtypes.scalar_dtype(operand.index)
                    text = literal(operand.index, dtype)
                if step.compute_dtype is not None and dtype is not step.compute_dtype:
                    text = f"{cast_name(step.compute_dtype)}({text})"
                operands.append(text)
            walker = CudaExpression(step, operands)
            expression = walker.emit(parse(step.op.lowering.expression))
            self.checks = self.checks or walker.reports
            name = f"v{position}{suffix}"
            self.line(depth, f"{name} = {cast_name(step.out_dtype)}({expression})")
            values.append((name, step.out_dtype))
        return values

    def body(self, depth, offsets, accumulate) -> None:
        kernel = self.kernel
        loaded: dict = {}

        def load(index: int) -> str:
            if index not in loaded:
                self.line(depth, f"x{index} = in{index}[{offsets[index]}]")
                loaded[index] = f"x{index}"
            return loaded[index]

        values = self.steps(depth, load)
        first_output = len(kernel.inputs)
        for index, output in enumerate(kernel.outputs):
            value = f"{cast_name(output.dtype)}({values[output.step][0]})"
            if output.reduce is None:
                self.line(depth, f"out{index}[{offsets[first_output + index]}] = {value}")
            elif accumulate and self.wide(output):  # a partial sum of the chunk (a sum)
                self.line(depth, f"part{index} = "
                          f"{cast_name(output.dtype)}(part{index} + {value})")
            elif accumulate:
                self.line(depth, f"acc{index} = "
                          f"{self.combine(output, f'acc{index}', self.widen(output, value))}")

    # ---- the vector path of elementwise kernels -----------------------------------------------

    def vector_plan(self, kept, total) -> VectorPlan | None:
        """The vector path of an elementwise kernel whose innermost loop every array walks
        contiguously or not at all, else None.

        Each thread then takes `width` adjacent elements at a time: arrays walking the loop
        (bools aside: their memory type is not their value type) are read and written with
        one vector access, arrays broadcast along it are read once. The width fills 16 bytes
        of the widest such array, at most 4 elements. Group starts must be multiples of the
        width in every vector array (so that one aligned start aligns them all): with one
        loop the elements past the last whole group run scalar, with more the innermost
        extent must divide."""
        if not kept:
            return None
        extent, strides, _ = kept[-1]
        array_dtypes = [entry.dtype for entry in self.kernel.inputs] + \
            [output.dtype for output in self.kernel.outputs]
        if any(stride not in (0, 1) for stride in strides):
            return None
        vector = tuple(index for index, stride in enumerate(strides)
                       if stride == 1 and array_dtypes[index] is not dtypes.bool_)
        if not vector:
            return None
        width = min(4, 16 // max(array_dtypes[index].itemsize for index in vector))
        if width < 2 or total < width or (len(kept) > 1 and extent % width):
            return None
        if any(level[1][index] % width for level in kept[:-1] for index in vector):
            return None
        loops = [*kept[:-1], (extent // width, tuple(stride * width for stride in strides),
                              False)]
        return VectorPlan(width, loops, vector, total // width)

    def render_vector(self, plan: VectorPlan) -> None:
        """The grid-stride loop over vector groups, before the scalar loop: a thread's `width`
        elements are loaded, computed lane by lane and stored together."""
        kernel, width, vector = self.kernel, plan.width, plan.arrays
        strides = [stride // width for stride in plan.loops[-1][1]]  # the innermost loop's
        self.line(1, "for group in range(start, groups, stride):")
        offsets = self.offsets(2, plan.loops, "group", "g")
        count = len(kernel.inputs)
        lanes = range(width)

        def at(index: int, lane: int) -> str:
            return offsets[index] if not lane else \
                (f"{offsets[index]} + {lane}" if offsets[index] != "0" else str(lane))

        used = sorted({operand.index for step in kernel.steps for operand in step.operands
                       if operand.kind == "input"})
        for index in used:
            if index in vector:
                names = ", ".join(f"x{index}_{lane}" for lane in lanes)
                self.line(2, f"{names} = load_vector{width}(in{index}, {offsets[index]})")
            elif strides[index] == 0:
                self.line(2, f"x{index} = in{index}[{offsets[index]}]")
            else:
                for lane in lanes:
                    self.line(2, f"x{index}_{lane} = in{index}[{at(index, lane)}]")
        lane_values = []
        for lane in lanes:
            def load(index: int, lane=lane) -> str:
                return f"x{index}" if strides[index] == 0 else f"x{index}_{lane}"

            lane_values.append(self.steps(2, load, suffix=f"_{lane}"))
        for index, output in enumerate(kernel.outputs):
            cast = cast_name(output.dtype)
            values = [f"{cast}({lane_values[lane][output.step][0]})" for lane in lanes]
            array = count + index
            if array in vector:
                self.line(2, f"store_vector{width}(out{index}, {offsets[array]}, "
                          f"({', '.join(values)}))")
            else:
                for lane in lanes:
                    self.line(2, f"out{index}[{at(array, lane)}] = {values[lane]}")

    # ---- reductions ---------------------------------------------------------------------------

    @staticmethod
    def accumulator_dtype(output):
        # bool accumulators are int32 0/1: shuffles and shared memory take no bools.
        return dtypes.int32 if output.dtype is dtypes.bool_ else accumulator_dtype(output)

    @staticmethod
    def wide(output) -> bool:
        """Whether the output accumulates in a wider dtype than its own (a float32 sum)."""
        return output.dtype is not dtypes.bool_ and accumulator_dtype(output) is not output.dtype

    def widen(self, output, value: str) -> str:
        return f"{cast_name(self.accumulator_dtype(output))}({value})" \
            if self.accumulator_dtype(output) is not output.dtype else value

    def identity(self, output) -> str:
        dtype = self.accumulator_dtype(output)
        value = identity_value(output.reduce, dtypes.bool_ if output.dtype is dtypes.bool_
                               else dtype)
        return literal(int(value) if isinstance(value, bool) else value, dtype)

    def combine(self, output, left: str, right: str) -> str:
        cast = cast_name(self.accumulator_dtype(output))
        if output.reduce == "sum":
            return f"{cast}({left} + {right})"
        if output.reduce == "prod":
            return f"{cast}({left} * {right})"
        return f"{'maximum_' if output.reduce == 'max' else 'minimum_'}({left}, {right})"

    def declare_shared(self, outputs: list) -> None:
        """A block-wide shared array per reduced output, for the partial results."""
        for index, output in outputs:
            self.line(1, f"shared{index} = cuda.shared.array({self.block}, "
                      f"{CAST[self.accumulator_dtype(output)]})")

    def fold_partials(self, outputs: list, kept_offsets: list, reduced, first: str, total: int,
                      step: int, guard: str | None = None) -> None:
        """Each thread folds the reduced positions first, first + step, ... below total
        (under `guard` when given) into its accumulators, and leaves them in the shared arrays
        for the block's tree. Sums with a wider accumulator add CHUNK positions at a time
        into a partial sum in their own dtype, then the partial sum into the accumulator."""
        for index, output in outputs:
            self.line(2, f"acc{index} = {self.identity(output)}")
        depth = 2
        if guard is not None:
            self.line(2, f"if {guard}:")
            depth = 3
        wide = [(index, output) for index, output in outputs if self.wide(output)]
        if wide:
            self.line(depth, f"for chunk in range({first}, {total}, {step * CHUNK}):")
            depth += 1
            for index, output in wide:
                self.line(depth, f"part{index} = {literal(0, output.dtype)}")
            self.line(depth, f"for linear in range(chunk, min(chunk + {step * CHUNK}, {total}), "
                      f"{step}):")
        else:
            self.line(depth, f"for linear in range({first}, {total}, {step}):")
        inner = self.offsets(depth + 1, reduced, "linear", "r")
        offsets = [f"{a} + {b}" if a != "0" and b != "0" else (b if a == "0" else a)
                   for a, b in zip(kept_offsets, inner)]
        self.body(depth + 1, offsets, accumulate=True)
        for index, output in wide:
            self.line(depth, f"acc{index} = "
                      f"{self.combine(output, f'acc{index}', self.widen(output, f'part{index}'))}")
        for index, _ in outputs:
            self.line(2, f"shared{index}[thread] = acc{index}")
        self.line(2, "cuda.syncthreads()")

    def store_results(self, outputs: list, kept_offsets: list, condition: str, slot: str,
                      splits: int) -> None:
        """Where `condition` holds, each reduced output's result (shared[slot]) is stored at
        its kept position, or added atomically when several blocks share the position."""
        first_output = len(self.kernel.inputs)
        self.line(2, f"if {condition}:")
        for index, output in outputs:
            offset = kept_offsets[first_output + index]
            value = f"{cast_name(output.dtype)}(shared{index}[{slot}])"
            if splits > 1 and self.wide(output):  # rounded once all blocks have added
                self.line(3, f"cuda.atomic.add(wide{index}, {offset}, shared{index}[{slot}])")
            elif splits > 1:
                self.line(3, f"cuda.atomic.add(out{index}, {offset}, {value})")
            else:
                self.line(3, f"out{index}[{offset}] = {value}")
        self.line(2, "cuda.syncthreads()")

    def render_reducing(self, kept, reduced, kept_total) -> None:
        kernel, block = self.kernel, self.block
        reduced_total = math.prod(level[0] for level in reduced)
        outputs = [(index, output) for index, output in enumerate(kernel.outputs)
                   if output.reduce is not None]
        self.line(1, "thread = cuda.threadIdx.x")
        self.declare_shared(outputs)
        # Few kept positions over many reduced ones (a full sum): one block each would leave
        # the GPU idle, so each kept position's range is split over several blocks that add
        # their partial sums atomically into the zeroed output.
        splits = 1
        if all(output.reduce == "sum" and output.dtype in ATOMIC_SUM for _, output in outputs):
            splits = max(1, min(-(-reduced_total // (block * 8)),
                                self.max_blocks // max(kept_total, 1)))
        self.splits = splits
        self.tiles = kept_total
        if splits == 1:
            self.line(1, f"for kept in range(cuda.blockIdx.x, {kept_total}, cuda.gridDim.x):")
            first = "thread"
        else:
            self.line(1, f"for work in range(cuda.blockIdx.x, {kept_total * splits}, "
                      "cuda.gridDim.x):")
            self.line(2, f"kept = work % {kept_total}")
            first = f"work // {kept_total} * {block} + thread"
        kept_offsets = self.offsets(2, kept, "kept", "k")
        self.fold_partials(outputs, kept_offsets, reduced, first, reduced_total, block * splits)
        width = block // 2
        # numba's shfl_down_sync moves 32- and 64-bit ints and floats only: a uint8 max
        # finishes its tree in shared memory.
        shuffles = all(self.accumulator_dtype(output).itemsize in (4, 8) for _, output in outputs)
        floor = 32 if self.warp_shuffle and shuffles and block >= 64 else 0
        while width >= max(floor, 1):
            self.line(2, f"if thread < {width}:")
            for index, output in outputs:
                self.line(3, f"shared{index}[thread] = "
                          f"{self.combine(output, f'shared{index}[thread]', f'shared{index}[thread + {width}]')}")  # noqa: E501
            self.line(2, "cuda.syncthreads()")
            width //= 2
        if floor:
            # The last 32 partial results live in one warp: shuffles need no shared memory
            # and no barriers.
            self.line(2, "if thread < 32:")
            for index, _ in outputs:
                self.line(3, f"value{index} = shared{index}[thread]")
            offset = 16
            while offset >= 1:
                for index, output in outputs:
                    shuffled = f"cuda.shfl_down_sync(0xffffffff, value{index}, {offset})"
                    self.line(3, f"value{index} = "
                              f"{self.combine(output, f'value{index}', shuffled)}")
                offset //= 2
            self.line(3, "if thread == 0:")
            for index, _ in outputs:
                self.line(4, f"shared{index}[0] = value{index}")
            self.line(2, "cuda.syncthreads()")
        self.store_results(outputs, kept_offsets, "thread == 0", "0", splits)

    def render_columns(self, kept, reduced, kept_total) -> None:
        """A reduction over outer axes only (a column sum, a bias gradient), in memory order.

        A block covers a tile of `width` adjacent kept positions (columns) by `rows` threads
        each: thread (row, lane) folds the reduced positions row, row + rows, ... of column
        lane, so at each step the lanes of a warp read adjacent addresses (coalesced), where
        one block per column would stride through memory one row length per thread. The rows'
        partial results meet in shared memory (a tree over rows); sums over tall matrices
        with few tiles are also split over blocks that add atomically, as in the row path."""
        kernel, block = self.kernel, self.block
        reduced_total = math.prod(level[0] for level in reduced)
        outputs = [(index, output) for index, output in enumerate(kernel.outputs)
                   if output.reduce is not None]
        width = min(block, 32, 1 << max(kept_total - 1, 0).bit_length())
        rows = block // width
        tiles = -(-kept_total // width)
        splits = 1
        if all(output.reduce == "sum" and output.dtype in ATOMIC_SUM for _, output in outputs):
            splits = max(1, min(-(-reduced_total // (rows * 8)), self.max_blocks // max(tiles, 1)))
        self.splits, self.tiles = splits, tiles
        self.line(1, "thread = cuda.threadIdx.x")
        self.line(1, f"lane = thread % {width}")
        self.line(1, f"row = thread // {width}")
        self.declare_shared(outputs)
        self.line(1, f"for work in range(cuda.blockIdx.x, {tiles * splits}, cuda.gridDim.x):")
        if splits == 1:
            self.line(2, f"kept = work * {width} + lane")
            first = "row"
        else:
            self.line(2, f"kept = work % {tiles} * {width} + lane")
            first = f"work // {tiles} * {rows} + row"
        # Offsets of positions past the last column are computed but never used: every thread
        # must reach the barriers below.
        kept_offsets = self.offsets(2, kept, "kept", "k")
        self.fold_partials(outputs, kept_offsets, reduced, first, reduced_total, rows * splits,
                           guard=f"kept < {kept_total}")
        half = rows // 2
        while half >= 1:
            self.line(2, f"if row < {half}:")
            for index, output in outputs:
                partner = f"shared{index}[thread + {half * width}]"
                self.line(3, f"shared{index}[thread] = "
                          f"{self.combine(output, f'shared{index}[thread]', partner)}")
            self.line(2, "cuda.syncthreads()")
            half //= 2
        self.store_results(outputs, kept_offsets, f"row == 0 and kept < {kept_total}", "thread",
                           splits)


def render(kernel: Kernel, name: str | None = None, block: int = 256,
           warp_shuffle: bool = True, max_blocks: int = 4096) -> RenderedCuda:
    """The kernel as Python source defining `def NAME(in0, ..., out0, ...)` for numba.cuda.
    `max_blocks` bounds the blocks a split reduction asks for."""
    symbol = "".join(c if c.isalnum() else "_" for c in (name or kernel.name or "kernel"))
    return CudaRenderer(kernel, symbol, block, warp_shuffle, max_blocks).render()
