"""Vectorizable math in LLVM IR: exp, log, log1p, expm1, tanh, sigmoid, erf, pow (and sin, cos
from trig.py). This package is the compiled kernels' math library: single.py (float32 exp
and log families), trig.py (sin, cos), atan.py (atan, atan2, asin, acos), erfc.py (erfc).

The CPU renderer (render.py, through llvm/expression.py) calls `emit_unary` and `emit_pow`
while it builds a kernel's loop body. Each emits straight-line IR (range reduction, a
polynomial, selects for the special values) into the current block, so the loop vectorizer
sees no calls and no branches; a scalar libm call would keep the loop scalar. sin and cos are
the exception: arguments beyond their inline reduction branch to a function the vectorizer
calls through a vector variant (trig.py). The algorithms here run in double
precision. A float32 argument of exp, expm1, log, log1p, tanh, sigmoid or erf goes to
single.py, which computes in float32 (a float takes half a double's vector width, and
there are no conversions); for sin, cos and pow a float32 argument is widened and the
result rounded back. See docs/notes/cpu-codegen.md for the algorithms and their measured
accuracy, docs/notes/accurate-numerics.md for the argument reduction of sin and cos and for
erf's tables (written by tools/erf_table.py).
"""

from __future__ import annotations

import math

from llvmlite import ir

from . import single as mathlib_single
from .trig import Trigonometry

DOUBLE = ir.DoubleType()
INT64 = ir.IntType(64)
BOOL = ir.IntType(1)

LOG2E = 1.4426950408889634
# ln 2 split so that k * LN2_HI is exact for |k| < 2**20 (fdlibm's constants).
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
SMALLEST_NORMAL = 2.2250738585072014e-308
ROUNDING_SHIFT = 1.5 * 2.0 ** 52  # MathEmitter.whole_to_int: its bits, 0x4338 << 48, plus k
ROUNDING_SHIFT_BITS = 0x4338 << 48

# Taylor coefficients 1/n! for exp on |r| <= ln2/2 (the degree-13 remainder is below 1e-17).
EXP_COEFFICIENTS = [1 / math.factorial(n) for n in range(14)]
# log(1+f) = f - f*f/2 + s*(f*f/2 + R(s*s)), R(z) = sum 2 z**k / (2k + 1) (fdlibm's identity).
LOG_COEFFICIENTS = [2 / (2 * k + 1) for k in range(1, 12)]
SIN_COEFFICIENTS = [(-1) ** n / math.factorial(2 * n + 1) for n in range(11)]
COS_COEFFICIENTS = [(-1) ** n / math.factorial(2 * n) for n in range(11)]
EXPM1_SMALL = 0.6931471805599453  # ln2: the series runs below, the reduction above
# expm1(x) = x + x*x * sum x**n / (n + 2)!, to degree 19 (remainder below 1e-17 for |x| < ln2).
EXPM1_COEFFICIENTS = [1 / math.factorial(n + 2) for n in range(18)]
# tanh's expm1 runs on |r| <= ln2/2 only: to 1/14! the remainder is below 3e-19 relative.
TANH_TERMS = 13
DOUBLE_COEFFICIENTS = {"exp": EXP_COEFFICIENTS, "log": LOG_COEFFICIENTS,
                       "sin": SIN_COEFFICIENTS, "cos": COS_COEFFICIENTS,
                       "expm1": EXPM1_COEFFICIENTS}
# A float32 result needs about 2**-30 relative error before its rounding, not 2**-53: shorter
# series (each remainder below 1e-9 relative on the same reduced range) halve the work. Only
# sin and cos run here for float32; the exp and log families have single.py.
SINGLE_COEFFICIENTS = dict(DOUBLE_COEFFICIENTS, sin=SIN_COEFFICIENTS[:7],
                           cos=COS_COEFFICIENTS[:7])


def _erf_small_coefficients():
    """erf(x) = x * P(x*x) for |x| < 0.5: P's Taylor coefficients, error below 1e-17."""
    return [2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1))
            for n in range(13)]


ERF_SMALL_COEFFICIENTS = _erf_small_coefficients()  # erfc's (erfc.py), below 1/2

