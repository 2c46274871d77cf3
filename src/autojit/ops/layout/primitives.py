"""Layout primitives: reshape, expand, permute, slice (and its adjoint embed_slice), flip, cat.

These move or select elements without arithmetic, so each is linear and its JVP is the op itself
on the tangent (`linear_jvp`; cat's joins the inputs' tangents). Eagerly they return NumPy views
where NumPy can (the result then shares the input's version counter, as torch views do). The
package's __init__.py re-exports every name its importers read, and the composites.py ones.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.memory_format import (
    contiguous_format,
    is_laid_out,
    laid_out,
    order_of,
    suggested_format,
)
from ...tensor.symbolic import as_size, size_product
from ...tensor.tensor import Tensor, normalize_dim, plain_tensor
from .. import batching
from ..autocast import PROMOTE, autocast_op
from ..dtype_rules import promoted_dtype, rule_first, rule_promote
from ..limited_rules import not_implemented
from ..registry import Layout, bind, define_op, linear_jvp, row_major
from .eager_views import direct_real_data, joined, reshape_view, slice_piece, sliced_data
from .folds import (  # noqa: F401 - contiguous_strides is read from here too
    contiguous_strides,
    fold_expand,
    fold_permute,
    fold_reshape,
    fold_slice,
    slice_start,
)

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
    viewed = reshape_view(x, shape, RESHAPE)
    if viewed is not None:
        return viewed
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


def _expanded(x: np.ndarray, shape) -> np.ndarray:
    """x broadcast to `shape`: NumPy's read-only view, or, where only dims of one element are
    added (no element is repeated, so no two refer to one memory location), a writable view,
    as torch lets an in-place op write through it."""
    out = np.broadcast_to(x, shape)
    if out.size == x.size and x.flags.writeable:
        out = np.lib.stride_tricks.as_strided(x, out.shape, out.strides, writeable=True)
    return out


EXPAND = define_op(name="expand", arity=1,
                   shape=lambda input_shape, shape: expand_rule(input_shape, shape),
                   dtype=rule_first,
                   impl=lambda x, shape: _expanded(x, shape),
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
    data = x._payload
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
    data = x._payload
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
    data = x._payload
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
    # size does; flip below refuses the flips where torch's typed kernel runs instead.
    vjp=lambda ctx, g: (bind(FLIP, (g,), ctx.attrs),), saves=(), lowering=Layout("flip"),
    jvp=lambda inputs, tangents, out, attrs: linear_jvp(FLIP, tangents, attrs),
    batch=batching.dim_rule("dims"))


def flip(x: Tensor, dims) -> Tensor:
    """x with the order of elements reversed along `dims` (a sequence of ints)."""
    if dims.__class__ is tuple:
        found = _eager_flip(x, dims)
        if found is not None:
            return found
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    normalized = [normalize_dim(d, x.ndim) for d in dims]
    for position, dim in enumerate(normalized):
        if dim in normalized[:position]:
            raise RuntimeError(f"dim {dim} appears multiple times in the list of dims")
    if x.ndim == 0:
        normalized = []  # dim 0 (or -1) of a 0-d tensor is valid in torch and reverses nothing
    if x.dtype.limited and _reverses_innermost(x, normalized):
        raise not_implemented("flip_cpu", x.dtype)
    # The layout primitive, not an index of reversed positions: those would need an arange
    # of the extent, which a dynamic trace does not have.
    return bind(FLIP, (x,), {"dims": tuple(sorted(normalized))})


def _reverses_innermost(x: Tensor, dims: list) -> bool:
    """Whether torch's flip of x over `dims` runs its typed kernel (which takes no uint16,
    uint32 or uint64): where the result's innermost dim of more than one element is flipped
    (its writes go backwards there). Its other flips copy elements by their size, any
    dtype."""
    shape, strides = tuple(x.shape), x.stride()
    moving = [d for d in range(len(shape)) if shape[d] > 1 and strides[d] != 0]
    if x.numel() <= 1 or not any(d in dims for d in moving):
        return False  # nothing moves: a copy
    # The result is laid out as x: its innermost dim is x's of the smallest step.
    return min(moving, key=lambda d: abs(strides[d])) in dims


_REVERSED = slice(None, None, -1)


def _eager_flip(x: Tensor, dims: tuple) -> Tensor | None:
    """flip's copy made at once, as FLIP's impl makes it, where no node is recorded (grad mode
    off or x not requiring grad), nothing traces and no VJP chain is recorded, x's data is a
    NumPy array of a real dtype other than bfloat16 and of one dim or more, and `dims` are
    distinct ints in range (a random horizontal flip of a data pipeline: bind's dtype rule and
    operand loop cost twice the copy); None for the general path, which raises torch's errors."""
    data = direct_real_data(x)
    if data is None or not data.ndim:
        return None
    ndim = data.ndim
    key = [_ALL] * ndim
    for dim in dims:
        if dim.__class__ is not int or not -ndim <= dim < ndim:
            return None
        if key[dim] is _REVERSED:  # a repeated dim: the general path's error
            return None
        key[dim] = _REVERSED
    return plain_tensor(data[tuple(key)].copy(), x._dtype)


_ALL = slice(None)


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
    from ...tensor.creation import zeros

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
    if all(array.flags.c_contiguous for array in arrays):
        result = np.concatenate(arrays, axis=dim)
        if result.flags.c_contiguous and 1 not in result.shape:
            return result
    else:
        result = None
    fmt = suggested_format(arrays[0])
    if fmt is not contiguous_format and all(suggested_format(array) is fmt
                                            for array in arrays[1:]):
        if result is None:
            result = np.concatenate(arrays, axis=dim)
        return result if is_laid_out(result, fmt) else laid_out(result,
                                                                 order_of(fmt, result.ndim))
    if result is not None:
        return row_major(result)
    # Strided inputs (a rotary embedding's halves of transposed heads): written straight into
    # a row-major result, where NumPy would follow their layout and row_major copy it again.
    first = arrays[0]
    shape = list(first.shape)
    shape[dim] = sum(array.shape[dim] for array in arrays)
    out = np.empty(shape, np.result_type(*arrays))
    np.concatenate(arrays, axis=dim, out=out)
    return out


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
    for item in tensors:
        if not isinstance(item, Tensor):
            raise TypeError(f"cat(): expected a sequence of Tensors, got {type(item).__name__}")
    for position, item in enumerate(tensors):
        if item.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {position}) cannot be "
                               "concatenated")
    # torch skips 1-D empty tensors in cat, a legacy rule kept for compatibility, but their
    # dtypes still take part in the result's (cat([int64 x, zeros(0)]) is float32).
    kept = tuple(item for item in tensors if not (item.ndim == 1 and item.shape[0] == 0)) or \
        tensors[:1]
    if len(kept) < len(tensors):
        dtype = promoted_dtype(tensors)
        kept = tuple(item if item.dtype is dtype else item.to(dtype) for item in kept)
    dim = normalize_dim(dim, kept[0].ndim)
    try:
        _cat_rule(*(tuple(item.shape) for item in kept), dim=dim)
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    return bind(CAT, kept, {"dim": dim, "sizes": tuple(item.shape[dim] for item in kept)})
