"""Scatter along a dim: scatter (a tensor or a value, `reduce=`), scatter_add and scatter_reduce.

`out[index[i][j]][j] = src[i][j]` for dim 0, likewise for other dims. One primitive here,
`scatter_reduce` (prod, mean, amax, amin, and sum without self), whose VJP is torch's
(evenly shared among ties for amax/amin, the product of the others for prod, zeros where
include_self=False dropped self), and whose JVP weighs the tangents by those same
derivatives (sum and mean, being linear, reduce the tangents instead); scatter_add (sum with
self) is indexing/__init__.py's primitive, which has CUDA kernels. An overwriting scatter is a
composite: each written position's flat offset in x (index times the dim's stride, plus the
position's offset along the other dims) addressed by the index_put primitive, so its gradients
are index_put's (zero where overwritten; the gathered gradient for src).

Every public function checks its arguments with torch's messages, then passes the index
through `check_index` (ops/indexing/checks.py), so compiled code raises eager's error.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.state import state
from ...tensor.tensor import Tensor, normalize_dim
from .. import batching, registry
from .. import elementwise as ew
from ..autocast import PROMOTE, autocast_op
from ..dtype_rules import rule_first
from ..inplace import write_out
from ..layout import embed_slice, reshape, slice_dims, unsqueeze
from ..limited_rules import refuse_limited
from ..registry import Extern, bind, define_op
from . import (
    _INDEX_DTYPES,
    _along_key,
    _gather,
    _scatter_add,
    _scatter_rule,
    _zeros,
    index_put,
)
from .checks import check_index

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


# ---- argument checks, as torch's ScatterGatherChecks -------------------------------------------

def check_scatter_arguments(name: str, x: Tensor, dim: int, index, src=None) -> int:
    """torch's checks of scatter-like arguments, in its order (ScatterGatherChecks.h); the
    normalized dim."""
    dim = normalize_dim(dim, x.ndim)
    if not isinstance(index, Tensor) or index.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src.dtype is not x.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if index.numel() == 0:
        return dim
    if max(x.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    index_shape, x_shape = _at_least_1d(index.shape), _at_least_1d(x.shape)
    wrong = any(axis != dim and extent > x_shape[axis] for axis, extent in enumerate(index_shape))
    if not isinstance(src, Tensor):
        if wrong:
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                               f"{list(x.shape)} apart from dimension {dim}")
        return dim
    if not wrong:
        # torch reads src's extent along each of index's dims (an IndexError past src's).
        for axis, extent in enumerate(index_shape):
            if src.ndim and axis >= src.ndim:
                normalize_dim(axis, src.ndim)
            if extent > (src.shape[axis] if src.ndim else 1):
                wrong = True
                break
    if max(src.ndim, 1) != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if wrong:
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                           f"{list(x.shape)} apart from dimension {dim} and to be no larger "
                           f"size than src {list(src.shape)}")
    return dim


def _at_least_1d(shape) -> tuple:
    return tuple(shape) if len(shape) else (1,)


def _checked_index(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """The index, int64, once every entry is in range for x's dim (torch's RuntimeError)."""
    extent = x.shape[dim] if x.ndim else 1
    return check_index(index, extent, "gather", dim=dim).to(dtypes.int64)


def _corner(src: Tensor, shape) -> Tensor:
    """The index-shaped leading corner of src: the part a scatter reads."""
    if tuple(src.shape) == tuple(shape):
        return src
    return slice_dims(src, [(0, extent, 1) for extent in shape])


def _padded_to(grad: Tensor, shape) -> Tensor:
    """A gradient of src's corner as one of all of src (zeros where src is not read)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    return embed_slice(grad, shape, [(0, extent, 1) for extent in grad.shape])


# ---- overwriting scatter: index_put at flat offsets -------------------------------------------

