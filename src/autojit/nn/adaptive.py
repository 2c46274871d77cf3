"""AdaptiveLogSoftmaxWithLoss: torch's adaptive softmax (Grave et al., 2016, arXiv:1609.04309),
a log-softmax over many classes whose rare classes sit in clusters behind a smaller projection.

The head scores the `cutoffs[0]` frequent classes and one entry per cluster; a target in
cluster i adds the log-probability of its class within the cluster (a two-layer tail of
`in_features // div_value ** (i + 1)` hidden features) to the head's log-probability of the
cluster. torch evaluates each tail on the rows whose targets fall in it (a nonzero, so shapes
that depend on the data); here every tail runs on every row and `where` keeps the rows of its
cluster, so the forward is a fixed graph that compiles, and the gradients are torch's (a row
outside a cluster sends none to its tail). Parameters, names, initialization, the result
(`output`, `loss`), log_prob, predict and the errors are torch's.
"""

from __future__ import annotations

from collections import namedtuple

from ..ops import elementwise as ew
from ..ops.layout import cat
from ..tensor import dtypes
from ..tensor.tensor import Tensor
from .container import ModuleList, Sequential
from .functional.activation import log_softmax
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _size(tensor: Tensor) -> str:
    """A shape as torch's messages print it."""
    return f"torch.Size({list(tensor.shape)})"


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax over `n_classes` classes split at `cutoffs`: forward(input, target)
    gives (the target's log-probability for each row, the mean negative of it).

        >>> import autojit
        >>> autojit.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8], div_value=2.0)
        AdaptiveLogSoftmaxWithLoss(
          (head): Linear(in_features=8, out_features=6, bias=False)
          (tail): ModuleList(
            (0): Sequential(
              (0): Linear(in_features=8, out_features=4, bias=False)
              (1): Linear(in_features=4, out_features=4, bias=False)
            )
            (1): Sequential(
              (0): Linear(in_features=8, out_features=2, bias=False)
              (1): Linear(in_features=2, out_features=2, bias=False)
            )
          )
        )
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                Linear(hidden, size, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        target_dims = target_.dim()
        if target_dims == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {_size(input_)}")
        elif target_dims == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {_size(input_)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_dims > 0
        input = input_ if batched else input_.unsqueeze(0)  # noqa: A001
        target = target_ if batched else target_.unsqueeze(0)
        if not bool(((target >= 0) & (target < self.n_classes)).all()):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = log_softmax(self.head(input), dim=1)
        # The head's entry for each row: its class in the shortlist, else its cluster's.
        head_index = target
        output = None
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            in_cluster = (target >= low) & (target < high)
            head_index = ew.where(in_cluster, self.shortlist_size + i, head_index)
            relative = ew.where(in_cluster, target - low, 0).unsqueeze(1)
            cluster_logprob = log_softmax(self.tail[i](input), dim=1)
            local = cluster_logprob.gather(1, relative).squeeze(1)
            output = ew.where(in_cluster, local, 0.0 if output is None else output)
        chosen = head_logprob.gather(1, head_index.to(dtypes.int64).unsqueeze(1)).squeeze(1)
        output = chosen if output is None else output + chosen
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:  # noqa: A002
        """The log-probability of every class, from the input and the head's output."""
        head_logprob = log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob
                         + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """The log-probability of each of the n_classes classes: (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most probable class of each row: log_prob(input).argmax(1), with the head's
        argmax where it names a class of the shortlist (as torch's)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        full = self._get_full_log_prob(input, head_output).argmax(dim=1)
        return ew.where(not_in_shortlist, full, output)
