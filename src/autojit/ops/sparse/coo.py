"""Sparse COO tensors: `autojit.sparse_coo_tensor(indices, values, size)` and `x.to_sparse()`,
with torch's sparse matrix products (torch.sparse.mm, and mm, matmul, `@`, spmm and addmm with
a sparse operand), to_dense, coalesce, indices and values, t and transpose, sums, products with
numbers and with dense tensors, sums of sparse tensors, and their gradients.

A SparseTensor is a Tensor (isinstance holds; its layout is autojit.sparse_coo) whose data is
a SparseArray: its shape and dtype, no elements. Its elements are two dense tensors, the
indices (int64, sparse_dim x nnz) and the values (nnz x the dense dims), and every operation
here is written from the registry's dense ops on them (index_select, mul, index_add, ...):
products cost O(nnz) rather than a dense matrix's size, and autograd reaches the values and the
dense operand as torch's sparse kernels' gradients do. A sparse tensor that requires grad has
its own node, and its gradient is a sparse tensor (autograd/sparse_autograd.py; the ops whose
gradients are not their values', gradients.py). A dense op on a sparse tensor raises
torch's error for an op without a sparse kernel (arrays.py's registry dispatch).
namespace.py is autojit.sparse.
"""

from __future__ import annotations

import numpy as np

from ...interop import torch_format
from ...tensor import dtypes, torch_function
from ...tensor.creation import as_tensor, zeros
from ...tensor.layouts import sparse_coo
from ...tensor.state import state
from ...tensor.tensor import Tensor
from .. import elementwise as ew
from .. import factory_forms, linalg
from ..counting import unique
from ..indexing import index_select, nonzero
from ..indexing.update import index_add
from ..layout import cat, reshape, stack
from .arrays import (  # noqa: F401 - SparseArray, SparseValues, refuse_dense_ops: from here too
    SparseArray,
    SparseValues,
    _without_graph,
    refuse_dense_ops,
)

# (link, link_leaf, attach, to_dense_backward), installed by autograd/sparse_autograd.py: the
# nodes that put sparse tensors and their sparse gradients in the autograd graph.
AUTOGRAD = None