def flat_offsets(shape, dim: int, index: Tensor) -> Tensor:
    """(1, n) int64 flat offsets into a C-ordered tensor of `shape` of every position of
    `index` (an in-range int64 index along `dim`), in index's C order: index times the dim's
    stride, plus each position's own coordinate times the stride along the other dims."""
    from ...tensor.creation import arange

    strides, running = [], 1
    for extent in reversed(tuple(shape)):
        strides.append(running)
        running *= extent
    strides.reverse()
    offsets = index * strides[dim] if strides[dim] != 1 else index
    for axis, extent in enumerate(index.shape):
        if axis == dim or extent == 1:
            continue
        coordinate = arange(extent, dtype=dtypes.int64,
                            device=index.device if index.is_cuda else None) * strides[axis]
        offsets = offsets + reshape(coordinate, [extent if a == axis else 1
                                                 for a in range(index.ndim)])
    return unsqueeze(reshape(offsets, -1), 0)


def scatter_values(x: Tensor, dim: int, index: Tensor, values) -> Tensor:
    """x with `values` (a tensor of index's shape, or a number) written along `dim` at an
    in-range int64 `index`."""
    if index.numel() == 0:
        return x
    if x.ndim == 0:
        flat = reshape(x, 1)
        written = index_put(flat, reshape(values, -1) if isinstance(values, Tensor) else values,
                            reshape(index, 1, -1), (0,))
        return reshape(written, ())
    offsets = flat_offsets(tuple(x.shape), dim, index)
    if isinstance(values, Tensor):
        values = reshape(values, -1)
    return reshape(index_put(reshape(x, -1), values, offsets, (0,)), tuple(x.shape))


# ---- the scatter_reduce primitive ------------------------------------------------------------

