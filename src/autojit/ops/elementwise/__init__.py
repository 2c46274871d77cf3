"""Elementwise primitives: unary math, binary arithmetic, comparisons, logic; where, cast,
clone and fill are in where_cast.py, re-exported here.

This package holds the elementwise family: this module's primitives, where_cast.py,
math_primitives.py (rounding, inverse trigonometry and the functions with formula gradients),
bitwise.py, the composites of math_composites.py and extra.py, and native_math.py (the eager
impls' native loops, which codegen installs). It sits on the registry (ops/registry.py); the
kernels' expression language (codegen/) renders its lowerings.

Each `define_op` block is the whole story of one primitive (shape, dtype, NumPy impl, VJP,
JVP, lowering). The user-facing functions at the bottom of each block accept Tensors and Python
scalars; composites built from these (gelu, clamp, ...) live in composite.py.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from ..complex_rules import conj
from ..dtype_rules import promoted_dtype, rule_bool, rule_compare, rule_float, rule_promote
from ..limited_rules import ALL_LIMITED, BOTH, COMPLEX32, FLOAT8, UNSIGNED, limited_error
from ..registry import NOT_DIFFERENTIABLE, OpError
from .common import (  # noqa: F401 - NO_ATTRS, operand, ...: read as ew.<name> by the families
    _DIRECT,
    NO_ATTRS,
    NUMBERS_AS_TENSORS,
    _binary_vjp,
    _call1,
    _call2,
    _elementwise,
    _needs,
    binary_jvp,
    numbers_operands,
    operand,
    tangent_sum,
    unary_jvp,
)
from .derivatives import tanh_backward
from .native_math import native as _native
from .native_math import unary as _native_or
from .where_cast import (  # noqa: F401 - where, cast, clone and fill, read from here
    CAST,
    CLONE,
    COMPLEX_TO_REAL,
    FILL,
    WHERE,
    cast,
    clone,
    fill_like,
    where,
    zero_jvp,
)

_COMPLEX = dtypes.COMPLEX


# ---- unary ------------------------------------------------------------------------------------

def _rule_negate(inputs, attrs):
    dtype = promoted_dtype(inputs)
    if dtype is dtypes.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return dtype, dtype


def _rule_subtract(inputs, attrs):
    # torch counts a Python bool operand as a bool tensor here (`x - True` raises too)
    bools = [x._dtype is dtypes.bool_ if isinstance(x, Tensor) else isinstance(x, (bool, np.bool_))
             for x in inputs]
    if all(bools):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if any(bools):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    return rule_promote(inputs, attrs)


NEG = _elementwise("neg", 1, _rule_negate, np.negative, lambda ctx, g: (-g,), (),
                   "(-{0})", exact=True, jvp=lambda inputs, tangents, out, attrs: -tangents[0],
                   complex=True, complex_expression=True, limited=COMPLEX32)


def _rule_abs(inputs, attrs):
    dtype = promoted_dtype(inputs)
    return dtype, dtype.to_real()  # a complex number's modulus is real


def _abs_vjp(ctx, g):
    x = ctx.inputs[0]
    if x._dtype.category == _COMPLEX:
        return (g * x.sgn(),)  # torch's grad * sgn(z): the modulus grows along z / |z|
    return (g * x.sign(),)


def _abs_jvp(inputs, tangents, out, attrs):
    x = inputs[0]
    if x._dtype.category == _COMPLEX:
        return (tangents[0] * x.sgn().conj()).real
    return tangents[0] * x.sign()


ABS = _elementwise("abs", 1, _rule_abs, np.abs, _abs_vjp, (0,), "abs({0})", exact=True,
                   jvp=_abs_jvp, complex=True, complex_expression=True,
                   limited=COMPLEX32 + FLOAT8)


def _sign(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.bool_:
        return x.copy()  # torch: a bool's sign is itself
    # torch computes (0 < x) - (x < 0): NaN's sign is 0, where np.sign gives NaN.
    return np.greater(x, 0).astype(x.dtype) - np.less(x, 0).astype(x.dtype)


def _zero_vjp(ctx, g):
    # Zeros, not g * 0: an infinite or NaN cotangent still gives 0, as in torch.
    return (fill_like(g, 0),)


SIGN = _elementwise("sign", 1, rule_promote, _sign, _zero_vjp, (), "sign({0})", exact=True,
                    jvp=zero_jvp, complex="Unlike NumPy, torch.sign is not intended to support "
                    "complex numbers. Please use torch.sgn instead.")
# The holomorphic functions below take complex tensors: each VJP multiplies by the conjugate
# of the derivative (conj, a no-op on real values), each JVP by the derivative itself.
EXP = _elementwise("exp", 1, rule_float, _native_or("exp", np.exp),
                   lambda ctx, g: (g * conj(ctx.out),), ("out",), "exp({0})",
                   jvp=unary_jvp(lambda x, out: out), complex=True, complex_expression=True,
                   kernel="exp_vml_cpu")  # (torch's kernels' names, for complex32)
LOG = _elementwise("log", 1, rule_float, _native_or("log", np.log),
                   lambda ctx, g: (g / conj(ctx.inputs[0]),), (0,), "log({0})",
                   jvp=lambda inputs, tangents, out, attrs: tangents[0] / inputs[0],
                   complex=True, complex_expression=True, kernel="log_vml_cpu")
SQRT = _elementwise("sqrt", 1, rule_float, np.sqrt, lambda ctx, g: (g / (2 * conj(ctx.out)),),
                    ("out",), "sqrt({0})", exact=True,
                    jvp=lambda inputs, tangents, out, attrs: tangents[0] / (2 * out),
                    complex=True, complex_expression=True, kernel="sqrt_vml_cpu")
SIN = _elementwise("sin", 1, rule_float, _native_or("sin", np.sin),
                   lambda ctx, g: (g * conj(ctx.inputs[0].cos()),), (0,), "sin({0})",
                   jvp=unary_jvp(lambda x, out: x.cos()), companions=("cos",), complex=True,
                   complex_expression=True, kernel="sin_vml_cpu")
COS = _elementwise("cos", 1, rule_float, _native_or("cos", np.cos),
                   lambda ctx, g: (-g * conj(ctx.inputs[0].sin()),), (0,), "cos({0})",
                   jvp=lambda inputs, tangents, out, attrs: -tangents[0] * inputs[0].sin(),
                   companions=("sin",), complex=True, complex_expression=True,
                   kernel="cos_vml_cpu")
def _tanh_vjp(ctx, g):
    if ctx.out.dtype.is_complex:
        return (g * conj(1 - ctx.out * ctx.out),)
    return (tanh_backward(g, ctx.out),)


TANH = _elementwise("tanh", 1, rule_float, _native_or("tanh", np.tanh), _tanh_vjp, ("out",),
                    "tanh({0})",
                    jvp=unary_jvp(lambda x, out: 1 - out * out), complex=True,
                    complex_expression=True, kernel="tanh_vml_cpu")


_expit = None  # scipy.special.expit, imported on first use: SciPy costs `import autojit` 0.1 s


def _sigmoid_impl(x):
    # SciPy's expit is one ufunc that never overflows, where NumPy needs eight calls (exp of
    # -|x|, its reciprocal plus one, a where): on 64 floats 0.5 against 4.0 us, on 2^20
    # 3.7 against 5.4 ms. It matches torch's bits more often (96% of float32 samples against
    # 72%) and flushes to 0 where torch does (below about -88 in float32). For float64 it is
    # as close to the exact value as the eight calls (2 ulp at most, 35% of values not
    # correctly rounded against 41%) in 6.9 against 13.5 ms on 2^20 (silu's double backward,
    # softplus's). Large contiguous arrays run the native loop instead (native_math.py), which
    # keeps the subnormal results torch and expit flush to 0.
    if x.dtype.kind == "c":  # no overflow guard: exp(-x) of a complex x has no single sign
        return np.reciprocal(np.exp(np.negative(x)) + 1)
    found = _native("sigmoid", x)
    if found is not None:
        return found
    global _expit
    if _expit is None:
        from scipy.special import expit as _expit
    return _expit(x)


SIGMOID = _elementwise("sigmoid", 1, rule_float, _sigmoid_impl,
                       lambda ctx, g: (g * conj(ctx.out * (1 - ctx.out)),), ("out",),
                       "sigmoid({0})",
                       jvp=lambda inputs, tangents, out, attrs: tangents[0] * out * (1 - out),
                       complex=True)


_scipy_erf = None  # scipy.special.erf, imported on first use (as expit above)


def _erf_impl(x):
    # SciPy's ufunc computes in double: float32 and float16 get the C library's erf rounded
    # once, its bits; float64 is within 3 ulp of torch's (SLEEF's on large arrays, the
    # library's on short tails), 10 against 130 ms on 1M floats for a Python call per element
    # (a GELU's erf, and its backward's). Large contiguous float32 and float64 arrays run the
    # native loop instead (ops/elementwise/native_math.py): within 1 ulp of torch.
    found = _native("erf", x)
    if found is not None:
        return found
    global _scipy_erf
    if _scipy_erf is None:
        from scipy.special import erf as _scipy_erf
    return _scipy_erf(x).astype(x.dtype, copy=False)


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
ERF = _elementwise("erf", 1, rule_float, _erf_impl,
                   lambda ctx, g: (g * _TWO_OVER_SQRT_PI * (-ctx.inputs[0].square()).exp(),),
                   (0,), "erf({0})",
                   jvp=lambda inputs, tangents, out, attrs: (
                       tangents[0] * _TWO_OVER_SQRT_PI * (-inputs[0].square()).exp()),
                   complex="\"erf_vml_cpu\" not implemented for '{type}'")
LOG1P = _elementwise("log1p", 1, rule_float, _native_or("log1p", np.log1p),
                     lambda ctx, g: (g / conj(ctx.inputs[0] + 1),), (0,), "log1p({0})",
                     jvp=lambda inputs, tangents, out, attrs: tangents[0] / (inputs[0] + 1),
                     complex=True, kernel="log1p_vml_cpu")
EXPM1 = _elementwise("expm1", 1, rule_float, _native_or("expm1", np.expm1),
                     lambda ctx, g: (g * conj(ctx.out + 1),), ("out",), "expm1({0})",
                     jvp=unary_jvp(lambda x, out: out + 1), complex=True, kernel="expm1_vml_cpu")
FLOOR = _elementwise("floor", 1, rule_promote, np.floor, _zero_vjp, (), "floor({0})",
                     exact=True, jvp=zero_jvp, complex="floor is not supported for complex inputs",
                     limited=UNSIGNED)  # torch's floor of an integer is a copy of it

neg, abs, sign, exp, log, sqrt = map(_call1, (NEG, ABS, SIGN, EXP, LOG, SQRT))  # noqa: A001
sin, cos, tanh, sigmoid, erf = map(_call1, (SIN, COS, TANH, SIGMOID, ERF))
log1p, expm1, floor = map(_call1, (LOG1P, EXPM1, FLOOR))

# ---- binary arithmetic ------------------------------------------------------------------------

def _difference_jvp(inputs, tangents, out, attrs):
    tx, ty = tangents
    if ty is None:
        return tx
    return -ty if tx is None else tx - ty


def _div_jvp(inputs, tangents, out, attrs):
    # torch's (tx - ty out) / y: one division, and at y = 0 an infinity where the VJP's two
    # terms, added, would give inf - inf.
    y, (tx, ty) = inputs[1], tangents
    if ty is None:
        return tx / y
    return (-(ty * out) if tx is None else tx - ty * out) / y


ADD = _elementwise("add", 2, rule_promote, np.add, lambda ctx, g: (g, g), (),
                   "({0} + {1})", exact=True,
                   jvp=lambda inputs, tangents, out, attrs: tangent_sum(*tangents),
                   complex=True, complex_expression=True, kernel="add_stub", limited=COMPLEX32)
SUB = _elementwise("sub", 2, _rule_subtract, np.subtract, lambda ctx, g: (g, -g), (),
                   "({0} - {1})", exact=True, jvp=_difference_jvp,
                   complex=True, complex_expression=True, kernel="add_stub", limited=COMPLEX32)
MUL = _elementwise("mul", 2, rule_promote, np.multiply,
                   _binary_vjp(lambda ctx, g: g * conj(ctx.inputs[1]),
                               lambda ctx, g: g * conj(ctx.inputs[0])),
                   ((1, 0), (0, 1)), "({0} * {1})", exact=True,
                   # `3.3 * x` is mul(3.3, x) here and x.mul(3.3) in torch: either position.
                   float32_scalars=(0, 1),
                   jvp=binary_jvp(lambda x, y, tx, out: tx * y, lambda x, y, ty, out: x * ty),
                   complex=True, complex_expression=True, limited=BOTH)
def _rule_divide(inputs, attrs):
    """rule_float, with torch's errors for complex32, whose kernels do not divide: a number by
    a tensor is its reciprocal kernel's, the others its div kernel's."""
    compute, out = rule_float(inputs, attrs)
    if compute is dtypes.complex32:
        raise dtypes.kernel_error("div_cpu" if isinstance(inputs[0], Tensor) else
                                  "reciprocal_cpu", compute)
    return compute, out


DIV = _elementwise(
    "div", 2, _rule_divide, np.true_divide,
    _binary_vjp(lambda ctx, g: g / conj(ctx.inputs[1]),
                # -g x / y^2 as torch groups it, ((x / y) / y): at y = 0 the second
                # derivative is then an infinity, where x / (y * y) gives 0 * inf = NaN.
                lambda ctx, g: -g * conj((ctx.inputs[0] / ctx.inputs[1]) / ctx.inputs[1])),
    (1, (0, 1)), "({0} / {1})", exact=True, float32_scalars=(1,), jvp=_div_jvp,
    complex=True, complex_expression=True)


def _pow_base_grad(ctx, g):
    # torch: 0 where the exponent is 0 (0 ** -1 would give 0 * inf at a zero base).
    # (the output is kept only where the exponent needs a gradient: saves' ("out", 1))
    return _pow_base_part(*ctx.inputs, g, None, True)


def _pow_exponent_grad(ctx, g):
    return _pow_exponent_part(*ctx.inputs, g, ctx.out, True)


def _pow_base_part(x, y, tangent, out, transpose=False):
    """The base's part: tangent * d(x**y)/dx, conjugated for a VJP (`transpose`)."""
    if not isinstance(y, Tensor):
        if y == 0:
            return fill_like(tangent, 0)
        derivative = y * x ** (y - 1)
        return tangent * (conj(derivative) if transpose else derivative)
    derivative = y * x ** (y - 1)
    return where(y == 0, 0, tangent * (conj(derivative) if transpose else derivative))


