"""Native float32 math in LLVM IR: exp, expm1, tanh, sigmoid, log, log1p, erf.

mathlib.emit_unary calls `emit` here for a float32 argument of one of the functions in NATIVE;
the other functions (sin, cos, pow) are widened to double there. Like mathlib/__init__.py, each
emitter writes straight-line IR into the current block (range reduction, a polynomial by
Horner with llvm.fma.f32, selects for the special values; no calls but LLVM intrinsics, no
branches), but every operation is on `float`: a vector register holds twice as many lanes as
of doubles and there are no conversions. Where a final difference or quotient would magnify
earlier rounding errors (expm1, log, log1p, sigmoid), those errors are carried as value + error
into the last operation. The polynomials are near-minimax fits made for these ranges; see
docs/notes/cpu-codegen.md for the algorithms and their measured accuracy.
"""

from __future__ import annotations

import math

from llvmlite import ir

FLOAT = ir.FloatType()
INT32 = ir.IntType(32)

LOG2E = 1.442695040888963
# Cody-Waite: x - k ln2 in two fused multiply-adds. LN2_HI is ln2 to 16 significant bits, so
# x - k LN2_HI is exact (|r| < 1/2 keeps it within 24 bits); LN2_LO is the rest, and the second
# fma rounds once.
LN2_HI = 0.693145751953125  # 0x3f317200
LN2_LO = 1.428606765330187e-06
# log: e * LOG_LN2_HI is exact (9 significant bits times an 8-bit exponent), which keeps the
# sum e ln2 + f exactly computable as a head and its rounding error.
LOG_LN2_HI = 0.693359375
LOG_LN2_LO = -2.12194440e-4
SQRT_HALF_BITS = 0x3F3504F3  # float bits of sqrt(1/2), rounded down
SMALLEST_NORMAL = 2.0 ** -126

# expm1(r) = r + r*r * Q(r) on |r| <= 0.36 (a little past ln2/2, as k may round either way):
# relative error below 2**-30 before rounding. exp(r) = 1 + expm1(r) uses the same Q.
EXPM1_Q = [0.5, 0.1666666567325592, 0.041666463017463684, 0.008333532139658928,
           0.0013935858150944114, 0.00019778178830165416]
# tanh(x) = x + x**3 * T(x*x) on |x| <= 1: relative error below 2**-30. Above 1 the quotient in
# 1 - 2 / (exp(2|x|) + 1) is below 1/4 and the result above 3/4, so the quotient's relative
# errors (exp's, the sum's, the division's) reach the result shrunk threefold.
TANH_SMALL = 1.0
TANH_T = [-0.333333283662796, 0.13333174586296082, -0.0539507158100605, 0.021774355322122574,
          -0.008571074344217777, 0.0030481235589832067, -0.0008212040411308408,
          0.00011620869190664962]
# log(1+f) = f - f*f/2 + f**3 * L(f) on f in [sqrt(1/2) - 1, sqrt(2) - 1]: below 2**-30.
LOG_L = [0.3333331346511841, -0.25000008940696716, 0.20002076029777527, -0.16667991876602173,
         0.14220204949378967, -0.12406039237976074, 0.11884839087724686,
         -0.11672233045101166, 0.06748685985803604]

# erf (SingleEmitter.erf), written by tools/erf_single_table.py: |x| < ERF_SMALL_END,
# x + x R(x*x) with R's coefficients ERF_R; each piece (start, c, hi, lo, Q) of ERF_PIECES, from
# its start to the next's (the last to ERF_END): hi + (t Q(t) + lo), t = |x| - c, hi + lo the
# float pair of erf(c); from ERF_END, 1. Within 0.85 ulp of erf.
ERF_SMALL_END = 0.75
ERF_END = 3.9375
ERF_R = [0.12837916612625122, -0.3761261999607086, 0.1128338947892189, -0.026835275813937187,
         0.005115657113492489, -0.000675878778565675]
