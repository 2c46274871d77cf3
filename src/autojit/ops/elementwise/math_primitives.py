"""Elementwise math primitives beyond elementwise/__init__.py: rounding (trunc, ceil), signs and
remainders (copysign, fmod, nextafter), inverse trigonometric functions (atan, asin, acos,
atan2), hypot, erfc, and the functions whose gradients torch defines by formulas a composite
would not reproduce at the special points (acosh, logaddexp, logaddexp2, xlogy, logit,
torch.special's xlog1py and entr, and relu with its gradient threshold_backward).

Each is one `define_op`, like elementwise/__init__.py's: the NumPy impl is the reference, the VJP is
torch's derivative formula written in autojit ops (so double backward and torch's values at
the special points follow), the JVP torch's forward formula (the same one applied to the
tangent, but for atan2's), and the expression template is the whole kernel on both
backends. trunc, ceil, copysign, fmod, nextafter, hypot, atan2, the arctangents and erfc have
functions of their own in the expression language (codegen/cpu/llvm/expression.py with
mathlib_atan.py and mathlib_erfc.py; codegen/cuda/render.py); acosh, logaddexp, logaddexp2,
xlogy, xlog1py, entr and logit are written with functions that exist (exp, log1p, log, sqrt,
pow, max, select), and relu and threshold_backward are selects. Composites built on these
(sinh, asinh, sinc, logit, ...) are in math_composites.py.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .. import api
from .. import elementwise as ew
from ..autocast import PROMOTE, autocast_op, float32_inside
from ..complex_rules import conj
from ..dtype_rules import promoted_dtype, rule_float
from ..limited_rules import UNSIGNED, refuse_limited
from ..registry import Elementwise, bind, define_op, share_node
from ..shape_rules import broadcast_shapes, broadcast_with_attrs
from . import native_math

# torch's names of the scalar types, as its "not implemented for" errors print them.
SCALAR_TYPE_NAMES = dtypes.SCALAR_TYPE_NAMES


# The gradients of asin, acos and acosh use it; torch.rsqrt is this one (read from composite.py).
@float32_inside()
def rsqrt(x):
    """Elementwise reciprocal square root, `1 / sqrt(x)`."""
    refuse_limited("rsqrt_cpu", x, taken=UNSIGNED)
    return 1 / ew.sqrt(x)


def not_implemented(kernel: str, dtype) -> NotImplementedError:
    """torch's error for a kernel that has no loop for `dtype`."""
    return NotImplementedError(f'"{kernel}" not implemented for '
                               f"'{SCALAR_TYPE_NAMES[dtype.name]}'")


def no_forward_ad(op: str) -> NotImplementedError:
    """torch's error for forward AD through an op that torch gives no forward derivative
    (for the inputs autojit has none for either: igamma's and zeta's first)."""
    return NotImplementedError(
        f"Trying to use forward AD with {op} that does not support it because it has not been "
        "implemented yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/"
        "pytorch/issues/new?template=feature-request.yml so that we can prioritize its "
        "implementation or submit a PR adding the implementation to derivatives.yaml")


def tensor_argument(value, function: str, parameter: str, position: int):
    """`value` where torch's signature takes a Tensor only: NumPy arrays are converted, Python
    numbers refused with torch's TypeError."""
    value = ew.operand(value, function)
    if not isinstance(value, Tensor):
        raise TypeError(f"{function}(): argument '{parameter}' (position {position}) must be "
                        f"Tensor, not {type(value).__name__}")
    return value


def no_matching_form(name: str, args: tuple, forms: tuple) -> TypeError:
    """torch's argument parser's error for a call matching none of an op's forms."""
    got = ", ".join("Tensor" if isinstance(value, Tensor) else type(value).__name__
                    for value in args)
    listed = "".join(f" * ({form})\n" for form in forms)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{listed}")


