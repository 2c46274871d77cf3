"""Depthwise convolutions (groups equal to the channels, one output channel per group) with the
channels in the vector lanes: the three products for eager calls and compiled plans alike
(docs/notes/convolution.md, "Depthwise convolutions").

convolution/__init__.py's routines make one job per group, each one weight row: a tile of 6 or
12 rows computes one, and a depthwise product of EfficientNet ran at 4-7x torch's time. Here
each part takes a block of channels (a multiple of the vector lanes) of every image:

- the image's channels are laid out position-major (a row of the block's channels per
  position, the lanes past the last channel zero) and one row of zeros after them, which the
  padding's taps read; the gradient likewise, without the zero row;
- **forward**: per output position and vector of channels, the sum over the taps in order of
  weight times input, each tap's input row read from a table (the zero row where the tap
  falls in the padding), into a position-major output block copied out per channel;
- **input gradient**: per input position, the sum over the (tap, output position) pairs that
  reach it, in tap order, from a table of pairs;
- **weight gradient**: per tap, the sum over images and output positions of gradient times
  input, in float32 over at most FLUSH positions, then added into float64 sums per channel
  and tap, rounded once at the end.

Every channel's sums are made in the same order whichever part computes it, so the results do
not depend on the thread count; eager calls and compiled plans run the same routines
(conv_steps.py takes this class as it takes a Geometry). The tables depend only on the
geometry: any spatial rank, stride, padding and dilation.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .. import convolution, workers
from ..llvm.ir_text import Function
from .ir import TYPES

# Positions a float32 lane sums in the weight gradient before adding into float64.
FLUSH = 256
HEADER = ("batch", "channels", "inputs", "outputs", "taps", "block", "part_scratch",
          "forward_at", "starts_at", "pairs_at")
_state: dict = {}


def applies(kind: str, first: tuple, second: tuple, groups: int) -> bool:
    """Whether a product of these shapes is depthwise: groups of one input and one output
    channel each, at least two of them."""
    if groups < 2:
        return False
    if kind == "forward":  # x (N, C, ...), w (C, 1, ...)
        return first[1] == groups and second[:2] == (groups, 1)
    if kind == "input":  # g (N, C, ...), w (C, 1, ...)
        return first[1] == groups and second[:2] == (groups, 1)
    return first[1] == groups and second[1] == groups  # x (N, C, ...), g (N, C, ...)


class DepthwiseGeometry:
    """The tables and scratch of one depthwise product (kind "forward", "input" or "weight");
    the interface of convolution.Geometry (calls, run, scratch_elements, parts, table)."""

    def __init__(self, kind: str, first: tuple, second: tuple, attrs: dict, dtype, lanes: int):
        self.kind, self.dtype, self.attrs = kind, np.dtype(dtype), attrs
        self.lanes = lanes
        spatial = len(attrs["stride"])
        channels = first[1]
        if kind == "forward":
            sizes, kernel = first[2:], second[2:]
        elif kind == "input":
            sizes, kernel = tuple(attrs["input_size"]), second[2:]
        else:
            sizes, kernel = first[2:], tuple(attrs["kernel_size"])
        space = convolution._Spatial(sizes, kernel, attrs)
        self.batch, self.channels = first[0], channels
        inputs, outputs, taps = math.prod(space.sizes), math.prod(space.out), space.taps
        if kind == "forward":
            self.out_shape = (first[0], channels, *space.out[3 - spatial:])
        elif kind == "input":
            self.out_shape = (first[0], channels, *space.sizes[3 - spatial:])
        else:
            self.out_shape = (channels, 1, *space.kernel[3 - spatial:])
        # Each output position's input position per tap (`inputs`: the zero row).
        reads = np.full((outputs, taps), inputs, np.int64)
        for q, out in enumerate(itertools.product(*(range(n) for n in space.out))):
            for t, tap in enumerate(itertools.product(*(range(k) for k in space.kernel))):
                place = [o * s + k * d - lo for o, s, k, d, (lo, _) in zip(
                    out, space.stride, tap, space.dilation, space.padding, strict=True)]
                if all(0 <= p < n for p, n in zip(place, space.sizes, strict=True)):
                    reads[q, t] = (place[0] * space.sizes[1] + place[1]) * space.sizes[2] + \
                        place[2]
        # The input gradient's (tap, output position) pairs per input position, in tap order.
        starts, pairs = np.zeros(inputs + 1, np.int64), np.zeros((0, 2), np.int64)
        # Without strides every tap of an input position reads an output position or the
        # padding: the forward routine computes it, over the gradient's positions (and a zero
        # row) with each input position's table of them.
        self.routine = kind
        if kind == "input" and all(stride == 1 for stride in space.stride):
            flat = reads.reshape(-1)
            inverse = np.full((inputs + 1) * taps, outputs, np.int64)
            inverse[flat * taps + np.tile(np.arange(taps), outputs)] = np.repeat(
                np.arange(outputs), taps)
            reads = inverse[:inputs * taps].reshape(inputs, taps)
            inputs, outputs, self.routine = outputs, inputs, "forward"
        elif kind == "input":
            order = np.argsort(reads.T.reshape(-1), kind="stable")  # by input, then tap
            flat = reads.T.reshape(-1)[order]
            kept = flat < inputs
            tap_of, position_of = np.divmod(order[kept], outputs)
            pairs = np.stack([tap_of, position_of], axis=1)
            starts[1:] = np.cumsum(np.bincount(flat[kept], minlength=inputs))
        self.parts_used = max(1, min(self._cores(), -(-channels // lanes)))
        per_part = -(-channels // self.parts_used)
        block = -(-per_part // lanes) * lanes
        self.parts_used = -(-channels // block)
        self.block = block
        line = 64 // self.dtype.itemsize
        wide = 8 // self.dtype.itemsize  # elements of the dtype per float64

        def up(count: int) -> int:
            return -(-count // line) * line

        if self.routine == "forward":
            scratch = up(taps * block) + up((inputs + 1) * block) + up(outputs * block)
        elif kind == "input":
            scratch = up(taps * block) + up(outputs * block) + up(inputs * block)
        else:
            scratch = up((inputs + 1) * block) + up(outputs * block) + up(taps * block * wide)
        self.part_scratch = scratch
        header = [self.batch, channels, inputs, outputs, taps, block, scratch, 0, 0, 0]
        sections = [reads.reshape(-1), starts, pairs.reshape(-1)]
        at = len(header)
        for index, section in enumerate(sections):
            header[7 + index] = at
            at += len(section)
        self.table = np.concatenate([np.array(header, np.int64), *sections])
        self.table_address = self.table.ctypes.data

    @staticmethod
    def _cores() -> int:
        native = workers.shared()
        return native.parts if native is not None else 1

    @property
    def parts(self) -> int:
        return self.parts_used

    def scratch_elements(self) -> int:
        return self.parts_used * self.part_scratch + 64 // self.dtype.itemsize

    def calls(self, first: np.ndarray, second: np.ndarray, out: np.ndarray,
              scratch: np.ndarray) -> list:
        address = workers.data_address
        start = address(scratch)
        start += -start % 64
        words = [address(first), address(second), address(out), start, self.table_address,
                 self.parts_used]
        function = _function(self.dtype, self.lanes, self.routine)
        return [(function, words, (0, 1, 2, 3, 4), self.parts_used)]

    def run(self, first: np.ndarray, second: np.ndarray, out: np.ndarray,
            scratch: np.ndarray) -> None:
        self.run_calls(self.calls(first, second, out, scratch))

    run_calls = staticmethod(convolution.Geometry.run_calls)


# ---- the routines ---------------------------------------------------------------------------

def _symbol(dtype, lanes: int, kind: str) -> str:
    return f"autojit_depthwise_{TYPES[np.dtype(dtype)][2]}x{lanes}_{kind}"


def _transpose8(f, rows: list, kind: str) -> list:
    """The 8 x 8 transposition of eight vectors of eight elements (unpack, shuffle, then swap
    halves: the AVX sequence, whose masks LLVM lowers to unpcklps, shufps and vperm2f128)."""
    def shuffle(left, right, mask):
        text = ", ".join(f"i32 {index}" for index in mask)
        return f.op(f"shufflevector {kind} {left}, {kind} {right}, <8 x i32> <{text}>", "s")

    low, high = (0, 8, 1, 9, 4, 12, 5, 13), (2, 10, 3, 11, 6, 14, 7, 15)
    a = []
    for k in range(0, 8, 2):
        a += [shuffle(rows[k], rows[k + 1], low), shuffle(rows[k], rows[k + 1], high)]
    first, second = (0, 1, 8, 9, 4, 5, 12, 13), (2, 3, 10, 11, 6, 7, 14, 15)
    b = [shuffle(a[0], a[2], first), shuffle(a[0], a[2], second),
         shuffle(a[1], a[3], first), shuffle(a[1], a[3], second),
         shuffle(a[4], a[6], first), shuffle(a[4], a[6], second),
         shuffle(a[5], a[7], first), shuffle(a[5], a[7], second)]
    lower, upper = (0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15)
    return [shuffle(b[k], b[k + 4], lower) for k in range(4)] + \
        [shuffle(b[k], b[k + 4], upper) for k in range(4)]


class _Writer:
    """The shared prologue of the three routines and the loops they all make."""

    def __init__(self, dtype, lanes: int, kind: str):
        self.scalar = TYPES[np.dtype(dtype)][0]
        self.lanes = lanes
        self.vector = f"<{lanes} x {self.scalar}>"
        self.f = f = Function(f"define i32 @{_symbol(dtype, lanes, kind)}"
                              "(ptr %argument, i64 %part) {")
        self.first, self.second, self.out, scratch, table = (
            f.pointer("%argument", index, name) for index, name in
            enumerate(("first", "second", "out", "scratch", "table")))
        self.table = table
        fields = {name: f.word(table, index, name) for index, name in enumerate(HEADER)}
        self.__dict__.update(fields)
        self.c0 = f.binary("mul", "%part", self.block, "c0")
        done = f.label("done")
        body = f.label("body")
        beyond = f.op(f"icmp sge i64 {self.c0}, {self.channels}", "beyond")
        f.emit(f"br i1 {beyond}, label {done}, label {body}")
        self.done = done
        f.block(body)
        left = f.binary("sub", self.channels, self.c0, "left")
        self.m = f.minimum(left, self.block)
        offset = f.binary("mul", "%part", self.part_scratch, "offset")
        self.base = f.element(self.scalar, scratch, offset, "base")
        self.cursor = self.base

    def region(self, rows) -> str:
        """The next region of the part's scratch: `rows` rows of the block's channels (a
        cache line rounded), as forward/input/weight laid it out in __init__."""
        f = self.f
        start = self.cursor
        size = f.binary("mul", rows, self.block, "size")
        line = 64 // (4 if self.scalar == "float" else 8)
        size = f.binary("add", size, line - 1, "size")
        size = f.binary("and", size, -line, "size")
        self.cursor = f.element(self.scalar, start, size, "next")
        return start

    def zero(self, region: str, elements) -> None:
        f = self.f
        with f.loop(0, elements, hint="z") as index:
            f.emit(f"store {self.scalar} 0.0, ptr {f.element(self.scalar, region, index)}")

    def gather(self, region: str, source: str, rows) -> None:
        """region[r * block + c] = source[((n * C) + c0 + c) * rows + r] for c < m, r < rows:
        the part's channels of image `n` (self.n), position-major."""
        self._move(region, source, rows, True)

    def scatter(self, region: str, target: str, rows) -> None:
        """The reverse of gather: target[((n * C) + c0 + c) * rows + r] = region[r, c]."""
        self._move(region, target, rows, False)

    def _move(self, region: str, image: str, rows, inward: bool) -> None:
        """Between the image's channel-major planes and the region's position-major rows, in
        blocks of 8 channels x 8 positions (eight vector loads, a transposition in registers,
        eight vector stores), and one element at a time at the edges."""
        f, scalar = self.f, self.scalar
        plane = f.binary("mul", self.n, self.channels, "plane")
        plane = f.binary("add", plane, self.c0, "plane")
        whole_m = f.binary("and", self.m, -8, "whole_m")
        whole_r = f.binary("and", rows, -8, "whole_r")
        eight = f"<8 x {scalar}>"

        def major(c, r):  # the image's element (channel c of the part, position r)
            row = f.binary("mul", f.binary("add", plane, c, "channel"), rows, "row")
            return f.element(scalar, image, f.binary("add", row, r, "at"))

        def minor(c, r):  # the region's
            return f.element(scalar, region,
                             f.binary("add", f.binary("mul", r, self.block, "at"), c, "at"))

        def one(c, r):
            source, target = (major(c, r), minor(c, r)) if inward else \
                (minor(c, r), major(c, r))
            value = f.op(f"load {scalar}, ptr {source}", "v")
            f.emit(f"store {scalar} {value}, ptr {target}")

        with f.loop(0, whole_m, 8, hint="cb") as c:
            with f.loop(0, whole_r, 8, hint="rb") as r:
                if inward:  # eight channels' rows of eight positions
                    loaded = [f.op(f"load {eight}, ptr "
                                   f"{major(f.binary('add', c, k, 'c'), r)}, align 4", "v")
                              for k in range(8)]
                else:
                    loaded = [f.op(f"load {eight}, ptr "
                                   f"{minor(c, f.binary('add', r, k, 'r'))}, align 4", "v")
                              for k in range(8)]
                for k, value in enumerate(_transpose8(f, loaded, eight)):
                    target = minor(c, f.binary("add", r, k, "r")) if inward else \
                        major(f.binary("add", c, k, "c"), r)
                    f.emit(f"store {eight} {value}, ptr {target}, align 4")
            with f.loop(0, 8, hint="ce") as k:
                with f.loop(whole_r, rows, hint="re") as r:
                    one(f.binary("add", c, k, "c"), r)
        with f.loop(whole_m, self.m, hint="cr") as c:
            with f.loop(0, rows, hint="rr") as r:
                one(c, r)

    def weights(self, region: str) -> None:
        """region[t * block + c] = w[(c0 + c) * taps + t] for c < m (the rest zero)."""
        f = self.f
        self.zero(region, f.binary("mul", self.taps, self.block, "count"))
        with f.loop(0, self.m, hint="c") as c:
            channel = f.binary("add", self.c0, c, "channel")
            row = f.binary("mul", channel, self.taps, "row")
            with f.loop(0, self.taps, hint="t") as t:
                at = f.binary("add", row, t, "at")
                value = f.op(f"load {self.scalar}, ptr "
                             f"{f.element(self.scalar, self.second, at)}", "v")
                place = f.binary("mul", t, self.block, "place")
                place = f.binary("add", place, c, "place")
                f.emit(f"store {self.scalar} {value}, ptr "
                       f"{f.element(self.scalar, region, place)}")

    def load(self, region: str, row, j) -> str:
        f = self.f
        at = f.binary("mul", row, self.block, "at")
        at = f.binary("add", at, j, "at")
        return f.op(f"load {self.vector}, ptr {f.element(self.scalar, region, at)}, align 4",
                    "vec")

    def store(self, value: str, region: str, row, j) -> None:
        f = self.f
        at = f.binary("mul", row, self.block, "at")
        at = f.binary("add", at, j, "at")
        f.emit(f"store {self.vector} {value}, ptr {f.element(self.scalar, region, at)}, "
               "align 4")

    def multiply_add(self, slot: str, left: str, right: str, kind: str | None = None) -> None:
        f = self.f
        kind = kind or self.vector
        total = f.op(f"load {kind}, ptr {slot}", "acc")
        product = f.op(f"fmul {kind} {left}, {right}", "prod")
        f.emit(f"store {kind} {f.op(f'fadd {kind} {total}, {product}', 'sum')}, ptr {slot}")

    def finish(self) -> str:
        f = self.f
        f.branch(self.done)
        f.block(self.done)
        f.emit("ret i32 0")
        return f.text()


