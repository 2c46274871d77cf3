"""Complex values in CPU kernels: a complex64 or complex128 value is a pair of float32 or
float64 IR values, its real and imaginary parts, so that a chain of complex elementwise ops
fuses into one loop as a real chain does (docs/notes/complex.md).

llvm_expression.StepEmitter hands an operation here when an operand is complex: conversions,
arithmetic, `==` and `!=`, and the functions of COMPLEX_FUNCTIONS, each written per part after
the NumPy loops eager runs (the product and Smith's scaled quotient as NumPy's complex loops
compute them, the modulus by hypot, exp, log and sqrt as C99's cexp, clog and csqrt define
their special values). Which ops reach here is the registry's: an op's
`Elementwise.complex_expression` (ops/lowering.py), which the fusion schedule reads. render.py
loads and stores complex elements as interleaved pairs, NumPy's layout.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ....tensor import dtypes
from . import expression as ex

DOUBLE = ir.DoubleType()


def is_complex(dtype) -> bool:
    return dtype.category == dtypes.COMPLEX


def part_type(dtype):
    """The IR type of each part of a complex dtype's values."""
    return ex.register_type(dtype.to_real())


def complex_constant(value, dtype) -> ex.Typed:
    value = complex(value)
    kind = part_type(dtype)
    return ex.Typed((ir.Constant(kind, value.real), ir.Constant(kind, value.imag)), dtype)


def convert_complex(builder, typed: ex.Typed, dtype) -> ex.Typed:
    """The cast where the source or the target is complex: a real value gets a zero
    imaginary part; a complex one converts its real part, as ops/elementwise/__init__.py's cast
    does, except to bool, which is true where either part is nonzero (torch's, and NumPy's)."""
    value, source = typed
    if is_complex(dtype):
        part = dtype.to_real()
        if is_complex(source):
            return ex.Typed(tuple(ex.convert(builder, ex.Typed(x, source.to_real()), part).value
                                  for x in value), dtype)
        real = ex.convert(builder, typed, part).value
        return ex.Typed((real, ir.Constant(real.type, 0.0)), dtype)
    if dtype is dtypes.bool_:
        real, imag = (ex.convert(builder, ex.Typed(x, source.to_real()), dtype).value
                      for x in value)
        return ex.Typed(builder.or_(real, imag), dtype)
    return ex.convert(builder, ex.Typed(value[0], source.to_real()), dtype)


# ---- arithmetic -------------------------------------------------------------------------------

def negate(emitter, value: ex.Typed) -> ex.Typed:
    return ex.Typed(tuple(emitter.b.fneg(x) for x in value.value), value.dtype)


def binary(emitter, operator: str, a: ex.Typed, c: ex.Typed) -> ex.Typed:
    if operator in ("&&", "||"):
        truths = [convert_complex(emitter.b, x, dtypes.bool_) if is_complex(x.dtype) else x
                  for x in (a, c)]
        return emitter.binary(operator, *truths)
    a, c, dtype = emitter.unify(a, c)
    b = emitter.b
    (ar, ai), (cr, ci) = a.value, c.value
    if operator == "==":
        return ex.Typed(b.and_(b.fcmp_ordered("==", ar, cr), b.fcmp_ordered("==", ai, ci)),
                        dtypes.bool_)
    if operator == "!=":
        return ex.Typed(b.or_(b.fcmp_unordered("!=", ar, cr), b.fcmp_unordered("!=", ai, ci)),
                        dtypes.bool_)
    if operator == "+":
        return ex.Typed((b.fadd(ar, cr), b.fadd(ai, ci)), dtype)
    if operator == "-":
        return ex.Typed((b.fsub(ar, cr), b.fsub(ai, ci)), dtype)
    if operator == "*":
        # NumPy's SIMD loop, strided and broadcast operands included: (fma(ar, cr, -ai ci),
        # fma(ar, ci, ai cr)), which the plain formula missed in a quarter of the parts.
        fma = lambda p, q, r: ex.intrinsic(b, "fma", [p, q, r])  # noqa: E731
        return ex.Typed((fma(ar, cr, b.fneg(b.fmul(ai, ci))), fma(ar, ci, b.fmul(ai, cr))),
                        dtype)
    if operator == "/":
        return ex.Typed(_quotient(b, ar, ai, cr, ci), dtype)
    emitter.fail(f"operator {operator!r} is not defined for complex values")


