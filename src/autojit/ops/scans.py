"""Scans along a dim: cumsum, cumprod, cummax, cummin, logcumsumexp.

Four primitives: `cumsum` and `logcumsumexp` (each also runs in reverse, which is the other's
VJP), `cumprod`, and `cummax_indices`/`cummin_indices` (where the running extreme was found;
cummax and cummin take their values with `gather`, so their gradient is gather's). A scan is
sequential along its dim, so codegen does not fuse it: each lowers to an extern routine that a
compiled CPU plan runs through the NumPy impl and that runs on the host for CUDA tensors
(cuda/eager.py). The impls accumulate float32 in float64, as torch's CPU kernels do. cumsum's
JVP is cumsum; cumprod's and logcumsumexp's are written, as their VJPs, to hold with zeros in
x and without overflow.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..tensor import dtypes
from ..tensor.dtypes import C_TYPE_NAMES, SCALAR_TYPE_NAMES
from ..tensor.state import state
from ..tensor.tensor import Tensor, normalize_dim
from . import batching
from . import elementwise as ew
from .autocast import FP32_SET_OPT_DTYPE, autocast_op
from .complex_rules import conj
from .dtype_rules import rule_first, rule_index
from .elementwise.math_primitives import complex_logaddexp
from .indexing import _gather
from .layout import _narrow, cat, movedim, reshape, unsqueeze
from .out_argument import check_no_grad, check_out_pair, check_out_type, write_out
from .reduction import sum_
from .registry import NOT_DIFFERENTIABLE, Extern, bind, define_op, linear_jvp

cummax_return = namedtuple("cummax", ["values", "indices"])
cummin_return = namedtuple("cummin", ["values", "indices"])


def _accumulator(dtype: np.dtype) -> np.dtype:
    """The dtype a scan accumulates in: float64 for float32 (torch's CPU acc_type)."""
    if dtype.kind != "f":
        return dtype
    return np.dtype(np.float32) if dtype.itemsize < 4 else np.dtype(np.float64)


def _scan_impl(accumulate):
    """The NumPy impl of a scan primitive from `accumulate(array, axis, dtype)`, in reverse
    (from the end of the dim) when asked."""
    def impl(x, dim, reverse=False):
        if x.ndim == 0:
            return x.copy()
        source = np.flip(x, axis=dim) if reverse else x
        result = accumulate(source, dim, _accumulator(x.dtype)).astype(x.dtype, copy=False)
        return np.ascontiguousarray(np.flip(result, axis=dim) if reverse else result)

    return impl


def _scan_shape(shape, dim, reverse=False):
    return shape


# ---- cumsum -----------------------------------------------------------------------------------

CUMSUM = define_op(
    name="cumsum", arity=1, shape=_scan_shape, dtype=rule_first,
    impl=_scan_impl(lambda x, axis, dtype: np.cumsum(x, axis=axis, dtype=dtype)),
    # d out_j / d x_i = 1 for i <= j: the gradient is the cumulative sum from the end.
    vjp=lambda ctx, g: (_cumsum(g, ctx.attrs["dim"], not ctx.attrs["reverse"]),), saves=(),
    jvp=lambda inputs, tangents, out, attrs: linear_jvp(CUMSUM, tangents, attrs),
    lowering=Extern("cumulative_sum", ("data",)),
    batch=batching.dim_rule("dim"), complex=True, kernel="cumsum_out_cpu")


def _cumsum(x: Tensor, dim: int, reverse: bool = False) -> Tensor:
    return bind(CUMSUM, (x,), {"dim": dim, "reverse": reverse})


def _scan_input(x: Tensor, dim, dtype, out, name: str):
    """(x converted to the dtype the scan runs in, normalized dim): `dtype` if given, else
    out's dtype, else x's, with integers and bools summed or multiplied in int64."""
    if out is not None:
        check_out_type(name, out)
        check_no_grad(name, (x, out))
        if dtype is not None and dtypes.to_dtype(dtype) is not out.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype "
                               f"{C_TYPE_NAMES[dtypes.to_dtype(dtype).name]}, but got "
                               f"{C_TYPE_NAMES[out.dtype.name]} instead")
        dtype = out.dtype
    if dtype is not None:
        dtype = dtypes.to_dtype(dtype)
        if dtype is dtypes.bool_:
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
    elif x.dtype.category < dtypes.FLOATING:
        dtype = dtypes.int64
    return (x if dtype is None else x.to(dtype)), normalize_dim(dim, x.ndim)


def _finish(name: str, result: Tensor, out) -> Tensor:
    return result if out is None else write_out(name, out, result)