ERF_PIECES = [
    (0.75, 1.25, 0.9229001402854919, -1.202903376906761e-08,
     [0.23652112483978271, -0.29565149545669556, 0.1675359010696411, -0.006153817754238844,
      -0.04718459025025368, 0.021220466122031212, 0.0036662574857473373,
      -0.005262841936200857, 0.0006890007643960416]),
    (1.75, 2.25, 0.9985373020172119, -1.8603893536806027e-08,
     [0.007142319343984127, -0.01607021503150463, 0.021724529564380646, -0.019083557650446892,
      0.010658461600542068, -0.0029019953217357397, -0.0006792371859773993,
      0.0009884047321975231, -0.00032908731373026967]),
    (2.75, 3.375, 0.9999982118606567, -2.7142084135789446e-08,
     [1.2751779649988748e-05, -4.303543028072454e-05, 9.25787680898793e-05, -0.000141955038998276,
      0.0001638384273974225, -0.00014567974722012877, 0.00010191775800194591,
      -5.788048292743042e-05, 2.135414251824841e-05]),
]

NATIVE = frozenset({"exp", "expm1", "tanh", "sigmoid", "log", "log1p", "erf"})


class EmitterBase:
    """What both emitters (this module's and mathlib/__init__.py's double one) build on: constants,
    LLVM intrinsics and Horner's rule in one floating type."""

    float_type: ir.Type = FLOAT
    suffix = "f32"

    def __init__(self, builder: ir.IRBuilder, module: ir.Module):
        self.b = builder
        self.module = module

    def const(self, value):
        return ir.Constant(self.float_type, value)

    def intrinsic(self, name, args, ret=None):
        full = f"{name}.{self.suffix}"
        function = self.module.globals.get(full)
        if function is None:
            result = self.float_type if ret is None else ret
            function = ir.Function(self.module, ir.FunctionType(result, [a.type for a in args]),
                                   full)
        return self.b.call(function, args)

    def fma(self, a, b, c):
        return self.intrinsic("llvm.fma", [a, b, c])

    def horner(self, x, coefficients):
        """sum coefficients[n] * x**n, highest degree first."""
        result = self.const(coefficients[-1])
        for value in reversed(coefficients[:-1]):
            result = self.fma(result, x, self.const(value))
        return result

    def estrin(self, x, coefficients):
        """The same sum as `horner`, as a tree: pairs c[2i] + c[2i+1] x, then pairs of those
        with x**2, x**4, ... A vectorized loop of a long polynomial waits on each dependent
        fma; the tree's chain is log2 of the degree deep, not the degree."""
        terms = [self.const(value) for value in coefficients]
        power = x
        while len(terms) > 1:
            paired = [self.fma(terms[i + 1], power, terms[i]) for i in range(0, len(terms) - 1, 2)]
            terms = paired + terms[len(paired) * 2:]
            power = self.b.fmul(power, power) if len(terms) > 1 else power
        return terms[0]

    def select(self, condition, a, b):
        return self.b.select(condition, a, b)

    def chosen(self, inside: list, small, values):
        """`small` (an IR value) where |x| lies below the first piece, else the constant of the
        piece it lies in (`inside`: per piece, whether |x| reached its start): a chain of
        selects, erf's choice of its coefficients without a table read (a vector gather)."""
        chosen = small
        for within, value in zip(inside, values):
            chosen = self.select(within, self.const(value), chosen)
        return chosen

    def chosen_polynomial(self, inside: list, small: list, pieces: list, variable):
        """Horner's rule in `variable` over coefficients chosen per element by `chosen`: the
        small form's (padded with zeros to the pieces' length) below the first piece, else
        the piece's. erf's one polynomial for all its forms."""
        degree = len(pieces[0])
        small = list(small) + [0.0] * (degree - len(small))
        polynomial = None
        for n in reversed(range(degree)):
            coefficient = self.chosen(inside, self.const(small[n]),
                                      [piece[n] for piece in pieces])
            polynomial = (coefficient if polynomial is None
                          else self.fma(polynomial, variable, coefficient))
        return polynomial

    def isnan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def fabs(self, x):
        return self.intrinsic("llvm.fabs", [x])

    def _log_specials(self, x, result):
        """log's special values over `result`: inf -> inf, 0 -> -inf, negative or NaN -> NaN."""
        b = self.b
        result = self.select(b.fcmp_ordered("==", x, self.const(math.inf)), x, result)
        result = self.select(b.fcmp_ordered("==", x, self.const(0.0)),
                             self.const(-math.inf), result)
        invalid = b.fcmp_unordered("<", x, self.const(0.0))  # negative or NaN
        return self.select(invalid, self.const(math.nan), result)