def _quotient(b, ar, ai, cr, ci):
    """NumPy's complex division (Smith's): the divisor's smaller part scaled by its larger,
    so that neither |c|^2 nor the products overflow; a zero divisor divides each part by 0."""
    kind = ar.type
    zero, one = ir.Constant(kind, 0.0), ir.Constant(kind, 1.0)
    abs_r, abs_i = ex.intrinsic(b, "fabs", [cr]), ex.intrinsic(b, "fabs", [ci])
    real_larger = b.fcmp_ordered(">=", abs_r, abs_i)
    # |cr| >= |ci|: rat = ci / cr, scl = 1 / (cr + ci rat).
    rat = b.fdiv(ci, cr)
    scl = b.fdiv(one, b.fadd(cr, b.fmul(ci, rat)))
    first = (b.fmul(b.fadd(ar, b.fmul(ai, rat)), scl),
             b.fmul(b.fsub(ai, b.fmul(ar, rat)), scl))
    # Otherwise: rat = cr / ci, scl = 1 / (ci + cr rat).
    rat2 = b.fdiv(cr, ci)
    scl2 = b.fdiv(one, b.fadd(ci, b.fmul(cr, rat2)))
    second = (b.fmul(b.fadd(b.fmul(ar, rat2), ai), scl2),
              b.fmul(b.fsub(b.fmul(ai, rat2), ar), scl2))
    by_zero = b.and_(b.fcmp_ordered("==", abs_r, zero), b.fcmp_ordered("==", abs_i, zero))
    zeroed = (b.fdiv(ar, abs_r), b.fdiv(ai, abs_r))
    return tuple(b.select(real_larger, b.select(by_zero, z, f), s)
                 for z, f, s in zip(zeroed, first, second))


# ---- functions --------------------------------------------------------------------------------

def _parts(value: ex.Typed):
    part = value.dtype.to_real()
    return ex.Typed(value.value[0], part), ex.Typed(value.value[1], part)


def _complex_argument(emitter, value, name) -> ex.Typed:
    if not is_complex(value.dtype):
        emitter.fail(f"{name}() of a complex expression got a {value.dtype.name} value")
    return value


def absolute(emitter, value):
    """|z|: hypot of the parts (NumPy's npy_cabs)."""
    value = _complex_argument(emitter, value, "abs")
    return ex.FUNCTIONS["hypot"](emitter, *_parts(value))


def conjugate(emitter, value):
    if not is_complex(value.dtype):
        return value
    return ex.Typed((value.value[0], emitter.b.fneg(value.value[1])), value.dtype)


def angle(emitter, value):
    """arg z = atan2(im, re) (np.angle)."""
    value = _complex_argument(emitter, value, "angle")
    real, imaginary = _parts(value)
    return ex.FUNCTIONS["atan2"](emitter, imaginary, real)


def make_complex(emitter, real, imaginary):
    """The complex value of two real parts, stored as they are (no 0 * inf of a product)."""
    if is_complex(real.dtype) or is_complex(imaginary.dtype):
        emitter.fail("complex() takes real parts")
    real, imaginary, dtype = emitter.unify(real, imaginary)
    if not dtype.is_floating_point:
        emitter.fail(f"complex() needs floating-point parts, got {dtype.name}")
    return ex.Typed((real.value, imaginary.value), dtype.to_complex())


