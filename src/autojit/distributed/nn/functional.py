"""Differentiable collectives, at torch.distributed.nn.functional's path: each returns a new
tensor and has a gradient, the adjoint collective (an all_reduce's is an all_reduce of the
gradients, an all_gather's a reduce_scatter), through the `collective` primitive
(ops/collective.py), eagerly and compiled alike.

>>> import autojit, autojit.distributed as dist
>>> from autojit.distributed.nn.functional import all_reduce
>>> dist.init_process_group()   # a world of one process
>>> x = autojit.tensor([1.0, 2.0], requires_grad=True)
>>> y = all_reduce(x * 3)
>>> y.sum().backward()
>>> x.grad
tensor([3., 3.])
>>> dist.destroy_process_group()
"""

from __future__ import annotations

from ...ops.collective import collective
from ...tensor.tensor import Tensor
from ..collectives import check_tensor, reduction_name
from ..process_group import ReduceOp, group_rank_of, resolve


def _group(group, what: str):
    found = resolve(group)
    if found is None:
        raise ValueError(f"{what}: this process is not a member of the group")
    return found


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None) -> Tensor:
    """The reduction of `tensor` across the group's processes (a new tensor)."""
    check_tensor(tensor, "tensor")
    found = _group(group, "all_reduce")
    name = reduction_name(op, tensor.dtype, "all_reduce")
    return collective(tensor, "all_reduce", name, group=found.number, world=found.size())


def broadcast(tensor: Tensor, src: int, group=None) -> Tensor:
    """Rank `src`'s `tensor`, on every process (a new tensor)."""
    check_tensor(tensor, "tensor")
    found = _group(group, "broadcast")
    root = group_rank_of(found, src, None, "src")
    return collective(tensor, "broadcast", root=root, group=found.number, world=found.size())


def all_gather(tensor: Tensor, group=None) -> tuple:
    """Every process's `tensor`, in rank order (a tuple of new tensors)."""
    check_tensor(tensor, "tensor")
    found = _group(group, "all_gather")
    gathered = collective(tensor.unsqueeze(0), "all_gather", group=found.number,
                          world=found.size())
    return tuple(gathered.unbind(0))


def all_gather_tensor(tensor: Tensor, gather_dim: int = 0, group=None) -> Tensor:
    """Every process's `tensor` concatenated along `gather_dim`, in rank order."""
    check_tensor(tensor, "tensor")
    found = _group(group, "all_gather_tensor")
    return collective(tensor, "all_gather", dim=gather_dim, group=found.number,
                      world=found.size())


def reduce_scatter_tensor(tensor: Tensor, op=ReduceOp.SUM, scatter_dim: int = 0,
                          group=None) -> Tensor:
    """`tensor` reduced across the group and split along `scatter_dim` into one part per rank:
    this process's part."""
    check_tensor(tensor, "tensor")
    found = _group(group, "reduce_scatter_tensor")
    name = reduction_name(op, tensor.dtype, "reduce_scatter_tensor")
    return collective(tensor, "reduce_scatter", name, dim=scatter_dim, group=found.number,
                      world=found.size())


__all__ = ["all_gather", "all_gather_tensor", "all_reduce", "broadcast",
           "reduce_scatter_tensor"]
