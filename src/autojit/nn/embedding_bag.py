"""EmbeddingBag and F.embedding_bag: the sum, mean or max of the embeddings of each bag of ids,
without materializing the per-id lookup in the caller.

The composite looks the ids up with F.embedding (an index_select whose gradient is a
scatter-add), then reduces each bag through a (bags, ids) membership mask built by comparing
the id positions with the offsets, so the offsets may be graph data: a 2-D input is a batch of
fixed-length bags, a 1-D input is split at `offsets`. Ids equal to padding_idx are left out of
every bag (and of the mean's count); an empty bag gives zeros, as in torch. max_norm and
scale_grad_by_freq work as Embedding's (layer_functions.py): the rows the ids name are
renormalized in place before the lookup, and each row's gradient is divided by its id's count.
"""

from __future__ import annotations

import warnings

from ..autograd.grad_mode import no_grad
from ..ops import elementwise as ew
from ..ops.autocast import autocast_op
from ..ops.layout import cat
from ..ops.reduction import amax, sum_
from ..tensor import dtypes
from ..tensor.creation import arange, as_tensor, empty
from ..tensor.tensor import Tensor
from . import init
from .functional.common import check_tensor
from .layer_functions import embedding, renorm_rows_, scale_grad_by_frequency
from .module import Module
from .parameter import Parameter

__all__ = ["embedding_bag", "EmbeddingBag"]

_MODES = ("sum", "mean", "max")


def _bags(input: Tensor, offsets, include_last_offset: bool):  # noqa: A002
    """(flat ids, (bags, ids) membership mask)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        bags, length = input.shape
        positions = arange(bags * length, device=input.device).reshape(1, bags * length)
        starts = (arange(bags, device=input.device) * length).reshape(bags, 1)
        member = (positions >= starts) & (positions < starts + length)
        return input.reshape(bags * length), member
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    offsets = offsets if isinstance(offsets, Tensor) else as_tensor(offsets)
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    count = input.shape[0]
    end = as_tensor([count], device=input.device).to(offsets.dtype)
    if include_last_offset:
        starts, ends = offsets[:-1], offsets[1:]
    else:
        starts, ends = offsets, cat([offsets[1:], end])
    positions = arange(count, device=input.device).reshape(1, count)
    member = (positions >= starts.reshape(-1, 1)) & (positions < ends.reshape(-1, 1))
    return input, member


@autocast_op()  # one kernel in torch: its products and cat are not autocast
def embedding_bag(input: Tensor, weight: Tensor, offsets=None,  # noqa: A002
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max over each bag of the rows of weight at the bag's ids."""
    check_tensor("embedding_bag", "input", input)
    if weight.dtype is dtypes.int64 and input.dtype.is_floating_point:
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight  # noqa: A001 - torch still takes the old order
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}"
                         f") is not None, then it must have the same shape as the input "
                         f"({list(input.shape)})")
    ids, member = _bags(input, offsets, include_last_offset)
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += weight.shape[0]
        member = member & (ids != padding_idx).reshape(1, -1)
    if max_norm is not None:
        renorm_rows_(weight, ids, max_norm, norm_type)
    if sparse:  # weight's gradient a sparse tensor of the rows read
        from ..ops.sparse.gradients import embedding_rows

        rows = embedding_rows(weight, ids)
    else:
        rows = embedding(ids, weight)  # (ids, dim)
    if scale_grad_by_freq:
        rows = scale_grad_by_frequency(rows, ids, weight.shape[0])
    if mode == "max":
        picked = ew.where(member.unsqueeze(-1), rows.unsqueeze(0), float("-inf"))
        found = sum_(member.to(dtypes.int64), 1, keepdim=True) > 0
        return ew.where(found, amax(ew.where(found.unsqueeze(-1), picked, 0), 1), 0)
    weights = member.to(weight.dtype)
    if per_sample_weights is not None:
        weights = weights * per_sample_weights.reshape(1, -1).to(weight.dtype)
    total = weights @ rows
    if mode == "sum":
        return total
    count = sum_(member.to(weight.dtype), 1, keepdim=True)
    return total / ew.where(count > 0, count, 1)


class EmbeddingBag(Module):
    """A (num_embeddings, embedding_dim) table whose forward reduces each bag of ids to one
    vector (sum, mean or max)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None) -> None:
        super().__init__()
        if sparse:
            raise NotImplementedError("EmbeddingBag: sparse gradients are not supported by "
                                      "autojit (it has no sparse tensors)")
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < num_embeddings, "padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -num_embeddings, "padding_idx must be within num_embeddings"
                padding_idx = num_embeddings + padding_idx
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = padding_idx
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype,
                                          device=device))
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        """Draw the table from N(0, 1) and zero the padding row, as torch does."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):  # noqa: A002
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights=per_sample_weights,
                             include_last_offset=self.include_last_offset,
                             padding_idx=self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        text += f", mode='{self.mode}'"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text
