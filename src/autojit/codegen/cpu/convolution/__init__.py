"""Native convolutions: the forward product and both backward products of the convolution primitives
(ops/nn/convolution.py) for float32 and float64, on every core, for eager calls and compiled plans
alike (docs/notes/convolution.md). This package's other modules: ir.py and weight_ir.py (the LLVM IR
of these routines), channels.py and channels_ir.py (the products vectorized over channels, for small
output grids), depthwise.py (depthwise products, channels in the lanes), gemm.py and gemm_ir.py
(large weights on few output positions as one gemm of the gathered windows).

A convolution's geometry (shapes, strides, padding, dilation, groups) becomes, once, the
integer tables the routines of ir.py read: how an image is laid out in scratch
memory (rows copied with zeros around them, split by stride phase so that every product reads
unit-stride rows), the jobs (a group, and for the input gradient a stride phase of the
input), each job's (weight offset, source offset) pair per k, and where each grid position
lands in the output. `Geometry.run` calls the routine with the operands' addresses, one part
per core (workers.py): images for the forward product and the input gradient, chunks of
images for the weight gradient, whose float64 partial sums are then added in chunk order.

The chunks of the weight gradient depend only on the shapes, never on the thread count, so a
result is the same whatever autojit.set_num_threads says and whether it ran eagerly or
compiled.

Where the output grid is small beside a panel of positions (a 4x4 image), `geometry` returns
channels.py's ChannelGeometry instead, built on this module's tables, whose
routines put output channels in the lanes.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import math

import numpy as np

from .. import workers
from .ir import (
    MODULES,
    TILES,
    TYPES,
    lanes,
    render_module,
)

# The most k's of a block: each tile of rows sums a block of k's of a panel, then adds it into
# the panel's stage.
_BLOCK_DEPTH = 256
# A lane of a weight tile's accumulators sums at most about this many products of a chunk in
# float32 before they are added into float64 (positions / lanes, times images).
_CHUNK_TERMS = 16384
# The bytes of a chunk's rows that a weight tile reads, at most (about L1's size: 48 KiB here;
# at 48 the 32->32 gradient on 16x16 images took chunks of 7, against 8 at 56, 5% faster).
_WEIGHT_BYTES = 56 << 10
_CALL = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)
_state: dict = {}


def supported(dtype) -> bool:
    return np.dtype(dtype) in TYPES


def available(dtype) -> bool:
    """Whether the routines of this dtype can be made here (compiles the products' module on
    first use, and starts the weight gradient's on a compile thread)."""
    return supported(dtype) and _functions(dtype, "products") is not None


def _functions(dtype, module: str) -> dict | None:
    """{entry point name: address} of `module` (convolution_ir.MODULES), compiled once per
    process (or loaded from the kernel disk cache), or None where no native code can be made.
    The first ask for a dtype's products starts its weight module on a compile thread: a
    training step's backward asks for it a moment later."""
    dtype = np.dtype(dtype)
    found = _state.get((dtype, module))
    if found is None:
        try:
            from ..helper_modules import compile_module, prefetch_module
        except ImportError:  # no llvmlite: the NumPy impl runs instead
            found = {}
        else:
            if module == "products":
                other, other_names = render_module(dtype, wide(), "weight")
                prefetch_module(other, other_names, ("convolution", other))
            text, names = render_module(dtype, wide(), module)
            addresses = compile_module(text, names, ("convolution", text))
            found = dict(zip(MODULES[module], addresses, strict=True))
        _state[(dtype, module)] = found
    return found or None


def wide() -> bool:
    """Whether the routines take AVX-512's tiles (32 vector registers) or AVX2's (16)."""
    found = _state.get("wide")
    if found is None:
        from ..llvm.host import has_avx512

        found = _state["wide"] = has_avx512()
    return found


def _three(values, fill) -> tuple:
    return (fill,) * (3 - len(values)) + tuple(values)


class _Spatial:
    """A convolution's spatial geometry over three dims (missing leading dims of size 1)."""

    def __init__(self, sizes, kernel, attrs):
        spatial = len(attrs["stride"])
        self.sizes = _three(sizes, 1)
        self.kernel = _three(kernel, 1)
        self.stride = _three(attrs["stride"], 1)
        self.dilation = _three(attrs["dilation"], 1)
        self.padding = ((0, 0),) * (3 - spatial) + tuple(tuple(p) for p in attrs["padding"])
        self.out = tuple((n + lo + hi - d * (k - 1) - 1) // s + 1 for n, k, s, (lo, hi), d in
                         zip(self.sizes, self.kernel, self.stride, self.padding,
                             self.dilation, strict=True))
        self.taps = math.prod(self.kernel)


class _Layout:
    """The source image laid out for the forward and weight products: each channel's padded
    image split into the stride phases some tap reads (a 1x1 convolution of stride 2 reads
    one of four), phase (pd, ph, pw) holding padded[s * q + phase].

    Without a stride across them, rows share their padding columns: a row is max(lo, hi)
    zeros, then the image's row, and the columns right of a row that a tap reads are the
    next row's zeros (rows of 33 rather than 34 positions for a 32-wide image padded by 1 on
    each side; the grid's positions past each output row are computed and dropped, so 3% of a
    32x32 product's work, 6% of a 16x16 one's). `extra` is how much later than in the padded
    image each row's data starts."""

    def __init__(self, space: _Spatial):
        self.used = tuple(sorted({k * d % s for k in range(kernel)}) for kernel, d, s in
                          zip(space.kernel, space.dilation, space.stride, strict=True))
        self.q = tuple(-(-(n + lo + hi) // s) for n, (lo, hi), s in
                       zip(space.sizes, space.padding, space.stride, strict=True))
        self.extra = 0
        lo_w, hi_w = space.padding[2]
        # Shared only where an output row still fits in a row (padding beyond the kernel's
        # reach widens the output past it).
        if space.stride[2] == 1 and space.out[2] <= space.sizes[2] + max(lo_w, hi_w):
            self.q = (*self.q[:2], space.sizes[2] + max(lo_w, hi_w))
            self.extra = max(lo_w, hi_w) - lo_w
        self.plane = math.prod(self.q)
        self.channel = math.prod(len(used) for used in self.used) * self.plane
        records = []
        depth, height, width = space.sizes
        (lo_d, _), (lo_h, _), (lo_w, _) = space.padding
        s_w, q_d, q_h, q_w = space.stride[2], *self.q
        for phase, (pd, ph, pw) in enumerate(itertools.product(*self.used)):
            for qd in range(q_d):
                for qh in range(q_h):
                    dst = phase * self.plane + (qd * q_h + qh) * q_w
                    a_d, a_h = space.stride[0] * qd + pd - lo_d, space.stride[1] * qh + ph - lo_h
                    first = max(0, -(-(lo_w - pw) // s_w))
                    last = min(q_w - 1, (lo_w + width - 1 - pw) // s_w)
                    if not (0 <= a_d < depth and 0 <= a_h < height) or last < first:
                        records.append((dst, 0, q_w, 0, 0, 1))
                        continue
                    count = last - first + 1
                    source = (a_d * height + a_h) * width + s_w * first + pw - lo_w
                    records.append((dst, source, first + self.extra, count,
                                    q_w - first - self.extra - count, s_w))
        self.records = _blocks(records)
        # grid position of output (od, oh, ow): (od * q_h + oh) * q_w + ow
        out = space.out
        self.grid = ((out[0] - 1) * q_h + out[1] - 1) * q_w + out[2]

    def offset(self, space: _Spatial, channel: int, tap: tuple) -> int:
        """Where tap (kd, kh, kw) of a channel reads the grid's first position."""
        phase, shift = 0, 0
        for k, d, s, q, used in zip(tap, space.dilation, space.stride, self.q, self.used,
                                    strict=True):
            phase, shift = phase * len(used) + used.index(k * d % s), shift * q + k * d // s
        return channel * self.channel + phase * self.plane + shift + self.extra


def _blocks(rows: list) -> list:
    """Prepare records (convolution_ir.RECORD) from rows (dst, src, left, count, right, step):
    runs of rows alike but for their positions, equally spaced, become one record."""
    records: list = []
    for row in rows:
        if records:
            dst, src, left, count, right, step, number, dst_pitch, src_pitch = records[-1]
            if (left, count, right, step) == row[2:]:
                row_dst, row_src = row[0] - dst, (row[1] - src) if count else 0
                if number == 1 or (row_dst == number * dst_pitch and
                                   row_src == number * src_pitch):
                    if number == 1:
                        dst_pitch, src_pitch = row_dst, row_src
                    records[-1] = (dst, src, left, count, right, step, number + 1, dst_pitch,
                                   src_pitch)
                    continue
        records.append((*row, 1, 0, 0))
    return records


def _block(depth: int) -> int:
    """The k's of each block of a job of this depth: equal blocks of at most _BLOCK_DEPTH
    (one block for 0)."""
    blocks = max(1, -(-depth // _BLOCK_DEPTH))
    return max(1, -(-depth // blocks))


def _table(header: list, *sections) -> tuple:
    """An int64 table: header words, then each section's words; (table, section starts)."""
    starts, words = [], list(header)
    for section in sections:
        starts.append(len(words))
        words.extend(int(word) for row in section for word in row)
    return np.array(words, np.int64), starts


class Geometry:
    """The tables and scratch sizes of one convolution product (kind "forward", "input" or
    "weight") for operands of these shapes and dtype; made once per geometry (`geometry`)."""

    def __init__(self, kind: str, first: tuple, second: tuple, attrs: dict, dtype):
        self.kind, self.dtype, self.attrs = kind, np.dtype(dtype), attrs
        count = lanes(self.dtype, wide())
        self.panel = 2 * count
        self.groups = groups = attrs["groups"]
        if kind == "forward":
            self._forward(first, second, groups)
        elif kind == "input":
            self._input(first, second, groups, attrs)
        else:
            self._weight(first, second, groups, attrs, count)
        self.table_address = self.table.ctypes.data

    # ---- forward -------------------------------------------------------------------------

    def _forward(self, x: tuple, w: tuple, groups: int) -> None:
        batch, channels = x[:2]
        out_channels, per_group = w[:2]
        space = self.space = _Spatial(x[2:], w[2:], self.attrs)
        layout = _Layout(space)
        rows = out_channels // groups
        depth = per_group * space.taps
        pairs = [(k, layout.offset(space, channel, tap)) for k, (channel, tap) in enumerate(
            itertools.product(range(per_group),
                              itertools.product(*(range(k) for k in space.kernel))))]
        out_plane = math.prod(space.out)
        _, q_h, q_w = layout.q
        jobs = [(rows, depth, group * rows * depth, depth, group * per_group * layout.channel,
                 0, layout.grid, q_h * q_w, q_w, space.out[1], space.out[2],
                 group * rows * out_plane, space.out[1] * space.out[2], space.out[2], 1,
                 out_plane, group * rows * depth, _block(depth)) for group in range(groups)]
        reach = (groups - 1) * per_group * layout.channel + max(b for _, b in pairs)
        size = max(channels * layout.channel, reach + self._panels(layout.grid))
        self.table, (records, job_at, pair_at) = _table(
            [channels, math.prod(space.sizes), layout.channel, len(layout.records), 0,
             channels * layout.channel, size, len(jobs), 0, 0,
             *self._part_layout(size, out_channels * depth, rows, jobs), 0],
            layout.records, jobs, pairs)
        self.table[4], self.table[8], self.table[9] = records, job_at, pair_at
        self.out_shape = (batch, out_channels, *space.out[3 - (len(x) - 2):])
        self.source_image = channels * math.prod(space.sizes)
        self.out_image = out_channels * out_plane
        self.batch = batch

    def _panels(self, grid: int) -> int:
        return -(-grid // self.panel) * self.panel

    def _part_layout(self, source: int, packed: int, rows: int, jobs: list) -> tuple:
        """(packed_at, stage_at) of a part's scratch for the products, each region on a cache
        line; sets part_scratch."""
        line = 64 // self.dtype.itemsize

        def up(count: int) -> int:
            return -(-count // line) * line

        packed_at = up(source)
        stage_at = up(packed_at + packed)
        self.part_scratch = up(stage_at + rows * self.panel)
        return packed_at, stage_at

    # ---- input gradient ----------------------------------------------------------------

    def _input(self, g: tuple, w: tuple, groups: int, attrs: dict) -> None:
        batch, out_channels = g[:2]
        per_group = w[1]
        space = self.space = _Spatial(attrs["input_size"], w[2:], attrs)
        q = tuple(d * (k - 1) // s for k, d, s in zip(space.kernel, space.dilation,
                                                      space.stride, strict=True))
        # Per dim and phase r: the taps reaching it, each tap's shift, and the phase's range
        # of positions t (padded position r + s t).
        dims = []
        for n, k, s, d, (lo, _) in zip(space.sizes, space.kernel, space.stride,
                                       space.dilation, space.padding, strict=True):
            phases = []
            for r in range(s):
                taps = [(tap, (tap * d - r) // s) for tap in range(k) if (tap * d - r) % s == 0]
                first, last = -((r - lo) // s), (lo + n - 1 - r) // s
                phases.append((r, taps, first, max(0, last - first + 1), last))
            dims.append(phases)
        # The gradient laid out with `q - lead` zeros before it: no phase's positions start
        # before its `first`, so the `lead` columns before the least of them are never read
        # (3x3, padding 1: rows of 10 for an 8x8 gradient, not 11).
        lead = tuple(min(qi, min((phase[2] for phase in phases if phase[3]), default=0))
                     for qi, phases in zip(q, dims, strict=True))
        q = tuple(qi - li for qi, li in zip(q, lead, strict=True))
        extents = tuple(qi + max(o, max(phase[4] for phase in phases) + 1)
                        for qi, o, phases in zip(q, space.out, dims, strict=True))
        # Without a stride across them, rows share their zero columns (as _Layout's): a tap
        # right of a row reads the next row's leading zeros, where there are enough of them
        # and a row of positions still fits.
        if space.stride[2] == 1:
            (_, _, _, count_w, last_w), = dims[2]
            shared = q[2] + space.out[2]
            if count_w and last_w + 1 <= shared and count_w <= shared:
                extents = (*extents[:2], shared)
        r_d, r_h, r_w = extents
        channel = r_d * r_h * r_w
        records = []
        o_d, o_h, o_w = space.out
        for i_d in range(r_d):
            for i_h in range(r_h):
                dst = (i_d * r_h + i_h) * r_w
                a_d, a_h = i_d - q[0], i_h - q[1]
                if 0 <= a_d < o_d and 0 <= a_h < o_h:
                    records.append((dst, (a_d * o_h + a_h) * o_w, q[2], o_w, r_w - q[2] - o_w, 1))
                else:
                    records.append((dst, 0, r_w, 0, 0, 1))
        records = _blocks(records)
        rows = out_channels // groups
        taps_per_channel = space.taps
        depth_of_x = per_group * math.prod(space.sizes)
        sizes = space.sizes
        jobs, pairs, reach, packed, unreached = [], [], 0, 0, False
        for phase in itertools.product(*dims):
            if any(count == 0 for _, _, _, count, _ in phase):
                continue
            start = len(pairs)
            for o in range(rows):
                for tap in itertools.product(*(taps for _, taps, _, _, _ in phase)):
                    index = 0
                    for (k, _), size in zip(tap, space.kernel, strict=True):
                        index = index * size + k
                    shift = 0
                    for (_, shift_k), (_, _, first, _, _), qi, extent in zip(
                            tap, phase, q, extents, strict=True):
                        shift = shift * extent + first - shift_k + qi
                    pairs.append((o * per_group * taps_per_channel + index,
                                  o * channel + shift))
            depth = len(pairs) - start
            if not depth:  # no tap reaches these positions: zeros, from zero_output
                unreached = True
                continue
            counts = [count for _, _, _, count, _ in phase]
            grid = ((counts[0] - 1) * r_h + counts[1] - 1) * r_w + counts[2]
            corner = [r + s * first - lo for (r, _, first, _, _), s, (lo, _) in
                      zip(phase, space.stride, space.padding, strict=True)]
            at = (corner[0] * sizes[1] + corner[1]) * sizes[2] + corner[2]
            for group in range(groups):
                b_at = group * rows * channel
                reach = max(reach, b_at + max(b for _, b in pairs[start:]) +
                            self._panels(grid))
                jobs.append((per_group, depth, group * rows * per_group * taps_per_channel,
                             taps_per_channel, b_at, start, grid, r_h * r_w, r_w, counts[1],
                             counts[2], group * depth_of_x + at,
                             space.stride[0] * sizes[1] * sizes[2],
                             space.stride[1] * sizes[2], space.stride[2],
                             math.prod(sizes), packed, _block(depth)))
                packed += per_group * depth
        size = max(out_channels * channel, reach)
        self.table, (record_at, job_at, pair_at) = _table(
            [out_channels, math.prod(space.out), channel, len(records), 0,
             out_channels * channel, size, len(jobs), 0, 0,
             *self._part_layout(size, packed, per_group, jobs), int(unreached)],
            records, jobs, pairs or [(0, 0)])
        self.table[4], self.table[8], self.table[9] = record_at, job_at, pair_at
        spatial = len(attrs["stride"])
        self.out_shape = (batch, per_group * groups, *space.sizes[3 - spatial:])
        self.source_image = out_channels * math.prod(space.out)
        self.out_image = per_group * groups * math.prod(sizes)
        self.batch = batch

    # ---- weight gradient -----------------------------------------------------------------

    def _weight(self, x: tuple, g: tuple, groups: int, attrs: dict, lanes: int) -> None:
        batch, channels = x[:2]
        out_channels = g[1]
        space = self.space = _Spatial(x[2:], attrs["kernel_size"], attrs)
        layout = _Layout(space)
        per_group = channels // groups
        columns = per_group * space.taps
        offsets = [(layout.offset(space, c, tap),) for c, tap in itertools.product(
            range(per_group), itertools.product(*(range(k) for k in space.kernel)))]
        grid = -(-layout.grid // lanes) * lanes
        _, q_h, q_w = layout.q
        o_d, o_h, o_w = space.out
        grad_records, position = [], 0
        while position < grid:  # each grid row: the gradient's row, or zeros
            plane, within = divmod(position, q_h * q_w)
            row = within // q_w
            end = min(position + q_w, grid)
            if plane < o_d and row < o_h:
                count = min(o_w, end - position)
                grad_records.append((position, (plane * o_h + row) * o_w, 0, count,
                                     end - position - count, 1))
            else:
                grad_records.append((position, 0, end - position, 0, 0, 1))
            position = end
        grad_records = _blocks(grad_records)
        reach = (groups - 1) * per_group * layout.channel + max(o for o, in offsets) + grid
        image = max(channels * layout.channel, reach)
        # Chunks of images whose rows a weight tile reads stay in L1 from one tile to the
        # next (with strides, the 16->32 weight gradient on 32x32 images took 650 us in
        # chunks of 8 images, 470-490 in chunks of 4 or 5).
        streamed = self._streamed_rows(offsets, grid) * grid * self.dtype.itemsize
        chunk = max(1, min(-(-batch // 4), _CHUNK_TERMS * lanes // grid,
                           int(_WEIGHT_BYTES // streamed)))
        # Beyond 4 chunks, a multiple of 4, of equal images (the last may hold fewer), so
        # that 2 or 4 cores take equal shares.
        count = -(-batch // chunk)
        if count > 4:
            chunk = -(-batch // (-(-count // 4) * 4))
        self.chunks = -(-batch // chunk)
        self.table, (record_at, grad_at, offset_at) = _table(
            [channels, math.prod(space.sizes), layout.channel, len(layout.records), 0,
             channels * layout.channel, image, out_channels, math.prod(space.out), grid,
             len(grad_records), 0, groups, out_channels // groups, columns, 0,
             per_group * layout.channel, grid // lanes],
            layout.records, grad_records, offsets)
        self.table[4], self.table[11], self.table[15] = record_at, grad_at, offset_at
        spatial = len(attrs["stride"])
        self.out_shape = (out_channels, per_group, *space.kernel[3 - spatial:])
        self.source_image = channels * math.prod(space.sizes)
        self.grad_image = out_channels * math.prod(space.out)
        self.chunk = chunk
        self.part_scratch = chunk * (image + out_channels * grid)
        self.partial_size = out_channels * columns
        self.batch = batch

    @staticmethod
    def _streamed_rows(offsets: list, grid: int) -> float:
        """The rows of grid positions of each image a weight tile reads, on average over the
        tiles: the gradient's rows, and the union of its columns' source ranges (the taps
        of one channel and stride phase read the same row a few positions apart; with
        strides, each phase's taps read a plane of its own)."""
        rows, columns = TILES[wide()]["weight_rows"][0], TILES[wide()]["weight_columns"]
        spans = []
        for start in range(0, len(offsets), columns):
            covered, end = 0, None
            for offset in sorted(offset for offset, in offsets[start:start + columns]):
                if end is None or offset >= end:
                    covered += grid
                else:
                    covered += offset + grid - end
                end = offset + grid
            spans.append(covered / grid)
        return rows + sum(spans) / max(1, len(spans))

    # ---- running -------------------------------------------------------------------------

    @property
    def parts(self) -> int:
        """The parts a call is cut into: one per core (workers.py: the count is fixed per
        process, set_num_threads changes only how many threads take parts), at most one per
        image (the products) or per chunk (the weight gradient, whose chunks do not depend
        on it: a part sums its chunks in turn, each into its own partials)."""
        native = workers.shared()
        cores = native.parts if native is not None else 1
        return max(1, min(self.chunks if self.kind == "weight" else self.batch, cores))

    def scratch_elements(self) -> int:
        """The scratch the call needs, in elements of the dtype (partial sums included)."""
        total = self.parts * self.part_scratch
        if self.kind == "weight":
            total += -(-self.chunks * self.partial_size * 8 // self.dtype.itemsize)
        return total + 2 * 64 // self.dtype.itemsize  # room to align the start, partials

    def calls(self, first: np.ndarray, second: np.ndarray, out: np.ndarray,
              scratch: np.ndarray) -> list:
        """The native calls computing `out` from C-contiguous operands of the planned shapes:
        (function, argument words, positions of the words holding pointers, parts)."""
        functions = self.entry_points()
        address = workers.data_address
        itemsize = self.dtype.itemsize
        start = address(scratch)
        start += -start % 64
        if self.kind != "weight":
            words = [address(first), self.source_image, address(second), address(out),
                     self.out_image, start, self.part_scratch, self.table_address,
                     self.batch, self.parts]
            return [(functions["products"], words, (0, 2, 3, 5, 7), self.parts)]
        partials = start + self.parts * self.part_scratch * itemsize
        partials += -partials % 64
        words = [address(first), self.source_image, address(second), self.grad_image, start,
                 self.part_scratch, self.table_address, self.batch, self.chunk, partials,
                 self.partial_size]
        words += [self.chunks, self.parts]
        total = [partials, self.chunks, self.partial_size, self.partial_size, address(out)]
        return [(functions["weight"], words, (0, 2, 4, 6, 9), self.parts),
                (functions["weight_sum"], total, (0, 4), 1)]

    def entry_points(self) -> dict:
        """{routine: address} of the module whose routines compute this product."""
        return _functions(self.dtype, "products" if self.kind != "weight" else "weight")

    def run(self, first: np.ndarray, second: np.ndarray, out: np.ndarray,
            scratch: np.ndarray) -> None:
        self.run_calls(self.calls(first, second, out, scratch))

    @staticmethod
    def run_calls(calls: list) -> None:
        """Make `calls`' native calls, each part on whichever core claims it."""
        for function, words, _, parts in calls:
            argument = np.array(words, np.int64)
            native = workers.shared()
            if parts > 1 and native is not None:
                status = native.run(function, argument.ctypes.data, parts)
            else:
                call = _CALL(function)
                status = 0
                for part in range(parts):
                    status |= call(argument.ctypes.data, part)
            if status:
                raise RuntimeError(f"native convolution failed with status {status}")


@functools.lru_cache(maxsize=256)
def geometry(kind: str, first: tuple, second: tuple, attrs: tuple, dtype: str) -> Geometry:
    """The product's tables: for the routines vectorized over positions, or over channels
    where those compute much less (small images: channels.py); a depthwise product's for the
    routines of depthwise.py; a large weight's on few output positions as one gemm
    (gemm.py)."""
    from . import channels, gemm  # they build on this module's Geometry
    from .depthwise import DepthwiseGeometry, applies

    attrs = dict(attrs)
    if applies(kind, first, second, attrs["groups"]):
        return DepthwiseGeometry(kind, first, second, attrs, dtype, lanes(dtype, wide()))
    found = gemm.by_gemm(kind, first, second, attrs, dtype, channels.MODE)
    return found or channels.by_channels(Geometry(kind, first, second, attrs, dtype))


def attrs_key(attrs: dict) -> tuple:
    return tuple(sorted(attrs.items()))


def eager(kind: str, first: np.ndarray, second: np.ndarray, attrs: dict):
    """ops/nn/convolution.py's NATIVE: the product computed natively, or None where there is no
    native routine for these operands (dtype, empty arrays)."""
    dtype = first.dtype
    if second.dtype != dtype or not supported(dtype) or first.size == 0 or \
            second.size == 0 or _functions(dtype, "products") is None:
        return None
    found = geometry(kind, first.shape, second.shape, attrs_key(attrs), dtype.str)
    out = np.empty(found.out_shape, dtype)
    if out.size == 0:
        return None
    scratch = np.empty(found.scratch_elements(), dtype)
    found.run(np.ascontiguousarray(first), np.ascontiguousarray(second), out, scratch)
    return out
