"""Counting: unique, bincount (results whose size depends on the data) and histc.

unique and bincount give as many entries as the data has distinct values, or as its largest
value says: while tracing, that size is the call's, checked on every run (a split of the
graph, as nonzero's count is), and the results are built from graph ops (a sort and a
scatter); unique along a `dim` is a graph break. Eagerly they run in NumPy on the host (a
CUDA tensor's data is copied there and the results copied back). histc has `bins` entries whatever
the data, so it is a primitive, with an extern lowering ("histogram") that a compiled CPU plan
runs through its NumPy impl; its impl follows torch's arithmetic so that values on the edge of
a bin land in the same bin. None of these is differentiable.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import dtypes
from ..tensor.dtypes import C_TYPE_NAMES, SCALAR_TYPE_NAMES
from ..tensor.graph_break import graph_break
from ..tensor.state import state
from ..tensor.tensor import Tensor, normalize_dim
from . import batching, registry
from .dtype_rules import rule_first
from .indexing import index_select, index_tensor
from .indexing.scatter import scatter, scatter_add
from .indexing.static_nonzero import _nonzero_static
from .layout import cat, movedim, reshape
from .limited_rules import refuse_limited
from .out_argument import check_no_grad, check_out_type, write_out
from .registry import NOT_DIFFERENTIABLE, Extern, OpError, bind, define_op
from .scans import cumsum
from .sorting import sort


def _on_device_of(x: Tensor, array: np.ndarray, dtype) -> Tensor:
    """A host result as a tensor on x's device."""
    result = Tensor._make(np.asarray(array, order="C"), dtype)  # keeps a 0-d result 0-d
    return result.to(x.device) if x.is_cuda else result


# ---- unique ------------------------------------------------------------------------------------

def unique(x: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None):
    """The distinct values of x, sorted (distinct slices along `dim` when given), with, as
    asked, the index of each entry's value among them and how often each occurs. NaNs are all
    distinct. The result's size depends on the data: while a compiled function is traced
    (dim=None), the count of distinct values is this call's, checked on every run, as
    nonzero's is (a split of the graph); with `dim` it is a graph break."""
    if x.dtype.is_complex:  # complex numbers have no order to sort them by
        raise NotImplementedError("\"unique\" not implemented for "
                                  f"'{SCALAR_TYPE_NAMES[x.dtype.name]}'")
    refuse_traced_differentiable(x, "unique()")
    if dim is None and is_traced(x):
        return _unique_traced(x, return_inverse, return_counts)
    data = x._host("unique()")
    if dim is None:
        values, inverse, counts = np.unique(data.reshape(-1), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        inverse = inverse.reshape(data.shape)
    else:
        if x.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        axis = normalize_dim(dim, x.ndim)
        values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True,
                                            axis=axis, equal_nan=False)
        inverse = inverse.reshape(-1)
    # torch sorts on the CPU whether or not `sorted` asks for it; so does this.
    result = [not_differentiable(x, _on_device_of(x, values, x.dtype),
                                 "_unique2" if dim is None else "unique_dim")]
    if return_inverse:
        result.append(_on_device_of(x, inverse.astype(np.int64), dtypes.int64))
    if return_counts:
        result.append(_on_device_of(x, counts.astype(np.int64), dtypes.int64))
    return result[0] if len(result) == 1 else tuple(result)


def _unique(input: Tensor, sorted: bool = True,  # noqa: A002 - torch's names
            return_inverse: bool = False) -> tuple:
    """torch._unique: unique's values and, as asked, the inverse indices (an empty int64
    tensor where not asked)."""
    return _all_three(input, sorted, return_inverse, False)[:2]


def _unique2(input: Tensor, sorted: bool = True,  # noqa: A002 - torch's names
             return_inverse: bool = False, return_counts: bool = False) -> tuple:
    """torch._unique2: unique's values, inverse indices and counts, always three tensors (the
    ones not asked for empty)."""
    return _all_three(input, sorted, return_inverse, return_counts)


def _all_three(x: Tensor, sorted: bool, return_inverse: bool,  # noqa: A002
                 return_counts: bool) -> tuple:
    """unique's three results, the ones not asked for empty int64 tensors, as torch's
    _unique2 returns them."""
    found = unique(x, sorted, return_inverse, return_counts)
    found = list(found) if isinstance(found, tuple) else [found]
    values = found.pop(0)
    empty = _on_device_of(x, np.zeros(0, np.int64), dtypes.int64)
    inverse = found.pop(0) if return_inverse else empty
    counts = found.pop(0) if return_counts else empty
    return values, inverse, counts


_NODE_NAMES = {"_unique2": "Unique2Backward0", "unique_dim": "UniqueDimBackward0",
               "unique_consecutive": "UniqueConsecutiveBackward0"}


