"""Tests and masks: isfinite, isinf, isposinf, isneginf, nan_to_num, nansum, nanmean,
clamp_min, clamp_max, isclose, allclose, equal, count_nonzero and aminmax.

Composites of comparisons, `where` and the reductions, with torch's dtype rules (integers are
finite and never NaN, nanmean wants a floating dtype) and its messages. allclose and equal
return Python bools, so they read the data: inside a compiled function they break the graph,
as `bool(tensor)` does. aminmax returns torch's named tuple (min, max).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..tensor import dtypes
from ..tensor.tensor import Tensor
from . import elementwise as ew
from .complex_numbers import make_complex
from .composite import clamp
from .elementwise.math_primitives import SCALAR_TYPE_NAMES, tensor_argument
from .limited_rules import COMPLEX32, refuse_limited
from .reduction import amax, amin, sum_
from .shape_rules import normalize_dims


def _tensor(input, function: str) -> Tensor:
    return tensor_argument(input, function, "input", 1)


def isfinite(input):  # noqa: A002 - torch's names
    """Elementwise test for a finite value (not inf, -inf or NaN), as a bool tensor."""
    x = _tensor(input, "isfinite")
    if x.dtype.is_complex:  # both parts (|z| of finite parts may overflow)
        return isfinite(x.real) & isfinite(x.imag)
    if not x.dtype.is_floating_point:
        return x == x  # integers and bools are finite
    return ew.abs(x) < math.inf


def isinf(input):  # noqa: A002
    """Elementwise test for inf or -inf, as a bool tensor."""
    x = _tensor(input, "isinf")
    if x.dtype.is_complex:
        return isinf(x.real) | isinf(x.imag)
    if not x.dtype.is_floating_point:
        return x != x
    return ew.abs(x) == math.inf


def isposinf(input):  # noqa: A002
    """Elementwise test for inf, as a bool tensor."""
    x = _tensor(input, "isposinf")
    _no_complex(x, "isposinf")
    return x == math.inf if x.dtype.is_floating_point else x != x


def isneginf(input):  # noqa: A002
    """Elementwise test for -inf, as a bool tensor."""
    x = _tensor(input, "isneginf")
    _no_complex(x, "isneginf")
    return x == -math.inf if x.dtype.is_floating_point else x != x


def _no_complex(x: Tensor, function: str) -> None:
    if x.dtype.is_complex:
        raise RuntimeError(f"{function} does not support complex inputs.")


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):  # noqa: A002
    """x with NaN, inf and -inf replaced by `nan`, `posinf` and `neginf` (by default 0 and the
    dtype's largest and lowest finite values); integers are copied. The gradient is 0 where a
    value was replaced."""
    x = _tensor(input, "nan_to_num")
    refuse_limited("nan_to_num", x, taken=dtypes.UNSIGNED)
    if x.dtype.is_complex:  # each part on its own, as torch's
        parts = (nan_to_num(part, nan, posinf, neginf) for part in (x.real, x.imag))
        return make_complex(*parts)
    if not x.dtype.is_floating_point:
        return ew.clone(x)
    largest = float(np.finfo(x.dtype.numpy).max)
    posinf = largest if posinf is None else posinf
    neginf = -largest if neginf is None else neginf
    result = ew.where(x == math.inf, posinf, ew.where(x == -math.inf, neginf, x))
    return ew.where(ew.isnan(x), nan, result)


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002
    """Sum over `dim` (all when None) treating NaN as 0; integers sum as `sum` does."""
    x = _tensor(input, "nansum")
    if x.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if x.dtype.is_floating_point:
        x = ew.where(ew.isnan(x), 0, x)
    return sum_(x, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002
    """Mean over `dim` (all when None) of the values that are not NaN (floating dtypes)."""
    x = _tensor(input, "nanmean")
    if dtype is not None:
        dtype = dtypes.to_dtype(dtype)
        if not dtype.is_floating_point:
            raise RuntimeError(f"nanmean(): could not infer output dtype. Optional dtype must be "
                               f"either a floating point or complex dtype. Got: "
                               f"{SCALAR_TYPE_NAMES[dtype.name]}")
    if x.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {SCALAR_TYPE_NAMES[x.dtype.name]}")
    count = sum_(ew.logical_not(ew.isnan(x)), dim, keepdim)
    return nansum(x, dim, keepdim, dtype=dtype) / count


def clamp_min(input, min):  # noqa: A002
    """Elementwise `max(x, min)` (clamp with a lower bound only)."""
    if min is None:
        raise TypeError("clamp_min(): argument 'min' must be a Tensor or a Number, not NoneType")
    return clamp(_tensor(input, "clamp_min"), min=min)


def clamp_max(input, max):  # noqa: A002
    """Elementwise `min(x, max)` (clamp with an upper bound only)."""
    if max is None:
        raise TypeError("clamp_max(): argument 'max' must be a Tensor or a Number, not NoneType")
    return clamp(_tensor(input, "clamp_max"), max=max)


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
            equal_nan: bool = False):
    """Elementwise `|x - y| <= atol + rtol * |y|` (or equal, infinities included), as a bool
    tensor; NaN is close to NaN only with `equal_nan`. Both must have one dtype."""
    x, y = _tensor(input, "isclose"), tensor_argument(other, "isclose", "other", 2)
    if x.dtype is not y.dtype:
        raise RuntimeError(f"{SCALAR_TYPE_NAMES[x.dtype.name]} did not match "
                           f"{SCALAR_TYPE_NAMES[y.dtype.name]}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value}")
    x, y = x.detach(), y.detach()
    close = x == y
    if equal_nan and x.dtype.category >= dtypes.FLOATING:
        close = close | (ew.isnan(x) & ew.isnan(y))
    if rtol == 0 and atol == 0:
        return close
    if x.dtype.category < dtypes.FLOATING:
        # torch: bools and integers compare their errors as the default float (`3` and `5`
        # are not within atol=1.9; 2**24 + 1 and 2**24 are within 0.5 in float32)
        x, y = x.to(dtypes.get_default_dtype()), y.to(dtypes.get_default_dtype())
    allowed = atol + ew.abs(rtol * y)
    actual = ew.abs(x - y)
    return close | (isfinite(actual) & (actual <= allowed))


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
             equal_nan: bool = False) -> bool:
    """Whether every element of x is close to y's (isclose), as a Python bool."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input, other) -> bool:  # noqa: A002
    """Whether x and y have the same shape and the same elements, as a Python bool (NaN is not
    equal to itself)."""
    x, y = _tensor(input, "equal"), tensor_argument(other, "equal", "other", 2)
    refuse_limited("equal_cpu", x, taken=dtypes.UNSIGNED)
    if tuple(x.shape) != tuple(y.shape):
        return False
    return bool((x.detach() == y.detach()).all().item())


def count_nonzero(input, dim=None):  # noqa: A002
    """The number of nonzero elements over `dim` (an int, a tuple, or all when None), int64."""
    x = _tensor(input, "count_nonzero")
    if isinstance(dim, (tuple, list)):
        seen = set()
        for d in dim:
            axis = normalize_dims(int(d), x.ndim)
            if axis and axis[0] in seen:
                raise RuntimeError(f"dim {axis[0]} appears multiple times in the list of dims")
            seen.update(axis)
    if dim is None:  # torch's count of all of x is a kernel of its own, without uint64
        refuse_limited("nonzero_count_cpu", x, taken=COMPLEX32)
    return sum_(x.detach() != 0, dim)


aminmax_return = namedtuple("aminmax", ["min", "max"])


def aminmax(input, *, dim=None, keepdim: bool = False):  # noqa: A002
    """The minimum and maximum over `dim` (all when None), as a named tuple (min, max); ties
    share the gradient evenly, as amin and amax do."""
    x = _tensor(input, "aminmax")
    refuse_limited("aminmax_cpu", x)
    if dim is None:
        if x.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dims = None
    else:
        dims = normalize_dims(dim, x.ndim)
        if dims and x.shape[dims[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero size.")
    return aminmax_return(amin(x, dims, keepdim), amax(x, dims, keepdim))

