"""Elementwise composites of the math family: sinh, cosh, asinh, atanh, sinc, frac, heaviside,
degree conversions, lerp, addcmul, addcdiv and ndtr; and the `alpha=` forms of add and sub,
with rsub.

Written from primitives (elementwise/__init__.py, math_primitives.py), so they fuse, differentiate
twice and run on CUDA with no rules of their own. Each is an accurate formula, not the
textbook one: sinh from expm1 near 0, the inverse hyperbolic functions from log1p, and no
intermediate that overflows before the result does. A formula valid for x >= 0 is applied to
|x| written as where(x < 0, -x, x), whose derivative at 0 is 1 (abs's would be 0), and the
branch a `where` does not select is fed an argument inside its domain, so that its zero
gradient is never 0 * inf = NaN.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .. import elementwise as ew
from ..autocast import PROMOTE, autocast_op, float32_inside
from ..dtype_rules import promoted_dtype
from ..limited_rules import COMPLEX32, refuse_limited
from .math_primitives import erfc, not_implemented, tensor_argument, trunc

_LN2 = math.log(2.0)
# asinh of arguments at least this large is log(2x): x*x + 1 rounds to x*x.
_LARGE = 2.0 ** 28


def float_input(x, function: str) -> Tensor:
    """x as a tensor of a floating or complex dtype (integers and bools become the default
    float); complex32 is torch's error, naming the function's kernel ("sinh_cpu")."""
    x = tensor_argument(x, function, "input", 1)
    if x.dtype is dtypes.complex32:
        raise not_implemented(f"{function}_cpu", x.dtype)
    return x if x.dtype.category >= dtypes.FLOATING else x.to(dtypes.get_default_dtype())


def _magnitude(x: Tensor):
    """(x < 0, |x|) with |x| = where(x < 0, -x, x): its derivative at 0 is 1."""
    negative = x < 0
    return negative, ew.where(negative, -x, x)


def _odd(negative, magnitude):
    return ew.where(negative, -magnitude, magnitude)


# ---- hyperbolic functions --------------------------------------------------------------------

@float32_inside()
def sinh(input):  # noqa: A002 - torch's names
    """Elementwise hyperbolic sine; accurate near 0 (from expm1) and finite up to 710.47."""
    x = float_input(input, "sinh")
    if x.dtype.is_complex:  # no sign to split off: the definition
        return 0.5 * (ew.exp(x) - ew.exp(-x))
    negative, a = _magnitude(x)
    small = a < 1
    t = ew.expm1(ew.where(small, a, 0))
    near = 0.5 * (t + t / (t + 1))  # (e^a - e^-a) / 2 with e^a - 1 = t
    half = ew.exp(0.5 * a)  # e^a / 2 as (e^(a/2) / 2) e^(a/2): no early overflow
    far = (0.5 * half) * half - 0.5 * ew.exp(-a)
    return _odd(negative, ew.where(small, near, far))


@float32_inside()
def cosh(input):  # noqa: A002
    """Elementwise hyperbolic cosine, finite up to |x| = 710.47."""
    x = float_input(input, "cosh")
    if x.dtype.is_complex:
        return 0.5 * (ew.exp(x) + ew.exp(-x))
    _, a = _magnitude(x)
    half = ew.exp(0.5 * a)
    return (0.5 * half) * half + 0.5 * ew.exp(-a)


@float32_inside()
def asinh(input):  # noqa: A002
    """Elementwise inverse hyperbolic sine, `log(x + sqrt(x*x + 1))` without cancellation."""
    x = float_input(input, "asinh")
    if x.dtype.is_complex:
        return ew.log(x + ew.sqrt(x * x + 1))
    negative, a = _magnitude(x)
    large = a >= _LARGE
    near_argument = ew.where(large, 0, a)
    # a + a*a / (1 + sqrt(a*a + 1)), as a product so that -0 stays -0
    near = ew.log1p(near_argument * (1 + near_argument / (1 + ew.sqrt(
        near_argument * near_argument + 1))))
    far = ew.log(ew.where(large, a, 1)) + _LN2
    return _odd(negative, ew.where(large, far, near))


@float32_inside()
def atanh(input):  # noqa: A002
    """Elementwise inverse hyperbolic tangent, `(log1p(x) - log1p(-x)) / 2`; +-inf at +-1."""
    x = float_input(input, "atanh")
    return 0.5 * (ew.log1p(x) - ew.log1p(-x))


# ---- sinc, frac, heaviside, degrees -----------------------------------------------------------

@float32_inside()
def sinc(input):  # noqa: A002
    """Elementwise normalized sinc, `sin(pi x) / (pi x)`, 1 at 0."""
    x = float_input(input, "sinc")
    zero = x == 0
    product = math.pi * ew.where(zero, 1, x)
    return ew.where(zero, 1, ew.sin(product) / product)


def frac(input):  # noqa: A002
    """Elementwise fractional part, `x - trunc(x)`, with the sign of x (floating dtypes)."""
    x = tensor_argument(input, "frac", "input", 1)
    if not x.dtype.is_floating_point:
        raise not_implemented("frac_cpu", x.dtype)
    return x - trunc(x)


def heaviside(input, values):  # noqa: A002
    """Elementwise step function: 0 where x < 0, `values` where x == 0, 1 where x > 0 (and 0 at
    NaN, as torch); not differentiable."""
    refuse_limited("heaviside_cpu", input, values)
    x = tensor_argument(input, "heaviside", "input", 1)
    values = tensor_argument(values, "heaviside", "values", 2)
    if x.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if x.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    x, values = x.detach(), values.detach()
    return ew.where(x == 0, values, (x > 0).to(x.dtype))


def deg2rad(input):  # noqa: A002
    """Elementwise degrees to radians, `x * pi / 180`."""
    return _real_angle(input, "deg2rad") * (math.pi / 180)


def rad2deg(input):  # noqa: A002
    """Elementwise radians to degrees, `x * 180 / pi`."""
    return _real_angle(input, "rad2deg") * (180 / math.pi)


def _real_angle(input, function: str) -> Tensor:  # noqa: A002
    x = tensor_argument(input, function, "input", 1)
    if x.dtype.is_complex:
        raise RuntimeError(f"{function} is not supported for complex tensors.")
    return float_input(x, function)


def ndtr(input):  # noqa: A002
    """Elementwise standard normal CDF, `erfc(-x / sqrt(2)) / 2` (torch.special.ndtr)."""
    return 0.5 * erfc(float_input(input, "ndtr") * -math.sqrt(0.5))


# ---- lerp, addcmul, addcdiv ------------------------------------------------------------------

def _integral_scalar(value, dtype):
    """A float scalar meeting an integer result: torch truncates it to the integer dtype."""
    if dtype.category < dtypes.FLOATING and isinstance(value, float):
        return int(value)
    return value


@float32_inside(alike=True)
def lerp(input, end, weight):  # noqa: A002
    """Elementwise linear interpolation `input + weight * (end - input)`, computed from the
    nearer end as torch does (exact at weight 0 and 1); weight a number or a tensor. bfloat16
    and float16 operands are computed in float32 and rounded once, as torch's kernel does (a
    bfloat16 lerp rounded after each of its ops differed in 5% of the elements)."""
    start = tensor_argument(input, "lerp", "input", 1)
    end = tensor_argument(end, "lerp", "end", 2)
    if end.dtype is not start.dtype:
        raise RuntimeError(f"expected dtype {_c_name(start.dtype)} for `end` but got dtype "
                           f"{_c_name(end.dtype)}")
    weight = ew.operand(weight, "lerp")
    tensor_weight = isinstance(weight, Tensor)
    if tensor_weight and weight.ndim and weight.dtype is not start.dtype:
        raise RuntimeError(f"expected dtype {_c_name(start.dtype)} for `weight` but got dtype "
                           f"{_c_name(weight.dtype)}")
    if start.dtype.category < dtypes.FLOATING or start.dtype is dtypes.complex32:
        raise not_implemented("lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar",
                              start.dtype)
    difference = end - start
    if not tensor_weight:
        if abs(weight) < 0.5:
            return start + weight * difference
        return end - difference * (1 - weight)
    weight = weight.to(start.dtype)
    small = ew.abs(weight) < 0.5
    # Each branch reads the weight only where it is taken (0 and 1 elsewhere), so the branch
    # not taken gives no 0 * inf gradient: the weight's is end - start, as torch's.
    return ew.where(small, start + ew.where(small, weight, 0) * difference,
                    end - difference * (1 - ew.where(small, 1, weight)))


def _c_name(dtype) -> str:
    """How torch's lerp names a dtype in its messages (C++ type names)."""
    return dtypes.C_TYPE_NAMES[dtype.name]


