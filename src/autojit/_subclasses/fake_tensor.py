"""autojit._subclasses.fake_tensor: `is_fake(x)`, torch's test for a tensor without data that
stands for one while a graph is captured (a FakeTensor, under torch.compile or export). In
autojit that is a symbolic tensor of a trace (autojit.compile, make_graph): libraries ask so
that they skip reading values (kornia's checks of its inputs), which would break the graph."""

from __future__ import annotations

from ..tensor.tensor import Tensor

__all__ = ["is_fake"]


def is_fake(x: object) -> bool:
    """Whether `x` is a tensor with no data that a trace is capturing (a meta tensor is not:
    it is real, only without values, as in torch)."""
    return isinstance(x, Tensor) and x._data is None
