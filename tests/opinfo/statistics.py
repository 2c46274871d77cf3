"""Op table rows for the statistics and finite differences (ops/statistics.py): std_mean,
var_mean, cov, corrcoef, mode, histogram, histogramdd, diff, gradient, trapezoid, trapz and
cumulative_trapezoid (unique_consecutive's row is in names.py).

The references are NumPy's and SciPy's functions of the same meaning (np.cov, np.corrcoef,
np.histogram, np.diff, np.gradient, np.trapezoid, scipy.integrate.cumulative_trapezoid).
mode's samples have one most frequent value per row, so that its index (the last occurrence)
is the reference's; histogram's values stay away from the bin edges.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate

import autojit as aj

from . import ALL_NUMERIC, OpInfo, Sample, positive, uniform


def _one(shape, *args, **kwargs):
    return lambda rng, dtype: [Sample((uniform(rng, shape, dtype), *args), kwargs)]


def _moments_np(root: bool):
    def reference(x, dim=None, *, correction=1, keepdim=False):
        spread = (np.std if root else np.var)(x, axis=dim, ddof=correction, keepdims=keepdim)
        return (np.asarray(spread, x.dtype),
                np.asarray(np.mean(x, axis=dim, keepdims=keepdim), x.dtype))

    return reference


def _cov_np(x, fweights=None, aweights=None, correction=1):
    return np.asarray(np.cov(x, fweights=fweights, aweights=aweights, ddof=correction), x.dtype)


def _cov_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 5), dtype),)),
            Sample((uniform(rng, (2, 4), dtype),),
                   {"fweights": np.array([1, 2, 1, 3]),
                    "aweights": positive(rng, (4,), dtype, 0.2, 1.0)}),
            Sample((uniform(rng, (6,), dtype),), {"correction": 0})]


def _mode_np(x, dim=-1, keepdim=False):
    moved = np.moveaxis(x, dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    values, indices = [], []
    for row in flat:
        found, counts = np.unique(row, return_counts=True)
        value = found[np.argmax(counts)]
        values.append(value)
        indices.append(np.flatnonzero(row == value)[-1])
    shape = moved.shape[:-1]
    values = np.array(values, x.dtype).reshape(shape)
    indices = np.array(indices, np.int64).reshape(shape)
    if keepdim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return values, indices


def _mode_samples(rng, dtype):
    if np.dtype(dtype).kind == "f":
        # Distinct values (the mode is the smallest), so that finite differences keep it.
        x = uniform(rng, (3, 7), dtype)
    else:
        x = rng.integers(0, 6, (3, 7)).astype(dtype)
        x[:, :3] = 9  # one value three times, the others fewer
        for row in x:
            rng.shuffle(row)
    return [Sample((x, 1)), Sample((x.T.copy(), 0, True))]


def _histogram_np(x, bins, range=None, weight=None, density=False):  # noqa: A002
    hist, edges = np.histogram(x, bins, range=range, weights=weight, density=density)
    return hist.astype(x.dtype), edges.astype(x.dtype)


def _histogram_samples(rng, dtype):
    x = ((rng.integers(0, 40, (5, 4)) + 0.5) / 10).astype(dtype)
    return [Sample((x, 8)),
            Sample((x, 5), {"range": (0.0, 5.0), "weight": positive(rng, (5, 4), dtype),
                            "density": True})]


def _histogramdd_np(x, bins, range=None, weight=None, density=False):  # noqa: A002
    pairs = None if range is None else [range[i:i + 2] for i in (0, 2)]
    hist, edges = np.histogramdd(x, bins, range=pairs, weights=weight, density=density)
    return hist.astype(x.dtype), [edge.astype(x.dtype) for edge in edges]


def _histogramdd_samples(rng, dtype):
    x = ((rng.integers(0, 40, (6, 2)) + 0.5) / 10).astype(dtype)
    return [Sample((x, [4, 3])),
            Sample((x, 5), {"range": (0.0, 5.0, 0.0, 5.0), "weight": positive(rng, (6,), dtype),
                            "density": True})]


def _diff_np(x, n=1, dim=-1, prepend=None, append=None):
    kwargs = {key: value for key, value in (("prepend", prepend), ("append", append))
              if value is not None}
    return np.diff(x, n, dim, **kwargs)


def _gradient_np(x, spacing=1, dim=None, edge_order=1):
    result = np.gradient(x, spacing, axis=dim, edge_order=edge_order)
    return tuple(result) if isinstance(result, (list, tuple)) else (result,)


def _cumulative_np(y, x=None, dx=None, dim=-1):
    return integrate.cumulative_trapezoid(y, x, dx=1.0 if dx is None else dx,
                                          axis=dim).astype(y.dtype)


def _trapezoid_np(y, x=None, dx=None, dim=-1):
    return np.asarray(np.trapezoid(y, x, dx=1.0 if dx is None else dx, axis=dim), y.dtype)


def _trapezoid_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 5), dtype),)),
            Sample((uniform(rng, (4,), dtype), np.array([0.0, 1.0, 1.5, 3.0], dtype))),
            Sample((uniform(rng, (3, 4), dtype),), {"dx": 0.5, "dim": 0})]


ROWS = [
    OpInfo("std_mean", aj.std_mean, _moments_np(True), lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), 1)),
        Sample((uniform(rng, (3, 4), dtype), (0, 1)), {"correction": 0, "keepdim": True})]),
    OpInfo("var_mean", aj.var_mean, _moments_np(False), lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), 0)),
        Sample((uniform(rng, (5,), dtype),), {"correction": 2})]),
    OpInfo("cov", aj.cov, _cov_np, _cov_samples, grad_inputs=(0,)),
    OpInfo("corrcoef", aj.corrcoef, lambda x: np.asarray(np.clip(np.corrcoef(x), -1, 1),
                                                         x.dtype), _one((3, 5))),
    OpInfo("mode", aj.mode, _mode_np, _mode_samples, primitives=("argsort", "gather"),
           dtypes=ALL_NUMERIC, cuda=False),
    OpInfo("histogram", aj.histogram, _histogram_np, _histogram_samples, differentiable=False,
           primitives=("searchsorted", "scatter_add"), cuda=False),
    OpInfo("histogramdd", aj.histogramdd, _histogramdd_np, _histogramdd_samples,
           differentiable=False, primitives=("searchsorted", "scatter_add"), cuda=False),
    OpInfo("diff", aj.diff, _diff_np, lambda rng, dtype: [
        Sample((uniform(rng, (3, 5), dtype),)),
        Sample((uniform(rng, (3, 5), dtype), 2, 0), {"prepend": uniform(rng, (1, 5), dtype),
                                                     "append": uniform(rng, (2, 5), dtype)})],
        dtypes=("float32", "float64", "int32", "int64")),
    OpInfo("gradient", aj.gradient, _gradient_np, lambda rng, dtype: [
        Sample((uniform(rng, (4, 5), dtype),), {"spacing": 2.0, "edge_order": 2}),
        Sample((uniform(rng, (6,), dtype),), {"dim": 0})]),
    OpInfo("trapezoid", aj.trapezoid, _trapezoid_np, _trapezoid_samples),
    OpInfo("trapz", aj.trapz, _trapezoid_np, _trapezoid_samples, cuda=False),
    OpInfo("cumulative_trapezoid", aj.cumulative_trapezoid, _cumulative_np,
           _trapezoid_samples),
]
