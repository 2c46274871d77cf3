"""The values of torch's CPU linspace kernel for the floating dtypes, element for element, and
the correctly rounded fused multiply-add they need (creation.py's linspace calls them).

torch's kernel (RangeFactoriesKernel.cpp) computes in the dtype: the step is
`(end - start) / (steps - 1)`, the first half of the values `start + step * i` and the second
half `end - step * (steps - 1 - i)`, counted from the end, so both bounds come out exactly. GCC
contracts each float32 and float64 expression into one fused multiply-add (one rounding);
float16 and bfloat16 round every operation (c10::Half and c10::BFloat16 compute in float and
round back). A linspace computed otherwise (NumPy's: `start + i * step` in double, then cast)
differs in the last bit in a third of the values, which moves grid points that libraries
assume equally spaced (gpytorch's interpolation grids) by a unit in the last place.
"""

from __future__ import annotations

import numpy as np

from . import dtypes

_SPLIT = 134217729.0  # 2^27 + 1: Dekker's splitting constant for float64


def fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c for float64 arrays with the product's rounding error carried: Dekker's exact
    product and Knuth's exact sum, then one rounding of what remains (a fused multiply-add's
    result, but for ties between its last two roundings, rarer than one in a million)."""
    product = a * b
    high_a, high_b = _high(a), _high(b)
    low_a, low_b = a - high_a, b - high_b
    product_error = ((high_a * high_b - product) + high_a * low_b + low_a * high_b) + \
        low_a * low_b
    total = product + c
    rounded_part = total - product
    sum_error = (product - (total - rounded_part)) + (c - rounded_part)
    return total + (sum_error + product_error)


def _high(x: np.ndarray) -> np.ndarray:
    scaled = _SPLIT * x
    return scaled - (scaled - x)


def linspace_values(start: float, end: float, steps: int, dtype) -> np.ndarray:
    """torch's linspace of `steps` (at least 2) values of a real floating dtype, as the
    dtype's NumPy array (bfloat16: float32 values that are bfloat16 numbers)."""
    index = np.arange(steps, dtype=np.float64)
    first_half = index < steps // 2
    if dtype in (dtypes.float16, dtypes.bfloat16):
        if dtype is dtypes.float16:
            def rounded(x):
                return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)
        else:
            def rounded(x):
                return dtypes.round_to_bfloat16(np.asarray(x, np.float32))
        low, high = rounded(np.float32(start)), rounded(np.float32(end))
        step = rounded(rounded(high - low) / rounded(np.float32(steps - 1)))
        counted = np.where(first_half, index, steps - 1 - index).astype(np.float32)
        offsets = rounded(step * rounded(counted))
        values = rounded(np.where(first_half, low + offsets, high - offsets))
        return values.astype(np.float16) if dtype is dtypes.float16 else values
    working = np.float32 if dtype is dtypes.float32 else np.float64
    low, high = working(start), working(end)
    step = working((high - low) / working(steps - 1))
    counted = np.where(first_half, index, steps - 1 - index)
    signed = np.where(first_half, np.float64(step), -np.float64(step))
    bounds = np.where(first_half, np.float64(low), np.float64(high))
    if working is np.float32:  # a float32 product is exact in double: one rounding at the end
        return (signed * counted + bounds).astype(np.float32)
    return fma64(signed, counted, bounds)
