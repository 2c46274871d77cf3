"""Op table rows for the elementwise primitives of ops/elementwise/__init__.py.

Samples cover same-shape operands, broadcasting ((3, 1) with (4,)), 0-d tensors and Python
scalars on either side. Values stay inside each op's domain (log, sqrt positive) and away from
the points where the op is not differentiable (abs at 0, maximum ties, floor and remainder
jumps), so that finite differences are meaningful.
"""

from __future__ import annotations

import math

import numpy as np

import autojit
from autojit.ops import elementwise as ew

from . import ALL_NUMERIC, FLOATING, OpInfo, Sample, positive, uniform

BOOL_AND_NUMERIC = ("bool", "float32", "int64")


def away_from_zero(rng, shape, dtype, low=0.25, high=2.0):
    """Values with |x| in [low, high) and a random sign (integers: never 0)."""
    magnitude = uniform(rng, shape, dtype, low if np.dtype(dtype).kind == "f" else 1, high + 1)
    sign = np.where(rng.random(shape) < 0.5, -1, 1).astype(dtype)
    return np.asarray(magnitude * sign, dtype=dtype)


def off_integers(rng, shape, dtype):
    """Floats whose fractional part is in [0.2, 0.8): far from floor's jumps."""
    if np.dtype(dtype).kind != "f":
        return uniform(rng, shape, dtype, -3, 3)
    whole = rng.integers(-3, 3, size=shape)
    return np.asarray(whole + rng.uniform(0.2, 0.8, size=shape), dtype=dtype)


def as_float(function):
    """A NumPy reference for an op whose integer inputs compute in the default float32."""
    def reference(*args):
        args = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind in "iub"
                else a for a in args]
        return function(*args)

    return reference


def unary_samples(values=uniform):
    def samples(rng, dtype):
        return [Sample((values(rng, (3, 4), dtype),)), Sample((values(rng, (2, 3, 4), dtype),)),
                Sample((values(rng, (), dtype),))]

    return samples


def unary(name, reference, values=uniform, dtypes=FLOATING, primitive=None, **options):
    return OpInfo(name=name, function=getattr(autojit, name), reference=reference,
                  samples=unary_samples(values), primitives=(primitive or name,), dtypes=dtypes,
                  **options)


def binary_samples(first=uniform, second=uniform, scalar=1.5):
    """Same shapes, broadcasting, 0-d, and a Python scalar on each side (none where `scalar`
    is None: torch's maximum takes tensors only)."""
    def samples(rng, dtype):
        tensors = [
            Sample((first(rng, (3, 4), dtype), second(rng, (3, 4), dtype))),
            Sample((first(rng, (3, 1), dtype), second(rng, (4,), dtype))),
            Sample((first(rng, (2, 3, 4), dtype), second(rng, (), dtype))),
        ]
        if scalar is None:
            return tensors
        number = int(scalar) if np.dtype(dtype).kind in "iu" else scalar
        return [*tensors, Sample((first(rng, (2, 3, 4), dtype), number)),
                Sample((number, second(rng, (3, 4), dtype)))]

    return samples


def binary(name, reference, first=uniform, second=uniform, dtypes=ALL_NUMERIC, scalar=1.5,
           **options):
    return OpInfo(name=name, function=getattr(autojit, name), reference=reference,
                  samples=binary_samples(first, second, scalar), primitives=(name,),
                  dtypes=dtypes, **options)


def _alpha_samples(rng, dtype):
    """binary_samples, and `alpha=` (an integer where the result is one, as torch requires)."""
    alpha = -2 if np.dtype(dtype).kind in "iu" else 0.5
    return [*binary_samples()(rng, dtype),
            Sample((uniform(rng, (3, 4), dtype), uniform(rng, (4,), dtype)), {"alpha": alpha}),
            Sample((uniform(rng, (2, 3), dtype), 3), {"alpha": alpha})]


def with_alpha(reference):
    """reference(x, alpha * y), alpha * y computed in the result's dtype (torch's kernels)."""
    def scaled(x, y, alpha=1):
        dtype = np.result_type(x, y)
        return reference(x, (np.asarray(y, dtype) * np.asarray(alpha, dtype)).astype(dtype))

    return scaled


