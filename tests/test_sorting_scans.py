"""Sorting, order statistics, scans, searching, counting and triangular parts against torch.

Each case runs one function on torch tensors and on autojit tensors and compares what comes
back: values, dtypes and the names of the returned tuples, or the exception's type and message.
The cases are the ones the op table's NumPy references leave out: NaN ordering, ties,
integer and bool dtypes, 0-d tensors and empty dims, the out= argument, the method and in-place
forms, and torch's errors. Gradients (first and second order) are compared with torch's too,
and the ops whose result size depends on the data are checked to compile with the call's sizes
(checked on every run) or to break a compiled function's graph, never to give a wrong result.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pytest

import autojit
from autojit.tensor.graph_break import GraphBreak

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


@dataclass
class Case:
    name: str
    function: object  # function(framework, *tensors)
    arrays: tuple = ()  # NumPy arrays, made tensors of either framework


def _tensors(framework, arrays):
    if framework is torch:
        return [torch.from_numpy(np.array(a)) for a in arrays]
    return [autojit.tensor(np.array(a)) for a in arrays]


def _plain(value):
    """A result in framework-neutral form: (dtype name, array) per tensor, tuples by type."""
    if isinstance(value, (torch.Tensor, autojit.Tensor)):
        array = value.detach().numpy() if isinstance(value, torch.Tensor) else \
            value.detach().numpy()
        return (str(value.dtype).split(".")[-1], array)
    if isinstance(value, tuple):
        name = type(value).__name__ if hasattr(value, "_fields") or \
            type(value).__module__ == "torch.return_types" else "tuple"
        return (name.removesuffix("_out"), [_plain(item) for item in value])
    if isinstance(value, list):
        return ("list", [_plain(item) for item in value])
    return value


def _assert_same(actual, expected, where: str):
    if isinstance(expected, tuple) and len(expected) == 2 and isinstance(expected[1],
                                                                        np.ndarray):
        assert actual[0] == expected[0], f"{where}: dtype {actual[0]}, torch {expected[0]}"
        np.testing.assert_allclose(actual[1], expected[1], rtol=1e-6, atol=1e-6,
                                   equal_nan=True, err_msg=where)
        assert actual[1].shape == expected[1].shape, where
        return
    if isinstance(expected, tuple):
        assert actual[0] == expected[0], f"{where}: returned {actual[0]}, torch {expected[0]}"
        assert len(actual[1]) == len(expected[1]), where
        for index, (a, e) in enumerate(zip(actual[1], expected[1], strict=True)):
            _assert_same(a, e, f"{where}[{index}]")
        return
    assert actual == expected, where


def _run(framework, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return case.function(framework, *_tensors(framework, case.arrays))


def check_like_torch(case: Case) -> None:
    try:
        expected = _run(torch, case)
    except Exception as error:  # noqa: BLE001 - autojit must raise the same
        with pytest.raises(type(error)) as raised:
            _run(autojit, case)
        assert str(raised.value) == str(error), case.name
        return
    _assert_same(_plain(_run(autojit, case)), _plain(expected), case.name)


def _f(*values, dtype=np.float32):
    return np.array(values, dtype)


def _i(*values, dtype=np.int64):
    return np.array(values, dtype)


WITH_NAN = _f(3, NAN, 1, 3, NAN, 2)
TIES = _i(2, 1, 2, 3, 1, 2)
M23 = _f(3, 1, 2, 0, 5, 4).reshape(2, 3)
M34 = np.arange(12, dtype=np.float64).reshape(3, 4) - 5
MAT_NAN = _f(1, NAN, 2, 4, 3, 0, NAN, NAN, NAN, 2, 2, 1).reshape(3, 4)


def _picked_values(x, result):
    """(values, the entries of x at indices) of a (values, indices) result: which of equal
    entries topk and kthvalue pick is left unspecified by torch (its selection algorithm
    decides), so with ties only the values are compared, and that the indices point at them."""
    return result.values, x.gather(-1, result.indices) if x.ndim else x


def _out(t, *shape, dtype="float32"):
    return t.empty(*shape, dtype=getattr(t, dtype))


SORTING = [
    Case("sort_nan", lambda t, x: t.sort(x), (WITH_NAN,)),
    Case("sort_nan_descending", lambda t, x: t.sort(x, descending=True), (WITH_NAN,)),
    Case("sort_nan_descending_stable", lambda t, x: t.sort(x, dim=0, descending=True,
                                                          stable=True), (WITH_NAN,)),
    Case("sort_int_ties_descending", lambda t, x: x.sort(descending=True), (TIES,)),
    Case("sort_int32_dim0", lambda t, x: x.sort(0), (TIES.reshape(2, 3).astype(np.int32),)),
    Case("sort_bool", lambda t, x: t.sort(x), (np.array([True, False, True]),)),
    Case("sort_0d", lambda t, x: t.sort(x), (_f(2),)),
    Case("sort_empty", lambda t, x: t.sort(x, 1), (np.zeros((0, 2), np.float32),)),
    Case("sort_dim_out_of_range", lambda t, x: t.sort(x, 2), (M23,)),
    Case("sort_out", lambda t, x: t.sort(x, out=(_out(t, 2, 3), _out(t, 2, 3, dtype="long"))),
         (M23,)),
    Case("sort_out_int_indices", lambda t, x: t.sort(
        x, out=(_out(t, 2, 3), _out(t, 2, 3, dtype="int32"))), (M23,)),
    Case("sort_out_double_values", lambda t, x: t.sort(
        x, out=(_out(t, 2, 3, dtype="float64"), _out(t, 2, 3, dtype="long"))), (M23,)),
    Case("argsort_descending_positional", lambda t, x: t.argsort(x, 0, True), (TIES,)),
    Case("argsort_method_nan", lambda t, x: x.argsort(descending=True), (WITH_NAN,)),
    Case("msort", lambda t, x: t.msort(x), (M23,)),
    Case("msort_0d", lambda t, x: x.msort(), (_f(2),)),
    Case("msort_out_double", lambda t, x: t.msort(x, out=_out(t, 2, 3, dtype="float64")),
         (M23,)),
    Case("topk_nan", lambda t, x: t.topk(x, 2), (WITH_NAN,)),
    Case("topk_smallest_nan", lambda t, x: _picked_values(x, x.topk(3, largest=False)),
         (WITH_NAN,)),
    Case("topk_ties", lambda t, x: _picked_values(x, t.topk(x, 4)), (TIES,)),
    Case("topk_zero", lambda t, x: t.topk(x, 0, dim=0), (M23,)),
    Case("topk_0d", lambda t, x: t.topk(x, 1), (_f(2),)),
    Case("topk_too_large", lambda t, x: t.topk(x, 4), (M23,)),
    Case("topk_negative", lambda t, x: t.topk(x, -1), (M23,)),
    Case("topk_out", lambda t, x: t.topk(x, 2, out=(_out(t, 2, 2), _out(t, 2, 2, dtype="long"))),
         (M23,)),
    Case("topk_out_int_indices", lambda t, x: t.topk(
        x, 2, out=(_out(t, 2, 2), _out(t, 2, 2, dtype="int32"))), (M23,)),
    Case("kthvalue_nan", lambda t, x: t.kthvalue(x, 2), (WITH_NAN,)),
    Case("kthvalue_ties_keepdim", lambda t, x: _picked_values(x, x.kthvalue(3, 0, keepdim=True)),
         (TIES,)),
    Case("kthvalue_0d", lambda t, x: t.kthvalue(x, 1), (_f(2),)),
    Case("kthvalue_out_of_range", lambda t, x: t.kthvalue(x, 4), (M23,)),
    Case("kthvalue_zero", lambda t, x: t.kthvalue(x, 0, 0), (M23,)),
    Case("kthvalue_out", lambda t, x: t.kthvalue(x, 2, out=(_out(t, 2), _out(t, 2, dtype="long"))),
         (M23,)),
    Case("kthvalue_out_double", lambda t, x: t.kthvalue(
        x, 2, out=(_out(t, 2, dtype="float64"), _out(t, 2, dtype="long"))), (M23,)),
    Case("kthvalue_out_int_indices", lambda t, x: t.kthvalue(
        x, 2, out=(_out(t, 2), _out(t, 2, dtype="int32"))), (M23,)),
    Case("median_all_nan", lambda t, x: t.median(x), (WITH_NAN,)),
    Case("median_all_even", lambda t, x: x.median(), (_f(4, 1, 3, 2),)),
    Case("median_all_int", lambda t, x: x.median(), (TIES,)),
    Case("median_all_negative_zero_requires_grad",
         lambda t, x: 1 / t.median(x.requires_grad_(True)).detach(),  # -inf for -0.0
         (_f(-0.0, 1, -0.0),)),
    Case("median_dim_nan", lambda t, x: t.median(x, 1), (MAT_NAN,)),
    Case("median_dim_ties", lambda t, x: t.median(x, 0), (_f(2, 1, 2, 3),)),
    Case("median_dim_keepdim_negative", lambda t, x: t.median(x, -1, keepdim=True), (M34,)),
    Case("median_0d_dim", lambda t, x: t.median(x, 0), (_f(2),)),
    Case("median_empty", lambda t, x: t.median(x), (np.zeros(0, np.float32),)),
    Case("median_empty_dim", lambda t, x: t.median(x, 1), (np.zeros((2, 0), np.float32),)),
    Case("median_empty_other_dim", lambda t, x: t.median(x, 1), (np.zeros((0, 2), np.float32),)),
    Case("median_bool", lambda t, x: t.median(x), (np.array([True, False]),)),
    Case("median_dim_bool", lambda t, x: t.median(x, 0), (np.array([True, False]),)),
    Case("median_out", lambda t, x: t.median(x, 1, out=(_out(t, 2), _out(t, 2, dtype="long"))),
         (M23,)),
    Case("median_out_double", lambda t, x: t.median(
        x, 1, out=(_out(t, 2, dtype="float64"), _out(t, 2, dtype="long"))), (M23,)),
    Case("median_out_int_indices", lambda t, x: t.median(
        x, 1, out=(_out(t, 2), _out(t, 2, dtype="int32"))), (M23,)),
    Case("nanmedian_all", lambda t, x: t.nanmedian(x), (WITH_NAN,)),
    Case("nanmedian_all_nan", lambda t, x: t.nanmedian(x), (_f(NAN, NAN),)),
    Case("nanmedian_dim", lambda t, x: x.nanmedian(1), (MAT_NAN,)),
    Case("nanmedian_dim_all_nan_row", lambda t, x: t.nanmedian(x, 0),
         (_f(NAN, 1, NAN, NAN, 2, NAN).reshape(3, 2),)),
    Case("nanmedian_int", lambda t, x: t.nanmedian(x, 0), (TIES,)),
]

COUNTING = [
    Case("unique", lambda t, x: t.unique(x), (_i(3, 1, 2, 3, 1),)),
    Case("unique_inverse_counts", lambda t, x: t.unique(
        x, return_inverse=True, return_counts=True), (_i(3, 1, 2, 3, 1).reshape(5, 1),)),
    Case("unique_unsorted", lambda t, x: x.unique(sorted=False), (_i(5, 3, 5, 1, 3),)),
    Case("unique_nan", lambda t, x: t.unique(x, return_inverse=True, return_counts=True),
         (_f(NAN, NAN, 1),)),
    Case("unique_dim", lambda t, x: t.unique(x, dim=0, return_inverse=True,
                                             return_counts=True),
         (_i(1, 2, 1, 2, 0, 5).reshape(3, 2),)),
    Case("unique_bool_counts", lambda t, x: t.unique(x, return_counts=True),
         (np.array([True, False, True]),)),
    Case("unique_0d", lambda t, x: t.unique(x), (_f(3),)),
    Case("unique_0d_dim", lambda t, x: t.unique(x, dim=0), (_f(3),)),
    Case("bincount", lambda t, x: t.bincount(x), (_i(3, 1, 2, 3, 1),)),
    Case("bincount_minlength", lambda t, x: x.bincount(minlength=7), (_i(3, 1, 2, 3, 1),)),
    Case("bincount_weights_float32", lambda t, x, w: t.bincount(x, w),
         (_i(3, 1, 2, 3, 1), _f(1, 2, 3, 4, 5))),
    Case("bincount_weights_float64", lambda t, x, w: t.bincount(x, weights=w),
         (_i(3, 1, 2, 3, 1), _f(1, 2, 3, 4, 5, dtype=np.float64))),
    Case("bincount_weights_int", lambda t, x, w: t.bincount(x, weights=w),
         (_i(1, 2), _i(1, 2, dtype=np.int32))),
    Case("bincount_int32", lambda t, x: t.bincount(x), (_i(1, 2, dtype=np.int32),)),
    Case("bincount_empty", lambda t, x: t.bincount(x), (_i(),)),
    Case("bincount_negative", lambda t, x: t.bincount(x), (_i(-1, 2),)),
    Case("bincount_float", lambda t, x: t.bincount(x), (_f(1, 2),)),
    Case("bincount_bool", lambda t, x: t.bincount(x), (np.array([True]),)),
    Case("bincount_2d", lambda t, x: t.bincount(x), (_i(1, 2).reshape(1, 2),)),
    Case("bincount_minlength_negative", lambda t, x: t.bincount(x, minlength=-1), (_i(1, 2),)),
    Case("bincount_weights_length", lambda t, x, w: t.bincount(x, w), (_i(1, 2), _f(1, 2, 3))),
    Case("histc_range", lambda t, x: t.histc(x, bins=4, min=0, max=3), (_f(1, 2, 1),)),
    Case("histc_data_range", lambda t, x: t.histc(x, bins=4), (_f(1, 2, 1),)),
    Case("histc_all_equal", lambda t, x: x.histc(4), (_f(1, 1, 1),)),
    Case("histc_outside", lambda t, x: t.histc(x, 3, 1, 2), (_f(1, 2, 3, 0.5, 1.5),)),
    Case("histc_min_equals_max", lambda t, x: t.histc(x, 3, 2, 2),
         (_f(1, 2, dtype=np.float64),)),
    Case("histc_edges", lambda t, x: t.histc(x, 10, 0, 1),
         (np.linspace(0, 1, 41, dtype=np.float32),)),
    Case("histc_2d", lambda t, x: t.histc(x, 5), (M34,)),
    Case("histc_empty", lambda t, x: t.histc(x, 3), (np.zeros(0, np.float32),)),
    Case("histc_int", lambda t, x: t.histc(x), (_i(1, 2),)),
    Case("histc_bins_zero", lambda t, x: t.histc(x, bins=0), (_f(1, 2),)),
    Case("histc_min_above_max", lambda t, x: t.histc(x, min=3, max=2), (_f(1, 2),)),
    Case("histc_nan_range", lambda t, x: t.histc(x), (_f(1, NAN),)),
    Case("histc_inf_range", lambda t, x: t.histc(x), (_f(1, INF),)),
    Case("histc_given_nan", lambda t, x: t.histc(x, min=NAN, max=2), (_f(1, 2),)),
    Case("histc_out", lambda t, x: t.histc(x, 3, out=_out(t, 3)), (M23,)),
    Case("histc_out_double", lambda t, x: t.histc(x, 3, out=_out(t, 3, dtype="float64")),
         (M23,)),
]

SEARCHING = [
    Case("searchsorted", lambda t, b, v: t.searchsorted(b, v),
         (_i(1, 3, 5, 7), _i(3, 6, 9, 0).reshape(2, 2))),
    Case("searchsorted_right", lambda t, b, v: t.searchsorted(b, v, right=True),
         (_i(1, 3, 3, 7), _i(3, 6, 9, 0))),
    Case("searchsorted_side", lambda t, b, v: t.searchsorted(b, v, side="right", right=False),
         (_i(1, 3, 3, 7), _i(3, 6))),
    Case("searchsorted_scalar", lambda t, b: t.searchsorted(b, 3), (_i(1, 3, 5, 7),)),
    Case("searchsorted_batched", lambda t, b, v: t.searchsorted(b, v),
         (_i(1, 3, 5, 2, 4, 6).reshape(2, 3), _i(3, 6, 1, 5).reshape(2, 2))),
    Case("searchsorted_sorter", lambda t, b, v, s: t.searchsorted(b, v, sorter=s),
         (_i(5, 1, 3), _i(3, 6), _i(1, 2, 0))),
    Case("searchsorted_nan", lambda t, b, v: t.searchsorted(b, v),
         (_f(1, NAN), _f(NAN, 2, 0.5))),
    Case("searchsorted_nan_right", lambda t, b, v: t.searchsorted(b, v, right=True),
         (_f(1, 2, NAN), _f(NAN, 2, 0.5))),
    Case("searchsorted_int32_out", lambda t, b, v: t.searchsorted(b, v, out_int32=True),
         (_f(1, 2), _f(1.5, 3))),
    Case("searchsorted_mixed", lambda t, b, v: t.searchsorted(b, v), (_i(1, 2), _f(1.5))),
    Case("searchsorted_bool_values", lambda t, b, v: t.searchsorted(b, v),
         (_f(0.5, 2), np.array([True, False]))),
    Case("searchsorted_empty", lambda t, b, v: t.searchsorted(b, v), (_f(), _f(1))),
    Case("searchsorted_side_conflict", lambda t, b, v: t.searchsorted(b, v, side="left",
                                                                      right=True),
         (_f(1, 3), _f(3))),
    Case("searchsorted_side_bad", lambda t, b, v: t.searchsorted(b, v, side="middle"),
         (_f(1, 3), _f(3))),
    Case("searchsorted_leading_mismatch", lambda t, b, v: t.searchsorted(b, v),
         (M34, _f(3, 1).reshape(2, 1))),
    Case("searchsorted_scalar_2d", lambda t, b: t.searchsorted(b, 1.0), (M23,)),
    Case("searchsorted_0d_values_2d", lambda t, b, v: t.searchsorted(b, v), (M23, _f(1))),
    Case("searchsorted_0d_boundaries", lambda t, b, v: t.searchsorted(b, v), (_f(2), M23)),
    Case("searchsorted_bool_boundaries", lambda t, b, v: t.searchsorted(b, v),
         (np.array([False, True]), np.array([True]))),
    Case("searchsorted_sorter_int32", lambda t, b, v, s: t.searchsorted(b, v, sorter=s),
         (_f(2, 1), _f(1), _i(1, 0, dtype=np.int32))),
    Case("searchsorted_sorter_shape", lambda t, b, v, s: t.searchsorted(b, v, sorter=s),
         (_f(2, 1), _f(1), _i(1, 0, 2))),
    Case("searchsorted_sorter_range", lambda t, b, v, s: t.searchsorted(b, v, sorter=s),
         (_f(2, 1), _f(1), _i(1, 2))),
    Case("searchsorted_out", lambda t, b, v: t.searchsorted(b, v, out=_out(t, 2, dtype="long")),
         (_f(1, 2), _f(1.5, 3))),
    Case("searchsorted_out_int", lambda t, b, v: t.searchsorted(
        b, v, out=_out(t, 2, dtype="int32")), (_f(1, 2), _f(1.5, 3))),
    Case("bucketize", lambda t, x, b: t.bucketize(x, b), (_i(3, 6, 9, 0).reshape(2, 2),
                                                          _i(1, 3, 5, 7))),
    Case("bucketize_right", lambda t, x, b: t.bucketize(x, b, right=True),
         (_i(3, 6, 9, 0), _i(1, 3, 5, 7))),
    Case("bucketize_scalar", lambda t, b: t.bucketize(2.5, b, out_int32=True), (_i(1, 3),)),
    Case("bucketize_2d", lambda t, x, b: t.bucketize(x, b), (_f(3), M23)),
    Case("bucketize_0d", lambda t, x, b: t.bucketize(x, b), (M23, _f(2))),
]

SCANS = [
    Case("cumsum_int32", lambda t, x: t.cumsum(x, 0), (_i(1, 2, 3, dtype=np.int32),)),
    Case("cumsum_bool", lambda t, x: x.cumsum(0), (np.array([True, False, True]),)),
    Case("cumsum_dtype", lambda t, x: t.cumsum(x, 0, dtype=t.float32), (_i(1, 2),)),
    Case("cumsum_dtype_int", lambda t, x: t.cumsum(x, -1, dtype=t.int32), (_f(1.5, 2.5),)),
    Case("cumsum_0d", lambda t, x: t.cumsum(x, 0), (_f(3),)),
    Case("cumsum_dim_out_of_range", lambda t, x: t.cumsum(x, 1), (_f(1, 2),)),
    Case("cumsum_float32_accumulates", lambda t, x: t.cumsum(x, 0),
         (np.full(3000, 0.1, np.float32),)),
    Case("cumsum_out_resized", lambda t, x: t.cumsum(x, 0, out=_out(t, 3)), (_f(1, 2),)),
    Case("cumsum_out_empty", lambda t, x: t.cumsum(x, 0, out=_out(t, 0)), (_f(1, 2),)),
    Case("cumsum_out_int", lambda t, x: t.cumsum(x, 1, out=_out(t, 2, 3, dtype="int32")),
         (M23,)),
    Case("cumsum_out_bool", lambda t, x: t.cumsum(x, 1, out=_out(t, 2, 3, dtype="bool")),
         (M23,)),
    Case("cumsum_out_dtype_mismatch", lambda t, x: t.cumsum(
        x, 1, dtype=t.float64, out=_out(t, 2, 3)), (M23,)),
    Case("cumsum_out_tuple", lambda t, x: t.cumsum(x, 1, out=(_out(t, 2, 3),)), (M23,)),
    Case("cumprod_int", lambda t, x: t.cumprod(x, 0), (_i(1, 2, 0, 3, dtype=np.int32),)),
    Case("cumprod_zeros", lambda t, x: x.cumprod(1), (_f(2, 0, 3, 0, 4, 1).reshape(2, 3),)),
    Case("cumprod_bool", lambda t, x: t.cumprod(x, 0), (np.array([True, False]),)),
    Case("cumprod_out_int", lambda t, x: t.cumprod(x, 1, out=_out(t, 2, 3, dtype="int32")),
         (M23,)),
    Case("cummax_nan", lambda t, x: t.cummax(x, 0), (_f(1, 1, NAN, 2, NAN, 0),)),
    Case("cummin_nan", lambda t, x: x.cummin(0), (_f(1, 1, NAN, 2, NAN, 0),)),
    Case("cummax_ties", lambda t, x: t.cummax(x, 0), (_i(1, 3, 3, 2),)),
    Case("cummin_2d", lambda t, x: t.cummin(x, 1), (M34,)),
    Case("cummax_bool", lambda t, x: t.cummax(x, 0), (np.array([True, False]),)),
    Case("cummax_0d", lambda t, x: t.cummax(x, 0), (_f(2),)),
    Case("cummax_out", lambda t, x: t.cummax(x, 1, out=(_out(t, 2, 3),
                                                        _out(t, 2, 3, dtype="long"))), (M23,)),
    Case("cummax_out_double", lambda t, x: t.cummax(
        x, 1, out=(_out(t, 2, 3, dtype="float64"), _out(t, 2, 3, dtype="long"))), (M23,)),
    Case("cummin_out_int_indices", lambda t, x: t.cummin(
        x, 1, out=(_out(t, 2, 3), _out(t, 2, 3, dtype="int32"))), (M23,)),
    Case("logcumsumexp", lambda t, x: t.logcumsumexp(x, 1), (M23,)),
    Case("logcumsumexp_wide_range", lambda t, x: x.logcumsumexp(0),
         (_f(-1000, 0, -INF, 1000, 1e-3),)),
    Case("logcumsumexp_infinities", lambda t, x: t.logcumsumexp(x, 0),
         (_f(-INF, -INF, INF, INF, NAN, 1),)),
    Case("logcumsumexp_int", lambda t, x: t.logcumsumexp(x, 0), (_i(1, 2),)),
    Case("logcumsumexp_out_double", lambda t, x: t.logcumsumexp(
        x, 1, out=_out(t, 2, 3, dtype="float64")), (M23,)),
]

TRIANGULAR = [
    Case("tril", lambda t, x: t.tril(x), (M34,)),
    Case("triu_diagonal", lambda t, x: t.triu(x, 2), (M34,)),
    Case("tril_batched_negative", lambda t, x: x.tril(-1), (np.ones((2, 3, 4), np.int32),)),
    Case("triu_bool", lambda t, x: x.triu(diagonal=-1), (np.ones((3, 3), bool),)),
    Case("tril_far_diagonals", lambda t, x: (t.tril(x, 9), t.tril(x, -9), t.triu(x, 9)), (M34,)),
    Case("tril_1d", lambda t, x: t.tril(x), (_f(1, 2),)),
    Case("tril_out", lambda t, x: t.tril(x, out=_out(t, 3, 4, dtype="float64")), (M34,)),
    Case("tril_out_wrong_dtype", lambda t, x: t.tril(x, out=_out(t, 3, 4)), (M34,)),
    Case("tril_indices", lambda t: (t.tril_indices(3, 4), t.tril_indices(3, 4, 1),
                                    t.triu_indices(3, 4, -1), t.triu_indices(4, 3, 2))),
    Case("tril_indices_int32", lambda t: t.tril_indices(3, 3, dtype=t.int32)),
    Case("tril_indices_empty", lambda t: (t.tril_indices(0, 0), t.triu_indices(2, 0))),
    Case("tril_indices_negative_row", lambda t: t.tril_indices(-1, 4)),
    Case("triu_indices_negative_col", lambda t: t.triu_indices(2, -1)),
    Case("tril_indices_float", lambda t: t.tril_indices(3, 4, dtype=t.float32)),
]


@pytest.mark.parametrize("case", SORTING + COUNTING + SEARCHING + SCANS + TRIANGULAR,
                         ids=lambda case: case.name)
def test_like_torch(case):
    check_like_torch(case)


def test_out_with_one_or_more_elements_warns_when_resized():
    out = autojit.empty(3)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        autojit.cumsum(autojit.tensor([1.0, 2.0]), 0, out=out)
    assert out.tolist() == [1.0, 3.0]
    empty = autojit.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        autojit.cumsum(autojit.tensor([1.0, 2.0]), 0, out=empty)
    assert empty.tolist() == [1.0, 3.0]


def test_out_refuses_autograd():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    message = ("cumsum(): functions with out=... arguments don't support automatic "
               "differentiation, but one of the arguments requires grad.")
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        autojit.cumsum(x, 0, out=autojit.empty(2))
    with autojit.no_grad():
        assert autojit.cumsum(x, 0, out=autojit.empty(2)).tolist() == [1.0, 3.0]


# ---- in-place forms -----------------------------------------------------------------------------

@pytest.mark.parametrize("name, args", [("tril_", ()), ("triu_", (1,)), ("cumsum_", (1,)),
                                        ("cumprod_", (0,))])
def test_in_place_forms_like_torch(name, args):
    data = np.arange(1, 7, dtype=np.float64).reshape(2, 3)
    expected_leaf = torch.tensor(data, requires_grad=True)
    actual_leaf = autojit.tensor(data, requires_grad=True)
    results = []
    for t, leaf in ((torch, expected_leaf), (autojit, actual_leaf)):
        x = leaf * 1
        version = x._version
        assert getattr(x, name)(*args) is x
        assert x._version == version + 1
        (x * t.tensor(data + 1)).sum().backward()
        results.append((x.detach().numpy(), leaf.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0])
    np.testing.assert_allclose(results[1][1], results[0][1])


def test_cumsum_in_place_keeps_an_integer_dtype():
    x = autojit.tensor([1, 2, 3], dtype=autojit.int32)
    x.cumsum_(0)
    assert x.dtype is autojit.int32 and x.tolist() == [1, 3, 6]


# ---- gradients against torch's --------------------------------------------------------------

GRADIENTS = [
    ("sort", lambda t, x: t.sort(x, 1, descending=True).values, M34),
    ("topk", lambda t, x: t.topk(x, 2, 0).values, M34),
    ("kthvalue", lambda t, x: t.kthvalue(x, 2, 1).values, M34),
    ("median_dim", lambda t, x: t.median(x, 1).values, M34),
    ("median_all_ties", lambda t, x: t.median(x), np.array([1.0, 2.0, 2.0, 3.0, 2.0])),
    ("median_all_nan", lambda t, x: t.median(x), np.array([1.0, NAN, 2.0, NAN])),
    ("median_all_infinite", lambda t, x: t.median(x), np.array([INF, 1.0, INF, INF, 0.0])),
    ("median_all_negative_zero", lambda t, x: t.median(x), np.array([-0.0, 1.0, -0.0])),
    ("nanmedian_all_nan", lambda t, x: t.nanmedian(x), np.array([NAN, NAN])),
    ("nanmedian_dim", lambda t, x: t.nanmedian(x, 0).values,
     np.array([[1.0, NAN], [2.0, 3.0], [NAN, 4.0]])),
    ("msort", lambda t, x: t.msort(x), M34),
    ("cumsum", lambda t, x: t.cumsum(x, 0), M34),
    ("cumprod_zeros", lambda t, x: t.cumprod(x, 1),
     np.array([[2.0, 0.0, 3.0, 0.0, 4.0], [0.0, 1.5, 2.0, -1.0, 0.5], [1.0, 2.0, 0.0, 3.0, 2.0]])),
    ("cummax_ties", lambda t, x: t.cummax(x, 0).values, np.array([1.0, 3.0, 3.0, 2.0, 4.0])),
    ("cummin", lambda t, x: t.cummin(x, 1).values, M34),
    ("logcumsumexp", lambda t, x: t.logcumsumexp(x, 1), M34 / 3),
    ("tril", lambda t, x: t.tril(x, 1), M34),
    ("triu", lambda t, x: t.triu(x, -1), M34),
]


def _first_and_second_gradients(t, function, data, weights, direction):
    x = (torch.tensor(data) if t is torch else autojit.tensor(data)).requires_grad_(True)
    wrap = torch.tensor if t is torch else autojit.tensor
    output = function(t, x)
    (first,) = t.autograd.grad((output * wrap(weights)).sum(), x, create_graph=True)
    if not first.requires_grad:  # a gradient constant in x: the second order is 0
        return first.detach().numpy(), np.zeros_like(data)
    (second,) = t.autograd.grad((first * wrap(direction)).sum(), x, allow_unused=True)
    second = np.zeros_like(data) if second is None else second.numpy()
    return first.detach().numpy(), second


@pytest.mark.parametrize("name, function, data", GRADIENTS, ids=[g[0] for g in GRADIENTS])
def test_gradients_like_torch(name, function, data):
    rng = np.random.default_rng(0)
    with torch.no_grad():
        shape = tuple(function(torch, torch.tensor(data)).shape)
    weights = rng.uniform(0.5, 1.5, shape)
    direction = rng.uniform(0.5, 1.5, data.shape)
    expected = _first_and_second_gradients(torch, function, data, weights, direction)
    actual = _first_and_second_gradients(autojit, function, data, weights, direction)
    for got, want, order in zip(actual, expected, ("first", "second"), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, equal_nan=True,
                                   err_msg=f"{name}: {order} order")


def test_cumprod_gradient_without_create_graph_uses_the_zero_aware_form():
    """The O(n) form for inputs with zeros (no create_graph) matches torch's, one and two
    zeros in a slice."""
    data = np.array([[2.0, 0.0, 3.0, 0.0, 4.0], [0.0, 1.5, 2.0, -1.0, 0.5]])
    weights = np.random.default_rng(1).uniform(0.5, 1.5, data.shape)
    grads = []
    for t in (torch, autojit):
        x = (torch.tensor(data) if t is torch else autojit.tensor(data)).requires_grad_(True)
        (t.cumprod(x, 1) * (torch.tensor if t is torch else autojit.tensor)(weights)).sum(
        ).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_not_differentiable_results_do_not_require_grad():
    x = autojit.tensor([3.0, 1.0, 2.0], requires_grad=True)
    for result in (autojit.argsort(x), autojit.sort(x).indices, autojit.histc(x, 3),
                   autojit.searchsorted(autojit.tensor([1.0, 2.0]), x),
                   autojit.cummax(x, 0).indices):
        assert not result.requires_grad


# ---- compiled ------------------------------------------------------------------------------------

def _unique_and_bincount(lib, x, labels, weights):
    values, inverse, counts = lib.unique(x, return_inverse=True, return_counts=True)
    return (values * 2, inverse, counts, lib.unique(x).sum(),
            *lib.unique_consecutive(x, return_inverse=True, return_counts=True),
            *lib.unique_consecutive(x, dim=1, return_inverse=True, return_counts=True),
            lib.unique_consecutive(x.round(), dim=0), lib.bincount(labels),
            lib.bincount(labels, minlength=7), lib.bincount(labels, weights=weights),
            lib.bincount(labels, weights=weights.float()))


def test_unique_and_bincount_compile_with_the_calls_sizes():
    """unique's count of distinct values and unique_consecutive's count of runs are size
    symbols (a split, as nonzero's count: one trace serves every count of 2 or more, counts of
    0 and 1 are specialized on), bincount's largest value is the call's, checked on every run:
    compiled equals eager equals torch, with no graph break."""
    compiled = autojit.compile(lambda *args: _unique_and_bincount(autojit, *args))
    cases = [([3.0, 1.0, 3.0, NAN, 1.0, NAN], [3, 1, 3, 2, 1, 0]),
             ([2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [0, 0, 0, 0, 0, 0]),
             ([3.0, 1.0, 3.0, NAN, 1.0, NAN], [5, 1, 3, 2, 1, 0]),
             ([4.0, 4.0, 4.0, 0.0, 0.0, 2.0], [3, 1, 3, 2, 1, 0])]
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        for values, labels in cases:
            arrays = (np.array(values).reshape(2, 3), np.array(labels), np.linspace(0, 1, 6))
            expected = _unique_and_bincount(torch, *map(torch.tensor, arrays))
            eager = _unique_and_bincount(autojit, *map(autojit.tensor, arrays))
            got = compiled(*map(autojit.tensor, arrays))
            for mine, mine_eager, theirs in zip(got, eager, expected, strict=True):
                np.testing.assert_allclose(mine.numpy(), theirs.numpy())
                np.testing.assert_allclose(mine_eager.numpy(), theirs.numpy())
                assert mine.dtype == mine_eager.dtype
                assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    # The second case has one distinct value (specialized on), the third another largest
    # label: each traces again; the fourth's 3 distinct values and 3 runs are the first
    # trace's symbols bound to other values (before they were symbols: four traces).
    assert len(compiled.executables) == 3 and compiled.stats().traces == 3


def test_unique_along_a_dim_and_negative_bincounts_run_eagerly():
    """unique along a dim cannot take its sizes from a trace: the compiled function warns and
    runs eagerly; a negative label raises eager's error."""
    x = autojit.tensor([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0]])
    function = lambda x: autojit.unique(x, dim=0) * 2  # noqa: E731
    compiled = autojit.compile(function)
    with pytest.warns(autojit.CompileWarning, match="graph break"):
        result = compiled(x)
    assert result.tolist() == function(x).tolist()
    with pytest.raises(GraphBreak):
        autojit.compile(function, fullgraph=True)(x)
    counting = autojit.compile(lambda labels: autojit.bincount(labels))
    with pytest.raises(RuntimeError, match="non-negative integral inputs"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", autojit.CompileWarning)
        counting(autojit.tensor([1, -1, 2]))


def test_tril_and_triu_fuse_into_one_kernel():
    def step(x):
        return (autojit.tril(x, 1) * 2 + autojit.triu(x, 2)).exp().sum()

    x = autojit.randn(6, 5)
    compiled = autojit.compile(step)
    np.testing.assert_allclose(compiled(x).item(), step(x).item(), rtol=1e-5)
    groups = compiled.fusion_groups().strip().splitlines()
    assert len(groups) == 1 and "kernel" in groups[0], groups


def test_compiled_scans_and_sorts_match_eager_in_a_training_step():
    """A compiled step mixing the extern primitives with fused ops, differentiated inside the
    compiled function, matches eager."""
    weight = autojit.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)

    def step(x):
        mixed = x @ weight
        loss = (autojit.cumsum(mixed, 1) * autojit.sort(mixed, 0).values).sum()
        loss = loss + autojit.logcumsumexp(mixed, 0).sum() + autojit.median(mixed, 1).values.sum()
        (grad,) = autojit.autograd.grad(loss, weight)
        return loss, grad

    x = autojit.tensor(np.random.default_rng(2).standard_normal((5, 3)))
    expected = step(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        actual = autojit.compile(step)(x)
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10)


def test_compiled_functions_return_the_named_tuples():
    x = autojit.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    compiled = autojit.compile(lambda x: (autojit.sort(x, 1), autojit.cummax(x, 0)))
    result = compiled(x)
    assert type(result[0]).__name__ == "sort" and type(result[1]).__name__ == "cummax"
    assert result[0].indices.tolist() == [[1, 2, 0], [0, 2, 1]]
    assert result[1].values.tolist() == [[3.0, 1.0, 2.0], [3.0, 5.0, 4.0]]
