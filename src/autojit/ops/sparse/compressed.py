"""Sparse compressed tensors: torch's CSR and CSC layouts of a matrix, with products.

Made by `autojit.sparse_csr_tensor(crow_indices, col_indices, values, size)`,
`sparse_csc_tensor`, `x.to_sparse_csr()`, `x.to_sparse_csc()` and `x.to_sparse(layout=...)`,
they have their parts (crow_indices, col_indices, ccol_indices, row_indices, values), to_dense
and the conversions between the three sparse layouts, t and transpose (CSR and CSC swap),
products with dense matrices (mm, matmul, `@`, linear, torch.sparse.mm with its `reduce`
argument), sums and products with numbers; torch's index converters
`_convert_indices_from_coo_to_csr` and back are here too.

A SparseCompressedTensor holds, as torch's, the compressed indices (rows + 1 offsets for CSR,
columns + 1 for CSC), the plain indices (the column, or row, of each stored element) and the
values (nnz x the dense dims) of a matrix: two sparse dims, no batch dims. Every operation goes
through the sparse COO tensor of the same elements (sparse_coo.py), which shares the values:
gradients reach the values a compressed tensor was built from as they reach a COO tensor's, and
a compressed leaf (requires_grad_) is a COO leaf underneath, whose gradient is its .grad.
"""

from __future__ import annotations

import warnings

from ...interop import torch_format
from ...tensor import dtypes, printing, torch_dispatch, torch_function
from ...tensor.creation import arange, as_tensor, zeros
from ...tensor.layouts import sparse_coo, sparse_csc, sparse_csr, strided
from ...tensor.state import state
from ...tensor.tensor import Tensor
from ..indexing.scatter import scatter_reduce
from ..layout import cat, stack
from . import coo as coo_ops
from .arrays import SparseArray, SparseValues
from .coo import SparseTensor, coalesce

_NAMES = {sparse_csr: ("crow_indices", "col_indices"), sparse_csc: ("ccol_indices",
                                                                    "row_indices")}

_BETA_WARNED: list = []  # torch's warning at the first compressed tensor of the process


