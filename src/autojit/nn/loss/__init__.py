"""The loss modules: CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, SmoothL1Loss, HuberLoss,
BCELoss and BCEWithLogitsLoss (the distribution, margin and embedding loss modules are in
extra.py, LinearCrossEntropyLoss in linear_cross_entropy.py).

Each holds its options (reduction, and class weights as a buffer where the loss takes them, so
they follow the module in state_dict) and calls the functional form in nn/functional/__init__.py.
The legacy size_average and reduce arguments are still read, with a warning, and turned into the
equivalent reduction.
"""

from __future__ import annotations

import warnings

from .. import functional as F
from ..module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "NLLLoss2d", "MSELoss", "L1Loss", "SmoothL1Loss",
           "HuberLoss", "BCELoss", "BCEWithLogitsLoss"]


def _legacy_reduction(size_average, reduce) -> str:
    """The reduction named by the legacy (size_average, reduce) pair; None means True."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else ("mean" if size_average else "sum")
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", UserWarning, stacklevel=4)
    return reduction


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits (N, C, *) against class indices (N, *) or probabilities.

        >>> import autojit
        >>> loss = autojit.nn.CrossEntropyLoss(label_smoothing=0.1)
        >>> loss
        CrossEntropyLoss()
        >>> round(loss(autojit.zeros(2, 4), autojit.tensor([1, 3])).item(), 4)
        1.3863
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):  # noqa: A002
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities (N, C, *) against class indices (N, *).

        >>> import autojit
        >>> log_probabilities = autojit.nn.functional.log_softmax(autojit.zeros(2, 4), dim=1)
        >>> round(autojit.nn.NLLLoss()(log_probabilities, autojit.tensor([1, 3])).item(), 4)
        1.3863
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """NLLLoss under its old name for (N, C, H, W) inputs (torch.nn.NLLLoss2d): the same
    loss, which takes any number of trailing dims."""


class MSELoss(_Loss):
    """Mean (or summed) squared error.

        >>> import autojit
        >>> autojit.nn.MSELoss(reduction="sum")(autojit.tensor([1.0, 2.0]),
        ...                                      autojit.tensor([0.0, 0.0])).item()
        5.0
    """

    def forward(self, input, target):  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean (or summed) absolute error.

        >>> import autojit
        >>> autojit.nn.L1Loss()(autojit.tensor([1.0, -2.0]), autojit.tensor([0.0, 0.0])).item()
        1.5
    """

    def forward(self, input, target):  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error (halved, over beta) below beta, absolute error minus beta / 2 above it.

        >>> import autojit
        >>> loss = autojit.nn.SmoothL1Loss(reduction="none")
        >>> loss(autojit.tensor([0.5, 3.0]), autojit.zeros(2))
        tensor([0.1250, 2.5000])
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Halved squared error below delta, delta * (absolute error - delta / 2) above it."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities in [0, 1]; each log is clamped at -100.

        >>> import autojit
        >>> loss = autojit.nn.BCELoss()
        >>> round(loss(autojit.tensor([0.5, 0.5]), autojit.tensor([1.0, 0.0])).item(), 4)
        0.6931
    """

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits, computed stably; pos_weight scales the positive term.

        >>> import autojit
        >>> loss = autojit.nn.BCEWithLogitsLoss()
        >>> round(loss(autojit.zeros(3), autojit.tensor([1.0, 0.0, 1.0])).item(), 4)
        0.6931
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)
