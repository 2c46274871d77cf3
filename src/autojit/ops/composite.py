"""Composite ops: written from primitives, so they need no shape, VJP or kernel rules.

Autograd, double backward, tracing and fusion all come from the primitives these expand to.
Where a naive formula would overflow or produce 0 * inf in its gradient, the stable form is
spelled out here (softplus, logsumexp, norm).
"""

from __future__ import annotations

import math

from ..tensor import dtypes
from ..tensor.tensor import Tensor
from ..tensor.type_info import finfo
from . import elementwise as ew
from .autocast import FP32, autocast_op, float32_inside
from .dtype_rules import promoted_dtype
from .elementwise import clamp_numbers
from .elementwise.math_primitives import rsqrt  # noqa: F401 - torch.rsqrt, from here
from .limited_rules import UNSIGNED, refuse_limited
from .linalg import vector_norm
from .nn import activations
from .reduction import _NO_DIM, amax, extreme, mean_, sum_
from .shape_rules import normalize_dims

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

# ---- elementwise ------------------------------------------------------------------------------


def square(x):
    """Elementwise square, `x * x` (bools give int64, as torch's pow)."""
    if isinstance(x, Tensor) and x.dtype is dtypes.bool_:
        x = x.to(dtypes.int64)
    refuse_limited("pow", x)  # torch's square is pow(x, 2)
    return x * x


def round(x, *, decimals: int = 0):  # noqa: A001 - torch's name
    """Elementwise rounding to the nearest integer, halves to even (torch.round); with
    `decimals`, to that many decimal places.

    Integer tensors are returned unchanged (bools have no rounding, as in torch). The gradient
    is zero.
    """
    if x.dtype.is_complex:
        raise NotImplementedError("\"round_cpu\" not implemented for "
                                  f"'{dtypes.scalar_type_name(x.dtype)}'" if decimals else
                                  "\"round_vml_cpu\" not implemented for "
                                  f"'{dtypes.scalar_type_name(x.dtype)}'")
    if not x.dtype.is_floating_point:
        if decimals or x.dtype is dtypes.bool_:
            # torch's kernel of decimals=0 is another one (round_vml), which has no bool loop
            kernel = "round_cpu" if decimals else "round_vml_cpu"
            raise NotImplementedError(f'"{kernel}" not implemented for '
                                      f"'{dtypes.scalar_type_name(x.dtype)}'")
        return ew.clone(x)
    if decimals > 0:
        scale = 10.0 ** decimals
        return round(x * scale) / scale
    if decimals < 0:
        # As torch: divide by the power of ten (exact), rather than multiply by its inverse,
        # which is not a float and moved float32 results by an ulp.
        scale = 10.0 ** -decimals
        return round(x / scale) * scale
    below = ew.floor(x)
    fraction = x - below
    # An exact half goes to the even neighbour: up when `below` is odd.
    odd = ew.remainder(below, 2) == 1
    up = (fraction > 0.5) | ((fraction == 0.5) & odd)
    return ew.where(up, below + 1, below)


def reciprocal(x):
    """Elementwise reciprocal, `1 / x` (a float result for integers)."""
    refuse_limited("reciprocal_cpu", x, taken=UNSIGNED)
    return 1 / x


def exp2(x):
    """Elementwise base-2 exponential, `2^x`."""
    # pow(2, x), not exp(x ln 2): the product's rounding error, up to |x ln 2| 2**-53, is
    # exp's argument's error, which made results up to 686 ulp off near the ends of the range.
    refuse_limited("exp2", x, taken=UNSIGNED)
    return ew.pow(2.0, x)


@float32_inside()
def log2(x):
    """Elementwise base-2 logarithm."""
    refuse_limited("log2_vml_cpu", x, taken=UNSIGNED)
    return _scaled_log(x, _LN2)


@float32_inside()
def log10(x):
    """Elementwise base-10 logarithm."""
    refuse_limited("log10_vml_cpu", x, taken=UNSIGNED)
    return _scaled_log(x, _LN10)


