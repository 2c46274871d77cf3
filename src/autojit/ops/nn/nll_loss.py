"""The negative log-likelihood of class-index targets as a pair of primitives: nll_loss and
its backward formula, torch's nll_loss_forward and nll_loss_backward.

`nll_loss(logp, target, weight)` with classes at dim 1 (dim 0 of a 1-D logp) takes
`-w[t] logp[t]` per target, 0 where the target is `ignore_index`, and reduces it: "none"
keeps the target's shape, "sum" adds, "mean" divides the sum by the total weight of the
targets kept (NaN when none is). weight is a (C,) tensor or the number 1.0 for none; the
target is checked against the class count first, with torch's error (ops/indexing/checks.py).

`nll_loss_backward(grad, target, weight)` is its derivative in logp: `-w[t] grad` at each
kept target's class (grad divided by the total weight under "mean"), zeros elsewhere. Both
are linear in their first operand and the derivative of one is the other: the VJP of
nll_loss_backward in grad is nll_loss of the upstream gradient, so any order differentiates.
Neither is differentiable in the target (indices) or the weight (torch refuses a weight that
requires grad: nn/functional/__init__.py raises its error).

Each has a Decomposition (ops/lowering.py): eagerly it is one NumPy routine, a gather or a
scatter at the targets, where the composite compares every class with the target (a one-hot
mask, `where` and a sum over the classes, which compiled kernels fuse); traced it is that
composite, with check_index for the range. nn.functional's nll_loss and cross_entropy
(after log_softmax) call it.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor.tensor import Tensor
from .. import elementwise as ew
from ..indexing.checks import check_index, index_error
from ..lowering import Decomposition
from ..reduction import sum_, sum_array
from ..registry import OpError, bind, define_op

_REDUCTIONS = ("none", "mean", "sum")


def _class_dim(ndim: int) -> int:
    return 0 if ndim == 1 else 1


# ---- shape and dtype rules ----------------------------------------------------------------------

def _check(shape, target, weight, reduction) -> None:
    if not shape:
        raise ValueError("expected an input of 1 or more dims, got a 0-d input")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    classes = shape[_class_dim(len(shape))]
    if tuple(weight) not in ((), (classes,)):
        raise ValueError(f"a weight of shape {list(weight)} for {classes} classes")
    expected = tuple(shape[:1]) + tuple(shape[2:]) if len(shape) > 1 else ()
    if tuple(target) != expected and not (len(shape) == 1 and tuple(target) == (1,)):
        raise ValueError(f"a target of shape {list(target)} for an input of shape "
                         f"{list(shape)}")


def _loss_shape(shape, target, weight, ignore_index, reduction):
    _check(shape, target, weight, reduction)
    return tuple(target) if reduction == "none" else ()


def _backward_shape(grad, target, weight, ignore_index, reduction, shape):
    _check(shape, target, weight, reduction)
    if tuple(grad) != (tuple(target) if reduction == "none" else ()):
        raise ValueError(f"a gradient of shape {list(grad)} for a target of shape "
                         f"{list(target)} and reduction {reduction!r}")
    return tuple(shape)


def _dtype(inputs, attrs):
    # The target (position 1, uncast) stays int64; a weight of another dtype is cast.
    dtype = inputs[0]._dtype
    return dtype, dtype


# ---- the composites compiled code runs ----------------------------------------------------------

def _one_hot(target: Tensor, classes: int, ndim: int):
    """Where each class (along the class dim of an ndim-D input) is its position's target."""
    class_dim = _class_dim(ndim)
    at_class = target.reshape(target.shape[:class_dim] + (1,) + target.shape[class_dim:]) \
        if ndim > 1 else target.reshape(1)
    shape = [1] * ndim
    shape[class_dim] = classes
    from ...tensor.creation import arange

    class_ids = arange(classes, device=target.device).reshape(shape)
    return class_ids == at_class, class_dim


