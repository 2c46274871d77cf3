"""Op table rows for the composites of ops/composite.py (written from primitives).

Elementwise composites get values inside their domain and away from kinks (relu at 0, clamp at
its bounds, softplus at its threshold); reductions get dim None/int/tuple and keepdim; norm gets
each kind of p. The primitives listed are the ones each composite expands to.
"""

from __future__ import annotations

import math

import numpy as np

import autojit

from . import OpInfo, Sample, positive, uniform
from .elementwise import away_from_zero, unary_samples
from .reduction import DIMS, distinct


def _erf(x):
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
        return (0.5 * x * (1 + np.tanh(inner))).astype(x.dtype)
    return (0.5 * x * (1 + _erf(x / math.sqrt(2)))).astype(x.dtype)


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta).astype(x.dtype)


def _clamp(x, min=None, max=None):  # noqa: A002 - torch's names
    result = x
    if min is not None:
        result = np.maximum(result, min)
    if max is not None:
        result = np.minimum(result, max)
    return result.astype(np.result_type(x, *(v for v in (min, max) if v is not None)))


def _clamp_samples(rng, dtype):
    def off_bounds(shape, low, high):
        # values at least 0.1 from either bound
        x = uniform(rng, shape, dtype)
        for bound in (low, high):
            x = np.where(np.abs(x - bound) < 0.1, bound + 0.2, x)
        return np.asarray(x, dtype=dtype)

    low = np.asarray(rng.uniform(-1.5, -0.5, size=(4,)), dtype=dtype)
    return [
        Sample((off_bounds((3, 4), -0.5, 0.5), -0.5, 0.5)),
        Sample((off_bounds((2, 3, 4), -0.5, 9), -0.5)),
        Sample((off_bounds((3, 4), -9, 0.25),), {"max": 0.25}),
        Sample((off_bounds((3, 4), low, 1.0), low, 1.0)),  # a tensor min: its gradient too
    ]


def _softplus_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype, -3, 3)
    x = np.asarray(np.where(np.abs(x * 2 - 1) < 0.1, x + 0.3, x), dtype=dtype)
    return [Sample((uniform(rng, (3, 4), dtype),)), Sample((x, 2.0, 1.0)),
            Sample((uniform(rng, (2, 3, 4), dtype),), {"beta": 0.5})]


def _gelu_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype),)),
            Sample((uniform(rng, (2, 3, 4), dtype),), {"approximate": "tanh"})]


def elementwise(name, reference, values=uniform, primitives=(), samples=None, **options):
    return OpInfo(name=name, function=getattr(autojit, name), reference=reference,
                  samples=samples or unary_samples(values), primitives=primitives, **options)


def _reduction_samples(values=uniform, extra=()):
    def samples(rng, dtype):
        return ([Sample((values(rng, (2, 3, 4), dtype),), dict(kwargs)) for kwargs in DIMS]
                + [Sample((values(rng, (3, 4), dtype),) + tuple(args), dict(kwargs))
                   for args, kwargs in extra])

    return samples


def _numpy_dims(dim):
    return tuple(dim) if isinstance(dim, list) else dim


