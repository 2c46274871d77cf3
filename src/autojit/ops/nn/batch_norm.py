"""Batch normalization in training mode as primitives, with torch's backward formula: the
batch statistics, the normalization by them, its backward, and the running statistics'
update.

nn.functional.batch_norm (nn/functional/norm.py) runs, for x of shape (N, C, *):

- `batch_norm_statistics(x)`: the mean and biased variance of each channel (dim 1) over every
  other dim, stacked as (2, C) in x's dtype. It is not differentiable: like torch's
  native_batch_norm, which returns its saved mean and inverse standard deviation beside its
  result, the statistics are computed once and handed to the ops below beside x, whose
  derivatives account for their dependence on x;
- `batch_norm(x, statistics, weight, bias)`: `(x - mean) / sqrt(var + eps) * w + b` per
  channel, a missing weight or bias being the number 1.0 or 0.0, which the impls skip. With
  J the normalization's Jacobian over the reduced dims (symmetric and per channel;
  ops/nn/normalization.py has it and its derivative in x), its VJP is

      dx = w J g,    dw = sum(g xhat),    db = sum(g),

  dx being `batch_norm_backward(g, x, statistics, w)`, whose VJP in g is itself again (w is
  constant per channel, so it commutes with J); its derivative in x is normalization.py's
  input_part, in autojit ops, so any order differentiates. The statistics operand gets no
  gradient: it must be batch_norm_statistics(x);
- `batch_norm_update(x, statistics, running, momentum)`: the running mean (or, with the attr
  `variance`, variance) after the batch, `running (1 - momentum) + batch momentum` with the
  unbiased variance, in the running statistic's dtype, which the caller writes into its
  buffer under no_grad.

Each has a Decomposition, as layer_norm has (docs/notes/op-facts.md): eagerly it is one NumPy
routine making the composite's calls (the same bits), reading the statistics once computed;
traced it is the composite, which compiled kernels fuse. The composites recompute the
statistics from x instead of reading the operand, so a traced graph holds no (2, C) stack and
slices of it (batch_norm_statistics' node is dead there), only each composite's reductions,
which common subexpression elimination merges into one computation: the graph of the
composite that batch_norm was before these primitives, with torch's backward formula.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor.dtypes import FLOATING
from ...tensor.tensor import Tensor
from ..dtype_rules import rule_promote
from ..layout import stack
from ..lowering import Decomposition
from ..reduction import sum_, sum_array
from ..registry import NOT_DIFFERENTIABLE, bind, define_op
from .normalization import input_part, normalization_backward
from .normalization import statistics as statistics_of


def _axes(ndim: int) -> tuple:
    """The dims a channel's statistics are taken over: all but dim 1."""
    return (0, *range(2, ndim))


def _count(shape) -> int:
    return math.prod(shape[d] for d in _axes(len(shape)))


def _per_channel(value, ndim: int):
    """A (C,) vector (array or Tensor) shaped to broadcast over dim 1; a number as it is."""
    if isinstance(value, (Tensor, np.ndarray)):
        return value.reshape((1, value.shape[0]) + (1,) * (ndim - 2))
    return value


def _given(value) -> bool:
    """Whether a weight is a tensor (not the number 1.0 standing for none)."""
    return value.__class__ is not float or value != 1.0


# ---- shape and dtype rules ----------------------------------------------------------------------

def _check_input(shape) -> None:
    if len(shape) < 2:
        raise ValueError(f"expected an input of 2 or more dims (N, C, *), got {list(shape)}")


def _check_channels(shape, statistics, *vectors) -> None:
    if tuple(statistics) != (2, shape[1]):
        raise ValueError(f"the statistics' shape {list(statistics)} is not (2, {shape[1]})")
    for vector in vectors:
        if tuple(vector) not in ((), (shape[1],)):
            raise ValueError(f"a weight or bias of shape {list(vector)} for {shape[1]} "
                             "channels")


def _statistics_shape(shape):
    _check_input(shape)
    return (2, shape[1])


def _normalized_shape(shape, statistics, weight, bias, eps):
    _check_input(shape)
    _check_channels(shape, statistics, weight, bias)
    return shape


def _backward_shape(grad, shape, statistics, weight, eps):
    _check_input(shape)
    if tuple(grad) != tuple(shape):
        raise ValueError(f"the gradient's shape {list(grad)} is not the input's {list(shape)}")
    _check_channels(shape, statistics, weight)
    return shape


