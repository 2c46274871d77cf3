"""Op table rows for the primitives of ops/elementwise/math_primitives.py: trunc, ceil, copysign,
fmod, nextafter, the arctangents, hypot, erfc, logaddexp, logaddexp2, xlogy, logit, and
special.xlog1py and special.entr.

Values keep inside each domain (asin and acos in (-1, 1), logit in (0, 1), xlogy's y
positive, xlog1py's above -1, entr's positive) and away from the kinks of the rounding and
remainder ops (trunc and ceil are flat, fmod jumps where x / y is an integer), so that finite
differences are meaningful; torch's values at the kinks and domain edges are
tests/special_points_math.py's.
"""

from __future__ import annotations

import math

import numpy as np

import autojit

from . import ALL_NUMERIC, FLOATING, OpInfo, Sample, uniform
from .elementwise import away_from_zero, off_integers, unary, unary_samples

INTEGER_AND_FLOAT = ("float32", "float64", "int64")


def in_float(function, integer_result=np.float32):
    """A reference computed in float64; integer inputs give the default float32."""
    def reference(*args, **kwargs):
        kinds = [a.dtype for a in args if isinstance(a, np.ndarray)]
        floating = [d for d in kinds if d.kind == "f"]
        dtype = max(floating, key=lambda d: d.itemsize) if floating else integer_result
        wide = [a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args]
        with np.errstate(all="ignore"):
            return np.asarray(function(*wide, **kwargs)).astype(dtype)

    return reference


def inside_unit(rng, shape, dtype):
    return uniform(rng, shape, dtype, -0.9, 0.9)


def probabilities(rng, shape, dtype):
    return uniform(rng, shape, dtype, 0.05, 0.95)


def _fmod_samples(rng, dtype):
    """x = y * (k + f) with f in [0.2, 0.8): x / y is never near an integer."""
    integer = np.dtype(dtype).kind in "iu"

    def pair(shape):
        y = away_from_zero(rng, shape, dtype, 0.5, 2.0)
        if integer:
            return uniform(rng, shape, dtype, -6, 6), y
        return (y * off_integers(rng, shape, dtype)).astype(dtype), y

    x, y = pair((3, 4))
    return [Sample((x, y)), Sample(pair((3, 4))[:1] + (2 if integer else -1.5,)),
            Sample((x[:1], y[0, :1]))]


def _nextafter_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    x[0, 0] = 0.0
    return [Sample((x, uniform(rng, (3, 4), dtype))), Sample((x, np.asarray(x[1:2], dtype)))]


def _xlogy_samples(rng, dtype):
    # x == 0 (where torch's gradient for x is 0, not log y) is a special point.
    return [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype, 0.5, 3.0))),
            Sample((uniform(rng, (3, 1), dtype), uniform(rng, (4,), dtype, 0.5, 3.0))),
            Sample((2.0, uniform(rng, (3, 4), dtype, 0.5, 3.0))),
            Sample((uniform(rng, (2, 3), dtype), 1.5))]


def _logaddexp_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype, -3, 3), uniform(rng, (3, 4), dtype, -3, 3))),
            Sample((uniform(rng, (3, 1), dtype, -40, 40), uniform(rng, (4,), dtype, -3, 3)))]


def _atan2_samples(rng, dtype):
    return [Sample((away_from_zero(rng, (3, 4), dtype), away_from_zero(rng, (3, 4), dtype))),
            Sample((away_from_zero(rng, (3, 1), dtype), away_from_zero(rng, (4,), dtype)))]


def _copysign_samples(rng, dtype):
    """Magnitudes away from 0 (where the gradient is masked); a number as the sign too."""
    return [Sample((away_from_zero(rng, (3, 4), dtype), away_from_zero(rng, (3, 4), dtype))),
            Sample((away_from_zero(rng, (3, 1), dtype), away_from_zero(rng, (4,), dtype))),
            Sample((away_from_zero(rng, (2, 3), dtype), -1))]


def _xlogy(x, y):
    with np.errstate(all="ignore"):
        product = x * np.log(y)
    return np.where(np.isnan(y), y, np.where(x == 0, 0, product))


def _xlog1py_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype, -0.5, 3.0))),
            Sample((uniform(rng, (3, 1), dtype), uniform(rng, (4,), dtype, -0.5, 3.0))),
            Sample((2.0, uniform(rng, (3, 4), dtype, -0.5, 3.0)))]


def _xlog1py(x, y):
    with np.errstate(all="ignore"):
        product = x * np.log1p(y)
    return np.where(np.isnan(y), y, np.where(x == 0, 0, product))


def _entr(x):
    with np.errstate(all="ignore"):
        return np.where(x > 0, -x * np.log(x), np.where(x == 0, 0, -np.inf))


def _logit_samples(rng, dtype):
    return [Sample((probabilities(rng, (3, 4), dtype),)),
            Sample((uniform(rng, (2, 3), dtype, -0.5, 1.5),), {"eps": 0.2}),
            Sample((probabilities(rng, (), dtype),))]


def _logit(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def binary(name, reference, samples, dtypes=FLOATING, **options):
    return OpInfo(name=name, function=getattr(autojit, name), reference=reference,
                  samples=samples, primitives=(name,), dtypes=dtypes, **options)


ROWS = [
    unary("trunc", np.trunc, off_integers, dtypes=ALL_NUMERIC),
    unary("ceil", np.ceil, off_integers, dtypes=ALL_NUMERIC),
    binary("copysign", in_float(np.copysign), _copysign_samples, dtypes=INTEGER_AND_FLOAT),
    binary("fmod", np.fmod, _fmod_samples, dtypes=ALL_NUMERIC),
    binary("nextafter", np.nextafter, _nextafter_samples),  # derivatives 1 and 0, as torch
    unary("atan", in_float(np.arctan), lambda rng, shape, dtype: uniform(rng, shape, dtype, -4, 4),
          dtypes=INTEGER_AND_FLOAT),
    unary("asin", in_float(np.arcsin), inside_unit),
    unary("acos", in_float(np.arccos), inside_unit),
    binary("atan2", in_float(np.arctan2), _atan2_samples, dtypes=INTEGER_AND_FLOAT),
    binary("hypot", np.hypot, _atan2_samples),
    unary("erfc", in_float(np.vectorize(math.erfc)),
          lambda rng, shape, dtype: uniform(rng, shape, dtype, -3, 5), dtypes=INTEGER_AND_FLOAT),
    binary("logaddexp", in_float(np.logaddexp), _logaddexp_samples),
    binary("logaddexp2", in_float(np.logaddexp2), _logaddexp_samples),
    binary("xlogy", in_float(_xlogy), _xlogy_samples, dtypes=INTEGER_AND_FLOAT),
    OpInfo(name="logit", function=autojit.logit, reference=in_float(_logit),
           samples=_logit_samples, primitives=("logit",)),
    OpInfo(name="special.xlog1py", function=autojit.special.xlog1py,
           reference=in_float(_xlog1py), samples=_xlog1py_samples, primitives=("xlog1py",),
           dtypes=INTEGER_AND_FLOAT),
    OpInfo(name="special.entr", function=autojit.special.entr, reference=in_float(_entr),
           samples=unary_samples(lambda rng, shape, dtype: uniform(rng, shape, dtype, 0.1, 3)),
           primitives=("entr",), dtypes=INTEGER_AND_FLOAT),
]
