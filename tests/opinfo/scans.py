"""Op table rows for the scans of ops/scans.py: cumsum, cumprod, cummax, cummin, logcumsumexp.

cumprod samples hold slices with one and with two zeros, the cases its gradient handles apart;
cummax/cummin float samples have distinct values (a tie's gradient goes to one entry).
"""

from __future__ import annotations

import numpy as np

import autojit as aj

from . import ALL_NUMERIC, OpInfo, Sample, uniform
from .reduction import distinct


def _scan_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), 1)), Sample((uniform(rng, (2, 3, 4), dtype), 0)),
            Sample((uniform(rng, (4,), dtype), -1)), Sample((uniform(rng, (), dtype), 0))]


def _cumsum_reference(a, dim, dtype=None):
    kind = np.int64 if a.dtype.kind in "iub" else a.dtype
    return np.cumsum(a, axis=dim if a.ndim else None, dtype=kind).reshape(a.shape)


def _cumprod_samples(rng, dtype):
    x = uniform(rng, (3, 5), dtype, 0.5, 1.5) * np.where(rng.random((3, 5)) < 0.5, -1, 1)
    x = np.asarray(x, dtype)
    with_zeros = x.copy()
    with_zeros[0, 1] = 0                     # one zero in this row
    with_zeros[1, 0] = with_zeros[1, 3] = 0  # two zeros in this one
    return [Sample((x, 1)), Sample((with_zeros, 1)), Sample((with_zeros.T.copy(), 0))]


def _cumprod_reference(a, dim):
    kind = np.int64 if a.dtype.kind in "iub" else a.dtype
    return np.cumprod(a, axis=dim, dtype=kind)


def _running_extreme(better):
    """reference(a, dim) -> (values, indices), the index moving on >= (or <=), a loop."""
    def reference(a, dim):
        moved = np.moveaxis(a, dim, -1) if a.ndim else a.reshape(1)
        values, indices = np.empty_like(moved), np.zeros(moved.shape, np.int64)
        for position in np.ndindex(moved.shape[:-1]):
            row, best = moved[position], 0
            for i in range(row.shape[-1]):
                if better(row[i], row[best]) or row[i] == row[best]:
                    best = i
                values[position + (i,)], indices[position + (i,)] = row[best], best
        if not a.ndim:
            return values.reshape(()), indices.reshape(())
        return np.moveaxis(values, -1, dim), np.moveaxis(indices, -1, dim)

    return reference


def _extreme_samples(rng, dtype):
    def values(shape):
        return distinct(rng, shape, dtype) if np.dtype(dtype).kind == "f" else \
            uniform(rng, shape, dtype, -2, 3)

    return [Sample((values((3, 5)), 1)), Sample((values((4, 2)), 0)), Sample((values(()), 0))]


def _logcumsumexp_reference(a, dim):
    return np.logaddexp.accumulate(a.astype(np.float64), axis=dim).astype(a.dtype)


ROWS = [
    OpInfo("cumsum", aj.cumsum, _cumsum_reference, _scan_samples, primitives=("cumsum",),
           dtypes=ALL_NUMERIC),
    OpInfo("cumprod", aj.cumprod, _cumprod_reference, _cumprod_samples,
           primitives=("cumprod", "cumsum"), dtypes=ALL_NUMERIC),
    OpInfo("cummax", lambda x, dim: tuple(aj.cummax(x, dim)), _running_extreme(np.greater),
           _extreme_samples, primitives=("cummax_indices", "gather"), dtypes=ALL_NUMERIC),
    OpInfo("cummin", lambda x, dim: tuple(aj.cummin(x, dim)), _running_extreme(np.less),
           _extreme_samples, primitives=("cummin_indices", "gather"), dtypes=ALL_NUMERIC),
    OpInfo("logcumsumexp", aj.logcumsumexp, _logcumsumexp_reference,
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype, -3, 3), 1)),
                               Sample((uniform(rng, (5,), dtype, -30, 30), 0))],
           primitives=("logcumsumexp",)),
]