def _identity(reduce: str, dtype: np.dtype):
    """The value a position starts from when self is not included."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    largest = reduce in ("amax", "max")
    if dtype.kind == "f":
        return -np.inf if largest else np.inf
    if dtype.kind == "b":
        return not largest
    info = np.iinfo(dtype)
    return info.min if largest else info.max


_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
           "amin": np.minimum, "max": np.maximum, "min": np.minimum}


def _scatter_reduce_impl(x, index, src, dim, reduce, include_self):
    out = x.copy()
    if x.ndim == 0:
        out, index, src = out.reshape(1), index.reshape(-1), src.reshape(-1)
    key = _along_key(index, dim)
    values = src[tuple(slice(0, n) for n in index.shape)]
    if not include_self:
        out[key] = _identity(reduce, out.dtype)
    _UFUNCS[reduce].at(out, key, values)
    if reduce == "mean":
        counts = np.zeros(out.shape, np.int64) if not include_self else np.ones(out.shape,
                                                                               np.int64)
        np.add.at(counts, key, 1)
        counts[counts == 0] = 1
        if out.dtype.kind == "f":
            out = (out / counts).astype(out.dtype)
        else:
            out = np.floor_divide(out, counts).astype(out.dtype)
    return out.reshape(x.shape)


def _scatter_reduce_grads(x, index, src, out, attrs, g) -> tuple:
    """torch's scatter_reduce_backward, in autojit ops: the gradients of x and of src's
    index-shaped corner."""
    dim, reduce, include_self = attrs["dim"], attrs["reduce"], attrs["include_self"]
    if reduce not in REDUCTIONS:  # torch's forward takes "max" and "min"; its backward does not
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    src = _corner(src, tuple(index.shape))
    if reduce == "sum":
        grad_x, grad_src = g, _gather(g, dim, index)
    elif reduce == "prod":
        # Zeros are left out of the products divided by, so that a single zero still passes
        # the product of the others (torch's "exclusive product").
        masked_x = ew.where(x == 0, 1.0, x)
        grad_x = g * _reduce(masked_x, dim, index, src, "prod", include_self) / masked_x
        src_zero = src == 0
        zeros_at = _gather(_scatter_add(ew.fill_like(x, 0), dim, index, src_zero.to(x.dtype)),
                           dim, index)
        single_zero = src_zero & (zeros_at == 1)
        masked_src_result = _reduce(x, dim, index, ew.where(single_zero, 1.0, src), "prod",
                                    include_self)
        grad_src = ew.where(single_zero, _gather(g * masked_src_result, dim, index),
                            _gather(g * out, dim, index) / ew.where(src_zero, 1.0, src))
        if state.grad_enabled and bool((zeros_at > 1).any()):
            # as torch: this gradient is right, but its own derivative where two zeros meet
            # is not defined, so a double backward through it raises instead of being wrong
            grad_src = registry.DELAYED_ERROR(
                "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src "
                "are scattered to the same position in self", grad_src)
    elif reduce == "mean":
        counts = _scatter_add(ew.fill_like(g, 1 if include_self else 0), dim, index,
                              ew.fill_like(src, 1))
        counts = ew.where(counts == 0, 1, counts)
        grad_x = g / counts
        grad_src = _gather(g, dim, index) / _gather(counts, dim, index)
    else:  # amax, amin: the gradient is shared evenly among the entries equal to the result
        x_is_result = (x == out).to(x.dtype)
        src_is_result = (src == _gather(out, dim, index)).to(x.dtype)
        shared = g / _scatter_add(x_is_result, dim, index, src_is_result)
        grad_x = x_is_result * shared
        grad_src = src_is_result * _gather(shared, dim, index)
    if not include_self:
        grad_x = scatter_values(grad_x, dim, index, 0)
    return grad_x, grad_src


def _scatter_reduce_vjp(ctx, g):
    x, index, src = ctx.inputs
    grad_x, grad_src = _scatter_reduce_grads(x, index, src, ctx.out, ctx.attrs, g)
    need_x, _, need_src = ctx.needs_input_grad
    return (grad_x if need_x else None), None, (_padded_to(grad_src, tuple(src.shape))
                                                if need_src else None)


def _scatter_reduce_jvp(inputs, tangents, out, attrs):
    x, index, src = inputs
    tangent_x, _, tangent_src = tangents
    if attrs["reduce"] in ("sum", "mean"):
        # Linear in x and src: the same reduction of the tangents.
        if tangent_x is None:
            tangent_x = _zeros(x.shape, tangent_src)
        if tangent_src is None:
            tangent_src = _zeros(src.shape, tangent_x)
        return bind(SCATTER_REDUCE, (tangent_x, index, tangent_src), attrs)
    # Each element of x and of src's corner reaches one output position, so the VJP at a
    # cotangent of ones gives every element's derivative, which weighs its tangent.
    weight_x, weight_src = _scatter_reduce_grads(x, index, src, out, attrs,
                                                 ew.fill_like(out, 1.0))
    pushed = None if tangent_x is None else tangent_x * weight_x
    if tangent_src is None:
        return pushed
    if pushed is None:
        pushed = _zeros(x.shape, tangent_src)
    return _scatter_add(pushed, attrs["dim"], index,
                        _corner(tangent_src, tuple(index.shape)) * weight_src)


SCATTER_REDUCE = define_op(
    name="scatter_reduce", arity=3, shape=lambda shape, index_shape, src_shape, dim, reduce,
    include_self: _scatter_rule(shape, index_shape, src_shape, dim),
    dtype=rule_first, impl=_scatter_reduce_impl, vjp=_scatter_reduce_vjp,
    jvp=_scatter_reduce_jvp, saves=(0, 1, 2, "out"),
    lowering=Extern("scatter_reduce_along_dim", ("data", "index", "values")),
    batch=batching.dim_rule("dim"))


def _reduce(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
            include_self: bool) -> Tensor:
    """The reduction primitive on checked arguments (sum with self is scatter_add's)."""
    if reduce == "sum" and include_self:
        return _scatter_add(x, dim, index, src)
    return bind(SCATTER_REDUCE, (x, index, src), {"dim": dim, "reduce": reduce,
                                                 "include_self": bool(include_self)})


# ---- the public functions ---------------------------------------------------------------------

@autocast_op(cuda=PROMOTE)
def scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor, *, out=None) -> Tensor:
    """x with the entries of `src` added along `dim` at `index`: `src[i][j][k]` goes to
    `x[index[i][j][k]][j][k]` for dim 0, likewise for other dims."""
    refuse_limited("scatter_gather_tensor_cpu", x)
    return _out(_scatter_add_op(x, dim, index, src), out, "scatter_add")


