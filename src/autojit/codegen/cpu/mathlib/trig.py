"""sin and cos in LLVM IR: an inline Cody-Waite path, and Payne-Hanek for the rest.

A mixin of mathlib.MathEmitter (which supplies the arithmetic helpers). For |x| up to
FAST_LIMIT the argument is reduced inline, x - k pi/2 with pi/2 in three parts as a
double-double (about 15 operations). Larger arguments, infinities and NaN take a branch to a
function computing the accurate result by Payne-Hanek reduction (`_reduce_quadrant`, about
60 operations and four table loads), which the loop vectorizer calls through masked vector
variants (`_vector_variant`; `finish` writes the attributes that name them): a variant
returns at once when no lane needs it, and is inlined after vectorization (jit.py), so
ordinary arguments pay a mask test per vector instead of the whole reduction. Inline, that
reduction doubled the time of a float32 sin kernel (1.15 to 2.25 ns per element).
See docs/notes/accurate-numerics.md.
"""

from __future__ import annotations

import math
import re

from llvmlite import ir

DOUBLE = ir.DoubleType()
INT64 = ir.IntType(64)
BOOL = ir.IntType(1)

# pi / 2 in three parts: a double-double (hi + lo) turns a reduced x * 2/pi back into radians;
# the inline reduction subtracts k times all three.
PIO2_HI = 1.5707963267948966
PIO2_LO = 6.123233995736766e-17
PIO2_3 = -1.4973849048591698e-33
# Inline reduction up to here: k = rint(x 2/pi) < 2**25, so x - k PIO2_HI is exact (a multiple
# of x's ulp below 1) and k times the rest of pi/2 leaves an error near 2**-130, far below
# the smallest |x - k pi/2| of these doubles.
FAST_LIMIT = 2.0 ** 24
# Vector widths given a variant of the accurate functions (what the loop vectorizer may pick).
VARIANT_WIDTHS = (2, 4, 8, 16)
VARIANT_ATTRIBUTE = "vector-function-abi-variant"


def _two_over_pi_bits(count: int) -> int:
    """floor(2/pi * 2**count), from pi by Machin's formula in integers."""
    guard = count + 64

    def arctan_inverse(n: int) -> int:  # atan(1/n) * 2**guard
        total, term, k, sign = 0, (1 << guard) // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total

    pi = 4 * (4 * arctan_inverse(5) - arctan_inverse(239))  # pi * 2**guard, to a few units
    return (1 << (count + 1 + guard)) // pi


# Payne-Hanek reduction (Trigonometry._reduce_quadrant): a row per 8 binary exponents of x
# from 2**54 on (below, row 0: no bits of 2/pi need dropping), each TRIG_CHUNKS doubles of 53
# bits of 2/pi, from the first bit x * 2/pi mod 4 needs, scaled by 2**(8 * row).
TRIG_FIRST_EXPONENT = 1077  # the biased exponent of 2**54
TRIG_ROWS = (2047 - TRIG_FIRST_EXPONENT) // 8 + 1
TRIG_CHUNKS = 4


def _two_over_pi_table():
    precision = 8 * TRIG_ROWS + 1 + TRIG_CHUNKS * 53 + 16
    bits = _two_over_pi_bits(precision)
    table = []
    for row in range(TRIG_ROWS):
        chunks = []
        for chunk in range(TRIG_CHUNKS):
            last = 8 * row + 53 * (chunk + 1)  # bits 8 row + 1 ... last, weights 2**-bit
            integer = (bits >> (precision - last)) & ((1 << 53) - 1)
            chunks.append(math.ldexp(integer, 8 * row - last))
        table.append(chunks)
    return table


TWO_OVER_PI_TABLE = _two_over_pi_table()


