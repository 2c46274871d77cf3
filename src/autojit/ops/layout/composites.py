"""Layout composites: view and its forms (view_as, reshape_as, expand_as, view(dtype)),
flatten and unflatten, squeeze and unsqueeze, transpose, t and the matrix transposes, movedim,
select, unbind, stack, split, chunk, repeat and tile.

Each is written from layout/__init__.py's primitives (reshape, expand, permute, slice, cat), so none
needs rules of its own: autograd, forward mode, vmap, tracing and the lowerings come from the
primitives. layout/__init__.py re-exports every name here, and its importers read them from there.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.state import state
from ...tensor.symbolic import as_size, is_symbolic, size_product
from ...tensor.tensor import Tensor, normalize_dim
from ..autocast import PROMOTE, autocast_op
from ..registry import share_node
from ..view_creation import mark_views
from .dtype_views import view_dtype
from .eager_views import joined, reshape_view
from .primitives import (
    CAT,
    RESHAPE,
    _narrow,
    _pieces,
    cat,
    expand,
    infer_shape,
    permute,
    reshape,
)

__all__ = [
    "view", "view_as", "reshape_as", "expand_as", "flatten", "unflatten", "squeeze",
    "unsqueeze", "transpose", "t", "full_transpose", "matrix_transpose", "movedim", "select",
    "unbind", "stack", "split", "chunk", "repeat", "tile", "tile_method", "swapaxes", "swapdims",
    "moveaxis"
]


def view(x: Tensor, *shape, dtype=None) -> Tensor:
    """x with a new shape, sharing its storage: reshape where that is a view, torch's error
    where x's strides cannot give the shape (`x.t().view(-1)`), where reshape copies. With a
    dtype instead of a shape, x's memory read as that dtype (dtype_views.py)."""
    if len(shape) == 1:
        first = shape[0]
        if isinstance(first, (tuple, list)):
            shape = first
        elif first.__class__ is dtypes.DType:
            return view_dtype(x, first)
    elif dtype is not None and not shape:
        return view_dtype(x, dtype)
    out = reshape_view(x, shape, RESHAPE)
    if out is not None and out._base is not None:
        return out  # the fast path's view (eager_views.py)
    if out is None:
        out = reshape(x, shape)
    if not _viewed(x, out):
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return out


def _viewed(x: Tensor, out: Tensor) -> bool:
    """Whether eager's reshape of x into `out` shares x's storage (NumPy's rule for a reshape
    without a copy is torch's for view); while tracing, ir/aliasing.py decided it from eager's
    layout of x."""
    data = x._payload
    if x._batched or out is x or size_product(tuple(out.shape)) == 0:
        return True
    if data is None:
        tracer = state.tracer
        return tracer is None or tracer.eager_layout(x) is None or \
            out._traced_view is not None
    return data.__class__ is not np.ndarray or out._base is not None


def view_as(x: Tensor, other: Tensor) -> Tensor:
    """x viewed with `other`'s shape."""
    return view(x, tuple(other.shape))


def reshape_as(x: Tensor, other: Tensor) -> Tensor:
    """x reshaped to `other`'s shape (a view where the layout allows, else a copy)."""
    return reshape(x, tuple(other.shape))


def expand_as(x: Tensor, other: Tensor) -> Tensor:
    """A broadcast view of x with `other`'s shape."""
    return expand(x, tuple(other.shape))


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """x with dims `start_dim` to `end_dim` (inclusive) merged into one."""
    data = x._payload
    shape = data.shape if data.__class__ is np.ndarray else tuple(x.shape)
    if not shape:
        return reshape(x, (1,))
    if start_dim == 0 and end_dim == -1 and data.__class__ is np.ndarray:  # all dims
        if len(shape) == 1:
            return x
        view = reshape_view(x, (data.size,), RESHAPE, True)
        if view is not None:
            return view
    start, end = normalize_dim(start_dim, len(shape)), normalize_dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return x  # torch returns the input itself
    merged = 1
    for extent in shape[start:end + 1]:
        merged *= extent
    shape = shape[:start] + (merged,) + shape[end + 1:]
    view = reshape_view(x, shape, RESHAPE, True)
    return view if view is not None else reshape(x, shape)


def unflatten(x: Tensor, dim: int, sizes) -> Tensor:
    """x with dim `dim` split into dims of `sizes` (one of which may be -1)."""
    shape = tuple(x.shape)
    dim = normalize_dim(dim, len(shape))
    sizes = tuple(as_size(s) for s in sizes)
    try:
        sizes = infer_shape(sizes, shape[dim])
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({shape[dim]}) in the input tensor") from None
    return reshape(x, shape[:dim] + sizes + shape[dim + 1:])


