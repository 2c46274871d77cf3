"""Reduction primitives: sum, prod, mean, amax, amin, argmax, argmin, any, all.

Each reduces over `dim` (a sorted tuple of non-negative axes; all axes when the user passes
None) with `keepdim`. mean is a primitive for torch's node of it (MeanBackward0, or
MeanBackward1 given a dim, with `_saved_self_sym_sizes`) that compiled code sees as the sum
divided by the count (Decomposition). Composite reductions (var, std, norm, logsumexp, max with
indices) are in composite.py. VJPs broadcast the gradient back with `expand`, so they stay in
autojit ops; JVPs sum the tangent weighted by the same derivative the VJP broadcasts (sum's is
sum itself).
"""

from __future__ import annotations

import numpy as np

from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Tensor
from . import batching
from .autocast import FP32, FP32_SET_OPT_DTYPE, autocast_op
from .complex_rules import conj
from .dtype_rules import rule_index
from .elementwise import isnan, where
from .limited_rules import BOTH
from .lowering import Decomposition
from .registry import NOT_DIFFERENTIABLE, Reduction, bind, define_op, linear_jvp
from .shape_rules import normalize_dims, reduced_shape  # noqa: F401 - read from here too


def _shape_rule(shape, dim, keepdim):
    for axis in dim:
        if axis >= max(len(shape), 1):
            raise ValueError(f"dim {axis} is out of range for a tensor of {len(shape)} dims")
    return reduced_shape(shape, dim, keepdim)


def _expand_back(ctx, g):
    """The gradient of a reduction's output, broadcast back over the reduced axes."""
    shape = ctx.input_meta[0][0]
    attrs = ctx.attrs
    if not attrs["keepdim"]:
        g = g.reshape(reduced_shape(shape, attrs["dim"], True))
    return g.expand(shape)


def _sum_dtype(inputs, attrs):
    dtype = inputs[0].dtype
    if attrs.get("dtype") is not None:
        dtype = attrs["dtype"]
    elif dtype.category < dtypes.FLOATING:
        dtype = dtypes.int64
    return dtype, dtype


def _reduction(name, impl, dtype, vjp, saves, lowering, jvp, grad_name=None, batch=None,
               complex=None, limited=None, kernel=None):  # noqa: A002 - define_op's keyword
    return define_op(name=name, arity=1, shape=lambda shape, dim, keepdim, **_: _shape_rule(
        shape, dim, keepdim), dtype=dtype, impl=impl, vjp=vjp, saves=saves,
        lowering=lowering, jvp=jvp, grad_name=grad_name, batch=batch, complex=complex,
        limited=limited, kernel=kernel)


def _weighted_sum_jvp(weights):
    """The JVP of a reduction whose derivative with respect to each element is
    `weights(x, out, attrs)` (in x's shape): the tangent so weighted, summed as the output."""
    def jvp(inputs, tangents, out, attrs):
        (tangent,) = tangents
        if tangent is None:
            return None
        weighted = tangent * weights(inputs[0], out, attrs)
        return bind(SUM, (weighted,), {"dim": attrs["dim"], "keepdim": attrs["keepdim"]})

    return jvp


# Rows a float32 sum may add one after another before it accumulates in float64: NumPy sums
# pairwise only along the axis innermost in memory and adds the others' rows in turn, so a
# sum over the rows of a (4e6, 2) array of 0.1 was 3.9e-2 off (1024 rows: up to 1e-5).
_SEQUENTIAL_ROWS = 1024


def _sequential_rows(x: np.ndarray, dim: tuple) -> int:
    """How many values NumPy's sum of x over `dim` adds one after another into each partial
    sum: the reduced extents but the one it sums pairwise (the innermost in memory; all of
    them when they are the trailing dims of a C-contiguous array, which it sums as one)."""
    if not dim or (x.flags.c_contiguous and dim == tuple(range(x.ndim - len(dim), x.ndim))):
        return 1
    innermost = min(range(x.ndim), key=lambda axis: abs(x.strides[axis]))
    count = 1
    for axis in dim:
        if axis != innermost:
            count *= x.shape[axis]
    return count


_FLOAT32 = np.dtype(np.float32)


