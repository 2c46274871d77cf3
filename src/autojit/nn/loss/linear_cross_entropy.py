"""LinearCrossEntropyLoss: a Linear layer to the logits and the cross entropy of them, as one
module (torch.nn.LinearCrossEntropyLoss), and LinearCrossEntropyOptions, the configuration of
torch's chunked implementation.

The layer's weight is kept flat, (C * prod(out_features), in_features), as torch keeps it, so
state dicts move between the two; forward reshapes it to (C, *out_features, in_features) and
calls nn.functional.linear_cross_entropy. autojit has one implementation, which makes the
logits: `options` is checked and kept, and changes nothing (a compiled step fuses the product
and the loss anyway).
"""

from __future__ import annotations

import dataclasses
import math

from .. import functional as F
from ..linear import Linear
from . import _WeightedLoss

_ACC_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """torch.nn.LinearCrossEntropyOptions: how torch's chunked linear_cross_entropy splits the
    batch and accumulates (its fields, defaults and checks); no effect here."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                name, factor = self.chunking_method, "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")


class LinearCrossEntropyLoss(_WeightedLoss):
    """The cross entropy of `linear(input)`'s logits against the target
    (torch.nn.LinearCrossEntropyLoss).

        >>> import autojit
        >>> loss = autojit.nn.LinearCrossEntropyLoss(4, 3)
        >>> loss.linear
        Linear(in_features=4, out_features=3, bias=False)
        >>> round(loss(autojit.zeros(2, 4), autojit.tensor([0, 2])).item(), 4)  # log(3)
        1.0986
    """

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (),
                 bias: bool = False, device=None, dtype=None, reduction: str = "mean",
                 weight=None, ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # kept flat, as torch's: Linear takes a matrix weight
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes),
                             bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):  # noqa: A002
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = self.linear.bias.reshape((self.num_classes, *self.out_features)) \
            if self.linear.bias is not None else None
        return F.linear_cross_entropy(
            input, linear_weight, target, linear_bias=linear_bias, weight=self.weight,
            reduction=self.reduction, ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