class Trigonometry:
    """sin and cos for MathEmitter: `self.b`, `self.module`, `self.single`, `self.coefficients`
    and the helpers (const, fma, select, horner, intrinsic, _two_sum, _table) come from it."""

    def sin(self, x):
        result = self._sin_cos(x, 0)
        return self.select(self.b.fcmp_ordered("==", x, self.const(0.0)), x, result)  # keeps -0

    def cos(self, x):
        return self._sin_cos(x, 1)

    def _sin_cos(self, x, quadrant_shift):
        """The inline reduction where |x| <= FAST_LIMIT, else a call of the accurate function
        (in a block of its own, which the vectorizer turns into a masked variant's call)."""
        b = self.b
        inline = b.fcmp_ordered("<=", self.fabs(x), self.const(FAST_LIMIT))
        safe = self.select(inline, x, self.const(0.0))
        k = self.intrinsic("llvm.rint", [b.fmul(safe, self.const(2 / math.pi))])
        first = self.fma(b.fneg(k), self.const(PIO2_HI), safe)  # exact
        if self.single:  # one rounding of r, and k PIO2_3 (below 2**-84) left out: ample
            high, low = self.fma(b.fneg(k), self.const(PIO2_LO), first), None
        else:
            product = b.fmul(k, self.const(PIO2_LO))
            product_error = self.fma(k, self.const(PIO2_LO), b.fneg(product))
            r, r_error = self._two_sum(first, b.fneg(product))
            r_low = b.fsub(b.fsub(r_error, product_error), b.fmul(k, self.const(PIO2_3)))
            # The dd sum (r, r_low) may hold r_low past half an ulp of r: renormalized.
            high = b.fadd(r, r_low)
            low = b.fsub(r_low, b.fsub(high, r))
        fast = self._series(high, low, self.whole_to_int(k), quadrant_shift)
        before = b.block
        slow = b.append_basic_block("trig.slow")
        join = b.append_basic_block("trig.join")
        b.cbranch(inline, join, slow)
        b.position_at_end(slow)
        accurate = b.call(self._accurate_function(quadrant_shift), [x])
        b.branch(join)
        b.position_at_end(join)
        result = b.phi(DOUBLE)
        result.add_incoming(fast, before)
        result.add_incoming(accurate, slow)
        return result

    def _sin_cos_accurate(self, x, quadrant_shift):
        """sin or cos of x = n pi/2 + r by Payne-Hanek; |x| <= pi/4 is its own r."""
        b = self.b
        finite = b.fcmp_ordered("<", self.fabs(x), self.const(math.inf))
        safe = self.select(finite, x, self.const(0.0))
        reduced, reduced_low, quadrant = self._reduce_quadrant(safe)
        near = b.fcmp_ordered("<=", self.fabs(safe), self.const(math.pi / 4))
        r = self.select(near, safe, reduced)
        quadrant = b.select(near, ir.Constant(INT64, 0), quadrant)
        r_low = None if reduced_low is None else \
            self.select(near, self.const(0.0), reduced_low)
        value = self._series(r, r_low, quadrant, quadrant_shift)
        return self.select(finite, value, self.const(math.nan))

    def _series(self, r, r_low, quadrant, quadrant_shift):
        """sin or cos of r + r_low (|r| <= pi/4 or a little more) by Taylor polynomials,
        chosen and negated by the quadrant + shift."""
        b = self.b
        quadrant = b.add(quadrant, ir.Constant(INT64, quadrant_shift))
        z = b.fmul(r, r)
        sine_series = self.horner(z, self.coefficients["sin"][1:])
        cosine_series = self.horner(z, self.coefficients["cos"][1:])
        if r_low is None:
            sine = self.fma(b.fmul(r, z), sine_series, r)
            cosine = self.fma(z, cosine_series, self.const(1.0))
        else:
            # sin(r + c) = r + (r z S(z) + c), cos(r + c) = 1 + (z C(z) - c r): the small
            # terms first, so the last addition rounds once.
            sine = b.fadd(r, self.fma(b.fmul(r, z), sine_series, r_low))
            cosine = b.fadd(self.const(1.0),
                            self.fma(z, cosine_series, b.fneg(b.fmul(r_low, r))))
        use_cosine = b.trunc(quadrant, BOOL)
        negate = b.trunc(b.lshr(quadrant, ir.Constant(INT64, 1)), BOOL)
        value = self.select(use_cosine, cosine, sine)
        return self.select(negate, b.fneg(value), value)

    def _accurate_function(self, quadrant_shift):
        """`double autojit_sin_f64(double)` (cos, and _f32 for float32 results) in the module,
        made on first use with its vector variants."""
        module = self.module
        name = f"autojit_{'cos' if quadrant_shift else 'sin'}_{'f32' if self.single else 'f64'}"
        function = module.globals.get(name)
        if function is not None:
            return function
        function = ir.Function(module, ir.FunctionType(DOUBLE, [DOUBLE]), name)
        function.linkage = "internal"
        function.attributes.add("noinline")  # the vectorizer maps the call, not its body
        function.attributes.add("nounwind")
        emitter = type(self)(ir.IRBuilder(function.append_basic_block("entry")), module,
                             single=self.single)
        emitter.b.ret(emitter._sin_cos_accurate(function.args[0], quadrant_shift))
        for width in VARIANT_WIDTHS:
            _vector_variant(module, function, width)
        return function

    def _reduce_quadrant(self, x):
        """x = (n + f) pi/2 with |f| <= 1/2 (a little more) for finite x, as (r, r low, n):
        r + r low = f pi/2 to about 2**-104 relative, even for the doubles closest to a
        multiple of pi/2 (f near 2**-61); n is an int64 whose last two bits are n mod 4.

        Payne-Hanek: only the bits of 2/pi that can reach x * 2/pi mod 4 are multiplied in.
        x = M 2**E (M < 2**53) times the bit of 2/pi of weight 2**-k is a multiple of 4 when
        k <= E - 2; the table row for x's exponent holds the next 212 bits (four 53-bit
        chunks), scaled so that x and the row are multiplied at fixed magnitudes: y = x 2**-8i
        (exact) below 2**62, the chunks below 1, 2**-53, 2**-106 and 2**-159
        (TWO_OVER_PI_TABLE). The products are split exactly by fma; whole numbers are taken
        off the large partial results as they come (rint and a subtraction, both exact) and
        counted into n; the small ones (below 2**-42) are summed as a double-double.
        `single` (a float32 result): three chunks, the small terms and the product by pi/2
        rounded as they come, r low 0; f is then within about 2**-90 absolute, ample for
        float32 arguments, whose f is never below 2**-29.2 (16367173 * 2**72).
        """
        b = self.b
        exponent = b.and_(b.lshr(b.bitcast(x, INT64), ir.Constant(INT64, 52)),
                          ir.Constant(INT64, 0x7FF))
        shifted = b.sub(exponent, ir.Constant(INT64, TRIG_FIRST_EXPONENT))
        zero = ir.Constant(INT64, 0)
        row = b.lshr(b.select(b.icmp_signed("<", shifted, zero), zero, shifted),
                     ir.Constant(INT64, 3))
        scale = b.bitcast(b.shl(b.sub(ir.Constant(INT64, 1023), b.shl(row, ir.Constant(
            INT64, 3))), ir.Constant(INT64, 52)), DOUBLE)
        y = b.fmul(x, scale)
        table = self._table("autojit.two_over_pi", [c for chunks in TWO_OVER_PI_TABLE
                                                    for c in chunks])
        first = b.mul(row, ir.Constant(INT64, TRIG_CHUNKS))
        chunks = [b.load(b.gep(table, [b.add(first, ir.Constant(INT64, c))], inbounds=True,
                                source_etype=DOUBLE), typ=DOUBLE, align=8)
                  for c in range(3 if self.single else TRIG_CHUNKS)]
        products = [b.fmul(y, chunk) for chunk in chunks]
        errors = [self.fma(y, chunk, b.fneg(product))
                  for chunk, product in zip(chunks[:3], products[:3])]
        whole0 = self.intrinsic("llvm.rint", [products[0]])
        middle, middle_error = self._two_sum(errors[0], products[1])
        whole1 = self.intrinsic("llvm.rint", [middle])
        fraction, fraction_error = self._two_sum(b.fsub(products[0], whole0),
                                                 b.fsub(middle, whole1))
        whole2 = self.intrinsic("llvm.rint", [fraction])
        quadrant = b.add(b.add(b.fptosi(whole0, INT64), b.fptosi(whole1, INT64)),
                         b.fptosi(whole2, INT64))
        if self.single:
            small = b.fadd(b.fadd(middle_error, errors[1]), b.fadd(products[2], fraction_error))
            f = b.fadd(b.fsub(fraction, whole2), small)
            return b.fmul(f, self.const(PIO2_HI)), None, quadrant
        small, tail0 = self._two_sum(middle_error, errors[1])
        small, tail1 = self._two_sum(small, products[2])
        small, tail2 = self._two_sum(small, fraction_error)
        tail = b.fadd(b.fadd(b.fadd(tail0, tail1), b.fadd(tail2, errors[2])), products[3])
        high, low = self._two_sum(b.fsub(fraction, whole2), small)
        low = b.fadd(low, tail)
        # (high + low) * pi/2 in double-double.
        radians = b.fmul(high, self.const(PIO2_HI))
        radians_low = b.fadd(self.fma(high, self.const(PIO2_HI), b.fneg(radians)),
                             self.fma(high, self.const(PIO2_LO),
                                      b.fmul(low, self.const(PIO2_HI))))
        r = b.fadd(radians, radians_low)
        r_low = b.fadd(b.fsub(radians, r), radians_low)
        return r, r_low, quadrant