def _sum_impl(x, dim, keepdim, dtype=None):
    if x.dtype == _FLOAT32 and dim:
        reduced = 1
        for axis in dim:
            reduced *= x.shape[axis]
        # (the reduced extents bound the sequential rows: most sums stop at that product)
        if reduced > _SEQUENTIAL_ROWS and _sequential_rows(x, dim) > _SEQUENTIAL_ROWS:
            # Accumulated in float64 and rounded once, as compiled kernels sum float32
            # (docs/notes/accurate-numerics.md).
            return np.add.reduce(x, axis=dim, keepdims=keepdim,
                                 dtype=np.float64).astype(np.float32)
    # np.sum's own call, without its wrapper's argument handling.
    return np.add.reduce(x, axis=dim, keepdims=keepdim)


def sum_array(x: np.ndarray, axes: tuple, keepdims: bool) -> np.ndarray:
    """The sum primitive's NumPy sum, for the eager routines that make its calls
    (ops/nn/normalization.py, ops/nn/batch_norm.py): the same bits as the primitive."""
    return _sum_impl(x, axes, keepdims)


SUM = _reduction("sum", _sum_impl,
                 _sum_dtype, lambda ctx, g: (_expand_back(ctx, g),), (),
                 Reduction("sum", "sum"),
                 lambda inputs, tangents, out, attrs: linear_jvp(SUM, tangents, attrs),
                 complex=True)


def _same_dtype(inputs, attrs):
    return None, inputs[0].dtype


def _count(shape, dim: tuple):
    """How many elements each value of a reduction over `dim` of a `shape` tensor takes."""
    count = 1
    for axis in dim:
        count *= shape[axis]
    return count


def _mean_impl(x, dim, keepdim):
    # torch's CPU mean: the sum, divided by the count (a NaN over no elements).
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.true_divide(_sum_impl(x, dim, keepdim), _count(x.shape, dim))


def _mean_composite(x, dim, keepdim):
    """The same values from sum and div, for compiled code."""
    return bind(SUM, (x,), {"dim": dim, "keepdim": keepdim}) / _count(x.shape, dim)


def _mean_vjp(ctx, g):
    # The sum's and the division's VJPs, as the composite's backward runs them.
    return (_expand_back(ctx, g / _count(ctx.input_meta[0][0], ctx.attrs["dim"])),)


def _input_sizes(node, saved, raw):
    return tuple(node.input_meta[0][0])


MEAN = define_op(
    name="mean", arity=1,
    shape=lambda shape, dim, keepdim: _shape_rule(shape, dim, keepdim), dtype=_same_dtype,
    impl=_mean_impl, vjp=_mean_vjp, saves=(), lowering=Decomposition(_mean_composite),
    jvp=lambda inputs, tangents, out, attrs: linear_jvp(MEAN, tangents, attrs),
    batch=batching.reduction_rule, complex=True,
    kernel="sum_cpu",  # torch's mean sums with its sum kernel, whose name its errors give
    saved_names={"self_sym_sizes": _input_sizes,
                 "self_sym_numel": lambda node, saved, raw: _count(node.input_meta[0][0], range(
                     len(node.input_meta[0][0])))})


def _products_of_others(x: Tensor, out: Tensor, attrs: dict) -> Tensor:
    """d prod / d x_i for each element of x: the product of the others in its slice."""
    # out / x_i fails where x_i == 0, so zeros are counted: one zero gets the product of the
    # rest, two or more zeros give 0 everywhere.
    keep = attrs["dim"], True
    if state.grad_enabled and (x._payload is None or _two_zeros_in_a_slice(x, attrs["dim"])):
        # create_graph: the zero-counting form below has the right value but, where a slice
        # holds two or more zeros, not the right derivative (d2 prod / dx_i dx_j is the product
        # of the rest). While tracing the zeros cannot be counted, so the exact form is used.
        return _product_of_others(x, attrs["dim"])
    if not attrs["keepdim"]:
        out = out.reshape(reduced_shape(x.shape, *keep))
    is_zero = x == 0
    nonzero_x = where(is_zero, 1, x)
    product_of_nonzero = prod_(nonzero_x, *keep)
    zero_count = is_zero.sum(dim=attrs["dim"], keepdim=True)
    return where(is_zero, where(zero_count == 1, product_of_nonzero, 0), out / nonzero_x)


