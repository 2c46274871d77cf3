"""Normalization over trailing dims as primitives: layer_norm, `(x - mean) / sqrt(var + eps)`
with the mean and biased variance taken over the last `count` dims, and its backward formula.

nn.functional's layer_norm and group_norm (nn/functional/norm.py) apply their affine maps
around it. Both primitives have a Decomposition (ops/lowering.py): eagerly each is one NumPy
routine, the composite's calls with its temporaries reused, so a normalization is a dispatch
and a few passes where the composite and its chain-rule backward took some twenty; traced,
each is its composite, which the compiled kernels fuse. Over float32 and float64 arrays each
runs as one native loop over the rows instead (NATIVE: codegen/cpu/eager_norm.py; a strided
operand copied in row-major order first), whose sums accumulate in float64 as compiled
kernels' do: the routine's values to float32's rounding, not its bits.

The backward is torch's formula rather than the chain rule through the composite: with
r = 1 / sqrt(var + eps), c = x - mean and n elements per row,

    dx = r (g - sum(g) / n) - c r^3 sum(g c) / n,

which is J g for the Jacobian J = r (I - 1 1^T / n - xhat xhat^T / n) of the normalization,
a symmetric matrix: layer_norm's JVP and the VJP of layer_norm_backward in g are
layer_norm_backward itself. The statistics are recomputed from x rather than saved (a
primitive has one result). Its VJP in x (double backward) is written out below in autojit
ops, so any order differentiates.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor.tensor import Tensor
from .. import batching
from ..composite import rsqrt
from ..dtype_rules import rule_first, rule_promote
from ..lowering import Decomposition
from ..reduction import sum_, sum_array
from ..registry import bind, define_op


def _trailing(ndim: int, count: int) -> tuple:
    return tuple(range(ndim - count, ndim))


def _shape(shape, *others, count, eps):
    """The shape rule: the input's (a backward's gradient and input have one shape)."""
    if not 1 <= count <= len(shape):
        raise ValueError(f"cannot normalize over the last {count} dims of a tensor of "
                         f"{len(shape)} dims")
    if others and tuple(others[0]) != tuple(shape):
        raise ValueError(f"the gradient's shape {list(shape)} is not the input's "
                         f"{list(others[0])}")
    return shape


# ---- the composites compiled code runs ----------------------------------------------------------

def statistics(x: Tensor, dims: tuple, eps: float):
    """x - mean and 1 / sqrt(var + eps) over `dims`, kept as size-1 dims, and the count of
    elements each mean is taken over (ops/nn/batch_norm.py normalizes over other dims)."""
    size = math.prod(x.shape[d] for d in dims)
    centered = x - sum_(x, dims, keepdim=True) / size
    variance = sum_(centered * centered, dims, keepdim=True) / size
    return centered, rsqrt(variance + eps), size


def normalization_backward(grad: Tensor, x: Tensor, dims: tuple, eps: float) -> Tensor:
    """J(x) grad, the normalization's Jacobian over `dims` applied to grad, as a composite."""
    centered, scale, size = statistics(x, dims, eps)
    mean_grad = sum_(grad, dims, keepdim=True) / size
    moment = sum_(grad * centered, dims, keepdim=True) / size
    return (grad - mean_grad) * scale - centered * (scale * scale * scale * moment)


def _layer_norm_composite(x: Tensor, count: int, eps: float) -> Tensor:
    centered, scale, _ = statistics(x, _trailing(x.ndim, count), eps)
    return centered * scale


def _layer_norm_backward_composite(grad: Tensor, x: Tensor, count: int, eps: float) -> Tensor:
    return normalization_backward(grad, x, _trailing(x.ndim, count), eps)


# ---- the eager routines: the composites' NumPy calls, temporaries reused -------------------------

def statistics_arrays(x: np.ndarray, axes: tuple, eps: float):
    """statistics' NumPy calls: x - mean, 1 / sqrt(var + eps), the squares' buffer (free for
    reuse) and the count. Its sums are the sum primitive's (sum_array)."""
    size = math.prod(x.shape[axis] for axis in axes)
    centered = np.subtract(x, np.true_divide(sum_array(x, axes, True), size))
    squares = np.multiply(centered, centered)
    variance = np.true_divide(sum_array(squares, axes, True), size)
    scale = np.true_divide(1, np.sqrt(np.add(variance, eps)))
    return centered, scale, squares, size


def normalization_backward_array(grad: np.ndarray, x: np.ndarray, axes: tuple,
                                 eps: float) -> np.ndarray:
    """normalization_backward's NumPy calls, temporaries reused."""
    centered, scale, scratch, size = statistics_arrays(x, axes, eps)
    mean_grad = np.true_divide(sum_array(grad, axes, True), size)
    np.multiply(grad, centered, out=scratch)
    moment = np.true_divide(sum_array(scratch, axes, True), size)
    result = np.subtract(grad, mean_grad, out=scratch)
    np.multiply(result, scale, out=result)
    np.multiply(centered, scale * scale * scale * moment, out=centered)
    return np.subtract(result, centered, out=result)


