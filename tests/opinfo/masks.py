"""Op table rows for ops/masks.py: the finiteness tests, nan_to_num, nansum, nanmean,
clamp_min, clamp_max, isclose, allclose, equal, count_nonzero and aminmax.

Samples hold NaN and both infinities where the op is about them; the differentiable ones
(nan_to_num, nansum, nanmean, clamp_min, clamp_max, aminmax) are differentiated where their
values are finite and without ties. allclose and equal return Python bools, wrapped here in a
tensor; compiled, they break the graph (tests/test_compile_op_table.py lists them).
"""

from __future__ import annotations

import numpy as np

import autojit

from . import ALL_NUMERIC, FLOATING, OpInfo, Sample, uniform
from .reduction import DIMS, distinct

SPECIALS = (np.nan, np.inf, -np.inf)


def _with_specials(rng, shape, dtype):
    x = uniform(rng, shape, dtype)
    if np.dtype(dtype).kind == "f":
        flat = x.reshape(-1)
        flat[[1, 4, 6]] = SPECIALS
    return x


def _test_samples(rng, dtype):
    return [Sample((_with_specials(rng, (3, 4), dtype),)), Sample((uniform(rng, (), dtype),))]


def test_row(name, reference):
    return OpInfo(name=name, function=getattr(autojit, name), reference=reference,
                  samples=_test_samples, primitives=(), dtypes=ALL_NUMERIC, differentiable=False)


def _nan_to_num_samples(rng, dtype):
    return [Sample((_with_specials(rng, (3, 4), dtype),)),
            Sample((_with_specials(rng, (2, 4), dtype),), {"nan": 1.5, "posinf": 9.0}),
            Sample((_with_specials(rng, (2, 4), dtype), -1.0, None, -7.0))]


def _nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _nan_reduction_samples(rng, dtype):
    samples = []
    for kwargs in DIMS[:4]:
        x = uniform(rng, (2, 3, 4), dtype)
        if np.dtype(dtype).kind == "f":
            x[0, 1, 2] = x[1, 0, 0] = np.nan
        samples.append(Sample((x,), dict(kwargs)))
    return samples


def _nan_reduction(function):
    def reference(x, dim=None, keepdim=False):
        dim = tuple(dim) if isinstance(dim, list) else dim
        result = np.asarray(function(x, axis=dim, keepdims=keepdim))
        return result.astype(np.int64) if x.dtype.kind in "iub" else result.astype(x.dtype)

    return reference


def _clamp_samples(bound):
    def samples(rng, dtype):
        x = uniform(rng, (3, 4), dtype)
        x = np.asarray(np.where(np.abs(x - 0.25) < 0.1, x + 0.3, x), dtype=dtype)
        tensor_bound = np.asarray(rng.uniform(-1, 1, (4,)), dtype=dtype)
        tensor_bound = np.where(np.abs(x - tensor_bound).min(axis=0) < 0.1, tensor_bound + 0.25,
                                tensor_bound).astype(dtype)
        number = 1 if np.dtype(dtype).kind in "iu" else 0.25
        return [Sample((x, number)), Sample((x, tensor_bound))]

    return samples


def _close_samples(rng, dtype):
    x = _with_specials(rng, (3, 4), dtype)
    y = x.copy()
    if np.dtype(dtype).kind == "f":
        y = np.asarray(y + rng.choice([0, 1e-9, 1e-3], size=x.shape), dtype=dtype)
    else:
        y[0, 0] += 1
    return [Sample((x, y)), Sample((x, y), {"equal_nan": True}),
            Sample((x, y), {"rtol": 1e-2, "atol": 0.0})]


def _isclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
    with np.errstate(all="ignore"):
        return np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _equal_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    y = x.copy()
    y[1, 1] += 1
    return [Sample((x, x.copy())), Sample((x, y)), Sample((x, x[:2].copy()))]


def _count_samples(rng, dtype):
    x = rng.integers(-1, 2, size=(2, 3, 4)).astype(dtype)
    return [Sample((x,)), Sample((x, 1)), Sample((x, (0, 2)))]


def _count_nonzero(x, dim=None):
    return np.asarray(np.count_nonzero(x, axis=dim), dtype=np.int64)


def _aminmax_samples(rng, dtype):
    return [Sample((distinct(rng, (2, 3, 4), dtype),)),
            Sample((distinct(rng, (2, 3, 4), dtype),), {"dim": 1}),
            Sample((distinct(rng, (3, 4), dtype),), {"dim": -1, "keepdim": True})]


def _aminmax(x, dim=None, keepdim=False):
    return (np.amin(x, axis=dim, keepdims=keepdim), np.amax(x, axis=dim, keepdims=keepdim))


def _on(like, value: bool):
    """A Python bool as a tensor on `like`'s device, so a CUDA row's results stay there."""
    return autojit.tensor(value, device=like.device)


ROWS = [
    test_row("isfinite", np.isfinite),
    test_row("isinf", np.isinf),
    test_row("isposinf", np.isposinf),
    test_row("isneginf", np.isneginf),
    OpInfo(name="nan_to_num", function=autojit.nan_to_num, reference=_nan_to_num,
           samples=_nan_to_num_samples, primitives=("isnan", "eq", "where"), dtypes=ALL_NUMERIC),
    OpInfo(name="nansum", function=autojit.nansum, reference=_nan_reduction(np.nansum),
           samples=_nan_reduction_samples, primitives=("isnan", "where", "sum"),
           dtypes=ALL_NUMERIC),
    OpInfo(name="nanmean", function=autojit.nanmean, reference=_nan_reduction(np.nanmean),
           samples=_nan_reduction_samples, primitives=("isnan", "sum", "div")),
    OpInfo(name="clamp_min", function=autojit.clamp_min, reference=np.maximum,
           samples=_clamp_samples("min"), primitives=("maximum", "where"), dtypes=ALL_NUMERIC),
    OpInfo(name="clamp_max", function=autojit.clamp_max, reference=np.minimum,
           samples=_clamp_samples("max"), primitives=("minimum", "where"), dtypes=ALL_NUMERIC),
    OpInfo(name="isclose", function=autojit.isclose, reference=_isclose, samples=_close_samples,
           primitives=("eq", "abs", "le"), dtypes=ALL_NUMERIC, differentiable=False),
    OpInfo(name="allclose", function=lambda x, y, **k: _on(x, autojit.allclose(x, y, **k)),
           reference=lambda *a, **k: np.asarray(np.all(_isclose(*a, **k))),
           samples=_close_samples, primitives=("eq", "all"), dtypes=FLOATING,
           differentiable=False),
    OpInfo(name="equal", function=lambda x, y: _on(x, autojit.equal(x, y)),
           reference=lambda x, y: np.asarray(np.array_equal(x, y)), samples=_equal_samples,
           primitives=(), dtypes=ALL_NUMERIC, differentiable=False),
    OpInfo(name="count_nonzero", function=autojit.count_nonzero, reference=_count_nonzero,
           samples=_count_samples, primitives=("ne", "sum"), dtypes=ALL_NUMERIC,
           differentiable=False),
    # A plain tuple of the named tuple's fields, which the CUDA driver copies back item by item.
    OpInfo(name="aminmax", function=lambda *a, **k: tuple(autojit.aminmax(*a, **k)),
           reference=_aminmax,
           samples=_aminmax_samples, primitives=("amin", "amax"), dtypes=ALL_NUMERIC),
]
