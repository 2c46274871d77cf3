"""Layout primitives: reshape, expand, permute, slice (and its adjoint embed_slice), flip, cat.

These move or select elements without arithmetic, so each is linear and its JVP is the op
itself on the tangent (`linear_jvp`; cat's joins the inputs' tangents). Eagerly they return
NumPy views where NumPy can (the result then shares the input's version counter, as torch
views do). Composites built from them (view, flatten, squeeze, unsqueeze, transpose, stack,
split, chunk, select) are at the bottom of this file. The stride rules of the lowerings are in
layout_folds.py; eager_views.py makes the views of reshape and its forms, and cat and stack,
without the general dispatch where no autograd node is needed, and the pieces of split, chunk
and narrow, with their nodes, where nothing traces or records specially.
"""

from __future__ import annotations

import numpy as np

from ..tensor import dtypes
from ..tensor.memory_format import (
    contiguous_format,
    is_laid_out,
    laid_out,
    order_of,
    suggested_format,
)
from ..tensor.state import state
from ..tensor.symbolic import as_size, is_symbolic, size_product
from ..tensor.tensor import Tensor, normalize_dim
from . import batching
from .autocast import PROMOTE, autocast_op
from .dtype_views import view_dtype
from .eager_views import joined, reshape_view, slice_piece, sliced_data
from .layout_folds import (  # noqa: F401 - contiguous_strides is read from here too
    contiguous_strides,
    fold_expand,
    fold_permute,
    fold_reshape,
    fold_slice,
    slice_start,
)
from .registry import (
    Layout,
    bind,
    define_op,
    promoted_dtype,
    row_major,
    rule_first,
    rule_promote,
)

# ---- forward mode -----------------------------------------------------------------------------

def linear_jvp(op, tangents, attrs):
    """The JVP of an op linear in its one input: the op itself, with its attrs, on the
    tangent (None, a zero tangent, stays zero)."""
    (tangent,) = tangents
    return None if tangent is None else bind(op, (tangent,), attrs)


# ---- reshape ---------------------------------------------------------------------------------