class SparseTensor(SparseValues, Tensor):
    """A sparse COO tensor: indices (sparse_dim x nnz, int64) and values (nnz x dense dims)."""

    __torch_function__ = torch_function.disabled_torch_function_impl  # internal: no dispatch

    @classmethod
    def _build(cls, indices: Tensor, values: Tensor, shape, coalesced: bool = False):
        refuse_dense_ops()
        self = object.__new__(cls)
        self._init(SparseArray(shape, values.dtype.numpy), values.dtype)
        self._sparse_indices, self._sparse_values = indices, values
        self._coalesced = coalesced
        if values._requires_grad and state.grad_enabled and AUTOGRAD is not None:
            AUTOGRAD[0](self)  # its own node, reading its gradient into the values'
        return self

    # ---- what a tensor is ---------------------------------------------------------------

    layout = property(lambda self: sparse_coo, doc="autojit.sparse_coo.")
    is_sparse = property(lambda self: True, doc="True: a sparse COO tensor.")
    device = property(lambda self: self._sparse_values.device, doc="The values' device.")
    is_cuda = property(lambda self: self._sparse_values.is_cuda, doc="Whether on a GPU.")
    is_meta = property(lambda self: False, doc="False.")

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        """Make the tensor a leaf that requires grad: its gradient, sparse, accumulates in its
        .grad (its values' gradient reaches it through their ValuesBackward0 node)."""
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        self._requires_grad = bool(requires_grad)
        self._sparse_values = self._sparse_values.detach()
        if requires_grad and AUTOGRAD is not None:
            AUTOGRAD[1](self)
        return self

    def __repr__(self) -> str:
        def indented(value: Tensor, label: str) -> str:
            lines = repr(value).split("\n")
            pad = " " * (len("tensor(") + len(label) + 1)
            return "\n".join([lines[0], *(pad + line for line in lines[1:])])

        size = tuple(self.shape)
        extras = [f"size={size}", f"nnz={self._nnz()}"]
        if self.dtype is not dtypes.get_default_dtype() and self.dtype.is_floating_point or \
                not self.dtype.is_floating_point:
            extras.append(f"dtype={self.dtype!r}")
        extras.append("layout=autojit.sparse_coo")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return (f"tensor(indices={indented(self._sparse_indices, 'indices')},\n"
                f"       values={indented(self._sparse_values.detach(), 'values')},\n"
                f"       {', '.join(extras)})")

    __str__ = __repr__

    # ---- its parts ----------------------------------------------------------------------

    def _indices(self) -> Tensor:
        """The indices, coalesced or not."""
        return self._sparse_indices

    def _values(self) -> Tensor:
        """The values, coalesced or not (not differentiable, as torch's)."""
        return self._sparse_values.detach()

    def indices(self) -> Tensor:
        """The indices of a coalesced tensor."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._sparse_indices

    def values(self) -> Tensor:
        """The values of a coalesced tensor (differentiable)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._sparse_values

    def _nnz(self) -> int:
        """The number of stored elements."""
        return int(self._sparse_indices.shape[1])

    def sparse_dim(self) -> int:
        return int(self._sparse_indices.shape[0])

    def dense_dim(self) -> int:
        return self.ndim - self.sparse_dim()

    def is_coalesced(self) -> bool:
        return self._coalesced

    def coalesce(self) -> SparseTensor:
        return coalesce(self)

    def _coalesced_(self, coalesced: bool) -> SparseTensor:
        """Mark the tensor coalesced or not (torch's: the caller vouches for its indices)."""
        self._coalesced = bool(coalesced)
        return self

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        return to_dense(self, dtype, masked_grad=masked_grad)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        return self

    def detach(self) -> SparseTensor:
        return SparseTensor._build(self._sparse_indices, self._sparse_values.detach(),
                                   self.shape, self._coalesced)

    def clone(self, *, memory_format=None) -> SparseTensor:
        out = _without_graph(lambda: SparseTensor._build(
            self._sparse_indices.clone(), self._sparse_values.clone(), self.shape,
            self._coalesced))
        # Its gradient passes to self as it is (sparse), as torch's CloneBackward0
        return _attach(out, (self,), lambda grad: (grad,), "CloneBackward0")

    def to(self, *args, **kwargs) -> SparseTensor:
        """The values converted and moved as Tensor.to converts and moves them (the indices
        moved along)."""
        values = self._sparse_values.to(*args, **kwargs)
        if values is self._sparse_values:
            return self
        indices = self._sparse_indices.to(values.device)
        return SparseTensor._build(indices, values, self.shape, self._coalesced)

    def float(self) -> SparseTensor:
        return self.to(dtypes.float32)

    def double(self) -> SparseTensor:
        return self.to(dtypes.float64)

    def t(self) -> SparseTensor:
        return transpose(self, 0, 1)

    def transpose(self, dim0: int, dim1: int) -> SparseTensor:
        return transpose(self, dim0, dim1)

    def permute(self, *dims) -> SparseTensor:
        return permute(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int)
                       else dims)

    @property
    def mT(self) -> SparseTensor:  # noqa: N802 - torch's name
        return transpose(self, -2, -1)

    def sum(self, dim=None, keepdim: bool = False, dtype=None):
        return sparse_sum(self, dim, dtype)

    # ---- arithmetic -----------------------------------------------------------------------

    def mm(self, mat2: Tensor) -> Tensor:
        return mm(self, mat2)

    def matmul(self, other: Tensor) -> Tensor:
        return mm(self, other)

    __matmul__ = matmul

    def __rmatmul__(self, other) -> Tensor:
        return mm(other, self)

    def mul(self, other) -> SparseTensor:
        return mul(self, other)

    __mul__ = mul
    __rmul__ = mul

    def div(self, other) -> SparseTensor:
        if isinstance(other, Tensor) and other.ndim > 0:
            raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor "
                               "divisor")
        return _with_values(self, self._sparse_values / other)

    __truediv__ = div

    def __neg__(self) -> SparseTensor:
        return _with_values(self, -self._sparse_values)

    def neg(self) -> SparseTensor:
        return -self

    def add(self, other, *, alpha=1):
        return add(self, other, alpha)

    __add__ = add

    def __radd__(self, other):
        return add(other, self, 1)

    def sub(self, other, *, alpha=1):
        return add(self, other, -alpha)

    __sub__ = sub


