"""gelu (exact, with erf) and softplus as primitives with torch's backward formulas, for the
composites of ops/composite.py; tanh's backward (tanh_backward) for real tensors is
elementwise/derivatives.py's, beside tanh, and read from here too.

Written from primitives, their gradients were the chain rule through every product, select and
exp of the composite: a gelu's double backward was about 40 NumPy calls, a softplus's 44, nine
of them selects (docs/notes/eager-dispatch.md, "Double backward of elementwise functions").
torch has a kernel for each function and for its backward, and differentiates the backward
with a formula of its own; so do these, as softmax and layer_norm do (ops/nn/softmax.py):

- gelu and softplus run eagerly as one routine making the composite's NumPy calls, in place,
  so their values are the composite's bits; traced, they are the composite (a Decomposition).
  On large arrays gelu and its backward make those calls' float operations as one native loop
  (NATIVE, codegen/cpu/eager_gelu.py), the same bits.
- Their VJPs are the primitives gelu_backward and softplus_backward, torch's formulas
  `g (Phi(x) + x phi(x))` and `g z / (z + 1)` with z = exp(beta x) (g itself where
  beta x > threshold), also one routine each eagerly and a composite when traced.
- Those are differentiable again with torch's double-backward formulas: in g each is itself;
  in x, `u g phi(x) (2 - x^2)` and `u g beta s (1 - s)` with s = sigmoid(beta x), zero where
  beta x >= threshold (torch's softplus_double_backward).
"""

from __future__ import annotations

import math

import numpy as np

from .. import batching
from .. import elementwise as ew
from ..dtype_rules import rule_float
from ..elementwise import native_math
from ..elementwise.derivatives import tanh_backward  # noqa: F401 - read from here too
from ..elementwise.native_math import apply
from ..lowering import Decomposition
from ..registry import bind, define_op
from ..shape_rules import broadcast_shapes

_SQRT1_2 = 1 / math.sqrt(2)
_PDF_SCALE = 2 / math.sqrt(math.pi) * _SQRT1_2 * 0.5  # torch's kBeta: 1 / sqrt(2 pi)


# ---- the composites compiled code runs ----------------------------------------------------------

def gelu_composite(x):
    """x Phi(x) with Phi the standard normal CDF, `0.5 x (1 + erf(x / sqrt(2)))`."""
    return 0.5 * x * (1 + ew.erf(x * _SQRT1_2))


def _normal_pdf(x):
    return _PDF_SCALE * ew.exp(x * x * -0.5)


def _gelu_backward_composite(grad, x):
    cdf = 0.5 * (1 + ew.erf(x * _SQRT1_2))
    return grad * (cdf + x * _normal_pdf(x))


def softplus_composite(x, beta: float, threshold: float):
    """`ln(1 + e^(beta x)) / beta`, x itself where `beta x > threshold`; exp never overflows.

    At beta x == threshold torch takes the curve for the value and the first derivative
    (sigmoid(threshold)) but gives 0 for the second: there the curve's input is held at the
    threshold and a linear term of slope sigmoid(threshold), zero at that point, carries the
    derivative.
    """
    scaled = x * beta
    at_threshold = scaled == threshold
    curve = ew.log1p(ew.exp(ew.where(scaled >= threshold, threshold, scaled))) / beta
    slope = 0.5 * (1 + math.tanh(threshold / 2)) / beta  # sigmoid(threshold), without overflow
    tangent = ew.where(at_threshold, scaled - threshold, 0) * slope
    return ew.where(scaled > threshold, x, curve + tangent)


def _softplus_backward_composite(grad, x, beta: float, threshold: float):
    scaled = x * beta
    z = ew.exp(ew.where(scaled > threshold, threshold, scaled))
    return ew.where(scaled > threshold, grad, grad * z / (z + 1))


# ---- the eager routines ------------------------------------------------------------------------

# Set by codegen (codegen/cpu/eager_gelu.py, installed by codegen/__init__.py):
# NATIVE(name, [x] or [x, grad]) -> gelu's or gelu_backward's routine as one native loop (the
# same float operations, so the same bits), or None where there is none. Taken where the
# routines below would run erf and exp natively too (native_math's MIN_ELEMENTS).
NATIVE = None
_NATIVE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _native(name: str, arrays: list):
    x = arrays[0]
    if NATIVE is None or x.size < native_math.MIN_ELEMENTS or native_math.NATIVE is None:
        return None
    for array in arrays:
        if array.__class__ is not np.ndarray or array.dtype != x.dtype or \
                array.shape != x.shape or not array.flags.c_contiguous:
            return None
    if x.dtype not in _NATIVE_DTYPES:
        return None
    return NATIVE(name, arrays)


def _gelu_impl(x: np.ndarray) -> np.ndarray:
    from ..elementwise import _erf_impl

    found = _native("gelu", [x])
    if found is not None:
        return found

    result = np.asarray(_erf_impl(np.multiply(x, _SQRT1_2)))  # 0-d: NumPy gives scalars
    np.add(result, 1, out=result)
    return np.multiply(np.multiply(x, 0.5), result, out=result)


