"""nonzero_static, a primitive: the (size, ndim) positions of the first `size` nonzero entries
of a tensor, padded with `fill_value`, so its shape is known before the data is
(torch.nonzero_static). nonzero traces through it (indexing/__init__.py), and masked.py's
masked_scatter is a composite of it.
"""

from __future__ import annotations

import math

import numpy as np

from ...tensor import dtypes
from ...tensor.dtypes import scalar_type_name
from ...tensor.tensor import Tensor
from .. import batching
from ..inplace import write_out
from ..registry import NOT_DIFFERENTIABLE, Extern, OpError, bind, define_op


def _nonzero_static_impl(x, size, fill_value, overflow, batch_dims):
    """The first `size` nonzero positions of each index of the `batch_dims` leading dims
    (inside vmap), found for all of them at once: an entry's row in the result is the count
    of nonzeros before it in its example."""
    batch, shape = x.shape[:batch_dims], x.shape[batch_dims:]
    nonzero = x.reshape(math.prod(batch), math.prod(shape)) != 0
    if overflow is not None and (nonzero.sum(axis=1) > size).any():
        raise OpError(RuntimeError(overflow))
    slots = np.cumsum(nonzero, axis=1) - 1
    examples, flat = np.nonzero(nonzero & (slots < size))
    out = np.full((nonzero.shape[0], size, len(shape)), fill_value, dtype=np.int64)
    out[examples, slots[examples, flat]] = np.stack(np.unravel_index(flat, shape), axis=-1) \
        if shape else np.zeros((len(flat), 0), np.int64)
    return out.reshape(batch + (size, len(shape)))


NONZERO_STATIC = define_op(
    name="nonzero_static", arity=1,
    shape=lambda shape, size, fill_value, overflow, batch_dims: (
        *shape[:batch_dims], size, len(shape) - batch_dims),
    dtype=lambda inputs, attrs: (None, dtypes.int64), impl=_nonzero_static_impl,
    vjp=NOT_DIFFERENTIABLE, saves=(), lowering=Extern("nonzero_static", ("data",)),
    batch=batching.batch_dims_rule, complex=True)


def _nonzero_static(x: Tensor, size: int, fill_value: int, overflow: str | None) -> Tensor:
    return bind(NONZERO_STATIC, (x,), {"size": size, "fill_value": fill_value,
                                       "overflow": overflow, "batch_dims": 0})


def nonzero_static(x: Tensor, *, size: int, fill_value: int = -1, out=None) -> Tensor:
    """The (size, ndim) int64 indices of the first `size` nonzero entries of x in C order,
    rows past the last one filled with `fill_value`: nonzero with a shape known in advance."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    result = _nonzero_static(x, size, int(fill_value), None)
    if out is None:
        return result
    return write_out(out, result, "nonzero_static", RuntimeError(
        f"nonzero_static: Expected out tensor to have scalar type Long but got scalar type"
        f"{scalar_type_name(out.dtype) if isinstance(out, Tensor) else None}"))  # (no space)