@autocast_op(cuda=FP32_SET_OPT_DTYPE)
def cumsum(x: Tensor, dim: int, *, dtype=None, out=None) -> Tensor:
    """Cumulative sum along `dim`: `out[i] = x[0] + ... + x[i]`; integers and bools sum in
    int64 unless `dtype` is given (x is converted to it first)."""
    source, dim = _scan_input(x, dim, dtype, out, "cumsum")
    return _finish("cumsum", _cumsum(source, dim), out)


# ---- cumprod ------------------------------------------------------------------------------------

def _has_zero(x: Tensor) -> bool:
    data = x._payload
    if data.__class__ is np.ndarray:
        return bool((data == 0).any())
    return bool((x.detach() == 0).any().item())  # a CUDA tensor: one flag read back


def _cumprod_vjp(ctx, g):
    """torch's cumprod gradient: sum over j >= k of g_j * prod_{i <= j, i != k} x_i.

    Without zeros in x that is the reversed cumsum of g * out divided by x. With zeros (or
    while tracing, where they cannot be counted) the division cannot be used: with create_graph
    the products are formed for every (k, j) (O(n^2), and differentiable again), otherwise in
    O(n) around the first zero of each slice (`_cumprod_grad_with_zeros`). Each form is
    products of x times g: of a complex x, its conjugate's (conj is nothing on real values)."""
    (x,) = ctx.inputs
    dim = ctx.attrs["dim"]
    if x.ndim == 0 or x.shape[dim] == 1:
        return (g,)
    if x._payload is not None and not _has_zero(x):
        return (_cumsum(g * conj(ctx.out), dim, reverse=True) / conj(x),)
    if state.grad_enabled:
        return (_cumprod_grad_products(conj(x), g, dim),)
    return (_cumprod_grad_with_zeros(conj(x), conj(ctx.out), g, dim),)


def _cumprod_grad_products(x: Tensor, g: Tensor, dim: int) -> Tensor:
    """The gradient with every product prod_{i <= j, i != k} x_i formed: row k of an n x n
    matrix is x with x_k replaced by 1, and its cumprod holds those products for each j."""
    from ..tensor.creation import arange

    size = x.shape[dim]
    moved, moved_g = movedim(x, dim, -1), movedim(g, dim, -1)
    rows = unsqueeze(moved, -2).expand(*moved.shape[:-1], size, size)
    positions = arange(size, dtype=dtypes.int64, device=x.device if x.is_cuda else None)
    k, j = reshape(positions, size, 1), reshape(positions, 1, size)
    omitted = _cumprod(ew.where(k == j, 1, rows), rows.ndim - 1)
    terms = ew.where(j >= k, unsqueeze(moved_g, -2) * omitted, 0)
    return movedim(sum_(terms, -1), -1, dim)


def _cumprod_grad_with_zeros(x: Tensor, out: Tensor, g: Tensor, dim: int) -> Tensor:
    """torch's O(n) gradient for inputs with zeros (not differentiable again): before the
    first zero z1 of a slice the division form holds; at z1 the gradient is
    prod(x[:z1]) * sum_{z1 <= j < z2} g_j prod_{z1 < i <= j} x_i (z2 the second zero); after
    z1 it is 0."""
    is_zero = x == 0
    zeros_so_far = _cumsum(is_zero.to(dtypes.int64), dim)
    before = zeros_so_far == 0
    weighted = ew.where(before, out * g, 0)
    grad_before = ew.where(before, _cumsum(weighted, dim, reverse=True)
                           / ew.where(before, x, 1), 0)
    one_zero = zeros_so_far == 1
    first_zero = is_zero & one_zero
    between = one_zero & ew.logical_not(first_zero)
    after_first_zero = _cumprod(ew.where(between, x, 1), dim)
    tail = sum_(ew.where(one_zero, g * after_first_zero, 0), dim, keepdim=True)
    # prod(x[:k]) for each k: out shifted one step along dim, with a 1 first.
    size = x.shape[dim]
    exclusive = cat([ew.fill_like(_narrow(out, dim, 0, 1), 1), _narrow(out, dim, 0, size - 1)],
                    dim)
    head = sum_(ew.where(first_zero, exclusive, 0), dim, keepdim=True)
    return grad_before + ew.where(first_zero, head * tail, 0)