def _tiles(f, count, sizes: tuple, step: int = 1):
    """(first, size) loops covering range(count) in tiles of sizes[0] (times `step`), then of
    each smaller size over what is left: yields (loop index, size) inside each loop."""
    start = 0
    for position, size in enumerate(sizes):
        last = position == len(sizes) - 1
        stop = count if last else f.binary("and", f.binary("sub", count, start, "left"),
                                           -(size * step), "span")
        if not last:
            stop = f.binary("add", start, stop, "stop")
        with f.loop(start, stop, size * step, hint=f"tile{size}") as index:
            yield index, size
        start = stop


def _accumulators(f, kind: str, count: int) -> list:
    return [f.variable("zeroinitializer", kind) for _ in range(count)]


def _forward(dtype, lanes: int) -> str:
    """Per tile of 4 output positions x 2 vectors of channels (8 sums in flight: a tap's
    multiply-add waits on the one before it in the same sum), the taps in order."""
    w = _Writer(dtype, lanes, "forward")
    f = w.f
    weights = w.region(w.taps)
    inputs_and_zero = f.binary("add", w.inputs, 1, "rows")
    laid = w.region(inputs_and_zero)
    result = w.region(w.outputs)
    w.weights(weights)
    w.zero(laid, f.binary("mul", inputs_and_zero, w.block, "count"))
    reads = f.element("i64", w.table, w.forward_at, "reads")
    slots = _accumulators(f, w.vector, 8)
    with f.loop(0, w.batch, hint="n") as n:
        w.n = n
        w.gather(laid, w.first, w.inputs)
        for q, positions in _tiles(f, w.outputs, (4, 1)):
            rows = [f.binary("mul", f.binary("add", q, p, "q"), w.taps, "row")
                    for p in range(positions)]
            for j, vectors in _tiles(f, w.block, (2, 1), lanes):
                tile = [[slots[p * 2 + v] for v in range(vectors)] for p in range(positions)]
                for slot in (slot for row in tile for slot in row):
                    f.emit(f"store {w.vector} zeroinitializer, ptr {slot}")
                with f.loop(0, w.taps, hint="t") as t:
                    columns = [f.binary("add", j, v * lanes, "j") for v in range(vectors)]
                    weight = [w.load(weights, t, column) for column in columns]
                    for p in range(positions):
                        source = f.word(reads, f.binary("add", rows[p], t, "at"), "src")
                        for v, column in enumerate(columns):
                            w.multiply_add(tile[p][v], weight[v], w.load(laid, source, column))
                for p in range(positions):
                    for v in range(vectors):
                        value = f.op(f"load {w.vector}, ptr {tile[p][v]}", "acc")
                        w.store(value, result, f.binary("add", q, p, "q"),
                                f.binary("add", j, v * lanes, "j"))
        w.scatter(result, w.out, w.outputs)
    return w.finish()