def signum(emitter, value):
    """z / |z|, 0 at 0: the quotient by the modulus as NumPy divides a complex array by a
    real one (Smith's division by (|z|, 0))."""
    value = _complex_argument(emitter, value, "sgn")
    b = emitter.b
    modulus = absolute(emitter, value).value
    zero = ir.Constant(modulus.type, 0.0)
    quotient = _quotient(b, *value.value, modulus, zero)
    at_zero = b.fcmp_ordered("==", modulus, zero)
    return ex.Typed(tuple(b.select(at_zero, zero, part) for part in quotient), value.dtype)


def select(emitter, condition, a, c):
    truth = ex.convert(emitter.b, condition, dtypes.bool_).value
    a, c, dtype = emitter.unify(a, c)
    if not is_complex(dtype):
        return ex.Typed(emitter.b.select(truth, a.value, c.value), dtype)
    return ex.Typed(tuple(emitter.b.select(truth, x, y) for x, y in zip(a.value, c.value)),
                    dtype)


def _real_math(emitter, name, value, kind):
    return ex.mathlib.emit_unary(name, emitter.b, emitter.b.module, value, kind)


def exponential(emitter, value):
    """exp(x + iy) = e^x (cos y + i sin y), an imaginary part of 0 kept as it is (C99's
    cexp: exp(inf + 0i) is inf + 0i, not a NaN from inf * 0). Where e^x alone overflows
    (x past 709 in double, 88 in float) a part may still be finite: each is then
    (cos y e^(x/2)) e^(x/2), as glibc scales it."""
    value = _complex_argument(emitter, value, "exp")
    b = emitter.b
    x, y = value.value
    kind = x.type
    scale = _real_math(emitter, "exp", x, kind)
    cosine, sine = _real_math(emitter, "cos", y, kind), _real_math(emitter, "sin", y, kind)
    half = _real_math(emitter, "exp", b.fmul(x, ir.Constant(kind, 0.5)), kind)
    large = b.fcmp_ordered(">", x, ir.Constant(kind, 709.0 if kind == DOUBLE else 88.0))
    real, imaginary = (b.select(large, b.fmul(b.fmul(part, half), half), b.fmul(scale, part))
                       for part in (cosine, sine))
    imaginary = b.select(b.fcmp_ordered("==", y, ir.Constant(kind, 0.0)), y, imaginary)
    return ex.Typed((real, imaginary), value.dtype)


def _two_sum(b, x, y):
    total = b.fadd(x, y)
    virtual = b.fsub(total, x)
    error = b.fadd(b.fsub(x, b.fsub(total, virtual)), b.fsub(y, virtual))
    return total, error


def logarithm(emitter, value):
    """log z = log|z| + i arg z. Near |z| = 1, log|z| is log1p(x^2 + y^2 - 1) / 2 with the
    squares' rounding errors carried (in double for complex64, exactly enough; compensated
    for complex128), where log(hypot) would cancel, as C99's clog takes care to."""
    value = _complex_argument(emitter, value, "log")
    b = emitter.b
    x, y = value.value
    kind = x.type
    real, imaginary = _parts(value)
    argument = ex.FUNCTIONS["atan2"](emitter, imaginary, real).value
    half = ir.Constant(DOUBLE, 0.5)
    if kind != DOUBLE:
        wide_x, wide_y = b.fpext(x, DOUBLE), b.fpext(y, DOUBLE)
        squares = b.fadd(b.fmul(wide_x, wide_x), b.fmul(wide_y, wide_y))
        near_total = b.fadd(b.fsub(b.fmul(wide_x, wide_x), ir.Constant(DOUBLE, 1.0)),
                            b.fmul(wide_y, wide_y))
        far = b.fmul(half, _real_math(emitter, "log", squares, DOUBLE))
        near = b.fmul(half, _real_math(emitter, "log1p", near_total, DOUBLE))
        near_one = b.and_(b.fcmp_ordered(">=", squares, ir.Constant(DOUBLE, 0.25)),
                          b.fcmp_ordered("<=", squares, ir.Constant(DOUBLE, 4.0)))
        modulus_log = b.fptrunc(b.select(near_one, near, far), kind)
        return ex.Typed((modulus_log, argument), value.dtype)
    modulus = ex.FUNCTIONS["hypot"](emitter, real, imaginary).value
    far = _real_math(emitter, "log", modulus, kind)
    fma = lambda p, q, r: ex.intrinsic(b, "fma", [p, q, r])  # noqa: E731
    x_square, y_square = b.fmul(x, x), b.fmul(y, y)
    x_error = fma(x, x, b.fneg(x_square))
    y_error = fma(y, y, b.fneg(y_square))
    first, first_error = _two_sum(b, ir.Constant(kind, -1.0), x_square)
    total, total_error = _two_sum(b, first, y_square)
    near_total = b.fadd(total, b.fadd(b.fadd(first_error, total_error),
                                      b.fadd(x_error, y_error)))
    near = b.fmul(half, _real_math(emitter, "log1p", near_total, kind))
    near_one = b.and_(b.fcmp_ordered(">=", modulus, ir.Constant(kind, 0.5)),
                      b.fcmp_ordered("<=", modulus, ir.Constant(kind, 2.0)))
    return ex.Typed((b.select(near_one, near, far), argument), value.dtype)


