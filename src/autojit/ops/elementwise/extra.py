"""Elementwise composites beyond math_composites.py: div with torch's `rounding_mode`,
float_power, fmax and fmin, signbit, angle, ldexp and frexp, isin and positive.

Each is written from primitives (elementwise/__init__.py, math_primitives.py, sorting and
searching), so it fuses, compiles, runs on CUDA and differentiates twice with no rules of its own.
Where torch's result is an exact operation a formula could miss by one rounding (floor division,
frexp's exponent), the composite computes it exactly: floor division through the
floor_divide primitive (NumPy's algorithm, torch's), frexp's exponent from a log2 estimate
corrected by one step either way.
"""

from __future__ import annotations

import math
from collections import namedtuple

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .. import elementwise as ew
from ..complex_numbers import complex_angle
from ..dtype_rules import promoted_dtype
from ..limited_rules import refuse_limited
from ..registry import share_node
from .math_primitives import copysign, not_implemented, tensor_argument, trunc

frexp_return = namedtuple("frexp", ["mantissa", "exponent"])

# ---- division with a rounding mode ------------------------------------------------------------


def _type_name(value) -> str:
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _zero_gradient(result: Tensor, *operands) -> Tensor:
    """`result`, computed without history, connected to the operands that require grad with a
    zero gradient, as torch's DivBackward of a rounding mode gives: the link is the branch a
    `where` never selects, so no operand's value (inf, NaN, a zero divisor) reaches either the
    result or the gradient."""
    linked = [x for x in operands if isinstance(x, Tensor) and x.requires_grad]
    if not linked:
        return result
    link = linked[0] if len(linked) == 1 else linked[0] + linked[1]
    always = ew.fill_like(result, True).to(dtypes.bool_)
    return ew.where(always, result, link.to(result.dtype))


class _NotGiven:
    """div's default rounding_mode: none given (torch's div.Tensor overload, where a given one,
    None too, is div.Tensor_mode's). It reads as None in the signature."""

    def __repr__(self) -> str:
        return "None"


_NOT_GIVEN = _NotGiven()


def div(input, other, *, rounding_mode=_NOT_GIVEN):  # noqa: A002 - torch's names
    """Elementwise `x / y`; with `rounding_mode` "trunc" or "floor" the quotient rounded toward
    zero or down, in the operands' promoted dtype (integers stay integers), with a zero
    gradient. As in torch, a call given `rounding_mode` (even None) records a `DivBackward2`
    node, which shows it, one without it a `DivBackward0`."""
    if rounding_mode is _NOT_GIVEN:
        return ew.div(input, other)
    result = rounded_division(input, other, rounding_mode)
    if not isinstance(result, Tensor) or result.grad_fn is None:
        return result
    needs_other = isinstance(other, Tensor) and other.requires_grad
    saved = {"rounding_mode": rounding_mode, "self": input if needs_other else None,
             "other": other if isinstance(other, Tensor) else None}
    return share_node((result,), (input, other), "DivBackward2", saved)[0]


def rounded_division(input, other, rounding_mode=None):  # noqa: A002 - torch's names
    """div with a rounding mode (None: the true quotient), without div's own node."""
    if rounding_mode is None:
        return ew.div(input, other)
    if not isinstance(rounding_mode, str):
        raise TypeError(f"div() received an invalid combination of arguments - got "
                        f"({_type_name(input)}, {_type_name(other)}, rounding_mode="
                        f"{type(rounding_mode).__name__}), but expected one of:")
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    x, y = ew.operand(input, "div"), ew.operand(other, "div")
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x, y = ew.numbers_operands(x, y, "div")
    dtype = promoted_dtype((x, y))
    if dtype is dtypes.bool_ or dtype.limited:
        raise not_implemented(f"div_{rounding_mode}_cpu", dtype)
    values = [v.detach() if isinstance(v, Tensor) else v for v in (x, y)]
    if dtype.is_floating_point:
        if rounding_mode == "floor":
            quotient = ew.floor_divide(*values)
        else:
            quotient = trunc(ew.div(*values))
        return _zero_gradient(quotient.to(dtype), x, y)
    quotient = ew.floor_divide(*values)
    if rounding_mode == "floor":
        return quotient
    # Toward zero: one more than floor division where the exact quotient is negative and not
    # an integer.
    first, second = values
    inexact = ew.remainder(first, second) != 0
    negative = (first < 0) != (second < 0)
    return ew.where(inexact & negative, quotient + 1, quotient)


