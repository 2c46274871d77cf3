"""torch.ops.aten's names for the plain tensor operators that libraries register handlers for
or call by their aten name (torch_geometric's Index and EdgeIndex key their handlers on
`aten.clone.default`, `aten._to_copy.default`, `aten.index_select.default`, ...), each with
torch's overloads and signatures, each defined by the public op it is.

Registered in the aten namespace of aten_namespace.py when ops/__init__.py imports this module;
aten_entry_points.py holds the entry points of the composite ops (softmax's backward, slice,
segment_reduce).
"""

from __future__ import annotations

from ..tensor.tensor import Tensor
from .aten_namespace import register


def _clone(self: Tensor, *, memory_format=None) -> Tensor:
    return self.clone() if memory_format is None else self.clone(memory_format=memory_format)


def _to_copy(self: Tensor, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking: bool = False, memory_format=None) -> Tensor:
    options = {"copy": True}
    if memory_format is not None:
        options["memory_format"] = memory_format
    return self.to(device=device if device is not None else self.device,
                   dtype=dtype if dtype is not None else self.dtype, **options)


def _pin_memory(self: Tensor, device=None) -> Tensor:
    return self.pin_memory()


def _index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
    return self.index_select(dim, index)


def _select_int(self: Tensor, dim: int, index: int) -> Tensor:
    return self.select(dim, index)


def _sub_tensor(self: Tensor, other: Tensor, *, alpha=1) -> Tensor:
    return self.sub(other, alpha=alpha)


def _sub_scalar(self: Tensor, other, alpha=1) -> Tensor:
    return self.sub(other, alpha=alpha)


def _sub__tensor(self: Tensor, other: Tensor, *, alpha=1) -> Tensor:
    return self.sub_(other, alpha=alpha)


def _sub__scalar(self: Tensor, other, alpha=1) -> Tensor:
    return self.sub_(other, alpha=alpha)


def _add_tensor(self: Tensor, other: Tensor, *, alpha=1) -> Tensor:
    return self.add(other, alpha=alpha)


def _add_scalar(self: Tensor, other, alpha=1) -> Tensor:
    return self.add(other, alpha=alpha)


def _add__tensor(self: Tensor, other: Tensor, *, alpha=1) -> Tensor:
    return self.add_(other, alpha=alpha)


def _add__scalar(self: Tensor, other, alpha=1) -> Tensor:
    return self.add_(other, alpha=alpha)


def _squeeze(self: Tensor) -> Tensor:
    return self.squeeze()


def _squeeze_dim(self: Tensor, dim: int) -> Tensor:
    return self.squeeze(dim)


def _squeeze_dims(self: Tensor, dim) -> Tensor:
    return self.squeeze(tuple(dim))


def _sort(self: Tensor, dim: int = -1, descending: bool = False):
    return self.sort(dim=dim, descending=descending)


def _sort_stable(self: Tensor, *, stable, dim: int = -1, descending: bool = False):
    return self.sort(stable=stable, dim=dim, descending=descending)


def _flip(self: Tensor, dims) -> Tensor:
    return self.flip(dims)


def _cat(tensors, dim: int = 0) -> Tensor:
    from .layout.joining import cat

    return cat(list(tensors), dim)


def _alias(self: Tensor) -> Tensor:
    """A view of all of `self` (its storage and version counter shared)."""
    return self.view(self.shape)


def _unsqueeze(self: Tensor, dim: int) -> Tensor:
    return self.unsqueeze(dim)


def _unbind_int(self: Tensor, dim: int = 0):
    return list(self.unbind(dim))


def _detach(self: Tensor) -> Tensor:
    return self.detach()


def _mm(self: Tensor, mat2: Tensor) -> Tensor:
    return self.mm(mat2)


def _index_tensor(self: Tensor, indices) -> Tensor:
    """aten::index: `indices` per leading dim, None for a whole dim (`x[:, i]` is [None, i])."""
    return self[tuple(slice(None) if index is None else index for index in indices)]


def _sparse_addmm(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * self + alpha * (mat1 @ mat2), mat1 sparse."""
    return self.addmm(mat1, mat2, beta=beta, alpha=alpha)


def _sparse_mm_reduce_impl(self: Tensor, other: Tensor, reduce: str):
    """aten::_sparse_mm_reduce_impl: torch.sparse.mm(self, other, reduce), and in place of the
    argument indices of amax and amin, which autojit does not compute, an empty int64 tensor."""
    from ..tensor import dtypes
    from ..tensor.creation import empty
    from .sparse.compressed import sparse_mm

    return sparse_mm(self, other, reduce), empty(0, dtype=dtypes.int64)


register("clone", default=_clone)
register("_to_copy", default=_to_copy)
register("_pin_memory", default=_pin_memory)
register("index_select", default=_index_select)
register("select", int=_select_int)
register("sub", Tensor=_sub_tensor, Scalar=_sub_scalar)
register("sub_", Tensor=_sub__tensor, Scalar=_sub__scalar)
register("add", Tensor=_add_tensor, Scalar=_add_scalar)
register("add_", Tensor=_add__tensor, Scalar=_add__scalar)
register("squeeze", default=_squeeze, dim=_squeeze_dim, dims=_squeeze_dims)
register("sort", default=_sort, stable=_sort_stable)
register("flip", default=_flip)
register("cat", default=_cat)
register("alias", default=_alias)
register("unsqueeze", default=_unsqueeze)
register("unbind", int=_unbind_int)
register("detach", default=_detach)
register("mm", default=_mm)
register("index", Tensor=_index_tensor)
register("_sparse_addmm", default=_sparse_addmm)
register("_sparse_mm_reduce_impl", default=_sparse_mm_reduce_impl)
