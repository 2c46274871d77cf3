"""clamp between Python numbers as one primitive, for eager CPU calls in float32 and float64
(ops/composite.py's clamp binds it there; traced, with tensor bounds, on other layouts and in
other dtypes the composite runs).

The composite is up to seven primitives (a detached copy, maximum, minimum, two comparisons, an
and, a select), each a dispatch and a node: a clamp of a 0-d tensor took 47 us where torch's
takes 2.6. torch has one kernel, clamp_scalar, and one node, ClampBackward1; so does this:

- the value: each bound converted to x's dtype, then min where x < min, max where the result
  is > max, x itself elsewhere (the composite's bits: -0.0 stays -0.0 at a bound of 0), NaN
  where x is NaN, max where min > max (a NaN bound takes the composite);
- the gradient: the upstream gradient where min <= x <= max, 0 elsewhere (NaN included),
  torch's clamp_backward, written in autojit ops so that it has derivatives of its own.

The primitive lowers to the composite here (a Decomposition) should a trace meet one.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.state import state
from .. import batching
from ..dtype_rules import rule_first
from ..lowering import Decomposition
from ..registry import bind, define_op
from ..shape_rules import broadcast_shapes
from . import maximum, minimum, where


def _inside(x, low, high):
    """(x >= low) & (x <= high), either bound None for no bound, as a tensor of bools."""
    inside = None if low is None else x >= low
    if high is not None:
        inside = x <= high if inside is None else inside & (x <= high)
    return inside


def _composite(x, *, min, max):  # noqa: A002 - torch's names
    result = x
    if min is not None:
        result = maximum(result, min)
    if max is not None:
        result = minimum(result, max)
    return where(_inside(x, min, max), x, result)


def _impl(x: np.ndarray, *, min, max) -> np.ndarray:  # noqa: A002
    # x itself where it lies inside [min, max]: -0.0 stays -0.0 at a bound of 0 (NumPy's
    # maximum gives 0.0 there), and NaN stays NaN (the comparisons are false for it).
    # Each bound in x's dtype (composite.clamp has refused one beyond its range).
    kind = x.dtype.type
    low = None if min is None else kind(min)
    high = None if max is None else kind(max)
    if x.ndim == 0:  # NumPy's scalars: a tenth of a ufunc call's time on a 0-d array
        value = x[()]
        if low is not None and value < low:
            value = low
        if high is not None and value > high:
            value = high
        return np.asarray(value, x.dtype)
    if low == 0 or high == 0:  # signed zeros: select
        result = x if low is None else np.where(np.less(x, low), low, x)
        return result if high is None else np.where(np.greater(result, high), high, result)
    # Elsewhere an element equal to a bound has the bound's bits, so maximum and minimum give
    # the same result in two passes.
    if low is None:
        return np.minimum(x, high)
    result = np.maximum(x, low)
    return result if high is None else np.minimum(result, high, out=result)


def _gradient(upstream, x, attrs):
    """The upstream gradient where min <= x <= max, else 0."""
    return where(_inside(x, attrs["min"], attrs["max"]), upstream, 0)


CLAMP_NUMBERS = define_op(
    name="clamp_numbers", arity=1, shape=broadcast_shapes, dtype=rule_first, impl=_impl,
    vjp=lambda ctx, g: (_gradient(g, ctx.inputs[0], ctx.attrs),), saves=(0,),
    lowering=Decomposition(_composite), grad_name="ClampBackward1",
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else _gradient(
        tangents[0], inputs[0], attrs),
    batch=batching.broadcasting_rule)


_DTYPES = (dtypes.float32, dtypes.float64)


def _number(bound) -> bool:
    # A NaN bound makes every element NaN (the composite's maximum and minimum propagate it).
    return bound is None or (bound.__class__ is float and bound == bound) or (
        bound.__class__ is int and -2 ** 63 <= bound < 2 ** 63)


def takes(x, low, high) -> bool:
    """Whether clamp(x, low, high) binds the primitive: eager (not traced), a C-contiguous
    float32 or float64 CPU tensor (the result is laid out row-major, as torch lays out a
    contiguous input's), and bounds that are Python numbers or None."""
    return state.tracer is None and x._dtype in _DTYPES and \
        x._payload.__class__ is np.ndarray and x._payload.flags.c_contiguous and \
        _number(low) and _number(high)


def clamp_numbers(x, low, high):
    """x clamped between the Python numbers (or None) `low` and `high`, for composite.clamp."""
    return bind(CLAMP_NUMBERS, (x,), {"min": low, "max": high})