def _attach(out: Tensor, sources: tuple, backward, name: str, saved=None) -> Tensor:
    """out as the output of a node of its own (autograd/sparse_autograd.py's attach)."""
    return out if AUTOGRAD is None else AUTOGRAD[2](out, sources, backward, name, saved)


def _with_values(sparse: SparseTensor, values: Tensor) -> SparseTensor:
    return SparseTensor._build(sparse._sparse_indices, values, sparse.shape, sparse._coalesced)


def _linear(indices: Tensor, shape) -> Tensor:
    """Each stored element's position in the row-major order of the sparse dims."""
    if indices.shape[0] == 0:  # no sparse dims: every element is at the one position
        return zeros(indices.shape[1], dtype=dtypes.int64, device=indices.device)
    position = indices[0]
    for dim in range(1, indices.shape[0]):
        position = position * int(shape[dim]) + indices[dim]
    return position


# ---- making sparse tensors ---------------------------------------------------------------------

def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      requires_grad: bool = False, check_invariants=None,
                      is_coalesced=None) -> SparseTensor:
    """A sparse COO tensor of the given indices (sparse_dim x nnz) and values (nnz x dense
    dims); `size` defaults to the smallest that holds the indices."""
    indices = indices if isinstance(indices, Tensor) else as_tensor(indices)
    values = values if isinstance(values, Tensor) else as_tensor(values, dtype=dtype)
    if dtype is not None:
        values = values.to(dtypes.dtype_argument(dtype, "sparse_coo_tensor"))
    if device is not None:
        values, indices = values.to(device), indices.to(device)
    indices = indices.to(dtypes.int64)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.ndim == 0:
        raise RuntimeError("values must have at least one dim (nnz x dense dims)")
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{indices.shape[1]}, nnz from values: {values.shape[0]}")
    sparse_dim = int(indices.shape[0])
    if size is None:
        found = indices.detach().numpy().max(axis=1) + 1 if indices.shape[1] else \
            np.zeros(sparse_dim, np.int64)
        size = (*(int(extent) for extent in found), *values.shape[1:])
    size = tuple(int(extent) for extent in size)
    if len(size) != sparse_dim + values.ndim - 1:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                           f"({values.ndim - 1}), but got {len(size)}")
    if check_invariants and indices.shape[1]:
        highest = indices.detach().numpy().max(axis=1)
        for dim, (top, extent) in enumerate(zip(highest, size)):
            if top >= extent:
                raise RuntimeError(f"size is inconsistent with indices: for dim {dim}, size is "
                                   f"{extent} but found index {top}")
    if not values.requires_grad:  # its own alias: requires_grad_ leaves the caller's as it is
        values = values.detach()
    result = SparseTensor._build(indices, values, size, bool(is_coalesced))
    if requires_grad:
        result.requires_grad_(True)
    return result


def to_sparse(x: Tensor, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The sparse COO tensor of x's nonzero elements (with `sparse_dim`, of the positions of the
    first sparse_dim dims where any element of the dims after them is nonzero); coalesced, and
    differentiable in x's values."""
    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError(f"to_sparse(): autojit has no tensors of layout {layout!r}")
    if isinstance(x, SparseTensor):
        return x
    if x._requires_grad and state.grad_enabled:  # its gradient dense: torch's ToSparseBackward0
        out = _without_graph(to_sparse, x, sparse_dim)
        return _attach(out, (x,), lambda grad: (to_dense(grad),), "ToSparseBackward0")
    sparse_dim = x.ndim if sparse_dim is None else int(sparse_dim)
    mask = ew.ne(x.detach(), 0)
    if sparse_dim < x.ndim:
        mask = mask.reshape(*x.shape[:sparse_dim], -1).any(-1)
    indices = nonzero(mask).t() if sparse_dim else zeros(0, 1, dtype=dtypes.int64)
    values = x[tuple(indices)] if sparse_dim else x.unsqueeze(0)
    return SparseTensor._build(indices.contiguous(), values, x.shape, coalesced=True)


