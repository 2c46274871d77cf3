"""tanh's backward for real tensors, tanh_backward(g, y) = g (1 - y^2), a primitive of its own
as torch's: tanh's VJP (elementwise/__init__.py) and the LSTM and GRU cells' (nn/rnn_cells.py).

Its own VJP is torch's `u (-2 y g)`: three products where the chain rule through
`g * (1 - y * y)` made seven (docs/notes/eager-dispatch.md). Eagerly it is one routine; traced,
the composite (a Decomposition).
"""

from __future__ import annotations

import numpy as np

from .. import batching
from ..dtype_rules import rule_float
from ..lowering import Decomposition
from ..registry import bind, define_op
from ..shape_rules import broadcast_shapes


def _tanh_backward_composite(grad, out):
    return grad * (1 - out * out)


def _tanh_backward_impl(grad: np.ndarray, out: np.ndarray) -> np.ndarray:
    slope = np.asarray(np.multiply(out, out))  # 0-d: NumPy gives scalars
    np.subtract(1, slope, out=slope)
    if grad.shape != slope.shape:
        return np.multiply(grad, slope)
    return np.multiply(grad, slope, out=slope)


def _tanh_backward(grad, out):
    return bind(TANH_BACKWARD, (grad, out), {})


def _tanh_backward_vjp(ctx, upstream):
    # torch's: tanh_backward(u, y) for the gradient, u (-2 y g) for the saved result.
    grad, out = ctx.inputs
    needs = ctx.needs_input_grad
    return (_tanh_backward(upstream, out) if needs[0] else None,
            upstream * (-2 * out * grad) if needs[1] else None)


def _tanh_backward_jvp(inputs, tangents, out, attrs):
    (grad, y), (grad_tangent, y_tangent) = inputs, tangents
    result = None if grad_tangent is None else _tanh_backward(grad_tangent, y)
    if y_tangent is not None:
        moved = y_tangent * (-2 * y * grad)
        result = moved if result is None else result + moved
    return result


TANH_BACKWARD = define_op(
    name="tanh_backward", arity=2, shape=broadcast_shapes, dtype=rule_float,
    impl=_tanh_backward_impl, vjp=_tanh_backward_vjp, saves=(0, 1),
    lowering=Decomposition(_tanh_backward_composite), jvp=_tanh_backward_jvp,
    batch=batching.broadcasting_rule)


def tanh_backward(grad, out):
    """g (1 - y^2), tanh's gradient from its result y (real floating), as torch's
    tanh_backward: one routine eagerly, differentiated with torch's formula."""
    return _tanh_backward(grad, out)
