"""The connectionist temporal classification loss of autojit.nn.functional, ctc_loss (its module,
CTCLoss, is in nn/loss/extra.py).

The composite runs the forward (alpha) recursion of CTC in log space with a Python loop over
time in autojit ops, on the targets extended with blanks (blank, l1, blank, l2, ..., blank), so
autograd gives the gradient; a sample's result is read at its own last frame and its own last
two extended positions. torch's gradient with respect to log_probs holds an extra exp(log_probs)
term on every frame inside the input length (its formula folds in the softmax Jacobian,
assuming log_probs is a log_softmax); a zero-valued term with that gradient is added, so the
gradient is torch's, and the two agree after a log_softmax. Padded (N, S) targets may be graph
data; concatenated 1-D targets and the lengths are read from concrete data (a graph input there
breaks the graph).
"""

from __future__ import annotations

import numpy as np

from ...ops import elementwise as ew
from ...ops.autocast import FP32, autocast_op
from ...ops.layout import cat, stack
from ...ops.reduction import amax, sum_
from ...tensor import dtypes
from ...tensor.creation import arange, as_tensor
from ...tensor.tensor import Tensor
from .common import check_tensor

__all__ = ["ctc_loss"]

_NEGATIVE_INFINITY = float("-inf")


def _log_add(*terms: Tensor) -> Tensor:
    """log(sum(exp(terms))), -inf where every term is -inf, with no NaN in its gradient."""
    top = terms[0].detach()
    for term in terms[1:]:
        top = ew.maximum(top, term.detach())
    empty = top == _NEGATIVE_INFINITY
    shift = ew.where(empty, 0, top)
    total = terms[0] - shift
    total = ew.exp(total)
    for term in terms[1:]:
        total = total + ew.exp(term - shift)
    return ew.where(empty, _NEGATIVE_INFINITY, shift + ew.log(ew.where(empty, 1, total)))


def _lengths(values) -> np.ndarray:
    if isinstance(values, Tensor):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _padded_targets(targets, target_lengths: np.ndarray, device) -> Tensor:
    """(N, S) targets: a 2-D tensor as given (checked against the lengths where it has data),
    concatenated 1-D targets split by their lengths and padded (their data is needed)."""
    targets = targets if isinstance(targets, Tensor) else as_tensor(np.asarray(targets))
    longest = int(target_lengths.max()) if target_lengths.size else 0
    if targets.ndim == 2:
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension "
                               f"1, but got size {targets.shape[1]} for argument #2 'targets' "
                               f"(while checking arguments for ctc_loss_allocate_outputs)")
        return targets.to(dtypes.int64)
    values = targets.detach().cpu().numpy().astype(np.int64)
    padded = np.zeros((target_lengths.size, max(longest, 1)), dtype=np.int64)
    start = 0
    for sample, length in enumerate(target_lengths):
        padded[sample, :length] = values[start:start + length]
        start += length
    return as_tensor(padded, device=device)


@autocast_op(cpu=FP32)
def ctc_loss(log_probs: Tensor, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The negative log-likelihood of each target sequence under the per-frame class
    log-probabilities (T, N, C), summed over every alignment with blanks and repeats."""
    check_tensor("ctc_loss", "log_probs", log_probs)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if isinstance(targets, Tensor) else [targets]
    frames, samples, classes = log_probs.shape
    input_lengths = _lengths(input_lengths)
    target_lengths = _lengths(target_lengths)
    if input_lengths.size and input_lengths.max() > frames:
        raise RuntimeError(f"Expected input_lengths to have value at most {frames}, but got "
                           f"value {input_lengths.max()} (while checking arguments for "
                           f"ctc_loss_allocate_outputs)")
    padded = _padded_targets(targets, target_lengths, log_probs.device)
    # The extended labels: blank between and around the targets, built with autojit ops so
    # that padded targets may be graph data.
    width = 2 * padded.shape[1] + 1
    blanks = padded * 0 + blank
    extended = cat([stack([blanks, padded], 2).reshape(samples, width - 1),
                    blanks[:, :1]], 1)
    # A skip from s - 2 is allowed onto a label that differs from the label two back.
    no_skip = (padded[:, :1] * 0).expand(samples, 2) != 0
    skip_t = cat([no_skip, (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])],
                 1)
    choose_t = extended.unsqueeze(-1) == arange(classes, device=log_probs.device)  # (N, S', C)
    # Each frame's log-probabilities at the extended labels, (T, N, S'): the one-hot sum keeps
    # a -inf at another class out of the result.
    picked = sum_(ew.where(choose_t.unsqueeze(0), log_probs.unsqueeze(2), 0), 3)
    start = np.full((samples, width), _NEGATIVE_INFINITY)
    start[:, :2] = 0.0
    alpha = picked[0] + as_tensor(start, device=log_probs.device).to(log_probs.dtype)
    ends = np.zeros((frames, samples, 1), dtype=bool)
    ends[np.clip(input_lengths - 1, 0, None), np.arange(samples), 0] = input_lengths > 0
    final = as_tensor(np.full((samples, width), _NEGATIVE_INFINITY),
                      device=log_probs.device).to(log_probs.dtype)
    last_frames = as_tensor((input_lengths - 1).reshape(samples, 1), device=log_probs.device)
    padding = as_tensor(np.full((samples, 1), _NEGATIVE_INFINITY),
                        device=log_probs.device).to(log_probs.dtype)
    padding2 = as_tensor(np.full((samples, 2), _NEGATIVE_INFINITY),
                         device=log_probs.device).to(log_probs.dtype)
    for frame in range(frames):
        if frame:
            previous = cat([padding, alpha[:, :-1]], 1)
            two_back = ew.where(skip_t, cat([padding2, alpha[:, :-2]], 1), _NEGATIVE_INFINITY)
            alpha = _log_add(alpha, previous, two_back) + picked[frame]
        if ends[frame].any():
            # One constant for all frames, compared with the frame: its last frame per sample.
            final = ew.where(last_frames == frame, alpha, final)
    last = as_tensor((2 * target_lengths)[:, None], device=log_probs.device)
    positions = as_tensor(np.arange(width)[None, :], device=log_probs.device)
    tail = (positions == last) | ((positions == last - 1) & (last > 0))
    masked = ew.where(tail, final, _NEGATIVE_INFINITY)
    top = amax(masked.detach(), 1, keepdim=True)
    empty = top == _NEGATIVE_INFINITY
    shift = ew.where(empty, 0, top)
    total = sum_(ew.exp(masked - shift), 1, keepdim=True)
    likelihood = ew.where(empty, _NEGATIVE_INFINITY,
                          shift + ew.log(ew.where(empty, 1, total))).reshape(samples)
    loss = -likelihood
    # torch's gradient: + exp(log_probs) on every frame inside the input length.
    inside = as_tensor((np.arange(frames)[:, None] < input_lengths[None, :])[:, :, None],
                       device=log_probs.device)
    probabilities = ew.where(inside, ew.exp(log_probs), 0)
    loss = loss + sum_(probabilities - probabilities.detach(), (0, 2))
    if zero_infinity:
        loss = ew.where(loss == float("inf"), 0, loss)
    if reduction == "mean":
        divisor = as_tensor(np.maximum(target_lengths, 1), device=log_probs.device)
        return sum_(loss / divisor.to(loss.dtype)) / samples
    if reduction == "sum":
        return sum_(loss)
    return loss.reshape(()) if unbatched else loss