def infer_shape(shape, numel: int) -> tuple:
    """Resolve one -1 in a requested shape, with torch's error when sizes disagree."""
    shape = tuple(as_size(s) for s in shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for extent in shape:
        if extent != -1:
            if extent < 0:
                raise RuntimeError(f"invalid shape dimension {extent}")
            known *= extent
    if unknown:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value and "
                               "is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[:unknown[0]] + (numel // known,) + shape[unknown[0] + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _reshape_rule(input_shape, shape):
    # The attr is named `shape`, so the input's shape must not be (the rule gets attrs by name).
    if size_product(input_shape) != size_product(shape):
        raise ValueError(f"shape '{list(shape)}' is invalid for input of size "
                         f"{size_product(input_shape)}")
    return tuple(shape)


RESHAPE = define_op(name="reshape", arity=1, shape=_reshape_rule, dtype=rule_first,
                    impl=lambda x, shape: x.reshape(shape),
                    vjp=lambda ctx, g: (g.reshape(ctx.input_meta[0][0]),), saves=(),
                    jvp=lambda inputs, tangents, out, attrs: linear_jvp(RESHAPE, tangents, attrs),
                    lowering=Layout("reshape", fold_reshape), grad_name="ViewBackward0", view=True,
                    batch=batching.shape_rule("shape"))


def reshape(x: Tensor, *shape) -> Tensor:
    """x with a new shape of the same number of elements; one extent may be -1."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    view = reshape_view(x, shape, RESHAPE)
    if view is not None:
        return view
    return bind(RESHAPE, (x,), {"shape": infer_shape(shape, x.numel())})


# ---- expand (broadcast_to) ----------------------------------------------------------------------

def expand_rule(shape, target):
    if len(target) < len(shape):
        raise ValueError(f"the number of sizes provided ({len(target)}) must be greater or "
                         f"equal to the number of dimensions in the tensor ({len(shape)})")
    offset = len(target) - len(shape)
    for axis, extent in enumerate(shape):
        if extent != 1 and extent != target[offset + axis]:
            raise ValueError(
                f"The expanded size of the tensor ({target[offset + axis]}) must match the "
                f"existing size ({extent}) at non-singleton dimension {offset + axis}.  "
                f"Target sizes: {list(target)}.  Tensor sizes: {list(shape)}")
    return tuple(target)


EXPAND = define_op(name="expand", arity=1,
                   shape=lambda input_shape, shape: expand_rule(input_shape, shape),
                   dtype=rule_first,
                   impl=lambda x, shape: np.broadcast_to(x, shape),
                   # The engine sums the gradient back to the input's shape.
                   vjp=lambda ctx, g: (g,), saves=(), lowering=Layout("broadcast", fold_expand),
                   jvp=lambda inputs, tangents, out, attrs: linear_jvp(EXPAND, tangents, attrs),
                   batch=batching.expand_rule,
                   grad_name="ExpandBackward0", view=True)


def expand(x: Tensor, *shape, implicit: bool = False) -> Tensor:
    """A broadcast view of x with `shape`; -1 keeps an existing extent (`implicit`, torch's
    flag for an expansion it made itself, changes nothing)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    current = tuple(x.shape)
    offset = len(shape) - len(current)
    target = tuple(current[i - offset] if (s == -1 and i >= offset) else as_size(s)
                   for i, s in enumerate(shape))
    if target == current:
        return x
    try:
        expand_rule(current, target)
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    return bind(EXPAND, (x,), {"shape": target})


def broadcast_to(x: Tensor, shape) -> Tensor:
    """A broadcast view of x with `shape` (a sequence), as `expand`."""
    return expand(x, tuple(shape))


# ---- permute ----------------------------------------------------------------------------------

PERMUTE = define_op(
    name="permute", arity=1, shape=lambda shape, dims: tuple(shape[d] for d in dims),
    dtype=rule_first, impl=lambda x, dims: np.transpose(x, dims),
    vjp=lambda ctx, g: (g.permute(*np.argsort(ctx.attrs["dims"]).tolist()),), saves=(),
    jvp=lambda inputs, tangents, out, attrs: linear_jvp(PERMUTE, tangents, attrs),
    lowering=Layout("permute", fold_permute), grad_name="PermuteBackward0", view=True,
    batch=batching.permute_rule)


def permute(x: Tensor, *dims) -> Tensor:
    """A view of x with its dims reordered: dim i of the result is dim `dims[i]` of x."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    ndim = x.ndim
    if len(dims) != ndim:
        raise RuntimeError("permute(): number of dimensions in the tensor input does not match "
                           "the length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(normalize_dim(int(d), ndim) for d in dims)
    if len(set(dims)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if dims == tuple(range(ndim)):
        return x
    return bind(PERMUTE, (x,), {"dims": dims})


# ---- slice and its adjoint -------------------------------------------------------------------
# `slices` is a tuple of (start, stop, step) per dim, normalized to non-negative, in range and
# with step >= 1, so the result extent along a dim is len(range(start, stop, step)).

def slice_length(start, stop, step) -> int:
    """len(range(start, stop, step)) for step >= 1, kept symbolic for a dynamic size."""
    if all(isinstance(bound, int) for bound in (start, stop, step)):
        return len(range(start, stop, step))
    span = stop - start
    return (span + step - 1) // step if span > 0 else 0


def _slice_rule(shape, slices):
    return tuple(slice_length(*s) for s in slices)


def _embed_impl(g, full_shape, slices):
    out = np.zeros(full_shape, dtype=g.dtype)
    out[tuple([slice(*s) for s in slices])] = g
    return out


EMBED_SLICE = define_op(
    name="embed_slice", arity=1, shape=lambda shape, full_shape, slices: tuple(full_shape),
    dtype=rule_first, impl=_embed_impl,
    vjp=lambda ctx, g: (bind(SLICE, (g,), {"slices": ctx.attrs["slices"]}),), saves=(),
    jvp=lambda inputs, tangents, out, attrs: linear_jvp(EMBED_SLICE, tangents, attrs),
    lowering=Layout("pad", places=lambda output_shape, attrs: [tuple(attrs["slices"])]),
    batch=batching.slices_rule("full_shape"))
SLICE = define_op(
    name="slice", arity=1, shape=_slice_rule, dtype=rule_first,
    impl=lambda x, slices: x[tuple([slice(*s) for s in slices])],
    vjp=lambda ctx, g: (embed_slice(g, ctx.input_meta[0][0], ctx.attrs["slices"]),), saves=(),
    jvp=lambda inputs, tangents, out, attrs: linear_jvp(SLICE, tangents, attrs),
    lowering=Layout("slice", fold_slice, slice_start), grad_name="SliceBackward0",
    view=True, embeds_gradient=EMBED_SLICE,
    batch=batching.slices_rule())


def embed_slice(g: Tensor, shape, slices) -> Tensor:
    """Zeros of `shape` with g written at `slices`: the adjoint of slicing."""
    return bind(EMBED_SLICE, (g,), {"full_shape": tuple(shape), "slices": tuple(slices)})


def slice_dims(x: Tensor, slices) -> Tensor:
    """x restricted to normalized (start, stop, step) per dim."""
    slices = tuple(slices)
    data = x._data
    shape = data.shape if data is not None else x._value.shape
    for (start, stop, step), extent in zip(slices, shape, strict=False):
        # (compared as tuples compare items: a symbolic extent that is the stop asks nothing)
        if not (start == 0 and (stop is extent or stop == extent) and step == 1):
            return bind(SLICE, (x,), {"slices": slices})
    return x


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """The `length` entries of x from `start` (negative: from the end) along `dim`, a view;
    with torch's errors where they do not fit (a slice would clip them silently). `start` may
    be a 0-d integer tensor."""
    if isinstance(start, Tensor):
        if start.ndim != 0 or start.dtype.category != dtypes.INTEGER:
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start)
    data = x._data
    shape = data.shape if data is not None else x._value.shape
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = normalize_dim(dim, len(shape))
    size = shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start = start + size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return _narrow(x, dim, start, length)


def _narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """narrow for callers whose start and length fit (no checks, so no guards on sizes)."""
    return _pieces(x, dim, ((start, start + length),))[0]


def _pieces(x: Tensor, dim: int, bounds) -> list:
    """x restricted to [start, stop) along `dim` for each (start, stop) of `bounds`, which fit
    (normalized, in range): the pieces of split, chunk and narrow, each a slice (x itself
    where a piece is all of x, as slice_dims gives). Where nothing traces or records
    specially each piece is made directly (eager_views.slice_piece) rather than through bind,
    with attrs shared by every piece of the same place in the same shape (_PIECE_ATTRS)."""
    data = x._data
    shape = data.shape if data is not None else x._value.shape
    if dim < 0:  # (a caller of _narrow may pass one from the end)
        dim += len(shape)
    extent = shape[dim]
    direct = sliced_data(x) if data is not None else None
    pieces = []
    for start, stop in bounds:
        # (compared as slice_dims compares: a symbolic extent that is the stop asks nothing)
        if start == 0 and (stop is extent or stop == extent):
            pieces.append(x)
            continue
        if direct is not None:
            key = (shape, dim, start, stop)
            attrs = _PIECE_ATTRS.get(key)
            if attrs is None:
                attrs = _PIECE_ATTRS[key] = {"slices": _slices(shape, dim, start, stop)}
            piece = slice_piece(x, direct, attrs, SLICE)
            if piece is not None:
                pieces.append(piece)
                continue
        pieces.append(bind(SLICE, (x,), {"slices": _slices(shape, dim, start, stop)}))
    return pieces


def _slices(shape, dim: int, start, stop) -> tuple:
    """The slice op's attrs for [start, stop) along `dim` of `shape`."""
    return tuple([(start, stop, 1) if axis == dim else (0, n, 1)
                  for axis, n in enumerate(shape)])


class _Bounded(dict):
    """A table cleared when it passes 4,096 entries, which only ends the sharing."""

    __slots__ = ()

    def __setitem__(self, key, value):
        if len(self) > 4096:
            self.clear()
        dict.__setitem__(self, key, value)


# The attrs of the pieces made directly, by (shape, dim, start, stop): every step of a loop
# slices the same places of the same shapes, and a node's attrs and a view's `_view_source`
# are only read, so equal pieces share one dict and its tuples instead of each keeping its
# own for the cyclic garbage collector to count and promote while the graph lives
# (docs/notes/eager-dispatch.md, "Eager loops of small ops").
_PIECE_ATTRS = _Bounded()


# ---- flip -------------------------------------------------------------------------------------
# A copy, as torch's flip is (NumPy's np.flip is a view with negative strides); its own adjoint.

def _reversed_key(ndim: int, dims) -> tuple:
    """The basic index that reverses `dims` (np.flip's view, without its argument checks)."""
    key = [slice(None)] * ndim
    for dim in dims:
        key[dim] = slice(None, None, -1)
    return tuple(key)


FLIP = define_op(
    name="flip", arity=1, shape=lambda shape, dims: tuple(shape), dtype=rule_first,
    impl=lambda x, dims: x[_reversed_key(x.ndim, dims)].copy(),
    # A Layout: it takes uint16, uint32 and uint64, as torch's flip copying elements by their
    # size does; indexing.flip refuses the flips where torch's typed kernel runs instead.
    vjp=lambda ctx, g: (bind(FLIP, (g,), ctx.attrs),), saves=(), lowering=Layout("flip"),
    jvp=lambda inputs, tangents, out, attrs: linear_jvp(FLIP, tangents, attrs),
    batch=batching.dim_rule("dims"))


# ---- cat --------------------------------------------------------------------------------------

def _cat_rule(*shapes, dim):
    first = shapes[0]
    for position, shape in enumerate(shapes[1:], 1):
        if len(shape) != len(first):
            raise ValueError(f"Tensors must have same number of dimensions: got {len(first)} "
                             f"and {len(shape)}")
        for axis, (a, b) in enumerate(zip(first, shape, strict=False)):
            if axis != dim and a != b:
                raise ValueError(f"Sizes of tensors must match except in dimension {dim}. "
                                 f"Expected size {a} but got size {b} for tensor number "
                                 f"{position} in the list.")
    return first[:dim] + (sum(s[dim] for s in shapes),) + first[dim + 1:]


def _cat_vjp(ctx, g):
    dim = ctx.attrs["dim"]
    grads, start = [], 0
    for need in ctx.needs_input_grad:
        extent = ctx.attrs["sizes"][len(grads)]
        grads.append(_narrow(g, dim, start, extent) if need else None)
        start += extent
    return tuple(grads)


def _cat_jvp(inputs, tangents, out, attrs):
    from ..tensor.creation import zeros

    # The inputs without a tangent contribute zeros of their own extent along dim.
    pieces = [tangent if tangent is not None else
              zeros(tuple(x.shape), dtype=out.dtype, device=out.device)
              for x, tangent in zip(inputs, tangents)]
    return bind(CAT, tuple(pieces), attrs)


def _cat_places(output_shape, attrs) -> list:
    dim, parts, start = attrs["dim"], [], 0
    for size in attrs["sizes"]:
        part = [(0, extent, 1) for extent in output_shape]
        part[dim] = (start, start + size, 1)
        parts.append(tuple(part))
        start += size
    return parts


def _cat_impl(*arrays, dim, sizes):
    """np.concatenate, laid out as torch's cat lays out its result: in the inputs' memory
    format where they all suggest the same one (channels_last), else row-major. NumPy's
    follows the inputs' layout: cat of transposed tensors was transposed."""
    result = np.concatenate(arrays, axis=dim)
    if result.flags.c_contiguous and 1 not in result.shape:
        return result
    fmt = suggested_format(arrays[0])
    if fmt is not contiguous_format and all(suggested_format(array) is fmt
                                            for array in arrays[1:]):
        return result if is_laid_out(result, fmt) else laid_out(result,
                                                                 order_of(fmt, result.ndim))
    return row_major(result)


CAT = define_op(name="cat", arity=-1, shape=lambda *shapes, dim, sizes: _cat_rule(
    *shapes, dim=dim), dtype=rule_promote,
    impl=_cat_impl, vjp=_cat_vjp, saves=(),
    jvp=_cat_jvp, lowering=Layout("concatenate", places=_cat_places),
    batch=batching.dim_rule("dim"))


@autocast_op(cpu=PROMOTE)
def cat(tensors, dim: int = 0) -> Tensor:
    """The tensors joined along an existing dim; the other extents must match."""
    if tensors.__class__ is list or tensors.__class__ is tuple:  # (joined reads either)
        result = joined(tensors, dim, False, CAT)
        if result is not None:
            return result
    elif isinstance(tensors, Tensor):  # a tensor iterates over its rows; torch refuses it
        raise TypeError("cat(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        "Tensor")
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"cat(): expected a sequence of Tensors, got {type(t).__name__}")
    for position, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {position}) cannot be "
                               "concatenated")
    # torch skips 1-D empty tensors in cat, a legacy rule kept for compatibility, but their
    # dtypes still take part in the result's (cat([int64 x, zeros(0)]) is float32).
    kept = tuple(t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)) or tensors[:1]
    if len(kept) < len(tensors):
        dtype = promoted_dtype(tensors)
        kept = tuple(t if t.dtype is dtype else t.to(dtype) for t in kept)
    dim = normalize_dim(dim, kept[0].ndim)
    try:
        _cat_rule(*(tuple(t.shape) for t in kept), dim=dim)
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    return bind(CAT, kept, {"dim": dim, "sizes": tuple(t.shape[dim] for t in kept)})


# ---- composites: written from the primitives above, so they need no rules of their own -------

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
    data = x._data
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
    data = x._data
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
    data = x._data
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
    data = x._data
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
    return tuple(select(x, dim, i) for i in range(x.shape[dim]))


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
    data = x._data
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
    return tuple(_pieces(x, dim, bounds))


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple:
    """x split along `dim` into at most `chunks` pieces of equal size (the last may be
    smaller)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    data = x._data
    shape = data.shape if data is not None else x._value.shape
    dim = normalize_dim(dim, len(shape))
    extent = shape[dim]
    if extent == 0:
        return split(x, [0] * chunks, dim)
    return split(x, -(-extent // chunks), dim)


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