# erf (MathEmitter.erf), written by tools/erf_table.py. |x| < ERF_SMALL_END: x + x R(x*x), R's
# coefficients ERF_SMALL; each piece (start, c, erf(c), Q) of ERF_PIECES, from its start to the
# next's (the last to ERF_END): erf(c) + t Q(t), t = |x| - c; beyond ERF_END: 1.
ERF_SMALL_END = 0.75
ERF_SMALL = [
    0.1283791670955126, -0.37612638903183754, 0.11283791670954912, -0.026866170645005898,
    0.00522397762258367, -0.0008548326692036116, 0.00012055310875465496, -1.4924750398741759e-05,
    1.6439340260552755e-06, -1.601458642830477e-07, 1.1744139870163019e-08,
]
ERF_PIECES = [
    (0.75, 1.1770834036917321, 0.9040168599498748, [
        0.28231181227517893, -0.33230454889524896, 0.1666628422255172, 0.012680150167208033,
        -0.05596909039491097, 0.018578722429934302, 0.007077772236673694, -0.006063936865103137,
        0.00020993527503529108, 0.001028610954065946, -0.00025449138618802825,
        -0.00010592387026098605, 5.50715210680885e-05, 4.707371278656724e-06,
        -7.557018947690866e-06, 5.630106060173296e-07, 7.547156825655162e-07,
        -1.581039424266336e-07, -5.3143442547315206e-08, 2.0897745163448997e-08,
        -2.3921630438925425e-10]),
    (1.75, 2.6250000000114184, 0.9997946242638719, [
        0.0011478751258138637, -0.0030131722052746147, 0.0048904263173153405,
        -0.005414293806401727, 0.004217880601565052, -0.002246833844988069, 0.0006808680973851579,
        3.4644710429723346e-05, -0.00015260043045074888, 7.395613814057619e-05,
        -1.0326285825873362e-05, -6.687605316578615e-06, 4.157101044800868e-06,
        -6.773515030459103e-07, -2.7777564866273756e-07, 1.7071013999136058e-07,
        -2.1834406668883657e-08, -1.2042825556251519e-08, 5.25979973318979e-09,
        8.39402741707775e-11, -3.671623582764328e-10]),
    (3.5, 4.7187642298303984, 0.9999999999749954, [
        2.4106521458921643e-10, -1.1375298536244625e-09, 3.4981352119419153e-09,
        -7.874263929222434e-09, 1.3813273075260767e-08, -1.9627346877825744e-08,
        2.3173115472711636e-08, -2.313154126262338e-08, 1.974999207829861e-08,
        -1.4525790285240615e-08, 9.23118630583477e-09, -5.0614045248059866e-09,
        2.3717607420236912e-09, -9.28176844781991e-10, 2.9114083661789785e-10,
        -6.624965527761443e-11, 4.162212322827627e-12, 6.251695901360138e-12,
        -3.333091955222672e-12, 5.288270743853216e-13, 2.8600271977796684e-14]),
]
ERF_END = 5.9375