def _out(result: Tensor, out, name: str) -> Tensor:
    """result, or written into `out` (torch's out= argument)."""
    if out is None:
        return result
    return write_out(out, result, name)


def _scatter_add_op(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' (position 4) must be Tensor, not "
                        f"{type(src).__name__}")
    dim = check_scatter_arguments("scatter", x, dim, index, src)
    if index.numel() == 0:
        return x.clone()
    return _scatter_add(x, dim, _checked_index(x, dim, index), src)


def scatter_reduce(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True, out=None) -> Tensor:
    """x with the entries of `src` combined along `dim` at `index` by `reduce` ("sum",
    "prod", "mean", "amax" or "amin"), x's own values included unless include_self=False."""
    return _out(_scatter_reduce_op(x, dim, index, src, reduce, include_self), out,
                "scatter_reduce")


def _scatter_reduce_op(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                       include_self: bool) -> Tensor:
    if reduce not in REDUCTIONS and reduce not in ("max", "min"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    dim = check_scatter_arguments("scatter", x, dim, index, src)  # torch's messages say scatter()
    refuse_limited("scatter_reduce_exclude_input_init" if not include_self else
                   "scatter_gather_tensor_cpu" if reduce in ("sum", "prod") else
                   f"scatter_gather_tensor_cpu_reduce_{reduce}", x)
    if index.numel() == 0:
        return x.clone()
    return _reduce(x, dim, _checked_index(x, dim, index), src, reduce, include_self)


_LEGACY_REDUCE = {"add": "sum", "multiply": "prod"}


def scatter(x: Tensor, dim: int, index: Tensor, src=None, *, value=None,
            reduce: str | None = None, out=None) -> Tensor:
    """x with `src` (a tensor, or a number `value`) written along `dim` at `index`:
    `out[index[i][j]][j] = src[i][j]` for dim 0; with reduce="add" or "multiply", combined
    with x's values instead. Where index repeats a position the last write wins."""
    return _out(_scatter_op(x, dim, index, src, value, reduce), out, "scatter")


def _scatter_op(x: Tensor, dim: int, index: Tensor, src, value, reduce) -> Tensor:
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    if src is None:
        src = value
    if reduce is not None and reduce not in _LEGACY_REDUCE:
        raise RuntimeError("reduce argument must be either add or multiply.")
    is_tensor = isinstance(src, Tensor)
    dim = check_scatter_arguments("scatter", x, dim, index, src if is_tensor else None)
    refuse_limited("scatter_gather_tensor_cpu" if is_tensor else "scatter_gather_scalar_cpu", x)
    if index.numel() == 0:
        return x.clone()
    index = _checked_index(x, dim, index)
    if reduce is not None:
        if not is_tensor:
            src = ew.fill_like(_zeros(tuple(index.shape), x), src)
        return _reduce(x, dim, index, src, _LEGACY_REDUCE[reduce], True)
    if is_tensor:
        return scatter_values(x, dim, index, _corner(src, tuple(index.shape)))
    return scatter_values(x, dim, index, _scalar_for(x, src))


def _scalar_for(x: Tensor, value):
    """A number written into x, converted as torch converts it to x's dtype (an int x
    truncates a float)."""
    if x.dtype.category == dtypes.INTEGER:
        return int(value)
    if x.dtype is dtypes.bool_:
        return bool(value)
    return value