def _scaled_log(x, base_log: float):
    natural = ew.log(x)
    if natural.dtype.is_complex:
        # Each part divided on its own: a complex quotient by a real number would give log(0)'s
        # zero imaginary part as 0 * inf = NaN.
        from .complex_numbers import make_complex

        return make_complex(natural.real / base_log, natural.imag / base_log)
    return natural / base_log


def _floating_only(kernel: str, x) -> None:
    """torch's error for an activation whose kernel has no integer, bool or complex loop."""
    if isinstance(x, Tensor) and not x.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{dtypes.scalar_type_name(x.dtype)}'")


def tan(x):
    """Elementwise tangent (radians), `sin(x) / cos(x)`."""
    refuse_limited("tan_vml_cpu", x, taken=UNSIGNED)
    return ew.sin(x) / ew.cos(x)


@float32_inside()
def gelu(x, approximate: str = "none"):
    """Elementwise Gaussian error linear unit, `x * Phi(x)` (Phi the standard normal CDF);
    `approximate="tanh"` uses torch's tanh approximation."""
    _floating_only("GeluKernelImpl", x)
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + ew.tanh(inner))
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    if isinstance(x, Tensor):
        return activations.gelu_exact(x)
    return activations.gelu_composite(x)


@float32_inside()
def silu(x):
    """Elementwise sigmoid linear unit (swish), `x * sigmoid(x)`."""
    return x * ew.sigmoid(x)


@autocast_op(cuda=FP32)
@float32_inside()
def softplus(x, beta: float = 1.0, threshold: float = 20.0):
    """Elementwise `ln(1 + e^(beta x)) / beta`, x itself where `beta x > threshold`; exp never
    overflows.

    At beta x == threshold torch takes the curve for the value and the first derivative
    (sigmoid(threshold)) but gives 0 for the second: there the curve's input is held at the
    threshold and a linear term of slope sigmoid(threshold), zero at that point, carries the
    derivative (ops/nn/activations.py, whose softplus primitive computes it with torch's backward
    formulas).
    """
    _floating_only("softplus_cpu", x)
    if isinstance(x, Tensor):
        return activations.softplus_of(x, float(beta), float(threshold))
    return activations.softplus_composite(x, beta, threshold)


def _detached(value):
    return value.detach() if isinstance(value, Tensor) else value


def _clamp_kernel(low, high) -> str:
    """torch's kernel for clamp's bounds: numbers, tensors, or one of either."""
    if not isinstance(low, Tensor) and not isinstance(high, Tensor):
        return "clamp_scalar_cpu" if low is not None and high is not None else \
            "clamp_min_scalar_cpu" if low is not None else "clamp_max_scalar_cpu"
    if low is None or high is None:
        return "maximum_cpu" if high is None else "minimum_cpu"
    return "clamp_cpu"