def tensor_parameters(function, name: str, parameters: tuple, method: bool = False):
    """`function(x, y)` refusing a Python number in `parameters` (of "input", "other") with
    torch's TypeError, as tensor_argument does; `method`: the Tensor method, whose self is not
    counted among the positions torch's message names. Where only input must be a Tensor
    (torch's comparisons have a Number form for other), the error is torch's for a call that
    matches none of the forms."""
    positions = tuple(("input", "other").index(parameter) for parameter in parameters)

    @functools.wraps(function)
    def checked(*args, **kwargs):
        for position in positions:
            if position < len(args) and not isinstance(args[position], Tensor):
                if parameters == ("input",) and not isinstance(ew.operand(args[0], name),
                                                               Tensor):
                    raise no_matching_form(name, args, (
                        "Tensor input, Tensor other, *, Tensor out = None",
                        "Tensor input, Number other, *, Tensor out = None"))
                tensor_argument(args[position], name, ("input", "other")[position],
                                position + (not method))
        return function(*args, **kwargs)

    return checked


def _define(name, arity, dtype, impl, vjp, saves, expression, exact=False, jvp=None,
            complex=None, limited=None, kernel=None,  # noqa: A002 - define_op's keyword
            saved_names=None):
    return define_op(name=name, arity=arity, shape=broadcast_shapes, dtype=dtype, impl=impl,
                     vjp=vjp, jvp=jvp, saves=saves, lowering=Elementwise(expression, exact),
                     complex=complex, limited=limited, kernel=kernel, saved_names=saved_names)


def _needs(ctx, index, rule, g):
    return rule(ctx, g) if ctx.needs_input_grad[index] else None


def _binary_vjp(rule_x, rule_y):
    return lambda ctx, g: (_needs(ctx, 0, rule_x, g), _needs(ctx, 1, rule_y, g))


def _zero_vjp(ctx, g):
    return tuple(ew.fill_like(g, 0) if needed else None for needed in ctx.needs_input_grad)


def _rule_except_bool(kernel):
    """Type promotion, refusing bool as torch's kernel does."""
    def rule(inputs, attrs):
        dtype = promoted_dtype(inputs)
        if dtype is dtypes.bool_:
            raise not_implemented(kernel, dtype)
        return dtype, dtype

    return rule


def _rule_floating(kernel):
    """Type promotion, refusing integer and bool results as torch's kernel does."""
    def rule(inputs, attrs):
        dtype = promoted_dtype(inputs)
        if not dtype.is_floating_point:
            raise not_implemented(kernel, dtype)
        return dtype, dtype

    return rule


# ---- rounding ---------------------------------------------------------------------------------

# torch's trunc and ceil of an integer tensor are copies of it, uint64's too.
TRUNC = _define("trunc", 1, _rule_except_bool("trunc_vml_cpu"), np.trunc, _zero_vjp, (),
                "trunc({0})", exact=True, jvp=ew.zero_jvp,
                complex="trunc is not supported for complex inputs", limited=UNSIGNED)
CEIL = _define("ceil", 1, _rule_except_bool("ceil_vml_cpu"), np.ceil, _zero_vjp, (),
               "ceil({0})", exact=True, jvp=ew.zero_jvp,
               complex="ceil is not supported for complex inputs", limited=UNSIGNED)


def trunc(input):  # noqa: A002 - torch's names
    """Elementwise rounding toward zero (integers unchanged); the gradient is zero."""
    return bind(TRUNC, (tensor_argument(input, "trunc", "input", 1),), {})


def ceil(input):  # noqa: A002
    """Elementwise ceiling: the smallest integer not below x (integers unchanged)."""
    return bind(CEIL, (tensor_argument(input, "ceil", "input", 1),), {})


# ---- signs and remainders ---------------------------------------------------------------------

def _copysign_magnitude_part(x, y, g, out):
    # torch: result / x, masked to 0 where x is 0 (the ratio is then 0 / 0); the division is
    # kept unguarded, as torch's, so the second derivative there is NaN as torch's is.
    return g * ew.where(x == 0, 0, out / x)


