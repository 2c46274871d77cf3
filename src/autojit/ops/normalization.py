"""Normalization as primitives: layer_norm over trailing dims and batch_norm over every dim
but the channels (dim 1), `(x - mean) / sqrt(var + eps)` with the mean and biased variance
over those dims, and their backward formula.

nn.functional's layer_norm, group_norm and batch_norm (nn/functional_norm.py) apply their
affine maps around them. Each primitive has a Decomposition (ops/lowering.py): eagerly each
is one NumPy routine, the composite's calls with its temporaries reused, so a normalization is
a dispatch and a few passes where the composite and its chain-rule backward took some twenty;
traced, each is its composite, which the compiled kernels fuse.

The backward is torch's formula rather than the chain rule through the composite: with
r = 1 / sqrt(var + eps), c = x - mean and n elements per row,

    dx = r (g - sum(g) / n) - c r^3 sum(g c) / n,

which is J g for the Jacobian J = r (I - 1 1^T / n - xhat xhat^T / n) of the normalization,
a symmetric matrix: the normalization's JVP and the VJP of its backward in g are the
backward itself. The statistics are recomputed from x rather than saved (a primitive has one
result; a compiled step computes them once, its optimizer merging the same ops). The VJP of
the backward in x (double backward) is written out below in autojit ops, so any order
differentiates."""

from __future__ import annotations

import math

import numpy as np

from ..tensor.tensor import Tensor
from . import batching
from .composite import rsqrt
from .lowering import Decomposition
from .reduction import sum_
from .registry import bind, define_op, rule_first, rule_promote


def _dims(ndim: int, count: int | None) -> tuple:
    """The dims a normalization reduces: the last `count` (layer_norm), or every dim but the
    channels, dim 1 (batch_norm: count None)."""
    if count is None:
        return (0, *range(2, ndim))
    return tuple(range(ndim - count, ndim))


def _shape(shape, *others, count=None, eps):
    """The shape rule: the input's (a backward's gradient and input have one shape)."""
    if count is None:
        if len(shape) < 2:
            raise ValueError(f"cannot normalize the channels (dim 1) of a tensor of "
                             f"{len(shape)} dims")
    elif not 1 <= count <= len(shape):
        raise ValueError(f"cannot normalize over the last {count} dims of a tensor of "
                         f"{len(shape)} dims")
    if others and tuple(others[0]) != tuple(shape):
        raise ValueError(f"the gradient's shape {list(shape)} is not the input's "
                         f"{list(others[0])}")
    return shape


# ---- the composites compiled code runs ----------------------------------------------------------

def statistics(x: Tensor, count: int | None, eps: float):
    """x - mean and 1 / sqrt(var + eps) over the normalized dims (_dims), kept as size-1 dims,
    with the dims, the count of elements each statistic covers and (mean, var). batch_norm's
    running statistics are made by the same ops, so that a compiled step computes them
    once."""
    dims = _dims(x.ndim, count)
    size = math.prod(x.shape[d] for d in dims)
    mean = sum_(x, dims, keepdim=True) / size
    centered = x - mean
    variance = sum_(centered * centered, dims, keepdim=True) / size
    return centered, rsqrt(variance + eps), dims, size, (mean, variance)


def _normalize_composite(x: Tensor, count: int | None = None, eps: float = 1e-5) -> Tensor:
    centered, scale, _, _, _ = statistics(x, count, eps)
    return centered * scale


def _normalize_backward_composite(grad: Tensor, x: Tensor, count: int | None = None,
                                  eps: float = 1e-5) -> Tensor:
    centered, scale, dims, size, _ = statistics(x, count, eps)
    mean_grad = sum_(grad, dims, keepdim=True) / size
    moment = sum_(grad * centered, dims, keepdim=True) / size
    return (grad - mean_grad) * scale - centered * (scale * scale * scale * moment)


# ---- the eager routines: the composites' NumPy calls, temporaries reused -------------------------

def _statistics_arrays(x: np.ndarray, count: int | None, eps: float):
    axes = _dims(x.ndim, count)
    size = math.prod(x.shape[axis] for axis in axes)
    centered = np.subtract(x, np.true_divide(np.sum(x, axis=axes, keepdims=True), size))
    squares = np.multiply(centered, centered)
    variance = np.true_divide(np.sum(squares, axis=axes, keepdims=True), size)
    scale = np.true_divide(1, np.sqrt(np.add(variance, eps)))
    return centered, scale, squares, axes, size


def _normalize_impl(x: np.ndarray, count: int | None = None, eps: float = 1e-5) -> np.ndarray:
    centered, scale, _, _, _ = _statistics_arrays(x, count, eps)
    return np.multiply(centered, scale, out=centered)


def _normalize_backward_impl(grad: np.ndarray, x: np.ndarray, count: int | None = None,
                             eps: float = 1e-5) -> np.ndarray:
    centered, scale, scratch, axes, size = _statistics_arrays(x, count, eps)
    mean_grad = np.true_divide(np.sum(grad, axis=axes, keepdims=True), size)
    np.multiply(grad, centered, out=scratch)
    moment = np.true_divide(np.sum(scratch, axis=axes, keepdims=True), size)
    result = np.subtract(grad, mean_grad, out=scratch)
    np.multiply(result, scale, out=result)
    np.multiply(centered, scale * scale * scale * moment, out=centered)
    return np.subtract(result, centered, out=result)


# ---- the primitives ---------------------------------------------------------------------------

