"""autojit.sparse: torch.sparse's functions on sparse COO tensors (coo.py) and CSR and CSC
matrices (compressed.py): mm (with `reduce`), addmm, sum, softmax and log_softmax (softmax.py),
and the legacy constructors older programs make COO tensors with (FloatTensor and the others,
given indices, values and a size).
"""

from __future__ import annotations

from ...tensor import dtypes
from . import gradients as sparse_gradients  # noqa: F401 - Tensor.sparse_mask and the like
from . import selection as sparse_selection  # noqa: F401 - a sparse tensor's index_select
from .compressed import sparse_mm as mm
from .coo import addmm, sparse_coo_tensor, sparse_sum
from .softmax import sparse_softmax


def sum(input, dim=None, dtype=None):  # noqa: A001, A002 - torch's names
    """The sum of a sparse tensor's elements (dense), or over some of its dims (sparse)."""
    return sparse_sum(input, dim, dtype)


def softmax(input, dim: int, *, dtype=None):  # noqa: A002
    """The softmax of a sparse COO tensor's stored values along `dim` (the unstored entries
    take no part), as a coalesced sparse tensor of the same indices."""
    return sparse_softmax(input, dim, dtype)


def log_softmax(input, dim: int, *, dtype=None):  # noqa: A002
    """The log of `softmax(input, dim)`, computed around each slice's maximum."""
    return sparse_softmax(input, dim, dtype, log=True)


def _legacy(name: str, dtype):
    def constructor(indices, values=None, size=None, *, device=None):
        if values is None:  # FloatTensor(size): an empty sparse tensor of that size
            from ...tensor.creation import zeros

            shape = tuple(indices)
            return sparse_coo_tensor(zeros(len(shape), 0, dtype=dtypes.int64),
                                     zeros(0, dtype=dtype), shape, device=device)
        return sparse_coo_tensor(indices, values, size, dtype=dtype, device=device)

    constructor.__name__ = constructor.__qualname__ = name
    constructor.__doc__ = (f"torch.sparse.{name}(indices, values, size): the legacy form of "
                           f"sparse_coo_tensor with dtype {dtype.name}.")
    return constructor


FloatTensor = _legacy("FloatTensor", dtypes.float32)
DoubleTensor = _legacy("DoubleTensor", dtypes.float64)
HalfTensor = _legacy("HalfTensor", dtypes.float16)
LongTensor = _legacy("LongTensor", dtypes.int64)
IntTensor = _legacy("IntTensor", dtypes.int32)
ShortTensor = _legacy("ShortTensor", dtypes.int16)
CharTensor = _legacy("CharTensor", dtypes.int8)
ByteTensor = _legacy("ByteTensor", dtypes.uint8)
BoolTensor = _legacy("BoolTensor", dtypes.bool_)

__all__ = ["addmm", "mm", "sum", "softmax", "log_softmax", "FloatTensor", "DoubleTensor",
           "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
           "BoolTensor"]