def _cumprod_jvp(inputs, tangents, out, attrs):
    """sum over k <= j of t_k * prod_{i <= j, i != k} x_i: out times the running sum of t / x
    without zeros in x; with zeros (or while tracing), the cumprod of x with x_k replaced by
    t_k, for every k (O(n^2), as the VJP's products)."""
    (x,), (tangent,) = inputs, tangents
    dim = attrs["dim"]
    if tangent is None:
        return None
    if x.ndim == 0 or x.shape[dim] == 1:
        return tangent
    if x._payload is not None and not _has_zero(x):
        return out * _cumsum(tangent / x, dim)
    from ..tensor.creation import arange

    size = x.shape[dim]
    moved = movedim(x, dim, -1)
    rows = unsqueeze(moved, -2).expand(*moved.shape[:-1], size, size)
    positions = arange(size, dtype=dtypes.int64, device=x.device if x.is_cuda else None)
    k, j = reshape(positions, size, 1), reshape(positions, 1, size)
    replaced = _cumprod(ew.where(k == j, unsqueeze(movedim(tangent, dim, -1), -1), rows),
                        rows.ndim - 1)
    return movedim(sum_(ew.where(j >= k, replaced, 0), -2), -1, dim)


CUMPROD = define_op(
    name="cumprod", arity=1, shape=_scan_shape, dtype=rule_first,
    impl=_scan_impl(lambda x, axis, dtype: np.cumprod(x, axis=axis, dtype=dtype)),
    vjp=_cumprod_vjp, jvp=_cumprod_jvp, saves=(0, "out"),
    lowering=Extern("cumulative_product", ("data",)),
    batch=batching.dim_rule("dim"), complex=True, kernel="cumprod_out_cpu")


def _cumprod(x: Tensor, dim: int) -> Tensor:
    return bind(CUMPROD, (x,), {"dim": dim})


@autocast_op(cuda=FP32_SET_OPT_DTYPE)
def cumprod(x: Tensor, dim: int, *, dtype=None, out=None) -> Tensor:
    """Cumulative product along `dim`: `out[i] = x[0] * ... * x[i]`; integers and bools
    multiply in int64 unless `dtype` is given. The gradient is right where x holds zeros."""
    source, dim = _scan_input(x, dim, dtype, out, "cumprod")
    return _finish("cumprod", _cumprod(source, dim), out)


# ---- cummax, cummin -----------------------------------------------------------------------------

def _extreme_index_impl(kind: str):
    combine = np.maximum if kind == "max" else np.minimum

    def impl(x, dim):
        if x.ndim == 0:
            return np.zeros((), np.int64)
        running = combine.accumulate(x, axis=dim)
        # The index moves to every element equal to the running extreme (the last of equal
        # ones, as torch's >= picks it) and to every NaN, which stays the extreme once seen.
        found = x == running
        if x.dtype.kind == "f":
            found |= np.isnan(x)
        shape = [1] * x.ndim
        shape[dim] = x.shape[dim]
        positions = np.arange(x.shape[dim], dtype=np.int64).reshape(shape)
        return np.maximum.accumulate(np.where(found, positions, 0), axis=dim)

    return impl


CUMMAX_INDICES, CUMMIN_INDICES = (
    define_op(name=f"cum{kind}_indices", arity=1, shape=lambda shape, dim: shape,
              dtype=rule_index, impl=_extreme_index_impl(kind), vjp=NOT_DIFFERENTIABLE, saves=(),
              lowering=Extern("cumulative_extreme", ("data",)),
              batch=batching.dim_rule("dim"), kernel=f"cum{kind}_cpu")
    for kind in ("max", "min"))


def _cumulative_extreme(x: Tensor, dim: int, out, op, name: str, result_type):
    dim = normalize_dim(dim, x.ndim)
    source = reshape(x, 1) if x.ndim == 0 else x
    indices = bind(op, (source,), {"dim": dim})
    values = _gather(source, dim, indices)
    if x.ndim == 0:
        values, indices = reshape(values, ()), reshape(indices, ())
    if out is not None:
        out_values, out_indices = check_out_pair(name, out)
        check_no_grad(name, (x, out_values, out_indices))
        for tensor, dtype in ((out_values, x.dtype), (out_indices, dtypes.int64)):
            if tensor.dtype is not dtype:
                raise RuntimeError(f"expected scalar_type {SCALAR_TYPE_NAMES[dtype.name]} but "
                                   f"found {SCALAR_TYPE_NAMES[tensor.dtype.name]}")
        values = write_out(name, out_values, values)
        indices = write_out(name, out_indices, indices)
    return result_type(values, indices)


def cummax(x: Tensor, dim: int, *, out=None):
    """(values, indices): the running maximum along `dim` and where it was found (the last of
    equal entries); a NaN stays the maximum once seen. The gradient goes to those entries."""
    return _cumulative_extreme(x, dim, out, CUMMAX_INDICES, "cummax", cummax_return)