def empty_sparse(name: str, args: tuple, kwargs: dict) -> SparseTensor:
    """The empty sparse tensor a factory makes with layout=sparse_coo (zeros, empty and their
    *_like forms): no stored elements."""
    if name.endswith("_like"):
        shape, dtype = tuple(args[0].shape), kwargs.get("dtype") or args[0].dtype
    else:
        shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
            else tuple(args)
        dtype = kwargs.get("dtype") or dtypes.get_default_dtype()
    dtype = dtypes.dtype_argument(dtype, name)
    values = zeros(0, dtype=dtype, device=kwargs.get("device"))
    result = SparseTensor._build(zeros(len(shape), 0, dtype=dtypes.int64), values, shape, True)
    if kwargs.get("requires_grad"):
        result.requires_grad_(True)
    return result


factory_forms.SPARSE_FACTORY = empty_sparse


# ---- operations ----------------------------------------------------------------------------

def coalesce(sparse: SparseTensor) -> SparseTensor:
    """The same tensor with its indices sorted and each duplicate stored once (their values
    summed)."""
    if sparse._coalesced:
        return sparse
    shape = sparse.shape
    sparse_dim = sparse.sparse_dim()
    positions, inverse = unique(_linear(sparse._sparse_indices, shape), sorted=True,
                                return_inverse=True)
    values = sparse._sparse_values
    summed = index_add(zeros((positions.shape[0], *values.shape[1:]), dtype=values.dtype,
                             device=values.device), 0, inverse, values)
    rows, rest = [], positions
    for dim in reversed(range(sparse_dim)):
        extent = int(shape[dim])
        rows.append(rest % extent)
        rest = rest // extent
    indices = stack(rows[::-1]) if rows else sparse._sparse_indices[:, :0]
    return SparseTensor._build(indices, summed, shape, coalesced=True)


def to_dense(sparse: Tensor, dtype=None, *, masked_grad=None) -> Tensor:
    """The dense tensor of a sparse one; a dense tensor is returned as it is. Its gradient is
    sparse, the dense gradient at the stored positions, or with masked_grad=False dense (torch's
    ToDenseBackward0)."""
    if not isinstance(sparse, SparseTensor):
        return sparse if dtype is None else sparse.to(dtype)
    if sparse._requires_grad and state.grad_enabled and AUTOGRAD is not None:
        dense = _attach(_without_graph(_densified, sparse), (sparse,),
                        AUTOGRAD[3](sparse, masked_grad is not False), "ToDenseBackward0")
        return dense if dtype is None else dense.to(dtype)
    dense = _densified(sparse)
    return dense if dtype is None else dense.to(dtype)


def _densified(sparse: SparseTensor) -> Tensor:
    shape = sparse.shape
    sparse_dim = sparse.sparse_dim()
    values = sparse._sparse_values
    count = int(np.prod(shape[:sparse_dim], dtype=np.int64))
    flat = index_add(zeros((count, *values.shape[1:]), dtype=values.dtype,
                           device=values.device), 0, _linear(sparse._sparse_indices, shape),
                     values)
    return reshape(flat, tuple(shape))