def _target_weight(target: Tensor, weight, kept: Tensor, is_target: Tensor, class_dim: int,
                   dtype) -> Tensor:
    """w[t] at each kept target, 0 where it is ignored (1 for each kept one without weight)."""
    if weight.__class__ is float:
        return kept.to(dtype)
    shape = [1] * is_target.ndim
    shape[class_dim] = weight.shape[0]
    picked = sum_(ew.where(is_target, weight.to(dtype).reshape(shape), 0), class_dim)
    return ew.where(kept, picked.reshape(target.shape), 0)


def _loss_composite(logp: Tensor, target: Tensor, weight, ignore_index: int,
                    reduction: str) -> Tensor:
    class_dim = _class_dim(logp.ndim)
    target = check_index(target, logp.shape[class_dim], "target", ignore=ignore_index)
    is_target, _ = _one_hot(target, logp.shape[class_dim], logp.ndim)
    kept = target != ignore_index
    picked = sum_(ew.where(is_target, logp, 0), class_dim)
    if logp.ndim == 1:
        picked = picked.reshape(target.shape)
    target_weight = _target_weight(target, weight, kept, is_target, class_dim, logp.dtype)
    loss = -(picked * target_weight)
    if reduction == "mean":
        return sum_(loss) / sum_(target_weight)
    return sum_(loss) if reduction == "sum" else loss


def _backward_composite(grad: Tensor, target: Tensor, weight, ignore_index: int,
                        reduction: str, shape: tuple) -> Tensor:
    is_target, class_dim = _one_hot(target, shape[_class_dim(len(shape))], len(shape))
    kept = target != ignore_index
    target_weight = _target_weight(target, weight, kept, is_target, class_dim, grad.dtype)
    if reduction == "mean":
        grad = grad / sum_(target_weight)
    values = -target_weight * grad
    values = values.reshape(is_target.shape[:class_dim] + (1,) + is_target.shape[class_dim + 1:])
    kept = kept.reshape(values.shape)
    return ew.where(is_target & kept, values, 0)


# ---- the eager routines --------------------------------------------------------------------------

def _targets(target: np.ndarray, classes: int, ignore_index: int):
    """The target with ignored entries at class 0, and where the target is kept (None when
    all are), after torch's range check."""
    if target.size:
        low, high = int(np.minimum.reduce(target, None)), int(np.maximum.reduce(target, None))
        if not (0 <= low and high < classes):
            error = index_error(target, classes, "target", 0, False, ignore_index)
            if error is not None:
                raise OpError(error)
        elif not low <= ignore_index <= high:
            return target, None  # in range, and none is ignored
    kept = np.not_equal(target, ignore_index)
    return np.where(kept, target, 0), kept


def _weights(safe: np.ndarray, kept, weight, dtype) -> np.ndarray:
    if weight.__class__ is float:
        return np.ones(safe.shape, dtype) if kept is None else kept.astype(dtype)
    picked = weight[safe]
    return picked if kept is None else np.where(kept, picked, 0).astype(dtype, copy=False)


def _unit_weights(safe: np.ndarray, kept, weight, dtype) -> bool:
    """Whether every target's weight is 1 (no class weights, none ignored) in a float32 or
    float64 loss of at most 2^24 targets: a product with a weight is then the value itself
    and the weights' sum is the count, exactly, so the routines skip making them."""
    return weight.__class__ is float and kept is None and dtype.kind == "f" and \
        dtype.itemsize >= 4 and safe.size <= 1 << 24


