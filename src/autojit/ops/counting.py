"""Counting: unique, bincount (results whose size depends on the data) and histc.

unique and bincount give as many entries as the data has distinct values, or as its largest
value says: a trace cannot know that size, so while tracing they are a graph break (the
compiled function runs eagerly), as nonzero is; eagerly they run in NumPy on the host (a CUDA
tensor's data is copied there and the results copied back). histc has `bins` entries whatever
the data, so it is a primitive, with an extern lowering ("histogram") that a compiled CPU plan
runs through its NumPy impl; its impl follows torch's arithmetic so that values on the edge of
a bin land in the same bin. None of these is differentiable.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import dtypes
from ..tensor.dtypes import C_TYPE_NAMES, SCALAR_TYPE_NAMES
from ..tensor.tensor import Tensor, normalize_dim
from . import batching
from .out_argument import check_no_grad, check_out_type, write_out
from .registry import NOT_DIFFERENTIABLE, Extern, OpError, bind, define_op, rule_first


def _on_device_of(x: Tensor, array: np.ndarray, dtype) -> Tensor:
    """A host result as a tensor on x's device."""
    result = Tensor._make(np.ascontiguousarray(array), dtype)
    return result.to(x.device) if x.is_cuda else result


# ---- unique ------------------------------------------------------------------------------------

def unique(x: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None):
    """The distinct values of x, sorted (distinct slices along `dim` when given), with, as
    asked, the index of each entry's value among them and how often each occurs. NaNs are all
    distinct. The result's size depends on the data, so this is a graph break while tracing."""
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
    result = [_on_device_of(x, values, x.dtype)]
    if return_inverse:
        result.append(_on_device_of(x, inverse.astype(np.int64), dtypes.int64))
    if return_counts:
        result.append(_on_device_of(x, counts.astype(np.int64), dtypes.int64))
    return result[0] if len(result) == 1 else tuple(result)


# ---- bincount ---------------------------------------------------------------------------------

def bincount(x: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ..., max(x) occurs in the 1-D non-negative integer x (at
    least `minlength` counts), or the sum of `weights` at those entries. The result's size
    depends on the data, so this is a graph break while tracing."""
    if x.dtype.is_floating_point or x.dtype is dtypes.bool_:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{SCALAR_TYPE_NAMES[x.dtype.name]}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
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
