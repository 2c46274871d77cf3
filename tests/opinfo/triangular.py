"""Op table rows for ops/layout/triangular.py (tril, triu and their index functions) and einsum
(ops/linalg/einsum.py)."""

from __future__ import annotations

import numpy as np

import autojit as aj

from . import ALL_NUMERIC, OpInfo, Sample, uniform


def _triangle_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype),)), Sample((uniform(rng, (2, 4, 3), dtype), 1)),
            Sample((uniform(rng, (4, 4), dtype),), {"diagonal": -2})]


def _indices_samples(rng, dtype):
    return [Sample((3, 4)), Sample((4, 3, 1)), Sample((3, 3, -1)), Sample((0, 2))]


def _indices_reference(function):
    def reference(row, col, offset=0):
        return np.stack(function(row, offset, col)).reshape(2, -1).astype(np.int64)

    return reference


def _einsum_samples(rng, dtype):
    def x(*shape):
        return uniform(rng, shape, dtype)

    return [Sample(("bij,bjk->bik", x(2, 3, 4), x(2, 4, 2))),
            Sample(("ij,jk", x(2, 3), x(3, 4))),
            Sample(("ii->i", x(3, 3))),
            Sample(("...ij,...jk->...ik", x(2, 1, 2, 3), x(3, 3, 2))),
            Sample(("ii", x(3, 3))),
            Sample(("i,j,ij->", x(2), x(3), x(2, 3))),
            Sample(("bi,bi->b", x(1, 3), x(4, 3)))]


def _einsum_reference(equation, *operands):
    broadcast = np.broadcast_arrays(*operands) if equation == "bi,bi->b" else operands
    result = np.einsum(equation, *broadcast)
    return np.asarray(result).astype(np.result_type(*operands))


ROWS = [
    OpInfo("tril", aj.tril, lambda a, diagonal=0: np.tril(a, diagonal), _triangle_samples,
           dtypes=ALL_NUMERIC),
    OpInfo("triu", aj.triu, lambda a, diagonal=0: np.triu(a, diagonal), _triangle_samples,
           dtypes=ALL_NUMERIC),
    OpInfo("tril_indices", aj.tril_indices, _indices_reference(np.tril_indices),
           _indices_samples, dtypes=("int64",), differentiable=False, factory=True),
    OpInfo("triu_indices", aj.triu_indices, _indices_reference(np.triu_indices),
           _indices_samples, dtypes=("int64",), differentiable=False, factory=True),
    OpInfo("einsum", aj.einsum, _einsum_reference, _einsum_samples,
           primitives=("matmul", "sum", "slice", "mul", "permute"), dtypes=ALL_NUMERIC),
]