# The sign's tangent contributes nothing (torch's JVP leaves it out, and so gives no tangent
# where only the sign has one).
COPYSIGN = _define("copysign", 2, rule_float, np.copysign,
                   _binary_vjp(lambda ctx, g: _copysign_magnitude_part(*ctx.inputs, g, ctx.out),
                               lambda ctx, g: ew.fill_like(g, 0)),
                   ((0, 0), "out"), "copysign({0}, {1})", exact=True,
                   jvp=ew.binary_jvp(_copysign_magnitude_part, None))


def _integer_divisor_check(function):
    """A NumPy remainder that raises torch's error where an integer divisor is 0."""
    def impl(x, y):
        result = function(x, y)
        if result.dtype.kind in "iu" and result.size and not np.all(y):
            raise RuntimeError("ZeroDivisionError")
        return result

    return impl


def _fmod_divisor_part(x, y, g, out):
    # torch: -grad * div(x, y, rounding_mode="trunc"), whose own derivative is 0.
    return -g * trunc(x.detach() / y.detach())


FMOD = _define("fmod", 2, _rule_except_bool("fmod_cpu"), _integer_divisor_check(np.fmod),
               _binary_vjp(lambda ctx, g: g,
                           lambda ctx, g: _fmod_divisor_part(*ctx.inputs, g, None)),
               ((0, 1), 1), "fmod({0}, {1})", exact=True,
               jvp=ew.binary_jvp(lambda x, y, tx, out: tx, _fmod_divisor_part))
# torch's derivatives: the step is locally constant, so 1 for x and 0 for other.
NEXTAFTER = _define("nextafter", 2, _rule_floating("nextafter_cpu"), np.nextafter,
                    _binary_vjp(lambda ctx, g: g, lambda ctx, g: ew.fill_like(g, 0)), (),
                    "nextafter({0}, {1})", exact=True,
                    jvp=ew.binary_jvp(lambda x, y, tx, out: tx, None))


def copysign(input, other):  # noqa: A002
    """Elementwise magnitude of x with the sign of y (a float result; `other` may be a number);
    the gradient flows to x only."""
    return bind(COPYSIGN, (tensor_argument(input, "copysign", "input", 1),
                           ew.operand(other, "copysign")), {})


def fmod(input, other):  # noqa: A002
    """Elementwise C remainder of x / y, truncated division: the sign of the dividend."""
    return bind(FMOD, (tensor_argument(input, "fmod", "input", 1), ew.operand(other, "fmod")),
                {})


def nextafter(input, other):  # noqa: A002
    """Elementwise next representable value after x toward y (floating dtypes; not
    differentiable)."""
    return bind(NEXTAFTER, (tensor_argument(input, "nextafter", "input", 1),
                            tensor_argument(other, "nextafter", "other", 2)), {})


# ---- inverse trigonometric functions, hypot, erfc ---------------------------------------------

# Holomorphic on complex tensors: the VJPs multiply by the derivative's conjugate (conj is
# nothing on real values), the JVPs by the derivative (docs/notes/complex.md).
ATAN = _define("atan", 1, rule_float, np.arctan,
               lambda ctx, g: (g / conj(ctx.inputs[0] * ctx.inputs[0] + 1),), (0,),
               "atan({0})", jvp=lambda inputs, tangents, out, attrs: (
                   tangents[0] / (inputs[0] * inputs[0] + 1)), complex=True,
               kernel="atan_vml_cpu")
ASIN = _define("asin", 1, rule_float, np.arcsin,
               lambda ctx, g: (g * conj(rsqrt(-ctx.inputs[0] * ctx.inputs[0] + 1)),), (0,),
               "asin({0})", jvp=ew.unary_jvp(lambda x, out: rsqrt(-x * x + 1)), complex=True,
               kernel="asin_vml_cpu")
ACOS = _define("acos", 1, rule_float, np.arccos,
               lambda ctx, g: (g * -conj(rsqrt(-ctx.inputs[0] * ctx.inputs[0] + 1)),), (0,),
               "acos({0})", jvp=ew.unary_jvp(lambda x, out: -rsqrt(-x * x + 1)), complex=True,
               kernel="acos_vml_cpu")