def _pow_exponent_part(x, y, tangent, out, transpose=False):
    if not isinstance(x, Tensor):
        x = fill_like(y, x)  # a Python scalar base (2 ** y) as a tensor, for log and the masks
    # d/dy x**y = x**y log x; torch defines it as 0 where x == 0 and y >= 0 (no 0 * -inf),
    # for a complex y where it is real and not negative. The (co)tangent multiplies outside
    # the where, as in torch, so a NaN cotangent reaching a zero base in double backward
    # stays NaN.
    if isinstance(y, Tensor) and y._dtype.category == _COMPLEX:
        safe = (x == 0) & (y.imag == 0) & (y.real >= 0)
    else:
        safe = (x == 0) & (y >= 0)
    if out._dtype.category == _COMPLEX and x._dtype.category != _COMPLEX:
        # a real base under a complex power: its log is complex (log(-1) = i pi), not NaN
        x = x.to(out._dtype)
    derivative = out * x.log()
    return tangent * where(safe, 0, conj(derivative) if transpose else derivative)


def _pow_impl(x, y):
    integer_base = (x.dtype.kind in "iu" if isinstance(x, np.ndarray)
                    else isinstance(x, (int, np.integer)) and not isinstance(x, bool))
    if integer_base and np.asarray(y).dtype.kind in "iu" and np.any(np.asarray(y) < 0):
        if not isinstance(y, np.ndarray):  # torch refuses a negative number as exponent only
            raise OpError(RuntimeError("Integers to negative integer powers are not allowed."))
        # A tensor exponent: torch's integer pow gives 1 for a base of 1, +-1 for -1 (by the
        # exponent's parity) and 0 for any other base where the exponent is negative.
        negative = y < 0
        x = x if isinstance(x, np.ndarray) else np.asarray(x, y.dtype)
        power = np.power(x, np.where(negative, 0, y))
        odd = (y % 2) != 0
        reciprocal = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0))
        return np.where(negative, reciprocal, power).astype(power.dtype)
    if y.__class__ in (int, float) and (y == 3 or y == -2) and x.__class__ is np.ndarray and \
            x.dtype.type in (np.float32, np.float64):
        # torch's pow of a float tensor by the number 3 is x * x * x, by -2 1 / (x * x) (its
        # scalar fast paths), bit for bit; NumPy's power calls the C library's pow, a last bit
        # away in a fifth of the values and fifty times as slow on float64 (the derivative of
        # x ** 4, in every double backward of a quartic).
        square = x * x
        return square * x if y == 3 else np.divide(1, square, dtype=x.dtype)
    if y.__class__ in (int, float) and y == 4 and x.__class__ is np.ndarray and \
            x.dtype.type in (np.float32, np.float64):
        # torch runs x ** 4 through SLEEF's pow (1 ulp), NumPy through the C library's per
        # element, 20 ms on 1M float64 against 2 for two squares, whose result is at most 2
        # ulp from torch's; float32 squares in float64 and rounds once, exact as pow.
        # (`out=` keeps a 0-d result an array, which `x * x` would make a NumPy scalar)
        wide = np.multiply(x, x, out=np.empty(x.shape, np.float64), dtype=np.float64)
        np.multiply(wide, wide, out=wide)
        return wide.astype(x.dtype, copy=False)
    return np.power(x, y)


