"""Op table rows for ops/linalg/products.py: addmm, addmv, addbmm, baddbmm, mv, kron, cross, cdist
and cosine_similarity.

Samples take the default scalars and others (beta 0 ignores the input), broadcast inputs, and
for cdist each kind of p; distances and norms stay away from 0 (where torch's gradient is
defined by a rule, checked in tests/special_points_math.py).
"""

from __future__ import annotations

import numpy as np

import autojit

from . import FLOATING, OpInfo, Sample, uniform

FLOAT_AND_LONG = ("float32", "float64", "int64")


def _in_dtype(function):
    def reference(*args, **kwargs):
        dtype = next(a.dtype for a in args if isinstance(a, np.ndarray))
        return np.asarray(function(*args, **kwargs)).astype(dtype)

    return reference


def _scaled(product):
    def reference(input, first, second, beta=1, alpha=1):
        if input.dtype.kind != "f":
            beta, alpha = int(beta), int(alpha)
        result = alpha * product(first, second)
        return result if beta == 0 else beta * input + result

    return _in_dtype(reference)


def _addmm_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 4), dtype), uniform(rng, (2, 3), dtype),
                    uniform(rng, (3, 4), dtype))),
            Sample((uniform(rng, (4,), dtype), uniform(rng, (2, 3), dtype),
                    uniform(rng, (3, 4), dtype)), {"beta": 0.5, "alpha": -2}),
            Sample((uniform(rng, (2, 1), dtype), uniform(rng, (2, 3), dtype),
                    uniform(rng, (3, 4), dtype)), {"beta": 0})]


def _addmv_samples(rng, dtype):
    return [Sample((uniform(rng, (2,), dtype), uniform(rng, (2, 3), dtype),
                    uniform(rng, (3,), dtype))),
            Sample((uniform(rng, (1,), dtype), uniform(rng, (2, 3), dtype),
                    uniform(rng, (3,), dtype)), {"beta": 2, "alpha": 0.5})]


def _addbmm_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 4), dtype), uniform(rng, (3, 2, 3), dtype),
                    uniform(rng, (3, 3, 4), dtype))),
            Sample((uniform(rng, (4,), dtype), uniform(rng, (3, 2, 3), dtype),
                    uniform(rng, (3, 3, 4), dtype)), {"beta": -1, "alpha": 2})]


def _baddbmm_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 2, 4), dtype), uniform(rng, (3, 2, 3), dtype),
                    uniform(rng, (3, 3, 4), dtype))),
            Sample((uniform(rng, (2, 4), dtype), uniform(rng, (3, 2, 3), dtype),
                    uniform(rng, (3, 3, 4), dtype)), {"beta": 0.5, "alpha": 3})]


def _kron_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 3), dtype), uniform(rng, (2, 2), dtype))),
            Sample((uniform(rng, (3,), dtype), uniform(rng, (2, 2), dtype)))]


def _cross_samples(rng, dtype):
    return [Sample((uniform(rng, (4, 3), dtype), uniform(rng, (4, 3), dtype)), {"dim": 1}),
            Sample((uniform(rng, (3, 2), dtype), uniform(rng, (3, 1), dtype), 0)),
            Sample((uniform(rng, (3,), dtype), uniform(rng, (3,), dtype)), {"dim": -1})]


def _cross(a, b, dim=None):
    return np.cross(a, b, axis=dim)


def _points(rng, shape, dtype):
    """Points on a grid with a random offset per point: no two coordinates tie and no two
    points coincide, so every distance and its gradient is smooth."""
    count = int(np.prod(shape[:-1]))
    grid = np.arange(count * shape[-1], dtype=np.float64).reshape(shape) * 0.37
    return np.asarray(grid + rng.uniform(0, 0.1, shape), dtype=dtype)


def _cdist_samples(rng, dtype):
    samples = [Sample((_points(rng, (3, 4), dtype), _points(rng, (2, 4), dtype) + 0.05))]
    for p in (1.0, 3.0, 0.5, np.inf):
        samples.append(Sample((_points(rng, (2, 3), dtype), _points(rng, (4, 3), dtype) - 0.1),
                              {"p": p}))
    samples.append(Sample((_points(rng, (2, 3, 2), dtype), _points(rng, (1, 2, 2), dtype)
                           + 0.2)))
    return samples


def _cdist(x1, x2, p=2.0):
    difference = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == np.inf:
        return difference.max(-1)
    return (difference ** p).sum(-1) ** (1 / p)


def _cosine_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype))),
            Sample((uniform(rng, (2, 3), dtype), uniform(rng, (3,), dtype)), {"dim": -1}),
            Sample((uniform(rng, (4, 2), dtype), uniform(rng, (4, 2), dtype), 0, 1e-6))]


def _cosine(x1, x2, dim=1, eps=1e-8):
    x1, x2 = np.broadcast_arrays(x1, x2)
    norms = [np.maximum(np.sqrt((x * x).sum(dim, keepdims=True)), eps) for x in (x1, x2)]
    return ((x1 / norms[0]) * (x2 / norms[1])).sum(dim)


ROWS = [
    OpInfo("addmm", autojit.addmm, _scaled(np.matmul), _addmm_samples,
           primitives=("matmul", "mul", "add"), dtypes=FLOAT_AND_LONG),
    OpInfo("addmv", autojit.addmv, _scaled(np.matmul), _addmv_samples,
           primitives=("matmul", "mul", "add"), dtypes=FLOAT_AND_LONG),
    OpInfo("addbmm", autojit.addbmm, _scaled(lambda a, b: np.matmul(a, b).sum(0)),
           _addbmm_samples, primitives=("matmul", "sum", "mul", "add")),
    OpInfo("baddbmm", autojit.baddbmm, _scaled(np.matmul), _baddbmm_samples,
           primitives=("matmul", "mul", "add")),
    OpInfo("mv", autojit.mv, _in_dtype(np.matmul),
           lambda rng, dtype: [Sample((uniform(rng, (2, 3), dtype), uniform(rng, (3,), dtype)))],
           primitives=("matmul",), dtypes=FLOAT_AND_LONG),
    OpInfo("kron", autojit.kron, _in_dtype(np.kron), _kron_samples, primitives=("mul",),
           dtypes=FLOAT_AND_LONG),
    OpInfo("cross", autojit.cross, _in_dtype(_cross), _cross_samples,
           primitives=("slice", "mul", "sub", "cat"), dtypes=FLOAT_AND_LONG),
    OpInfo("cdist", autojit.cdist, _in_dtype(_cdist), _cdist_samples,
           primitives=("sub", "abs", "sum", "vector_norm", "pow", "amax"), dtypes=FLOATING),
    OpInfo("cosine_similarity", autojit.cosine_similarity, _in_dtype(_cosine), _cosine_samples,
           primitives=("mul", "vector_norm", "maximum", "div")),
]
