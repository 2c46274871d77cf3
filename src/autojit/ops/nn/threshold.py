"""threshold as a primitive with torch's nodes, for the eager CPU calls of
nn/functional/activation.py (float32 and float64; traced, and in other dtypes, the composite
there runs).

threshold(x, threshold, value) is `value` where x <= threshold, else x (NaN stays NaN); its
node is torch's ThresholdBackward0, which shows the input (`_saved_self`) and the threshold as
given (`_saved_threshold`: a Python bool, int, float or complex, as torch's Scalar reads back).
Its backward `threshold_backward(grad, x)` is 0 where x <= threshold, else grad, a primitive
too, whose node in a double backward is torch's ThresholdBackwardBackward0 (its derivative in
grad is itself; in x, zeros, as torch's). `as_number` converts a threshold or value as torch
converts a Scalar to the input's dtype. Each primitive lowers to its composite written here (a
Decomposition) should a trace meet one.
"""

from __future__ import annotations

import numpy as np

from ...tensor.creation import zeros_like
from ...tensor.tensor import Tensor
from .. import batching
from .. import elementwise as ew
from ..dtype_rules import rule_first, rule_float
from ..lowering import Decomposition
from ..registry import bind, define_op
from ..shape_rules import broadcast_shapes


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


# ---- the composites a trace runs ---------------------------------------------------------------

def _threshold_composite(x, threshold, value):
    return ew.where(x <= as_number(threshold, True), as_number(value, True), x)


def _threshold_backward_composite(grad, x, threshold):
    return ew.where(x <= as_number(threshold, True), 0, grad)


# ---- the eager routines ------------------------------------------------------------------------

def _threshold_impl(x: np.ndarray, threshold, value) -> np.ndarray:
    kind = x.dtype.type
    below = np.less_equal(x, kind(as_number(threshold, True)))
    return np.where(below, kind(as_number(value, True)), x)


def _threshold_backward_impl(grad: np.ndarray, x: np.ndarray, threshold) -> np.ndarray:
    below = np.less_equal(x, x.dtype.type(as_number(threshold, True)))
    return np.where(below, np.zeros((), grad.dtype), grad)


# ---- the primitives ----------------------------------------------------------------------------

def _threshold_backward(grad, x, threshold):
    return bind(THRESHOLD_BACKWARD, (grad, x), {"threshold": threshold})


THRESHOLD = define_op(
    name="threshold", arity=1, shape=broadcast_shapes, dtype=rule_first,
    impl=_threshold_impl,
    vjp=lambda ctx, g: (_threshold_backward(g, ctx.inputs[0], ctx.attrs["threshold"]),),
    saves=(0,), lowering=Decomposition(_threshold_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else (
        _threshold_backward(tangents[0], inputs[0], attrs["threshold"])),
    batch=batching.broadcasting_rule, saved_names={"self": 0})
THRESHOLD_BACKWARD = define_op(
    name="threshold_backward", arity=2, shape=broadcast_shapes, dtype=rule_float,
    impl=_threshold_backward_impl,
    vjp=lambda ctx, u: (_threshold_backward(u, ctx.inputs[1], ctx.attrs["threshold"])
                        if ctx.needs_input_grad[0] else None,
                        zeros_like(u) if ctx.needs_input_grad[1] else None),
    saves=(1,), lowering=Decomposition(_threshold_backward_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else (
        _threshold_backward(tangents[0], inputs[1], attrs["threshold"])),
    batch=batching.broadcasting_rule, saved_names={"self": 1})


def threshold(x: Tensor, threshold, value) -> Tensor:
    """threshold of a float32 or float64 CPU tensor, for nn/functional/activation.py: the
    threshold and value kept as given (torch's node shows the threshold's type)."""
    return bind(THRESHOLD, (x,), {"threshold": given_number(threshold),
                                  "value": given_number(value)})
