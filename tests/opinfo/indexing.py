"""Op table rows for indexing (ops/indexing/__init__.py): x[key], gather and scatter_add,
max/min."""

import numpy as np

import autojit as aj

from . import ALL_NUMERIC, OpInfo, Sample, uniform


def _getitem_samples(rng, dtype):
    x = uniform(rng, (3, 4, 5), dtype)
    return [Sample((x, (1, slice(None, None, 2)))), Sample((x, (Ellipsis, None, -1))),
            Sample((x, ([0, 2, 2], slice(1, 3), [4, 0, 4]))),
            Sample((x, (slice(None), np.array([[0], [3]]))))]


def _getitem_reference(a, key):
    return a[key]


def _setitem(x, key, value):
    out = x * 1
    out[key] = value
    return out


def _setitem_reference(a, key, value):
    out = a.copy()
    out[key] = value
    return out


def _setitem_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), (slice(1, None), [0, 3]),
                    uniform(rng, (2, 1), dtype))),
            Sample((uniform(rng, (3, 4), dtype), 0, uniform(rng, (4,), dtype)))]


def _gather_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), 1, rng.integers(0, 4, (3, 2)))),
            Sample((uniform(rng, (3, 4), dtype), 0, rng.integers(0, 3, (2, 4))))]


def _scatter_add_reference(a, dim, index, src):
    out = a.copy()
    for position in np.ndindex(index.shape):
        target = list(position)
        target[dim] = index[position]
        out[tuple(target)] += src[position]
    return out


def _scatter_add_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), 0, rng.integers(0, 3, (2, 4)),
                    uniform(rng, (2, 4), dtype))),
            Sample((uniform(rng, (3, 4), dtype), 1, rng.integers(0, 4, (3, 2)),
                    uniform(rng, (3, 5), dtype)))]


def _index_select_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), 1, np.array([3, 0, 3])))]


def _masked_fill_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), rng.random((1, 4)) < 0.5, 1.5))]


def _reduce_samples(rng, dtype):
    # Distinct values: a tie's gradient depends on which entry is picked.
    x = rng.permutation(12).reshape(3, 4).astype(dtype) / 3
    return [Sample((x, 1)), Sample((x, 0), {"keepdim": True})]


def _values_reference(function, arg_function):
    def reference(a, dim, keepdim=False):
        return (function(a, axis=dim, keepdims=keepdim),
                np.expand_dims(arg_function(a, axis=dim), dim) if keepdim else
                arg_function(a, axis=dim))

    return reference


ROWS = [
    OpInfo("__getitem__", lambda x, key: x[key], _getitem_reference, _getitem_samples,
           primitives=("slice", "reshape", "index", "check_index"), dtypes=ALL_NUMERIC),
    OpInfo("__setitem__", _setitem, _setitem_reference, _setitem_samples,
           primitives=("index_put",)),
    OpInfo("gather", aj.gather, lambda a, dim, index: np.take_along_axis(a, index, dim),
           _gather_samples, primitives=("gather", "scatter_add", "check_index"),
           dtypes=ALL_NUMERIC),
    OpInfo("scatter_add", aj.scatter_add, _scatter_add_reference, _scatter_add_samples,
           primitives=("scatter_add", "gather")),
    OpInfo("index_select", aj.index_select, lambda a, dim, index: np.take(a, index, dim),
           _index_select_samples, primitives=("index",)),
    OpInfo("take_along_dim", aj.take_along_dim,
           lambda a, index, dim: np.take_along_axis(a, index, dim),
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype), rng.integers(0, 4, (1, 2)),
                                       1))]),
    OpInfo("masked_fill", aj.masked_fill, lambda a, mask, value: np.where(mask, value, a),
           _masked_fill_samples),
    OpInfo("max", lambda x, dim, keepdim=False: tuple(aj.max(x, dim, keepdim)),
           _values_reference(np.max, np.argmax), _reduce_samples, primitives=("argmax",)),
    OpInfo("min", lambda x, dim, keepdim=False: tuple(aj.min(x, dim, keepdim)),
           _values_reference(np.min, np.argmin), _reduce_samples, primitives=("argmin",)),
    OpInfo("nonzero", aj.nonzero, np.argwhere,
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype, -1, 2),))],
           dtypes=ALL_NUMERIC, differentiable=False),
]
