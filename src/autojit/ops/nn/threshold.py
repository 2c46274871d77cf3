"""threshold as a primitive with torch's nodes, for the float32 and float64 calls of
nn/functional/activation.py (in other dtypes, and given a threshold or value with an imaginary
part, the composite there runs).

threshold(x, threshold, value) is `value` where x <= threshold, else x (NaN stays NaN); its
node is torch's ThresholdBackward0, which shows the input (`_saved_self`) and the threshold as
given (`_saved_threshold`: a Python bool, int, float or complex, as torch's Scalar reads back).
Its backward `threshold_backward(grad, x)` is 0 where x <= threshold, else grad, the
elementwise primitive relu's gradient is too (ops/elementwise/math_primitives.py), whose node
in a double backward is torch's ThresholdBackwardBackward0 (its derivative in grad is itself;
in x, zeros, as torch's). `as_number` converts a threshold or value as torch converts a Scalar
to the input's dtype. Both are selects (Elementwise, exact): eager's result is laid out as the
input, and a compiled step fuses them.
"""

from __future__ import annotations

import numpy as np

from ...tensor.tensor import Tensor
from .. import elementwise as ew
from ..dtype_rules import rule_first
from ..elementwise.math_primitives import threshold_backward
from ..registry import Elementwise, bind, define_op
from ..shape_rules import broadcast_with_attrs


def given_number(value):
    """A threshold or value as torch's Scalar holds it: a 0-d tensor read as its number."""
    if isinstance(value, Tensor):
        return value.item()
    return value


def as_number(value, floating: bool):
    """A given number as torch converts it to the input's dtype: a complex number with no
    imaginary part is its real part (else torch's error), an integer input takes int(). A
    0-d tensor for a floating input stays a tensor (compared as one, traced too)."""
    if isinstance(value, Tensor) and floating and not value.dtype.is_complex:
        return value
    value = given_number(value)
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError("value cannot be converted to type "
                               f"{'float' if floating else 'int64_t'} without overflow")
        value = value.real
    return value if floating else int(value)


# ---- the eager routines ------------------------------------------------------------------------

def _threshold_impl(x: np.ndarray, threshold, value) -> np.ndarray:
    kind = x.dtype.type
    below = np.less_equal(x, kind(as_number(threshold, True)))
    return ew.WHERE.impl(below, kind(as_number(value, True)), x)


# ---- the primitives ----------------------------------------------------------------------------

def _threshold_gradient(grad, x, threshold):
    return threshold_backward(grad, x, as_number(threshold, True))


THRESHOLD = define_op(
    name="threshold", arity=1, shape=broadcast_with_attrs, dtype=rule_first,
    impl=_threshold_impl,
    vjp=lambda ctx, g: (_threshold_gradient(g, ctx.inputs[0], ctx.attrs["threshold"]),),
    saves=(0,), lowering=Elementwise("select({0} <= {threshold}, {value}, {0})", exact=True),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else (
        _threshold_gradient(tangents[0], inputs[0], attrs["threshold"])),
    saved_names={"self": 0})


def real_numbers(threshold, value) -> bool:
    """Whether the threshold and value are real numbers, as the primitive's expression reads
    them (a complex one with no imaginary part too, as its real part); the composite raises
    torch's error for the others."""
    return all(not isinstance(number, complex) or number.imag == 0
               for number in (given_number(threshold), given_number(value)))


def threshold(x: Tensor, threshold, value) -> Tensor:
    """threshold of a float32 or float64 tensor, for nn/functional/activation.py: the
    threshold and value kept as given (torch's node shows the threshold's type)."""
    return bind(THRESHOLD, (x,), {"threshold": given_number(threshold),
                                  "value": given_number(value)})