def _atan2_grad(which):
    # torch: with recip = 1 / (y*y + x*x), 0 where that is infinite (at the origin, or where
    # the squares underflow), grad * x * recip for y and grad * -y * recip for x. The masked
    # reciprocal stays unguarded, so the second derivative at the origin is NaN, as torch's.
    def rule(ctx, g):
        y, x = ctx.inputs
        reciprocal = 1 / (y * y + x * x)
        reciprocal = ew.where(ew.abs(reciprocal) == math.inf, 0, reciprocal)
        return g * x * reciprocal if which == 0 else g * -y * reciprocal

    return rule


def _atan2_jvp(inputs, tangents, out, attrs):
    # torch's (x ty - y tx) / (y*y + x*x), unmasked: NaN at the origin, where the VJP gives 0.
    (y, x), (ty, tx) = inputs, tangents
    numerator = ew.tangent_sum(None if tx is None else -y * tx, None if ty is None else x * ty)
    return numerator / (y * y + x * x)


ATAN2 = _define("atan2", 2, rule_float, np.arctan2, _binary_vjp(_atan2_grad(0), _atan2_grad(1)),
                (0, 1), "atan2({0}, {1})", jvp=_atan2_jvp)
HYPOT = _define("hypot", 2, _rule_floating("hypot_cpu"), np.hypot,
                _binary_vjp(lambda ctx, g: g * ctx.inputs[0] / ctx.out,
                            lambda ctx, g: g * ctx.inputs[1] / ctx.out),
                ((0, 0), (1, 1), "out"), "hypot({0}, {1})",
                jvp=ew.binary_jvp(lambda x, y, tx, out: tx * x / out,
                                  lambda x, y, ty, out: ty * y / out))


def _erfc_impl(x):
    return np.vectorize(math.erfc, otypes=[x.dtype])(x) if x.size else x.copy()


_MINUS_TWO_OVER_SQRT_PI = -2 / math.sqrt(math.pi)
ERFC = _define("erfc", 1, rule_float, _erfc_impl,
               lambda ctx, g: (_MINUS_TWO_OVER_SQRT_PI * ew.exp(-ctx.inputs[0] ** 2) * g,), (0,),
               "erfc({0})", jvp=lambda inputs, tangents, out, attrs: (
                   _MINUS_TWO_OVER_SQRT_PI * ew.exp(-inputs[0] ** 2) * tangents[0]))


# acosh: log(x + sqrt(x*x - 1)) as log1p(t + sqrt(2t + t*t)) with t = x - 1 (exact near 1),
# log(x) + ln 2 from 2**28 on (x*x - 1 rounds to x*x), and NaN below 1 as sqrt(x - 1) (the
# formula rounds to 0 for large negative x). A primitive rather than a composite for its
# gradient, torch's rsqrt(x*x - 1): inf at 1, where the composite's product rule gives inf * 0.
_ACOSH_T = "({0} - 1.0)"


def _acosh_derivative(x):
    # Off the real line the principal branch's derivative is 1 / (sqrt(z - 1) sqrt(z + 1)),
    # which 1 / sqrt(z^2 - 1) is only up to sign.
    if x._dtype.category == dtypes.COMPLEX:
        return rsqrt(x - 1) * rsqrt(x + 1)
    return rsqrt(x ** 2 - 1)
ACOSH = _define(
    "acosh", 1, rule_float, np.arccosh,
    lambda ctx, g: (g * conj(_acosh_derivative(ctx.inputs[0])),), (0,),
    f"select({{0}} < 1.0, sqrt({_ACOSH_T}), select({{0}} >= 268435456.0, "
    f"log({{0}}) + {math.log(2)!r}, "
    f"log1p({_ACOSH_T} + sqrt(2.0 * {_ACOSH_T} + {_ACOSH_T} * {_ACOSH_T}))))",
    jvp=ew.unary_jvp(lambda x, out: _acosh_derivative(x)), complex=True)