@autocast_op(cuda=PROMOTE)
@float32_inside(alike=True)
def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """`input + value * tensor1 * tensor2`, elementwise with broadcasting."""
    refuse_limited("addcmul_cpu_out", input, tensor1, tensor2, taken=COMPLEX32)
    start = tensor_argument(input, "addcmul", "input", 1)
    first = tensor_argument(tensor1, "addcmul", "tensor1", 2)
    second = tensor_argument(tensor2, "addcmul", "tensor2", 3)
    value = _integral_scalar(value, dtypes.promote(dtypes.promote(start.dtype, first.dtype),
                                                   second.dtype))
    product = first * second if value == 1 else value * first * second
    return start + product


_INTEGER_ADDCDIV = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


@autocast_op(cuda=PROMOTE)
@float32_inside(alike=True)
def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """`input + value * tensor1 / tensor2`, elementwise with broadcasting (tensor1 and tensor2
    not both integers)."""
    start = tensor_argument(input, "addcdiv", "input", 1)
    first = tensor_argument(tensor1, "addcdiv", "tensor1", 2)
    second = tensor_argument(tensor2, "addcdiv", "tensor2", 3)
    if first.dtype.category < dtypes.FLOATING and second.dtype.category < dtypes.FLOATING:
        raise RuntimeError(_INTEGER_ADDCDIV)
    quotient = first / second if value == 1 else value * first / second
    return start + quotient