class SparseCompressedTensor(SparseValues, Tensor):
    """A sparse CSR or CSC matrix: compressed indices, plain indices and values."""

    __torch_function__ = torch_function.disabled_torch_function_impl  # internal: no dispatch

    @classmethod
    def _build(cls, compressed: Tensor, plain: Tensor, values: Tensor, shape, layout):
        coo_ops.refuse_dense_ops()
        if not _BETA_WARNED:
            _BETA_WARNED.append(True)
            warnings.warn("Sparse CSR tensor support is in beta state. If you miss a "
                          "functionality in the sparse tensor support, please submit a feature "
                          "request to https://github.com/pytorch/pytorch/issues.", UserWarning,
                          stacklevel=3)
        self = object.__new__(cls)
        self._init(SparseArray(shape, values.dtype.numpy), values.dtype)
        self._compressed_indices, self._plain_indices = compressed, plain
        self._sparse_values = values
        self._sparse_layout = layout
        # The sparse COO tensor of its elements that stands for it in every operation, when
        # it requires grad: a leaf of its own (requires_grad_), or the one it was made from.
        self._coo = None
        return self

    layout = property(lambda self: self._sparse_layout, doc="sparse_csr or sparse_csc.")
    is_sparse = property(lambda self: False, doc="False: is_sparse is for COO tensors.")
    is_sparse_csr = property(lambda self: self._sparse_layout is sparse_csr,
                             doc="Whether the layout is sparse_csr.")
    device = property(lambda self: self._sparse_values.device, doc="The values' device.")
    is_cuda = property(lambda self: self._sparse_values.is_cuda, doc="Whether on a GPU.")
    is_meta = property(lambda self: False, doc="False.")

    def requires_grad_(self, requires_grad: bool = True):
        """Make the tensor a leaf that requires grad: a sparse COO leaf of its elements stands
        for it in every operation, and its .grad is that leaf's (dense after a product, as
        torch's; a sparse gradient in the tensor's layout)."""
        if self._sparse_values.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and self._coo is None:
            self._coo = to_coo(self.detach()).requires_grad_(True)
        elif not requires_grad:
            self._coo = None
        return self

    @property
    def requires_grad(self) -> bool:
        return self._coo is not None or self._sparse_values.requires_grad

    @property
    def grad(self):
        """A leaf's gradient: dense, or sparse in the tensor's layout."""
        grad = None if self._coo is None else self._coo.grad
        if isinstance(grad, SparseTensor):
            return from_coo(grad, self._sparse_layout)
        return grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            raise RuntimeError("assigning a gradient to a sparse compressed tensor: autojit "
                               "only clears it (grad = None)")
        if self._coo is not None:
            self._coo.grad = None

    def __repr__(self) -> str:
        first, second = _NAMES[self._sparse_layout]
        indent = len("tensor(")

        def part(label: str, value: Tensor) -> str:
            data = value.detach()._host("print")
            inner = indent + len(label) + 1 + indent
            body = "[]" if data.size == 0 else printing.format_values(data, inner)
            return f"{label}=tensor({body})"

        suffixes = [f"size={tuple(self.shape)}", f"nnz={self._nnz()}"]
        if self.dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={self.dtype!r}")
        suffixes.append(f"layout={self._sparse_layout!r}")
        if self.requires_grad:
            suffixes.append("requires_grad=True")
        text = (f"tensor({part(first, self._compressed_indices)},\n"
                f"{' ' * indent}{part(second, self._plain_indices)},\n"
                f"{' ' * indent}{part('values', self._sparse_values)}")
        return printing._add_suffixes(text, suffixes, indent)

    __str__ = __repr__

    # ---- its parts ----------------------------------------------------------------------

    def _part(self, layout, index: int) -> Tensor:
        if self._sparse_layout is not layout:
            name = _NAMES[layout][index]
            expected = "row" if layout is sparse_csr else "column"
            raise RuntimeError(f"{name} expected sparse {expected} compressed tensor layout "
                               f"but got {_layout_name(self._sparse_layout)}")
        return self._compressed_indices if index == 0 else self._plain_indices

    def crow_indices(self) -> Tensor:
        return self._part(sparse_csr, 0)

    def col_indices(self) -> Tensor:
        return self._part(sparse_csr, 1)

    def ccol_indices(self) -> Tensor:
        return self._part(sparse_csc, 0)

    def row_indices(self) -> Tensor:
        return self._part(sparse_csc, 1)

    def values(self) -> Tensor:
        return self._sparse_values

    def indices(self):
        raise RuntimeError(f"indices expected sparse coordinate tensor layout but got "
                           f"{_layout_name(self._sparse_layout)}")

    def _indices(self):
        raise NotImplementedError(f"Could not run 'aten::_indices' with arguments from the "
                                  f"'{_layout_name(self._sparse_layout)}CPU' backend.")

    def _values(self):
        raise NotImplementedError(f"Could not run 'aten::_values' with arguments from the "
                                  f"'{_layout_name(self._sparse_layout)}CPU' backend.")

    def coalesce(self):
        raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got "
                           f"{_layout_name(self._sparse_layout)}")

    def is_coalesced(self):
        raise RuntimeError(f"is_coalesced expected sparse coordinate tensor layout but got "
                           f"{_layout_name(self._sparse_layout)}")

    def _nnz(self) -> int:
        return int(self._plain_indices.shape[0])

    def sparse_dim(self) -> int:
        return 2

    def dense_dim(self) -> int:
        return self.ndim - 2

    # ---- conversions --------------------------------------------------------------------

    def to_sparse_coo(self, sparse_dim=None) -> SparseTensor:
        return to_coo(self)

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        return coo_ops.to_dense(to_coo(self), dtype, masked_grad=masked_grad)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        return to_sparse(self, sparse_dim, layout=layout, blocksize=blocksize,
                         dense_dim=dense_dim)

    def to_sparse_csr(self, dense_dim=None):
        return to_sparse(self, layout=sparse_csr)

    def to_sparse_csc(self, dense_dim=None):
        return to_sparse(self, layout=sparse_csc)

    def detach(self):
        return _with_values(self, self._sparse_values.detach())

    def clone(self, *, memory_format=None):
        return SparseCompressedTensor._build(
            self._compressed_indices.clone(), self._plain_indices.clone(),
            self._sparse_values.clone(), self.shape, self._sparse_layout)

    def to(self, *args, **kwargs):
        """The values converted and moved as Tensor.to converts them (the indices moved)."""
        values = self._sparse_values.to(*args, **kwargs)
        if values is self._sparse_values:
            return self
        return SparseCompressedTensor._build(
            self._compressed_indices.to(values.device), self._plain_indices.to(values.device),
            values, self.shape, self._sparse_layout)

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def t(self):
        return self.transpose(0, 1)

    def transpose(self, dim0: int, dim1: int):
        """The transposed matrix: CSR and CSC swap, the arrays shared."""
        if {dim0 % 2, dim1 % 2} != {0, 1}:
            return self
        layout = sparse_csc if self._sparse_layout is sparse_csr else sparse_csr
        return SparseCompressedTensor._build(self._compressed_indices, self._plain_indices,
                                             self._sparse_values, self.shape[::-1], layout)

    def sum(self, dim=None, keepdim: bool = False, dtype=None):
        if dim is None:
            values = self._sparse_values
            return (values if dtype is None else values.to(dtype)).sum()
        return coo_ops.sparse_sum(to_coo(self), dim, dtype)

    # ---- arithmetic -----------------------------------------------------------------------

    def mm(self, mat2: Tensor) -> Tensor:
        return product(self, mat2)

    matmul = mm
    __matmul__ = mm

    def __rmatmul__(self, other) -> Tensor:
        return product(other, self)

    def mul(self, other):
        if isinstance(other, Tensor) and other.ndim > 0:
            return to_sparse(coo_ops.mul(to_coo(self), other), layout=self._sparse_layout)
        return _with_values(self, self._sparse_values * other)

    __mul__ = mul
    __rmul__ = mul

    def div(self, other):
        if isinstance(other, Tensor) and other.ndim > 0:
            raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor "
                               "divisor")
        return _with_values(self, self._sparse_values / other)

    __truediv__ = div

    def __neg__(self):
        return _with_values(self, -self._sparse_values)

    neg = __neg__


