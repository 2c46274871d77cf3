"""hardtanh (and relu6), leaky_relu, softshrink and hardshrink as elementwise primitives with
torch's backward primitives, for float32 and float64 tensors (nn/functional/activation.py
keeps composites for other dtypes).

Each activation is a pair, as in torch: the forward op, whose gradient is its backward op
`<name>_backward(grad, x)` on the saved input, and that backward op, linear in grad, whose
derivative in x is zeros (torch's formula). A gradient taken with create_graph therefore
depends on x, and a second derivative in x alone is torch's zeros. Written as a `where` on a
comparison, it had no such dependence, and autograd.grad raised where torch returns zeros.

Both ops are selects over the operands (Elementwise, exact): eager runs one NumPy routine each,
laid out as the operands are, and a compiled step fuses the expression into its kernels. The
branches are torch's vectorized kernels':
- hardtanh(x) clamps to [min_val, max_val]. A bound is taken only strictly beyond it, so
  relu6(-0.0) is -0.0, and NaN stays NaN. The gradient flows strictly inside the bounds, so it
  is 0 at the bounds and at NaN.
- leaky_relu(x) is x where x > 0, else x * negative_slope. The gradient is 1 or the slope by
  the same test, so NaN takes the slope.
- softshrink(x) is x - lambd above lambd, x + lambd below -lambd, +0.0 between, and NaN stays
  NaN. hardshrink(x) is x outside [-lambd, lambd], +0.0 inside, NaN kept. For both, the
  gradient flows strictly outside [-lambd, lambd], so it is 0 at NaN.
"""

from __future__ import annotations

import numpy as np

from .. import elementwise as ew
from ..dtype_rules import rule_float
from ..registry import Elementwise, bind, define_op
from ..shape_rules import broadcast_with_attrs

_NAN_KEPT_ELSE_ZERO = "select({0} != {0}, {0}, 0)"


def _define_pair(name: str, impl, expression: str, backward_impl, backward_expression: str):
    """The forward op `name` and its backward op `name_backward`, each Elementwise and exact,
    with torch's derivatives (module docstring)."""
    backward_name = f"{name}_backward"

    def backward(grad, x, attrs):
        return bind(ops[backward_name], (grad, x), attrs)

    def backward_vjp(ctx, upstream):
        needs = ctx.needs_input_grad
        return (backward(upstream, ctx.inputs[1], ctx.attrs) if needs[0] else None,
                ew.fill_like(upstream, 0) if needs[1] else None)

    ops = {
        name: define_op(
            name=name, arity=1, shape=broadcast_with_attrs, dtype=rule_float, impl=impl,
            vjp=lambda ctx, g: (backward(g, ctx.inputs[0], ctx.attrs),), saves=(0,),
            lowering=Elementwise(expression, exact=True),
            jvp=lambda inputs, tangents, out, attrs: backward(tangents[0], inputs[0], attrs)),
        backward_name: define_op(
            name=backward_name, arity=2, shape=broadcast_with_attrs, dtype=rule_float,
            impl=backward_impl, vjp=backward_vjp, saves=(1,),
            lowering=Elementwise(backward_expression, exact=True),
            jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else backward(
                tangents[0], inputs[1], attrs),
            saved_names={"self": 1}),
    }
    return ops[name], ops[backward_name]


def _zero(array: np.ndarray) -> np.ndarray:
    return np.zeros((), array.dtype)


def _nan_kept_else_zero(x: np.ndarray) -> np.ndarray:
    return ew.WHERE.impl(np.isnan(x), x, _zero(x))


# ---- hardtanh ----------------------------------------------------------------------------------

def _hardtanh_impl(x, min_val, max_val):
    low, high = x.dtype.type(min_val), x.dtype.type(max_val)
    return ew.WHERE.impl(np.less(x, low), low, ew.WHERE.impl(np.greater(x, high), high, x))