def _prod_vjp(ctx, g):
    return (_expand_back(ctx, g) * conj(_products_of_others(ctx.inputs[0], ctx.out,
                                                            ctx.attrs)),)


def _two_zeros_in_a_slice(x: Tensor, dims: tuple) -> bool:
    """Whether some reduced slice of x (with data) holds two or more zeros."""
    data = x._payload
    if data.__class__ is np.ndarray:
        return bool(((data == 0).sum(axis=dims, keepdims=True) >= 2).any())
    # A CUDA tensor: count on the device and read back one flag (a comparison records no
    # autograd history).
    return bool((sum_(x.detach() == 0, dims, True) >= 2).any().item())


def _product_of_others(x: Tensor, dims: tuple) -> Tensor:
    """For each element, the product of the other elements of its reduced slice, with no
    division: the slice of n elements is repeated n times with a 1 on the diagonal and each
    row multiplied out. O(n^2) per slice, differentiable any number of times."""
    from ..tensor.creation import eye

    kept = [axis for axis in range(x.ndim) if axis not in dims]
    order = kept + list(dims)
    moved = x.permute(*order)
    kept_shape = tuple(moved.shape[:len(kept)])
    count = int(np.prod([x.shape[axis] for axis in dims], dtype=np.int64))
    rows = moved.reshape(*kept_shape, 1, count).expand(*kept_shape, count, count)
    diagonal = eye(count, dtype=dtypes.bool_, device=x.device)
    others = prod_(where(diagonal, 1, rows), (len(kept_shape) + 1,), False)
    others = others.reshape(*kept_shape, *[x.shape[axis] for axis in dims])
    inverse = [order.index(axis) for axis in range(x.ndim)]
    return others.permute(*inverse)


_weighted_by_products_of_others = _weighted_sum_jvp(_products_of_others)


def _prod_jvp(inputs, tangents, out, attrs):
    # Without zeros in x (known eagerly) d prod = prod * sum(t / x), three ops; otherwise the
    # tangent weighted by the products of the others, as the VJP's.
    x, (tangent,) = inputs[0], tangents
    data = x._payload
    if tangent is None or data.__class__ is not np.ndarray or not data.all():
        return _weighted_by_products_of_others(inputs, tangents, out, attrs)
    return out * bind(SUM, (tangent / x,), {"dim": attrs["dim"], "keepdim": attrs["keepdim"]})


PROD = _reduction("prod", lambda x, dim, keepdim, dtype=None: np.prod(x, axis=dim,
                                                                      keepdims=keepdim),
                  _sum_dtype, _prod_vjp, (0, "out"), Reduction("prod", "prod"), _prod_jvp,
                  complex=True, kernel="prod_out_cpu")


def _extreme_shares(x: Tensor, out: Tensor, attrs: dict) -> Tensor:
    """Each element's share of d amax (or amin): 1 / the number of ties where it is the
    extreme, 0 elsewhere."""
    # Ties share the gradient evenly (torch's amax/amin rule). A NaN result has no tie in
    # amax (0 / 0: NaN gradients, as torch's amax); with the nan_shares attribute, torch's rule
    # for max() and the inf-norm, the NaN elements share it.
    if not attrs["keepdim"]:
        out = out.reshape(reduced_shape(x.shape, attrs["dim"], True))
    hit = x == out
    if attrs.get("nan_shares"):
        hit = hit | (isnan(x) & isnan(out))
    # In x's dtype: a bool mask over an int64 count would divide in the default float32.
    hit = hit.to(x.dtype)
    return hit / hit.sum(dim=attrs["dim"], keepdim=True)


def _extreme_vjp(ctx, g):
    return (_expand_back(ctx, g) * _extreme_shares(ctx.inputs[0], ctx.out, ctx.attrs),)


AMAX = _reduction("amax", lambda x, dim, keepdim, nan_shares=False: np.amax(
    x, axis=dim, keepdims=keepdim), _same_dtype, _extreme_vjp, (0, "out"), Reduction("max", "max"),
    _weighted_sum_jvp(_extreme_shares),
    complex="\"max_values_cpu\" not implemented for '{type}'", kernel="max_values_cpu")
