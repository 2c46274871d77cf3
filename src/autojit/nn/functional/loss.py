"""The distribution, margin and embedding losses of autojit.nn.functional: kl_div,
poisson_nll_loss, gaussian_nll_loss, soft_margin_loss, multilabel_soft_margin_loss,
hinge_embedding_loss, margin_ranking_loss, cosine_embedding_loss, triplet_margin_loss and
triplet_margin_with_distance_loss.

Each follows torch's formula op for op (so values, gradients and the kinks of its clamps are
torch's) as a composite of autojit ops; the argument checks and messages are torch's.
nn/functional/__init__.py re-exports this module and nn/loss/extra.py wraps it in modules.
"""

from __future__ import annotations

import math
import warnings

from ...autograd.grad_mode import is_grad_enabled
from ...ops import composite
from ...ops import elementwise as ew
from ...ops.autocast import FP32, autocast_op
from ...ops.reduction import sum_
from ...tensor import dtypes
from ...tensor.creation import ones_like
from ...tensor.tensor import Tensor
from .activation import logsigmoid
from .common import (
    as_operand,
    check_reduction,
    check_tensor,
    legacy_reduction,
    reduce_loss,
)
from .distance import pairwise_distance

__all__ = ["kl_div", "poisson_nll_loss", "gaussian_nll_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "hinge_embedding_loss", "margin_ranking_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss"]


def _xlogy_self(value: Tensor) -> Tensor:
    """value * log(value), 0 where value is 0 (torch's xlogy(t, t))."""
    zero = value == 0
    return ew.where(zero, 0, value * ew.log(ew.where(zero, 1, value)))


@autocast_op(cpu=FP32, cuda=FP32)
def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """The pointwise KL divergence target * (log(target) - input), input being
    log-probabilities (target too with log_target=True); "batchmean" divides by the batch."""
    check_tensor("kl_div", "input", input)
    target = as_operand(target)
    if input.dtype.is_complex or (isinstance(target, Tensor) and target.dtype.is_complex):
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", UserWarning, stacklevel=2)
    if reduction != "batchmean":
        check_reduction(reduction)
    if not input.dtype.is_floating_point or (isinstance(target, Tensor) and not (
            target.dtype.is_floating_point or target.dtype.is_complex)):
        # (an integer target gave a loss of 0: x log x of integers, 0 * log 0 taken as 0)
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = ew.exp(target) * (target - input)
    else:
        loss = _xlogy_self(target) - target * input
    if reduction == "batchmean":
        total = sum_(loss)
        return total / input.shape[0] if input.ndim else total
    return reduce_loss(loss, reduction)


@autocast_op(cpu=FP32, cuda=FP32)
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,  # noqa: A002
                     full: bool = False, size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """The Poisson negative log-likelihood exp(input) - target * input (log_input), or
    input - target * log(input + eps); full adds Stirling's term where target > 1."""
    check_tensor("poisson_nll_loss", "input", input)
    target = as_operand(target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = ew.exp(input) - target * input
    else:
        loss = input - target * ew.log(input + eps)
    if full:
        stirling = (target * ew.log(target) - target
                    + 0.5 * ew.log(2 * math.pi * target))
        loss = loss + ew.where(target <= 1, 0, stirling)
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False,  # noqa: A002
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """0.5 * (log(var) + (input - target)^2 / var), var clamped below at eps in value (its
    gradient flows unclamped, as torch's); var may be one dim short or broadcast in one dim."""
    check_tensor("gaussian_nll_loss", "input", input)
    target = as_operand(target)
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ones_like(input) * var
    else:
        var = as_operand(var)
        if not var.is_symbolic and bool((var.detach() < 0).cpu().numpy().any()):
            raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.ndim == var.ndim and sum(
                b for a, b in zip(input.shape, var.shape) if a != b) == 1:
            pass  # broadcast along the one dim where var has size 1
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if not (var.dtype.is_floating_point or var.dtype.is_complex):
        # torch clamps a copy of var to eps in place (it computed an integer var in floats)
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{dtypes.c_type_name(var.dtype)}")
    detached = var.detach()
    var = var + (composite.clamp(detached, min=eps) - detached)
    loss = 0.5 * (ew.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


@autocast_op(cpu=FP32, cuda=FP32)
def soft_margin_loss(input: Tensor, target: Tensor, size_average=None,  # noqa: A002
                     reduce=None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)), targets +-1."""
    check_tensor("soft_margin_loss", "input", input)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    target = as_operand(target)
    if not (input.dtype.is_floating_point or input.dtype.is_complex or
            input.dtype is dtypes.bool_):  # (a bool input's negation raises below, as torch's)
        # torch's result has the input's dtype (it computed an integer input's loss in floats)
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{dtypes.scalar_type_name(input.dtype)}")
    if target.requires_grad and is_grad_enabled():  # torch's derivative has no target term
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    return reduce_loss(ew.log1p(ew.exp(-input * target)), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None,  # noqa: A002
                                size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """The mean over classes of the binary cross entropy of sigmoid(input) with 0/1 targets."""
    check_tensor("multilabel_soft_margin_loss", "input", input)
    reduction = legacy_reduction(size_average, reduce, reduction)
    target = as_operand(target)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * as_operand(weight)
    class_dim = input.ndim - 1
    loss = sum_(loss, class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return reduce_loss(loss, reduction)


@autocast_op(cpu=FP32, cuda=FP32)
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """x where target is 1, max(0, margin - x) where target is -1."""
    check_tensor("hinge_embedding_loss", "input", input)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    target = as_operand(target)
    margin_part = ew.where(target != 1, composite.clamp(margin - input, min=0), 0)
    self_part = ew.where(target != -1, input, 0)
    return reduce_loss(margin_part + self_part, reduction)


@autocast_op(cpu=FP32, cuda=FP32)
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    target = as_operand(target)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {_size(input1)}, input2: {_size(input2)}, "
                           f"target: {_size(target)} ")
    loss = composite.clamp(-target * (input1 - input2) + margin, min=0)
    return reduce_loss(loss, reduction)


def _size(tensor: Tensor) -> str:
    return f"torch.Size({list(tensor.shape)})"


def _sizes(tensor: Tensor) -> str:
    return "[" + ", ".join(str(n) for n in tensor.shape) + "]"


@autocast_op(cpu=FP32, cuda=FP32)
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    target = as_operand(target)
    if target.ndim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.ndim == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {_sizes(input1)} and {_sizes(input2)}.")
    if target.ndim == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {_sizes(input1)} and {_sizes(input2)}.")
    dim = target.ndim
    # torch's EPSILON keeps the denominator of a zero vector positive.
    product = sum_(input1 * input2, dim)
    square1 = sum_(input1 * input1, dim) + 1e-12
    square2 = sum_(input2 * input2, dim) + 1e-12
    cosine = product / ew.sqrt(square1 * square2)
    positive = ew.where(target == 1, 1 - cosine, 0)
    negative = ew.where(target == -1, composite.clamp(cosine - margin, min=0), 0)
    return reduce_loss(positive + negative, reduction)


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.ndim}D, positive "
                           f"{positive.ndim}D, and negative {negative.ndim}D inputs")


@autocast_op(cpu=FP32, cuda=FP32)
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance;
    swap takes the smaller of d(anchor, negative) and d(positive, negative)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance_positive = pairwise_distance(anchor, positive, p, eps)
    distance_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        distance_negative = ew.minimum(distance_negative,
                                       pairwise_distance(positive, negative, p, eps))
    loss = composite.clamp(margin + distance_positive - distance_negative, min=0)
    return reduce_loss(loss, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """triplet_margin_loss with any distance function (pairwise_distance when None)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = distance_function if distance_function is not None else pairwise_distance
    distance_positive = distance(anchor, positive)
    distance_negative = distance(anchor, negative)
    if swap:
        distance_negative = ew.minimum(distance_negative, distance(positive, negative))
    loss = composite.clamp(margin + distance_positive - distance_negative, min=0)
    return reduce_loss(loss, reduction)