def square_root(emitter, value):
    """C99's csqrt (Kahan's): t = sqrt((|x| + |z|) / 2); x >= 0 gives t + i y / 2t, x < 0
    gives |y| / 2t + i copysign(t, y); sqrt(0 + iy) = 0 + iy for y = +-0, an infinite y
    gives inf + iy. complex64 runs in double, where |x| + |z| cannot overflow; complex128
    scales arguments beyond a quarter of the largest double by 1/4 (t by 2)."""
    value = _complex_argument(emitter, value, "sqrt")
    b = emitter.b
    x, y = value.value
    kind = x.type
    wide = kind != DOUBLE
    if wide:
        x, y = b.fpext(x, DOUBLE), b.fpext(y, DOUBLE)
    constant = lambda number: ir.Constant(DOUBLE, number)  # noqa: E731
    fabs = lambda v: ex.intrinsic(b, "fabs", [v])  # noqa: E731
    if wide:
        scaled_x, scaled_y, unscale = x, y, constant(1.0)
    else:
        big = b.or_(b.fcmp_ordered(">", fabs(x), constant(1.7976931348623157e308 / 4)),
                    b.fcmp_ordered(">", fabs(y), constant(1.7976931348623157e308 / 4)))
        factor = b.select(big, constant(0.25), constant(1.0))
        scaled_x, scaled_y = b.fmul(x, factor), b.fmul(y, factor)
        unscale = b.select(big, constant(2.0), constant(1.0))
    modulus = ex.FUNCTIONS["hypot"](emitter, ex.Typed(scaled_x, dtypes.float64),
                                    ex.Typed(scaled_y, dtypes.float64)).value
    t = b.fmul(ex.intrinsic(b, "sqrt", [b.fmul(b.fadd(fabs(scaled_x), modulus),
                                                constant(0.5))]), unscale)
    twice = b.fmul(t, constant(2.0))
    non_negative = b.fcmp_unordered(">=", x, constant(0.0))
    real = b.select(non_negative, t, b.fdiv(fabs(y), twice))
    imaginary = b.select(non_negative, b.fdiv(y, twice),
                         ex.intrinsic(b, "copysign", [t, y]))
    zero = b.and_(b.fcmp_ordered("==", x, constant(0.0)), b.fcmp_ordered("==", y, constant(0.0)))
    real = b.select(zero, constant(0.0), real)
    imaginary = b.select(zero, y, imaginary)
    infinite_y = b.fcmp_ordered("==", fabs(y), constant(math.inf))
    real = b.select(infinite_y, constant(math.inf), real)
    imaginary = b.select(infinite_y, y, imaginary)
    if wide:
        real, imaginary = b.fptrunc(real, kind), b.fptrunc(imaginary, kind)
    return ex.Typed((real, imaginary), value.dtype)


