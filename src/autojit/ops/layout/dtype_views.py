"""`Tensor.view(dtype)`: the same memory read as another dtype, torch's `view.dtype`.

Elements of the same size keep the shape and strides; a smaller element size multiplies the
last dim (and the other strides) by the ratio, a larger one divides it, with torch's checks
and messages in torch's order. As in torch, the result shares the input's memory and version
counter (a write through either is seen by the other), is not a view for autograd (no
`_base`) and never requires grad: the reinterpretation has no derivative.

Eager only: a traced function that asks for it breaks its graph there (compiled code has no
bit casts), and runs that call eagerly. bfloat16 and complex32 are stored wider than their
elements (as float32 and complex64: tensor/dtypes.py), so their bits are not in memory to be
viewed as another dtype; either side being one raises (a view as the same dtype is fine),
except bfloat16 against bytes or 16-bit integers (a checkpoint's bytes read as bfloat16),
made as a copy with a warning.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.graph_break import graph_break
from ...tensor.once import warn_once
from ...tensor.tensor import Tensor

__all__ = ["view_dtype"]

_STORED_WIDER = (dtypes.bfloat16, dtypes.complex32, *dtypes.FLOAT8)


def view_dtype(x: Tensor, dtype) -> Tensor:
    """x's memory as `dtype` (see the module docstring)."""
    dtype = dtypes.dtype_argument(dtype, "view")
    data = x._payload
    if data is None:
        graph_break("Tensor.view(dtype)", needs_data=False)
    if dtype is x._dtype:
        return Tensor._make(data.view(), dtype, x._version_counter)
    if dtypes.bfloat16 in (x._dtype, dtype) and data.__class__ is np.ndarray and \
            (dtype if x._dtype is dtypes.bfloat16 else x._dtype) in _BFLOAT16_BITS:
        return _bfloat16_copy(x, dtype)
    for side in (x._dtype, dtype):
        if side in _STORED_WIDER:
            raise NotImplementedError(
                f"view(dtype): autojit stores {side.name} in a wider type "
                f"({'complex64' if side is dtypes.complex32 else 'float32'}), so its bits "
                "cannot be viewed as another dtype's (docs/differences.md)")
    _check(x, dtype)
    return Tensor._make(data.view(dtype.numpy), dtype, x._version_counter)


# The dtypes whose bytes a bfloat16 view reads or writes (safetensors' loader views a file's
# bytes as each tensor's dtype: `asarray(storage[a:b], dtype=uint8).view(dtype=bfloat16)`).
_BFLOAT16_BITS = frozenset((dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.uint16))


def _bfloat16_copy(x: Tensor, dtype) -> Tensor:
    """A view between bfloat16 and bytes or 16-bit integers, made as a copy: bfloat16 is held
    as float32 (the bfloat16 bits are its high half), so the bits are decoded into a new
    float32 array, or encoded from it; writes to the result do not reach x, which a warning
    says once."""
    _check(x, dtype)
    data = np.ascontiguousarray(x._payload)
    if dtype is dtypes.bfloat16:
        bits = data.view(np.uint16)
        values = (bits.astype(np.uint32) << 16).view(np.float32)
    else:
        high = (data.astype(np.float32, copy=False).view(np.uint32) >> 16).astype(np.uint16)
        values = high.view(dtype.numpy)
    warn_once("bfloat16 view copy",
              f"view(dtype): the view between {x._dtype.name} and {dtype.name} is a copy in "
              "autojit, which holds bfloat16 as float32: writes to it do not reach the "
              "tensor it was made from (docs/differences.md)", UserWarning, stacklevel=5)
    return Tensor._make(values, dtype)


def _check(x: Tensor, dtype) -> None:
    old, new = x._dtype.itemsize, dtype.itemsize
    if old == new:
        return
    names = (f"{dtypes.scalar_type_name(x._dtype)} as {dtypes.scalar_type_name(dtype)} "
             "(different element sizes)")
    if x.dim() == 0:
        raise RuntimeError(f"self.dim() cannot be 0 to view {names}")
    strides = x.stride()
    if old > new:  # more, smaller elements: only the last dim must be dense
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got "
                               f"{strides[-1]}")
        return
    ratio = new // old
    size = x.shape[-1]
    if size % ratio:
        raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {names}, but "
                           f"got {size}")
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got {strides[-1]}")
    offset = x.storage_offset()
    if offset % ratio:
        raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to view "
                           f"{names}, but got {offset}")
    for dim, stride in enumerate(strides[:-1]):
        if stride % ratio:
            raise RuntimeError(f"self.stride({dim}) must be divisible by {ratio} to view "
                               f"{names}, but got {stride}")