AMIN = _reduction("amin", lambda x, dim, keepdim, nan_shares=False: np.amin(
    x, axis=dim, keepdims=keepdim), _same_dtype, _extreme_vjp, (0, "out"), Reduction("min", "min"),
    _weighted_sum_jvp(_extreme_shares),
    complex="\"min_values_cpu\" not implemented for '{type}'", kernel="min_values_cpu")


def _arg_impl(numpy_function):
    def impl(x, dim, keepdim):
        if len(dim) == x.ndim and x.ndim != 1:  # over everything: index into the flattened
            result = numpy_function(x.reshape(-1))
            return np.asarray(result).reshape((1,) * x.ndim if keepdim else ())
        return numpy_function(x, axis=dim[0] if dim else None, keepdims=keepdim)

    return impl


ARGMAX = _reduction("argmax", _arg_impl(np.argmax), rule_index, NOT_DIFFERENTIABLE, (),
                    Reduction("argmax", None), None, batch=batching.index_reduction_rule,
                    complex=(RuntimeError, "argmax(): does not support complex input"))
ARGMIN = _reduction("argmin", _arg_impl(np.argmin), rule_index, NOT_DIFFERENTIABLE, (),
                    Reduction("argmin", None), None,
                    batch=batching.index_reduction_rule,
                    complex=(RuntimeError, "argmin(): does not support complex input"))


def _rule_truth(inputs, attrs):
    """any and all give bool, but uint8 for a uint8 input (torch's older mask dtype)."""
    return None, dtypes.uint8 if inputs[0].dtype is dtypes.uint8 else dtypes.bool_


ANY = _reduction("any", lambda x, dim, keepdim: np.any(x, axis=dim, keepdims=keepdim),
                 _rule_truth, NOT_DIFFERENTIABLE, (), Reduction("any", "max", logical=True), None,
                 complex=True, limited=BOTH)
ALL = _reduction("all", lambda x, dim, keepdim: np.all(x, axis=dim, keepdims=keepdim),
                 _rule_truth, NOT_DIFFERENTIABLE, (), Reduction("all", "min", logical=True), None,
                 complex=True, limited=BOTH)


def _check_nonempty(x: Tensor, name: str, dims: tuple, every: bool) -> None:
    """torch's refusal of a reduction without identity over an empty dim: over all elements
    a RuntimeError (argmax's and argmin's an IndexError, in fewer words), over given dims an
    IndexError naming the first empty one. `every`: no dim was given."""
    shape = x.shape
    if every:
        if x.numel() == 0:
            if name in ("argmax", "argmin"):
                raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                                 "input.numel() == 0.")
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        return
    for d in dims:
        if shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


class _NoDim:
    """sum_'s default `dim`: none given (torch's sum() overload). It reads as None in the
    signature, which is what it means."""

    def __repr__(self) -> str:
        return "None"


_NO_DIM = _NoDim()
_SUM_DIM_NODE: list = []  # the node class of torch's sum.dim_IntList overload, made once