def _layout_name(layout) -> str:
    return {strided: "Strided", sparse_coo: "Sparse", sparse_csr: "SparseCsr",
            sparse_csc: "SparseCsc"}.get(layout, str(layout))


def _with_values(sparse: SparseCompressedTensor, values: Tensor) -> SparseCompressedTensor:
    return SparseCompressedTensor._build(sparse._compressed_indices, sparse._plain_indices,
                                         values, sparse.shape, sparse._sparse_layout)


# ---- index conversions -------------------------------------------------------------------------

def _convert_indices_from_coo_to_csr(input: Tensor, size: int, *,  # noqa: A002
                                     out_int32: bool = False) -> Tensor:
    """The size + 1 offsets of the sorted (row) indices `input`: offset i is the number of
    indices below i."""
    dtype = dtypes.int32 if out_int32 else dtypes.int64
    counts = input.to(dtypes.int64).bincount(minlength=int(size))[:int(size)]
    offsets = cat([zeros(1, dtype=dtypes.int64, device=input.device), counts.cumsum(0)])
    return offsets.to(dtype)


def _convert_indices_from_csr_to_coo(crow_indices: Tensor, col_indices: Tensor, *,
                                     out_int32: bool = False, transpose: bool = False) -> Tensor:
    """The (2, nnz) COO indices of CSR offsets and columns (rows and columns swapped with
    transpose=True)."""
    dtype = dtypes.int32 if out_int32 else dtypes.int64
    rows = _expanded(crow_indices).to(dtype)
    pair = [col_indices.to(dtype), rows] if transpose else [rows, col_indices.to(dtype)]
    return stack(pair)