def _rule_pow(inputs, attrs):
    """Type promotion; a negative Python int exponent of uint8 raises here, before it is
    wrapped into the dtype (-2 as uint8 is 254); the impl refuses the other integers'."""
    dtype = promoted_dtype(inputs)
    exponent = inputs[1]
    if dtype is dtypes.uint8 and exponent.__class__ is int and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if dtype.limited and not (exponent.__class__ in (int, float, bool) and exponent in (0, 1)):
        # torch's pow of a tensor by the number 0 or 1 is a fill or a copy, which takes uint64
        # (so the op does); its kernel for any other power does not
        raise limited_error(POW, dtype)
    return dtype, dtype


def _complex_power(operands):
    """pow's expression over a complex base: lowered for an integer number exponent in
    (-100, 100) only, the exponents NumPy raises by repeated products (its cpow); any other
    runs the impl."""
    exponent = operands[1]
    if exponent is None or isinstance(exponent, bool) or exponent.__class__ not in (
            int, float, complex) or complex(exponent).imag != 0:
        return False
    value = complex(exponent).real
    return value == int(value) and -100 < value < 100 if math.isfinite(value) else False


POW = _elementwise("pow", 2, _rule_pow, _pow_impl,
                   _binary_vjp(_pow_base_grad, _pow_exponent_grad), (0, 1, ("out", 1)),
                   "pow({0}, {1})", jvp=binary_jvp(_pow_base_part, _pow_exponent_part),
                   complex=True, complex_expression=_complex_power, kernel="pow",
                   limited=BOTH)


