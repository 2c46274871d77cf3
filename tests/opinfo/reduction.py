"""Op table rows for the reduction primitives of ops/reduction.py.

Samples reduce over dim None, an int, a negative int and a tuple, with and without keepdim.
amax/amin samples have distinct values (no ties, where the gradient is shared); prod samples
include slices with one and with two zeros, the cases its VJP handles apart.
"""

from __future__ import annotations

import numpy as np

import autojit

from . import ALL_NUMERIC, FLOATING, OpInfo, Sample, uniform

DIMS = (
    {},
    {"dim": 1},
    {"dim": -1, "keepdim": True},
    {"dim": (0, 2)},
    {"dim": (0, -1), "keepdim": True},
    {"dim": None, "keepdim": True},
)


def numpy_reduction(function, integer_dtype=None):
    """reference(x, dim=..., keepdim=...) from a NumPy reduction taking axis and keepdims."""
    def reference(x, dim=None, keepdim=False):
        result = np.asarray(function(x, axis=dim, keepdims=keepdim))
        if integer_dtype is not None and x.dtype.kind in "iub":
            result = result.astype(integer_dtype)
        return result

    return reference


def distinct(rng, shape, dtype):
    """A random permutation of evenly spaced values: no two elements are equal."""
    count = int(np.prod(shape))
    values = (rng.permutation(count) - count / 2) * (4 / max(count, 1))
    return np.asarray(values.reshape(shape), dtype=dtype)


def reduction_samples(values=uniform, dims=DIMS, zero_dim=True):
    def samples(rng, dtype):
        result = [Sample((values(rng, (2, 3, 4), dtype),), dict(kwargs)) for kwargs in dims]
        result.append(Sample((values(rng, (3, 4), dtype), 0)))  # dim given positionally
        if zero_dim:
            result.append(Sample((values(rng, (), dtype),)))
        return result

    return samples


def _prod_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype, 0.5, 1.5) * np.where(rng.random((2, 3, 4)) < 0.5, -1, 1)
    x = np.asarray(x, dtype=dtype)
    with_zeros = x.copy()
    with_zeros[0, 1, 2] = 0          # one zero in this row of the last dim
    with_zeros[1, 2, 0] = with_zeros[1, 2, 3] = 0  # two zeros in this one
    samples = [Sample((x,), dict(kwargs)) for kwargs in DIMS]
    samples += [Sample((with_zeros,), {"dim": -1}), Sample((with_zeros[0],), {})]
    return samples


def _argument_samples(rng, dtype):
    return [Sample((distinct(rng, (2, 3, 4), dtype),), kwargs) for kwargs in (
        {}, {"dim": 1}, {"dim": -1, "keepdim": True}, {"dim": None, "keepdim": True},
        {"dim": 0})] + [Sample((distinct(rng, (5,), dtype),), {"dim": 0})]


def _arg_reference(function):
    def reference(x, dim=None, keepdim=False):
        if dim is None:
            result = function(x.reshape(-1))
            return np.asarray(result).reshape((1,) * x.ndim if keepdim else ())
        return np.asarray(function(x, axis=dim, keepdims=keepdim))

    return reference


def _extreme_samples(rng, dtype):
    samples = reduction_samples(distinct, zero_dim=False)(rng, dtype)
    # amax/amin take dim=() (every dim) as their default
    return samples + [Sample((distinct(rng, (3, 4), dtype),), {"dim": ()})]


def _extreme_reference(function):
    def reference(x, dim=(), keepdim=False):
        return np.asarray(function(x, axis=None if dim == () else dim, keepdims=keepdim))

    return reference


def _logical_samples(rng, dtype):
    def values(shape):
        return rng.integers(0, 2, size=shape).astype(dtype)

    samples = [Sample((values((2, 3, 4)),), dict(kwargs)) for kwargs in DIMS]
    return samples + [Sample((np.ones((3, 4), dtype=dtype),), {"dim": 1})]


def _sum_dtype_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype),), {"dim": 1, "dtype": autojit.float64})]


ROWS = [
    OpInfo(name="sum", function=autojit.sum, reference=numpy_reduction(np.sum, np.int64),
           samples=reduction_samples(), primitives=("sum",), dtypes=ALL_NUMERIC),
    OpInfo(name="sum", function=autojit.sum,
           reference=lambda x, dim, dtype: np.sum(x, axis=dim, dtype=dtype.numpy),
           samples=_sum_dtype_samples, primitives=("sum",), dtypes=("float32", "int32")),
    OpInfo(name="prod", function=autojit.prod, reference=numpy_reduction(np.prod, np.int64),
           samples=_prod_samples, primitives=("prod",), dtypes=ALL_NUMERIC),
    OpInfo(name="amax", function=autojit.amax, reference=_extreme_reference(np.amax),
           samples=_extreme_samples, primitives=("amax",), dtypes=ALL_NUMERIC),
    OpInfo(name="amin", function=autojit.amin, reference=_extreme_reference(np.amin),
           samples=_extreme_samples, primitives=("amin",), dtypes=ALL_NUMERIC),
    OpInfo(name="argmax", function=autojit.argmax, reference=_arg_reference(np.argmax),
           samples=_argument_samples, primitives=("argmax",), dtypes=ALL_NUMERIC,
           differentiable=False),
    OpInfo(name="argmin", function=autojit.argmin, reference=_arg_reference(np.argmin),
           samples=_argument_samples, primitives=("argmin",), dtypes=ALL_NUMERIC,
           differentiable=False),
    OpInfo(name="any", function=autojit.any, reference=numpy_reduction(np.any),
           samples=_logical_samples, primitives=("any",), dtypes=("bool", *FLOATING, "int64"),
           differentiable=False),
    OpInfo(name="all", function=autojit.all, reference=numpy_reduction(np.all),
           samples=_logical_samples, primitives=("all",), dtypes=("bool", *FLOATING, "int64"),
           differentiable=False),
]