def _update_shape(shape, statistics, running, momentum, variance):
    _check_input(shape)
    if tuple(statistics) != (2, shape[1]) or tuple(running) != (shape[1],):
        raise ValueError(f"a running statistic of shape {list(running)} for statistics of "
                         f"shape {list(statistics)}")
    return (shape[1],)


def _dtype(inputs, attrs):
    """torch.result_type of the operands; at once when the tensors share a floating dtype."""
    dtype = inputs[0]._dtype
    for x in inputs:
        if isinstance(x, Tensor) and x._dtype is not dtype:
            return rule_promote(inputs, attrs)
    return (dtype, dtype) if dtype.category == FLOATING else rule_promote(inputs, attrs)


def _update_dtype(inputs, attrs):
    # The blend is computed in the running statistics' dtype; the batch statistics (positions
    # 0 and 1, uncast) are converted to it first, as the composite's `.to` does.
    dtype = inputs[2]._dtype
    return dtype, dtype


# ---- the composites compiled code runs ----------------------------------------------------------

def _statistics_composite(x: Tensor) -> Tensor:
    axes, count = _axes(x.ndim), _count(x.shape)
    mean = sum_(x, axes, keepdim=True) / count
    centered = x - mean
    variance = sum_(centered * centered, axes, keepdim=True) / count
    return stack((mean.reshape(x.shape[1]), variance.reshape(x.shape[1])))


def _normalized_composite(x: Tensor, statistics: Tensor, weight, bias, eps: float) -> Tensor:
    # The statistics are recomputed from x, which they are computed from: a trace then holds
    # no (2, C) stack and slices of it, only the composite's own reductions, which common
    # subexpression elimination shares with the update's and the backward's.
    centered, scale, _ = statistics_of(x, _axes(x.ndim), eps)
    result = centered * scale
    if _given(weight):
        result = result * _per_channel(weight, x.ndim)
    if bias.__class__ is not float or bias != 0.0:
        result = result + _per_channel(bias, x.ndim)
    return result


def _backward_composite(grad: Tensor, x: Tensor, statistics: Tensor, weight,
                        eps: float) -> Tensor:
    if _given(weight):
        grad = grad * _per_channel(weight, x.ndim)
    return normalization_backward(grad, x, _axes(x.ndim), eps)


def _update_composite(x: Tensor, statistics: Tensor, running: Tensor, momentum,
                      variance: bool) -> Tensor:
    axes, count, channels = _axes(x.ndim), _count(x.shape), x.shape[1]
    batch = sum_(x, axes, keepdim=True) / count
    if variance:
        centered = x - batch
        batch = sum_(centered * centered, axes, keepdim=True) / count
    batch = batch.reshape(channels).to(running.dtype)
    if variance:
        batch = batch * (count / (count - 1))
    if isinstance(momentum, Tensor):
        momentum = momentum.to(running.dtype)
    return running * (1 - momentum) + batch * momentum


# ---- the eager routines: the composites' NumPy calls, temporaries reused -------------------------

# Set by codegen (codegen/cpu/channels.py, installed by codegen/__init__.py):
# NATIVE(name, elements, channels) -> the outputs of one of its loops over (N, C, *) arrays with
# a value per channel, or None where it does not take these arrays. Each loop makes the float
# operations of the NumPy calls it stands for, in their order, so the results are their bits.
NATIVE = None


def _native(name: str, elements: list, channels: list):
    if NATIVE is None:
        return None
    return NATIVE(name, elements, channels)


def _vector(array: np.ndarray) -> np.ndarray:
    """A per-channel (1, C, 1, ...) array as (C,)."""
    return array.reshape(array.shape[1])


def _statistics_impl(x: np.ndarray) -> np.ndarray:
    axes, count, channels = _axes(x.ndim), _count(x.shape), x.shape[1]
    result = np.empty((2, channels), x.dtype)
    mean = np.true_divide(sum_array(x, axes, True), count)
    native = _native("squares", [x], [_vector(mean)])
    if native is not None:
        (squares,) = native
    else:
        centered = np.subtract(x, mean)
        squares = np.multiply(centered, centered, out=centered)
    np.true_divide(sum_array(squares, axes, True).reshape(channels), count, out=result[1])
    result[0] = mean.reshape(channels)
    return result


def _centered_and_scale_arrays(x: np.ndarray, statistics: np.ndarray, eps: float):
    centered = np.subtract(x, _per_channel(statistics[0], x.ndim))
    scale = np.true_divide(1, np.sqrt(np.add(_per_channel(statistics[1], x.ndim), eps)))
    return centered, scale


