"""Convolution products vectorized over channels, for small output grids: the tables that
channels_ir.py's routines read, made from a `convolution.Geometry` of the same
product (docs/notes/convolution.md, "Small images").

convolution/__init__.py's routines put output positions in the lanes, in panels of two vectors; an
image whose grid is a fraction of a panel (a 4x4 one padded by one is 19 positions of 32)
computes positions that are dropped. These routines put output channels in the lanes and one
existing position in each tile row, so they compute only what is kept, less the channels that
round up to whole vectors. `prefers_channels` compares the two counts of multiply-adds;
`convolution.geometry` takes a ChannelGeometry where they favour it.

The layout of each image (the records, the tap offsets, the input gradient's phases as jobs)
is the Geometry's, read back from its table; only the positions and the packing are new. The
weight gradient keeps the Geometry's chunks of images with their float64 partials added in
chunk order, or, with few terms (DIRECT_TERMS), sums every term in order straight into the
output; either way its result does not depend on the thread count. Products of a weight that
outweighs the images split its blocks of rows over the parts (`by_rows`), not the images.
"""

from __future__ import annotations

import math

import numpy as np

from .. import compile_threads, convolution, workers
from . import channels_ir as ir
from .ir import JOB, PRODUCTS_TABLE, RECORD_WORDS, WEIGHT_TABLE

# A tile computes what it keeps, but pays per position and k a broadcast load that a position
# panel does not, and per tile the stores of one channel at a time: with two vectors of
# channels that costs less than a panel's dropped positions (64 -> 64 channels on 8x8
# images, 64 of 80 computed positions kept: 1275 us against 1698 forward); with one vector,
# each broadcast feeds half the multiply-adds (16 -> 16 channels on 32x32 images: 2070 us
# against 1537), so those tiles count this much more (bench/conv_routines.py,
# docs/performance.md).
ONE_VECTOR_COST = 1.4
# The weight gradient's channel routine also transposes each image's gradient, a scalar load
# and store per element, about one vector multiply-add's time: beside the products' work (a
# vector of channels times `columns` multiply-adds per element) that adds lanes / columns.
# With 72 columns (8 input channels) it decides: 8 -> 32 channels on 12x12 images took 176 us
# on channels against 132 on positions; with 576 (64 -> 64 on 8x8) it does not (1420 against
# 1818). Counted twice, it sent 1-d products of 24 columns, 1.3x faster on channels, to
# positions (bench/conv_routines.py --sweep).
TRANSPOSE_COST = 1.0
# The position routine's weight gradient adds each chunk's sums into float64 partials of the
# whole weight (zeroed, added into a scalar at a time, summed in chunk order), about this many
# multiply-adds' time per weight and chunk: where the channel routine needs no partials (few
# terms: DIRECT_TERMS), they decide. 160 -> 640 channels on 4x4 images, batch 8 (4 chunks):
# 1993 us on positions against 851 on channels, the products' work alike.
PARTIALS_COST = 32.0
# Images laid out at once for the products, so that tiles of positions run across images:
# enough for this many full tiles of positions.
_GROUP_TILES = 4
# A lane of a tile's accumulators sums at most this many products in float32 (a chunk's
# images times their positions) before they are added into float64 (as convolution/__init__.py's).
_CHUNK_TERMS = 16384
# The weight gradient's terms (images times kept positions) up to which it is one product
# summed in the dtype straight into the output, as a chunk's sums are before they reach its
# float64 partials. With few terms, the partials' traffic (zeroed, added into and summed once
# per chunk) outweighs the products: 512 -> 512 channels on 2x2 images, batch 8 (32 terms per
# weight), took 22 ms in chunks and 2.5 as one product; 64 -> 64 on 16x16 (2048 terms) 1.1
# in chunks and 1.8 as one product (docs/notes/convolution.md).
DIRECT_TERMS = 512
# None: by prefers_channels; "positions" or "channels": always (the tests run both).
MODE: str | None = None
_state: dict = {}