def _input(dtype, lanes: int) -> str:
    """Per input position and tile of 4 vectors of channels, its (tap, output position) pairs
    in order."""
    w = _Writer(dtype, lanes, "input")
    f = w.f
    weights = w.region(w.taps)
    laid = w.region(w.outputs)
    result = w.region(w.inputs)
    w.weights(weights)
    w.zero(laid, f.binary("mul", w.outputs, w.block, "count"))
    starts = f.element("i64", w.table, w.starts_at, "starts")
    pairs = f.element("i64", w.table, w.pairs_at, "pairs")
    slots = _accumulators(f, w.vector, 4)
    with f.loop(0, w.batch, hint="n") as n:
        w.n = n
        w.gather(laid, w.first, w.outputs)
        with f.loop(0, w.inputs, hint="i") as i:
            first = f.word(starts, i, "from")
            last = f.word(starts, f.binary("add", i, 1, "next"), "to")
            for j, vectors in _tiles(f, w.block, (4, 1), lanes):
                for slot in slots[:vectors]:
                    f.emit(f"store {w.vector} zeroinitializer, ptr {slot}")
                with f.loop(first, last, hint="e") as e:
                    at = f.binary("shl", e, 1, "at")
                    tap = f.word(pairs, at, "tap")
                    position = f.word(pairs, f.binary("add", at, 1, "at"), "pos")
                    for v in range(vectors):
                        column = f.binary("add", j, v * lanes, "j")
                        w.multiply_add(slots[v], w.load(weights, tap, column),
                                       w.load(laid, position, column))
                for v in range(vectors):
                    value = f.op(f"load {w.vector}, ptr {slots[v]}", "acc")
                    w.store(value, result, i, f.binary("add", j, v * lanes, "j"))
        w.scatter(result, w.out, w.inputs)
    return w.finish()


