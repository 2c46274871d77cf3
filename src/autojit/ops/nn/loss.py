"""Loss primitives: binary cross entropy and its gradient, elementwise over (input, target).

torch defines these gradients by formula, not by the chain rule through the loss: the loss
clamps each log at -100 (finite at probabilities 0 and 1), the first derivative is
(p - t) / max(p (1 - p), eps) and the second has an eps of its own. No composite of other
primitives has all three, so they are primitives whose VJPs are those formulas in autojit ops
(and whose JVPs apply the same formulas to the tangents); double backward differentiates the
second one. nn.functional.binary_cross_entropy applies the
weight and the reduction around them.
"""

from __future__ import annotations

import numpy as np

from .. import elementwise as ew
from ..dtype_rules import rule_float
from ..registry import Elementwise, bind, define_op
from ..shape_rules import broadcast_shapes

# The eps of the first derivative, a C float in torch (so 1e-12 rounded to float32), and of
# the second, a double.
_GRAD_EPS = float(np.float32(1e-12))
_GRAD_GRAD_EPS = 1e-12


def _loss_impl(p, t):
    return (t - 1) * np.maximum(np.log1p(-p), -100) - t * np.maximum(np.log(p), -100)


def _loss_input_part(p, t, g, out):
    return g * bind(GRAD, (p, t), {"eps": _GRAD_EPS})


def _loss_target_part(p, t, g, out):
    # -logit(p), written so that p = 0 and p = 1 give +inf and -inf, and their derivatives
    # -inf, as torch's logit does.
    return g * (ew.log1p(-p) - ew.log(p))


def _loss_vjp(ctx, g):
    p, t = ctx.inputs
    return (_loss_input_part(p, t, g, None) if ctx.needs_input_grad[0] else None,
            _loss_target_part(p, t, g, None) if ctx.needs_input_grad[1] else None)


LOSS = define_op(
    name="binary_cross_entropy", arity=2, shape=broadcast_shapes, dtype=rule_float,
    impl=_loss_impl, vjp=_loss_vjp, saves=(0, 1),
    jvp=ew.binary_jvp(_loss_input_part, _loss_target_part),
    lowering=Elementwise("(({1} - 1) * max(log1p(-{0}), -100.0) - {1} * max(log({0}), -100.0))"))


def _grad_impl(p, t, eps):
    return (p - t) / np.maximum((1 - p) * p, np.asarray(eps, dtype=p.dtype))


def _grad_input_part(p, t, g, out):
    shifted, flipped = p + _GRAD_GRAD_EPS, (1 - p) + _GRAD_GRAD_EPS
    return g * ((p * p - 2 * p * t + t) / (shifted * shifted * (flipped * flipped)))


def _grad_target_part(p, t, g, out):
    return -g / ew.maximum((1 - p) * p, _GRAD_GRAD_EPS)


def _grad_vjp(ctx, g):
    p, t = ctx.inputs
    return (_grad_input_part(p, t, g, None) if ctx.needs_input_grad[0] else None,
            _grad_target_part(p, t, g, None) if ctx.needs_input_grad[1] else None)


GRAD = define_op(
    name="binary_cross_entropy_backward", arity=2,
    shape=lambda p, t, eps: broadcast_shapes(p, t), dtype=rule_float, impl=_grad_impl,
    vjp=_grad_vjp, saves=(0, 1), jvp=ew.binary_jvp(_grad_input_part, _grad_target_part),
    lowering=Elementwise("(({0} - {1}) / max((1 - {0}) * {0}, {eps}))"))


def binary_cross_entropy(p, t):
    """The elementwise loss -(t log p + (1 - t) log(1 - p)), each log clamped at -100."""
    return bind(LOSS, (p, t), {})