def clamp(x, min=None, max=None):  # noqa: A002 - torch's names
    """Elementwise clamp into [min, max] (either bound a number, a tensor or None), with
    torch's gradients.

    The value is max(x, min) then min(., max): a NaN anywhere gives NaN and min > max gives
    max. x gets the gradient where min <= x <= max (never at a NaN), a tensor min where
    x < min < max, a tensor max where x > max or max < min; elsewhere (NaN, min == max with x
    below) nothing does, so the value there is computed from detached inputs.
    """
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    if x.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if x.dtype.limited:
        refuse_limited(_clamp_kernel(min, max), promoted_dtype(
            (x, *(bound for bound in (min, max) if bound is not None))))
    if x.dtype.category == dtypes.INTEGER:  # an int bound is converted to x's dtype, as a fill
        for bound in (min, max):
            if isinstance(bound, int):
                dtypes.check_fits(bound, x.dtype)
    elif x.dtype.category == dtypes.FLOATING:
        # torch converts a number bound to x's dtype and refuses one beyond its range
        for bound in (min, max):
            # (an int beyond int64's range raises OverflowError where it is read, as torch's)
            if (bound.__class__ is float and math.isfinite(bound) or bound.__class__ is int and
                    -2 ** 63 <= bound < 2 ** 63) and abs(bound) > finfo(x.dtype).max:
                raise RuntimeError(f"value cannot be converted to type "
                                   f"{dtypes.c_type_name(x.dtype)} without overflow")
    if clamp_numbers.takes(x, min, max):  # one primitive, eagerly (its module says when)
        return clamp_numbers.clamp_numbers(x, min, max)
    result = x.detach()
    inside = None
    if min is not None:
        result = ew.maximum(result, _detached(min))
        inside = x >= min
    if max is not None:
        result = ew.minimum(result, _detached(max))
        inside = x <= max if inside is None else inside & (x <= max)
    if isinstance(max, Tensor):
        takes_max = x > max if min is None else (x > max) | (max < min)
        # Where min is NaN and x > max, max gets the gradient but the value is NaN.
        upper = max
        if isinstance(min, Tensor) and min.dtype.is_floating_point:
            upper = max + ew.where(ew.isnan(min), math.nan, 0.0)
        elif isinstance(min, float) and math.isnan(min):
            upper = max + math.nan
        result = ew.where(takes_max, upper, result)
    if isinstance(min, Tensor):
        takes_min = x < min if max is None else (x < min) & (min < max)
        result = ew.where(takes_min, min, result)
    return ew.where(inside, x, result)


# ---- reductions -------------------------------------------------------------------------------


def _count(x: Tensor, dim) -> int:
    shape = x.shape
    count = 1
    for axis in normalize_dims(dim, x.ndim):
        count *= shape[axis]
    return count


