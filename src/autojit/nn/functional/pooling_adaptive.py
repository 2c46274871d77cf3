"""Adaptive pooling for autojit.nn.functional, over 1, 2 and 3 spatial dims, written as
composites (the other pools are in pooling.py, whose helpers this uses).

Adaptive pooling reduces one spatial dim at a time (a cell of several dims is the product of
one interval per dim, and both the sum and the first maximum in row-major order decompose
that way): a reshape where the size divides evenly, otherwise a gather of each cell's
positions, padded to the largest cell. The layers of nn/pooling/adaptive.py call it;
nn/functional/__init__.py re-exports it.
"""

from __future__ import annotations

import numpy as np

from ...ops import elementwise as ew
from ...ops.autocast import FP32, autocast_op
from ...ops.indexing import index_tensor
from ...ops.reduction import sum_
from ...tensor import dtypes
from ...tensor.creation import tensor, zeros
from ...tensor.tensor import Tensor
from .conv import _check_tensor
from .pooling import (
    _batched,
    _first_maximum,
    _plane_strides,
    _type_name,
    _unbatch,
)

# ---- adaptive pooling ---------------------------------------------------------------------------


def _adaptive_output_size(name, input, output_size, spatial) -> tuple:  # noqa: A002
    _check_tensor(name, "input", input)
    if spatial > 1 and output_size is not None and not isinstance(output_size, int) and \
            input.ndim <= len(output_size):
        # torch.nn.functional's own check, before the op's: sizes default to the input's
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if input.ndim not in (spatial + 1, spatial + 2):
        if spatial == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                               f"tensor for argument #1 'self' (while checking arguments for "
                               f"{name})")
        colon = ":" if "max" in name else ""
        raise RuntimeError(f"{name}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but "
                           f"got{colon} {list(input.shape)}")
    sizes = tuple(input.shape[input.ndim - spatial:])
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * spatial
    output_size = tuple(output_size)
    if len(output_size) != spatial:
        if spatial == 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                               f"{len(output_size)})")
        if "max" in name:
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be {spatial}")
        raise RuntimeError(f"{name}: output_size must be {spatial}")
    out_sizes = tuple(n if o is None else int(o) for n, o in zip(sizes, output_size,
                                                                strict=True))
    if any(o < 0 for o in out_sizes):
        if "max" in name:  # torch's kernel allocates the result first (1-d: as 2-d pooling)
            shape = [*input.shape[:input.ndim - spatial], *([1] if spatial == 1 else []),
                     *out_sizes]
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{next(o for o in out_sizes if o < 0)}: {shape}")
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{', '.join(map(str, out_sizes))}}}")
    if input.ndim == spatial + 2 and any(n == 0 for n in input.shape[1:]) or \
            input.ndim == spatial + 1 and any(n == 0 for n in input.shape):
        raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                           f"dimensions, but input has sizes {list(input.shape)} with dimension "
                           f"{1 if input.ndim == spatial + 2 else 0} being empty")
    return out_sizes


def _cells(n: int, o: int):
    """Cell i of an adaptive pool spans [floor(i n / o), ceil((i + 1) n / o))."""
    starts = (np.arange(o) * n) // o
    stops = -((-(np.arange(o) + 1) * n) // o)
    return starts, stops


def _adaptive_windows(x: Tensor, dim: int, o: int):
    """x with dim split into (o cells, k positions): the windows, their source positions
    (o, k) and which are real (None when all are: the size divides evenly)."""
    n = x.shape[dim]
    if n % o == 0:
        k = n // o
        shape = list(x.shape)
        shape[dim:dim + 1] = [o, k]
        return x.reshape(*shape), np.arange(n).reshape(o, k), None
    starts, stops = _cells(n, o)
    k = int((stops - starts).max())
    positions = starts[:, None] + np.arange(k)
    valid = positions < stops[:, None]
    positions = np.minimum(positions, stops[:, None] - 1)  # repeat a cell's last element
    gathered = index_tensor(x, tensor(positions.reshape(1, -1), device=x.device), (dim,))
    shape = list(x.shape)
    shape[dim:dim + 1] = [o, k]
    return gathered.reshape(*shape), positions, valid


def _along(table: np.ndarray, dim: int, ndim: int, device) -> Tensor:
    """A (o, k) table shaped to broadcast over windows whose dims dim, dim + 1 are (o, k)."""
    shape = [1] * ndim
    shape[dim], shape[dim + 1] = table.shape
    return tensor(table.reshape(shape), device=device)


def _empty_adaptive(x: Tensor, out_sizes, batched: bool, indices: bool):
    shape = (x.shape[0], x.shape[1], *out_sizes)
    result = _unbatch(zeros(shape, dtype=x.dtype, device=x.device), batched)
    if not indices:
        return result
    return result, _unbatch(zeros(shape, dtype=dtypes.int64, device=x.device), batched)


def _adaptive_avg_pool(name, input, output_size, spatial):  # noqa: A002
    out_sizes = _adaptive_output_size(name, input, output_size, spatial)
    if not input.dtype.is_floating_point:
        # torch's kernels' names: 1-d pooling runs as 2-d
        kernel = {"adaptive_avg_pool1d": "adaptive_avg_pool2d",
                  "adaptive_avg_pool3d": "adaptive_avg_pool3d_cpu"}.get(name, name)
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_type_name(input.dtype)}'")
    x, batched = _batched(input, spatial)
    if any(o == 0 for o in out_sizes):
        return _empty_adaptive(x, out_sizes, batched, False)
    counts = []
    # The sums per dim, then one division by the cell's element count, as torch divides.
    for j in reversed(range(spatial)):
        dim = 2 + j
        windows, positions, valid = _adaptive_windows(x, dim, out_sizes[j])
        if valid is not None:
            windows = ew.where(_along(valid, dim, windows.ndim, x.device), windows, 0)
            counts.insert(0, valid.sum(1))
        else:
            counts.insert(0, np.full(out_sizes[j], positions.shape[1]))
        x = sum_(windows, dim + 1)
    divisor = counts[0]
    for count in counts[1:]:
        divisor = np.multiply.outer(divisor, count)
    if (divisor == divisor.flat[0]).all():
        x = x / int(divisor.flat[0])
    else:
        x = x / tensor(divisor.astype(x.dtype.numpy), device=x.device)
    return _unbatch(x, batched)