def _up(count: int, step: int) -> int:
    return -(-count // step) * step


def _fields(table: np.ndarray, names: tuple, at: int = 0) -> dict:
    return {name: int(table[at + index]) for index, name in enumerate(names)}


def _jobs(geometry) -> list:
    """The products Geometry's jobs, each a dict of convolution_ir.JOB's words."""
    header = _fields(geometry.table, PRODUCTS_TABLE)
    return [_fields(geometry.table, JOB, header["jobs_at"] + index * len(JOB))
            for index in range(header["jobs"])]


def _positions(job: dict) -> list:
    """(grid offset, output offset) of each position of a job's grid that is kept."""
    found = []
    for j in range(job["grid"]):
        plane, within = divmod(j, job["grid_plane"])
        row, column = divmod(within, job["grid_row"])
        if row < job["valid_rows"] and column < job["valid_columns"]:
            found.append((j, plane * job["out_plane"] + row * job["out_row"] +
                          column * job["out_step"]))
    return found


def kept_count(job: dict) -> int:
    """len(_positions(job)) without listing them (a job's grid ends at its last kept
    position), for choosing a routine before any table is made."""
    planes = (job["grid"] - 1) // job["grid_plane"] + 1 if job["grid"] else 0
    return planes * job["valid_rows"] * job["valid_columns"]


def prefers_channels(geometry, lanes: int) -> bool:
    """Whether the channel routines compute the product at less cost than the Geometry's
    position panels: multiply-adds computed, kept or not, those of tiles one vector wide
    counted ONE_VECTOR_COST times, and the weight gradient's with its gradient's transposition
    (TRANSPOSE_COST). Groups of 1 only."""
    if geometry.groups != 1:
        return False
    panel = 2 * lanes

    def panels(grid: int) -> int:  # positions computed: whole panels, a narrow last one
        whole, left = divmod(grid, panel)
        return whole * panel + (0 if left == 0 else lanes if left <= lanes else panel)

    def channels(rows: int) -> float:  # channels computed, by the tiles' cost
        return _up(rows, lanes) * (1.0 if rows > lanes else ONE_VECTOR_COST)

    if geometry.kind == "weight":
        rows = geometry.out_shape[0]
        grid = int(geometry.table[WEIGHT_TABLE.index("grid")])  # rounded up to lanes
        columns = int(geometry.table[WEIGHT_TABLE.index("columns")])
        transposing = 1.0 + TRANSPOSE_COST * lanes / columns
        kept = math.prod(geometry.space.out)
        by_positions = rows * grid
        if geometry.batch * kept <= DIRECT_TERMS:  # the channels' sums need no partials
            by_positions += PARTIALS_COST * rows * geometry.chunks / geometry.batch
        return kept * channels(rows) * transposing < by_positions
    jobs = _jobs(geometry)
    by_positions = sum(job["rows"] * panels(job["grid"]) for job in jobs)
    by_channels = sum(kept_count(job) * channels(job["rows"]) for job in jobs)
    # Alike (a 1x1 product with no position dropped), the channels' tiles load the weight
    # once per tile of positions: the faster where the weight has more rows than k's
    # (bench/conv_routines.py --models: 80 -> 320 channels on 8x8 images 480 against 625 us
    # forward, 320 -> 80 808 against 656).
    return by_channels < by_positions or (by_channels == by_positions and all(
        job["rows"] > job["depth"] for job in jobs))


class ChannelGeometry(convolution.Geometry):
    """The tables and scratch of one convolution product (kind "forward", "input" or
    "weight") for the channel routines, from the Geometry of the same product; the same
    interface as Geometry (calls, run, scratch_elements, parts). `heights`: the tile heights
    by vectors of channels (convolution_channels_ir.HEIGHTS)."""

    def __init__(self, base, lanes: int, heights: dict):  # noqa: PLW0231 - from base
        self.kind, self.dtype, self.attrs = base.kind, base.dtype, base.attrs
        self.groups, self.space, self.batch = base.groups, base.space, base.batch
        self.out_shape, self.source_image = base.out_shape, base.source_image
        self.lanes, self.heights = lanes, heights
        line = 64 // self.dtype.itemsize
        self.direct = False
        if self.kind == "weight":
            self._weight(base, line)
        else:
            self._products(base, line)
        self.table_address = self.table.ctypes.data

    def _products(self, base, line: int) -> None:
        header = _fields(base.table, PRODUCTS_TABLE)
        records = base.table[header["records_at"]:
                             header["records_at"] + header["records"] * RECORD_WORDS]
        pairs = base.table[header["pairs_at"]:].reshape(-1, 2)
        jobs, positions, packed, reach = [], [], 0, header["slack_start"]
        for job in _jobs(base):
            kept = _positions(job)
            block = self.lanes * min(2, -(-job["rows"] // self.lanes))
            depth = job["depth"]
            jobs.append((job["rows"], depth, job["a_at"], job["a_row"], job["b_at"],
                         job["pairs"], len(positions), len(kept), job["out_at"],
                         job["out_channel"], packed, block))
            if depth and kept:
                shifts = pairs[job["pairs"]:job["pairs"] + depth, 1]
                reach = max(reach, job["b_at"] + max(g for g, _ in kept) + int(shifts.max()) + 1)
            positions.extend(kept)
            packed += _up(job["rows"], block) * depth
        image = _up(reach, line)
        count = max(1, min(job[7] for job in jobs)) if jobs else 1
        tile = max(heights[0] for heights in self.heights.values())
        group = max(1, min(16, -(-_GROUP_TILES * tile // count), base.batch))
        words = [header["channels"], header["source_channel"], header["scratch_channel"],
                 header["records"], 0, header["slack_start"], image, group, len(jobs), 0, 0, 0,
                 group * image, header["zero_output"]]
        table = np.array(words, np.int64)
        sections = [records, np.array(jobs, np.int64).reshape(-1),
                    np.array(pairs, np.int64).reshape(-1),
                    np.array(positions or [(0, 0)], np.int64).reshape(-1)]
        starts = []
        for section in sections:
            starts.append(len(table))
            table = np.concatenate([table, section])
        names = ir.PRODUCTS_TABLE
        for name, start in zip(("records_at", "jobs_at", "pairs_at", "positions_at"), starts,
                               strict=True):
            table[names.index(name)] = start
        self.table = table
        self.part_scratch = _up(group * image + packed, line)
        self.out_image = base.out_image
        self.chunks = 0
        # The parts split each job's blocks of rows, not the images, where the weight
        # outweighs the images (each part then packs and reads its share of the weight, not
        # all of it: 512 -> 512 channels on 2x2 images, batch 8, 7.7 -> 4.9 ms) and there are
        # blocks enough to share; never where each image's output is zeroed first.
        self.row_blocks = min((-(-job[0] // job[11]) for job in jobs), default=0)
        self.by_rows = not header["zero_output"] and \
            self.row_blocks >= 2 * _cores() and \
            packed > base.batch * self.source_image

    def _weight(self, base, line: int) -> None:
        space = self.space
        layout = convolution._Layout(space)
        channels = base.table[0]
        rows = self.out_shape[0]
        offsets = [layout.offset(space, c, tap) for c in range(int(channels))
                   for tap in np.ndindex(*space.kernel)]
        _, q_h, q_w = layout.q
        o_d, o_h, o_w = space.out
        positions = [((d * q_h + h) * q_w + w, (d * o_h + h) * o_w + w)
                     for d in range(o_d) for h in range(o_h) for w in range(o_w)]
        count = len(positions)
        slack_start = int(channels) * layout.channel
        image = _up(max(slack_start, max(offsets) + max(g for g, _ in positions) + 1), line)
        stride = _up(rows, self.lanes)
        chunk = max(1, min(-(-self.batch // 4), _CHUNK_TERMS // count))
        number = -(-self.batch // chunk)
        if number > 4:  # a multiple of 4 chunks of equal images, for 2 or 4 cores
            chunk = -(-self.batch // (-(-number // 4) * 4))
        self.chunk, self.chunks = chunk, -(-self.batch // chunk)
        header = [channels, math.prod(space.sizes), layout.channel, len(layout.records), 0,
                  slack_start, image, rows, count, 0, math.prod(space.out), len(offsets), 0,
                  stride]
        table = np.array(header, np.int64)
        records = np.array(layout.records, np.int64).reshape(-1)
        starts = []
        for section in (records, np.array(positions, np.int64).reshape(-1),
                        np.array(offsets, np.int64)):
            starts.append(len(table))
            table = np.concatenate([table, section])
        names = ir.WEIGHT_TABLE
        for name, start in zip(("records_at", "positions_at", "offsets_at"), starts,
                               strict=True):
            table[names.index(name)] = start
        self.table = table
        self.grad_image = base.grad_image
        self.part_scratch = _up(chunk * (image + count * stride), line)
        self.partial_size = rows * len(offsets)
        # Few terms: one product into the output (the module docstring), its staged rows
        # after the parts' images.
        self.direct = self.batch * count <= DIRECT_TERMS
        if self.direct:
            self.chunk, self.chunks = self.batch, 1
            self.part_scratch = _up(image, line)
            self.x_stride = _up(len(offsets), self.lanes)
            self.x_size = _up(self.batch * count * self.x_stride, line)
            self.g_size = _up(self.batch * count * stride, line)

    def entry_points(self) -> dict:
        return _functions(self.dtype, "products" if self.kind != "weight" else "weight")

    @property
    def parts(self) -> int:
        if self.direct:
            return max(1, min(self.batch, _cores()))
        if self.kind != "weight" and self.by_rows:
            return max(1, min(self.row_blocks, _cores()))
        return super().parts

    def _gemm_parts(self) -> int:
        blocks = -(-self.partial_size // self.out_shape[0] // (2 * self.lanes))
        return max(1, min(blocks, _cores()))

    def scratch_elements(self) -> int:
        if not self.direct:
            return super().scratch_elements()
        return self.parts * self.part_scratch + self.x_size + self.g_size + \
            64 // self.dtype.itemsize

    def calls(self, first: np.ndarray, second: np.ndarray, out: np.ndarray,
              scratch: np.ndarray) -> list:
        if self.kind != "weight":
            (function, words, pointers, parts), = super().calls(first, second, out, scratch)
            return [(function, [*words, int(self.by_rows)], pointers, parts)]
        if not self.direct:
            return super().calls(first, second, out, scratch)
        functions = self.entry_points()
        address = workers.data_address
        itemsize = self.dtype.itemsize
        start = address(scratch)
        start += -start % 64
        x = start + self.parts * self.part_scratch * itemsize
        g = x + self.x_size * itemsize
        stride = int(self.table[ir.WEIGHT_TABLE.index("grad_stride")])
        count = int(self.table[ir.WEIGHT_TABLE.index("count")])
        stage = [address(first), self.source_image, address(second), self.grad_image, start,
                 self.part_scratch, self.table_address, self.batch, self.parts, x,
                 self.x_stride, g]
        rows = self.out_shape[0]
        gemm_parts = self._gemm_parts()
        gemm = [x, self.x_stride, g, stride, self.batch * count, address(out), rows,
                self.partial_size // rows, gemm_parts]
        return [(functions["weight_stage"], stage, (0, 2, 4, 6, 9, 11), self.parts),
                (functions["weight_gemm"], gemm, (0, 2, 5), gemm_parts)]


def _cores() -> int:
    """The parts the native workers take (one per core; workers.py)."""
    native = workers.shared()
    return native.parts if native is not None else 1


def by_channels(base):
    """A ChannelGeometry for `base`'s product where the channel routines are preferred and
    can be made here, else `base`."""
    lanes = convolution.lanes(base.dtype, convolution.wide())
    if MODE == "channels":
        wanted = base.kind != "weight" or base.groups == 1  # the weight's tables: no groups
    else:
        wanted = MODE is None and prefers_channels(base, lanes)
    if not wanted or _functions(base.dtype) is None:
        return base
    return ChannelGeometry(base, lanes, ir.HEIGHTS[convolution.wide()])


# The channel modules go through the light pipeline (compile_threads.LIGHT), not O3: their
# tiles are written as the registers should hold them, and O3 was three quarters of a cold
# compile (0.19 s of the products' module, against 0.06 light) for drivers 0-8% faster (the
# 16 -> 32 products on 4x4 images 59, 74 and 72 us through O3, 58, 74 and 78 light; 62, 81
# and 87 as written, where the drivers' stack slots stay in memory).
_OPTIMIZE = compile_threads.LIGHT
_KEY = "convolution channels, light"


def _functions(dtype, module: str = "products") -> dict | None:
    """{routine: address} of the channel routines' `module` (convolution_channels_ir.MODULES)
    of `dtype`, compiled once per process (or loaded from the kernel disk cache), or None where
    no native code can be made. The first ask for the products starts the weight gradient's
    module on a compile thread, as convolution/__init__.py does."""
    dtype, wide = np.dtype(dtype), convolution.wide()
    found = _state.get((dtype, wide, module))
    if found is None:
        try:
            from ..helper_modules import compile_module, prefetch_module
        except ImportError:
            found = {}
        else:
            if module == "products":
                other, other_names = ir.render_module(dtype, wide, "weight")
                prefetch_module(other, other_names, (_KEY, other), _OPTIMIZE)
            text, names = ir.render_module(dtype, wide, module)
            addresses = compile_module(text, names, (_KEY, text), _OPTIMIZE)
            found = dict(zip(ir.MODULES[module], addresses, strict=True))
        _state[(dtype, wide, module)] = found
    return found or None
