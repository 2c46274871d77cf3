"""Op table rows for linear algebra (ops/linalg/__init__.py)."""

import numpy as np

import autojit as aj

from . import OpInfo, Sample, uniform


def _matmul_samples(rng, dtype):
    shapes = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)),
              ((5, 2, 3), (3, 4)), ((1, 2, 3), (4, 3, 2))]
    return [Sample((uniform(rng, a, dtype), uniform(rng, b, dtype))) for a, b in shapes]


def _pair(shape_x, shape_y):
    return lambda rng, dtype: [Sample((uniform(rng, shape_x, dtype), uniform(rng, shape_y,
                                                                            dtype)))]


ROWS = [
    OpInfo("matmul", aj.matmul, np.matmul, _matmul_samples, primitives=("matmul",),
           dtypes=("float32", "float64", "int64")),
    OpInfo("mm", aj.mm, np.matmul, _pair((2, 3), (3, 4)), primitives=("matmul",)),
    OpInfo("bmm", aj.bmm, np.matmul, _pair((2, 2, 3), (2, 3, 4)), primitives=("matmul",)),
    OpInfo("dot", aj.dot, np.dot, _pair((5,), (5,)), primitives=("matmul",)),
    OpInfo("outer", aj.outer, np.outer, _pair((3,), (4,))),
]