def _widened(emitter, value):
    """The parts in double (complex64's widened) and a function rounding results back."""
    b = emitter.b
    x, y = value.value
    if x.type == DOUBLE:
        return x, y, lambda part: part
    return b.fpext(x, DOUBLE), b.fpext(y, DOUBLE), lambda part: b.fptrunc(part, x.type)


def _hyperbolic(emitter, x):
    """(sinh x, cosh x) in double: sinh from expm1 near 0, both as exp(|x| / 2)^2 / 2 past
    709 (finite up to 710.47, where exp(|x|) alone would overflow)."""
    b = emitter.b
    constant = lambda number: ir.Constant(DOUBLE, number)  # noqa: E731
    magnitude = ex.intrinsic(b, "fabs", [x])
    growth = _real_math(emitter, "expm1", magnitude, DOUBLE)
    e = b.fadd(growth, constant(1.0))
    sinh = b.fmul(constant(0.5), b.fadd(growth, b.fdiv(growth, e)))
    cosh = b.fadd(b.fmul(constant(0.5), e), b.fdiv(constant(0.5), e))
    half = _real_math(emitter, "exp", b.fmul(magnitude, constant(0.5)), DOUBLE)
    large = b.fmul(b.fmul(half, constant(0.5)), half)
    big = b.fcmp_ordered(">", magnitude, constant(709.0))
    sinh, cosh = b.select(big, large, sinh), b.select(big, large, cosh)
    return ex.intrinsic(b, "copysign", [sinh, x]), cosh


def sine(emitter, value):
    """sin(a + ib) = sin a cosh b + i cos a sinh b; a = +-0 keeps its zero real part (C99's
    csin: sin(0 + 1000i) is 0 + inf i, not a NaN from 0 * inf)."""
    value = _complex_argument(emitter, value, "sin")
    b = emitter.b
    x, y, narrow = _widened(emitter, value)
    sinh, cosh = _hyperbolic(emitter, y)
    real = b.fmul(_real_math(emitter, "sin", x, DOUBLE), cosh)
    real = b.select(b.fcmp_ordered("==", x, ir.Constant(DOUBLE, 0.0)), x, real)
    imaginary = b.fmul(_real_math(emitter, "cos", x, DOUBLE), sinh)
    return ex.Typed((narrow(real), narrow(imaginary)), value.dtype)


def cosine(emitter, value):
    """cos(a + ib) = cos a cosh b - i sin a sinh b; at a = +-0 the imaginary part is
    -a sign(b), a signed zero (C99's ccos)."""
    value = _complex_argument(emitter, value, "cos")
    b = emitter.b
    x, y, narrow = _widened(emitter, value)
    sinh, cosh = _hyperbolic(emitter, y)
    real = b.fmul(_real_math(emitter, "cos", x, DOUBLE), cosh)
    imaginary = b.fneg(b.fmul(_real_math(emitter, "sin", x, DOUBLE), sinh))
    at_zero = b.fneg(b.fmul(x, ex.intrinsic(b, "copysign", [ir.Constant(DOUBLE, 1.0), y])))
    imaginary = b.select(b.fcmp_ordered("==", x, ir.Constant(DOUBLE, 0.0)), at_zero, imaginary)
    return ex.Typed((narrow(real), narrow(imaginary)), value.dtype)


