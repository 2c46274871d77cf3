"""What sparse tensors of every layout share: their data, a SparseArray (the shape and dtype
of the array they stand for, no elements); the registry dispatch that makes a dense op refuse
a sparse operand with torch's error (installed from the first sparse tensor on); grad-mode-off
computation for the ops that attach their own nodes; and SparseValues, the dense reads (numpy,
tolist, item) every layout refuses. coo.py's SparseTensor and compressed.py's class build on
these.
"""

from __future__ import annotations

import numpy as np

from ...tensor.layouts import sparse_coo
from ...tensor.state import state
from ...tensor.tensor import Tensor
from .. import registry

_SUPPORTED = ("torch.sparse.mm, mm, matmul, addmm, to_dense, coalesce, indices, values, t, "
              "transpose, permute, mT, sum, products with numbers and dense tensors, sums of "
              "sparse tensors")


class SparseArray:
    """The data of a sparse tensor: the shape and dtype of the array it stands for."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(extent) for extent in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def _dispatch(op, inputs: tuple, attrs: dict):
    for x in inputs:
        if isinstance(x, Tensor) and x._payload.__class__ is SparseArray:
            if op.name == "sum" and len(attrs.get("dim") or ()) in (0, x.ndim) and \
                    not attrs.get("keepdim") and "dtype" not in attrs:
                # torch.sum of all elements: the sum's node (recorded after) differentiates it
                return _without_graph(x._sparse_values.sum)
            backend = "SparseCPU" if x.layout is sparse_coo else \
                f"Sparse{x.layout.name[7:].capitalize()}CPU"  # SparseCsrCPU, SparseCscCPU
            raise NotImplementedError(
                f"Could not run 'aten::{op.name}' with arguments from the '{backend}' backend: "
                f"autojit's sparse tensors support {_SUPPORTED}; use to_dense() for the rest")
    return None


_DISPATCH_ADDED: list = []


def _without_graph(function, *args):
    """function(*args) with grad mode off: an op that attaches its own node computes so."""
    previous = state.grad_enabled
    state.grad_enabled = False
    try:
        return function(*args)
    finally:
        state.grad_enabled = previous


def refuse_dense_ops() -> None:
    """Make the registry's dense ops refuse sparse inputs (from the first sparse tensor on)."""
    if not _DISPATCH_ADDED:
        _DISPATCH_ADDED.append(True)
        registry.add_device_dispatch(_dispatch, first=True)


class SparseValues:
    """What a sparse tensor of any layout refuses, as torch's: its values read as a dense
    array (numpy, tolist, item); mixed into SparseTensor and compressed.py's class."""

    def numpy(self, *, force: bool = False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def tolist(self):
        raise RuntimeError("tolist() of a sparse tensor: use Tensor.to_dense() first")

    def item(self):
        raise RuntimeError("item() of a sparse tensor: use Tensor.to_dense() first")

    def __array__(self, dtype=None, copy=None):
        self.numpy()