def _max_min_vjp(loses):
    """torch's rule for maximum/minimum: tied inputs share the gradient evenly, the losing one
    gets none, and where a NaN makes the comparison false both get all of it."""
    def share(ctx, g, mine, other):
        x, y = ctx.inputs[mine], ctx.inputs[other]
        return where(loses(x, y), 0, where(x == y, g * 0.5, g))

    return _binary_vjp(lambda ctx, g: share(ctx, g, 0, 1), lambda ctx, g: share(ctx, g, 1, 0))


def _max_min_jvp(wins):
    """torch's JVP of maximum/minimum: the winner's tangent, the mean of both at a tie, and
    y's where a NaN makes the comparisons false (the VJP gives both all of the gradient
    there: torch's two rules differ at NaN only). torch writes it ty + w (tx - ty) with w
    1, 0.5 or 0; selecting the tangents is the same without rounding."""
    def rule(inputs, tangents, out, attrs):
        (x, y), (tx, ty) = inputs, tangents
        mean = tangent_sum(tx, ty) * 0.5
        return where(x == y, mean, where(wins(x, y), 0 if tx is None else tx,
                                         0 if ty is None else ty))

    return rule


MAXIMUM = _elementwise("maximum", 2, rule_promote, np.maximum,
                       _max_min_vjp(lambda a, b: a < b), (0, 1), "max({0}, {1})", exact=True,
                       jvp=_max_min_jvp(lambda a, b: a > b),
                       complex=(RuntimeError, "maximum not implemented for complex tensors."))
