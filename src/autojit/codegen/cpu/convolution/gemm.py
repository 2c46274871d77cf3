"""Convolution products of small output grids and large weights as one matrix product: the
windows of every image gathered into columns, one gemm (gemm/kernel.py's, the compiled plans'
own) and the result moved into place (docs/notes/convolution.md, "Large weights on few
pixels").

With few output positions per image and many channels (a ResNet-18's last layers: 512
channels on 2x2 images), the weight outweighs the images, and the channel routines
(channels.py) spend their time packing it: the whole weight k-major, a scalar at a time, read
back from memory. A gemm packs it in blocks that stay in the caches, with vector moves. For a
batch of N images with P output positions each, C input and O output channels and T taps
(K = C * T):

- forward: col (K x NP) gathered from the images, Y (O x NP) = W (O x K) @ col, out[n, o, p] =
  Y[o, n * P + p] (a swap of the first two axes);
- input gradient: G (NP x O) each image's gradient transposed, D (NP x K) = G @ W (W read
  as it lies: 15-33% faster than W^T @ G^T on the ResNet-18's and EfficientNet's layers),
  each input element the sum of the entries of D whose windows read it, in the order of the
  taps, then the positions (gemm_ir.py's scatter).

The weight gradient stays with the channel routines, whose direct product of few terms
(channels.DIRECT_TERMS) packs nothing: as a gemm, out (O x K) = G @ col^T, it measured no
faster (512 -> 512 channels on 2x2 images, batch 8: 1552 against 1412 us).

gemm/kernel.py's product sums each element over k in order whichever part or tile computes it,
so a result does not depend on the thread count; eager calls and compiled plans make these same
calls (conv_steps.py records them into the plan's native program). Only where that gemm
exists (AVX-512 hosts) and the native workers run its parts; elsewhere the other routines stay.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import workers
from ..gemm import blas
from ..gemm import kernel as gemm_kernel
from . import gemm_ir

# The gemm is preferred for at most this many output positions per image and a weight of at
# least MIN_WEIGHT elements. `python bench/conv_routines.py --models ... --threads 1` (eager
# calls, batch 8, operands in the caches; forward and input gradient, us): 512 -> 512 channels
# 3x3 on 2x2 images 2378 and 2426 on channels, 1612 and 2206 as a gemm; 256 -> 512 3x3
# stride 2 on 4x4 1385 and 1749, 904 and 1204; 1152 -> 320 1x1 on 2x2 548 and 548, 351 and
# 477. Below (a gather, a gemm and a swap are three calls): 96 -> 40 1x1 on 4x4 35 and 28, 60
# and 57; 128 -> 128 3x3 on 8x8 (64 positions, the gathered windows 2.4 MB) 1043 and 1033,
# 1483 and 1327. Inside a training step the channel routines' packed weight comes back from
# memory too: ResNet-18's compiled step at 64x64 went from 114 to 95 ms.
MAX_POSITIONS = 16
MIN_WEIGHT = 1 << 17
# None: by `prefers`; "gemm": wherever it can run (the tests), "off": never.
MODE: str | None = None
_state: dict = {}


def _up(count: int, step: int) -> int:
    return -(-count // step) * step


class GemmGeometry:
    """One convolution product (kind "forward" or "input") as a gather, a gemm and moves: the
    interface of convolution.Geometry (calls, run_calls, scratch_elements, out_shape,
    table)."""

    def __init__(self, kind: str, first: tuple, second: tuple, attrs: dict, dtype: str):
        from . import _Spatial

        self.kind, self.dtype, self.attrs = kind, np.dtype(dtype), attrs
        if kind == "forward":
            (batch, channels, *sizes), (out_channels, _, *kernel) = first, second
        else:
            (batch, out_channels, *_), (_, channels, *kernel) = first, second
            sizes = attrs["input_size"]
        space = self.space = _Spatial(tuple(sizes), tuple(kernel), attrs)
        self.batch, self.channels, self.out_channels = batch, channels, out_channels
        self.taps, self.positions = space.taps, math.prod(space.out)
        self.channel_size = math.prod(space.sizes)
        self.depth = channels * space.taps
        self.columns = batch * self.positions
        spatial = len(attrs["stride"])
        self.out_shape = (batch, out_channels, *space.out[3 - spatial:]) if kind == "forward" \
            else (batch, channels, *space.sizes[3 - spatial:])
        window = _window(space)
        sections = [window.reshape(-1)]
        if kind == "input":
            sections += _scatter_table(window, self.channel_size, self.depth)
        self._at = np.cumsum([0] + [len(section) for section in sections]).tolist()
        self.table = np.concatenate(sections).astype(np.int64)
        self.table_address = self.table.ctypes.data
        self._line = 64 // self.dtype.itemsize
        self._big = _up(self.depth * self.columns, self._line)

    def scratch_elements(self) -> int:
        """col (or D) and Y (or G), the second from a cache line, and room to align the
        start."""
        return self._big + self.out_channels * self.columns + self._line

    def product(self) -> tuple:
        """(rows, inner, columns, transpose a, transpose b) of the gemm."""
        if self.kind == "forward":
            return self.out_channels, self.depth, self.columns, False, False
        return self.columns, self.out_channels, self.depth, False, False

    def calls(self, first: np.ndarray, second: np.ndarray, out: np.ndarray,
              scratch: np.ndarray) -> list:
        """The native calls computing `out` from C-contiguous operands of the planned shapes:
        (function, argument words, positions of the words holding pointers, parts)."""
        address = workers.data_address
        offset = (-address(scratch) % 64) // self.dtype.itemsize
        big = scratch[offset:offset + self.depth * self.columns]
        start = offset + self._big
        middle = scratch[start:start + self.out_channels * self.columns]
        functions = _functions(self.dtype)
        parts = _cores()
        weight = second.reshape(self.out_channels, self.depth)
        if self.kind == "forward":
            count = min(parts, self.depth)
            gather = [address(first), address(big), self.table_address, self.batch,
                      self.channels, self.channels * self.channel_size, self.channel_size,
                      self.taps, self.positions, count]
            return [(functions["gather"], gather, (0, 1, 2), count),
                    *_gemm_calls(weight, big.reshape(self.depth, self.columns),
                                 middle.reshape(self.out_channels, self.columns)),
                    _swap(functions, middle, out, 1, self.out_channels, self.batch,
                          self.positions, parts)]
        at, count = self._at, min(parts, self.batch * self.channels)
        scatter = [address(big), address(out), self.table_address + at[1] * 8,
                   self.table_address + at[2] * 8, self.batch, self.channels,
                   self.channel_size, self.taps, self.positions * self.depth, count]
        return [_swap(functions, first, middle, self.batch, self.out_channels, self.positions,
                      1, parts),
                *_gemm_calls(middle.reshape(self.columns, self.out_channels), weight,
                             big.reshape(self.columns, self.depth)),
                (functions["scatter"], scatter, (0, 1, 2, 3), count)]

    def run(self, first: np.ndarray, second: np.ndarray, out: np.ndarray,
            scratch: np.ndarray) -> None:
        self.run_calls(self.calls(first, second, out, scratch))

    @staticmethod
    def run_calls(calls: list) -> None:
        from . import Geometry

        Geometry.run_calls(calls)


def _swap(functions: dict, source: np.ndarray, target: np.ndarray, batch: int, outer: int,
          middle: int, inner: int, parts: int) -> tuple:
    """target[n, b, a, :] = source[n, a, b, :] for source (batch, outer, middle, inner)."""
    address = workers.data_address
    count = min(parts, batch * middle)
    words = [address(source), address(target), batch, outer, middle, inner, count]
    return functions["swap"], words, (0, 1), count


def _gemm_calls(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> list:
    """out = a @ b as workers.py's gemm_part calls, one record per part, a core's worth of
    parts per call (as program.Recording.gemm groups them)."""
    keep: list = []
    parts, by_columns = blas.split_of(a, b)
    records = blas.gemm_records(a, b, out, 1.0, 0.0, parts, by_columns, keep)
    if not records or any(kept is not operand for kept, operand in
                          zip(keep, (a, b), strict=True)):
        raise RuntimeError("a convolution's gemm operand was copied")
    native = workers.shared()
    pointers = [index for index, (name, _) in enumerate(workers.GEMM_RECORD)
                if name in ("a", "b", "c")]
    calls = []
    for start in range(0, len(records), native.parts):
        group = records[start:start + native.parts]
        words = [int(word) for record in group for word in record]
        positions = tuple(part * workers.GEMM_RECORD_WORDS + word
                          for part in range(len(group)) for word in pointers)
        calls.append((native.gemm_part, words, positions, len(group)))
    return calls


def _window(space) -> np.ndarray:
    """window[t, p]: the element of an input channel that tap t of output position p reads,
    or -1 where it reads the padding."""
    def grid(extents):
        axes = np.meshgrid(*(np.arange(extent) for extent in extents), indexing="ij")
        return np.stack(axes, -1).reshape(-1, 3)

    taps, outs = grid(space.kernel), grid(space.out)
    low = np.array([lo for lo, _ in space.padding])
    coordinates = (outs[None] * np.array(space.stride) - low +
                   taps[:, None] * np.array(space.dilation))
    sizes = np.array(space.sizes)
    inside = np.all((coordinates >= 0) & (coordinates < sizes), axis=-1)
    offsets = (coordinates[..., 0] * sizes[1] + coordinates[..., 1]) * sizes[2] + \
        coordinates[..., 2]
    return np.where(inside, offsets, -1).astype(np.int64)


def _scatter_table(window: np.ndarray, channel_size: int, depth: int) -> list:
    """[starts, entries]: the (t, p) pairs whose windows read input element s, as offsets
    p * depth + t from an image's and channel's first entry of D (NP x K), at
    entries[starts[s]:starts[s + 1]], in the order of t, then p."""
    positions = window.shape[1]
    flat = window.reshape(-1)
    order = np.argsort(flat, kind="stable")
    order = order[flat[order] >= 0]
    starts = np.searchsorted(flat[order], np.arange(channel_size + 1))
    tap, position = np.divmod(order, positions)
    return [starts.astype(np.int64), (position * depth + tap).astype(np.int64)]


def _cores() -> int:
    native = workers.shared()
    return native.parts if native is not None else 1


def _functions(dtype) -> dict | None:
    """{entry point: address} of gemm_ir.py's module of `dtype`, compiled once per process (or
    loaded from the kernel disk cache), or None where no native code can be made."""
    dtype = np.dtype(dtype)
    found = _state.get(dtype)
    if found is None:
        try:
            from ..helper_modules import compile_module
        except ImportError:
            found = {}
        else:
            text, names = gemm_ir.render_module(dtype)
            addresses = compile_module(text, names, ("convolution gemm", text))
            found = dict(zip(gemm_ir.NAMES, addresses, strict=True))
        _state[dtype] = found
    return found or None


@functools.lru_cache(maxsize=256)
def _runs_here(dtype: str, product: tuple) -> bool:
    """Whether the product has gemm/kernel.py's gemm and the workers run its parts."""
    rows, _, columns, transpose_a, transpose_b = product
    return workers.shared() is not None and gemm_kernel.address(
        dtype, transpose_a, transpose_b, rows, columns) is not None


def by_gemm(kind: str, first: tuple, second: tuple, attrs: dict, dtype: str,
            forced: str | None = None):
    """A GemmGeometry for this product where it is preferred and runs here, else None.
    `forced`: channels.MODE (another routine the caller asked for)."""
    if MODE == "off" or forced is not None or kind == "weight" or attrs["groups"] != 1 or \
            np.dtype(dtype) not in gemm_ir.TYPES:
        return None
    found = GemmGeometry(kind, first, second, attrs, dtype)
    if MODE != "gemm" and not prefers(found):
        return None
    if not _runs_here(found.dtype.str, found.product()) or _functions(found.dtype) is None:
        return None
    return found


def prefers(geometry: GemmGeometry) -> bool:
    """Few output positions per image (MAX_POSITIONS) and a large weight (MIN_WEIGHT)."""
    return geometry.positions <= MAX_POSITIONS and \
        geometry.out_channels * geometry.depth >= MIN_WEIGHT
