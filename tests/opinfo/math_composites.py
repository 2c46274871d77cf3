"""Op table rows for the composites of ops/elementwise/math_composites.py and ops/nn/softmax.py, and
for acosh: the hyperbolic functions and their inverses, sinc, frac, heaviside, deg2rad, rad2deg,
lerp, addcmul, addcdiv, special.ndtr, and the top-level softmax and log_softmax.

The references are NumPy's functions in float64, rounded to the input's dtype (integers give
float32). Samples reach both branches of the piecewise formulas (sinh below and above 1,
asinh and acosh of large arguments, lerp's weights on both sides of 1/2) and stay inside
each domain (acosh above 1, atanh inside (-1, 1)).
"""

from __future__ import annotations

import math

import numpy as np

import autojit

from . import ALL_NUMERIC, FLOATING, OpInfo, Sample, uniform
from .elementwise import away_from_zero, off_integers, unary_samples
from .elementwise_math import INTEGER_AND_FLOAT, in_float
from .nn import LOG_SOFTMAX_PRIMITIVES, SOFTMAX_PRIMITIVES, _log_softmax


def composite(name, reference, values=uniform, primitives=(), samples=None, function=None,
              **options):
    return OpInfo(name=name, function=function or getattr(autojit, name), reference=reference,
                  samples=samples or unary_samples(values), primitives=primitives, **options)


def _spread(low, high):
    return lambda rng, shape, dtype: uniform(rng, shape, dtype, low, high)


def _wide_samples(rng, dtype):
    """Both branches: |x| below 1 and up to 5, and a large argument in float64."""
    samples = [Sample((uniform(rng, (3, 4), dtype, -5, 5),)), Sample((uniform(rng, (2, 3),
                                                                              dtype, -1, 1),))]
    if np.dtype(dtype).kind == "f":
        samples.append(Sample((np.asarray([-3e8, 1e9, 0.5], dtype=dtype),)))
    return samples


def _acosh_samples(rng, dtype):
    samples = [Sample((uniform(rng, (3, 4), dtype, 1.2, 6),))]
    if np.dtype(dtype).kind == "f":
        samples.append(Sample((np.asarray([3e8, 1e9, 1.5], dtype=dtype),)))
    return samples


def _lerp_samples(rng, dtype):
    start, end = uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype)
    weight = uniform(rng, (3, 4), dtype, -0.5, 1.5)
    return [Sample((start, end, 0.3)), Sample((start, end, 0.8)), Sample((start, end, weight)),
            Sample((uniform(rng, (3, 1), dtype), uniform(rng, (4,), dtype),
                    uniform(rng, (3, 4), dtype, 0, 1)))]


def _lerp(start, end, weight):
    return np.asarray(start + weight * (end - start), dtype=start.dtype)


def _triple_samples(rng, dtype, divisor=False):
    third = away_from_zero if divisor else uniform
    return [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype),
                    third(rng, (3, 4), dtype))),
            Sample((uniform(rng, (3, 1), dtype), uniform(rng, (4,), dtype),
                    third(rng, (3, 4), dtype)), {"value": 0.5}),
            Sample((uniform(rng, (4,), dtype), uniform(rng, (2, 4), dtype),
                    third(rng, (1,), dtype)), {"value": -2})]


def _addcmul(start, first, second, value=1):
    dtype = np.result_type(start, first, second)
    if dtype.kind != "f":
        value = int(value)  # torch truncates a float value meeting integers
    return np.asarray(start + value * first * second, dtype=dtype)


def _addcdiv(start, first, second, value=1):
    return np.asarray(start + value * first / second, dtype=np.result_type(start, first, second))


def _rsub_samples(rng, dtype):
    alpha = 3 if np.dtype(dtype).kind in "iu" else 1.5
    return [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (4,), dtype))),
            Sample((uniform(rng, (3, 4), dtype), 2)),
            Sample((uniform(rng, (3, 1), dtype), uniform(rng, (4,), dtype)), {"alpha": alpha})]


def _rsub(x, other, alpha=1):
    dtype = np.result_type(x, other)
    return np.asarray(np.asarray(other, dtype) - np.asarray(alpha, dtype) * x, dtype)