MINIMUM = _elementwise("minimum", 2, rule_promote, np.minimum,
                       _max_min_vjp(lambda a, b: a > b), (0, 1), "min({0}, {1})", exact=True,
                       jvp=_max_min_jvp(lambda a, b: a < b),
                       complex=(RuntimeError, "minimum not implemented for complex tensors."))


def _integer_division(function):
    """np.floor_divide or np.remainder, raising torch's error where an integer divisor is 0
    (NumPy gives 0 there; a float divisor of 0 gives inf or nan, as in torch)."""
    def impl(x, y):
        result = function(x, y)
        if result.dtype.kind in "iu" and result.size and not np.all(y):
            raise RuntimeError("ZeroDivisionError")
        return result

    return impl


FLOOR_DIVIDE = _elementwise("floor_divide", 2, rule_promote, _integer_division(np.floor_divide),
                            NOT_DIFFERENTIABLE, (), "floor_divide({0}, {1})",
                            float32_scalars=(1,),
                            complex="\"div_floor_cpu\" not implemented for '{type}'",
                            kernel="div_floor_cpu")
def _remainder(x, y):
    """np.remainder with torch's zeros: a zero result has the dividend's sign (torch reduces
    fmod's result, which keeps it), where NumPy gives it the divisor's."""
    result = np.remainder(x, y)
    if result.dtype.kind == "f":
        result = np.where(result == 0, np.copysign(0, x), result).astype(result.dtype)
    return result