def _hardtanh_backward_impl(grad, x, min_val, max_val):
    low, high = x.dtype.type(min_val), x.dtype.type(max_val)
    inside = np.logical_and(np.greater(x, low), np.less(x, high))
    return ew.WHERE.impl(inside, grad, _zero(grad))


HARDTANH, HARDTANH_BACKWARD = _define_pair(
    "hardtanh", _hardtanh_impl,
    "select({0} < {min_val}, {min_val}, select({0} > {max_val}, {max_val}, {0}))",
    _hardtanh_backward_impl, "select({1} > {min_val} && {1} < {max_val}, {0}, 0)")


# ---- leaky_relu --------------------------------------------------------------------------------

def _leaky_relu_impl(x, negative_slope):
    return ew.WHERE.impl(np.greater(x, 0), x, np.multiply(x, x.dtype.type(negative_slope)))


def _leaky_relu_backward_impl(grad, x, negative_slope):
    scaled = np.multiply(grad, grad.dtype.type(negative_slope))
    return ew.WHERE.impl(np.greater(x, 0), grad, scaled)


LEAKY_RELU, LEAKY_RELU_BACKWARD = _define_pair(
    "leaky_relu", _leaky_relu_impl, "select({0} > 0, {0}, {0} * {negative_slope})",
    _leaky_relu_backward_impl, "select({1} > 0, {0}, {0} * {negative_slope})")


# ---- softshrink and hardshrink -----------------------------------------------------------------

def _outside(x, lambd):
    bound = x.dtype.type(lambd)
    return np.logical_or(np.less(x, -bound), np.greater(x, bound))


def _shrink_backward_impl(grad, x, lambd):
    return ew.WHERE.impl(_outside(x, lambd), grad, _zero(grad))


_SHRINK_BACKWARD = "select({1} < -{lambd} || {1} > {lambd}, {0}, 0)"


def _softshrink_impl(x, lambd):
    bound = x.dtype.type(lambd)
    below = ew.WHERE.impl(np.less(x, -bound), np.add(x, bound), _nan_kept_else_zero(x))
    return ew.WHERE.impl(np.greater(x, bound), np.subtract(x, bound), below)


def _hardshrink_impl(x, lambd):
    return ew.WHERE.impl(_outside(x, lambd), x, _nan_kept_else_zero(x))


SOFTSHRINK, SOFTSHRINK_BACKWARD = _define_pair(
    "softshrink", _softshrink_impl,
    f"select({{0}} > {{lambd}}, {{0}} - {{lambd}}, "
    f"select({{0}} < -{{lambd}}, {{0}} + {{lambd}}, {_NAN_KEPT_ELSE_ZERO}))",
    _shrink_backward_impl, _SHRINK_BACKWARD)
HARDSHRINK, HARDSHRINK_BACKWARD = _define_pair(
    "hardshrink", _hardshrink_impl,
    f"select({{0}} < -{{lambd}} || {{0}} > {{lambd}}, {{0}}, {_NAN_KEPT_ELSE_ZERO})",
    _shrink_backward_impl, _SHRINK_BACKWARD)


# ---- the functions nn/functional/activation.py calls -------------------------------------------

def hardtanh(x, min_val: float, max_val: float):
    """hardtanh of a float32 or float64 tensor (relu6 is hardtanh(x, 0, 6), as in torch)."""
    return bind(HARDTANH, (x,), {"min_val": float(min_val), "max_val": float(max_val)})


def leaky_relu(x, negative_slope: float):
    """leaky_relu of a float32 or float64 tensor."""
    return bind(LEAKY_RELU, (x,), {"negative_slope": float(negative_slope)})


def softshrink(x, lambd: float):
    """softshrink of a float32 or float64 tensor."""
    return bind(SOFTSHRINK, (x,), {"lambd": float(lambd)})


def hardshrink(x, lambd: float):
    """hardshrink of a float32 or float64 tensor."""
    return bind(HARDSHRINK, (x,), {"lambd": float(lambd)})
