"""Selection on sparse COO tensors (sparse_coo.py): index_select, along a sparse dim or a dense
one, differentiable in the values.
"""

from __future__ import annotations

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .. import elementwise as ew
from ..indexing import index_select, nonzero
from ..layout import stack
from .coo import SparseTensor


def index_select_sparse(sparse: SparseTensor, dim: int, index: Tensor) -> SparseTensor:
    """The sparse tensor of the slices at `index` (1-D, repeats allowed) along `dim`: along a
    sparse dim, each stored element whose position there is listed, once for each listing,
    renumbered by the listing; along a dense dim, the values' slices."""
    dim = dim % sparse.ndim
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    index = index.reshape(-1).to(dtypes.int64)
    shape = list(sparse.shape)
    shape[dim] = int(index.shape[0])
    sparse_dim = sparse.sparse_dim()
    if dim >= sparse_dim:
        values = index_select(sparse._sparse_values, dim - sparse_dim + 1, index)
        return SparseTensor._build(sparse._sparse_indices, values, shape, sparse._coalesced)
    indices = sparse._sparse_indices
    pairs = nonzero(ew.eq(indices[dim].unsqueeze(1), index.unsqueeze(0)))
    element, position = pairs[:, 0], pairs[:, 1]
    selected = index_select(indices, 1, element)
    rows = [position if row == dim else selected[row] for row in range(sparse_dim)]
    values = index_select(sparse._sparse_values, 0, element)
    return SparseTensor._build(stack(rows), values, shape)


def _index_select(self, dim: int, index: Tensor) -> SparseTensor:
    """The slices at `index` along `dim`, a sparse tensor."""
    return index_select_sparse(self, dim, index)


SparseTensor.index_select = _index_select