def refuse_traced_differentiable(x: Tensor, call: str) -> None:
    """A graph break for unique of a traced tensor that requires grad: torch gives unique no
    derivative, so a backward through its result raises (not_differentiable), which a compiled
    backward cannot; the call runs eagerly."""
    if x._requires_grad and state.grad_enabled and x._payload is None:
        graph_break(f"{call} of a tensor that requires grad (torch's backward through its "
                    "result raises)", needs_data=False)


def not_differentiable(x: Tensor, values: Tensor, name: str) -> Tensor:
    """`values`, made from x by an op torch gives no derivative: where x requires grad, they
    do too, and a backward reaching them raises torch's NotImplementedError (they do not
    silently stop the gradient)."""
    if not (x._requires_grad and state.grad_enabled):
        return values
    return registry.DELAYED_ERROR(f"the derivative for '{name}' is not implemented.", values,
                                  x, NotImplementedError, _NODE_NAMES[name])


def is_traced(x: Tensor) -> bool:
    """Whether x is a value of a trace that can take this call's data-dependent sizes."""
    from ..tensor.state import state

    tracer = state.tracer
    return x._payload is None and tracer is not None and tracer.evaluates and not x._batched


def _unique_traced(x: Tensor, return_inverse: bool, return_counts: bool):
    """unique from graph ops: runs of the sorted values (runs_traced)."""
    return runs_traced(x, None, return_inverse, return_counts, ordered=True)


def runs_traced(x: Tensor, dim, return_inverse: bool, return_counts: bool, ordered: bool):
    """unique (`ordered`: of the sorted values) or unique_consecutive from graph ops: a run of
    equal values (slices along `dim`) starts where one differs from the one before it (a NaN
    differs from every value, so each NaN is its own run, as eagerly); the number of runs is
    a size the graph computes, bound on each run of the graph (tensor/shape_env.py
    size_from_value), and the rest follows from it."""
    order = None
    if dim is None:
        axis, rows = 0, reshape(x, -1)
        if ordered:
            rows, order = sort(rows, stable=True)
        changed = rows[1:] != rows[:-1]
    else:
        axis = normalize_dim(dim, x.ndim)
        rows = reshape(movedim(x, axis, 0), (x.shape[axis], -1))
        changed = (rows[1:] != rows[:-1]).any(1)
    total = rows.shape[0]
    starts = cat([changed.new_ones((min(total, 1),)), changed])
    # The number of runs: a size the graph computes (tensor/shape_env.py size_from_value).
    count = state.tracer.env.size_from_value(starts.sum().item(), "unique() (its result's size "
                                             "depends on the data)")
    positions = reshape(_nonzero_static(starts, count, -1, None), -1)
    if dim is None:
        result = [index_tensor(rows, reshape(positions, 1, -1), (0,))]
    else:
        result = [index_select(x, axis, positions)]
    if return_inverse:
        runs = cumsum(starts, 0) - 1
        if order is not None:
            runs = scatter(runs.new_zeros(runs.shape), 0, order, runs)
        result.append(reshape(runs, tuple(x.shape) if dim is None else (total,)))
    if return_counts:
        ends = cat([positions[1:], positions.new_full((min(count, 1),), total)])
        result.append(ends - positions)
    return result[0] if len(result) == 1 else tuple(result)


# ---- bincount ---------------------------------------------------------------------------------

def bincount(x: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ..., max(x) occurs in the 1-D non-negative integer x (at
    least `minlength` counts), or the sum of `weights` at those entries. The result's size
    depends on the data, so this is a graph break while tracing."""
    refuse_limited("bincount_cpu", x)
    if x.dtype.is_floating_point or x.dtype is dtypes.bool_:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{SCALAR_TYPE_NAMES[x.dtype.name]}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if is_traced(x) and x.ndim == 1 and (weights is None or weights._payload is None):
        return _bincount_traced(x, weights, minlength)
    data = x._host("bincount()")
    if data.ndim != 1 or (data.size and data.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _on_device_of(x, np.bincount(data, minlength=minlength), dtypes.int64)
    if weights.ndim != 1 or weights.shape[0] != data.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # float32 and float64 weights keep their dtype; others sum in float64, as in torch.
    dtype = weights.dtype if weights.dtype.is_floating_point else dtypes.float64
    counts = np.bincount(data, weights=weights._host("bincount()").astype(np.float64),
                         minlength=minlength)
    return _on_device_of(x, counts.astype(dtype.numpy), dtype)


def _bincount_traced(x: Tensor, weights: Tensor | None, minlength: int) -> Tensor:
    """bincount from graph ops: the largest value (and whether any is negative) is the
    call's, checked on every run; the counts are a scatter-add of ones or of the weights."""
    total = x.numel()
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != total):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dtype = dtypes.int64 if weights is None else (
        weights.dtype if weights.dtype.is_floating_point else dtypes.float64)
    size = minlength
    if total:
        if (x.min() < 0).item().specialize("bincount() (negative inputs raise)"):
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        largest = x.max().item().specialize("bincount() (its result's size depends on the "
                                            "largest value)")
        size = max(int(largest) + 1, minlength)
    counts = x.new_zeros((size,), dtype=dtype)
    if not total:
        return counts
    values = x.new_ones((total,), dtype=dtype) if weights is None else weights.to(dtype)
    return scatter_add(counts, 0, x.long(), values)