def _heaviside_samples(rng, dtype):
    x = rng.integers(-2, 3, size=(3, 4)).astype(dtype)
    return [Sample((x, uniform(rng, (3, 4), dtype))), Sample((x, np.asarray(0.5, dtype=dtype)))]


def _heaviside(x, values):
    return np.where(x == 0, values, (x > 0).astype(x.dtype)).astype(x.dtype)


def _softmax_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), 1)), Sample((uniform(rng, (2, 3, 4), dtype), 0)),
            Sample((uniform(rng, (3, 4), dtype), -1), {"dtype": autojit.float64})]


def _softmax(x, dim, dtype=None):
    if dtype is not None:
        x = x.astype(dtype.numpy)
    return np.exp(_log_softmax(x.astype(np.float64), dim)).astype(x.dtype)


def _log_softmax_reference(x, dim, dtype=None):
    if dtype is not None:
        x = x.astype(dtype.numpy)
    return _log_softmax(x.astype(np.float64), dim).astype(x.dtype)


def _ndtr(x):
    return 0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2))


_SINH_PRIMITIVES = ("lt", "where", "neg", "expm1", "exp", "mul", "div", "add", "sub")

ROWS = [
    composite("sinh", in_float(np.sinh), _spread(-5, 5), primitives=_SINH_PRIMITIVES,
              dtypes=INTEGER_AND_FLOAT),
    composite("cosh", in_float(np.cosh), _spread(-5, 5), primitives=("exp", "mul", "add")),
    composite("asinh", in_float(np.arcsinh), samples=_wide_samples,
              primitives=("log1p", "sqrt", "log", "where", "div")),
    composite("acosh", in_float(np.arccosh), samples=_acosh_samples, primitives=("acosh",)),
    composite("atanh", in_float(np.arctanh), _spread(-0.9, 0.9), primitives=("log1p", "sub")),
    composite("sinc", in_float(np.sinc), away_from_zero, primitives=("sin", "div", "where"),
              dtypes=INTEGER_AND_FLOAT),
    composite("frac", lambda x: x - np.trunc(x), off_integers, primitives=("trunc", "sub")),
    OpInfo(name="heaviside", function=autojit.heaviside, reference=_heaviside,
           samples=_heaviside_samples, primitives=("eq", "gt", "where"), dtypes=ALL_NUMERIC,
           differentiable=False),
    composite("deg2rad", in_float(np.deg2rad), primitives=("mul",), dtypes=INTEGER_AND_FLOAT),
    composite("rad2deg", in_float(np.rad2deg), primitives=("mul",), dtypes=INTEGER_AND_FLOAT),
    OpInfo(name="special.ndtr", function=autojit.special.ndtr, reference=in_float(_ndtr),
           samples=unary_samples(_spread(-4, 4)), primitives=("erfc", "mul")),
    OpInfo(name="lerp", function=autojit.lerp, reference=_lerp, samples=_lerp_samples,
           primitives=("sub", "mul", "add", "abs", "lt", "where")),
    OpInfo(name="addcmul", function=autojit.addcmul, reference=_addcmul,
           samples=_triple_samples, primitives=("mul", "add"), dtypes=ALL_NUMERIC),
    OpInfo(name="rsub", function=autojit.rsub, reference=_rsub, samples=_rsub_samples,
           primitives=("sub", "mul"), dtypes=ALL_NUMERIC),
    OpInfo(name="addcdiv", function=autojit.addcdiv, reference=_addcdiv,
           samples=lambda rng, dtype: _triple_samples(rng, dtype, divisor=True),
           primitives=("div", "mul", "add"), dtypes=FLOATING),
    OpInfo(name="softmax", function=autojit.softmax, reference=_softmax,
           samples=_softmax_samples, primitives=SOFTMAX_PRIMITIVES),
    OpInfo(name="log_softmax", function=autojit.log_softmax, reference=_log_softmax_reference,
           samples=_softmax_samples, primitives=LOG_SOFTMAX_PRIMITIVES),
]
