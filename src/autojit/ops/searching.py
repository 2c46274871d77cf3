"""Searching sorted sequences: searchsorted and bucketize.

One primitive, `searchsorted`: for each value, the position in a sorted sequence (the last dim
of `boundaries`, one sequence per leading index, or one for all) where it would be inserted to
keep the order, before equal entries or, with `right`, after them. The impl is a binary search
with torch's comparisons (a NaN is never below or above anything, so NaN values go to the end),
run for every value at once. It is not differentiable and lowers to an extern routine
("search_sorted"): a compiled CPU plan runs its NumPy impl, CUDA tensors run it on the host.
`sorter` is a gather of the boundaries before the search; bucketize is searchsorted with the
arguments the other way round.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import dtypes
from ..tensor.dtypes import SCALAR_TYPE_NAMES
from ..tensor.tensor import Tensor
from . import batching
from .indexing import _gather
from .limited_rules import refuse_limited
from .out_argument import check_no_grad, check_out_type, write_out
from .registry import NOT_DIFFERENTIABLE, Extern, bind, define_op


def _search_impl(boundaries: np.ndarray, values: np.ndarray, right: bool, out_int32: bool):
    size = boundaries.shape[-1]
    if size == 0:  # an empty sequence: every value goes first
        return np.zeros(values.shape, np.int32 if out_int32 else np.int64)
    sequences = boundaries.reshape(-1, size)
    targets = values.reshape(sequences.shape[0], -1) if boundaries.ndim > 1 else \
        values.reshape(1, -1)
    low = np.zeros(targets.shape, np.int64)
    high = np.full(targets.shape, size, np.int64)
    rows = np.arange(sequences.shape[0]).reshape(-1, 1)
    while True:
        active = low < high
        if not active.any():
            break
        middle = (low + high) // 2
        entry = sequences[rows, np.minimum(middle, size - 1)]
        # torch's lower bound moves right unless entry >= value; its upper bound unless
        # entry > value: with a NaN on either side neither holds, so the search moves right.
        above = entry > targets if right else entry >= targets
        low = np.where(active & ~above, middle + 1, low)
        high = np.where(active & above, middle, high)
    return low.reshape(values.shape).astype(np.int32 if out_int32 else np.int64)


def _search_dtype(inputs, attrs):
    return None, dtypes.int32 if attrs["out_int32"] else dtypes.int64


def _search_batch_rule(op, inputs, flags, attrs, size):
    """One sorted sequence for every example's values is one search as it stands; otherwise
    each example gets its sequences (one 1-D sequence becomes a row per example, its values
    flattened behind the batch dim to match)."""
    boundaries, values = inputs
    if not flags[0] and boundaries.dim() == 1:
        return bind(op, inputs, attrs)
    boundaries, values = batching.all_batched(inputs, flags, size)
    if boundaries.dim() == 2:
        found = bind(op, (boundaries, values.reshape((size, math.prod(values.shape[1:])))), attrs)
        return found.reshape(tuple(values.shape))
    return bind(op, (boundaries, values), attrs)


SEARCHSORTED = define_op(
    name="searchsorted", arity=2, shape=lambda boundaries, values, right, out_int32: values,
    dtype=_search_dtype, impl=_search_impl, vjp=NOT_DIFFERENTIABLE, saves=(),
    lowering=Extern("search_sorted", ("data", "values")), batch=_search_batch_rule)


def _search(boundaries: Tensor, values: Tensor, right: bool, out_int32: bool, out, name: str):
    result = bind(SEARCHSORTED, (boundaries, values),
                  {"right": bool(right), "out_int32": bool(out_int32)})
    if out is None:
        return result
    check_out_type(name, out)
    check_no_grad(name, (out,))
    if out.dtype is not result.dtype:
        flag = "True" if out_int32 else "False"
        kind = SCALAR_TYPE_NAMES[out.dtype.name]
        raise RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only be "
                           "Int(int32) or Long(int64) depending on whether out_int32 flag is "
                           f"True, but we got output tensor's dtype {kind} and out_int32 flag is "
                           f"{flag}")
    return write_out(name, out, result)


def _check_boundaries_dtype(boundaries: Tensor) -> None:
    if boundaries.dtype is dtypes.bool_:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")


def _as_values(values, like: Tensor) -> Tensor:
    """The values to search for as a tensor: a Python number as a 0-d one, as torch takes
    it."""
    if isinstance(values, Tensor):
        return values
    from ..tensor.creation import tensor

    return tensor(values, device=like.device)


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False,  # noqa: A002
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None,
                 out=None) -> Tensor:
    """For each value of `input`, the index in `sorted_sequence` (along its last dim) where
    inserting it keeps the order: before equal entries, or after them with `right=True` or
    `side="right"`; `sorter` gives the order of an unsorted sequence. Not differentiable."""
    refuse_limited("searchsorted_out_cpu", sorted_sequence)
    prefix = "torch.searchsorted(): "
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{prefix}side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError(f"{prefix}side and right can't be set to opposites, got side of "
                               "left while right was True")
        right = side == "right"
    boundaries = sorted_sequence
    if boundaries.ndim == 0:
        raise RuntimeError(f"{prefix}boundaries tensor should have positive dimension, but got "
                           "0 dimension")
    values = _as_values(input, boundaries)
    if values.ndim == 0 and boundaries.ndim != 1:
        raise RuntimeError(f"{prefix}input value can be a scalar only when boundaries tensor "
                           f"dimension is 1, but we got boundaries tensor dim({boundaries.ndim}) "
                           f"and input value's dim({values.ndim}) numel({values.numel()})")
    if boundaries.ndim != 1 and tuple(boundaries.shape[:-1]) != tuple(values.shape[:-1]):
        raise RuntimeError(f"{prefix}boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, "
                           f"but we got boundaries tensor {list(boundaries.shape)} and input "
                           f"value tensor {list(values.shape)}")
    _check_boundaries_dtype(boundaries)
    if sorter is not None:
        if sorter.dtype is not dtypes.int64:
            raise RuntimeError(f"{prefix}sorter must be a tensor of long dtype but got dtype "
                               f"{SCALAR_TYPE_NAMES[sorter.dtype.name]}")
        if tuple(sorter.shape) != tuple(boundaries.shape):
            raise RuntimeError(f"{prefix}boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(boundaries.shape)}and got sorter tensor "
                               f"{list(sorter.shape)}")
        if sorter._payload is not None and sorter.numel():
            # Checked where the data is at hand (a compiled call's gather raises instead).
            order = sorter._host("searchsorted(sorter=...)")
            if order.min() < 0 or order.max() >= boundaries.shape[-1]:
                raise RuntimeError(f"{prefix}sorter index out of range")
        boundaries = _gather(boundaries, boundaries.ndim - 1, sorter)
    return _search(boundaries, values, right, out_int32, out, "searchsorted")


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False,  # noqa: A002
              right: bool = False, out=None) -> Tensor:
    """For each value of `input`, the index of its bucket among the sorted 1-D `boundaries`:
    `boundaries[i-1] < x <= boundaries[i]`, or `boundaries[i-1] <= x < boundaries[i]` with
    `right=True`. Not differentiable."""
    refuse_limited("searchsorted_out_cpu", boundaries)
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    _check_boundaries_dtype(boundaries)
    values = _as_values(input, boundaries)
    return _search(boundaries, values, right, out_int32, out, "bucketize")