def squeeze(x: Tensor, dim=None) -> Tensor:
    """x without size-1 dims (all of them, or those of `dim`, an int or a tuple)."""
    data = x._payload
    shape = data.shape if data.__class__ is np.ndarray else tuple(x.shape)
    squeezed = None  # for reshape_view: which dims NumPy's squeeze is to drop
    if dim is None:
        kept = ()
        for extent in shape:  # a loop: a comprehension costs more at a few dims
            if extent != 1:
                kept += (extent,)
        squeezed = -1
    elif dim.__class__ is int and -len(shape) <= dim < len(shape):
        if dim < 0:
            dim += len(shape)
        kept = shape[:dim] + shape[dim + 1:] if shape[dim] == 1 else shape
        squeezed = dim
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = {normalize_dim(int(d), len(shape)) for d in dims}
        kept = tuple(extent for axis, extent in enumerate(shape)
                     if not (axis in dims and extent == 1))
    if kept == shape:
        return x
    view = reshape_view(x, kept, RESHAPE, True, True, squeezed)
    return view if view is not None else reshape(x, kept)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """x with a size-1 dim inserted at `dim` (which may be x.ndim)."""
    data = x._payload
    shape = data.shape if data.__class__ is np.ndarray else tuple(x.shape)
    if dim.__class__ is not int or not -len(shape) - 1 <= dim <= len(shape):
        dim = normalize_dim(dim, len(shape) + 1)  # torch's error, or a bool or NumPy int
    elif dim < 0:
        dim += len(shape) + 1
    shape = shape[:dim] + (1,) + shape[dim:]
    view = reshape_view(x, shape, RESHAPE, True, True)
    return view if view is not None else reshape(x, shape)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """x with dims `dim0` and `dim1` swapped (a view)."""
    ndim = x.ndim
    if ndim == 0:
        normalize_dim(dim0, 0), normalize_dim(dim1, 0)
        return x
    dims = list(range(ndim))
    dim0, dim1 = normalize_dim(dim0, ndim), normalize_dim(dim1, ndim)
    dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return permute(x, dims)


swapaxes = swapdims = transpose


def t(x: Tensor) -> Tensor:
    """The transpose of a matrix; 0-D and 1-D tensors come back as they are."""
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return transpose(x, 0, 1) if x.ndim == 2 else x


def full_transpose(x: Tensor) -> Tensor:
    """Tensor.T: all dims reversed."""
    return permute(x, tuple(range(x.ndim - 1, -1, -1)))


def matrix_transpose(x: Tensor) -> Tensor:
    """Tensor.mT: the last two dims swapped."""
    if x.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {x.ndim}-D tensor.")
    return transpose(x, -2, -1)


def movedim(x: Tensor, source, destination) -> Tensor:
    """x with the dims `source` moved to positions `destination` (ints or sequences)."""
    ndim = x.ndim
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(source)}"
                           f" dims) should contain the same number of dims as destination "
                           f"({list(destination)} dims)")
    given = {"source": list(source), "destination": list(destination)}
    source = tuple(normalize_dim(d, ndim) for d in source)
    destination = tuple(normalize_dim(d, ndim) for d in destination)
    for name, dims in (("source", source), ("destination", destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given[name]})")
    order = [None] * ndim
    for src, dst in zip(source, destination, strict=False):
        order[dst] = src
    rest = iter(d for d in range(ndim) if d not in source)
    order = [next(rest) if d is None else d for d in order]
    return permute(x, order)


moveaxis = movedim