def _expanded(offsets: Tensor) -> Tensor:
    """The index of each element's segment, from the segments' offsets."""
    count = int(offsets.shape[0]) - 1
    lengths = (offsets[1:] - offsets[:-1]).to(dtypes.int64)
    return arange(count, device=offsets.device).repeat_interleave(lengths)


# ---- making them -------------------------------------------------------------------------------

def _compressed_tensor(layout, compressed, plain, values, size, dtype, device, requires_grad,
                       check_invariants):
    compressed = compressed if isinstance(compressed, Tensor) else as_tensor(compressed)
    plain = plain if isinstance(plain, Tensor) else as_tensor(plain)
    values = values if isinstance(values, Tensor) else as_tensor(values, dtype=dtype)
    if dtype is not None:
        values = values.to(dtypes.dtype_argument(dtype, f"sparse_{layout.name[7:]}_tensor"))
    if device is not None:
        values, compressed, plain = values.to(device), compressed.to(device), plain.to(device)
    names = _NAMES[layout]
    if compressed.ndim != 1 or plain.ndim != 1 or values.ndim < 1:
        raise NotImplementedError(f"sparse_{layout.name[7:]}_tensor(): autojit's sparse "
                                  "compressed tensors are matrices: 1-D indices (no batch "
                                  "dims), values of nnz x dense dims")
    if compressed.dtype not in (dtypes.int32, dtypes.int64) or \
            plain.dtype is not compressed.dtype:
        raise RuntimeError(f"{names[0]} and {names[1]} must have the same dtype, int32 or "
                           f"int64, but got {compressed.dtype} and {plain.dtype}")
    if plain.shape[0] != values.shape[0]:
        raise RuntimeError(f"{names[1]} and values must have the same number of elements, "
                           f"but got {plain.shape[0]} and {values.shape[0]}")
    if size is None:
        other = int(plain.max()) + 1 if plain.shape[0] else 0
        size = (compressed.shape[0] - 1, other)
        if layout is sparse_csc:
            size = size[::-1]
        size = (*size, *values.shape[1:])
    size = tuple(int(extent) for extent in size)
    if len(size) != 2 + values.ndim - 1:
        raise RuntimeError(f"sparse_{layout.name[7:]}_tensor(): size must have 2 + "
                           f"{values.ndim - 1} dims (the values' dense dims), got {len(size)}")
    axis = 0 if layout is sparse_csr else 1
    if check_invariants and compressed.shape[0] != size[axis] + 1:
        raise RuntimeError(f"{names[0]}.shape[-1] must be equal to the number of "
                           f"{'rows' if axis == 0 else 'columns'} + 1 (={size[axis] + 1}), but "
                           f"got {compressed.shape[0]}")
    if not values.requires_grad:
        values = values.detach()
    result = SparseCompressedTensor._build(compressed, plain, values, size, layout)
    return result.requires_grad_(True) if requires_grad else result


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
                      layout=None, device=None, pin_memory=False, requires_grad: bool = False,
                      check_invariants=None) -> SparseCompressedTensor:
    """A sparse CSR matrix: the rows + 1 offsets `crow_indices`, each element's column
    `col_indices` and its value; `size` defaults to the rows and the highest column + 1."""
    return _compressed_tensor(sparse_csr, crow_indices, col_indices, values, size, dtype,
                              device, requires_grad, check_invariants)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None,
                      layout=None, device=None, pin_memory=False, requires_grad: bool = False,
                      check_invariants=None) -> SparseCompressedTensor:
    """A sparse CSC matrix: the columns + 1 offsets `ccol_indices`, each element's row
    `row_indices` and its value."""
    return _compressed_tensor(sparse_csc, ccol_indices, row_indices, values, size, dtype,
                              device, requires_grad, check_invariants)