def _weight(dtype, lanes: int) -> str:
    """Per tile of 2 vectors of channels x 4 taps, the sums over each FLUSH positions of an
    image in float32, added into the float64 sums."""
    w = _Writer(dtype, lanes, "weight")
    f = w.f
    scalar, vector = w.scalar, w.vector
    wide = scalar == "float"
    wide_vector = f"<{lanes} x double>"
    inputs_and_zero = f.binary("add", w.inputs, 1, "rows")
    laid = w.region(inputs_and_zero)
    grads = w.region(w.outputs)
    sums = w.cursor  # taps x block float64 sums
    w.zero(laid, f.binary("mul", inputs_and_zero, w.block, "count"))
    w.zero(grads, f.binary("mul", w.outputs, w.block, "count"))
    count = f.binary("mul", w.taps, w.block, "count")
    with f.loop(0, count, hint="z") as index:
        f.emit(f"store double 0.0, ptr {f.element('double', sums, index)}")
    reads = f.element("i64", w.table, w.forward_at, "reads")
    slots = _accumulators(f, vector, 8)
    with f.loop(0, w.batch, hint="n") as n:
        w.n = n
        w.gather(laid, w.first, w.inputs)
        w.gather(grads, w.second, w.outputs)
        for j, vectors in _tiles(f, w.block, (2, 1), lanes):
            columns = [f.binary("add", j, v * lanes, "j") for v in range(vectors)]
            for t, taps in _tiles(f, w.taps, (4, 1)):
                tile = [[slots[k * 2 + v] for v in range(vectors)] for k in range(taps)]
                with f.loop(0, w.outputs, FLUSH, hint="q0") as q0:
                    end = f.minimum(f.binary("add", q0, FLUSH, "end"), w.outputs)
                    for slot in (slot for row in tile for slot in row):
                        f.emit(f"store {vector} zeroinitializer, ptr {slot}")
                    with f.loop(q0, end, hint="q") as q:
                        grad = [w.load(grads, q, column) for column in columns]
                        row = f.binary("mul", q, w.taps, "row")
                        for k in range(taps):
                            at = f.binary("add", row, f.binary("add", t, k, "t"), "at")
                            source = f.word(reads, at, "src")
                            for v, column in enumerate(columns):
                                w.multiply_add(tile[k][v], grad[v], w.load(laid, source, column))
                    for k in range(taps):
                        for v, column in enumerate(columns):
                            partial = f.op(f"load {vector}, ptr {tile[k][v]}", "part")
                            if wide:
                                partial = f.op(f"fpext {vector} {partial} to {wide_vector}",
                                               "wide")
                            tap = f.binary("add", t, k, "t")
                            place = f.binary("add", f.binary("mul", tap, w.block, "at"), column,
                                             "at")
                            slot = f.element("double", sums, place, "slot")
                            total = f.op(f"load {wide_vector}, ptr {slot}, align 8", "total")
                            added = f.op(f"fadd {wide_vector} {total}, {partial}", "sum")
                            f.emit(f"store {wide_vector} {added}, ptr {slot}, align 8")
    with f.loop(0, w.m, hint="c") as c:
        row = f.binary("mul", f.binary("add", w.c0, c, "channel"), w.taps, "row")
        with f.loop(0, w.taps, hint="t") as t:
            place = f.binary("add", f.binary("mul", t, w.block, "at"), c, "at")
            value = f.op(f"load double, ptr {f.element('double', sums, place)}", "v")
            if wide:
                value = f.op(f"fptrunc double {value} to float", "v")
            target = f.element(scalar, w.out, f.binary("add", row, t, "at"))
            f.emit(f"store {scalar} {value}, ptr {target}")
    return w.finish()


ROUTINES = {"forward": _forward, "input": _input, "weight": _weight}


def _function(dtype, lanes: int, kind: str) -> int:
    """The address of the depthwise routine `kind` of `dtype` with vectors of `lanes`: each
    kind a module of its own, compiled once per process (or loaded from the kernel disk
    cache). The first ask for the forward starts the two gradients' modules on compile
    threads: a training step's backward asks for them a moment later, and the forward does
    not wait for their compile (EfficientNet's first call took 0.79 s for the three at once)."""
    dtype = np.dtype(dtype)
    found = _state.get((dtype, lanes, kind))
    if found is None:
        from ..helper_modules import compile_module, prefetch_module

        if kind == "forward":
            for other in ROUTINES:
                if other != kind and (dtype, lanes, other) not in _state:
                    text = ROUTINES[other](dtype, lanes)
                    prefetch_module(text, [_symbol(dtype, lanes, other)],
                                    ("convolution depthwise", text))
        text = ROUTINES[kind](dtype, lanes)
        (found,) = compile_module(text, [_symbol(dtype, lanes, kind)],
                                  ("convolution depthwise", text))
        _state[(dtype, lanes, kind)] = found
    return found
