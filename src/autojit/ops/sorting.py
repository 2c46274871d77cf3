"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian.

One primitive, `argsort`: the permutation that sorts x along a dim, stably, ascending or
descending, with NaN as the largest value (last ascending, first descending), as torch sorts.
It is not differentiable and codegen cannot fuse it, so it lowers to an extern routine
("sort"): a compiled CPU plan runs it through its NumPy impl, and on CUDA tensors it runs on the
host (cuda/eager.py). Every op here picks positions from that permutation and takes the values
with `gather`, so the gradient of a value is gather's (a scatter into zeros), differentiable
again. The (values, indices) results are named tuples, as torch's return types are.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..tensor import dtypes
from ..tensor.dtypes import SCALAR_TYPE_NAMES
from ..tensor.tensor import Tensor, normalize_dim
from . import batching
from . import elementwise as ew
from .dtype_rules import rule_index
from .indexing import _gather
from .inplace import check_no_overlap
from .layout import _narrow, reshape, squeeze
from .limited_rules import UNSIGNED, not_implemented, refuse_limited
from .out_argument import check_no_grad, check_out_pair, write_out, write_result, write_results
from .reduction import sum_
from .registry import NOT_DIFFERENTIABLE, Extern, bind, define_op

sort_return = namedtuple("sort", ["values", "indices"])
topk_return = namedtuple("topk", ["values", "indices"])
kthvalue_return = namedtuple("kthvalue", ["values", "indices"])
median_return = namedtuple("median", ["values", "indices"])
nanmedian_return = namedtuple("nanmedian", ["values", "indices"])


# ---- the argsort primitive --------------------------------------------------------------------

def _argsort_impl(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    if x.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        # NumPy's order already puts NaN last, and "stable" keeps equal elements in order.
        return np.argsort(x, axis=dim, kind="stable")
    # Descending and stable, NaN first: the stable ascending order of x reversed, reversed
    # again (equal elements come back in their original order), as positions of x.
    flipped_order = np.argsort(np.flip(x, axis=dim), axis=dim, kind="stable")
    return (x.shape[dim] - 1) - np.flip(flipped_order, axis=dim)


ARGSORT = define_op(name="argsort", arity=1, shape=lambda shape, dim, descending: shape,
                    dtype=rule_index, impl=_argsort_impl, vjp=NOT_DIFFERENTIABLE, saves=(),
                    lowering=Extern("sort", ("data",)), batch=batching.dim_rule("dim"),
                    complex=(RuntimeError, " Sort does not support complex dtypes on CPU"),
                    limited=UNSIGNED)  # torch's sort takes uint16, uint32 and uint64


def _order(x: Tensor, dim: int, descending: bool) -> Tensor:
    """The sorting permutation of x along a normalized dim (int64, x's shape)."""
    return bind(ARGSORT, (x,), {"dim": dim, "descending": bool(descending)})


# ---- out= ---------------------------------------------------------------------------------------

def _write_pair(name: str, out, inputs: tuple, values: Tensor, indices: Tensor, checks):
    """values and indices written into the pair `out`; `checks(out_values, out_indices)`
    raises this op's own error where a dtype does not fit (out_argument.write_results has the
    usual ones)."""
    out_values, out_indices = check_out_pair(name, out)
    check_no_grad(name, (*inputs, out_values, out_indices))
    checks(out_values, out_indices)
    return (write_out(name, out_values, values), write_out(name, out_indices, indices))


# ---- sort, argsort, msort, topk --------------------------------------------------------------

def _as_vector(x: Tensor) -> Tensor:
    """A 0-d tensor as a 1-element vector (sorting a 0-d tensor sorts that one element)."""
    return reshape(x, 1) if x.ndim == 0 else x


def _like(result: Tensor, x: Tensor) -> Tensor:
    return reshape(result, ()) if x.ndim == 0 else result


def sort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False, *,
         out=None):
    """(values, indices): x sorted along `dim` (ascending unless `descending`), stably, NaN
    as the largest value; the values' gradient goes to the positions they came from."""
    dim = normalize_dim(dim, x.ndim)
    source = _as_vector(x)
    indices = _order(source, dim, descending)
    values = _like(_gather(source, dim, indices), x)
    indices = _like(indices, x)
    if out is not None:
        values, indices = write_results("sort", out, (values, indices),
                                        ("expected", "expected"), inputs=(x,))
    return sort_return(values, indices)


