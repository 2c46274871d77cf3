"""atan, atan2, asin and acos in LLVM IR: one arctangent core on [0, 1] in double-double.

llvm/expression.py emits these through `emit_unary` and `emit_atan2` for the primitives of
ops/elementwise/math_primitives.py. Like mathlib/__init__.py, the code is straight-line (selects, no
branches, a table read by gathers), so the loop vectorizer keeps the loop vectorized. A float32
argument is widened, computed in double and rounded once.

The core (`_atan_unit`) takes a in [0, 1]: with c = k/8 the nearest eighth, atan a =
atan c + atan r with r = (a - c) / (1 + a c), |r| <= 1/16 (a - c is exact), and atan r is its
Taylor series to r**15 (the next term is below 2**-58 of r). atan c comes from a table of
double-doubles. atan2(y, x) reduces to the core with min(|x|, |y|) / max(|x|, |y|), then
pi/2 - . when |y| > |x| and pi - . when x's sign bit is set, each step an exact two-sum, so the
only rounding of note is the last addition: within 1 ulp of the exact result (tests/
test_math_inverse.py measures it against NumPy). atan x is atan2(x, 1); asin x is
atan2(x, sqrt(1 - x*x)) and acos x atan2(sqrt(1 - x*x), x), with 1 - x*x as an fma below
|x| = 1/2 and as (1 - |x|)(1 + |x|) above (1 - |x| is then exact). Special values are C99's.
"""

from __future__ import annotations

import math
from fractions import Fraction

from llvmlite import ir

from . import DOUBLE, INT64, MathEmitter

PI_HI, PI_LO = 3.141592653589793, 1.2246467991473532e-16
PIO2_HI, PIO2_LO = PI_HI / 2, PI_LO / 2
# atan r = r + r**3 * sum ATAN_SERIES[n] * r**(2n), the Taylor series to r**15.
ATAN_SERIES = [(-1) ** (n + 1) / (2 * n + 3) for n in range(7)]
ATAN_STEPS = 8  # the table holds atan(k / ATAN_STEPS) for k = 0 ... ATAN_STEPS


def _atan_exact(numerator: int, denominator: int, bits: int = 200) -> Fraction:
    """atan(numerator / denominator) to about 2**-bits, in integers by Euler's series
    atan x = sum 2**2n (n!)**2 / (2n+1)! * x**(2n+1) / (1 + x*x)**(n+1), whose ratio
    x*x / (1 + x*x) is at most 1/2 for x <= 1."""
    p, q = numerator, denominator
    scale = p * p + q * q
    term = (p * q << bits) // scale  # x / (1 + x*x), times 2**bits
    total, n = 0, 0
    while term:
        total += term
        n += 1
        term = term * 2 * n * p * p // ((2 * n + 1) * scale)
    return Fraction(total, 1 << bits)


def _double_double(value: Fraction) -> tuple[float, float]:
    high = float(value)
    return high, float(value - Fraction(high))


ATAN_TABLE = [_double_double(_atan_exact(k, ATAN_STEPS)) for k in range(ATAN_STEPS + 1)]


