"""The ops on sparse COO tensors whose gradients are not their values' (coo.py): a
gradient read at a sparse tensor's stored positions (`sparse_lookup`, the backward of building
a sparse tensor from its values), mm's dense gradients, sparse * sparse, Tensor.sparse_mask,
gather with sparse_grad=True and the rows an embedding with sparse=True reads (whose gradients
torch gives as sparse COO tensors). The dense tensors' to_sparse_bsr and to_sparse_bsc are here
too, raising: autojit has no sparse block tensors (CSR and CSC are compressed.py's).
"""

from __future__ import annotations

from ...tensor import dtypes
from ...tensor.creation import arange, zeros
from ...tensor.state import state
from ...tensor.tensor import Tensor
from .. import elementwise as ew
from ..indexing import index_select
from ..layout import reshape, stack
from ..searching import searchsorted
from .arrays import _without_graph
from .coo import (
    SparseTensor,
    _attach,
    _linear,
    coalesce,
    mul,
    sparse_mm,
    to_dense,
    transpose,
)


def sparse_lookup(grad: Tensor, indices: Tensor, shape) -> Tensor:
    """The elements of `grad` (dense, or sparse of `shape`) at the positions `indices` lists
    (sparse_dim x nnz): nnz x the dense dims, zero where a sparse grad stores nothing."""
    if not isinstance(grad, SparseTensor):
        if indices.shape[0] == 0:
            return grad.unsqueeze(0).expand(indices.shape[1], *grad.shape)
        return grad[tuple(indices)]
    if grad._sparse_indices is indices:  # the tensor's own pattern: its values, as they are
        return grad._sparse_values
    if grad.sparse_dim() != indices.shape[0]:
        return sparse_lookup(to_dense(grad), indices, shape)
    grad = coalesce(grad)
    stored = _linear(grad._sparse_indices, shape)
    wanted = _linear(indices, shape)
    values = grad._sparse_values
    if stored.shape[0] == 0:
        return zeros((wanted.shape[0], *values.shape[1:]), dtype=values.dtype,
                     device=values.device)
    place = searchsorted(stored, wanted).clamp(max=stored.shape[0] - 1)
    found = ew.eq(index_select(stored, 0, place), wanted)
    found = found.reshape(-1, *([1] * (values.ndim - 1))).to(values.dtype)
    return index_select(values, 0, place) * found


def sparse_mask(x: Tensor, mask: Tensor) -> SparseTensor:
    """Tensor.sparse_mask: x's elements at the positions `mask` (sparse) stores, as a coalesced
    sparse tensor of mask's indices (differentiable in x)."""
    if not isinstance(mask, SparseTensor):
        raise RuntimeError("sparse_mask(): expected mask to be a sparse COO tensor, but got "
                           "Strided")
    if tuple(x.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(x.shape)} but mask has size {list(mask.shape)}")
    indices = coalesce(mask.detach())._sparse_indices
    return SparseTensor._build(indices, sparse_lookup(x, indices, x.shape), x.shape, True)


def gather_sparse_grad(x: Tensor, dim: int, index: Tensor, out: Tensor) -> Tensor:
    """gather's result `out` with x's gradient given sparse (sparse_grad=True): each gathered
    element's gradient at the position it was read from, as torch's _gather_sparse_backward."""
    if not (state.grad_enabled and x._requires_grad):
        return out
    shape = tuple(x.shape)

    def backward(grad):
        count = index.numel()
        values = reshape(grad, (count,))
        if not shape:
            return SparseTensor._build(zeros(0, count, dtype=dtypes.int64), values, shape), None
        index_shape = tuple(index.shape) or (1,)
        rows = []
        for axis in range(len(shape)):
            if axis == dim:
                rows.append(reshape(index, (count,)))
                continue
            extent = index_shape[axis]
            inner = 1
            for later in index_shape[axis + 1:]:
                inner *= later
            rows.append(arange(count) // inner % extent)
        return SparseTensor._build(stack(rows), values, shape), None

    return _attach(out.detach(), (x, index), backward, "GatherBackward0")


def embedding_rows(weight: Tensor, indices: Tensor) -> Tensor:
    """weight's rows at `indices` (1-D), with weight's gradient given sparse: one stored row
    per index read, as torch's embedding and embedding_bag with sparse=True give it."""
    rows = _without_graph(index_select, weight, 0, indices)
    shape = tuple(weight.shape)

    def backward(grad):
        return SparseTensor._build(reshape(indices, (1, -1)), grad, shape), None

    return _attach(rows, (weight, indices), backward, "EmbeddingBackward0")


def mm_with_dense_grads(mat1: Tensor, mat2: Tensor) -> Tensor:
    """mm with a sparse operand whose gradients are dense for both operands (MmBackward0)."""
    out = _without_graph(sparse_mm, mat1, mat2)

    def backward(grad):
        first = second = None
        if mat1._requires_grad:
            other = to_dense(mat2)
            first = grad @ other.t() if other.ndim == 2 else grad.unsqueeze(1) * other
        if mat2._requires_grad:
            second = sparse_mm(transpose(mat1, 0, 1), grad) if isinstance(
                mat1, SparseTensor) else mat1.t() @ grad
        return first, second

    return _attach(out, (mat1, mat2), backward, "MmBackward0")


def sparse_product_with_dense_grads(mat1: SparseTensor, mat2: SparseTensor,
                                    product) -> Tensor:
    """mm, matmul or @ of two sparse COO matrices: the sparse product `product` makes, with
    dense gradients for both operands, every position's (torch's MmBackward0; torch.sparse.mm
    gives sparse ones, at the stored positions)."""
    out = _without_graph(product, mat1, mat2)

    def backward(grad):
        first = second = None
        if mat1._requires_grad:
            first = _dense_product(grad, to_dense(mat2).t())
        if mat2._requires_grad:
            second = _dense_product(to_dense(mat1).t(), grad)
        return first, second

    return _attach(out, (mat1, mat2), backward, "MmBackward0")


def _dense_product(first: Tensor, second: Tensor) -> Tensor:
    """first @ second, one of them maybe sparse, as a dense matrix."""
    if isinstance(first, SparseTensor) or isinstance(second, SparseTensor):
        return sparse_mm(first, second)
    return first @ second


def _times(grad: Tensor, other: Tensor) -> Tensor:
    """grad * other, either of them sparse (the product is sparse)."""
    if isinstance(grad, SparseTensor):
        return mul(grad, other)
    return mul(other, grad)


def sparse_times_sparse(first: SparseTensor, second: SparseTensor) -> SparseTensor:
    """first * second, both sparse: MulBackward0, which saves both (as torch's, whose
    _saved_self and _saved_other they are)."""
    out = _without_graph(mul, first, second)

    def backward(grad):
        return (_times(grad, second.detach()) if first._requires_grad else None,
                _times(grad, first.detach()) if second._requires_grad else None)

    return _attach(out, (first, second), backward, "MulBackward0",
                   {"self": first, "other": second})


def _sparse_mask(self, mask):
    """x's elements at the positions the sparse `mask` stores."""
    return sparse_mask(self, mask)


Tensor.sparse_mask = _sparse_mask


def _compressed(layout: str):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"to_sparse_{layout}(): autojit has no tensors of layout "
                                  f"torch.sparse_{layout}")

    method.__name__ = method.__qualname__ = f"to_sparse_{layout}"
    method.__doc__ = f"NotImplementedError: autojit has no sparse {layout.upper()} tensors."
    return method


for _layout in ("bsr", "bsc"):
    setattr(Tensor, f"to_sparse_{_layout}", _compressed(_layout))
