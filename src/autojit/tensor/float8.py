"""The five 8-bit floating formats of torch's float8 dtypes: their limits (finfo) and the
rounding of wider values to them, torch's conversions.

Like bfloat16, a float8 tensor is stored wider, as a float32 array whose values are all
numbers of its format (tensor/dtypes.py rounds every result made in it with `round_to`), and,
as in torch, almost no op computes in it: casts, copies, creation, indexing and moving
elements, comparisons for equality, `isnan` and `abs` (ops/limited_rules.py). The formats
differ in what a value beyond the largest becomes, as torch's conversions do: e4m3fn
saturates to its largest number (infinity included), e5m2 gives infinity, the "fnuz" formats
(no negative zero, one NaN) give NaN, and e8m0fnu, powers of two only, drops the sign and
rounds half up in the exponent. docs/notes/float8.md has the design.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FORMATS", "Float8Format", "round_to"]


class Float8Format:
    """One float8 format: `mantissa` bits, the smallest normal exponent `min_exponent`, the
    largest finite number `largest`, what an overflow becomes (`overflow`: "saturate", "inf"
    or "nan") and whether it has negative numbers and zero (`signed`, `negative_zero`)."""

    __slots__ = ("name", "mantissa", "min_exponent", "largest", "overflow", "signed",
                 "negative_zero", "eps")

    def __init__(self, name, mantissa, min_exponent, largest, overflow, signed=True,
                 negative_zero=True, eps=None):
        self.name = name
        self.mantissa = mantissa
        self.min_exponent = min_exponent
        self.largest = largest
        self.overflow = overflow
        self.signed = signed
        self.negative_zero = negative_zero
        # torch.finfo's eps: 2**-mantissa, but for e5m2fnuz, whose torch gives 2**-3
        self.eps = 2.0 ** -mantissa if eps is None else eps

    def limits(self) -> tuple:
        """(eps, largest, smallest, smallest normal) as torch.finfo gives them."""
        if self.mantissa == 0:  # e8m0fnu: its smallest number is its smallest normal one
            tiny = 2.0 ** self.min_exponent
            return 1.0, self.largest, tiny, tiny
        return (self.eps, self.largest, -self.largest,
                2.0 ** self.min_exponent)


FORMATS = {
    "float8_e4m3fn": Float8Format("float8_e4m3fn", 3, -6, 448.0, "saturate"),
    "float8_e5m2": Float8Format("float8_e5m2", 2, -14, 57344.0, "inf"),
    "float8_e4m3fnuz": Float8Format("float8_e4m3fnuz", 3, -7, 240.0, "nan",
                                    negative_zero=False),
    "float8_e5m2fnuz": Float8Format("float8_e5m2fnuz", 2, -15, 57344.0, "nan",
                                    negative_zero=False, eps=0.125),
    "float8_e8m0fnu": Float8Format("float8_e8m0fnu", 0, -127, 2.0 ** 127, "nan",
                                   signed=False),
}


def round_to(values, fmt: Float8Format) -> np.ndarray:
    """`values` rounded to the nearest numbers of `fmt` (ties to even), as float32, the way
    torch converts to the format; wider inputs go through float32 first, as torch's do."""
    x = np.asarray(values, dtype=np.float32).astype(np.float64)
    if fmt.mantissa == 0:
        return _round_to_powers_of_two(x, fmt)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(x)
        _, exponent = np.frexp(np.where(finite, x, 1.0))
        # The quantum at x's binade, or at the smallest normal binade for subnormal numbers.
        quantum = np.ldexp(1.0, np.maximum(exponent - 1, fmt.min_exponent) - fmt.mantissa)
        rounded = np.where(finite, np.round(x / quantum) * quantum, x)
        beyond = np.abs(rounded) > fmt.largest
        if fmt.overflow == "saturate":
            rounded = np.where(beyond, np.copysign(fmt.largest, rounded), rounded)
        elif fmt.overflow == "nan":
            rounded = np.where(beyond, np.nan, rounded)
        else:  # "inf": beyond the largest number is infinity, as IEEE formats round
            rounded = np.where(beyond, np.copysign(np.inf, rounded), rounded)
    if not fmt.negative_zero:
        rounded = np.where(rounded == 0, 0.0, rounded)
    return rounded.astype(np.float32)


def _round_to_powers_of_two(x: np.ndarray, fmt: Float8Format) -> np.ndarray:
    """e8m0fnu: the float32 value's biased exponent, plus one where its mantissa's top bit is
    set (half up), read as a power of two; the sign is dropped, zero becomes the smallest
    number and infinity or anything past the largest NaN, as torch's conversion does."""
    bits = np.abs(x).astype(np.float32).view(np.uint32)
    exponent = (bits >> np.uint32(23)).astype(np.int64) + ((bits >> np.uint32(22)) & 1)
    with np.errstate(over="ignore"):
        result = np.ldexp(1.0, exponent - 127)
    result = np.where((exponent >= 255) | np.isnan(x), np.nan, result)
    return result.astype(np.float32)