def _divide(x, y):
    integer = all(not isinstance(v, np.ndarray) and isinstance(v, int)
                  or isinstance(v, np.ndarray) and v.dtype.kind in "iub" for v in (x, y))
    result = np.true_divide(x, y)
    return result.astype(np.float32) if integer else result


def _remainder_samples(rng, dtype):
    """x = y * (k + f) with f in [0.2, 0.8): x / y is never near an integer."""
    integer = np.dtype(dtype).kind in "iu"

    def pair(shape_x, shape_y):
        y = away_from_zero(rng, shape_y, dtype, 0.5, 2.0)
        if integer:
            return uniform(rng, shape_x, dtype, -6, 6), y
        return (np.broadcast_to(y, shape_x) * off_integers(rng, shape_x, dtype)).astype(dtype), y

    x = uniform(rng, (2, 3, 4), dtype, -6, 6) if integer else off_integers(
        rng, (2, 3, 4), dtype) * 1.5
    return [Sample(pair((3, 4), (3, 4))), Sample(pair((3, 4), (4,))),
            Sample((x.astype(dtype), 2 if integer else 1.5))]


def _pow_samples(rng, dtype):
    return [
        Sample((positive(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype))),
        Sample((positive(rng, (3, 1), dtype), uniform(rng, (4,), dtype))),
        Sample((uniform(rng, (2, 3, 4), dtype), 3)),
        Sample((positive(rng, (2, 3, 4), dtype), 0.5)),
        Sample((uniform(rng, (3, 4), dtype), 0)),
        Sample((2.0, uniform(rng, (3, 4), dtype))),
    ]


def _compare_samples(rng, dtype):
    """Small integers (as the dtype) so that ties occur."""
    def values(shape):
        return rng.integers(-2, 3, size=shape).astype(dtype)

    return [Sample((values((3, 4)), values((3, 4)))), Sample((values((3, 1)), values((4,)))),
            Sample((values((2, 3, 4)), 1)), Sample((values((3, 4)), 0.5))]


def comparison(name, reference):
    return OpInfo(name=name, function=getattr(autojit, name), reference=reference,
                  samples=_compare_samples, primitives=(name,), dtypes=ALL_NUMERIC,
                  differentiable=False)


def _logical_samples(rng, dtype):
    def values(shape):
        return rng.integers(0, 2, size=shape).astype(dtype) if np.dtype(dtype).kind != "f" \
            else rng.integers(-1, 2, size=shape).astype(dtype)

    return [Sample((values((3, 4)), values((3, 4)))), Sample((values((3, 1)), values((4,))))]


def logical(name, reference):
    return OpInfo(name=name, function=getattr(autojit, name), reference=reference,
                  samples=_logical_samples, primitives=(name,), dtypes=BOOL_AND_NUMERIC,
                  differentiable=False)


def _isnan_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    x[0, 1] = x[2, 3] = np.nan
    return [Sample((x,)), Sample((uniform(rng, (2, 3), dtype),))]


def _where_samples(rng, dtype):
    return [
        Sample((rng.random((3, 4)) < 0.5, uniform(rng, (3, 4), dtype), uniform(rng, (3, 4),
                                                                                dtype))),
        Sample((rng.random((3, 1)) < 0.5, uniform(rng, (4,), dtype), uniform(rng, (3, 4),
                                                                              dtype))),
        Sample((rng.random((2, 3, 4)) < 0.5, uniform(rng, (2, 3, 4), dtype), 0)),
        Sample((rng.random((3, 4)) < 0.5, 1, uniform(rng, (3, 4), dtype))),
    ]


def _cast_samples(rng, dtype):
    # Targets of another floating dtype (differentiable) and an integer one (not).
    other = np.float32 if dtype == np.float64 else np.float64
    return [Sample((off_integers(rng, (3, 4), dtype), autojit.float64 if other == np.float64
                    else autojit.float32)),
            Sample((off_integers(rng, (2, 3, 4), dtype), autojit.int64))]