def _adaptive_max_pool(name, input, output_size, return_indices, spatial):  # noqa: A002
    out_sizes = _adaptive_output_size(name, input, output_size, spatial)
    if not input.dtype.is_floating_point:
        kernel = {"adaptive_max_pool1d": "adaptive_max_pool2d",
                  "adaptive_max_pool3d": "adaptive_max_pool3d_cpu"}.get(name, name)
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_type_name(input.dtype)}'")
    x, batched = _batched(input, spatial)
    if any(o == 0 for o in out_sizes):
        return _empty_adaptive(x, out_sizes, batched, return_indices)
    planes = _plane_strides(tuple(x.shape[2:]))
    flat = None  # the flat index, in the input plane, of each remaining element
    for j in reversed(range(spatial)):
        dim = 2 + j
        windows, positions, _ = _adaptive_windows(x, dim, out_sizes[j])
        k = positions.shape[1]
        ranks = _along(np.broadcast_to(np.arange(k), positions.shape), dim, windows.ndim,
                       x.device)
        x, first = _first_maximum(windows, (dim + 1,), ranks, k)
        if return_indices:
            offsets = _along(positions * planes[j], dim, windows.ndim, x.device)
            if flat is not None:
                offsets = offsets + _adaptive_windows(flat, dim, out_sizes[j])[0]
            flat = sum_(ew.where(ranks == first, offsets, 0), dim + 1)
    x = _unbatch(x, batched)
    return (x, _unbatch(flat, batched)) if return_indices else x


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average pooling of (N, C, L) or (C, L) to a fixed length: cell i spans
    [floor(i L / o), ceil((i + 1) L / o))."""
    return _adaptive_avg_pool("adaptive_avg_pool1d", input, output_size, 1)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average pooling to a fixed (oH, oW) (None keeps a size): cell i spans
    [floor(i n / o), ceil((i + 1) n / o)) along each dim."""
    return _adaptive_avg_pool("adaptive_avg_pool2d", input, output_size, 2)


@autocast_op(cpu=FP32)
def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average pooling to a fixed (oD, oH, oW) (None keeps a size)."""
    return _adaptive_avg_pool("adaptive_avg_pool3d", input, output_size, 3)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size,  # noqa: A002
                                     return_indices: bool = False):
    """adaptive_max_pool1d's (values, indices)."""
    return _adaptive_max_pool("adaptive_max_pool1d", input, output_size, True, 1)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size,  # noqa: A002
                                     return_indices: bool = False):
    """adaptive_max_pool2d's (values, indices): flat positions in each input plane."""
    return _adaptive_max_pool("adaptive_max_pool2d", input, output_size, True, 2)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size,  # noqa: A002
                                     return_indices: bool = False):
    """adaptive_max_pool3d's (values, indices): flat positions in each input volume."""
    return _adaptive_max_pool("adaptive_max_pool3d", input, output_size, True, 3)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):  # noqa: A002
    """Max pooling of (N, C, L) or (C, L) to a fixed length over adaptive cells."""
    return _adaptive_max_pool("adaptive_max_pool1d", input, output_size, return_indices, 1)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):  # noqa: A002
    """Max pooling to a fixed (oH, oW) (None keeps a size) over adaptive cells."""
    return _adaptive_max_pool("adaptive_max_pool2d", input, output_size, return_indices, 2)


@autocast_op(cpu=FP32)
def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):  # noqa: A002
    """Max pooling to a fixed (oD, oH, oW) (None keeps a size) over adaptive cells."""
    return _adaptive_max_pool("adaptive_max_pool3d", input, output_size, return_indices, 3)