# Set by codegen (codegen/cpu/eager_norm.py, installed by codegen/__init__.py):
# NATIVE(name, arrays, count, eps) -> layer_norm or layer_norm_backward over the last `count`
# dims of C-contiguous float32 or float64 arrays as one native loop over the rows, or None
# where there is none. NumPy's routine makes some ten passes over the array.
NATIVE = None
_NATIVE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _native(name: str, arrays: tuple, count: int, eps: float):
    """The native routine's result (row-major), or None where it does not apply (another
    dtype, operands of two dtypes, nothing to normalize, no routine)."""
    first = arrays[0]
    if NATIVE is None or first.dtype not in _NATIVE_DTYPES or not first.size or \
            not 1 <= count <= first.ndim:  # (a count out of range: NumPy's calls raise)
        return None
    operands = []
    for array in arrays:
        if array.dtype != first.dtype or array.shape != first.shape:
            return None
        # A strided operand (ConvNeXt's channels normalized on a permuted view) is copied in
        # row-major order first: the copy and the loop take a third of NumPy's passes' time.
        operands.append(array if array.flags.c_contiguous else np.ascontiguousarray(array))
    return NATIVE(name, operands, count, eps)


def _layer_norm_impl(x: np.ndarray, count: int, eps: float) -> np.ndarray:
    result = _native("layer_norm", (x,), count, eps)
    if result is not None:
        return result
    centered, scale, _, _ = statistics_arrays(x, _trailing(x.ndim, count), eps)
    return np.multiply(centered, scale, out=centered)


def _layer_norm_backward_impl(grad: np.ndarray, x: np.ndarray, count: int,
                              eps: float) -> np.ndarray:
    result = _native("layer_norm_backward", (grad, x), count, eps)
    if result is not None:
        return result
    return normalization_backward_array(grad, x, _trailing(x.ndim, count), eps)


# ---- the primitives ---------------------------------------------------------------------------

def _backward(grad: Tensor, x: Tensor, attrs: dict) -> Tensor:
    return bind(LAYER_NORM_BACKWARD, (grad, x), attrs)


def input_part(grad: Tensor, x: Tensor, direction: Tensor, dims: tuple, eps: float,
               backward) -> Tensor:
    """d (J(x) g) / d x, contracted with `direction` on either side (it is symmetric: the
    second derivative of <direction, xhat(x)> and <g, xhat(x)>), for the normalization over
    `dims`, whose Jacobian `backward(v)` applies: with dx = J g, J direction and the sums
    over `dims` S = sum(direction g), A = sum(g), U = sum(direction), G = sum(g xhat),
    P = sum(direction xhat),

        -(r^2 / n) xhat (S - A U / n - G P / n) - (r / n) (P dx + G J direction).
    """
    centered, scale, size = statistics(x, dims, eps)
    xhat, scale_over, square_over = centered * scale, scale / size, scale * scale / size

    def total(t):
        return sum_(t, dims, keepdim=True)

    along_grad, along_direction = total(grad * xhat), total(direction * xhat)
    spread = total(direction * grad) - total(grad) * total(direction) / size \
        - along_grad * along_direction / size
    return -(square_over * xhat * spread) - scale_over * (
        along_direction * backward(grad) + along_grad * backward(direction))


def _input_part(grad: Tensor, x: Tensor, direction: Tensor, attrs: dict) -> Tensor:
    return input_part(grad, x, direction, _trailing(x.ndim, attrs["count"]), attrs["eps"],
                      lambda v: _backward(v, x, attrs))


def _layer_norm_backward_vjp(ctx, upstream):
    grad, x = ctx.inputs
    needs = ctx.needs_input_grad
    return (_backward(upstream, x, ctx.attrs) if needs[0] else None,
            _input_part(grad, x, upstream, ctx.attrs) if needs[1] else None)


def _layer_norm_backward_jvp(inputs, tangents, out, attrs):
    grad, x = inputs
    grad_tangent, x_tangent = tangents
    result = None if grad_tangent is None else _backward(grad_tangent, x, attrs)
    if x_tangent is not None:
        moved = _input_part(grad, x, x_tangent, attrs)
        result = moved if result is None else result + moved
    return result


LAYER_NORM = define_op(
    name="layer_norm", arity=1, shape=_shape, dtype=rule_first, impl=_layer_norm_impl,
    vjp=lambda ctx, g: (_backward(g, ctx.inputs[0], ctx.attrs),), saves=(0,),
    lowering=Decomposition(_layer_norm_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else _backward(
        tangents[0], inputs[0], attrs),
    batch=lambda op, inputs, flags, attrs, size: bind(op, inputs, attrs),
    grad_name="NativeLayerNormBackward0")
LAYER_NORM_BACKWARD = define_op(
    name="layer_norm_backward", arity=2, shape=_shape, dtype=rule_promote,
    impl=_layer_norm_backward_impl, vjp=_layer_norm_backward_vjp, saves=(0, 1),
    lowering=Decomposition(_layer_norm_backward_composite), jvp=_layer_norm_backward_jvp,
    batch=lambda op, inputs, flags, attrs, size: bind(
        op, batching.all_batched(inputs, flags, size), attrs),
    grad_name="NativeLayerNormBackwardBackward0")


def normalize_trailing(x: Tensor, count: int, eps: float) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the last `count` dims of a floating x (the biased
    variance), for the normalization layers, which check their operands."""
    return bind(LAYER_NORM, (x,), {"count": count, "eps": float(eps)})

