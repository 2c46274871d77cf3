"""Op table rows for sorting and searching (ops/sorting.py, ops/searching.py, ops/counting.py).

Float samples have distinct values where a gradient is checked (a tie's gradient depends on
which entry is picked); integer samples have ties, which the references break stably, as the
ops do. NaN ordering, torch's errors and out= are checked against torch in
tests/test_sorting_scans.py.
"""

from __future__ import annotations

import numpy as np

import autojit as aj

from . import ALL_NUMERIC, OpInfo, Sample, uniform
from .reduction import distinct


def _values(rng, shape, dtype):
    """Distinct floats (for gradients); integers with ties."""
    if np.dtype(dtype).kind == "f":
        return distinct(rng, shape, dtype)
    return uniform(rng, shape, dtype, -3, 3)


def _tupled(result):
    return tuple(result) if isinstance(result, tuple) else result


def _order(a, axis, descending=False):
    """The stable sorting permutation along axis (descending: of -a, still stable)."""
    if a.ndim == 0:
        return np.zeros((), np.int64)
    key = -a.astype(np.float64) if descending else a
    return np.argsort(key, axis=axis, kind="stable")


def _taken(a, order, axis):
    return a if a.ndim == 0 else np.take_along_axis(a, order, axis)


# ---- sort, argsort, msort, topk, kthvalue, median --------------------------------------------

def _sort_samples(rng, dtype):
    x = _values(rng, (3, 4), dtype)
    return [Sample((x,)), Sample((x, 0), {"descending": True}),
            Sample((_values(rng, (2, 3, 4), dtype), 1)), Sample((_values(rng, (), dtype),))]


def _sort_reference(a, dim=-1, descending=False):
    order = _order(a, dim, descending)
    return _taken(a, order, dim), order


def _topk_samples(rng, dtype):
    x = _values(rng, (3, 5), dtype)
    return [Sample((x, 2)), Sample((x, 2, 0), {"largest": False})]


def _topk_reference(a, k, dim=-1, largest=True):
    order = np.take(_order(a, dim, descending=largest), np.arange(k), axis=dim)
    return np.take_along_axis(a, order, dim), order


def _picked(a, position, dim, keepdim):
    order = np.take(_order(a, dim), [position], axis=dim)
    values = np.take_along_axis(a, order, dim)
    if not keepdim:
        values, order = values.squeeze(dim), order.squeeze(dim)
    return values, order


def _kthvalue_samples(rng, dtype):
    x = _values(rng, (3, 5), dtype)
    return [Sample((x, 2)), Sample((x, 3, 0), {"keepdim": True})]


def _median_samples(rng, dtype):
    x = _values(rng, (3, 4), dtype)
    return [Sample((x,)), Sample((x, 1)), Sample((_values(rng, (2, 3, 5), dtype), 0),
                                                 {"keepdim": True})]