def transpose(sparse: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    """The sparse tensor with two sparse dims swapped."""
    ndim = sparse.sparse_dim()
    dim0, dim1 = dim0 % sparse.ndim, dim1 % sparse.ndim
    if dim0 >= ndim or dim1 >= ndim:
        raise RuntimeError("transpose of a sparse tensor: both dims must be sparse dims")
    order = list(range(ndim))
    order[dim0], order[dim1] = dim1, dim0
    shape = list(sparse.shape)
    shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
    indices = sparse._sparse_indices[order]
    return SparseTensor._build(indices, sparse._sparse_values, shape, coalesced=False)


def permute(sparse: SparseTensor, dims) -> SparseTensor:
    """The sparse tensor with its dims reordered: the sparse dims among themselves (the rows
    of the indices) and the dense dims among themselves (the values' trailing dims), as
    torch's permute of a COO tensor allows."""
    ndim, sparse_dim = sparse.ndim, sparse.sparse_dim()
    dims = [int(d) for d in dims]
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{ndim} is not equal to len(dims) = {len(dims)}")
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {d})")
    dims = [d % ndim for d in dims]
    if len(set(dims)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if sorted(dims[:sparse_dim]) != list(range(sparse_dim)):
        raise RuntimeError(
            "permute(sparse_coo): transpositions between sparse and dense dimensions are not "
            "allowed.Only transpositions within sparse and dense dimensions are supported.")
    values = sparse._sparse_values
    dense_order = [d - sparse_dim + 1 for d in dims[sparse_dim:]]
    if dense_order != sorted(dense_order):
        values = values.permute(0, *dense_order)
    same_sparse_order = dims[:sparse_dim] == list(range(sparse_dim))
    indices = sparse._sparse_indices if same_sparse_order else \
        sparse._sparse_indices[dims[:sparse_dim]]
    return SparseTensor._build(indices, values, [sparse.shape[d] for d in dims],
                               coalesced=sparse._coalesced and same_sparse_order)


def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """mm, matmul and @ with a sparse operand: a dense matrix, whose gradients are dense for
    both operands, as torch's MmBackward0 gives them (gradients.py)."""
    if not (state.grad_enabled and (mat1._requires_grad or mat2._requires_grad)):
        return sparse_mm(mat1, mat2)
    from .gradients import mm_with_dense_grads

    return mm_with_dense_grads(mat1, mat2)


def sparse_mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """The matrix product with a sparse operand: sparse @ dense or dense @ sparse gives a dense
    matrix, in O(nnz) multiply-adds; differentiable in the sparse values (a sparse operand's
    gradient is sparse: torch.sparse.mm's) and the dense operand."""
    first, second = mat1, mat2
    if not isinstance(first, SparseTensor):
        if isinstance(second, SparseTensor):
            return sparse_mm(transpose(second, 0, 1), first.t()).t()
        raise TypeError("sparse mm: neither operand is sparse")
    if isinstance(second, SparseTensor):
        second = to_dense(second)
    if first.ndim != 2 or first.sparse_dim() != 2:
        raise RuntimeError(f"sparse mm: expected a 2-D sparse matrix with 2 sparse dims, got "
                           f"size {tuple(first.shape)} with {first.sparse_dim()} sparse dims")
    vector = second.ndim == 1
    if vector:
        second = second.unsqueeze(1)
    if second.ndim != 2 or second.shape[0] != first.shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({first.shape[0]}x"
                           f"{first.shape[1]} and {'x'.join(map(str, second.shape))})")
    if second.dtype is not first.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: "
                           f"{first.dtype} != {second.dtype}")
    rows, columns = first._sparse_indices[0], first._sparse_indices[1]
    products = ew.mul(first._sparse_values.unsqueeze(1), index_select(second, 0, columns))
    out = index_add(zeros((first.shape[0], second.shape[1]), dtype=second.dtype,
                          device=second.device), 0, rows, products)
    return out.squeeze(1) if vector else out


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """beta * input + alpha * (mat1 @ mat2), one of mat1 and mat2 sparse."""
    product = sparse_mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    start = to_dense(input)
    return (start if beta == 1 else start * beta) + product


def sparse_sum(sparse: SparseTensor, dim=None, dtype=None):
    """The sum of all elements (a dense 0-d tensor), or over the given sparse dims (a sparse
    tensor of the dims left, or a dense one when none is left of the sparse dims)."""
    values = sparse._sparse_values if dtype is None else sparse._sparse_values.to(dtype)
    if dim is None:
        return values.sum()
    dims = sorted({d % sparse.ndim for d in ((dim,) if isinstance(dim, int) else dim)})
    sparse_dim = sparse.sparse_dim()
    dense_dims = [d - sparse_dim + 1 for d in dims if d >= sparse_dim]
    if dense_dims:
        values = values.sum(dense_dims)
    kept = [d for d in range(sparse_dim) if d not in dims]
    shape = [sparse.shape[d] for d in kept] + [sparse.shape[d] for d in range(sparse_dim,
                                                                              sparse.ndim)
                                               if d not in dims]
    if not kept:
        return values.sum(0)
    indices = sparse._sparse_indices[kept]
    return coalesce(SparseTensor._build(indices, values, shape, coalesced=False))


