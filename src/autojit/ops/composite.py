"""Composite ops: written from primitives, so they need no shape, VJP or kernel rules.

Autograd, double backward, tracing and fusion all come from the primitives these expand to.
Where a naive formula would overflow or produce 0 * inf in its gradient, the stable form is
spelled out here (softplus, logsumexp, norm).
"""

from __future__ import annotations

import math

from .. import dtypes
from ..tensor import Tensor
from . import elementwise as ew
from .reduction import amax, normalize_dims, sum_

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

# ---- elementwise ------------------------------------------------------------------------------


def square(x):
    return x * x


def round(x, *, decimals: int = 0):  # noqa: A001 - torch's name
    """Round to the nearest integer, halves to even (torch.round); with `decimals`, to that
    many decimal places. Integer tensors are returned unchanged. The gradient is zero."""
    if not x.dtype.is_floating_point:
        return ew.clone(x)
    if decimals:
        scale = 10.0 ** decimals
        return round(x * scale) / scale
    below = ew.floor(x)
    fraction = x - below
    # An exact half goes to the even neighbour: up when `below` is odd.
    odd = ew.remainder(below, 2) == 1
    up = (fraction > 0.5) | ((fraction == 0.5) & odd)
    return ew.where(up, below + 1, below)


def reciprocal(x):
    return 1 / x


def rsqrt(x):
    return 1 / ew.sqrt(x)


def exp2(x):
    # pow(2, x), not exp(x ln 2): the product's rounding error, up to |x ln 2| 2**-53, is
    # exp's argument's error, which made results up to 686 ulp off near the ends of the range.
    return ew.pow(2.0, x)


def log2(x):
    return ew.log(x) / _LN2


def log10(x):
    return ew.log(x) / _LN10


def tan(x):
    return ew.sin(x) / ew.cos(x)


def relu(x):
    """max(x, 0); the gradient at 0 is 0, as in torch."""
    return ew.where(x <= 0, 0, x)


def gelu(x, approximate: str = "none"):
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + ew.tanh(inner))
    if approximate != "none":
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate}")
    return 0.5 * x * (1 + ew.erf(x * (1 / math.sqrt(2))))


def silu(x):
    return x * ew.sigmoid(x)


def softplus(x, beta: float = 1.0, threshold: float = 20.0):
    """log(1 + exp(beta x)) / beta, linear above threshold; exp never overflows."""
    scaled = x * beta
    safe = ew.minimum(scaled, threshold)
    return ew.where(scaled > threshold, x, ew.log1p(ew.exp(safe)) / beta)


def clamp(x, min=None, max=None):  # noqa: A002 - torch's names
    """Values limited to [min, max]; the gradient flows where min <= x <= max."""
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    result = x
    if min is not None:
        result = ew.where(x < min, min, result)
    if max is not None:
        result = ew.where(x > max, max, result)
    return result


# ---- reductions -------------------------------------------------------------------------------


def _count(x: Tensor, dim) -> int:
    shape = x.shape
    count = 1
    for axis in normalize_dims(dim, x.ndim):
        count *= shape[axis]
    return count


def mean(x: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {x.dtype.name.title()}")
    return sum_(x, dim, keepdim) / _count(x, dim)


def var(x: Tensor, dim=None, *, correction=1, keepdim: bool = False, unbiased=None) -> Tensor:
    if unbiased is not None:
        correction = 1 if unbiased else 0
    centered = x - mean(x, dim, keepdim=True)
    return sum_(centered * centered, dim, keepdim) / max(_count(x, dim) - correction, 0)


def std(x: Tensor, dim=None, *, correction=1, keepdim: bool = False, unbiased=None) -> Tensor:
    return ew.sqrt(var(x, dim, correction=correction, keepdim=keepdim, unbiased=unbiased))


def norm(x: Tensor, p=2, dim=None, keepdim: bool = False) -> Tensor:
    """The p-norm over `dim`; the gradient of the 2-norm at 0 is 0, as in torch."""
    if p in ("fro", 2, 2.0):
        squared = sum_(x * x, dim, keepdim)
        # sqrt'(0) is inf; route zeros through sqrt(1) and mask, so the gradient is 0 there.
        is_zero = squared == 0
        return ew.where(is_zero, 0, ew.sqrt(ew.where(is_zero, 1, squared)))
    if p == 1:
        return sum_(ew.abs(x), dim, keepdim)
    if p in (math.inf, "inf"):
        return amax(ew.abs(x), dim if dim is not None else (), keepdim)
    if p in (-math.inf, "-inf"):
        from .reduction import amin

        return amin(ew.abs(x), dim if dim is not None else (), keepdim)
    if p == 0:
        return sum_((x != 0).to(x.dtype), dim, keepdim)
    return sum_(ew.abs(x) ** p, dim, keepdim) ** (1.0 / p)


def logsumexp(x: Tensor, dim, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) computed around the maximum, so it neither overflows nor underflows."""
    if not x.dtype.is_floating_point:
        x = x.to(dtypes.get_default_dtype())
    peak = amax(x, dim, keepdim=True).detach()
    peak = ew.where(ew.isnan(peak) | (ew.abs(peak) == math.inf), 0, peak)
    total = sum_(ew.exp(x - peak), dim, keepdim=True)
    result = ew.log(total) + peak
    if not keepdim:
        result = result.squeeze(normalize_dims(dim, x.ndim))
    return result