class ArctangentEmitter(MathEmitter):
    """Emits atan, atan2, asin and acos in double into `builder`'s current block."""

    def _table_pair(self, index):
        """(atan_hi, atan_lo) of k / ATAN_STEPS for an i64 index k, by two table loads."""
        table = self._table("autojit.atan_table", [part for pair in ATAN_TABLE for part in pair])
        b = self.b
        row = b.mul(index, ir.Constant(INT64, 2))
        parts = []
        for column in (0, 1):
            address = b.gep(table, [b.add(row, ir.Constant(INT64, column))], inbounds=True,
                            source_etype=DOUBLE)
            parts.append(b.load(address, typ=DOUBLE, align=8))
        return parts

    def _atan_unit(self, a):
        """atan a for a in [0, 1] (NaN gives garbage, masked by the caller) as hi + lo."""
        b = self.b
        steps = self.intrinsic("llvm.rint", [b.fmul(a, self.const(float(ATAN_STEPS)))])
        steps = self.select(self.isnan(steps), self.const(0.0), steps)
        centre = b.fmul(steps, self.const(1.0 / ATAN_STEPS))
        r = b.fdiv(b.fsub(a, centre), self.fma(a, centre, self.const(1.0)))
        square = b.fmul(r, r)
        series = self.fma(b.fmul(r, square), self.horner(square, ATAN_SERIES), r)
        high, low = self._table_pair(b.fptosi(steps, INT64))
        return high, b.fadd(low, series)

    def _subtract_from(self, constant_high, constant_low, high, low):
        """(constant_high + constant_low) - (high + low) as a double-double, for
        |constant_high| >= |high| (a fast two-sum: exact)."""
        b = self.b
        total = b.fsub(self.const(constant_high), high)
        error = b.fsub(b.fsub(self.const(constant_high), total), high)
        return total, b.fadd(error, b.fsub(self.const(constant_low), low))

    def atan2(self, y, x):
        b = self.b
        ax, ay = self.fabs(x), self.fabs(y)
        swap = b.fcmp_ordered(">", ay, ax)
        big = self.select(swap, ay, ax)
        small = self.select(swap, ax, ay)
        ratio = b.fdiv(small, big)
        ratio = self.select(b.fcmp_ordered("==", big, self.const(0.0)), self.const(0.0), ratio)
        ratio = self.select(b.fcmp_ordered("==", small, self.const(math.inf)), self.const(1.0),
                            ratio)  # both infinite: pi/4 before the quadrant steps
        high, low = self._atan_unit(ratio)
        swapped = self._subtract_from(PIO2_HI, PIO2_LO, high, low)
        high = self.select(swap, swapped[0], high)
        low = self.select(swap, swapped[1], low)
        negative_x = b.icmp_signed("<", b.bitcast(x, INT64), ir.Constant(INT64, 0))
        reflected = self._subtract_from(PI_HI, PI_LO, high, low)
        high = self.select(negative_x, reflected[0], high)
        low = self.select(negative_x, reflected[1], low)
        result = self.intrinsic("llvm.copysign", [b.fadd(high, low), y])
        return self.select(b.fcmp_unordered("uno", x, y), b.fadd(x, y), result)

    def atan(self, x):
        return self.atan2(x, self.const(1.0))

    def _cosine_of_arcsine(self, x):
        """sqrt(1 - x*x) (NaN for |x| > 1), with 1 - x*x nearly exact."""
        b = self.b
        ax = self.fabs(x)
        near_zero = self.fma(b.fneg(x), x, self.const(1.0))
        near_one = b.fmul(b.fsub(self.const(1.0), ax), b.fadd(self.const(1.0), ax))
        square = self.select(b.fcmp_ordered("<", ax, self.const(0.5)), near_zero, near_one)
        return self.intrinsic("llvm.sqrt", [square])

    def asin(self, x):
        return self.atan2(x, self._cosine_of_arcsine(x))

    def acos(self, x):
        return self.atan2(self._cosine_of_arcsine(x), x)


UNARY = ("atan", "asin", "acos")


def _widened(builder, values, float_type):
    return values if float_type == DOUBLE else [builder.fpext(v, DOUBLE) for v in values]


def _narrowed(builder, value, float_type):
    return value if float_type == DOUBLE else builder.fptrunc(value, float_type)


def emit_unary(name, builder, module, value, float_type):
    """atan, asin or acos of a float or double `value` (a float computed in double)."""
    (wide,) = _widened(builder, [value], float_type)
    return _narrowed(builder, getattr(ArctangentEmitter(builder, module), name)(wide), float_type)


def emit_atan2(builder, module, y, x, float_type):
    wide_y, wide_x = _widened(builder, [y, x], float_type)
    return _narrowed(builder, ArctangentEmitter(builder, module).atan2(wide_y, wide_x),
                     float_type)
