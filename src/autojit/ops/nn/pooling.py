"""Max pooling as a pair of primitives, and the window reads its composite shares with
nn.functional's other poolings (nn/functional/pooling.py).

Max pooling gives each window's value and gradient to the first maximal element of the
window (row-major offset order), or to its last NaN, as torch does (its kernels scan a window
in order and let every NaN replace the maximum): the window's chosen element. For x of shape
(N, C, *spatial), with the geometry in attrs (kernel, stride, dilation, the padding `amounts`
per dim, left and right, ceil_mode's extra right columns included, and the output sizes):

- `max_pool_select(u, x)` takes, for each window of x, u's element at x's chosen one: max
  pooling is `max_pool_select(x, x)`;
- `max_pool_scatter(g, x)` puts each window's g at x's chosen element, zeros elsewhere (and
  sums where windows overlap): the gradient of max pooling.

Both are linear in their first operand and piecewise constant in x (no derivative there), and
each is the other's transpose, so the VJP of one is the other and any order differentiates.
Each has a Decomposition (ops/lowering.py): eagerly it is one NumPy routine over the window
slices of x, np.maximum pairwise where reductions over strided window dims would walk them
element by element (a (450, 16, 8, 8) max pooling took 7.4 ms in np.amax against 0.6 ms in
np.maximum over the four slices); traced it is the same computation in autojit ops, an
elementwise chain over the offsets' slices (maximum, then the first rank that holds it, then a
select), which the CPU schedule fuses into one pass over the pooled positions (the three
reductions over (N, C, o1, k1, o2, k2) that the composite was before took 1.1 ms of a 3.2 ms
compiled CNN step). nn.functional's adaptive and fractional poolings, whose windows differ in
size, keep `first_maximum`'s reductions.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ...tensor.creation import arange, tensor
from ...tensor.tensor import Tensor
from .. import elementwise as ew
from ..layout import embed_slice, slice_dims
from ..lowering import Decomposition
from ..reduction import amax, amin, sum_
from ..registry import bind, define_op
from .windows import pad_spatial, windows

# ---- window reads (the composites, shared with nn/functional/pooling.py) ------------------------


def is_tiling(kernel, stride, padding, dilation, extra) -> bool:
    """Whether the windows tile the input: stride equal to the kernel, no padding or
    dilation, nothing beyond the input (ceil_mode's extra)."""
    return (tuple(kernel) == tuple(stride) and not any(padding) and not any(extra)
            and all(d == 1 for d in dilation))


def tiles(x: Tensor, kernel, out_sizes) -> Tensor:
    """(N, C, o1, k1, o2, k2, ...) when the windows tile x: crop the remainder, split each dim."""
    used = [(0, n, 1) for n in x.shape[:2]] + [(0, o * k, 1) for o, k in zip(out_sizes, kernel,
                                                                           strict=True)]
    split = [x.shape[0], x.shape[1]]
    for o, k in zip(out_sizes, kernel, strict=True):
        split.extend((o, k))
    return slice_dims(x, used).reshape(*split)


def tile_dims(spatial: int) -> tuple:
    return tuple(3 + 2 * i for i in range(spatial))


def window_ranks(sizes, kernel, stride, dilation, amounts, out_sizes) -> np.ndarray:
    """(*out_sizes, taps): each window offset's rank in row-major order, or taps where it reads
    padding: torch's max pooling scans the input only, so a window of -inf gives its gradient
    (and its index) to its first input element, never to the padding."""
    count = math.prod(kernel)
    valid = np.pad(np.ones(tuple(sizes), dtype=bool), amounts)
    ranks = []
    for rank, offset in enumerate(itertools.product(*(range(k) for k in kernel))):
        index = tuple(slice(o * d, o * d + s * (out - 1) + 1, s)
                      for o, s, d, out in zip(offset, stride, dilation, out_sizes, strict=True))
        ranks.append(np.where(valid[index], rank, count))
    return np.stack(ranks, -1)


def first_maximum(windows: Tensor, dims: tuple, ranks: Tensor, count: int, values=None):
    """The maximum over `dims` and the rank of the element holding it (kept dims): the first
    maximal one, or the last NaN.

    The gradient goes to that one element only, as torch's max pooling does; amax would share
    it among ties. Fusible reductions: the maximum, the first rank holding it, the last NaN's
    (floating windows), and the sum that keeps that one element (of `values`, windows of the
    same layout, where given)."""
    peak = amax(windows, dims, keepdim=True)
    first = amin(ew.where(windows == peak, ranks, count), dims, keepdim=True)
    if windows.dtype.is_floating_point:
        last_nan = amax(ew.where(ew.isnan(windows), ranks, -1), dims, keepdim=True)
        first = ew.where(last_nan >= 0, last_nan, first)
    chosen = windows if values is None else values
    return sum_(ew.where(ranks == first, chosen, 0), dims), first


def _fill(dtype):
    return -math.inf if dtype.is_floating_point else int(np.iinfo(dtype.numpy).min)


def _offset_reads(x: Tensor, kernel, stride, dilation, amounts, out_sizes):
    """(one (N, C, *out_sizes) slice of x per kernel offset, row-major, read from x padded
    with the dtype's lowest value; per offset, where its windows read x rather than padding,
    a constant bool tensor of out_sizes, or None where they always do)."""
    reads = windows(pad_spatial(x, amounts, value=_fill(x.dtype)), kernel, stride, dilation,
                    out_sizes)
    if not any(left or right for left, right in amounts):
        return reads, [None] * len(reads)
    ranks = window_ranks(tuple(x.shape[2:]), kernel, stride, dilation, amounts, out_sizes)
    count = math.prod(kernel)
    valid = []
    for rank in range(count):
        here = ranks[..., rank] != count
        valid.append(None if here.all() else tensor(here, device=x.device))
    return reads, valid


def _peak_and_first(reads: list, valid: list):
    """Each window's maximum (NaN propagating) and the rank of its first maximal element, or of
    its last NaN (padding never counts): elementwise over the offsets' slices, so
    that compiled code fuses them into one pass over the pooled positions, where reductions
    over the windows' strided dims would each walk them element by element."""
    peak = reads[0]
    for read in reads[1:]:
        peak = ew.maximum(peak, read)
    first = None
    for rank in range(len(reads) - 1, -1, -1):
        read = reads[rank]
        hit = read == peak
        if valid[rank] is not None:
            hit = hit & valid[rank]
        first = ew.where(hit, rank, len(reads) if first is None else first)
    if peak.dtype.is_floating_point:
        for rank, read in enumerate(reads):
            first = ew.where(ew.isnan(read), rank, first)
    return peak, first


def _select_composite(u: Tensor, x: Tensor, kernel, stride, dilation, amounts,
                      out_sizes) -> Tensor:
    reads, valid = _offset_reads(x, kernel, stride, dilation, amounts, out_sizes)
    peak, first = _peak_and_first(reads, valid)
    if u is x:  # the chosen element's value is the maximum (a NaN where there is one)
        return peak
    values = windows(pad_spatial(u, amounts), kernel, stride, dilation, out_sizes)
    result = values[-1]
    for rank in range(len(values) - 2, -1, -1):
        result = ew.where(first == rank, values[rank], result)
    return result


def _scatter_composite(g: Tensor, x: Tensor, kernel, stride, dilation, amounts,
                       out_sizes) -> Tensor:
    # The transpose of the select: each window's g at the rank of its first maximum, zeros
    # elsewhere, summed where windows overlap, the padding cropped.
    reads, valid = _offset_reads(x, kernel, stride, dilation, amounts, out_sizes)
    _, first = _peak_and_first(reads, valid)
    padding = [left for left, _ in amounts]
    extra = [right - left for left, right in amounts]
    if is_tiling(kernel, stride, padding, dilation, extra):
        # Disjoint windows: one select over (N, C, o1, k1, o2, k2), split back into x's dims.
        shape, split = [], list(x.shape[:2])
        for o, k in zip(out_sizes, kernel, strict=True):
            shape.extend((k, 1))
            split.extend((o, 1))
        ranks = arange(len(reads), device=x.device).reshape(*shape[:-1])
        spread = ew.where(ranks == first.reshape(*split), g.reshape(*split), 0)
        grown = spread.reshape(*x.shape[:2], *(o * k for o, k in zip(out_sizes, kernel,
                                                                       strict=True)))
        placed = [(0, n, 1) for n in grown.shape]
        return embed_slice(grown, tuple(x.shape), placed) if tuple(grown.shape) != tuple(
            x.shape) else grown
    padded = tuple(x.shape[:2]) + tuple(n + left + right for n, (left, right) in zip(
        x.shape[2:], amounts, strict=True))
    total = None
    for rank, offset in enumerate(itertools.product(*(range(k) for k in kernel))):
        placed = [(0, n, 1) for n in x.shape[:2]] + [
            (o * d, o * d + s * (out - 1) + 1, s)
            for o, s, d, out in zip(offset, stride, dilation, out_sizes, strict=True)]
        piece = embed_slice(ew.where(first == rank, g, 0), padded, placed)
        total = piece if total is None else total + piece
    interior = [(0, n, 1) for n in x.shape[:2]] + [
        (left, left + n, 1) for n, (left, _) in zip(x.shape[2:], amounts, strict=True)]
    return slice_dims(total, interior)


# ---- the eager routines --------------------------------------------------------------------------

def _offset_slices(x: np.ndarray, kernel, stride, dilation, amounts, out_sizes) -> list:
    """One (N, C, *out_sizes) view per kernel offset (row-major) of x padded as the composite
    pads it, and the padded array."""
    if any(left or right for left, right in amounts):
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        padded = np.full(x.shape[:2] + tuple(n + left + right for n, (left, right) in zip(
            x.shape[2:], amounts)), fill, x.dtype)
        padded[(slice(None), slice(None)) + tuple(
            slice(left, left + n) for n, (left, _) in zip(x.shape[2:], amounts))] = x
    else:
        padded = x
    views = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        views.append(padded[(slice(None), slice(None)) + tuple(
            slice(o * d, o * d + s * (out - 1) + 1, s)
            for o, s, d, out in zip(offset, stride, dilation, out_sizes))])
    return views, padded


def _valid(x: np.ndarray, kernel, stride, dilation, amounts, out_sizes):
    """Per offset, where the window reads the input rather than padding (None without
    padding)."""
    if not any(left or right for left, right in amounts):
        return None
    ranks = window_ranks(x.shape[2:], kernel, stride, dilation, amounts, out_sizes)
    return [ranks[..., rank] != math.prod(kernel) for rank in range(ranks.shape[-1])]


def _first_ranks(views: list, valid) -> np.ndarray:
    """Each window's rank of its first maximal element, or of its last NaN, never a padding
    element."""
    # Whole-array ufuncs only: a masked np.copyto is several times slower than np.where.
    peak = views[0]
    for view in views[1:]:
        peak = np.maximum(peak, view)
    rank = np.zeros(peak.shape, np.int32)
    for index in range(len(views) - 1, -1, -1):
        hit = views[index] == peak
        if valid is not None:
            # A window of -inf ties with its padding, which never holds the maximum.
            hit &= valid[index]
        rank = np.where(hit, np.int32(index), rank)
    if peak.dtype.kind == "f" and np.isnan(peak).any():
        for index, view in enumerate(views):
            rank = np.where(np.isnan(view), np.int32(index), rank)
    return rank


def _select_impl(u: np.ndarray, x: np.ndarray, kernel, stride, dilation, amounts, out_sizes):
    views, _ = _offset_slices(x, kernel, stride, dilation, amounts, out_sizes)
    if u is x:
        # max pooling itself: the maximum (NaN propagating; the padding's fill never exceeds
        # an input element), which is the chosen element's value
        result = np.maximum(views[0], views[1]) if len(views) > 1 else views[0].copy()
        for view in views[2:]:
            np.maximum(result, view, out=result)
        return result
    rank = _first_ranks(views, _valid(x, kernel, stride, dilation, amounts, out_sizes))
    views, _ = _offset_slices(u, kernel, stride, dilation, amounts, out_sizes)
    result = views[-1]
    for index in range(len(views) - 2, -1, -1):
        result = np.where(rank == index, views[index], result)
    return np.array(result, u.dtype)


def _scatter_impl(g: np.ndarray, x: np.ndarray, kernel, stride, dilation, amounts, out_sizes):
    views, padded = _offset_slices(x, kernel, stride, dilation, amounts, out_sizes)
    valid = _valid(x, kernel, stride, dilation, amounts, out_sizes)
    # Windows that never overlap (a stride past each window's reach) write disjoint elements,
    # where overlapping ones add; disjoint windows tiling the whole padded input write every
    # element.
    disjoint = all(s >= (k - 1) * d + 1 for k, s, d in zip(kernel, stride, dilation))
    tiled = disjoint and all(s == k and d == 1 and o * s == n for k, s, d, o, n in zip(
        kernel, stride, dilation, out_sizes, padded.shape[2:]))
    result = (np.empty if tiled else np.zeros)(padded.shape, g.dtype)
    targets, _ = _offset_slices(result, kernel, stride, dilation,
                                [(0, 0)] * len(kernel), out_sizes)
    hits = _first_hits(views, valid, g)
    if hits is None:
        rank = _first_ranks(views, valid)
        hits = (rank == index for index in range(len(views)))
        spreads = (np.where(hit, g, g.dtype.type(0)) for hit in hits)
    else:
        # g is finite: g * False is 0, in one pass instead of np.where's two
        spreads = (np.multiply(g, hit, dtype=g.dtype) for hit in hits)
    for target, spread in zip(targets, spreads):
        if disjoint:
            target[...] = spread
        else:
            np.add(target, spread, out=target)
    if padded is x:
        return result
    return result[(slice(None), slice(None)) + tuple(
        slice(left, left + n) for n, (left, _) in zip(x.shape[2:], amounts))]


def _first_hits(views: list, valid, g: np.ndarray):
    """Per offset, the windows whose first maximal element it holds (a generator), where no
    window holds a NaN and g is finite; None otherwise (_first_ranks' rule then).

    Five passes per offset over the pooled shape, against _first_ranks' rank and its
    comparison per offset: max pooling's backward is most of a small CNN's pooling time."""
    peak = views[0]
    for view in views[1:]:
        peak = np.maximum(peak, view)
    if peak.dtype.kind == "f" and np.isnan(peak).any() or not np.isfinite(g).all():
        return None

    def hits():
        left = None
        for index, view in enumerate(views):
            hit = np.equal(view, peak)
            if valid is not None:
                hit &= valid[index]  # a window of -inf ties with its padding
            if left is None:
                left = ~hit
            else:
                hit &= left
                left &= ~hit
            yield hit
    return hits()


# ---- the primitives ---------------------------------------------------------------------------

def _shape(first, x, kernel, stride, dilation, amounts, out_sizes, scatter: bool):
    """The shape rule: select reads u of x's shape and gives the pooled shape; scatter reads
    g of the pooled shape and gives x's."""
    if len(x) != len(kernel) + 2:
        raise ValueError(f"expected an input of {len(kernel) + 2} dims (N, C, *spatial), got "
                         f"{list(x)}")
    pooled = tuple(x[:2]) + tuple(out_sizes)
    expected, result = (pooled, tuple(x)) if scatter else (tuple(x), pooled)
    if tuple(first) != expected:
        raise ValueError(f"an operand of shape {list(first)} for windows of an input of shape "
                         f"{list(x)} (expected {list(expected)})")
    return result


def _select_vjp(ctx, g):
    _, x = ctx.inputs
    return bind(MAX_POOL_SCATTER, (g, x), ctx.attrs), None


def _scatter_vjp(ctx, u):
    # The maxima's positions are piecewise constant in x: its derivative there is zeros, as
    # torch's max_pool2d_with_indices_backward's in self is, so a gradient taken with
    # create_graph depends on x and a second derivative in x alone is zeros (not none).
    _, x = ctx.inputs
    needs = ctx.needs_input_grad
    return (bind(MAX_POOL_SELECT, (u, x), ctx.attrs) if needs[0] else None,
            ew.fill_like(x, 0) if needs[1] else None)


MAX_POOL_SELECT = define_op(
    name="max_pool_select", arity=2,
    shape=lambda u, x, **attrs: _shape(u, x, scatter=False, **attrs),
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype), impl=_select_impl,
    vjp=_select_vjp, saves=(1,), lowering=Decomposition(_select_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else bind(
        MAX_POOL_SELECT, (tangents[0], inputs[1]), attrs),
    grad_name="MaxPool2DWithIndicesBackward0")
MAX_POOL_SCATTER = define_op(
    name="max_pool_scatter", arity=2,
    shape=lambda g, x, **attrs: _shape(g, x, scatter=True, **attrs),
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype), impl=_scatter_impl,
    vjp=_scatter_vjp, saves=(1,), lowering=Decomposition(_scatter_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else bind(
        MAX_POOL_SCATTER, (tangents[0], inputs[1]), attrs),
    grad_name="MaxPool2DWithIndicesBackwardBackward0")


def max_pool(x: Tensor, kernel, stride, dilation, amounts, out_sizes) -> Tensor:
    """The maximum over each window of x (N, C, *spatial), for nn.functional's max pooling,
    which checks the geometry: padding `amounts` (left, right) per spatial dim, filled with
    -inf (the dtype's minimum for integers), and `out_sizes` windows per dim."""
    attrs = {"kernel": tuple(kernel), "stride": tuple(stride), "dilation": tuple(dilation),
             "amounts": tuple(tuple(a) for a in amounts), "out_sizes": tuple(out_sizes)}
    return bind(MAX_POOL_SELECT, (x, x), attrs)