def select(x: Tensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along `dim`, with that dim removed."""
    shape = tuple(x.shape)
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, len(shape))
    index = int(index)
    if not -shape[dim] <= index < shape[dim]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(shape)} at dimension {dim}")
    index %= shape[dim]
    return reshape(_narrow(x, dim, index, 1), shape[:dim] + shape[dim + 1:])


def unbind(x: Tensor, dim: int = 0) -> tuple:
    """The slices of x along `dim`, as a tuple of views with that dim removed."""
    dim = normalize_dim(dim, x.ndim, wrap_scalar=False)
    outputs = tuple(select(x, dim, i) for i in range(x.shape[dim]))
    mark_views(outputs, "multi_output", "Unbind")  # torch forbids writing them in place
    return share_node(outputs, (x,), "UnbindBackward0")  # one grad_fn, as torch's


@autocast_op(cpu=PROMOTE)
def stack(tensors, dim: int = 0) -> Tensor:
    """Equally shaped tensors joined along a new dim `dim`."""
    tensors = tuple(tensors)
    result = joined(tensors, dim, True, CAT)
    if result is not None:
        return result
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tuple(tensors[0].shape)
    for position, tensor in enumerate(tensors[1:], 1):
        if tuple(tensor.shape) != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(tensor.shape)} at entry "
                               f"{position}")
    dim = normalize_dim(dim, len(first) + 1)
    return cat([unsqueeze(tensor, dim) for tensor in tensors], dim)


def split(x: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Pieces of x along `dim`: of one size (the last may be smaller) or of the listed sizes."""
    outputs, name = split_pieces(x, split_size_or_sections, dim)
    # torch forbids writing them in place (split_with_sizes names itself in the error)
    mark_views(outputs, "multi_output", name)
    return share_node(outputs, (x,), name + "Backward0")  # one grad_fn, as torch's


def split_pieces(x: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """split's pieces, each with a history of its own, and the name of torch's function
    ("Split" or "SplitWithSizes"); unsafe_split marks and names them otherwise."""
    data = x._payload
    shape = data.shape if data is not None else x._value.shape
    dim = normalize_dim(dim, len(shape))
    extent = shape[dim]
    if isinstance(split_size_or_sections, int) or is_symbolic(split_size_or_sections):
        # A size from a dynamic trace (chunk of a symbolic extent): how many pieces there are
        # is a Python int, so range() specializes it (guarded), as a list's length would be.
        size = split_size_or_sections
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size="
                               f"{size}")
        if size == 0 and extent != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {extent}")
        sizes = [min(size, extent - start) for start in range(0, extent, size)] if size else [0]
    else:
        sizes = [as_size(s) for s in split_size_or_sections]
        if sum(sizes) != extent or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {extent} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f"split_sizes={sizes}")
    bounds, start = [], 0
    for size in sizes:
        bounds.append((start, start + size))
        start += size
    return tuple(_pieces(x, dim, bounds)), "Split" if isinstance(
        split_size_or_sections, int) or is_symbolic(split_size_or_sections) else "SplitWithSizes"


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple:
    """x split along `dim` into at most `chunks` pieces of equal size (the last may be
    smaller)."""
    return split(x, chunk_sections(x, chunks, dim), dim)


def chunk_sections(x: Tensor, chunks: int, dim: int = 0):
    """The split_size_or_sections of split that chunk(x, chunks, dim) is."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    data = x._payload
    shape = data.shape if data is not None else x._value.shape
    dim = normalize_dim(dim, len(shape))
    extent = shape[dim]
    return [0] * chunks if extent == 0 else -(-extent // chunks)


def repeat(x: Tensor, *sizes) -> Tensor:
    """x tiled `sizes[i]` times along each dim (torch.Tensor.repeat); extra counts add
    leading dims."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    sizes = tuple(as_size(s) for s in sizes)
    if len(sizes) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    shape = (1,) * (len(sizes) - x.ndim) + tuple(x.shape)
    # Interleave a unit dim before every dim, broadcast it to the repeat count, then merge.
    interleaved = tuple(extent for d in shape for extent in (1, d))
    target = tuple(extent for r, d in zip(sizes, shape, strict=False) for extent in (r, d))
    tiled = expand(reshape(x, interleaved), target)
    out = reshape(tiled, tuple(r * d for r, d in zip(sizes, shape, strict=False)))
    # torch's repeat makes new memory: a reshape that stayed a view (of x, or a broadcast of
    # it, whose elements alias) would make a write into the result fail or reach x.
    return out.clone() if out._base is not None else out


def tile(x: Tensor, dims) -> Tensor:
    """x tiled `dims[i]` times along each dim, like `repeat`, with missing leading counts
    taken as 1."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    dims = tuple(int(d) for d in dims)
    return repeat(x, (1,) * (x.ndim - len(dims)) + dims)


def tile_method(x: Tensor, *counts, dims=None) -> Tensor:
    """Tensor.tile: the counts as separate ints (`x.tile(2, 3)`), one sequence, or `dims=`,
    as torch's method takes them (the function takes a sequence only)."""
    if dims is not None or not counts:
        return tile(x, dims)
    return tile(x, counts[0] if len(counts) == 1 and isinstance(counts[0], (tuple, list))
                else counts)