# ---- powers and extremes ---------------------------------------------------------------------

def float_power(input, exponent, *, out=None):  # noqa: A002
    """Elementwise `x ** y` in float64 (the operands are converted first)."""
    if out is not None:
        if isinstance(out, Tensor) and out.dtype is not dtypes.float64:
            raise RuntimeError(f"the output given to float_power has dtype "
                               f"{dtypes.SCALAR_TYPE_NAMES[out.dtype.name]} but the operation's "
                               "result requires dtype Double")
        from ..out_argument import write_result

        return write_result("float_power", out, float_power(input, exponent))
    x, y = ew.operand(input, "float_power"), ew.operand(exponent, "float_power")
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        raise TypeError("float_power(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    # float64, or complex128 where either operand is complex, as torch computes it
    complex_operands = any(v.dtype.is_complex if isinstance(v, Tensor) else isinstance(
        v, complex) for v in (x, y))
    wide = dtypes.complex128 if complex_operands else dtypes.float64
    x = x.to(wide) if isinstance(x, Tensor) else x
    y = y.to(wide) if isinstance(y, Tensor) else y
    return ew.pow(x, y)


def float_power_(self: Tensor, exponent) -> Tensor:
    """In-place float_power: x must be float64, the result's dtype."""
    if self.dtype is not dtypes.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{dtypes.SCALAR_TYPE_NAMES[self.dtype.name]} but the operation's "
                           "result requires dtype Double")
    from ..inplace import apply_inplace

    return apply_inplace(self, "float_power_", lambda source: float_power(source, exponent))


def fmax(input, other):  # noqa: A002
    """Elementwise maximum that ignores NaN: the other operand where one is NaN (NaN where
    both are); the gradient goes to x where x >= y or y is NaN, else to y."""
    x = tensor_argument(input, "fmax", "input", 1)
    y = tensor_argument(other, "fmax", "other", 2)
    refuse_limited("maximum_cpu", promoted_dtype((x, y)))  # torch's fmax of integers
    return ew.where((x >= y) | ew.isnan(y), x, y)


def fmin(input, other):  # noqa: A002
    """Elementwise minimum that ignores NaN: the other operand where one is NaN (NaN where
    both are); the gradient goes to x where x <= y or y is NaN, else to y."""
    x = tensor_argument(input, "fmin", "input", 1)
    y = tensor_argument(other, "fmin", "other", 2)
    refuse_limited("minimum_cpu", promoted_dtype((x, y)))
    return ew.where((x <= y) | ew.isnan(y), x, y)


# ---- signs and binary exponents --------------------------------------------------------------

def signbit(input):  # noqa: A002
    """Elementwise: whether the sign bit is set (True for -0.0 and a negative NaN), a bool
    tensor."""
    x = tensor_argument(input, "signbit", "input", 1).detach()
    if x.dtype.is_complex:
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if x.dtype is dtypes.bool_:
        return ew.fill_like(x, False)
    if x.dtype.limited:  # no sign bit, and no `<` kernel: torch's all False, as isnan gives
        return ew.isnan(x)
    if not x.dtype.is_floating_point:
        return x < 0
    return copysign(ew.fill_like(x, 1), x) < 0


def angle(input):  # noqa: A002
    """Elementwise argument of x as a complex number, in (-pi, pi]: for a real x, pi where it
    is negative, 0 otherwise (NaN for NaN), with a zero gradient."""
    x = tensor_argument(input, "angle", "input", 1)
    if x.dtype.is_complex:
        return complex_angle(x)
    x = x if x.dtype.is_floating_point else x.to(dtypes.get_default_dtype())
    value = ew.where(x.detach() < 0, math.pi, ew.fill_like(x.detach(), 0.0))
    value = ew.where(ew.isnan(x.detach()), x.detach(), value)
    return _zero_gradient(value, x)