def to_coo(sparse: SparseCompressedTensor) -> SparseTensor:
    """The sparse COO tensor of a compressed one's elements (its values shared; a leaf's COO
    leaf, which collects its gradient)."""
    if sparse._coo is not None:
        return sparse._coo
    expanded = _expanded(sparse._compressed_indices)
    plain = sparse._plain_indices.to(dtypes.int64)
    if sparse._sparse_layout is sparse_csr:
        return SparseTensor._build(stack([expanded, plain]), sparse._sparse_values,
                                   sparse.shape, coalesced=True)
    return SparseTensor._build(stack([plain, expanded]), sparse._sparse_values, sparse.shape)


def from_coo(sparse: SparseTensor, layout) -> SparseCompressedTensor:
    """The CSR or CSC tensor of a 2-D sparse COO tensor's elements (duplicates summed)."""
    if sparse.sparse_dim() != 2:
        raise NotImplementedError(f"to_sparse_{layout.name[7:]}(): autojit's sparse compressed "
                                  f"tensors are matrices (2 sparse dims, no batch dims), got "
                                  f"{sparse.sparse_dim()} sparse dims")
    shape = tuple(sparse.shape)
    source = sparse
    if layout is sparse_csc:
        sparse = coo_ops.transpose(sparse, 0, 1)
    sparse = coalesce(sparse)  # its values differentiable where the source's values are
    major, minor = sparse._sparse_indices[0], sparse._sparse_indices[1]
    compressed = _convert_indices_from_coo_to_csr(major, sparse.shape[0])
    values = sparse._sparse_values
    result = SparseCompressedTensor._build(compressed, minor, values, shape, layout)
    if source._requires_grad:
        # The source stands for this tensor in operations, so that gradients take its path
        # (a product's dense gradient to a sparse operand, as torch's); values() stays
        # differentiable too.
        result._coo = source
    return result