def _backward(grad: Tensor, x: Tensor, attrs: dict) -> Tensor:
    """The backward primitive of the normalization whose attrs these are."""
    return bind(LAYER_NORM_BACKWARD if "count" in attrs else BATCH_NORM_BACKWARD, (grad, x),
                attrs)


def _row_terms(x: Tensor, attrs: dict):
    """xhat, r / n and r^2 / n, the row sums' dims and n, from x (recomputed)."""
    centered, scale, dims, size, _ = statistics(x, attrs.get("count"), attrs["eps"])
    return centered * scale, scale / size, scale * scale / size, dims


def _input_part(grad: Tensor, x: Tensor, direction: Tensor, attrs: dict) -> Tensor:
    """d (J(x) g) / d x, contracted with `direction` on either side (it is symmetric: the
    second derivative of <direction, xhat(x)> and <g, xhat(x)>): with dx = J g, J direction
    and the row sums S = sum(direction g), A = sum(g), U = sum(direction), G = sum(g xhat),
    P = sum(direction xhat),

        -(r^2 / n) xhat (S - A U / n - G P / n) - (r / n) (P dx + G J direction).
    """
    xhat, scale_over, square_over, dims = _row_terms(x, attrs)
    size = math.prod(x.shape[d] for d in dims)

    def total(t):
        return sum_(t, dims, keepdim=True)

    along_grad, along_direction = total(grad * xhat), total(direction * xhat)
    spread = total(direction * grad) - total(grad) * total(direction) / size \
        - along_grad * along_direction / size
    return -(square_over * xhat * spread) - scale_over * (
        along_direction * _backward(grad, x, attrs) + along_grad * _backward(direction, x,
                                                                             attrs))


def _backward_vjp(ctx, upstream):
    grad, x = ctx.inputs
    needs = ctx.needs_input_grad
    return (_backward(upstream, x, ctx.attrs) if needs[0] else None,
            _input_part(grad, x, upstream, ctx.attrs) if needs[1] else None)


def _backward_jvp(inputs, tangents, out, attrs):
    grad, x = inputs
    grad_tangent, x_tangent = tangents
    result = None if grad_tangent is None else _backward(grad_tangent, x, attrs)
    if x_tangent is not None:
        moved = _input_part(grad, x, x_tangent, attrs)
        result = moved if result is None else result + moved
    return result


def _forward_jvp(inputs, tangents, out, attrs):
    return None if tangents[0] is None else _backward(tangents[0], inputs[0], attrs)


LAYER_NORM = define_op(
    name="layer_norm", arity=1, shape=_shape, dtype=rule_first, impl=_normalize_impl,
    vjp=lambda ctx, g: (_backward(g, ctx.inputs[0], ctx.attrs),), saves=(0,),
    lowering=Decomposition(_normalize_composite), jvp=_forward_jvp,
    batch=lambda op, inputs, flags, attrs, size: bind(op, inputs, attrs),
    grad_name="NativeLayerNormBackward0")
LAYER_NORM_BACKWARD = define_op(
    name="layer_norm_backward", arity=2, shape=_shape, dtype=rule_promote,
    impl=_normalize_backward_impl, vjp=_backward_vjp, saves=(0, 1),
    lowering=Decomposition(_normalize_backward_composite), jvp=_backward_jvp,
    batch=lambda op, inputs, flags, attrs, size: bind(
        op, batching.all_batched(inputs, flags, size), attrs),
    grad_name="NativeLayerNormBackwardBackward0")


def _channels_batch(op, inputs, flags, attrs, size):
    """vmap of batch_norm: each example's channels are channels of their own, (B, N, C, ...)
    normalized as (N, B * C, ...)."""
    inputs = batching.all_batched(inputs, flags, size)
    folded = []
    for x in inputs:
        moved = x.movedim(0, 1)
        folded.append(moved.reshape((moved.shape[0], size * moved.shape[2], *moved.shape[3:])))
    result = bind(op, tuple(folded), attrs)
    shape = (result.shape[0], size, result.shape[1] // size, *result.shape[2:])
    return result.reshape(shape).movedim(1, 0)


BATCH_NORM = define_op(
    name="batch_norm", arity=1, shape=_shape, dtype=rule_first, impl=_normalize_impl,
    vjp=lambda ctx, g: (_backward(g, ctx.inputs[0], ctx.attrs),), saves=(0,),
    lowering=Decomposition(_normalize_composite), jvp=_forward_jvp, batch=_channels_batch,
    grad_name="NativeBatchNormBackward0")
BATCH_NORM_BACKWARD = define_op(
    name="batch_norm_backward", arity=2, shape=_shape, dtype=rule_promote,
    impl=_normalize_backward_impl, vjp=_backward_vjp, saves=(0, 1),
    lowering=Decomposition(_normalize_backward_composite), jvp=_backward_jvp,
    batch=_channels_batch, grad_name="NativeBatchNormBackwardBackward0")


def normalize_trailing(x: Tensor, count: int, eps: float) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the last `count` dims of a floating x (the biased
    variance), for the normalization layers, which check their operands."""
    return bind(LAYER_NORM, (x,), {"count": count, "eps": float(eps)})


def normalize_channels(x: Tensor, eps: float) -> Tensor:
    """(x - mean) / sqrt(var + eps) of each channel (dim 1) of a floating x of 2 or more
    dims, over every other dim (the biased variance): batch_norm in training."""
    return bind(BATCH_NORM, (x,), {"eps": float(eps)})