def _rule_relu(inputs, attrs):
    dtype = promoted_dtype(inputs)
    if dtype is dtypes.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return dtype, dtype


# Set by codegen (codegen/cpu/eager_select.py's `run`, installed by codegen/__init__.py):
# NATIVE(name, arrays, threshold) -> relu or threshold_backward of C-contiguous float arrays
# of one dtype and shape as one native loop, the bits of the NumPy forms below, or None.
NATIVE = None
_NATIVE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _native_select(name: str, arrays: tuple, threshold: float = 0.0):
    first = arrays[0]
    if NATIVE is None or first.size < native_math.MIN_ELEMENTS or \
            any(array.__class__ is not np.ndarray or not array.flags.c_contiguous or
                array.dtype != first.dtype or array.shape != first.shape for array in arrays) \
            or first.dtype not in _NATIVE_FLOATS:
        return None
    return NATIVE(name, list(arrays), threshold)


def _relu_impl(x):
    # torch's clamp_min(x, 0): only values below zero are replaced, so -0.0 and NaN stay
    # (the select's branchless path on large arrays; one native loop on large float arrays).
    found = _native_select("relu", (x,))
    return ew.WHERE.impl(np.less(x, 0), 0, x) if found is None else found


def _threshold_backward_impl(grad, x, threshold):
    # Laid out as the operands, as torch's kernel is (the select follows them).
    found = _native_select("threshold_backward", (grad, x), threshold)
    if found is not None:
        return found
    below = np.less_equal(x, x.dtype.type(threshold))
    return ew.WHERE.impl(below, np.zeros((), grad.dtype), grad)


def threshold_backward(grad: Tensor, x: Tensor, threshold) -> Tensor:
    """torch's threshold_backward: 0 where x is at most the threshold, else grad (NaN passes
    it). relu's gradient (on its result) and threshold's (on its input)."""
    return bind(THRESHOLD_BACKWARD, (grad, x), {"threshold": float(threshold)})


# A primitive with torch's derivatives rather than a `where` on a comparison: its derivative in
# x is zeros, so a gradient taken with create_graph depends on x (requires grad) and a second
# derivative in x alone is torch's zeros, where a select on a bool condition gives none.
THRESHOLD_BACKWARD = define_op(
    name="threshold_backward", arity=2, shape=broadcast_with_attrs, dtype=rule_float,
    impl=_threshold_backward_impl,
    vjp=lambda ctx, u: (threshold_backward(u, ctx.inputs[1], ctx.attrs["threshold"])
                        if ctx.needs_input_grad[0] else None,
                        ew.fill_like(u, 0) if ctx.needs_input_grad[1] else None),
    saves=(1,), lowering=Elementwise("select({1} <= {threshold}, 0, {0})", exact=True),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else (
        threshold_backward(tangents[0], inputs[1], attrs["threshold"])),
    saved_names={"self": 1})


# A primitive rather than `where(x <= 0, 0, x)`, which gives +0.0 for -0.0, or
# `where(x < 0, 0, x)`, which passes the gradient at 0: torch's value and gradient test
# differently. The gradient is torch's threshold_backward on the result: nothing flows where it
# is at most 0 (x at 0 or -0.0, and below), the whole gradient through NaN.
RELU = _define("relu", 1, _rule_relu, _relu_impl,
               lambda ctx, g: (threshold_backward(g, ctx.out, 0),),
               ("out",), "select({0} < 0, 0, {0})", exact=True,
               jvp=lambda inputs, tangents, out, attrs: threshold_backward(tangents[0], out, 0),
               complex="clamp is not supported for complex types", kernel="clamp_min_scalar_cpu")


def _unary(op, doc):
    def function(input):  # noqa: A002 - torch's names
        return bind(op, (tensor_argument(input, op.name, "input", 1),), {})

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = doc
    return function