def hyperbolic_tangent(emitter, value):
    """tanh(a + ib) = (sinh a cosh a + i sin b cos b) / (sinh^2 a + cos^2 b) (C99's ctanh);
    past |a| = 20 the real part is +-1 and the imaginary part 4 sin b cos b e^(-2|a|)."""
    value = _complex_argument(emitter, value, "tanh")
    b = emitter.b
    x, y, narrow = _widened(emitter, value)
    constant = lambda number: ir.Constant(DOUBLE, number)  # noqa: E731
    sinh, cosh = _hyperbolic(emitter, x)
    sine_y, cosine_y = (_real_math(emitter, name, y, DOUBLE) for name in ("sin", "cos"))
    denominator = b.fadd(b.fmul(sinh, sinh), b.fmul(cosine_y, cosine_y))
    real = b.fdiv(b.fmul(sinh, cosh), denominator)
    imaginary = b.fdiv(b.fmul(sine_y, cosine_y), denominator)
    magnitude = ex.intrinsic(b, "fabs", [x])
    far = b.fcmp_ordered(">", magnitude, constant(20.0))
    decay = _real_math(emitter, "exp", b.fmul(magnitude, constant(-2.0)), DOUBLE)
    real = b.select(far, ex.intrinsic(b, "copysign", [constant(1.0), x]), real)
    imaginary = b.select(far, b.fmul(b.fmul(constant(4.0), b.fmul(sine_y, cosine_y)), decay),
                         imaginary)
    return ex.Typed((narrow(real), narrow(imaginary)), value.dtype)


def _plain_product(b, a, c):
    """NumPy's cmul of npy_math (no fused multiply-add), which its cpow repeats."""
    (ar, ai), (cr, ci) = a, c
    return (b.fsub(b.fmul(ar, cr), b.fmul(ai, ci)), b.fadd(b.fmul(ar, ci), b.fmul(ai, cr)))


def power(emitter, base, exponent):
    """z ** n for an integer number n in (-100, 100) (pow's complex_expression admits no
    other): NumPy's cpow, n = 1, 2, 3 directly, else square-and-multiply from 1 over |n|'s
    bits, a negative n then 1 / z^|n| by the quotient; 0 ** n is 0 for n > 0, NaN for n < 0,
    and z ** 0 is 1."""
    operand = emitter.step.operands[1]
    if operand.kind != "literal":
        emitter.fail("a complex power needs an integer number as its exponent")
    n = int(complex(operand.index).real)
    base = _complex_argument(emitter, base, "pow")
    b = emitter.b
    kind = base.value[0].type
    constant = lambda number: ir.Constant(kind, number)  # noqa: E731
    if n == 0:
        return ex.Typed((constant(1.0), constant(0.0)), base.dtype)
    a = base.value
    if n in (1, 2, 3):
        result = a if n == 1 else _plain_product(b, a, a)
        if n == 3:
            result = _plain_product(b, result, a)
    else:
        magnitude, mask = abs(n), 1
        result, square = (constant(1.0), constant(0.0)), a
        while True:
            if magnitude & mask:
                result = _plain_product(b, result, square)
            mask <<= 1
            if magnitude < mask:
                break
            square = _plain_product(b, square, square)
        if n < 0:
            result = _quotient(b, constant(1.0), constant(0.0), *result)
    at_zero = b.and_(b.fcmp_ordered("==", a[0], constant(0.0)),
                     b.fcmp_ordered("==", a[1], constant(0.0)))
    fill = constant(0.0) if n > 0 else constant(math.nan)
    return ex.Typed(tuple(b.select(at_zero, fill, part) for part in result), base.dtype)


# The functions of the expression language over complex operands; each takes the emitter and
# the arguments as Typed values (a complex one's value is the (real, imaginary) pair).
COMPLEX_FUNCTIONS = {
    "abs": absolute, "conj": conjugate, "angle": angle, "sgn": signum, "select": select,
    "cast": lambda emitter, value: emitter.cast(value),
    "exp": exponential, "log": logarithm, "sqrt": square_root,
    "sin": sine, "cos": cosine, "tanh": hyperbolic_tangent, "pow": power,
}
# Functions whose arguments are real and whose value is complex, or that take either.
REAL_FUNCTIONS = {"complex": make_complex, "conj": conjugate}
ex.FUNCTIONS.update(REAL_FUNCTIONS)  # the expression functions of real operands it adds