def _median_reference(a, dim=None, keepdim=False):
    if dim is None:
        flat = np.sort(a.reshape(-1), kind="stable")
        return np.asarray(flat[(flat.size - 1) // 2])
    return _picked(a, (a.shape[dim] - 1) // 2, dim, keepdim)


def _nanmedian_samples(rng, dtype):
    x = _values(rng, (3, 5), dtype)
    with_nan = x.copy()
    if with_nan.dtype.kind == "f":
        with_nan[0, 1] = with_nan[0, 3] = with_nan[2, 4] = np.nan
    return [Sample((x, 1)), Sample((with_nan, 1)), Sample((with_nan,))]


def _nanmedian_reference(a, dim=None, keepdim=False):
    if dim is None:
        kept = np.sort(a[~np.isnan(a)] if a.dtype.kind == "f" else a.reshape(-1))
        return np.asarray(kept[(kept.size - 1) // 2] if kept.size else np.nan, dtype=a.dtype)
    moved = np.moveaxis(a, dim, -1)
    values = np.empty(moved.shape[:-1], a.dtype)
    indices = np.empty(moved.shape[:-1], np.int64)
    for position in np.ndindex(moved.shape[:-1]):
        row = moved[position]
        valid = np.flatnonzero(~np.isnan(row)) if a.dtype.kind == "f" else np.arange(len(row))
        if valid.size == 0:
            values[position], indices[position] = np.nan, 0
            continue
        order = valid[np.argsort(row[valid], kind="stable")]
        indices[position] = order[(valid.size - 1) // 2]
        values[position] = row[indices[position]]
    if keepdim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return values, indices


# ---- quantile, nanquantile ---------------------------------------------------------------------

def _quantile_samples(rng, dtype, nan=False):
    x = _values(rng, (3, 5), dtype)
    if nan:
        x[0, 1] = x[2, 0] = x[2, 3] = np.nan
    q = np.array([0.2, 0.9], dtype)
    return [Sample((x, 0.3)), Sample((x, q, 1), {"keepdim": True}),
            Sample((x, 0.65, 0), {"interpolation": "midpoint"}),
            Sample((x, np.array(0.55, dtype), -1), {"interpolation": "lower"}),
            Sample((x, q), {"interpolation": "higher"}),
            Sample((x, 0.4, 1), {"interpolation": "nearest"})]


def _quantile_reference(numpy_function):
    def reference(a, q, dim=None, keepdim=False, interpolation="linear"):
        result = numpy_function(a, q, axis=dim, keepdims=keepdim, method=interpolation)
        return np.asarray(result, a.dtype)

    return reference


# ---- unique, bincount, histc --------------------------------------------------------------------

def _unique_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype, -2, 3)
    rows = np.repeat(uniform(rng, (2, 3), dtype, -2, 3), 2, axis=0)
    return [Sample((x,)), Sample((x,), {"return_inverse": True, "return_counts": True}),
            Sample((rows,), {"dim": 0, "return_counts": True})]


def _unique_reference(a, return_inverse=False, return_counts=False, dim=None):
    values, inverse, counts = np.unique(a if dim is not None else a.reshape(-1),
                                        return_inverse=True, return_counts=True, axis=dim)
    result = [values]
    if return_inverse:
        result.append(inverse.reshape(a.shape if dim is None else -1))
    if return_counts:
        result.append(counts)
    return result[0] if len(result) == 1 else tuple(result)


def _bincount_samples(rng, dtype):
    index = rng.integers(0, 5, 7)
    return [Sample((index,)), Sample((index,), {"weights": uniform(rng, (7,), dtype),
                                                "minlength": 8})]


def _bincount_reference(index, weights=None, minlength=0):
    counts = np.bincount(index, weights, minlength)
    return counts if weights is None else counts.astype(weights.dtype)


def _histc_samples(rng, dtype):
    x = uniform(rng, (4, 5), dtype, -2, 2)
    return [Sample((x,), {"bins": 6}), Sample((x, 4, -1.0, 1.5))]


def _histc_reference(a, bins=100, min=0, max=0):  # noqa: A002 - torch's names
    low, high = (min, max) if min != max else (a.min(), a.max())
    return np.histogram(a, bins, (low, high))[0].astype(a.dtype)


# ---- searchsorted, bucketize -----------------------------------------------------------------

def _sorted(rng, shape, dtype):
    return np.sort(uniform(rng, shape, dtype, -3, 4), axis=-1)


def _searchsorted_samples(rng, dtype):
    values = uniform(rng, (3, 4), dtype, -4, 5)
    shuffled = uniform(rng, (6,), dtype, -3, 4)
    return [Sample((_sorted(rng, (6,), dtype), values)),
            Sample((_sorted(rng, (3, 5), dtype), values), {"right": True}),
            Sample((shuffled, values), {"sorter": np.argsort(shuffled, kind="stable")})]


def _searchsorted_reference(boundaries, values, right=False, sorter=None):
    side = "right" if right else "left"
    if sorter is not None:
        boundaries = boundaries[sorter]
    if boundaries.ndim == 1:
        return np.searchsorted(boundaries, values, side)
    return np.stack([np.searchsorted(b, v, side) for b, v in zip(boundaries, values,
                                                                  strict=True)])


def _bucketize_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype, -4, 5), _sorted(rng, (5,), dtype))),
            Sample((uniform(rng, (2, 3), dtype, -4, 5), _sorted(rng, (5,), dtype)),
                   {"right": True})]


ROWS = [
    OpInfo("sort", lambda *a, **k: tuple(aj.sort(*a, **k)), _sort_reference, _sort_samples,
           primitives=("argsort", "gather"), dtypes=ALL_NUMERIC),
    OpInfo("argsort", aj.argsort, lambda a, dim=-1, descending=False: _order(a, dim, descending),
           _sort_samples, primitives=("argsort",), dtypes=ALL_NUMERIC, differentiable=False),
    OpInfo("msort", aj.msort, lambda a: _sort_reference(a, 0)[0],
           lambda rng, dtype: [Sample((_values(rng, (4, 3), dtype),))],
           primitives=("argsort", "gather"), dtypes=ALL_NUMERIC),
    OpInfo("topk", lambda *a, **k: tuple(aj.topk(*a, **k)), _topk_reference, _topk_samples,
           primitives=("argsort", "gather"), dtypes=ALL_NUMERIC),
    OpInfo("kthvalue", lambda *a, **k: tuple(aj.kthvalue(*a, **k)),
           lambda a, k, dim=-1, keepdim=False: _picked(a, k - 1, dim, keepdim),
           _kthvalue_samples, primitives=("argsort", "gather"), dtypes=ALL_NUMERIC),
    OpInfo("median", lambda *a, **k: _tupled(aj.median(*a, **k)), _median_reference,
           _median_samples, primitives=("argsort", "gather", "isnan"), dtypes=ALL_NUMERIC),
    OpInfo("nanmedian", lambda *a, **k: _tupled(aj.nanmedian(*a, **k)), _nanmedian_reference,
           _nanmedian_samples, primitives=("argsort", "gather", "isnan"), dtypes=ALL_NUMERIC),
    OpInfo("quantile", aj.quantile, _quantile_reference(np.quantile), _quantile_samples,
           primitives=("argsort", "gather", "isnan", "any", "where")),
    OpInfo("nanquantile", aj.nanquantile, _quantile_reference(np.nanquantile),
           lambda rng, dtype: _quantile_samples(rng, dtype, nan=True),
           primitives=("argsort", "gather", "isnan", "sum", "where")),
    OpInfo("unique", aj.unique, _unique_reference, _unique_samples, dtypes=ALL_NUMERIC,
           differentiable=False),
    OpInfo("bincount", aj.bincount, _bincount_reference, _bincount_samples,
           differentiable=False),
    OpInfo("histc", aj.histc, _histc_reference, _histc_samples, primitives=("histc",),
           differentiable=False),
    OpInfo("searchsorted", aj.searchsorted, _searchsorted_reference, _searchsorted_samples,
           primitives=("searchsorted",), dtypes=ALL_NUMERIC, differentiable=False),
    OpInfo("bucketize", aj.bucketize,
           lambda a, boundaries, right=False: np.searchsorted(
               boundaries, a, "right" if right else "left"),
           _bucketize_samples, primitives=("searchsorted",), dtypes=ALL_NUMERIC,
           differentiable=False),
]