relu = _unary(RELU, "Elementwise rectified linear unit, `max(x, 0)`: 0 below zero and x "
              "elsewhere, -0.0 and NaN included; the gradient is 0 where the result is at most "
              "0.")
atan = _unary(ATAN, "Elementwise arctangent, in (-pi/2, pi/2).")
asin = _unary(ASIN, "Elementwise arcsine, in [-pi/2, pi/2] (NaN outside [-1, 1]).")
acos = _unary(ACOS, "Elementwise arccosine, in [0, pi] (NaN outside [-1, 1]).")
acosh = _unary(ACOSH, "Elementwise inverse hyperbolic cosine (NaN below 1), without "
                      "cancellation near 1.")
erfc = _unary(ERFC, "Elementwise complementary error function, `1 - erf(x)`, accurate where "
                    "erf is near 1.")


@autocast_op(cuda=PROMOTE)
def atan2(input, other):  # noqa: A002
    """Elementwise angle of the point (x=other, y=input), in [-pi, pi], by the signs of both."""
    return bind(ATAN2, (tensor_argument(input, "atan2", "input", 1),
                        tensor_argument(other, "atan2", "other", 2)), {})


def hypot(input, other):  # noqa: A002
    """Elementwise `sqrt(x*x + y*y)` without overflow or underflow (floating dtypes)."""
    return bind(HYPOT, (tensor_argument(input, "hypot", "input", 1),
                        tensor_argument(other, "hypot", "other", 2)), {})


# ---- logaddexp, logaddexp2, xlogy ------------------------------------------------------------

# Equal infinities give themselves (their difference is NaN); otherwise the larger plus the
# log1p of the exponential of minus the distance, as torch computes it.
_LOGADDEXP = ("select(({0} == {1}) && isnan({0} - {1}), {0}, "
              "max({0}, {1}) + LOG1P_OF_DISTANCE)")


def complex_logaddexp(x, y):
    """torch's complex log(e^x + e^y) on NumPy arrays: the operand of the larger real part plus
    the log1p of the exponential of the difference; NaN where either part of the other is NaN,
    the other where both real parts are -inf, log(e^x + e^y) where both are +inf."""
    x, y = np.broadcast_arrays(x, y)
    first = x.real >= y.real
    larger, smaller = np.where(first, x, y), np.where(first, y, x)
    with np.errstate(all="ignore"):
        result = np.log1p(np.exp(smaller - larger)) + larger
        infinite = np.isinf(smaller.real) & (smaller.real == larger.real)
        result = np.where(infinite, np.where(
            smaller.real < 0, smaller, np.log(np.exp(smaller) + np.exp(larger))), result)
    nan = np.isnan(smaller.real) | np.isnan(smaller.imag)
    return np.where(nan, np.array(complex(np.nan, np.nan), x.dtype), result).astype(x.dtype)


def _logaddexp_impl(x, y):
    if np.iscomplexobj(x) or np.iscomplexobj(y):
        return complex_logaddexp(x, y)
    return np.logaddexp(x, y)


def _rule_inexact(kernel):
    """Type promotion, refusing integer and bool results (not complex ones) as torch's kernel
    does."""
    def rule(inputs, attrs):
        dtype = promoted_dtype(inputs)
        if not (dtype.is_floating_point or dtype.is_complex):
            raise not_implemented(kernel, dtype)
        return dtype, dtype

    return rule


# The derivative is holomorphic: the VJPs divide by its conjugate (torch's formula).
LOGADDEXP = _define(
    "logaddexp", 2, _rule_inexact("logaddexp_cpu"), _logaddexp_impl,
    _binary_vjp(lambda ctx, g: g / conj(1 + ew.exp(ctx.inputs[1] - ctx.inputs[0])),
                lambda ctx, g: g / conj(1 + ew.exp(ctx.inputs[0] - ctx.inputs[1]))),
    (0, 1), _LOGADDEXP.replace("LOG1P_OF_DISTANCE", "log1p(exp(-abs({0} - {1})))"),
    jvp=ew.binary_jvp(lambda x, y, tx, out: tx / (1 + ew.exp(y - x)),
                      lambda x, y, ty, out: ty / (1 + ew.exp(x - y))), complex=True)
