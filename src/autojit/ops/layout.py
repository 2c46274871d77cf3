"""Layout primitives: reshape, expand, permute, slice (and its adjoint embed_slice), cat.

These move or select elements without arithmetic. Eagerly they return NumPy views where NumPy
can (the result then shares the input's version counter, as torch views do). Composites built
from them (view, flatten, squeeze, unsqueeze, transpose, stack, split, chunk, select) are at
the bottom of this file.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, normalize_dim
from .registry import Layout, bind, define_op, rule_first, rule_promote

# ---- reshape ---------------------------------------------------------------------------------


def infer_shape(shape, numel: int) -> tuple:
    """Resolve one -1 in a requested shape, with torch's error when sizes disagree."""
    shape = tuple(int(s) for s in shape)
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
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[:unknown[0]] + (numel // known,) + shape[unknown[0] + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _reshape_rule(shape, new_shape):
    if int(np.prod(shape)) != int(np.prod(new_shape)):
        raise ValueError(f"shape '{list(new_shape)}' is invalid for input of size "
                         f"{int(np.prod(shape))}")
    return new_shape


RESHAPE = define_op(name="reshape", arity=1, shape=_reshape_rule, dtype=rule_first,
                    impl=lambda x, shape: x.reshape(shape),
                    vjp=lambda ctx, g: (g.reshape(ctx.input_meta[0][0]),), saves=(),
                    lowering=Layout("reshape"), grad_name="ViewBackward0", view=True)


def reshape(x: Tensor, *shape) -> Tensor:
    """x with a new shape of the same number of elements; one extent may be -1."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return bind(RESHAPE, (x,), {"shape": infer_shape(shape, x.numel())})


# ---- expand (broadcast_to) ----------------------------------------------------------------------

def _expand_rule(shape, target):
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


EXPAND = define_op(name="expand", arity=1, shape=_expand_rule, dtype=rule_first,
                   impl=lambda x, shape: np.broadcast_to(x, shape),
                   # The engine sums the gradient back to the input's shape.
                   vjp=lambda ctx, g: (g,), saves=(), lowering=Layout("broadcast"),
                   grad_name="ExpandBackward0", view=True)


def expand(x: Tensor, *shape) -> Tensor:
    """A broadcast view of x with `shape`; -1 keeps an existing extent."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    current = tuple(x.shape)
    offset = len(shape) - len(current)
    target = tuple(current[i - offset] if (s == -1 and i >= offset) else int(s)
                   for i, s in enumerate(shape))
    if target == current:
        return x
    try:
        _expand_rule(current, target)
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    return bind(EXPAND, (x,), {"shape": target})


def broadcast_to(x: Tensor, shape) -> Tensor:
    return expand(x, tuple(shape))


# ---- permute ----------------------------------------------------------------------------------

PERMUTE = define_op(
    name="permute", arity=1, shape=lambda shape, dims: tuple(shape[d] for d in dims),
    dtype=rule_first, impl=lambda x, dims: np.transpose(x, dims),
    vjp=lambda ctx, g: (g.permute(*np.argsort(ctx.attrs["dims"]).tolist()),), saves=(),
    lowering=Layout("permute"), grad_name="PermuteBackward0", view=True)


def permute(x: Tensor, *dims) -> Tensor:
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

def _slice_rule(shape, slices):
    return tuple(len(range(*s)) for s in slices)


def _embed_impl(g, shape, slices):
    out = np.zeros(shape, dtype=g.dtype)
    out[tuple(slice(*s) for s in slices)] = g
    return out


SLICE = define_op(
    name="slice", arity=1, shape=_slice_rule, dtype=rule_first,
    impl=lambda x, slices: x[tuple(slice(*s) for s in slices)],
    vjp=lambda ctx, g: (embed_slice(g, ctx.input_meta[0][0], ctx.attrs["slices"]),), saves=(),
    lowering=Layout("slice"), grad_name="SliceBackward0", view=True)
EMBED_SLICE = define_op(
    name="embed_slice", arity=1, shape=lambda shape, full_shape, slices: tuple(full_shape),
    dtype=rule_first, impl=_embed_impl,
    vjp=lambda ctx, g: (bind(SLICE, (g,), {"slices": ctx.attrs["slices"]}),), saves=(),
    lowering=Layout("pad"))


def embed_slice(g: Tensor, shape, slices) -> Tensor:
    """Zeros of `shape` with g written at `slices`: the adjoint of slicing."""
    return bind(EMBED_SLICE, (g,), {"full_shape": tuple(shape), "slices": tuple(slices)})


def slice_dims(x: Tensor, slices) -> Tensor:
    """x restricted to normalized (start, stop, step) per dim."""
    slices = tuple(slices)
    if all(s == (0, n, 1) for s, n in zip(slices, x.shape)):
        return x
    return bind(SLICE, (x,), {"slices": slices})


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    dim = normalize_dim(dim, x.ndim)
    slices = [(0, n, 1) for n in x.shape]
    slices[dim] = (start, start + length, 1)
    return slice_dims(x, slices)


# ---- cat --------------------------------------------------------------------------------------

def _cat_rule(*shapes, dim):
    first = shapes[0]
    for position, shape in enumerate(shapes[1:], 1):
        if len(shape) != len(first):
            raise ValueError(f"Tensors must have same number of dimensions: got {len(first)} "
                             f"and {len(shape)}")
        for axis, (a, b) in enumerate(zip(first, shape)):
            if axis != dim and a != b:
                raise ValueError(f"Sizes of tensors must match except in dimension {dim}. "
                                 f"Expected size {a} but got size {b} for tensor number "
                                 f"{position} in the list.")
    return first[:dim] + (sum(s[dim] for s in shapes),) + first[dim + 1:]


def _cat_vjp(ctx, g):
    dim = ctx.attrs["dim"]
    grads, start = [], 0
    for meta, need in zip(ctx.input_meta, ctx.needs_input_grad):
        extent = ctx.attrs["sizes"][len(grads)]
        grads.append(narrow(g, dim, start, extent) if need else None)
        start += extent
    return tuple(grads)


CAT = define_op(name="cat", arity=-1, shape=lambda *shapes, dim, sizes: _cat_rule(
    *shapes, dim=dim), dtype=rule_promote,
    impl=lambda *arrays, dim, sizes: np.concatenate(arrays, axis=dim), vjp=_cat_vjp, saves=(),
    lowering=Layout("concatenate"))


def cat(tensors, dim: int = 0) -> Tensor:
    """Concatenate along an existing dim."""
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("cat(): expected a non-empty list of Tensors")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"cat(): expected a sequence of Tensors, got {type(t).__name__}")
    # torch skips 1-D empty tensors in cat, a legacy rule kept for compatibility.
    kept = tuple(t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)) or tensors[:1]
    dim = normalize_dim(dim, kept[0].ndim)
    return bind(CAT, kept, {"dim": dim, "sizes": tuple(t.shape[dim] for t in kept)})