def argsort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False, *,
            out=None) -> Tensor:
    """The indices (int64) that sort x along `dim`, stably; not differentiable."""
    dim = normalize_dim(dim, x.ndim)
    indices = _like(_order(_as_vector(x), dim, descending), x)
    if out is None:
        return indices
    return write_result("argsort", out, indices, "expected")


def msort(x: Tensor, *, out=None) -> Tensor:
    """x sorted along its first dim, ascending (`sort(x, 0).values`)."""
    values = sort(x, 0).values
    if out is None:
        return values
    return write_result("msort", out, values, "expected", inputs=(x,))


def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *,  # noqa: A002
         out=None):
    """(values, indices) of the k largest entries of x along `dim` (the smallest with
    `largest=False`), in sorted order; NaN counts as the largest value."""
    refuse_limited("topk_cpu", x)
    dim = normalize_dim(dim, x.ndim)
    source = _as_vector(x)
    k = int(k)
    if not 0 <= k <= source.shape[dim]:
        raise RuntimeError("selected index k out of range")
    # torch leaves the order of unsorted results unspecified: they come sorted here too.
    indices = _narrow(_order(source, dim, largest), dim, 0, k)
    values = _like(_gather(source, dim, indices), x)
    indices = _like(indices, x)
    if out is not None:
        values, indices = write_results("topk", out, (values, indices),
                                        ("expected", "expected"), inputs=(x,))
    return topk_return(values, indices)


# ---- order statistics: one position of the sorted order, per slice -------------------------

def _pick(x: Tensor, dim: int, position, keepdim: bool):
    """(values, indices) at `position` of x's ascending order along dim: a Python int, or an
    int64 tensor with dim kept at size 1."""
    source = _as_vector(x)
    order = _order(source, dim, False)
    if isinstance(position, int):
        indices = _narrow(order, dim, position, 1)
    else:
        indices = _gather(order, dim, position)
    values = _gather(source, dim, indices)
    if x.ndim == 0:
        return reshape(values, ()), reshape(indices, ())
    if not keepdim:
        values, indices = squeeze(values, dim), squeeze(indices, dim)
    return values, indices


def kthvalue(x: Tensor, k: int, dim: int = -1, keepdim: bool = False, *, out=None):
    """(values, indices) of the k-th smallest entry (k from 1) of x along `dim`; NaN counts as
    the largest value."""
    refuse_limited("kthvalue_cpu", x)
    dim = normalize_dim(dim, x.ndim)
    size = x.shape[dim] if x.ndim else 1
    k = int(k)
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    values, indices = _pick(x, dim, k - 1, keepdim)
    if out is not None:
        def checks(out_values, out_indices):
            check_no_overlap(out_values, (x,))
            check_no_overlap(out_indices, (x,))
            if out_values.dtype is not x.dtype:
                raise RuntimeError("output values must be of same type as input")
            if out_indices.dtype is not dtypes.int64:
                raise RuntimeError("output indices must be of scalar type Long")

        values, indices = _write_pair("kthvalue", out, (x,), values, indices, checks)
    return kthvalue_return(values, indices)


