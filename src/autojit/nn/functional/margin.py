"""The multi-class margin losses of autojit.nn.functional: multi_margin_loss and
multilabel_margin_loss.

Both compare each sample's target score with every other class's through a one-hot mask
(class ids compared with the targets), a composite of autojit ops. torch's backward counts a
hinge only where it is strictly positive, so each hinge is a `where(z > 0, z, 0)` rather than a
clamp (whose gradient passes at the bound). nn/functional/__init__.py re-exports this module and
nn/loss/extra.py wraps it in modules.
"""

from __future__ import annotations

from ...ops import elementwise as ew
from ...ops.autocast import FP32, autocast_op
from ...ops.indexing.checks import check_index
from ...ops.reduction import sum_
from ...tensor import dtypes
from ...tensor.creation import arange
from ...tensor.tensor import Tensor
from .common import as_operand, check_reduction, check_tensor, legacy_reduction
from .common import reduce_loss as _reduce

__all__ = ["multi_margin_loss", "multilabel_margin_loss"]


def _hinge(z: Tensor) -> Tensor:
    return ew.where(z > 0, z, 0)


def _as_batch(input: Tensor) -> Tensor:  # noqa: A002
    """(samples, classes): a vector is one sample, a 0-d tensor one sample of one class."""
    if input.ndim == 0:
        return input.reshape(1, 1)
    return input.reshape(1, input.shape[0]) if input.ndim == 1 else input


def _check_scores(input: Tensor) -> None:  # noqa: A002
    """torch's check of both losses' input: a non-empty vector or matrix, or a 0-d tensor."""
    if not (input.ndim == 0 or (input.ndim in (1, 2) and input.shape[-1] != 0)):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")


@autocast_op(cpu=FP32, cuda=FP32)
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,  # noqa: A002
                      weight=None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """Per sample, the mean over classes j != y of max(0, margin - x[y] + x[j])^p, times
    weight[y]."""
    check_tensor("multi_margin_loss", "input", input)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None:
        weight = as_operand(weight)
        if weight.ndim != 1:
            raise ValueError("weight must be one-dimensional")
    _check_scores(input)
    samples = 1 if input.ndim <= 1 else input.shape[0]
    if weight is not None:
        classes = 1 if input.ndim == 0 else input.shape[-1]
        if weight.numel() != classes:
            raise RuntimeError(f"inconsistent weight size, expected {classes} but got "
                               f"{list(weight.shape)}")
    if input.ndim == 2 and (target.ndim != 1 or target.shape[0] != samples):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{samples}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if target.dtype is not dtypes.int64:
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{dtypes.scalar_type_name(target.dtype)}")
    scores = _as_batch(input)
    classes = scores.shape[1]
    target = check_index(target, classes, "margin_target")
    is_target = arange(classes, device=input.device) == target.reshape(samples, 1)
    target_score = sum_(ew.where(is_target, scores, 0), 1, keepdim=True)
    hinge = ew.where(is_target, 0, _hinge(margin - target_score + scores))
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        weight = weight.to(input.dtype)
        hinge = hinge * sum_(ew.where(is_target, weight, 0), 1, keepdim=True)
    loss = sum_(hinge, 1) / classes
    if input.ndim <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@autocast_op(cpu=FP32, cuda=FP32)
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None,  # noqa: A002
                           reduce=None, reduction: str = "mean") -> Tensor:
    """Per sample, the sum over its target classes j (the entries before the first -1) and
    the other classes c of max(0, 1 - (x[j] - x[c])), divided by the class count."""
    check_tensor("multilabel_margin_loss", "input", input)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    _check_scores(input)
    if input.ndim <= 1:
        consistent = target.ndim <= 1 and target.numel() == (input.shape[0] if input.ndim else 1)
    else:
        consistent = tuple(target.shape) == tuple(input.shape)
    if not consistent:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if target.dtype is not dtypes.int64:  # (a float target's classes were compared as floats)
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{dtypes.scalar_type_name(target.dtype)}")
    scores, targets = _as_batch(input), _as_batch(target).reshape(tuple(_as_batch(input).shape))
    classes = scores.shape[1]
    # every entry, those after the first -1 too, as torch's check (out-of-range classes were
    # left out of the sum); traced, the compiled function checks them on every call
    targets = check_index(targets, classes, "multilabel_target", ignore=-1)
    # The targets of a sample run up to its first -1.
    valid = (targets == -1).to(dtypes.int64).cumsum(-1) == 0
    picks = targets.unsqueeze(-1) == arange(classes, device=input.device)  # (N, J, C)
    picks = picks & valid.unsqueeze(-1)
    target_scores = sum_(ew.where(picks, scores.unsqueeze(1), 0), -1)  # (N, J)
    is_target_class = sum_(picks.to(dtypes.int64), 1) > 0  # (N, C)
    z = 1 - target_scores.unsqueeze(-1) + scores.unsqueeze(1)
    counted = valid.unsqueeze(-1) & ~is_target_class.unsqueeze(1)
    loss = sum_(ew.where(counted, _hinge(z), 0), (1, 2)) / classes
    if input.ndim <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)
