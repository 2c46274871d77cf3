"""torch.histogramdd: the histogram of the points in the rows of an (..., D) tensor over D
dims, each binned as statistics.histogram bins its one (torch's edges, from a count and the
data's or the given range, or from a tensor of edges; the last bin closed), the counts summed
by scatter_add into the product of the dims' bins. Not differentiable, as in torch.
"""

from __future__ import annotations

import math
from collections import namedtuple

from ..tensor.tensor import Tensor
from . import composite
from . import elementwise as ew
from .indexing.scatter import scatter_add
from .layout import reshape
from .reduction import sum_
from .searching import searchsorted
from .statistics import _data_range, _linspace

histogramdd_return = namedtuple("histogramdd", ["hist", "bin_edges"])


def _edges(column: Tensor, bins, span, dim: int, dtype) -> Tensor:
    """Dim `dim`'s bin edges: the given tensor, or count + 1 edges over the range."""
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins.ndim} dimensions in the bins tensor for dimension "
                               f"{dim}")
        if bins.shape[0] - 1 <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got "
                               f"{bins.shape[0] - 1} for dimension {dim}")
        return bins.detach().to(dtype)
    count = int(bins)
    if count <= 0:
        raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {count} for "
                           f"dimension {dim}")
    low, high = _data_range(column, *(span if span is not None else (None, None)))
    return _linspace(low, high, count + 1, column)


def histogramdd(input, bins, *, range=None, weight=None, density: bool = False):  # noqa: A002
    """(hist, bin_edges): the D-dimensional histogram of the rows of input (..., D), with
    `bins` an int (bins per dim), D ints, or D tensors of edges; `range` the flat
    [min_0, max_0, min_1, ...]; weighted by `weight` (input's shape without its last dim);
    normalized to a density with `density`."""
    x = input
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{x.dtype.name}'")
    if x.ndim < 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 1 dimension, "
                           "but got 0")
    dims = x.shape[-1]
    if isinstance(bins, (list, tuple)):
        if len(bins) != dims:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                               "dimension of the input.")
        per_dim = list(bins)
    else:
        per_dim = [bins] * dims
    if range is not None and len(range) != 2 * dims:
        raise RuntimeError("torch.histogramdd: for a 2-dimensional input tensor, range should "
                           f"have {2 * dims} elements, but got {len(range)}")
    points = reshape(x.detach(), (math.prod(x.shape[:-1]), dims))
    edges, positions, counts = [], [], []
    inside = None
    for d in builtins_range(dims):
        column = points[:, d]
        span = None if range is None else (range[2 * d], range[2 * d + 1])
        edge = _edges(column, per_dim[d], span, d, x.dtype)
        count = edge.shape[0] - 1
        within = (column >= edge[0]) & (column <= edge[-1])
        inside = within if inside is None else inside & within
        positions.append(composite.clamp(searchsorted(edge, column, right=True) - 1, 0,
                                         count - 1))
        edges.append(edge)
        counts.append(count)
    flat = None
    for position, count in zip(positions, counts, strict=True):
        flat = position if flat is None else flat * count + position
    if weight is None:
        values = ew.fill_like(points[:, 0], 1)
    else:
        values = reshape(weight.detach(), (points.shape[0],))
    values = ew.where(inside, values, 0)
    flat = ew.where(inside, flat, 0)
    total = scatter_add(values.new_zeros((math.prod(counts),)), 0, flat, values)
    hist = reshape(total, tuple(counts))
    if density:
        hist = hist / sum_(hist)
        for d, edge in enumerate(edges):
            shape = [1] * dims
            shape[d] = counts[d]
            hist = hist / reshape(edge[1:] - edge[:-1], tuple(shape))
    return histogramdd_return(hist, edges)


builtins_range = range
