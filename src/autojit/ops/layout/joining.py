"""Joining and rearranging, as composites of the layout primitives: hstack, vstack (row_stack),
dstack, column_stack, atleast_1d/2d/3d, block_diag, cartesian_prod, meshgrid, roll, flip's
method form, fliplr, flipud, rot90 and repeat_interleave.

Each is written from cat, reshape, expand, slices and index (layout/__init__.py,
indexing/__init__.py), so it needs no rules of its own: its gradients, double backward, kernels and
CUDA runs are those primitives'. repeat_interleave with a tensor of repeats reads the repeats (the
result's size depends on them): while tracing that is a graph break, as in torch.compile.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...tensor import dtypes
from ...tensor.state import state
from ...tensor.tensor import Tensor, normalize_dim
from .. import api
from ..dtype_rules import promoted_dtype
from ..inplace import write_out
from .composites import stack, transpose, unsqueeze
from .primitives import cat, embed_slice, expand, flip, narrow, reshape


def _tensor_list(name: str, tensors) -> list:
    """The tensors of a sequence argument, with torch's errors for a tensor or an empty list."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        "not Tensor")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def _varargs(tensors: tuple):
    """atleast_*d(x), atleast_*d(x, y) and atleast_*d([x, y]): one tensor, or a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(tensors[0]), True
    return tensors, len(tensors) != 1


def _atleast(tensors: tuple, ndim: int, reshaped):
    tensors, many = _varargs(tensors)
    results = tuple(x if x.ndim >= ndim else reshaped(x) for x in tensors)
    return results if many else results[0]


def atleast_1d(*tensors):
    """Each tensor with at least one dim (a 0-d tensor becomes shape [1]); one tensor comes
    back alone, several as a tuple."""
    return _atleast(tensors, 1, lambda x: reshape(x, 1))


def atleast_2d(*tensors):
    """Each tensor with at least two dims: shape [] becomes [1, 1], [n] becomes [1, n]."""
    return _atleast(tensors, 2, lambda x: reshape(x, 1, -1 if x.ndim else 1))


def atleast_3d(*tensors):
    """Each tensor with at least three dims: [] becomes [1, 1, 1], [n] becomes [1, n, 1] and
    [m, n] becomes [m, n, 1]."""
    def reshaped(x):
        if x.ndim == 2:
            return unsqueeze(x, 2)
        return reshape(x, 1, x.numel(), 1)

    return _atleast(tensors, 3, reshaped)


def hstack(tensors, *, out=None) -> Tensor:
    """The tensors joined column-wise: along dim 0 for 1-D tensors, dim 1 otherwise."""
    tensors = [atleast_1d(x) for x in _tensor_list("hstack", tensors)]
    return _stacked(cat(tensors, 0 if tensors[0].ndim == 1 else 1), out, "hstack")


def vstack(tensors, *, out=None) -> Tensor:
    """The tensors joined row-wise (along dim 0), 1-D ones as rows."""
    return _stacked(cat([atleast_2d(x) for x in _tensor_list("vstack", tensors)], 0), out,
                    "vstack")


row_stack = vstack


def dstack(tensors, *, out=None) -> Tensor:
    """The tensors joined depth-wise (along dim 2), after atleast_3d."""
    return _stacked(cat([atleast_3d(x) for x in _tensor_list("dstack", tensors)], 2), out,
                    "dstack")


def column_stack(tensors, *, out=None) -> Tensor:
    """The tensors joined as columns (along dim 1), 0-D and 1-D ones as columns."""
    tensors = _tensor_list("column_stack", tensors)
    return _stacked(cat([reshape(x, x.numel(), 1) if x.ndim <= 1 else x for x in tensors], 1),
                    out, "column_stack")


def _stacked(result: Tensor, out, name: str) -> Tensor:
    """result, or written into `out`, which may hold a wider dtype (torch.cat's rule)."""
    if out is None:
        return result
    return write_out(out, result, name, TypeError(
        f"torch.cat(): input types can't be cast to the desired output type "
        f"{dtypes.scalar_type_name(out.dtype) if isinstance(out, Tensor) else None}"),
        castable=True)


def block_diag(*tensors) -> Tensor:
    """The tensors (at most 2-D; 0-D and 1-D ones as one row) as the blocks of a block
    diagonal matrix, zeros elsewhere, in the promoted dtype."""
    from ...tensor.creation import zeros

    for position, x in enumerate(tensors):
        if x.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {position} has {x.ndim} dimensions")
    if not tensors:
        return zeros(1, 0)
    blocks = [reshape(x, 1, -1 if x.ndim else 1) if x.ndim < 2 else x for x in tensors]
    dtype = promoted_dtype(blocks)
    width = sum(block.shape[1] for block in blocks)
    rows, left = [], 0
    for block in blocks:
        height, columns = block.shape
        rows.append(embed_slice(block.to(dtype), (height, width),
                                ((0, height, 1), (left, left + columns, 1))))
        left += columns
    return cat(rows, 0)


def _grid_tensors(name: str, tensors: tuple) -> list:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if any(x.dtype is not tensors[0].dtype for x in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    return list(tensors)


_MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the "
                     "indexing argument.")


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids of 0-D or 1-D tensors: result k repeats tensor k along its own dim.
    indexing="ij" gives shape (len(t0), len(t1), ...); "xy" swaps the first two dims (the
    default is "ij", with torch's warning that it will be required)."""
    tensors = _grid_tensors("meshgrid", tensors)
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    for x in tensors:
        if x.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {x}")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(x.numel() for x in tensors)
    grids = []
    for axis, x in enumerate(tensors):
        view = [1] * len(tensors)
        view[axis] = shape[axis]
        grids.append(expand(reshape(x, view), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors) -> Tensor:
    """Every combination of the 1-D tensors' elements, one per row (itertools.product's
    order); a single tensor comes back as it is."""
    tensors = _grid_tensors("cartesian_prod", tensors)
    for x in tensors:
        if x.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(grid, -1) for grid in grids], 1)


# ---- rearranging ---------------------------------------------------------------------------------

def roll(x: Tensor, shifts, dims=None) -> Tensor:
    """x with its elements shifted by `shifts` along `dims` (ints or tuples), those pushed off
    one end coming back at the other; without dims, over the flattened x."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims:0")
        return reshape(roll(reshape(x, -1), shifts, 0), tuple(x.shape))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    for shift, dim in zip(shifts, dims, strict=True):
        dim = normalize_dim(dim, x.ndim)
        extent = x.shape[dim]
        if extent == 0:
            continue
        shift = int(shift) % extent
        if shift:
            x = cat([narrow(x, dim, extent - shift, shift), narrow(x, dim, 0, extent - shift)],
                    dim)
    return x


def flip_method(x: Tensor, *dims) -> Tensor:
    """x with the order of elements reversed along `dims` (given as ints or one sequence)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    return flip(x, tuple(dims))


def fliplr(x: Tensor) -> Tensor:
    """x reversed left to right (along dim 1)."""
    if x.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(x, (1,))


def flipud(x: Tensor) -> Tensor:
    """x reversed upside down (along dim 0)."""
    if x.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(x, (0,))


def rot90(x: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """x rotated by k quarter turns in the plane of `dims`, from the first towards the
    second."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    first, second = dims
    if first == second or abs(first - second) == x.ndim:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {first} "
                           f"and dim1 = {second}")
    k %= 4
    if k == 1:
        return transpose(flip(x, (second,)), first, second)
    if k == 2:
        return flip(x, (first, second))
    if k == 3:
        return transpose(flip(x, (first,)), first, second)
    for dim in dims:
        normalize_dim(dim, x.ndim)
    return x.clone()


def repeat_interleave(x: Tensor, repeats=None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element (or slice along `dim`) of x repeated `repeats` times in place: an int, or
    a tensor of one count per element; without dim, over the flattened x. With x alone, x
    holds the counts and the result repeats their positions."""
    from ...tensor.creation import arange

    if repeats is None:
        counts = x
        return repeat_interleave(arange(counts.numel(), dtype=counts.dtype), counts,
                                 output_size=output_size)
    if dim is None:
        x, dim = reshape(x, -1), 0
    dim = normalize_dim(dim, x.ndim)
    if isinstance(repeats, Tensor) and repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if isinstance(repeats, Tensor) and repeats.numel() == 1:
        if repeats.dtype.category != dtypes.INTEGER:
            raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                      f"'{dtypes.scalar_type_name(repeats.dtype)}'")
        repeats = reshape(repeats, ()).item().specialize(_SIZE_FROM_DATA) if _traced() else \
            _counts(repeats)[0]
    extent = x.shape[dim] if x.ndim else 1
    if not isinstance(repeats, Tensor):
        repeats = int(repeats)
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        _check_output_size(output_size, repeats * extent)
        if x.ndim == 0:
            return expand(reshape(x, 1), (repeats,))
        shape = tuple(x.shape)
        spread = expand(unsqueeze(x, dim + 1), shape[:dim + 1] + (repeats,) + shape[dim + 1:])
        return reshape(spread, shape[:dim] + (extent * repeats,) + shape[dim + 1:])
    if repeats.dtype.category != dtypes.INTEGER:
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{dtypes.scalar_type_name(repeats.dtype)}'")
    if repeats.shape[0] != extent:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = "
                           f"{extent}")
    if _traced():
        return api.index_select(x, dim, _traced_positions(repeats, output_size))
    counts = _counts(repeats)
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    _check_output_size(output_size, int(counts.sum()))
    positions = np.repeat(np.arange(extent), counts)
    index = Tensor._make(positions.astype(np.int64), dtypes.int64)
    return api.index_select(x, dim, index if not x.is_cuda else index.to(x.device))