def mul(sparse: SparseTensor, other) -> SparseTensor:
    """A sparse tensor times a number, a 0-d tensor, or a dense tensor of its shape (then
    sparse, the dense tensor read at the stored positions)."""
    values = sparse._sparse_values
    if isinstance(other, SparseTensor):
        if state.grad_enabled and (sparse._requires_grad or other._requires_grad):
            from .gradients import sparse_times_sparse

            return sparse_times_sparse(sparse, other)
        other = to_dense(other)
    if isinstance(other, Tensor) and other.ndim > 0:
        if tuple(other.shape) != tuple(sparse.shape):
            raise RuntimeError("sparse * dense: the dense tensor must have the sparse tensor's "
                               f"shape {tuple(sparse.shape)}, got {tuple(other.shape)}")
        other = other[tuple(sparse._sparse_indices)]
    return _with_values(sparse, values * other)


def add(first, second, alpha=1):
    """sparse + sparse (a sparse tensor holding both's elements), dense + sparse (dense)."""
    if isinstance(first, SparseTensor) and isinstance(second, SparseTensor):
        if tuple(first.shape) != tuple(second.shape):
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self "
                               f"has size {list(first.shape)} while other has size "
                               f"{list(second.shape)}")
        values = second._sparse_values if alpha == 1 else second._sparse_values * alpha
        return SparseTensor._build(cat([first._sparse_indices, second._sparse_indices], 1),
                                   cat([first._sparse_values, values]), first.shape)
    if isinstance(first, SparseTensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    dense = to_dense(second)
    return first + (dense if alpha == 1 else dense * alpha)


def is_sparse_operand(x) -> bool:
    """Whether x is a sparse tensor (ops/linalg/__init__.py sends products with one here)."""
    return x.__class__ is SparseTensor



# ---- the methods dense tensors have for them -------------------------------------------------

def _strided_error(what: str):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{what} expected sparse coordinate tensor layout but got Strided")

    method.__name__ = method.__qualname__ = what
    method.__doc__ = f"RuntimeError for a dense tensor: {what} is a sparse tensor's."
    return method


def _dense_to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
    """x itself (converted to `dtype`): it is dense already."""
    return self if dtype is None else self.to(dtype)


Tensor.to_sparse = to_sparse
Tensor.to_sparse_coo = lambda self: to_sparse(self)
Tensor.to_sparse_coo.__doc__ = "x as a sparse COO tensor (to_sparse())."
Tensor.to_dense = _dense_to_dense

Tensor.sparse_dim = lambda self: 0
Tensor.sparse_dim.__doc__ = "0: a dense tensor has no sparse dims."
Tensor.dense_dim = lambda self: self.ndim
Tensor.dense_dim.__doc__ = "x.ndim: every dim of a dense tensor is dense."
for _what in ("indices", "values", "_indices", "_values", "coalesce", "is_coalesced", "_nnz"):
    setattr(Tensor, _what, _strided_error(_what))

def _rebuilt(indices, values, size, is_coalesced=False) -> SparseTensor:
    """A COO tensor from the parts torch's files hold (torch._utils._rebuild_sparse_tensor)."""
    return sparse_coo_tensor(indices, values, size, is_coalesced=bool(is_coalesced))


# torch.save's parts of a COO tensor, and how a load rebuilds one (interop/torch_format.py).
torch_format.SPARSE_LAYOUTS["sparse_coo"] = (
    lambda x: (x._indices(), x._values(), x.size(), x.is_coalesced()), _rebuilt)


def install_product(classes: tuple, product) -> None:
    """mm, matmul and @ with an operand of one of `classes` go to `product` (compressed.py
    adds its class)."""
    linalg.SPARSE_PRODUCT = (classes, product)


install_product((SparseTensor,), mm)
