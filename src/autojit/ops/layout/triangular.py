"""Triangular parts of matrices: tril, triu (composites) and tril_indices, triu_indices.

tril and triu are a `where` over a mask made by comparing a column index with a row index, so
they need no rules of their own and fuse into the kernels around them; the gradient passes
where the mask keeps an element. Tensor.tril_ and triu_ are their in-place forms
(tensor_methods.py). The index functions return constants computed from the sizes alone.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.dtypes import SCALAR_TYPE_NAMES
from ...tensor.tensor import Tensor
from .. import elementwise as ew
from ..limited_rules import COMPLEX32, refuse_limited
from ..out_argument import write_result


def _kept(x: Tensor, diagonal: int, lower: bool, name: str) -> Tensor:
    """The bool mask over x's last two dims of the elements tril (lower) or triu keeps."""
    from ...tensor.creation import arange

    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, columns = x.shape[-2], x.shape[-1]
    device = x.device if x.is_cuda else None
    # column - row is the diagonal an element is on: 0 the main one, > 0 above it.
    offsets = (arange(columns, dtype=dtypes.int64, device=device).reshape(1, columns)
               - arange(rows, dtype=dtypes.int64, device=device).reshape(rows, 1))
    return offsets <= diagonal if lower else offsets >= diagonal


def _masked(x: Tensor, keep: Tensor) -> Tensor:
    if x.dtype is dtypes.bool_:
        return ew.logical_and(x, keep)  # where(keep, x, 0) would promote bools to int64
    return ew.where(keep, x, 0)


def _triangle(x: Tensor, diagonal, out, lower: bool) -> Tensor:
    name = "tril" if lower else "triu"
    result = _masked(x, _kept(x, int(diagonal), lower, name))
    if out is None:
        return result
    return write_result(name, out, result, "expected", inputs=(x,))


def tril(x: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """The lower triangle of the matrices in x's last two dims, zeros above `diagonal` (0 the
    main diagonal, > 0 above it, < 0 below)."""
    refuse_limited("tril", x, taken=COMPLEX32)
    return _triangle(x, diagonal, out, lower=True)


def triu(x: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """The upper triangle of the matrices in x's last two dims, zeros below `diagonal` (0 the
    main diagonal, > 0 above it, < 0 below)."""
    refuse_limited("triu", x, taken=COMPLEX32)
    return _triangle(x, diagonal, out, lower=False)


def _indices(row: int, col: int, offset: int, dtype, device, lower: bool) -> Tensor:
    from ...tensor.creation import tensor

    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dtype = dtypes.to_dtype(dtype) if dtype is not None else dtypes.int64
    if dtype not in (dtypes.int32, dtypes.int64):
        raise NotImplementedError(f"\"{'tril' if lower else 'triu'}_indices\" not implemented "
                                  f"for '{SCALAR_TYPE_NAMES[dtype.name]}'")
    # NumPy's triangle indices come row by row, left to right, as torch's do.
    found = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    return tensor(np.stack(found).reshape(2, -1), dtype=dtype, device=device)


def _no_grad(requires_grad: bool) -> None:
    if requires_grad:  # integer coordinates, as torch refuses them
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None, requires_grad: bool = False) -> Tensor:
    """The (2, N) coordinates of the lower triangle of a row x col matrix, row by row; `offset`
    is tril's diagonal."""
    _no_grad(requires_grad)
    return _indices(row, col, offset, dtype, device, lower=True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None, requires_grad: bool = False) -> Tensor:
    """The (2, N) coordinates of the upper triangle of a row x col matrix, row by row; `offset`
    is triu's diagonal."""
    _no_grad(requires_grad)
    return _indices(row, col, offset, dtype, device, lower=False)