def to_sparse(x: Tensor, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """x in the given sparse layout (sparse_coo by default), from a dense or sparse tensor."""
    layout = sparse_coo if layout is None else layout
    if layout is sparse_coo:
        return to_coo(x) if isinstance(x, SparseCompressedTensor) else \
            coo_ops.to_sparse(x, sparse_dim)
    if layout not in (sparse_csr, sparse_csc):
        raise NotImplementedError(f"to_sparse(): autojit has no tensors of layout {layout!r}")
    if isinstance(x, SparseCompressedTensor):
        return x if x._sparse_layout is layout else from_coo(to_coo(x), layout)
    if not isinstance(x, SparseTensor):
        if x.ndim - (dense_dim or 0) != 2:
            raise NotImplementedError(f"to_sparse_{layout.name[7:]}(): autojit's sparse "
                                      "compressed tensors are matrices (2 sparse dims, no "
                                      f"batch dims), got {x.ndim} dims")
        x = coo_ops.to_sparse(x, 2)
    return from_coo(x, layout)


# ---- products ----------------------------------------------------------------------------------

def _as_coo(x):
    return to_coo(x) if isinstance(x, SparseCompressedTensor) else x


def _sparse_layout(x):
    return x._sparse_layout if isinstance(x, SparseCompressedTensor) else \
        (sparse_coo if isinstance(x, SparseTensor) else None)


def product(mat1: Tensor, mat2: Tensor) -> Tensor:
    """mm, matmul and @ with a sparse operand (COO, CSR or CSC): a dense matrix; of two sparse
    matrices, a sparse one (COO of two COO, CSR of two compressed ones)."""
    if _sparse_layout(mat1) is not None and _sparse_layout(mat2) is not None:
        if state.grad_enabled and (mat1._requires_grad or mat2._requires_grad) and \
                isinstance(mat1, SparseTensor) and isinstance(mat2, SparseTensor):
            from .gradients import sparse_product_with_dense_grads

            return sparse_product_with_dense_grads(mat1, mat2, sparse_times_sparse)
        return sparse_times_sparse(mat1, mat2)
    return coo_ops.mm(_as_coo(mat1), _as_coo(mat2))


def sparse_times_sparse(mat1: Tensor, mat2: Tensor) -> Tensor:
    """The product of two sparse matrices, sparse: each pair of stored elements that meet
    (mat1's column is mat2's row) contributes to one stored element of the result, summed
    (differentiable in both values)."""
    first, second = _sparse_layout(mat1), _sparse_layout(mat2)
    if (first is sparse_coo) != (second is sparse_coo):
        raise RuntimeError(f"addmm: computation on CPU is not implemented for "
                           f"{_layout_name(first)} + {_layout_name(first)} @ "
                           f"{_layout_name(second)}")
    left, right = coalesce(to_sparse(mat1)), coalesce(to_sparse(mat2))
    if left.ndim != 2 or right.ndim != 2 or left.shape[1] != right.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({left.shape[0]}x"
                           f"{left.shape[1]} and {right.shape[0]}x{right.shape[1]})")
    rows, inner = left._sparse_indices[0], left._sparse_indices[1]
    # right is coalesced: its elements sorted by row, row r's at [starts[r], starts[r + 1])
    starts = _convert_indices_from_coo_to_csr(right._sparse_indices[0], right.shape[0])
    counts = (starts[1:] - starts[:-1]).index_select(0, inner)
    pair = arange(int(counts.shape[0]), device=counts.device).repeat_interleave(counts)
    first_of = (counts.cumsum(0) - counts).repeat_interleave(counts)
    partner = starts[:-1].index_select(0, inner).repeat_interleave(counts) + \
        arange(int(pair.shape[0]), device=counts.device) - first_of
    values = left._sparse_values.index_select(0, pair) * \
        right._sparse_values.index_select(0, partner)
    indices = stack([rows.index_select(0, pair),
                     right._sparse_indices[1].index_select(0, partner)])
    result = coalesce(SparseTensor._build(indices, values, (left.shape[0], right.shape[1])))
    return result if first is sparse_coo else from_coo(result, sparse_csr)


_REDUCTIONS = {"sum": "sum", "mean": "mean", "amax": "amax", "amin": "amin", "max": "amax",
               "min": "amin"}


def _dispatched_mm(mat1: Tensor, mat2: Tensor, reduce: str | None) -> Tensor:
    """torch.sparse.mm on a __torch_dispatch__ subclass (torch_geometric's EdgeIndex) as torch
    dispatches it: `_sparse_addmm` of zeros without `reduce`, `_sparse_mm_reduce_impl` with."""
    from ..aten_namespace import aten

    if reduce is None:
        start = zeros((mat1.shape[0], mat2.shape[-1]), dtype=mat2.dtype, device=mat2.device)
        return aten._sparse_addmm.default(start, mat1, mat2, beta=0, alpha=1)
    return aten._sparse_mm_reduce_impl.default(mat1, mat2, reduce)[0]


def sparse_mm(mat1: Tensor, mat2: Tensor, reduce: str | None = None) -> Tensor:
    """torch.sparse.mm: mat1 @ mat2, one of them sparse; with `reduce` ("sum", "mean",
    "amax", "amin"; mat1 CSR and mat2 dense), each row's products with mat2's rows reduced
    so (0 for a row storing nothing)."""
    if torch_dispatch.ACTIVE and torch_dispatch.dispatching_arguments((mat1, mat2)):
        return _dispatched_mm(mat1, mat2, reduce)
    if reduce is None:
        if _sparse_layout(mat1) is not None and _sparse_layout(mat2) is not None:
            return sparse_times_sparse(mat1, mat2)
        return coo_ops.sparse_mm(_as_coo(mat1), _as_coo(mat2))
    if not isinstance(mat1, SparseCompressedTensor) or mat1._sparse_layout is not sparse_csr:
        layout = mat1._sparse_layout if isinstance(mat1, SparseCompressedTensor) else \
            getattr(mat1, "layout", strided)
        raise RuntimeError(f"sparse_mm_reduce: expect self to be SparseCsr, got "
                           f"{_layout_name(layout)}")
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"sparse_mm_reduce: reduce type of {reduce} has not been enabled.")
    if mat2.ndim != 2 or mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {'x'.join(map(str, mat2.shape))})")
    rows = _expanded(mat1._compressed_indices)
    columns = mat1._plain_indices.to(dtypes.int64)
    products = mat1._sparse_values.unsqueeze(1) * mat2.index_select(0, columns)
    out = zeros((mat1.shape[0], mat2.shape[1]), dtype=products.dtype, device=mat2.device)
    index = rows.unsqueeze(1).expand(products.shape)
    return scatter_reduce(out, 0, index, products, _REDUCTIONS[reduce], include_self=False)