@float32_inside()
def mean(x: Tensor, dim=_NO_DIM, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Mean of the elements over `dim` (all when None), keeping reduced dims with `keepdim`;
    floating dtypes only (`dtype` converts x first). Its node is torch's MeanBackward0
    (MeanBackward1 given a dim)."""
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.category < dtypes.FLOATING:
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(f"mean(): could not infer output dtype. {which} dtype must be either "
                           "a floating point or complex dtype. Got: "
                           f"{dtypes.scalar_type_name(x.dtype)}")
    return mean_(x, dim, keepdim)


@float32_inside()
def var(x: Tensor, dim=None, *, correction=1, keepdim: bool = False, unbiased=None) -> Tensor:
    """Variance over `dim` (all when None), dividing by N - `correction` (Bessel's correction,
    1 by default; `unbiased=False` means 0)."""
    if x.dtype.category < dtypes.FLOATING:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if isinstance(dim, bool):  # torch's var(input, unbiased) form
        dim, unbiased = None, dim
    if x.dtype is dtypes.complex32:  # torch's: the sum of its float16 parts' variances
        return var(x.real, dim, correction=correction, keepdim=keepdim, unbiased=unbiased) + \
            var(x.imag, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)
    if unbiased is not None:
        correction = 1 if unbiased else 0
    if correction is None:  # torch: None is the default correction
        correction = 1
    centered = x - mean(x, dim, keepdim=True)
    return sum_(squared_modulus(centered), dim, keepdim) / max(_count(x, dim) - correction, 0)


def squared_modulus(x: Tensor) -> Tensor:
    """x * x, or |x|^2 of a complex x (a real tensor): what variances and 2-norms sum."""
    if x.dtype.is_complex:
        return x.real * x.real + x.imag * x.imag
    return x * x


def _root_or_zero(total: Tensor, exponent: float) -> Tensor:
    """total ** exponent (exponent > 0) with gradient 0 where total is 0, as torch's std and
    norms give: a root's derivative at 0 is infinite, so zeros go through 1 ** exponent and
    are masked."""
    is_zero = total == 0
    safe = ew.where(is_zero, 1, total)
    return ew.where(is_zero, 0, ew.sqrt(safe) if exponent == 0.5 else safe ** exponent)


@float32_inside()
def std(x: Tensor, dim=None, *, correction=1, keepdim: bool = False, unbiased=None) -> Tensor:
    """Standard deviation over `dim` (all when None), the square root of `var`.

    Its gradient is 0 where the variance is 0 (a constant), as in torch.
    """
    return _root_or_zero(var(x, dim, correction=correction, keepdim=keepdim,
                             unbiased=unbiased), 0.5)


@autocast_op(cuda=FP32)
@float32_inside()
def norm(x: Tensor, p=2, dim=None, keepdim: bool = False) -> Tensor:
    """The p-norm over `dim` (all when None): 2 or "fro", 1, inf, -inf, 0 or any other p.

    The gradient at 0 is 0, as in torch.
    """
    if x.dtype.category < dtypes.FLOATING:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {dtypes.scalar_type_name(x.dtype)}")
    if p == "fro":
        p = 2
    if vector_norm.takes(x, p):  # torch's derivatives at zero (linalg/vector_norm.py)
        return vector_norm.p_norm(x, p, dim, keepdim)
    if p in ("fro", 2, 2.0):
        return _root_or_zero(sum_(squared_modulus(x), dim, keepdim), 0.5)
    if p == 1:
        return sum_(ew.abs(x), dim, keepdim)
    if p in (math.inf, "inf", -math.inf, "-inf"):
        return extreme(ew.abs(x), "max" if p in (math.inf, "inf") else "min", dim, keepdim)
    if p == 0:
        # The count of nonzeros; torch's gradient is 0, and the result still requires grad
        # (real for a complex x: the zeros are filled in the dtype of its modulus).
        zeros = ew.fill_like(ew.abs(x) if x.dtype.is_complex else x, 0)
        return sum_(ew.where(x != 0, 1, zeros), dim, keepdim)
    powered = ew.abs(x) ** p
    if p < 1:
        # |x| ** p has an infinite slope at 0 for p < 1: torch gives such elements 0. They go
        # through 1 ** p, so that no infinity reaches the second derivative of the others; a
        # negative p keeps their value, inf (the sum is infinite and the norm 0).
        is_zero = x == 0
        powered = ew.where(is_zero, 0 if p > 0 else math.inf,
                           ew.where(is_zero, 1, ew.abs(x)) ** p)
    if p < 0:
        return sum_(powered, dim, keepdim) ** (1.0 / p)
    return _root_or_zero(sum_(powered, dim, keepdim), 1.0 / p)


def reduces_nothing(x: Tensor, dims: tuple) -> bool:
    """Whether one of `dims` of x has no entries (a symbolic extent never is 0: sizes 0 and 1
    are traced as constants), so a reduction over them has only its identity to give."""
    return any(x.shape[dim].__class__ is int and x.shape[dim] == 0 for dim in dims)


@autocast_op(cuda=FP32)
def logsumexp(x: Tensor, dim, keepdim: bool = False) -> Tensor:
    """`ln(sum(e^x))` over `dim`, computed around the maximum so it neither overflows nor
    underflows.

    Over no entries it is ln(0) = -inf, as in torch (the maximum of nothing is an error).
    """
    if x.dtype.category < dtypes.FLOATING:
        x = x.to(dtypes.get_default_dtype())
    if reduces_nothing(x, normalize_dims(dim, x.ndim)):
        result = ew.log(sum_(ew.exp(x), dim, keepdim=True))
        return result if keepdim else result.squeeze(normalize_dims(dim, x.ndim))
    # A complex x is shifted by the largest real part: only the modulus of e^x can overflow.
    peak = amax(x.real, dim, keepdim=True).detach()
    peak = ew.where(ew.isnan(peak) | (ew.abs(peak) == math.inf), 0, peak)
    total = sum_(ew.exp(x - peak), dim, keepdim=True)
    result = ew.log(total) + peak
    if not keepdim:
        result = result.squeeze(normalize_dims(dim, x.ndim))
    return result