REMAINDER = _elementwise(
    "remainder", 2, rule_promote, _integer_division(_remainder),
    _binary_vjp(lambda ctx, g: g,
                lambda ctx, g: -g * ctx.inputs[0].floor_divide(ctx.inputs[1])),
    (0, 1), "remainder({0}, {1})",
    jvp=binary_jvp(lambda x, y, tx, out: tx, lambda x, y, ty, out: -ty * floor_divide(x, y)))

add, sub, mul, div, pow = map(_call2, (ADD, SUB, MUL, DIV, POW))  # noqa: A001
maximum, minimum, floor_divide, remainder = map(_call2, (MAXIMUM, MINIMUM, FLOOR_DIVIDE,
                                                        REMAINDER))

# ---- comparisons and logic: bool results, not differentiable -----------------------------------

EQ = _elementwise("eq", 2, rule_compare, np.equal, NOT_DIFFERENTIABLE, (),
                  "({0} == {1})", exact=True, complex=True, complex_expression=True,
                  limited=ALL_LIMITED)
NE = _elementwise("ne", 2, rule_compare, np.not_equal, NOT_DIFFERENTIABLE, (),
                  "({0} != {1})", exact=True, complex=True, complex_expression=True,
                  limited=ALL_LIMITED)
LT = _elementwise("lt", 2, rule_compare, np.less, NOT_DIFFERENTIABLE, (), "({0} < {1})", exact=True)
LE = _elementwise("le", 2, rule_compare, np.less_equal, NOT_DIFFERENTIABLE, (),
                  "({0} <= {1})", exact=True)
GT = _elementwise("gt", 2, rule_compare, np.greater, NOT_DIFFERENTIABLE, (),
                  "({0} > {1})", exact=True)
GE = _elementwise("ge", 2, rule_compare, np.greater_equal, NOT_DIFFERENTIABLE, (),
                  "({0} >= {1})", exact=True)
# A complex number's truth value is whether it is nonzero, as torch's logical ops read it.
LOGICAL_AND = _elementwise("logical_and", 2, rule_bool, np.logical_and, NOT_DIFFERENTIABLE, (),
                           "({0} && {1})", exact=True, complex=True)
LOGICAL_OR = _elementwise("logical_or", 2, rule_bool, np.logical_or, NOT_DIFFERENTIABLE, (),
                          "({0} || {1})", exact=True, complex=True)
LOGICAL_XOR = _elementwise("logical_xor", 2, rule_bool, np.logical_xor, NOT_DIFFERENTIABLE, (),
                           "(bool({0}) != bool({1}))", exact=True, complex=True)
LOGICAL_NOT = _elementwise("logical_not", 1, rule_bool, np.logical_not, NOT_DIFFERENTIABLE, (),
                           "(!{0})", exact=True, complex=True)
ISNAN = _elementwise("isnan", 1, rule_bool, np.isnan, NOT_DIFFERENTIABLE, (),
                     "isnan({0})", exact=True, complex=True, limited=ALL_LIMITED)

eq, ne, lt, le, gt, ge = map(_call2, (EQ, NE, LT, LE, GT, GE))
logical_and, logical_or, logical_xor = map(_call2, (LOGICAL_AND, LOGICAL_OR, LOGICAL_XOR))

# The parameters of these ops that torch's signatures take as a Tensor only: its argument
# parser refuses a Python number there (`torch.eq(2, x)`, `torch.maximum(x, 2)`), which
# autojit's own code may pass (`x & True` reaches logical_and). The public functions and
# methods check them (functional.py, tensor_methods.py); name -> the positions' names.
TENSOR_PARAMETERS = {
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge"), ("input",)),
    **dict.fromkeys(("logical_and", "logical_or", "logical_xor", "maximum", "minimum"),
                    ("input", "other")),
}
logical_not, isnan = _call1(LOGICAL_NOT), _call1(ISNAN)
