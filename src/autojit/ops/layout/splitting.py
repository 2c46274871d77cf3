"""Splitting by sections or indices: tensor_split, hsplit, vsplit and dsplit, composites of the
slice view (layout/__init__.py holds split and chunk, which split by sizes).

Every piece is a view of the input, as torch's are, made by slicing with Python's rules: the
indices of tensor_split may be negative, out of range or decreasing, and give empty pieces
where torch's slices do.
"""

from __future__ import annotations

import numbers

from ...tensor import dtypes
from ...tensor.tensor import Tensor, normalize_dim
from ..indexing.subscript import getitem

_SIGNATURES = (" * (Tensor input, tuple of ints indices, int dim = 0)\n"
               " * (Tensor input, Tensor tensor_indices_or_sections, int dim = 0)\n"
               " * (Tensor input, int sections, int dim = 0)")


def _piece(x: Tensor, dim: int, start, stop) -> Tensor:
    return getitem(x, (slice(None),) * dim + (slice(start, stop),))


def _by_sections(x: Tensor, dim: int, sections: int) -> tuple:
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    extent = x.shape[dim]
    size, larger = divmod(extent, sections)
    pieces, start = [], 0
    for index in range(sections):
        stop = start + size + (index < larger)
        pieces.append(_piece(x, dim, start, stop))
        start = stop
    return tuple(pieces)


def _by_indices(x: Tensor, dim: int, indices) -> tuple:
    pieces, start = [], 0
    for index in indices:
        pieces.append(_piece(x, dim, start, index))
        start = index
    pieces.append(_piece(x, dim, start, None))
    return tuple(pieces)


def _tensor_argument(value: Tensor):
    """The sections (a 0-d tensor) or indices (a 1-d one) a tensor argument holds."""
    if value.ndim > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                           "zero-dimensional or one-dimensional tensor, but got a tensor with "
                           f"{value.ndim} dims")
    if value.dtype is not dtypes.int64:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of "
                           f"long, but got {dtypes.SCALAR_TYPE_NAMES[value.dtype.name]}")
    # While tracing, tolist() gives a TracedList whose items int() specializes on: the trace
    # records this call's values, checked on every run (the pieces' sizes depend on them).
    values = value.tolist()
    return [int(index) for index in values] if value.ndim else int(values)


def tensor_split(input, indices_or_sections=None, dim: int = 0, *, indices=None,  # noqa: A002
                 sections=None, tensor_indices_or_sections=None) -> tuple:
    """Views of input along `dim`: `sections` pieces as equal as can be (the first
    `size % sections` one longer), or the pieces between the given `indices`."""
    given = [value for value in (indices_or_sections, indices, sections,
                                 tensor_indices_or_sections) if value is not None]
    if len(given) != 1:
        raise TypeError("tensor_split() missing required argument 'indices_or_sections'")
    (split_by,) = given
    if not isinstance(input, Tensor):
        raise TypeError(f"tensor_split(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    dim = normalize_dim(dim, input.ndim)
    if isinstance(split_by, Tensor):
        split_by = _tensor_argument(split_by)
    if isinstance(split_by, numbers.Integral) and not isinstance(split_by, bool):
        return _by_sections(input, dim, int(split_by))
    if isinstance(split_by, (list, tuple)) and all(
            isinstance(index, numbers.Integral) and not isinstance(index, bool)
            for index in split_by):
        return _by_indices(input, dim, [int(index) for index in split_by])
    raise TypeError(f"tensor_split() received an invalid combination of arguments - got "
                    f"(Tensor, {type(split_by).__name__}), but expected one of:\n{_SIGNATURES}")


def _split_along(name: str, x: Tensor, split_by, dim: int, least: int) -> tuple:
    """hsplit, vsplit, dsplit: tensor_split, whose sections must divide the dim."""
    if x.ndim < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but "
                           f"got a tensor with {x.ndim} dimensions!")
    if isinstance(split_by, numbers.Integral) and not isinstance(split_by, bool):
        extent = x.shape[dim]
        if split_by == 0 or extent % split_by:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {extent} is not divisible by the "
                               f"split_size {split_by}!")
    return tensor_split(x, split_by, dim)


def hsplit(input, indices_or_sections) -> tuple:  # noqa: A002
    """tensor_split along dim 1 (dim 0 of a 1-d tensor), whose sections must divide it."""
    return _split_along("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


def vsplit(input, indices_or_sections) -> tuple:  # noqa: A002
    """tensor_split along dim 0 of a tensor of 2 dims or more, whose sections must divide it."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections) -> tuple:  # noqa: A002
    """tensor_split along dim 2 of a tensor of 3 dims or more, whose sections must divide it."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)