def _positions(safe: np.ndarray, shape: tuple) -> np.ndarray:
    """Where each target's class lies in a row-major array of `shape` (classes at dim 1, or
    at dim 0 of a vector): one flat index per target."""
    if len(shape) == 1:
        return safe
    classes, inner = shape[1], math.prod(shape[2:])
    if inner == 1:
        return np.arange(0, safe.size * classes, classes).reshape(safe.shape) + safe
    flat = np.arange(safe.size).reshape(safe.shape)
    return (flat // inner) * (classes * inner) + flat % inner + safe * inner


def _loss_impl(logp: np.ndarray, target: np.ndarray, weight, ignore_index: int,
               reduction: str) -> np.ndarray:
    class_dim = _class_dim(logp.ndim)
    safe, kept = _targets(target, logp.shape[class_dim], ignore_index)
    picked = logp.reshape(-1)[_positions(safe, logp.shape)]
    if _unit_weights(safe, kept, weight, logp.dtype):
        loss = np.negative(picked)
        if reduction == "none":
            return loss
        total = sum_array(loss, tuple(range(loss.ndim)), False)
        if reduction == "sum":
            return total
        return np.true_divide(total, logp.dtype.type(safe.size))
    if kept is not None:
        picked = np.where(kept, picked, 0).astype(logp.dtype, copy=False)
    target_weight = _weights(safe, kept, weight, logp.dtype)
    loss = np.negative(np.multiply(picked, target_weight))
    if reduction == "none":
        return loss
    total = sum_array(loss, tuple(range(loss.ndim)), False)
    if reduction == "sum":
        return total
    return np.true_divide(total, sum_array(target_weight, tuple(range(loss.ndim)), False))


def _backward_impl(grad: np.ndarray, target: np.ndarray, weight, ignore_index: int,
                   reduction: str, shape: tuple) -> np.ndarray:
    safe, kept = _targets(target, shape[_class_dim(len(shape))], ignore_index)
    if _unit_weights(safe, kept, weight, grad.dtype):
        if reduction == "mean":
            grad = np.true_divide(grad, grad.dtype.type(safe.size))
        result = np.zeros(shape, grad.dtype)
        result.reshape(-1)[_positions(safe, shape)] = np.negative(grad)
        return result
    target_weight = _weights(safe, kept, weight, grad.dtype)
    if reduction == "mean":
        grad = np.true_divide(grad, sum_array(target_weight, tuple(range(safe.ndim)), False))
    values = np.multiply(np.negative(target_weight), grad)
    if kept is not None:
        values = np.where(kept, values, 0).astype(grad.dtype, copy=False)
    result = np.zeros(shape, grad.dtype)
    result.reshape(-1)[_positions(safe, shape)] = values
    return result


# ---- the primitives ---------------------------------------------------------------------------

def _attrs(attrs: dict) -> dict:
    return {"ignore_index": attrs["ignore_index"], "reduction": attrs["reduction"]}


def _loss_vjp(ctx, g):
    # Only logp is differentiable, so its meta (shape, dtype) is known: the VJP runs for it.
    _, target, weight = ctx.inputs
    return (bind(NLL_LOSS_BACKWARD, (g, target, weight),
                 {**ctx.attrs, "shape": tuple(ctx.input_meta[0][0])}), None, None)


def _backward_vjp(ctx, u):
    _, target, weight = ctx.inputs
    return (bind(NLL_LOSS, (u, target, weight), _attrs(ctx.attrs)), None, None)


NLL_LOSS = define_op(
    name="nll_loss", arity=3, shape=_loss_shape, dtype=_dtype, impl=_loss_impl,
    vjp=_loss_vjp, saves=(1, 2), uncast=(1,), lowering=Decomposition(_loss_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else bind(
        NLL_LOSS, (tangents[0], inputs[1], inputs[2]), attrs),
    grad_name="NllLossBackward0",
    # (no weight is the number 1.0 here, None in torch)
    saved_names={"target": 1, "weight": lambda ctx, saved, raw: saved(2)})
NLL_LOSS_BACKWARD = define_op(
    name="nll_loss_backward", arity=3, shape=_backward_shape, dtype=_dtype,
    impl=_backward_impl, vjp=_backward_vjp, saves=(1, 2), uncast=(1,),
    lowering=Decomposition(_backward_composite),
    jvp=lambda inputs, tangents, out, attrs: None if tangents[0] is None else bind(
        NLL_LOSS_BACKWARD, (tangents[0], inputs[1], inputs[2]), attrs),
    grad_name="NllLossBackwardBackward0")


def nll(log_probabilities: Tensor, target: Tensor, weight, ignore_index: int,
        reduction: str) -> Tensor:
    """The negative log-likelihood of class-index targets (int64) given log-probabilities with
    classes at dim 1 (dim 0 of a 1-D input), for nn.functional's nll_loss and cross_entropy,
    which check the shapes; weight a (C,) tensor or None."""
    return bind(NLL_LOSS, (log_probabilities, target, 1.0 if weight is None else weight),
                {"ignore_index": int(ignore_index), "reduction": reduction})