class SingleEmitter(EmitterBase):
    """Emits float32 math into `builder`'s current block."""

    # ---- small helpers ------------------------------------------------------------------------

    def int_const(self, value):
        return ir.Constant(INT32, value)

    def clamp(self, x, low, high):
        """x limited to [low, high], NaN to high: the compare-select pairs are x86 min/max."""
        b = self.b
        x = self.select(b.fcmp_ordered("<", x, self.const(high)), x, self.const(high))
        return self.select(b.fcmp_ordered(">", x, self.const(low)), x, self.const(low))

    def power_of_two(self, k):
        """2**k as float for an i32 k in [-126, 127] (outside, the bits are garbage)."""
        b = self.b
        return b.bitcast(b.shl(b.add(k, self.int_const(127)), self.int_const(23)), FLOAT)

    def scale_by_power_of_two(self, x, k):
        """x * 2**k for |k| < 250 in two exact factors, so a subnormal result rounds once."""
        half = self.b.ashr(k, self.int_const(1))
        rest = self.b.sub(k, half)
        return self.b.fmul(self.b.fmul(x, self.power_of_two(half)), self.power_of_two(rest))

    # ---- exp, expm1, sigmoid, tanh --------------------------------------------------------------

    def _reduce(self, x, low, high, with_error=False):
        """x clamped to [low, high] (NaN to high) as k ln2 + r, |r| <= ln2/2; returns (k as
        i32, r) and, with_error, r's rounding error (up to 2**-26) as a third item. The clamp
        keeps k defined; past it the result is already 0, -1 or inf."""
        b = self.b
        clamped = self.clamp(x, low, high)
        k = self.intrinsic("llvm.rint", [b.fmul(clamped, self.const(LOG2E))])
        negative_k = b.fneg(k)
        r_high = self.fma(negative_k, self.const(LN2_HI), clamped)  # exact
        r = self.fma(negative_k, self.const(LN2_LO), r_high)
        parts = (b.fptosi(k, INT32), r)
        if with_error:
            parts += (self.fma(negative_k, self.const(LN2_LO), b.fsub(r_high, r)),)
        return parts

    def exp(self, x):
        """Cody-Waite reduction, then 2**k exp(r) with exp(r) = 1 + r (1 + r Q(r)) by Horner,
        rounded once at the end. Below -103.97 the result rounds to 0 (the clamp at -110 keeps
        both scale factors normal), above 88.72 it is inf. Below -104 the lane computes exp(0)
        and selects 0: a product that underflows takes a microcode assist on x86 (about a
        hundred cycles), and attention's masked scores are -inf by the thousand (a masked
        softmax took 2.6 times as long)."""
        b = self.b
        zero = b.fcmp_ordered("<", x, self.const(-104.0))
        k, r = self._reduce(self.select(zero, self.const(0.0), x), -110.0, 100.0)
        inner = self.fma(r, self.horner(r, EXPM1_Q), self.const(1.0))
        result = self.scale_by_power_of_two(self.fma(r, inner, self.const(1.0)), k)
        result = self.select(zero, self.const(0.0), result)
        return self.select(self.isnan(x), x, result)

    def expm1(self, x):
        """2**k (s + w - 2**-k): s = 1 + expm1(r) rounded, w the rest (the rounding errors of s,
        of expm1(r) and of r), so the sum cancels at k = 1 and k = -1 without losing the low
        bits; s - 2**-k is exact for 0 <= k <= 23 and rounds at most once elsewhere. Then the
        exact two-factor scaling, which overflows to inf; below -40 the result is -1."""
        b = self.b
        k, r, r_error = self._reduce(x, -40.0, 100.0, with_error=True)
        square = b.fmul(r, r)
        polynomial = self.horner(r, EXPM1_Q)
        head = self.fma(square, polynomial, r)  # expm1(r) = r + r*r Q(r)
        # r - head is exact (head is within a factor 2 of r), so the fma leaves head's error.
        tail = self.fma(square, polynomial, b.fsub(r, head))
        tail = self.fma(r_error, head, b.fadd(tail, r_error))  # expm1(r + e) ~ expm1(r) + e e**r
        one_plus = b.fadd(self.const(1.0), head)
        rest = b.fadd(b.fadd(b.fsub(self.const(1.0), one_plus), head), tail)  # exact + tail
        # 2**-k for k <= 64; past that it is far below an ulp of s and 2**-64 does as well.
        limited = self.select(b.icmp_signed("<", k, self.int_const(64)), k, self.int_const(64))
        total = b.fsub(one_plus, self.power_of_two(b.neg(limited)))
        result = self.scale_by_power_of_two(b.fadd(total, rest), k)
        result = self.select(b.fcmp_ordered("==", x, self.const(0.0)), x, result)  # keeps -0
        return self.select(self.isnan(x), x, result)

    def sigmoid(self, x):
        """1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = exp(-|x|) in (0, 1]: no
        cancellation, and exp's subnormal results carry through for x < -87. The quotient is
        corrected once by its residual and by the rounding error of 1 + e; 1/(1+e) is the
        quotient itself (x >= 0) or 1 minus it, so one division does."""
        b = self.b
        small = self.exp(b.fneg(self.fabs(x)))
        denominator = b.fadd(self.const(1.0), small)
        denominator_error = b.fadd(b.fsub(self.const(1.0), denominator), small)  # exact
        non_negative = b.fcmp_ordered(">=", x, self.const(0.0))
        numerator = self.select(non_negative, self.const(1.0), small)
        quotient = b.fdiv(numerator, denominator)
        residual = self.fma(b.fneg(quotient), denominator_error,
                            self.fma(b.fneg(quotient), denominator, numerator))
        reciprocal = self.select(non_negative, quotient, b.fsub(self.const(1.0), quotient))
        return self.fma(residual, reciprocal, quotient)  # NaN stays NaN

    def tanh(self, x):
        """|x| < 1: x + x**3 T(x*x); above, 1 - 2 / (exp(2|x|) + 1), which rounds to 1 past 9
        and reaches it exactly when exp overflows. Odd via copysign (tanh(-0) = -0)."""
        b = self.b
        magnitude = self.fabs(x)
        square = b.fmul(magnitude, magnitude)
        small = self.fma(b.fmul(magnitude, square), self.horner(square, TANH_T), magnitude)
        grown = self.exp(b.fmul(self.const(2.0), magnitude))
        large = b.fsub(self.const(1.0),
                       b.fdiv(self.const(2.0), b.fadd(grown, self.const(1.0))))
        result = self.select(b.fcmp_ordered("<", magnitude, self.const(TANH_SMALL)), small, large)
        return self.intrinsic("llvm.copysign", [result, x])  # NaN: both branches are NaN

    def erf(self, x):
        """One polynomial per element, its coefficients chosen by `select`s on |x| (as the double
        erf's): |x| < ERF_SMALL_END, fma(|x|, R(x*x), |x|); in a piece,
        hi + fma(t, Q(t), lo), t = |x| - c exact; from ERF_END, 1. R is padded with zeros to
        Q's length, so that both forms are one Horner chain: hi + fma(w, P(v), lo) with w = v =
        t, or w = |x|, v = x*x, hi = 0, lo = |x|. Odd via copysign; -0 and NaN kept."""
        b = self.b
        ax = self.fabs(x)
        # NaN compares false everywhere: it takes the small form, and is replaced at the end.
        inside = [b.fcmp_ordered(">=", ax, self.const(piece[0])) for piece in ERF_PIECES]
        zero = self.const(0.0)
        t = b.fsub(ax, self.chosen(inside, zero, [piece[1] for piece in ERF_PIECES]))
        large = inside[0]
        variable = self.select(large, t, b.fmul(ax, ax))
        factor = self.select(large, t, ax)
        low = self.select(large, self.chosen(inside, zero, [piece[3] for piece in ERF_PIECES]),
                          ax)
        high = self.chosen(inside, zero, [piece[2] for piece in ERF_PIECES])
        polynomial = self.chosen_polynomial(inside, ERF_R, [piece[4] for piece in ERF_PIECES],
                                            variable)
        result = b.fadd(high, self.fma(factor, polynomial, low))
        result = self.select(b.fcmp_ordered(">=", ax, self.const(ERF_END)), self.const(1.0),
                             result)
        result = self.intrinsic("llvm.copysign", [result, x])
        return self.select(self.isnan(x), x, result)

    # ---- log, log1p -----------------------------------------------------------------------------

    def _split(self, x):
        """x > 0 (normal) as 2**e * m with m in [sqrt(1/2), sqrt(2)); returns (m - 1, e as i32).
        Subtracting the bits of sqrt(1/2) moves the exponent boundary there in one step."""
        b = self.b
        shifted = b.sub(b.bitcast(x, INT32), self.int_const(SQRT_HALF_BITS))
        exponent = b.ashr(shifted, self.int_const(23))
        mantissa_bits = b.add(b.and_(shifted, self.int_const((1 << 23) - 1)),
                              self.int_const(SQRT_HALF_BITS))
        return b.fsub(b.bitcast(mantissa_bits, FLOAT), self.const(1.0)), exponent

    def _log_sum(self, f, exponent, correction=None):
        """e ln2 + log(1+f) (+ correction): the head e ln2_hi + f is split into its rounded
        sum and that sum's exact error, which joins the small terms before the last addition."""
        b = self.b
        e = b.sitofp(exponent, FLOAT)
        square = b.fmul(f, f)
        small = b.fmul(b.fmul(square, f), self.horner(f, LOG_L))
        small = self.fma(e, self.const(LOG_LN2_LO), small)
        small = self.fma(self.const(-0.5), square, small)
        if correction is not None:
            small = b.fadd(small, correction)
        big = b.fmul(e, self.const(LOG_LN2_HI))  # exact
        head = b.fadd(big, f)
        # |big| >= 0.69 > |f| when e != 0 (and big = 0 otherwise): Fast2Sum's error is exact.
        error = b.fadd(b.fsub(big, head), f)
        return b.fadd(head, b.fadd(small, error))

    def log(self, x):
        """e ln2 + log(1+f) for x = 2**e (1+f); subnormal x is scaled by 2**24 first (and 24
        taken off e). log(0) = -inf, log(inf) = inf, negative or NaN x gives NaN."""
        b = self.b
        subnormal = b.fcmp_ordered("<", x, self.const(SMALLEST_NORMAL))
        scaled = self.select(subnormal, b.fmul(x, self.const(2.0 ** 24)), x)
        f, exponent = self._split(scaled)
        exponent = b.sub(exponent, self.select(subnormal, self.int_const(24),
                                               self.int_const(0)))
        return self._log_specials(x, self._log_sum(f, exponent))

    def log1p(self, x):
        """u = 1 + x split as log is, with the rounding error c = x - (u - 1) of u (exact)
        added back: log(1 + f + c 2**-e) = log(1+f) + c 2**-e / (1+f), the division replaced
        by 1 - f + f*f, ample for a term below half an ulp."""
        b = self.b
        u = b.fadd(self.const(1.0), x)
        f, exponent = self._split(u)
        error = b.fsub(x, b.fsub(u, self.const(1.0)))
        # 2**-e for e up to 126; past that (u near the float maximum) the term is negligible.
        limited = self.select(b.icmp_signed(">", exponent, self.int_const(126)),
                              self.int_const(126), exponent)
        error = b.fmul(error, self.power_of_two(b.neg(limited)))
        correction = b.fmul(error, self.fma(f, b.fsub(f, self.const(1.0)), self.const(1.0)))
        result = self._log_specials(u, self._log_sum(f, exponent, correction))  # u = 0: -inf
        return self.select(b.fcmp_ordered("==", x, self.const(0.0)), x, result)  # keeps -0


def emit(name, builder, module, value):
    """`name`(value) for a float32 `value`, computed in float32; `name` is in NATIVE."""
    return getattr(SingleEmitter(builder, module), name)(value)
