"""torch.sparse.softmax and torch.sparse.log_softmax of a sparse COO tensor: the softmax of the
stored values along a dim, the unstored entries taken as -inf (they take no part, and stay
unstored); the result is coalesced, with the input's indices after coalescing.

Along a sparse dim, the stored values that share their other sparse indices form one slice:
each slice's maximum (detached: the shift changes nothing), the exponentials of the values
less it, and the slices' sums are segment reductions over the slices (scatter_reduce and
index_add on the values), so the gradients reach the values through autojit's ops. Along a
dense dim it is the dense softmax of the values.
"""

from __future__ import annotations

from ...tensor import dtypes
from ...tensor.creation import full, zeros
from ...tensor.layouts import sparse_csc, sparse_csr
from ...tensor.tensor import Tensor, normalize_dim
from .. import elementwise as ew
from ..counting import unique
from ..indexing.update import index_add
from ..nn.softmax import log_softmax as dense_log_softmax
from ..nn.softmax import softmax as dense_softmax
from .coo import SparseTensor, _linear, coalesce


def sparse_softmax(input, dim: int, dtype=None, log: bool = False):  # noqa: A002
    """softmax (log_softmax with `log`) of a sparse COO tensor's stored values along `dim`."""
    name = "_sparse_log_softmax" if log else "_sparse_softmax"
    if not isinstance(input, SparseTensor):  # torch's op has a sparse COO kernel only
        compressed = isinstance(input, Tensor) and input.layout in (sparse_csr, sparse_csc)
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the "
                                  f"'{'SparseCsrCPU' if compressed else 'CPU'}' backend.")
    dim = normalize_dim(dim, input.ndim)
    sparse = coalesce(input)
    values = sparse._sparse_values
    if dtype is not None:
        values = values.to(dtypes.to_dtype(dtype))
    if not values.dtype.is_floating_point:
        raise NotImplementedError(f'"{"log_softmax" if log else "softmax"}" not implemented '
                                  f"for '{dtypes.scalar_type_name(values.dtype)}'")
    sparse_dim = sparse.sparse_dim()
    if dim >= sparse_dim:  # a dense dim: each stored element's own softmax
        along = dim - sparse_dim + 1
        out = dense_log_softmax(values, along) if log else dense_softmax(values, along)
    else:
        out = _along_sparse_dim(sparse, values, dim, log)
    return SparseTensor._build(sparse._sparse_indices, out, sparse.shape, True)


def _along_sparse_dim(sparse: SparseTensor, values: Tensor, dim: int, log: bool) -> Tensor:
    indices = sparse._sparse_indices
    count = values.shape[0]
    if count == 0:
        return values * 1
    others = [d for d in range(sparse.sparse_dim()) if d != dim]
    if others:
        slices = _linear(indices[others], [sparse.shape[d] for d in others])
        _, slices = unique(slices, sorted=True, return_inverse=True)
    else:
        slices = zeros(count, dtype=dtypes.int64, device=values.device)
    groups = int(slices.max()) + 1
    shape = (groups, *values.shape[1:])
    spread = slices.reshape((count,) + (1,) * (values.ndim - 1)).expand(values.shape)
    largest = full(shape, float("-inf"), dtype=values.dtype, device=values.device) \
        .scatter_reduce(0, spread, values.detach(), "amax", include_self=True)
    shifted = values - largest[slices]
    exponentials = ew.exp(shifted)
    totals = index_add(zeros(shape, dtype=values.dtype, device=values.device), 0, slices,
                       exponentials)[slices]
    return shifted - ew.log(totals) if log else exponentials / totals