# ---- histc ------------------------------------------------------------------------------------

def _edge(value: float, from_data: bool) -> str:
    """An edge as torch prints it in its error (C++'s default float format); a NaN edge
    computed from the data prints as "-nan", as the NaN torch's aminmax produces does."""
    if math.isnan(value):
        return "-nan" if from_data else "nan"
    return f"{value:g}"


def _histc_range(left: float, right: float, from_data: bool) -> tuple:
    """torch's range of one histogram, checked: [left, right] widened by 1 each way when
    empty."""
    if left == right:
        left, right = left - 1, right + 1
    if not (math.isfinite(left) and math.isfinite(right)):
        raise OpError(RuntimeError(f"torch.histc: range of [{_edge(left, from_data)}, "
                                   f"{_edge(right, from_data)}] is not finite"))
    if not left < right:
        raise OpError(RuntimeError("torch.histc: max must be larger than min"))
    return left, right


def _histc_impl(x: np.ndarray, bins: int, min: float, max: float,  # noqa: A002
                batch_dims: int) -> np.ndarray:
    """One histogram per index of the `batch_dims` leading dims (inside vmap), each over its
    own range when min == max: the bins of row r are offset by r * bins, so one bincount
    counts them all."""
    batch = x.shape[:batch_dims]
    rows = x.reshape(math.prod(batch), math.prod(x.shape[batch_dims:]))
    from_data = float(min) == float(max) and rows.shape[1] > 0
    if from_data:  # each row's own range; NaN when the row holds one
        lows, highs = rows.min(axis=1).astype(np.float64), rows.max(axis=1).astype(np.float64)
    else:
        lows = np.full(rows.shape[0], float(min))
        highs = np.full(rows.shape[0], float(max))
    ranges = [_histc_range(float(low), float(high), from_data) for low, high in zip(lows, highs)]
    # torch's bin of an element, in the input's dtype: (x - left) * bins / (right - left),
    # truncated; elements outside [left, right] (and NaNs) are not counted, and the last bin
    # holds its right edge.
    kind = x.dtype.type
    low = np.array([kind(left) for left, _ in ranges], x.dtype).reshape(-1, 1)
    high = np.array([kind(right) for _, right in ranges], x.dtype).reshape(-1, 1)
    counted = (rows >= low) & (rows <= high)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = (rows - low) * kind(bins) / (high - low)
    positions = np.minimum(np.where(counted, scaled, 0).astype(np.int64), bins - 1)
    positions += np.arange(rows.shape[0]).reshape(-1, 1) * bins
    counts = np.bincount(positions[counted], minlength=rows.shape[0] * bins)
    return counts.reshape(batch + (bins,)).astype(x.dtype)


HISTC = define_op(name="histc", arity=1,
                  shape=lambda shape, bins, min, max, batch_dims: (*shape[:batch_dims], bins),
                  dtype=rule_first, impl=_histc_impl, vjp=NOT_DIFFERENTIABLE, saves=(),
                  lowering=Extern("histogram", ("data",)), batch=batching.batch_dims_rule)


def histc(x: Tensor, bins: int = 100, min: float = 0, max: float = 0, *,  # noqa: A002
          out=None) -> Tensor:
    """The histogram of x's values in `bins` equal bins over [min, max] (the data's own range
    when min == max); values outside are not counted. Not differentiable."""
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{SCALAR_TYPE_NAMES[x.dtype.name]}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    result = bind(HISTC, (x,), {"bins": int(bins), "min": float(min), "max": float(max),
                                "batch_dims": 0})
    if out is None:
        return result
    check_out_type("histc", out)
    check_no_grad("histc", (out,))
    if out.dtype is not x.dtype:
        raise RuntimeError(f"torch.histogram: input tensor and hist tensor should have the same "
                           f"dtype, but got input {C_TYPE_NAMES[x.dtype.name]} and hist "
                           f"{C_TYPE_NAMES[out.dtype.name]}")
    return write_out("histc", out, result)