class MathEmitter(Trigonometry, mathlib_single.EmitterBase):
    """Emits double-precision math into `builder`'s current block; one per kernel module."""

    float_type = DOUBLE
    suffix = "f64"

    def __init__(self, builder: ir.IRBuilder, module: ir.Module, single: bool = False):
        """single: the result is rounded to float32, so the sin and cos series may be shorter
        and their argument reduction less exact."""
        super().__init__(builder, module)
        self.single = single
        self.coefficients = SINGLE_COEFFICIENTS if single else DOUBLE_COEFFICIENTS

    # ---- small helpers ------------------------------------------------------------------------

    def whole_to_int(self, k):
        """An integral double k, |k| < 2**51, as an i64: k + 1.5 * 2**52 holds k in the low bits
        of its significand. AVX2 has no vector conversion between doubles and 64-bit integers
        (AVX-512DQ has), so `fptosi` there became four scalar conversions and the shuffles
        around them, a quarter of a float64 sigmoid's loop. A value out of that range (a lane
        whose result is replaced) gives some integer, where fptosi would give poison."""
        b = self.b
        shifted = b.bitcast(b.fadd(k, self.const(ROUNDING_SHIFT)), INT64)
        return b.sub(shifted, ir.Constant(INT64, ROUNDING_SHIFT_BITS))

    def int_to_double(self, n):
        """An i64 n, |n| < 2**51, as a double: `whole_to_int` backwards (for `sitofp`'s sake)."""
        b = self.b
        shifted = b.bitcast(b.add(n, ir.Constant(INT64, ROUNDING_SHIFT_BITS)), DOUBLE)
        return b.fsub(shifted, self.const(ROUNDING_SHIFT))

    def scale_by_power_of_two(self, x, k):
        """x * 2**k for |k| < 2046, in two exact factors so subnormal results round once."""
        b = self.b
        half = b.ashr(k, ir.Constant(INT64, 1))
        rest = b.sub(k, half)
        factors = []
        for part in (half, rest):
            bits = b.shl(b.add(part, ir.Constant(INT64, 1023)), ir.Constant(INT64, 52))
            factors.append(b.bitcast(bits, DOUBLE))
        return b.fmul(b.fmul(x, factors[0]), factors[1])

    # ---- exp, expm1, sigmoid, tanh --------------------------------------------------------------

    def exp(self, x, tail=None):
        """exp(x + tail): Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, Taylor degree 13."""
        b = self.b
        # Clamp so the integer conversions stay defined; past these bounds the scaling below
        # already overflows to inf or underflows to 0. NaN is restored at the end.
        clamped = self.select(b.fcmp_ordered(">", x, self.const(720.0)), self.const(720.0), x)
        clamped = self.select(b.fcmp_ordered("<", clamped, self.const(-760.0)),
                              self.const(-760.0), clamped)
        clamped = self.select(self.isnan(x), self.const(0.0), clamped)
        k = self.intrinsic("llvm.rint", [b.fmul(clamped, self.const(LOG2E))])
        negative_k = b.fneg(k)
        r = self.fma(negative_k, self.const(LN2_HI), clamped)
        r = self.fma(negative_k, self.const(LN2_LO), r)
        if tail is not None:
            # A clamped x already decides the result (0 or inf); its tail, which can be large
            # (pow's rounding error of y * log|x| for huge y), must not move r off [-ln2/2, ln2/2].
            r = b.fadd(r, self.select(b.fcmp_ordered("==", x, clamped), tail, self.const(0.0)))
        polynomial = self.horner(r, self.coefficients["exp"])
        result = self.scale_by_power_of_two(polynomial, self.whole_to_int(k))
        return self.select(self.isnan(x), x, result)

    def expm1(self, x):
        """|x| < ln2: Taylor series (no cancellation); outside, with x = k ln2 + r,
        fma(2**k, expm1(r), 2**k - 1), rounded once; beyond 700, exp(x) - 1."""
        b = self.b
        series = self._expm1_series(x)
        clamped = self.select(b.fcmp_ordered("<", self.fabs(x), self.const(700.0)), x,
                              self.const(0.0))
        k = self.intrinsic("llvm.rint", [b.fmul(clamped, self.const(LOG2E))])
        negative_k = b.fneg(k)
        r = self.fma(negative_k, self.const(LN2_HI), clamped)
        r = self.fma(negative_k, self.const(LN2_LO), r)
        exponent = b.add(self.whole_to_int(k), ir.Constant(INT64, 1023))
        power = b.bitcast(b.shl(exponent, ir.Constant(INT64, 52)), DOUBLE)
        reduced = self.fma(power, self._expm1_series(r), b.fsub(power, self.const(1.0)))
        huge = b.fsub(self.exp(x), self.const(1.0))
        result = self.select(b.fcmp_ordered("<", self.fabs(x), self.const(700.0)), reduced,
                             huge)
        small = b.fcmp_ordered("<", self.fabs(x), self.const(EXPM1_SMALL))
        result = self.select(small, series, result)
        return self.select(b.fcmp_ordered("==", x, self.const(0.0)), x, result)  # keeps -0

    def _expm1_series(self, x):
        b = self.b
        return b.fadd(x, b.fmul(b.fmul(x, x), self.horner(x, self.coefficients["expm1"])))

    def sigmoid(self, x):
        """The NumPy reference's formula: exp(-|x|) / (1 + exp(-|x|)) mirrored for x >= 0."""
        b = self.b
        small = self.exp(b.fneg(self.fabs(x)))
        ratio = b.fdiv(self.const(1.0), b.fadd(small, self.const(1.0)))
        return self.select(b.fcmp_ordered(">=", x, self.const(0.0)), ratio, b.fmul(small, ratio))

    def tanh(self, x):
        """tanh|x| = -t / (t + 2) with t = expm1(-2|x|), odd in x. t lies in (-1, 0], so t + 2
        never cancels and one path serves every x (saturating to 1 past |x| = 20). With
        -2|x| = k ln2 + r, t = (2**k - 1) + 2**k expm1(r) as two exact terms (k in [-116, 0]),
        so neither t's rounding nor t + 2's reaches the result near 1; one division: the
        quotient from the denominator's reciprocal, corrected by one Newton step."""
        b = self.b
        twice = b.fmul(self.const(2.0), self.fabs(x))
        argument = self.select(b.fcmp_ordered("<", twice, self.const(80.0)), b.fneg(twice),
                               self.const(-80.0))  # NaN compares false: -80, replaced below
        k = self.intrinsic("llvm.rint", [b.fmul(argument, self.const(LOG2E))])
        negative_k = b.fneg(k)
        r = self.fma(negative_k, self.const(LN2_HI), argument)
        r = self.fma(negative_k, self.const(LN2_LO), r)
        exponent = b.add(self.whole_to_int(k), ir.Constant(INT64, 1023))
        power = b.bitcast(b.shl(exponent, ir.Constant(INT64, 52)), DOUBLE)
        t_high = b.fsub(power, self.const(1.0))  # exact: 1 - 2**k has at most 53 bits here
        series = b.fmul(b.fmul(r, r), self.estrin(r, self.coefficients["expm1"][:TANH_TERMS]))
        t_low = b.fmul(power, b.fadd(r, series))  # exact: a power of two
        # -t as hi + lo and t + 2 = (1 + 2**k) + t_low as hi + lo (Fast2Sum: |t_low| is the
        # smaller term of each sum, or t_high is 0).
        numerator = b.fneg(b.fadd(t_high, t_low))
        numerator_low = b.fneg(b.fadd(b.fsub(t_high, b.fneg(numerator)), t_low))
        base = b.fadd(power, self.const(1.0))  # 2 + t_high, exact
        denominator = b.fadd(base, t_low)
        denominator_low = b.fadd(b.fsub(base, denominator), t_low)
        reciprocal = b.fdiv(self.const(1.0), denominator)
        quotient = b.fmul(numerator, reciprocal)
        residual = b.fadd(self.fma(b.fneg(quotient), denominator, numerator),
                          b.fsub(numerator_low, b.fmul(quotient, denominator_low)))
        magnitude = self.fma(residual, reciprocal, quotient)
        magnitude = self.select(self.isnan(x), x, magnitude)
        return self.intrinsic("llvm.copysign", [magnitude, x])

    # ---- log, log1p -----------------------------------------------------------------------------

    def _split(self, x):
        """x > 0 as 2**e * m with m in [sqrt(1/2), sqrt(2)); returns (f = m - 1, e as double)."""
        b = self.b
        subnormal = b.fcmp_ordered("<", x, self.const(SMALLEST_NORMAL))
        scaled = self.select(subnormal, b.fmul(x, self.const(2.0 ** 54)), x)
        bits = b.bitcast(scaled, INT64)
        exponent = b.sub(b.lshr(bits, ir.Constant(INT64, 52)), ir.Constant(INT64, 1023))
        exponent = b.sub(exponent, self.b.select(subnormal, ir.Constant(INT64, 54),
                                                 ir.Constant(INT64, 0)))
        mantissa_bits = b.or_(b.and_(bits, ir.Constant(INT64, (1 << 52) - 1)),
                              ir.Constant(INT64, 1023 << 52))
        mantissa = b.bitcast(mantissa_bits, DOUBLE)
        big = b.fcmp_ordered(">", mantissa, self.const(math.sqrt(2.0)))
        mantissa = self.select(big, b.fmul(mantissa, self.const(0.5)), mantissa)
        exponent = b.add(exponent, b.zext(big, INT64))
        return b.fsub(mantissa, self.const(1.0)), self.int_to_double(exponent)

    def log(self, x):
        b = self.b
        f, k = self._split(x)
        s = b.fdiv(f, b.fadd(self.const(2.0), f))
        z = b.fmul(s, s)
        r = b.fmul(z, self.horner(z, self.coefficients["log"]))
        half_square = b.fmul(self.const(0.5), b.fmul(f, f))
        inner = b.fadd(b.fmul(s, b.fadd(half_square, r)), b.fmul(k, self.const(LN2_LO)))
        result = b.fsub(b.fmul(k, self.const(LN2_HI)), b.fsub(b.fsub(half_square, inner), f))
        return self._log_specials(x, result)

    def log1p(self, x):
        """log(u) corrected by (x - (u - 1)) / u, the rounding error of u = 1 + x."""
        b = self.b
        u = b.fadd(self.const(1.0), x)
        correction = b.fdiv(b.fsub(x, b.fsub(u, self.const(1.0))), u)
        result = b.fadd(self.log(u), correction)
        result = self.select(b.fcmp_ordered("==", x, self.const(-1.0)),
                             self.const(-math.inf), result)
        result = self.select(b.fcmp_ordered("==", x, self.const(math.inf)), x, result)
        return self.select(b.fcmp_ordered("==", x, self.const(0.0)), x, result)  # keeps -0

    def log_extended(self, x):
        """log(x) for finite x > 0 as an unevaluated sum hi + lo, about 2**-100 relative."""
        b = self.b
        f, k = self._split(x)
        d = b.fadd(self.const(2.0), f)
        d_low = b.fadd(b.fsub(self.const(2.0), d), f)
        s = b.fdiv(f, d)
        s_low = b.fdiv(b.fsub(self.fma(b.fneg(s), d, f), b.fmul(s, d_low)), d)
        z = b.fmul(s, s)
        series = b.fmul(b.fmul(s, z), self.horner(z, LOG_COEFFICIENTS))
        big = b.fmul(k, self.const(LN2_HI))
        twice_s = b.fmul(s, self.const(2.0))
        high, error = self._two_sum(big, twice_s)
        low = b.fadd(b.fadd(error, b.fmul(k, self.const(LN2_LO))),
                     b.fadd(b.fmul(s_low, self.const(2.0)), series))
        total = b.fadd(high, low)
        return total, b.fadd(b.fsub(high, total), low)

    def _two_sum(self, a, c):
        b = self.b
        total = b.fadd(a, c)
        virtual = b.fsub(total, a)
        error = b.fadd(b.fsub(a, b.fsub(total, virtual)), b.fsub(c, virtual))
        return total, error

    # ---- pow ----------------------------------------------------------------------------------

    def pow(self, x, y):
        """exp(y * log|x|) with log and the product carried in double-double, then C99's
        special cases (pow(x, 0) = 1, pow(1, y) = 1, negative bases, zeros, infinities)."""
        b = self.b
        ax = self.fabs(x)
        finite_ax = self.select(b.fcmp_ordered("<", ax, self.const(math.inf)), ax, self.const(1.0))
        finite_ax = self.select(b.fcmp_ordered(">", finite_ax, self.const(0.0)), finite_ax,
                                self.const(1.0))
        high, low = self.log_extended(finite_ax)
        product = b.fmul(y, high)
        product_error = b.fadd(self.fma(y, high, b.fneg(product)), b.fmul(y, low))
        finite_product = b.fcmp_ordered("<", self.fabs(product), self.const(math.inf))
        product_error = self.select(finite_product, product_error, self.const(0.0))
        result = self.exp(product, product_error)
        # |x| of 0 or inf: log is -inf or inf, and y * log|x| decides between 0 and inf.
        edge_log = self.select(b.fcmp_ordered("==", ax, self.const(0.0)), self.const(-math.inf),
                               self.const(math.inf))
        edge = b.or_(b.fcmp_ordered("==", ax, self.const(0.0)),
                     b.fcmp_ordered("==", ax, self.const(math.inf)))
        edge_value = self.exp(b.fmul(y, edge_log))
        result = self.select(edge, edge_value, result)
        is_integer = b.fcmp_ordered("==", self.intrinsic("llvm.floor", [y]), y)
        half = b.fmul(y, self.const(0.5))
        odd = b.and_(is_integer, b.fcmp_ordered("!=", self.intrinsic("llvm.floor", [half]), half))
        sign_bit = b.icmp_signed("<", b.bitcast(x, INT64), ir.Constant(INT64, 0))
        result = self.select(b.and_(sign_bit, odd), b.fneg(result), result)
        finite_negative = b.and_(b.fcmp_ordered("<", x, self.const(0.0)),
                                 b.fcmp_ordered(">", x, self.const(-math.inf)))
        finite_y = b.fcmp_ordered("<", self.fabs(y), self.const(math.inf))
        not_integer = b.and_(finite_y, b.not_(is_integer))
        result = self.select(b.and_(finite_negative, not_integer), self.const(math.nan), result)
        result = self.select(b.fcmp_unordered("uno", x, y), self.const(math.nan), result)
        unit_infinite = b.and_(b.fcmp_ordered("==", ax, self.const(1.0)),
                               b.fcmp_ordered("==", self.fabs(y), self.const(math.inf)))
        one = b.or_(b.or_(unit_infinite, b.fcmp_ordered("==", x, self.const(1.0))),
                    b.fcmp_ordered("==", y, self.const(0.0)))
        return self.select(one, self.const(1.0), result)

    # ---- erf ----------------------------------------------------------------------------------

    def erf(self, x):
        """One polynomial, its coefficients chosen per element by `select`s on |x| (a gather
        per coefficient cost more than all the rest): |x| < ERF_SMALL_END, x + x R(x*x);
        in a piece of ERF_PIECES, erf(c) + t Q(t) with t = |x| - c (exact); from ERF_END, 1.
        The small form's R has fewer coefficients than Q: it is padded with zeros, and both
        forms are fma(w, P(v), constant). Odd in x; -0 and NaN are kept."""
        b = self.b
        ax = self.fabs(x)
        # NaN compares false everywhere: it takes the small form, and is replaced at the end.
        inside = [b.fcmp_ordered(">=", ax, self.const(piece[0])) for piece in ERF_PIECES]
        zero = self.const(0.0)
        t = b.fsub(ax, self.chosen(inside, zero, [piece[1] for piece in ERF_PIECES]))
        large = inside[0]
        variable = self.select(large, t, b.fmul(ax, ax))
        factor = self.select(large, t, ax)
        constant = self.select(large, self.chosen(inside, zero,
                                                  [piece[2] for piece in ERF_PIECES]), ax)
        polynomial = self.chosen_polynomial(inside, ERF_SMALL,
                                            [piece[3] for piece in ERF_PIECES], variable)
        result = self.fma(factor, polynomial, constant)
        result = self.select(b.fcmp_ordered(">=", ax, self.const(ERF_END)), self.const(1.0),
                             result)
        result = self.intrinsic("llvm.copysign", [result, x])
        return self.select(self.isnan(x), x, result)

    def _table(self, name, values):
        """A constant array of doubles in the module, made on first use."""
        table = self.module.globals.get(name)
        if table is None:
            array_type = ir.ArrayType(DOUBLE, len(values))
            table = ir.GlobalVariable(self.module, array_type, name)
            table.initializer = ir.Constant(array_type, values)
            table.global_constant = True
            table.linkage = "internal"
        return table


UNARY = ("exp", "log", "log1p", "expm1", "tanh", "sigmoid", "erf", "sin", "cos")


def emit_unary(name, builder, module, value, float_type):
    """`name`(value) for a float or double `value`. A float argument runs in float where
    single.py has the function, and otherwise in double, rounded back."""
    if float_type != DOUBLE and name in mathlib_single.NATIVE:
        return mathlib_single.emit(name, builder, module, value)
    emitter = MathEmitter(builder, module, single=float_type != DOUBLE)
    wide = value if float_type == DOUBLE else builder.fpext(value, DOUBLE)
    result = getattr(emitter, name)(wide)
    return result if float_type == DOUBLE else builder.fptrunc(result, float_type)


def emit_pow(builder, module, x, y, float_type):
    emitter = MathEmitter(builder, module)
    if float_type != DOUBLE:
        x, y = builder.fpext(x, DOUBLE), builder.fpext(y, DOUBLE)
    result = emitter.pow(x, y)
    return result if float_type == DOUBLE else builder.fptrunc(result, float_type)