def cummin(x: Tensor, dim: int, *, out=None):
    """(values, indices): the running minimum along `dim` and where it was found (the last of
    equal entries); a NaN stays the minimum once seen. The gradient goes to those entries."""
    return _cumulative_extreme(x, dim, out, CUMMIN_INDICES, "cummin", cummin_return)


# ---- logcumsumexp -------------------------------------------------------------------------------

def _logcumsumexp_vjp(ctx, g):
    """torch's gradient, sum_{j >= i} g_j e^(x_i - out_j), split into the positive and the
    negative parts of g so that each is a reversed logcumsumexp of log|g| - out: nothing
    overflows, and it is differentiable again."""
    (x,) = ctx.inputs
    out, dim, reverse = ctx.out, ctx.attrs["dim"], ctx.attrs["reverse"]
    if x.dtype.is_complex:
        # torch's complex formula: conj(e^(x_i - out_j)) as one exponential of the reversed
        # logcumsumexp of log g - conj(out) (log 0 is -inf, whose exponential is 0).
        return (ew.exp(_logcumsumexp(ew.log(g) - conj(out), dim, not reverse) + conj(x)),)
    lowest = float(np.finfo(g.dtype.numpy).min)
    log_size = ew.log(ew.abs(g))
    parts = []
    for in_part in (g > 0, g < 0):
        logs = ew.where(in_part, log_size, lowest) - out
        parts.append(ew.exp(_logcumsumexp(logs, dim, not reverse) + x))
    return (parts[0] - parts[1],)


def _logcumsumexp_jvp(inputs, tangents, out, attrs):
    """sum_{i <= j} t_i e^(x_i - out_j), as the VJP in two parts, of the positive and the
    negative t, each the exp of a logcumsumexp of log|t| + x, less out."""
    (x,), (tangent,) = inputs, tangents
    if tangent is None:
        return None
    dim, reverse = attrs["dim"], attrs["reverse"]
    if x.dtype.is_complex:
        return ew.exp(_logcumsumexp(ew.log(tangent) + x, dim, reverse) - out)
    lowest = float(np.finfo(tangent.dtype.numpy).min)
    # log|t| of a zero t is never used; 1 in its place keeps its derivative finite.
    log_size = ew.log(ew.abs(ew.where(tangent == 0, 1.0, tangent)))
    parts = []
    for in_part in (tangent > 0, tangent < 0):
        logs = ew.where(in_part, log_size, lowest) + x
        parts.append(ew.exp(_logcumsumexp(logs, dim, reverse) - out))
    return parts[0] - parts[1]


def _logaddexp_accumulate(x, axis, dtype):
    if not np.iscomplexobj(x):
        return np.logaddexp.accumulate(x, axis=axis, dtype=dtype)
    # NumPy's logaddexp has no complex loop: torch's complex logaddexp, one step at a time, in
    # complex128 (torch's CPU accumulator for complex64).
    result = np.moveaxis(np.array(x, dtype=np.complex128), axis, 0)
    for index in range(1, result.shape[0]):
        result[index] = complex_logaddexp(result[index - 1], result[index])
    return np.moveaxis(result, 0, axis)


LOGCUMSUMEXP = define_op(
    name="logcumsumexp", arity=1, shape=_scan_shape, dtype=rule_first,
    impl=_scan_impl(_logaddexp_accumulate),
    vjp=_logcumsumexp_vjp, jvp=_logcumsumexp_jvp, saves=(0, "out"),
    lowering=Extern("cumulative_logsumexp", ("data",)),
    batch=batching.dim_rule("dim"), complex=True, kernel="logcumsumexp_out_cpu")


def _logcumsumexp(x: Tensor, dim: int, reverse: bool = False) -> Tensor:
    return bind(LOGCUMSUMEXP, (x,), {"dim": dim, "reverse": reverse})


def logcumsumexp(x: Tensor, dim: int, *, out=None) -> Tensor:
    """`ln(e^x[0] + ... + e^x[i])` along `dim`, without overflow or underflow; floating dtypes
    only."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{SCALAR_TYPE_NAMES[x.dtype.name]}'")
    result = _logcumsumexp(x, normalize_dim(dim, x.ndim))
    if out is None:
        return result
    check_out_type("logcumsumexp", out)
    check_no_grad("logcumsumexp", (x, out))
    if out.dtype is not x.dtype:
        raise RuntimeError(f"expected scalar_type {SCALAR_TYPE_NAMES[x.dtype.name]} but found "
                           f"{SCALAR_TYPE_NAMES[out.dtype.name]}")
    return write_out("logcumsumexp", out, result)