_SIZE_FROM_DATA = "repeat_interleave() with a tensor of repeats (its result's size depends on " \
    "their values)"


def _traced() -> bool:
    """Whether a trace is running that can take this call's repeat counts (checked on every
    run, a split of the graph) instead of breaking."""
    tracer = state.tracer
    return tracer is not None and tracer.evaluates and not state.vmap_levels


def _traced_positions(repeats: Tensor, output_size) -> Tensor:
    """The position each result slice comes from, from graph ops: result slice j comes from
    the first position whose running count of repeats exceeds j."""
    from ...tensor.creation import arange
    if (repeats < 0).any().item().specialize("repeat_interleave() (negative repeats raise)"):
        raise RuntimeError("repeats can not be negative")
    total = repeats.sum().item().specialize(_SIZE_FROM_DATA)
    _check_output_size(output_size, total)
    ends = api.cumsum(repeats.long(), 0)
    return api.searchsorted(ends, arange(total, dtype=dtypes.int64, device=repeats.device),
                            right=True)


def _counts(repeats: Tensor) -> np.ndarray:
    """The repeat counts as host data; while tracing, a graph break (the result's size)."""
    if state.tracer is not None:
        from ...tensor.graph_break import graph_break

        graph_break("repeat_interleave() with a tensor of repeats (its result's size depends "
                    "on their values)", needs_data=False)
    return repeats._host("repeat_interleave()").reshape(-1).astype(np.int64)


def _check_output_size(output_size, total: int) -> None:
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