def _mean(x, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        x = x.astype(dtype.numpy)
    return np.asarray(np.mean(x, axis=dim, keepdims=keepdim), dtype=x.dtype)


def _var(x, dim=None, *, correction=1, keepdim=False, unbiased=None):
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return np.asarray(np.var(x, axis=dim, ddof=correction, keepdims=keepdim), dtype=x.dtype)


def _std(x, dim=None, **kwargs):
    return np.sqrt(_var(x, dim, **kwargs))


def _var_samples(rng, dtype):
    samples = _reduction_samples()(rng, dtype)
    return samples + [Sample((uniform(rng, (3, 4), dtype), 1), {"correction": 0}),
                      Sample((uniform(rng, (3, 4), dtype),), {"dim": (0, 1), "unbiased": False}),
                      Sample((uniform(rng, (2, 5), dtype), -1), {"keepdim": True})]


def _norm(x, p=2, dim=None, keepdim=False):
    if p in ("fro", 2, 2.0):
        result = np.sqrt(np.sum(x * x, axis=dim, keepdims=keepdim))
    elif p in (math.inf, "inf"):
        result = np.amax(np.abs(x), axis=dim, keepdims=keepdim)
    elif p in (-math.inf, "-inf"):
        result = np.amin(np.abs(x), axis=dim, keepdims=keepdim)
    elif p == 0:
        result = np.sum(x != 0, axis=dim, keepdims=keepdim)
    else:
        result = np.sum(np.abs(x) ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)
    return np.asarray(result, dtype=x.dtype)


def _norm_samples(rng, dtype):
    def spread(shape):  # distinct magnitudes away from 0: abs, amax and amin are smooth there
        magnitude = distinct(rng, shape, dtype)
        magnitude = magnitude - magnitude.min() + 0.3
        sign = np.where(rng.random(shape) < 0.5, -1, 1)
        return np.asarray(sign * magnitude, dtype=dtype)

    samples = [Sample((spread((2, 3, 4)),), dict(kwargs)) for kwargs in DIMS]
    for p in (1, 3, 0.5, "fro", math.inf, -math.inf, 0):
        samples.append(Sample((spread((3, 4)), p), {"dim": 1}))
    samples.append(Sample((spread((3, 4)), 2, (0, 1), True)))
    zero_row = spread((3, 4))
    # The 2-norm's gradient at 0 is 0, as in torch; its second derivative there is undefined.
    zero_row[1] = 0
    return samples, zero_row


def _logsumexp(x, dim, keepdim=False):
    peak = np.amax(x, axis=dim, keepdims=True)
    result = np.log(np.sum(np.exp(x - peak), axis=dim, keepdims=True)) + peak
    if not keepdim:
        result = np.squeeze(result, axis=dim)
    return np.asarray(result, dtype=x.dtype)


def _logsumexp_samples(rng, dtype):
    large = uniform(rng, (3, 4), dtype, 50, 60)  # exp would overflow without the shift
    return [Sample((uniform(rng, (2, 3, 4), dtype), 1)),
            Sample((uniform(rng, (2, 3, 4), dtype), (0, 2), True)),
            Sample((uniform(rng, (2, 3, 4), dtype),), {"dim": -1, "keepdim": True}),
            Sample((large, 1))]


def _off_halves(rng, shape, dtype):
    """Floats whose fractional part is 0.1-0.4 or 0.6-0.9: round jumps at the halves, and
    gradcheck's steps must stay clear of them (tests/test_autograd.py checks the halves)."""
    whole = rng.integers(-3, 3, size=shape)
    fraction = rng.uniform(0.1, 0.4, size=shape) + 0.5 * rng.integers(0, 2, size=shape)
    return np.asarray(whole + fraction, dtype=dtype)


def _round_samples(rng, dtype):
    return [Sample((_off_halves(rng, (3, 4), dtype),)), Sample((_off_halves(rng, (), dtype),))]


def _round_reference(x, decimals=0):
    return np.round(x, decimals).astype(x.dtype)


ROWS = [
    elementwise("round", _round_reference, samples=_round_samples,
                primitives=("floor", "remainder", "where")),
    elementwise("square", np.square, primitives=("mul",)),
    elementwise("reciprocal", np.reciprocal, away_from_zero, primitives=("div",)),
    elementwise("rsqrt", lambda x: (1 / np.sqrt(x)).astype(x.dtype), positive,
                primitives=("sqrt", "div")),
    elementwise("exp2", np.exp2, primitives=("pow", "log", "mul")),
    elementwise("log2", np.log2, positive, primitives=("log", "div")),
    elementwise("log10", np.log10, positive, primitives=("log", "div")),
    elementwise("tan", np.tan, lambda rng, shape, dtype: uniform(rng, shape, dtype, -1.2, 1.2),
                primitives=("sin", "cos", "div")),
    elementwise("relu", lambda x: np.maximum(x, 0).astype(x.dtype), away_from_zero,
                primitives=("relu", "threshold_backward")),
    elementwise("gelu", _gelu, samples=_gelu_samples,
                primitives=("gelu", "gelu_backward", "mul", "add", "tanh")),
    elementwise("silu", lambda x: (x / (1 + np.exp(-x))).astype(x.dtype),
                primitives=("sigmoid", "mul")),
    elementwise("softplus", _softplus, samples=_softplus_samples,
                primitives=("softplus", "softplus_backward")),
    OpInfo(name="hardswish", function=autojit.nn.functional.hardswish,
           reference=lambda x: np.where(x <= -3, 0 * x, np.where(
               (x > -3) & (x < 3), x * (x + 3) / 6, x)).astype(x.dtype),
           samples=unary_samples(lambda rng, shape, dtype: uniform(rng, shape, dtype, -5, 5)),
           primitives=("hardswish", "hardswish_backward")),
    OpInfo(name="threshold", function=lambda x: autojit.nn.functional.threshold(x, 0.5, -1.0),
           reference=lambda x: np.where(x <= 0.5, -1.0, x).astype(x.dtype),
           samples=unary_samples(lambda rng, shape, dtype: uniform(rng, shape, dtype, -2, 2)),
           primitives=("threshold", "threshold_backward")),
    OpInfo(name="hardsigmoid", function=autojit.nn.functional.hardsigmoid,
           reference=lambda x: np.clip((x + 3) / 6, 0, 1).astype(x.dtype),
           samples=unary_samples(lambda rng, shape, dtype: uniform(rng, shape, dtype, -5, 5)),
           primitives=("hardsigmoid", "hardsigmoid_backward")),
    elementwise("clamp", _clamp, samples=_clamp_samples,
                primitives=("clamp_numbers", "maximum", "minimum", "ge", "le", "lt", "where")),
    OpInfo(name="mean", function=autojit.mean, reference=_mean,
           samples=_reduction_samples(extra=(((1,), {}), ((), {"dtype": autojit.float64})),),
           primitives=("mean",)),
    OpInfo(name="var", function=autojit.var, reference=_var, samples=_var_samples,
           primitives=("sum", "sub", "mul", "div")),
    OpInfo(name="std", function=autojit.std, reference=_std, samples=_var_samples,
           primitives=("sum", "sqrt")),
    OpInfo(name="norm", function=autojit.norm, reference=_norm,
           samples=lambda rng, dtype: _norm_samples(rng, dtype)[0],
           primitives=("vector_norm", "sum", "abs", "pow", "amax", "amin", "where", "ne",
                       "cast")),
    OpInfo(name="norm", function=autojit.norm, reference=_norm,
           samples=lambda rng, dtype: [Sample((_norm_samples(rng, dtype)[1],), {"dim": 1})],
           primitives=("vector_norm",), gradgrad=False),
    OpInfo(name="logsumexp", function=autojit.logsumexp, reference=_logsumexp,
           samples=_logsumexp_samples, primitives=("amax", "exp", "log", "sum")),
]