def _scale_array(x: np.ndarray, statistics: np.ndarray, eps: float) -> np.ndarray:
    return np.true_divide(1, np.sqrt(np.add(_per_channel(statistics[1], x.ndim), eps)))


def _normalized_impl(x: np.ndarray, statistics: np.ndarray, weight, bias,
                     eps: float) -> np.ndarray:
    weighted, biased = _given(weight), bias.__class__ is not float or bias != 0.0
    if NATIVE is not None:
        name = "normalize" + "_weight" * weighted + "_bias" * biased
        channels = [statistics[0], _vector(_scale_array(x, statistics, eps))]
        channels += [weight] * weighted + [bias] * biased
        native = _native(name, [x], channels)
        if native is not None:
            return native[0]
    result, scale = _centered_and_scale_arrays(x, statistics, eps)
    np.multiply(result, scale, out=result)
    if _given(weight):
        np.multiply(result, _per_channel(weight, x.ndim), out=result)
    if bias.__class__ is not float or bias != 0.0:
        np.add(result, _per_channel(bias, x.ndim), out=result)
    return result


def _backward_impl(grad: np.ndarray, x: np.ndarray, statistics: np.ndarray, weight,
                   eps: float) -> np.ndarray:
    axes, count = _axes(x.ndim), _count(x.shape)
    if NATIVE is not None:
        native = _native_backward(grad, x, statistics, weight, eps, axes, count)
        if native is not None:
            return native
    if _given(weight):
        grad = np.multiply(grad, _per_channel(weight, x.ndim))
    centered, scale = _centered_and_scale_arrays(x, statistics, eps)
    mean_grad = np.true_divide(sum_array(grad, axes, True), count)
    scratch = np.multiply(grad, centered)
    moment = np.true_divide(sum_array(scratch, axes, True), count)
    result = np.subtract(grad, mean_grad, out=scratch)
    np.multiply(result, scale, out=result)
    np.multiply(centered, scale * scale * scale * moment, out=centered)
    return np.subtract(result, centered, out=result)


def _native_backward(grad: np.ndarray, x: np.ndarray, statistics: np.ndarray, weight,
                     eps: float, axes: tuple, count: int):
    """_backward_impl's result in two native passes (the same operations), or None."""
    mean = statistics[0]
    if _given(weight):
        terms = _native("moment_terms_weight", [grad, x], [mean, weight])
        if terms is None:
            return None
        grad, scratch = terms
    else:
        terms = _native("moment_terms", [grad, x], [mean])
        if terms is None:
            return None
        (scratch,) = terms
    scale = _scale_array(x, statistics, eps)
    mean_grad = np.true_divide(sum_array(grad, axes, True), count)
    moment = np.true_divide(sum_array(scratch, axes, True), count)
    factor = scale * scale * scale * moment
    result = _native("normalization_backward", [grad, x],
                     [mean, _vector(mean_grad), _vector(scale), _vector(factor)])
    return None if result is None else result[0]


def _update_impl(x: np.ndarray, statistics: np.ndarray, running: np.ndarray, momentum,
                 variance: bool) -> np.ndarray:
    batch = statistics[1 if variance else 0].astype(running.dtype, copy=False)
    if variance:
        count = _count(x.shape)
        batch = np.multiply(batch, count / (count - 1))
    return np.add(np.multiply(running, 1 - momentum), np.multiply(batch, momentum))


# ---- the primitives ---------------------------------------------------------------------------

def _backward(grad: Tensor, x: Tensor, statistics: Tensor, weight, eps: float) -> Tensor:
    return bind(BATCH_NORM_BACKWARD, (grad, x, statistics, weight), {"eps": eps})


def _normalized(x: Tensor, statistics: Tensor, eps: float) -> Tensor:
    return bind(BATCH_NORM, (x, statistics, 1.0, 0.0), {"eps": eps})


def _total(terms: list):
    if not terms:
        return None
    result = terms[0]
    for term in terms[1:]:
        result = result + term
    return result


def _batch_norm_vjp(ctx, g):
    x, statistics, weight, _ = ctx.inputs
    eps, needs, axes = ctx.attrs["eps"], ctx.needs_input_grad, _axes(g.ndim)
    return (_backward(g, x, statistics, weight, eps) if needs[0] else None,
            None,
            sum_(g * _normalized(x, statistics, eps), axes) if needs[2] else None,
            sum_(g, axes) if needs[3] else None)