# ---- the methods other tensors have for them ---------------------------------------------------

def _strided_part(name: str, layout):
    expected = "row" if layout is sparse_csr else "column"

    def method(self):
        raise RuntimeError(f"{name} expected sparse {expected} compressed tensor layout but "
                           f"got {_layout_name(self.layout)}")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"RuntimeError: {name} is a sparse compressed tensor's."
    return method


for _layout, (_compressed_name, _plain_name) in _NAMES.items():
    setattr(Tensor, _compressed_name, _strided_part(_compressed_name, _layout))
    setattr(Tensor, _plain_name, _strided_part(_plain_name, _layout))
    setattr(SparseTensor, _compressed_name, _strided_part(_compressed_name, _layout))
    setattr(SparseTensor, _plain_name, _strided_part(_plain_name, _layout))


def _to_sparse_csr(self, dense_dim=None):
    """x as a sparse CSR matrix (its last `dense_dim` dims dense)."""
    return to_sparse(self, layout=sparse_csr, dense_dim=dense_dim)


def _to_sparse_csc(self, dense_dim=None):
    """x as a sparse CSC matrix (its last `dense_dim` dims dense)."""
    return to_sparse(self, layout=sparse_csc, dense_dim=dense_dim)


Tensor.to_sparse = to_sparse
Tensor.to_sparse_csr = _to_sparse_csr
Tensor.to_sparse_csc = _to_sparse_csc
def _product(self, other):
    """self @ other, self sparse: dense, or sparse when other is sparse too."""
    return product(self, other)


def _reflected_product(self, other):
    return product(other, self)


SparseTensor.mm = SparseTensor.matmul = SparseTensor.__matmul__ = _product
SparseTensor.__rmatmul__ = _reflected_product
SparseTensor.to_sparse = to_sparse
SparseTensor.to_sparse_csr = _to_sparse_csr
SparseTensor.to_sparse_csc = _to_sparse_csc
coo_ops.install_product((SparseTensor, SparseCompressedTensor), product)
# torch.save's parts of CSR and CSC matrices, and how a load rebuilds them
# (interop/torch_format.py).
torch_format.SPARSE_LAYOUTS["sparse_csr"] = (
    lambda x: (x.crow_indices(), x.col_indices(), x.values(), x.size()), sparse_csr_tensor)
torch_format.SPARSE_LAYOUTS["sparse_csc"] = (
    lambda x: (x.ccol_indices(), x.row_indices(), x.values(), x.size()), sparse_csc_tensor)

__all__ = ["SparseCompressedTensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_mm",
           "_convert_indices_from_coo_to_csr", "_convert_indices_from_csr_to_coo"]
