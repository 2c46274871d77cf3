"""hardswish and hardsigmoid as primitives with torch's backward formulas, for the eager CPU
calls of nn/functional/activation.py (float32 and float64; traced, and in other dtypes, the
composites there run).

Written from primitives, a hardswish was about ten NumPy calls forward (three comparisons, an
and, two selects, the parabola) and as many backward, each a dispatch and a node: MobileNetV3's
activations took 5-7x torch's time (docs/performance.md, 2026-11-28). torch has a kernel for
each and for its backward; so do these, with torch's branches:

- hardswish(x): 0 * x for x <= -3 (-inf gives NaN), x (x + 3) / 6 strictly between -3 and 3,
  x elsewhere (NaN too); its backward `hardswish_backward(g, x)`: 0, g (x / 3 + 1/2), g on the
  same branches, and that backward's derivative in x `g u / 3` strictly between -3 and 3 (0
  elsewhere), torch's formula for its double backward.
- hardsigmoid(x): min(max((x + 3) / 6, 0), 1) (NaN kept); `hardsigmoid_backward(g, x)`: g
  times 1/6 rounded to float32 strictly between -3 and 3, else 0; torch has no derivative of
  that backward in x (0 here).

The forward impls make the composites' NumPy calls, so eager values are the composites' bits;
the backward impls compute torch's formulas. Each primitive lowers to its composite written
here (a Decomposition) should a trace meet one.
"""

from __future__ import annotations

import numpy as np

from .. import batching
from .. import elementwise as ew
from ..dtype_rules import rule_float
from ..lowering import Decomposition
from ..registry import bind, define_op
from ..shape_rules import broadcast_shapes

# torch's hardsigmoid backward multiplies by 1/6 rounded to float32, for float64 too.
ONE_SIXTH_AS_FLOAT32 = float(np.float32(1.0) / np.float32(6.0))


def _inside(x):
    return (x > -3) & (x < 3)


# ---- the composites a trace runs ---------------------------------------------------------------

def _hardswish_composite(x):
    return ew.where(x <= -3, x * 0, ew.where(_inside(x), x * (x + 3) / 6, x))


def _hardswish_backward_composite(grad, x):
    return ew.where(x <= -3, 0, ew.where(_inside(x), grad * (x / 3 + 0.5), grad))


def _hardsigmoid_composite(x):
    return ew.minimum(ew.maximum((x + 3) / 6, 0), 1)


def _hardsigmoid_backward_composite(grad, x):
    return ew.where(_inside(x), grad * ONE_SIXTH_AS_FLOAT32, 0)


# ---- the eager routines ------------------------------------------------------------------------

def _inside_array(x: np.ndarray) -> np.ndarray:
    return np.logical_and(np.greater(x, -3), np.less(x, 3))


def _hardswish_impl(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        parabola = np.asarray(np.add(x, 3))  # 0-d: NumPy gives scalars
        np.multiply(x, parabola, out=parabola)
        np.true_divide(parabola, 6, out=parabola)
        result = np.where(_inside_array(x), parabola, x)
        low = np.less_equal(x, -3)
        if low.any():
            np.multiply(x, 0, out=result, where=low)
    return result


def _hardswish_backward_impl(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        slope = np.asarray(np.true_divide(x, 3))
        np.add(slope, 0.5, out=slope)
        middle = np.multiply(grad, slope)
        result = np.where(_inside_array(x), middle, grad)
        return np.where(np.less_equal(x, -3), np.zeros((), result.dtype), result)


def _hardsigmoid_impl(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        result = np.asarray(np.add(x, 3))
        np.true_divide(result, 6, out=result)
        np.maximum(result, 0, out=result)
        return np.minimum(result, 1, out=result)


def _hardsigmoid_backward_impl(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        scaled = np.multiply(grad, ONE_SIXTH_AS_FLOAT32)
        return np.where(_inside_array(x), scaled, np.zeros((), scaled.dtype))


# ---- the primitives ----------------------------------------------------------------------------

def _hardswish_backward(grad, x):
    return bind(HARDSWISH_BACKWARD, (grad, x), {})


def _hardsigmoid_backward(grad, x):
    return bind(HARDSIGMOID_BACKWARD, (grad, x), {})


def _hardswish_curvature(grad, x):
    """torch's derivative of hardswish_backward in x, times the upstream `grad`."""
    return ew.where(_inside(x), grad / 3, 0)


def _hardswish_backward_vjp(ctx, upstream):
    grad, x = ctx.inputs
    needs = ctx.needs_input_grad
    return (_hardswish_backward(upstream, x) if needs[0] else None,
            _hardswish_curvature(upstream * grad, x) if needs[1] else None)


def _hardswish_backward_jvp(inputs, tangents, out, attrs):
    (grad, x), (grad_tangent, x_tangent) = inputs, tangents
    result = None if grad_tangent is None else _hardswish_backward(grad_tangent, x)
    if x_tangent is not None:
        moved = _hardswish_curvature(x_tangent * grad, x)
        result = moved if result is None else result + moved
    return result


def _first_tangent(backward):
    return lambda inputs, tangents, out, attrs: None if tangents[0] is None else backward(
        tangents[0], inputs[0])


HARDSWISH = define_op(
    name="hardswish", arity=1, shape=broadcast_shapes, dtype=rule_float,
    impl=_hardswish_impl, vjp=lambda ctx, g: (_hardswish_backward(g, ctx.inputs[0]),),
    saves=(0,), lowering=Decomposition(_hardswish_composite),
    jvp=_first_tangent(_hardswish_backward), batch=batching.broadcasting_rule)
HARDSWISH_BACKWARD = define_op(
    name="hardswish_backward", arity=2, shape=broadcast_shapes, dtype=rule_float,
    impl=_hardswish_backward_impl, vjp=_hardswish_backward_vjp, saves=(0, 1),
    lowering=Decomposition(_hardswish_backward_composite), jvp=_hardswish_backward_jvp,
    batch=batching.broadcasting_rule)
HARDSIGMOID = define_op(
    name="hardsigmoid", arity=1, shape=broadcast_shapes, dtype=rule_float,
    impl=_hardsigmoid_impl, vjp=lambda ctx, g: (_hardsigmoid_backward(g, ctx.inputs[0]),),
    saves=(0,), lowering=Decomposition(_hardsigmoid_composite),
    jvp=_first_tangent(_hardsigmoid_backward), batch=batching.broadcasting_rule)
HARDSIGMOID_BACKWARD = define_op(
    name="hardsigmoid_backward", arity=2, shape=broadcast_shapes, dtype=rule_float,
    impl=_hardsigmoid_backward_impl,
    vjp=lambda ctx, u: (_hardsigmoid_backward(u, ctx.inputs[1])
                        if ctx.needs_input_grad[0] else None, None),
    saves=(1,), lowering=Decomposition(_hardsigmoid_backward_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else (
        _hardsigmoid_backward(tangents[0], inputs[1])),
    batch=batching.broadcasting_rule)


def hardswish(x):
    """hardswish of a float32 or float64 CPU tensor, for nn/functional/activation.py."""
    return bind(HARDSWISH, (x,), {})


def hardsigmoid(x):
    """hardsigmoid of a float32 or float64 CPU tensor, for nn/functional/activation.py."""
    return bind(HARDSIGMOID, (x,), {})