def _vector_variant(module, scalar, width: int) -> None:
    """`<width x double> NAME_v<width>(<width x double> x, <width x i1> mask)`: x when no
    lane is masked in, else (`NAME_lanes<width>`, not inlined) the scalar function of every
    lane. The variant itself is inlined once the vectorizer has placed its calls
    (jit.py's second pipeline), so the common case is a test and a branch in the loop."""
    vector = ir.VectorType(DOUBLE, width)
    lanes = ir.Function(module, ir.FunctionType(vector, [vector]), f"{scalar.name}_lanes{width}")
    lanes.linkage = "internal"
    lanes.attributes.add("noinline")
    lanes.attributes.add("nounwind")
    b = ir.IRBuilder(lanes.append_basic_block("entry"))
    result = lanes.args[0]
    for lane in range(width):
        index = ir.Constant(ir.IntType(32), lane)
        result = b.insert_element(result, b.call(scalar, [b.extract_element(lanes.args[0],
                                                                            index)]), index)
    b.ret(result)
    function = ir.Function(module, ir.FunctionType(vector, [vector, ir.VectorType(BOOL, width)]),
                           f"{scalar.name}_v{width}")
    function.linkage = "internal"
    function.attributes.add("nounwind")
    function.attributes.add("alwaysinline")
    x, mask = function.args
    b = ir.IRBuilder(function.append_basic_block("entry"))
    work = function.append_basic_block("work")
    none = function.append_basic_block("none")
    bits = b.bitcast(mask, ir.IntType(width))
    b.cbranch(b.icmp_unsigned("!=", bits, ir.Constant(ir.IntType(width), 0)), work, none)
    b.position_at_end(none)
    b.ret(x)
    b.position_at_end(work)
    b.ret(b.call(lanes, [x]))


def finish(text: str) -> str:
    """The module's text with what llvmlite cannot write: each accurate function's vector
    variants named in its attributes (with `memory(none) willreturn`, which the vectorizer
    needs to call them), and the variants kept in `llvm.compiler.used`, since nothing calls
    them before the vectorizer does."""
    pattern = r'^define internal double @"?(autojit_(?:sin|cos)_f(?:32|64))"?\('
    names = sorted(set(re.findall(pattern, text, re.MULTILINE)))
    if not names:
        return text
    kept = []
    for name in names:
        variants = ",".join(f"_ZGV_LLVM_M{width}v_{name}({name}_v{width})"
                            for width in VARIANT_WIDTHS)
        text = re.sub(rf'^(define internal double @"?{name}"?\(double %"?[^)]*\)[^{{\n]*)',
                      rf'\1 memory(none) willreturn "{VARIANT_ATTRIBUTE}"="{variants}"', text,
                      count=1, flags=re.MULTILINE)
        kept.extend(f'ptr @"{name}_v{width}"' for width in VARIANT_WIDTHS)
    return text + (f'\n@llvm.compiler.used = appending global [{len(kept)} x ptr] '
                   f'[{", ".join(kept)}], section "llvm.metadata"\n')