def _fill_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), 2)), Sample((uniform(rng, (2, 3), dtype), -0.5))]


def _fill_reference(x, value):
    return np.full_like(x, value)


ROWS = [
    unary("neg", np.negative, dtypes=ALL_NUMERIC),
    unary("abs", np.abs, away_from_zero, dtypes=ALL_NUMERIC),
    unary("sign", np.sign, away_from_zero, dtypes=ALL_NUMERIC),
    unary("exp", as_float(np.exp), dtypes=(*FLOATING, "int64")),
    unary("log", as_float(np.log), lambda rng, shape, dtype: positive(rng, shape, dtype, 1, 4),
          dtypes=(*FLOATING, "int32")),
    unary("sqrt", as_float(np.sqrt), positive, dtypes=(*FLOATING, "int64")),
    unary("sin", as_float(np.sin), dtypes=(*FLOATING, "int32")),
    unary("cos", np.cos),
    OpInfo(name="tanh", function=autojit.tanh, reference=np.tanh, samples=unary_samples(),
           primitives=("tanh", "tanh_backward"), dtypes=FLOATING),
    unary("sigmoid", lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype)),
    unary("erf", lambda x: np.vectorize(math.erf, otypes=[x.dtype])(x)),
    unary("log1p", np.log1p, lambda rng, shape, dtype: uniform(rng, shape, dtype, -0.5, 2.0)),
    unary("expm1", np.expm1),
    unary("floor", lambda x: np.floor(x).astype(x.dtype), off_integers, dtypes=ALL_NUMERIC),
    OpInfo(name="add", function=autojit.add, reference=with_alpha(np.add),
           samples=_alpha_samples, primitives=("add", "mul"), dtypes=ALL_NUMERIC),
    OpInfo(name="sub", function=autojit.sub, reference=with_alpha(np.subtract),
           samples=_alpha_samples, primitives=("sub", "mul"), dtypes=ALL_NUMERIC),
    binary("mul", np.multiply),
    binary("div", _divide, second=away_from_zero, dtypes=(*FLOATING, "int64")),
    OpInfo(name="pow", function=autojit.pow, reference=np.power, samples=_pow_samples,
           primitives=("pow",)),
    binary("maximum", np.maximum, scalar=None),
    binary("minimum", np.minimum, scalar=None),
    binary("floor_divide", np.floor_divide, second=away_from_zero, differentiable=False),
    OpInfo(name="remainder", function=autojit.remainder, reference=np.remainder,
           samples=_remainder_samples, primitives=("remainder",), dtypes=ALL_NUMERIC),
    comparison("eq", np.equal),
    comparison("ne", np.not_equal),
    comparison("lt", np.less),
    comparison("le", np.less_equal),
    comparison("gt", np.greater),
    comparison("ge", np.greater_equal),
    logical("logical_and", np.logical_and),
    logical("logical_or", np.logical_or),
    logical("logical_xor", np.logical_xor),
    OpInfo(name="logical_not", function=autojit.logical_not, reference=np.logical_not,
           samples=lambda rng, dtype: [Sample(s.args[:1]) for s in _logical_samples(rng, dtype)],
           primitives=("logical_not",), dtypes=BOOL_AND_NUMERIC, differentiable=False),
    OpInfo(name="isnan", function=autojit.isnan, reference=np.isnan, samples=_isnan_samples,
           primitives=("isnan",), differentiable=False),
    OpInfo(name="where", function=autojit.where, reference=np.where, samples=_where_samples,
           primitives=("where",), dtypes=ALL_NUMERIC, grad_inputs=(1, 2)),
    OpInfo(name="Tensor.to", function=lambda x, dtype: x.to(dtype),
           reference=lambda x, dtype: x.astype(dtype.numpy), samples=_cast_samples,
           primitives=("cast",), grad_eps=1e-2),
    unary("clone", np.copy, dtypes=ALL_NUMERIC),
    OpInfo(name="fill_like", function=ew.fill_like, reference=_fill_reference,
           samples=_fill_samples, primitives=("fill",)),
]
