"""make_tensor: torch.testing's random tensor of a shape, dtype and device, with its rules.

Values are drawn uniformly from [low, high) (integers: [-9, 10) by default, clamped to the
dtype's range; floats: [-9, 9)); `noncontiguous` returns every other element of a tensor twice
as long in its last dim, `memory_format` a copy in that layout, `exclude_zero` replaces zeros
by 1 (integers) or the dtype's smallest normal number (floats), as torch's make_tensor does.
"""

from __future__ import annotations

import collections.abc
import math
import warnings

from ..ops import random as random_ops
from ..ops.complex_numbers import view_as_complex
from ..tensor import dtypes
from ..tensor.creation import empty, randint
from ..tensor.type_info import finfo, iinfo

__all__ = ["make_tensor"]

_FLOATING = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def _bounds(low, high, dtype, lowest, highest, default_low, default_high):
    """torch's modify_low_high: the defaults, its checks and the clamping to the dtype."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING:
        warnings.warn("Passing `low==high` to `autojit.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`autojit.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but autojit.{dtype.name} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not dtype.is_floating_point:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False, memory_format=None):
    """A tensor of `shape`, `dtype` and `device` filled with values drawn uniformly from
    [low, high), as torch.testing.make_tensor.

    >>> import autojit
    >>> from autojit.testing import make_tensor
    >>> x = make_tensor(2, 3, dtype=autojit.int64, device="cpu", low=0, high=4)
    >>> x.shape, bool(((0 <= x) & (x < 4)).all())
    (autojit.Size([2, 3]), True)
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if requires_grad and dtype.category < dtypes.FLOATING:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype.is_complex:  # real and imaginary parts drawn each on [low, high), as torch's
        parts = make_tensor(*shape, 2, dtype=dtype.to_real(), device=device, low=low, high=high)
        result = view_as_complex(parts)
    elif dtype is dtypes.bool_:
        low, high = _bounds(low, high, dtype, 0, 2, 0, 2)
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif not dtype.is_floating_point:
        info = iinfo(dtype)
        low, high = _bounds(low, high, dtype, info.min,
                            info.max + (1 if dtype is not dtypes.int64 else 0), -9, 10)
        result = randint(low, high, shape, device=device, dtype=dtype)
    else:
        info = finfo(dtype)
        low, high = _bounds(low, high, dtype, info.min, info.max, -9, 9)
        result = empty(shape, device=device, dtype=dtype)
        if high - low >= info.max:  # the range's width overflows: drawn halved, then doubled
            random_ops.uniform_(result, low / 2, high / 2).mul_(2)
        else:
            random_ops.uniform_(result, low, high)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype.category < dtypes.FLOATING else finfo(dtype).tiny
    if dtype.category >= dtypes.FLOATING:
        result.requires_grad = requires_grad
    return result
