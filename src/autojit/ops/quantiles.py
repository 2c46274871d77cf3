"""Quantiles: quantile and nanquantile, composites of sort, gather and lerp.

torch's algorithm step for step (ATen's quantile_compute): the reduced dim is sorted (NaN
last), each q becomes a fractional rank among the sorted values (among the non-NaN ones for
nanquantile; the last rank where a NaN makes quantile's result NaN), the interpolation mode
rounds the rank or keeps it, and the values at the ranks below and above are interpolated by
lerp. Written from differentiable ops, the gradient reaches the input through the sort's
gather, and q through the interpolation weight, as torch's does; no rules of their own.
"""

from __future__ import annotations

import numbers

from ..tensor import dtypes
from ..tensor.tensor import Tensor, normalize_dim
from . import elementwise as ew
from .elementwise.math_composites import lerp
from .indexing import _gather
from .layout import reshape
from .out_argument import check_out_dtype, check_out_type, write_out
from .reduction import any_, sum_
from .sorting import sort

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")

def _q_argument(name: str, x, q):
    """q as a tensor of x's dtype (a number: checked in [0, 1] first, as torch's double
    overload does), and whether it was a number or a 0-d tensor (the result has no q dim)."""
    if isinstance(q, Tensor):
        return q
    if isinstance(q, numbers.Real):
        q = float(q)
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
        return q
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got (Tensor, "
        f"{type(q).__name__}), but expected one of:\n"
        f" * (Tensor input, Tensor q, int dim = None, bool keepdim = False, *, str "
        f"interpolation = \"linear\", Tensor out = None)\n"
        f" * (Tensor input, float q, int dim = None, bool keepdim = False, *, str "
        f"interpolation = \"linear\", Tensor out = None)")


def _checks(x: Tensor, q) -> None:
    """torch's quantile_checks, in its order."""
    if x.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if isinstance(q, Tensor) and q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor) and q.dtype is not x.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if isinstance(q, Tensor) and q._payload is not None and not q.is_cuda and q.numel():
        # torch checks a CPU q's values; a q being traced has none to check (as a CUDA q's
        # would need a synchronization torch skips too).
        values = q._payload
        if not ((values >= 0) & (values <= 1)).all():
            raise RuntimeError("quantile() q values must be in the range [0, 1]")


def _output_shape(x: Tensor, q, dim, keepdim: bool) -> tuple:
    if dim is not None and x.ndim > 0:
        shape = list(x.shape)
        wrapped = normalize_dim(dim, x.ndim)
        if keepdim:
            shape[wrapped] = 1
        else:
            del shape[wrapped]
    else:
        shape = [1] * x.ndim if keepdim else []
    if isinstance(q, Tensor) and q.ndim > 0:
        shape.insert(0, q.numel())
    return tuple(shape)


def _quantile(name, input, q, dim, keepdim, interpolation, out, ignore_nan):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    x = input
    q = _q_argument(name, x, q)
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    _checks(x, q)
    shape = _output_shape(x, q, dim, keepdim)
    if dim is None:
        sorted_values = sort(reshape(x, (-1,))).values
    else:
        wrapped = normalize_dim(dim, x.ndim)
        # The reduced dim moves last and a 1 stays in its place: torch's layout.
        sorted_values = sort(x.unsqueeze(-1).transpose(wrapped, -1)).values
    q_tensor = q if isinstance(q, Tensor) else ew.fill_like(x.new_empty(()), q)
    q_view = reshape(q_tensor, (-1,))
    missing = ew.isnan(sorted_values)
    if ignore_nan:
        # Ranks among the non-NaN values; where all are NaN, rank 0 (a NaN) is picked.
        counted = sum_(ew.logical_not(missing), -1, keepdim=True)
        ranks = q_view * (counted - 1)
        ranks = ew.where(ranks < 0, 0.0, ranks)
    else:
        # A NaN anywhere makes the quantile NaN: the last rank, where sort put the NaN.
        last = sorted_values.shape[-1] - 1
        ranks = ew.where(any_(missing, -1, keepdim=True), float(last), q_view * last)
    if interpolation == "lower":
        ranks = ew.floor(ranks)
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    last_dim = sorted_values.ndim - 1
    below = ranks.to(dtypes.int64)
    values = _gather(sorted_values, last_dim, below)
    if interpolation in ("linear", "midpoint"):
        weights = (ew.fill_like(ranks, 0.5) if interpolation == "midpoint"
                   else ranks - below.to(ranks.dtype))
        above = _gather(sorted_values, last_dim, ranks.ceil().to(dtypes.int64))
        values = lerp(values, above, weights)
    if isinstance(q, Tensor) and q.ndim > 0:
        values = values.unsqueeze(0).transpose(0, -1).squeeze(-1)
    result = reshape(values, shape)
    return result if out is None else _write(name, out, result)


def _write(name: str, out, result: Tensor) -> Tensor:
    """torch's quantile(out=) is a copy into out (resized first where its shape differs), which
    autograd records as any copy_ (torch's out= ops elsewhere refuse inputs that require
    grad)."""
    check_out_type(name, out)
    if out.dtype is not result.dtype:
        raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
    check_out_dtype(name, result.dtype, out)
    if tuple(out.shape) != tuple(result.shape):
        write_out(name, out, result)
    return out.copy_(result)


def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear",  # noqa: A002
             out=None):
    """The q-th quantiles of input along `dim` (of all elements when None), interpolated as
    `interpolation` says: linear, lower, higher, midpoint or nearest; NaN where a NaN is
    among the values. q: a number or a 0-d or 1-d tensor (its values make the first dim)."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, out, ignore_nan=False)


def nanquantile(input, q, dim=None, keepdim: bool = False, *,  # noqa: A002
                interpolation: str = "linear", out=None):
    """quantile ignoring NaN values, as if they were not there (NaN where all are)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, out, ignore_nan=True)