# ---- add, sub and rsub with alpha --------------------------------------------------------------

def _checked_alpha(alpha, dtype, function: str):
    """alpha as a Python number, with torch's checks against the result dtype."""
    if isinstance(alpha, Tensor) and alpha.numel() == 1:
        alpha = alpha.item()
    if isinstance(alpha, np.generic):
        alpha = alpha.item()
    if not isinstance(alpha, numbers.Number):
        raise TypeError(f"{function}(): argument 'alpha' must be Number, not "
                        f"{type(alpha).__name__}")
    if isinstance(alpha, bool) and dtype is not dtypes.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.category < dtypes.FLOATING and not isinstance(alpha, numbers.Integral):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if not isinstance(alpha, numbers.Real) and dtype.category != dtypes.COMPLEX:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    return alpha


def _scaled(x, y, alpha, function: str):
    """(x, alpha * y) with y in the result dtype of x and y, so that the product is computed
    in it, as torch's kernels compute `x + alpha * y`."""
    x, y = ew.operand(x, function), ew.operand(y, function)
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x, y = ew.numbers_operands(x, y, function)
    dtype = promoted_dtype((x, y))
    alpha = _checked_alpha(alpha, dtype, function)
    if not isinstance(y, Tensor):
        return x, y * alpha
    if dtype is dtypes.bool_:
        return x, ew.logical_and(y, bool(alpha))
    if y.dtype is not dtype:
        y = ew.cast(y, dtype)
    return x, y * alpha


def _is_one(alpha) -> bool:
    return alpha.__class__ is int and alpha == 1


_LOWER = (dtypes.bfloat16, dtypes.float16)


def _lower_scaled(x, y, alpha, function: str, subtract: bool):
    """`x + alpha * y` (or minus) of a bfloat16 or float16 result as torch's kernel computes
    it: in float32 from the operands and alpha rounded to that dtype, rounded once (the
    product and the sum rounded to bfloat16 each differed from torch's in a quarter of the
    elements: `p.add_(update, alpha=-lr)` of bfloat16 parameters); None for other dtypes or
    operands of another dtype with dims (a float32 result)."""
    if not (isinstance(x, Tensor) and x._dtype in _LOWER or
            isinstance(y, Tensor) and y._dtype in _LOWER):
        return None  # (the common case, read before any conversion: no such result)
    x, y = ew.operand(x, function), ew.operand(y, function)
    dtype = promoted_dtype((x, y))
    if dtype not in _LOWER or isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        return None
    for value in (x, y):
        if isinstance(value, Tensor) and value.ndim and value.dtype is not dtype:
            return None
    _checked_alpha(alpha, dtype, function)

    def wide(value):  # rounded to the dtype first, as torch converts a kernel's operands
        if isinstance(value, Tensor):
            return ew.cast(value if value.dtype is dtype else ew.cast(value, dtype),
                           dtypes.float32)
        return _rounded(value, dtype)

    scaled = wide(y) * _rounded(alpha, dtype)
    return ew.cast(wide(x) - scaled if subtract else wide(x) + scaled, dtype)


def _rounded(value, dtype) -> float:
    """A Python number rounded to bfloat16 or float16 (as a float)."""
    if dtype is dtypes.bfloat16:
        return float(dtypes.round_to_bfloat16(np.float32(value)))
    return float(np.float16(value))


def add(input, other, *, alpha=1):  # noqa: A002
    """`input + alpha * other`, elementwise with broadcasting; either may be a Python number
    (alpha an integer where the result is)."""
    if _is_one(alpha):
        return ew.add(input, other)
    lower = _lower_scaled(input, other, alpha, "add", False)
    if lower is not None:
        return lower
    return ew.add(*_scaled(input, other, alpha, "add"))


def sub(input, other, *, alpha=1):  # noqa: A002
    """`input - alpha * other`, elementwise with broadcasting; either may be a Python number
    (alpha an integer where the result is)."""
    if _is_one(alpha):
        return ew.sub(input, other)
    lower = _lower_scaled(input, other, alpha, "sub", True)
    if lower is not None:
        return lower
    return ew.sub(*_scaled(input, other, alpha, "sub"))


def rsub(input, other, *, alpha=1):  # noqa: A002
    """`other - alpha * input`: sub with its operands swapped (`input` a Tensor)."""
    start = tensor_argument(input, "rsub", "input", 1)
    if _is_one(alpha):
        return ew.sub(other, start)
    lower = _lower_scaled(other, start, alpha, "rsub", True)
    if lower is not None:
        return lower
    scaled_other, scaled = _scaled(other, start, alpha, "rsub")
    return ew.sub(scaled_other, scaled)