def _median_position(x: Tensor, dim: int, ignore_nan: bool):
    """Where the lower median sits in x's ascending order along dim: (n - 1) // 2 for n
    entries; with NaNs (sorted last) the first NaN for median, which then gives NaN, and the
    lower median of the others for nanmedian (the first NaN where all are NaN)."""
    size = x.shape[dim] if x.ndim else 1
    if not x.dtype.is_floating_point:
        return (size - 1) // 2
    nan_count = sum_(ew.isnan(_as_vector(x)), dim, keepdim=True)
    counted = size - nan_count
    if ignore_nan:
        return ew.where(counted > 0, ew.floor_divide(counted - 1, 2), 0)
    return ew.where(nan_count > 0, counted, (size - 1) // 2)


def _check_median_dtype(x: Tensor, kernel: str) -> None:
    """torch's error for bools (and uint16, uint32, uint64), naming its kernel (median_cpu for
    all of x, median_out along a dim, for median and nanmedian alike)."""
    if x.dtype is dtypes.bool_ or x.dtype.limited:
        raise not_implemented(kernel, x.dtype)


def _evenly_shared(x: Tensor, value: Tensor) -> Tensor:
    """`value` (a reduction of all of x, detached) with torch's gradient for median() and
    nanmedian(): shared evenly by the elements equal to it (by the NaNs where it is NaN).

    For a finite value, value - sum(value - x over those elements) / count: each difference is
    exactly +0, so the result is exactly `value` (-0.0 included). An infinite or NaN value
    would make those differences NaN, so there the mean of the elements themselves is taken,
    which is exactly the value then; each branch's gradient is the same share."""
    shares = (x == value) | (ew.isnan(x) & ew.isnan(value))
    count = sum_(shares)
    finite = value - sum_(ew.where(shares, value - x, 0)) / count
    infinite = sum_(ew.where(shares, x, 0)) / count
    return ew.where(ew.abs(value) < math.inf, finite, infinite)  # False for NaN too


def _median(x: Tensor, dim, keepdim: bool, out, name: str, result_type):
    ignore_nan = name == "nanmedian"
    _check_median_dtype(x, "median_cpu" if dim is None else "median_out")
    if dim is None:
        if out is not None:
            raise TypeError(f"{name}() missing 1 required positional arguments: \"dim\"")
        flat = reshape(x, -1)
        if flat.shape[0] == 0:
            from ..tensor.creation import full

            # NaN, as torch gives; for integers torch's is NaN converted (the lowest int64).
            return full((), float("nan"), dtype=dtypes.float64, device=x.device).to(x.dtype)
        values, _ = _pick(flat, 0, _median_position(flat, 0, ignore_nan), False)
        if not x.dtype.is_floating_point or not x.requires_grad:
            return values
        return _evenly_shared(flat, values.detach())
    dim = normalize_dim(dim, x.ndim)
    if x.ndim and x.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    values, indices = _pick(x, dim, _median_position(x, dim, ignore_nan), keepdim)
    if out is not None:
        def checks(out_values, out_indices):
            if out_values.dtype is not x.dtype:
                raise RuntimeError(
                    f"Expected tensor for 'values' to have the same type as tensor for argument "
                    f"#2 'self'; but type torch.{SCALAR_TYPE_NAMES[out_values.dtype.name]}Tensor "
                    f"does not equal torch.{SCALAR_TYPE_NAMES[x.dtype.name]}Tensor (while "
                    f"checking arguments for {name})")
            if out_indices.dtype is not dtypes.int64:
                raise RuntimeError(
                    "Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                    f"torch.{SCALAR_TYPE_NAMES[out_indices.dtype.name]}Tensor instead (while "
                    f"checking arguments for {name})")

        values, indices = _write_pair(name, out, (x,), values, indices, checks)
    return result_type(values, indices)


def median(x: Tensor, dim=None, keepdim: bool = False, *, out=None):
    """The lower median of all of x (a NaN if x holds one); with `dim`, (values, indices) of
    the lower median along it."""
    return _median(x, dim, keepdim, out, "median", median_return)


def nanmedian(x: Tensor, dim=None, keepdim: bool = False, *, out=None):
    """`median` ignoring NaNs: the lower median of the other entries (NaN where all are)."""
    return _median(x, dim, keepdim, out, "nanmedian", nanmedian_return)