def _batch_norm_jvp(inputs, tangents, out, attrs):
    x, statistics, weight, _ = inputs
    x_tangent, _, weight_tangent, bias_tangent = tangents
    eps, terms = attrs["eps"], []
    if x_tangent is not None:
        terms.append(_backward(x_tangent, x, statistics, weight, eps))
    if weight_tangent is not None:
        terms.append(_per_channel(weight_tangent, x.ndim) * _normalized(x, statistics, eps))
    if bias_tangent is not None:
        terms.append(_per_channel(bias_tangent, x.ndim))
    return _total(terms)


def _moved(grad: Tensor, x: Tensor, statistics: Tensor, weight, direction: Tensor,
           eps: float) -> Tensor:
    """d (w J(x) grad) / d x contracted with direction: normalization.py's input_part, times
    w (per channel, so w may be applied to the direction or to the result alike)."""
    part = input_part(grad, x, direction, _axes(x.ndim), eps,
                      lambda v: _backward(v, x, statistics, 1.0, eps))
    return part * _per_channel(weight, x.ndim) if _given(weight) else part


def _backward_vjp(ctx, u):
    grad, x, statistics, weight = ctx.inputs
    eps, needs = ctx.attrs["eps"], ctx.needs_input_grad
    return (_backward(u, x, statistics, weight, eps) if needs[0] else None,
            _moved(grad, x, statistics, weight, u, eps) if needs[1] else None,
            None,
            sum_(u * _backward(grad, x, statistics, 1.0, eps), _axes(x.ndim))
            if needs[3] else None)


def _backward_jvp(inputs, tangents, out, attrs):
    grad, x, statistics, weight = inputs
    grad_tangent, x_tangent, _, weight_tangent = tangents
    eps, terms = attrs["eps"], []
    if grad_tangent is not None:
        terms.append(_backward(grad_tangent, x, statistics, weight, eps))
    if x_tangent is not None:
        terms.append(_moved(grad, x, statistics, weight, x_tangent, eps))
    if weight_tangent is not None:
        terms.append(_per_channel(weight_tangent, x.ndim) *
                     _backward(grad, x, statistics, 1.0, eps))
    return _total(terms)


BATCH_NORM_STATISTICS = define_op(
    name="batch_norm_statistics", arity=1, shape=_statistics_shape,
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype), impl=_statistics_impl,
    vjp=NOT_DIFFERENTIABLE, saves=(), lowering=Decomposition(_statistics_composite))
BATCH_NORM = define_op(
    name="batch_norm", arity=4, shape=_normalized_shape, dtype=_dtype,
    impl=_normalized_impl, vjp=_batch_norm_vjp, saves=(0, 1, (2, 0)),
    lowering=Decomposition(_normalized_composite), jvp=_batch_norm_jvp,
    grad_name="NativeBatchNormBackward0")
BATCH_NORM_BACKWARD = define_op(
    name="batch_norm_backward", arity=4, shape=_backward_shape, dtype=_dtype,
    impl=_backward_impl, vjp=_backward_vjp, saves=(0, 1, 2, 3),
    lowering=Decomposition(_backward_composite), jvp=_backward_jvp,
    grad_name="NativeBatchNormBackwardBackward0")
BATCH_NORM_UPDATE = define_op(
    name="batch_norm_update", arity=4, shape=_update_shape, dtype=_update_dtype,
    impl=_update_impl, vjp=NOT_DIFFERENTIABLE, saves=(), uncast=(0, 1),
    lowering=Decomposition(_update_composite))


def batch_statistics(x: Tensor) -> Tensor:
    """The mean and biased variance of each channel (dim 1) of x over its other dims, stacked
    as (2, C): the operand of batch_norm_training and running_statistics."""
    return bind(BATCH_NORM_STATISTICS, (x,), {})


def batch_norm_training(x: Tensor, statistics: Tensor, weight, bias, eps: float) -> Tensor:
    """Normalize each channel of x by its batch statistics (`batch_statistics(x)`), then
    weight and bias per channel (None for none), for nn.functional.batch_norm, which checks
    the operands."""
    return bind(BATCH_NORM, (x, statistics, 1.0 if weight is None else weight,
                             0.0 if bias is None else bias), {"eps": float(eps)})


def running_statistic(x: Tensor, statistics: Tensor, running: Tensor, momentum,
                      variance: bool) -> Tensor:
    """The running mean (or, with `variance`, variance) after the batch x, whose statistics
    (`batch_statistics(x)`) are given."""
    return bind(BATCH_NORM_UPDATE, (x, statistics, running, momentum),
                {"variance": variance})