def _gelu_backward_impl(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    from ..elementwise import _erf_impl

    found = _native("gelu_backward", [x, grad])
    if found is not None:
        return found

    cdf = np.asarray(_erf_impl(np.multiply(x, _SQRT1_2)))  # 0-d: NumPy gives scalars
    np.add(cdf, 1, out=cdf)
    np.multiply(cdf, 0.5, out=cdf)
    pdf = np.asarray(np.multiply(x, x))
    np.multiply(pdf, -0.5, out=pdf)
    apply("exp", np.exp, pdf, pdf)
    np.multiply(pdf, _PDF_SCALE, out=pdf)
    np.multiply(pdf, x, out=pdf)
    np.add(cdf, pdf, out=cdf)
    if grad.shape != cdf.shape:  # a gradient broadcast against x (vmap, forward mode)
        return np.multiply(grad, cdf)
    return np.multiply(grad, cdf, out=cdf)


def _softplus_impl(x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    scaled = np.multiply(x, beta)
    curve = np.asarray(np.minimum(scaled, threshold))  # the composite's select, NaN kept
    apply("exp", np.exp, curve, curve)
    apply("log1p", np.log1p, curve, curve)
    np.true_divide(curve, beta, out=curve)
    above = np.greater(scaled, threshold)
    if above.any():
        np.copyto(curve, x, where=above)
    return curve


def _softplus_backward_impl(grad: np.ndarray, x: np.ndarray, beta: float,
                            threshold: float) -> np.ndarray:
    scaled = np.asarray(np.multiply(x, beta))  # 0-d: NumPy gives scalars
    above = np.greater(scaled, threshold)
    z = np.minimum(scaled, threshold, out=scaled)
    apply("exp", np.exp, z, z)
    result = np.asarray(np.multiply(grad, z))
    np.add(z, 1, out=z)
    np.true_divide(result, z, out=result)
    if above.any():
        np.copyto(result, np.broadcast_to(grad, result.shape), where=above)
    return result


# ---- the primitives ----------------------------------------------------------------------------

def _gelu_backward(grad, x):
    return bind(GELU_BACKWARD, (grad, x), {})


def _gelu_curvature(x):
    """d/dx (Phi(x) + x phi(x)) = phi(x) (2 - x^2)."""
    return _normal_pdf(x) * (2 - x * x)


def _gelu_backward_vjp(ctx, upstream):
    grad, x = ctx.inputs
    needs = ctx.needs_input_grad
    return (_gelu_backward(upstream, x) if needs[0] else None,
            upstream * grad * _gelu_curvature(x) if needs[1] else None)


def _gelu_backward_jvp(inputs, tangents, out, attrs):
    (grad, x), (grad_tangent, x_tangent) = inputs, tangents
    result = None if grad_tangent is None else _gelu_backward(grad_tangent, x)
    if x_tangent is not None:
        moved = x_tangent * grad * _gelu_curvature(x)
        result = moved if result is None else result + moved
    return result


def _softplus_backward(grad, x, attrs):
    return bind(SOFTPLUS_BACKWARD, (grad, x), attrs)


def _softplus_double_backward(grad, x, beta: float, threshold: float):
    """torch's softplus_double_backward: sigmoid_backward(grad, s) (x beta < threshold) beta."""
    scaled = x * beta
    s = ew.sigmoid(scaled)
    return grad * (1 - s) * s * (scaled < threshold).to(scaled.dtype) * beta


def _softplus_backward_vjp(ctx, upstream):
    grad, x = ctx.inputs
    needs = ctx.needs_input_grad
    return (_softplus_backward(upstream, x, ctx.attrs) if needs[0] else None,
            _softplus_double_backward(upstream * grad, x, **ctx.attrs) if needs[1] else None)


def _softplus_backward_jvp(inputs, tangents, out, attrs):
    (grad, x), (grad_tangent, x_tangent) = inputs, tangents
    result = None if grad_tangent is None else _softplus_backward(grad_tangent, x, attrs)
    if x_tangent is not None:
        moved = _softplus_double_backward(x_tangent * grad, x, **attrs)
        result = moved if result is None else result + moved
    return result


GELU = define_op(
    name="gelu", arity=1, shape=broadcast_shapes, dtype=rule_float, impl=_gelu_impl,
    vjp=lambda ctx, g: (_gelu_backward(g, ctx.inputs[0]),), saves=(0,),
    lowering=Decomposition(gelu_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else _gelu_backward(
        tangents[0], inputs[0]),
    batch=batching.broadcasting_rule)
GELU_BACKWARD = define_op(
    name="gelu_backward", arity=2, shape=broadcast_shapes, dtype=rule_float,
    impl=_gelu_backward_impl, vjp=_gelu_backward_vjp, saves=(0, 1),
    lowering=Decomposition(_gelu_backward_composite), jvp=_gelu_backward_jvp,
    batch=batching.broadcasting_rule)
SOFTPLUS = define_op(
    name="softplus", arity=1, shape=lambda shape, **attrs: shape, dtype=rule_float,
    impl=_softplus_impl,
    vjp=lambda ctx, g: (_softplus_backward(g, ctx.inputs[0], ctx.attrs),), saves=(0,),
    lowering=Decomposition(softplus_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else (
        _softplus_backward(tangents[0], inputs[0], attrs)),
    batch=batching.broadcasting_rule)
SOFTPLUS_BACKWARD = define_op(
    name="softplus_backward", arity=2,
    shape=lambda *shapes, **attrs: broadcast_shapes(*shapes), dtype=rule_float,
    impl=_softplus_backward_impl, vjp=_softplus_backward_vjp, saves=(0, 1),
    lowering=Decomposition(_softplus_backward_composite), jvp=_softplus_backward_jvp,
    batch=batching.broadcasting_rule)


def gelu_exact(x):
    """gelu with erf of a tensor, for composite.gelu (which handles dtypes and `approximate`)."""
    return bind(GELU, (x,), {})


def softplus_of(x, beta: float, threshold: float):
    """softplus of a tensor, for composite.softplus."""
    return bind(SOFTPLUS, (x,), {"beta": beta, "threshold": threshold})