def ldexp(input, other):  # noqa: A002
    """Elementwise `x * 2 ** y` (a floating result)."""
    x = tensor_argument(input, "ldexp", "input", 1)
    y = tensor_argument(other, "ldexp", "other", 2)
    return x * ew.pow(2.0, y)


def _scale_by_power_of_two(x: Tensor, exponent: Tensor) -> Tensor:
    """x * 2 ** exponent exactly, in two factors so that neither overflows where the product
    does not (a subnormal x and exponent up to 1074 + 53)."""
    half = ew.floor(exponent * 0.5)
    return x * ew.pow(2.0, half) * ew.pow(2.0, exponent - half)


def frexp(input, *, out=None):  # noqa: A002
    """(mantissa, exponent): x = mantissa * 2 ** exponent with 0.5 <= |mantissa| < 1 and an
    int32 exponent; 0, inf and NaN are their own mantissa with exponent 0. The mantissa's
    gradient is `2 ** -exponent`."""
    x = tensor_argument(input, "frexp", "input", 1)
    if not x.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    magnitude = ew.abs(x.detach())
    regular = (magnitude != 0) & (magnitude < math.inf)  # NaN is neither
    safe = ew.where(regular, magnitude, 1.0)
    # An estimate within one of the exponent, then one correction step either way.
    exponent = ew.floor(ew.log(safe.to(dtypes.float64)) / math.log(2.0)) + 1
    scaled = _scale_by_power_of_two(safe.to(dtypes.float64), -exponent)
    exponent = ew.where(scaled >= 1, exponent + 1, ew.where(scaled < 0.5, exponent - 1, exponent))
    exponent = ew.where(regular, exponent, 0.0)
    mantissa = _scale_by_power_of_two(x, (-exponent).to(x.dtype))
    mantissa = ew.where(regular, mantissa, x)
    result = frexp_return(mantissa, exponent.to(dtypes.int32))
    if out is not None:
        from ..out_argument import write_results

        result = frexp_return(*write_results("frexp", out, tuple(result),
                                             ("expected", "expected"), inputs=(x,)))
    return result


# ---- membership and identity -------------------------------------------------------------------

def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """Elementwise: whether each of `elements` is among `test_elements` (either may be a
    number), a bool tensor of elements' shape; `invert` negates it."""
    refuse_limited("isin_default_cpu", elements, test_elements)
    x = ew.operand(elements, "isin")
    test = ew.operand(test_elements, "isin")
    if not isinstance(x, Tensor) and not isinstance(test, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got "
                        f"({type(x).__name__}, {type(test).__name__}), but expected one of:")
    dtype = promoted_dtype((x, test))
    if dtype.is_complex:
        raise RuntimeError("Unsupported input type encountered for isin(): "
                           f"{dtypes.scalar_type_name(dtype)}")
    like = x if isinstance(x, Tensor) else test
    x = _as_tensor(x, dtype, like).detach()
    test = _as_tensor(test, dtype, like).detach().reshape(-1)
    flat = x.reshape(-1)
    if test.shape[0] < 10 * max(flat.shape[0], 1) ** 0.145:
        # torch's rule for a small test set: compare every pair.
        found = (flat.reshape(-1, 1) == test.reshape(1, -1)).any(-1)
    else:
        from ..indexing import gather
        from ..searching import searchsorted
        from ..sorting import sort

        ordered = sort(test).values
        position = searchsorted(ordered, flat).clamp(max=test.shape[0] - 1)
        found = gather(ordered, 0, position) == flat
    found = found.reshape(tuple(x.shape))
    return ew.logical_not(found) if invert else found


def _as_tensor(value, dtype, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value.to(dtype)
    from ...tensor.creation import tensor

    return tensor(value, dtype=dtype, device=like.device)


def positive(input: Tensor) -> Tensor:  # noqa: A002
    """x itself (`+x`); refused for bool tensors, as in torch."""
    if isinstance(input, Tensor) and input.dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input