def sum_(x: Tensor, dim=_NO_DIM, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum of the elements over `dim` (all when None), keeping reduced dims with `keepdim`;
    integers sum in int64 unless `dtype` is given. As in torch, a call given `dim` (even
    None) records a `SumBackward1` node, one without it a `SumBackward0`."""
    given = dim is not _NO_DIM
    attrs = {"dim": normalize_dims(dim if given else None, x.ndim), "keepdim": bool(keepdim)}
    if dtype is not None:
        attrs["dtype"] = dtypes.to_dtype(dtype)
    out = bind(SUM, (x,), attrs)
    if given:
        node = out.grad_fn
        if node is not None and node.__class__ is SUM.node_class:
            if not _SUM_DIM_NODE:
                _SUM_DIM_NODE.append(type("SumBackward1", (SUM.node_class,), {"__slots__": ()}))
            node.__class__ = _SUM_DIM_NODE[0]
    return out


_MEAN_DIM_NODE: list = []  # the node class of torch's mean.dim overload, made once


def mean_(x: Tensor, dim=_NO_DIM, keepdim: bool = False) -> Tensor:
    """The mean of a floating or complex x over `dim` (all when None), keeping reduced dims
    with `keepdim`. As in torch, a call given `dim` (even None) records a `MeanBackward1`
    node, one without it a `MeanBackward0`."""
    given = dim is not _NO_DIM
    out = bind(MEAN, (x,), {"dim": normalize_dims(dim if given else None, x.ndim),
                            "keepdim": bool(keepdim)})
    if given:
        node = out.grad_fn
        if node is not None and node.__class__ is MEAN.node_class:
            if not _MEAN_DIM_NODE:
                _MEAN_DIM_NODE.append(type("MeanBackward1", (MEAN.node_class,),
                                           {"__slots__": ()}))
            node.__class__ = _MEAN_DIM_NODE[0]
    return out


@autocast_op(cpu=FP32, cuda=FP32_SET_OPT_DTYPE)
def prod_(x: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of the elements over `dim` (all when None), keeping reduced dims with `keepdim`;
    integers multiply in int64 unless `dtype` is given."""
    attrs = {"dim": normalize_dims(dim, x.ndim), "keepdim": bool(keepdim)}
    if dtype is not None:
        attrs["dtype"] = dtypes.to_dtype(dtype)
    return bind(PROD, (x,), attrs)


def amax(x: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Maximum of the elements over `dim` (all when None or an empty tuple); ties share the
    gradient evenly."""
    dims = normalize_dims(dim if dim != () else None, x.ndim)
    _check_nonempty(x, "amax", dims, dim is None or dim == ())
    return bind(AMAX, (x,), {"dim": dims, "keepdim": bool(keepdim)})


def amin(x: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Minimum of the elements over `dim` (all when None or an empty tuple); ties share the
    gradient evenly."""
    dims = normalize_dims(dim if dim != () else None, x.ndim)
    _check_nonempty(x, "amin", dims, dim is None or dim == ())
    return bind(AMIN, (x,), {"dim": dims, "keepdim": bool(keepdim)})


def extreme(x: Tensor, kind: str, dim=None, keepdim: bool = False) -> Tensor:
    """The maximum (kind "max") or minimum over `dim` (all dims when None) with torch's
    gradient for max(), min() and the inf-norms: ties share it, and so do NaN elements where
    the result is NaN (amax gives NaN gradients there)."""
    name, op = ("max", AMAX) if kind == "max" else ("min", AMIN)
    dims = normalize_dims(dim, x.ndim)
    _check_nonempty(x, name, dims, dim is None)
    return bind(op, (x,), {"dim": dims, "keepdim": bool(keepdim), "nan_shares": True})


def index_of_extreme(x: Tensor, kind: str, dim=None, keepdim: bool = False,
                     caller: str | None = None) -> Tensor:
    """argmax (kind "max") or argmin for any dtype, bools included (max(x, dim) of a bool
    tensor needs the index, which torch's argmax refuses to give); `caller`: the op named in
    the errors (max, min), where it is not argmax or argmin."""
    name, op = ("argmax", ARGMAX) if kind == "max" else ("argmin", ARGMIN)
    dims = normalize_dims(dim, x.ndim)
    _check_nonempty(x, caller or name, dims, dim is None)
    return bind(op, (x,), {"dim": dims, "keepdim": bool(keepdim)})


def argmax(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Index (int64) of the maximum along `dim`, or into the flattened tensor when dim is
    None; the first one where several are equal."""
    if x.dtype is dtypes.bool_:
        raise RuntimeError("argmax(): does not support bool input")
    return index_of_extreme(x, "max", dim, keepdim)


def argmin(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Index (int64) of the minimum along `dim`, or into the flattened tensor when dim is
    None; the first one where several are equal."""
    if x.dtype is dtypes.bool_:
        raise RuntimeError("argmin(): does not support bool input")
    return index_of_extreme(x, "min", dim, keepdim)


def any_(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether any element over `dim` (all when None) is nonzero, as a bool tensor (uint8 for a
    uint8 input, as in torch)."""
    return bind(ANY, (x,), {"dim": normalize_dims(dim, x.ndim), "keepdim": bool(keepdim)})


def all_(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Whether every element over `dim` (all when None) is nonzero, as a bool tensor (uint8 for
    a uint8 input, as in torch)."""
    return bind(ALL, (x,), {"dim": normalize_dims(dim, x.ndim), "keepdim": bool(keepdim)})