LOGADDEXP2 = _define(
    "logaddexp2", 2, _rule_floating("logaddexp2_cpu"), np.logaddexp2,
    _binary_vjp(lambda ctx, g: g / (1 + ew.pow(2.0, ctx.inputs[1] - ctx.inputs[0])),
                lambda ctx, g: g / (1 + ew.pow(2.0, ctx.inputs[0] - ctx.inputs[1]))),
    (0, 1), _LOGADDEXP.replace(
        "LOG1P_OF_DISTANCE", f"log1p(pow(2.0, -abs({{0}} - {{1}}))) * {1 / math.log(2)!r}"),
    jvp=ew.binary_jvp(lambda x, y, tx, out: tx / (1 + ew.pow(2.0, y - x)),
                      lambda x, y, ty, out: ty / (1 + ew.pow(2.0, x - y))))


def _xlogy_impl(x, y):
    # torch: NaN where y is NaN, else 0 where x is 0, else x log y.
    with np.errstate(all="ignore"):
        product = np.multiply(x, np.log(y))
    return np.where(np.isnan(y), y, np.where(np.equal(x, 0), 0, product)).astype(product.dtype)


def _xlogy_x_part(x, y, g, out):
    # torch: xlogy(grad, y), 0 where x is 0 and y <= 0.
    return ew.where((x == 0) & (y <= 0), 0, xlogy(g, y))


XLOGY = _define("xlogy", 2, rule_float, _xlogy_impl,
                _binary_vjp(lambda ctx, g: _xlogy_x_part(*ctx.inputs, g, None),
                            lambda ctx, g: g * ctx.inputs[0] / ctx.inputs[1]),
                (0, 1), "select(isnan({1}), {1}, select({0} == 0, 0, {0} * log({1})))",
                jvp=ew.binary_jvp(_xlogy_x_part, lambda x, y, ty, out: ty * x / y))


def logaddexp(input, other):  # noqa: A002
    """Elementwise `log(e^x + e^y)` without overflow (floating dtypes)."""
    return bind(LOGADDEXP, (tensor_argument(input, "logaddexp", "input", 1),
                            tensor_argument(other, "logaddexp", "other", 2)), {})


def logaddexp2(input, other):  # noqa: A002
    """Elementwise `log2(2^x + 2^y)` without overflow (floating dtypes)."""
    return bind(LOGADDEXP2, (tensor_argument(input, "logaddexp2", "input", 1),
                             tensor_argument(other, "logaddexp2", "other", 2)), {})


def xlogy(input, other):  # noqa: A002
    """Elementwise `x * log(y)`, 0 where x is 0 (unless y is NaN); either may be a number."""
    x, y = ew.operand(input, "xlogy"), ew.operand(other, "xlogy")
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        raise TypeError(f"xlogy(): expected a Tensor argument, got {type(x).__name__} and "
                        f"{type(y).__name__}")
    return bind(XLOGY, (x, y), {})


# ---- torch.special's xlog1py and entr ---------------------------------------------------------

def _xlog1py_impl(x, y):
    # torch: NaN where y is NaN, else 0 where x is 0, else x log1p(y).
    with np.errstate(all="ignore"):
        product = np.multiply(x, np.log1p(y))
    return np.where(np.isnan(y), y, np.where(np.equal(x, 0), 0, product)).astype(product.dtype)


def _xlog1py_x_part(x, y, g, out):
    # torch: xlog1py(grad, y), 0 where x is 0 and y <= -1.
    return ew.where((x == 0) & (y <= -1), 0, xlog1py(g, y))


