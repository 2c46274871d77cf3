"""torch.distributed._functional_collectives' names, which libraries import: collectives that
return a new tensor instead of writing into one (all_reduce, all_gather_tensor,
reduce_scatter_tensor, all_to_all_single and its differentiable form, broadcast) and
wait_tensor. They complete before returning, so wait_tensor gives its tensor back. A group is
a ProcessGroup, a list of world ranks (the world when it is all of them) or a DeviceMesh with
its dimension; reduce ops are named "sum", "avg", "max", "min" or "product".
"""

from __future__ import annotations

from ..autograd.function import Function
from ..tensor.tensor import Tensor
from . import collectives
from .nn import functional as differentiable
from .process_group import ReduceOp, default_group, get_world_size

__all__ = ["all_gather_tensor", "all_reduce", "all_to_all_single",
           "all_to_all_single_autograd", "broadcast", "reduce_scatter_tensor", "wait_tensor"]


def _group(group, tag: str = ""):
    """The ProcessGroup of torch's RANK_TYPES: a group, a DeviceMesh or (mesh, dim), or a list
    of world ranks."""
    from .device_mesh import DeviceMesh

    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        return group[0].get_group(group[1])
    if isinstance(group, DeviceMesh):
        return group.get_group(0)
    if isinstance(group, list):
        if sorted(int(rank) for rank in group) == list(range(get_world_size())):
            return default_group()
        raise NotImplementedError("a functional collective over a list of ranks other than "
                                  "the world's: make the group with new_group and pass it")
    return group


def _op(name) -> ReduceOp:
    return name if not isinstance(name, str) else getattr(ReduceOp, name.upper())


def wait_tensor(tensor: Tensor) -> Tensor:
    """`tensor`, whose collective has completed (they all complete before returning)."""
    return tensor


def all_reduce(self: Tensor, reduceOp: str, group, tag: str = "") -> Tensor:  # noqa: N803
    """`self` reduced across the group by `reduceOp`, as a new tensor."""
    return differentiable.all_reduce(self, _op(reduceOp), group=_group(group))


def broadcast(self: Tensor, src: int, group, tag: str = "") -> Tensor:
    """Rank `src`'s `self` on every process, as a new tensor."""
    return differentiable.broadcast(self, src, group=_group(group))


def all_gather_tensor(self: Tensor, gather_dim: int, group, tag: str = "") -> Tensor:
    """Every process's `self` concatenated along `gather_dim`, in rank order."""
    return differentiable.all_gather_tensor(self, gather_dim, group=_group(group))


def reduce_scatter_tensor(self: Tensor, reduceOp: str, scatter_dim: int, group,  # noqa: N803
                          tag: str = "") -> Tensor:
    """`self` reduced across the group and split along `scatter_dim`: this process's part."""
    return differentiable.reduce_scatter_tensor(self, _op(reduceOp), scatter_dim,
                                                group=_group(group))


def all_to_all_single(self: Tensor, output_split_sizes, input_split_sizes, group,
                      tag: str = "") -> Tensor:
    """`self` split along dim 0 into one part per rank, part r sent to rank r; the parts
    received, in rank order, as a new tensor (equal splits only, as
    autojit.distributed.all_to_all_single)."""
    output = self.new_empty(self.shape)
    collectives.all_to_all_single(output, self.contiguous(), output_split_sizes,
                                  input_split_sizes, group=_group(group))
    return output


class _AllToAll(Function):
    @staticmethod
    def forward(ctx, x, output_split_sizes, input_split_sizes, group):
        ctx.splits, ctx.group = (output_split_sizes, input_split_sizes), group
        return all_to_all_single(x, output_split_sizes, input_split_sizes, group)

    @staticmethod
    def backward(ctx, grad):
        # The gradient goes back the way the parts came: the splits swap.
        output_split_sizes, input_split_sizes = ctx.splits
        return (all_to_all_single(grad, input_split_sizes, output_split_sizes, ctx.group),
                None, None, None)


def all_to_all_single_autograd(self: Tensor, output_split_sizes, input_split_sizes, group,
                               tag: str = "") -> Tensor:
    """all_to_all_single with a gradient: the all-to-all of the gradient, back."""
    return _AllToAll.apply(self, output_split_sizes, input_split_sizes, _group(group))