XLOG1PY = _define("xlog1py", 2, rule_float, _xlog1py_impl,
                  _binary_vjp(lambda ctx, g: _xlog1py_x_part(*ctx.inputs, g, None),
                              lambda ctx, g: g * ctx.inputs[0] / (ctx.inputs[1] + 1)),
                  (0, 1), "select(isnan({1}), {1}, select({0} == 0, 0, {0} * log1p({1})))",
                  jvp=ew.binary_jvp(_xlog1py_x_part, lambda x, y, ty, out: ty * x / (y + 1)))

_XLOG1PY_SIGNATURES = (
    " * (Tensor input, Tensor other, *, Tensor out = None)\n"
    " * (Number self, Tensor other, *, Tensor out = None)\n"
    " * (Tensor input, Number other, *, Tensor out = None)\n")


def xlog1py(input, other):  # noqa: A002
    """Elementwise `x * log1p(y)`, 0 where x is 0 (unless y is NaN); either may be a number
    (torch.special.xlog1py)."""
    kinds = (Tensor, np.ndarray, np.generic, int, float)
    if not (isinstance(input, kinds) and isinstance(other, kinds)) or not (
            isinstance(input, Tensor) or isinstance(other, Tensor)):
        raise TypeError(f"special_xlog1py() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}), but expected one "
                        f"of:\n{_XLOG1PY_SIGNATURES}")
    x, y = ew.operand(input, "xlog1py"), ew.operand(other, "xlog1py")
    return bind(XLOG1PY, (x, y), {})


def _entr_impl(x):
    # torch: x for NaN, -x log x above 0, 0 at 0, -inf below.
    with np.errstate(all="ignore"):
        positive = -x * np.log(x)
    result = np.where(x > 0, positive, np.where(x == 0, 0, np.where(np.isnan(x), x, -np.inf)))
    return result.astype(positive.dtype)


# torch's gradient, -(1 + log x): inf at 0 and NaN below 0, where a composite's `where` would
# give 0. The expression language has no infinity literal: -inf is written log(0.0).
ENTR = _define("entr", 1, rule_float, _entr_impl,
               lambda ctx, g: (-g * (1 + ew.log(ctx.inputs[0])),), (0,),
               "select({0} > 0, -{0} * log({0}), "
               "select({0} == 0, 0, select(isnan({0}), {0}, log(0.0))))",
               jvp=lambda inputs, tangents, out, attrs: -tangents[0] * (1 + ew.log(inputs[0])))


def entr(input):  # noqa: A002
    """Elementwise entropy term `-x * log(x)`: 0 at 0, -inf below 0 (torch.special.entr)."""
    return bind(ENTR, (tensor_argument(input, "special_entr", "input", 1),), {})


# ---- logit ------------------------------------------------------------------------------------

def _logit_part(x, g):
    # torch's logit_backward: grad / (x (1 - x)), NaN outside [0, 1].
    return ew.where((x < 0) | (x > 1), math.nan, g / (x * (1 - x)))


LOGIT = _define("logit", 1, rule_float, lambda x: np.log(x / (1 - x)),
                lambda ctx, g: (_logit_part(ctx.inputs[0], g),), (0,), "log({0} / (1 - {0}))",
                jvp=lambda inputs, tangents, out, attrs: _logit_part(inputs[0], tangents[0]),
                saved_names={"self": 0, "eps": lambda node, saved, raw: None})


def logit(input, eps=None):  # noqa: A002
    """Elementwise log-odds `log(p / (1 - p))`; with `eps`, p is first clamped to
    [eps, 1 - eps] (no gradient outside), the clamp and logit under torch's one node
    LogitBackward0, which shows eps and the input."""
    x = tensor_argument(input, "logit", "input", 1)
    if eps is None:
        return bind(LOGIT, (x,), {})
    if not x.dtype.is_floating_point:
        x = x.to(dtypes.get_default_dtype())
    result = bind(LOGIT, (api.clamp(x, eps, 1 - eps),), {})
    if result.grad_fn is None:
        return result
    return share_node((result,), (x,), "LogitBackward0", {"eps": float(eps), "self": x})[0]
