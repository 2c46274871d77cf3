"""Op table rows for the simple layer functions: linear, bilinear, embedding and dropout.

These are composites (nn/layer_functions.py). The references are NumPy formulas (einsum for
bilinear, fancy indexing for embedding) computed in float64 and returned in the input's dtype.
Dropout's rows use only the deterministic settings (p=0, evaluation mode, p=1); its random mask
is tested in tests/test_nn_layers.py, and so is embedding's padding_idx (its row gets no gradient
by design, which a finite-difference check would flag).
"""

from __future__ import annotations

import numpy as np

import autojit.nn.functional as F

from . import OpInfo, Sample, uniform
from .nn import _in_dtype


def _linear(x, weight, bias=None):
    out = x @ weight.T
    return out if bias is None else out + bias


def _linear_samples(rng, dtype):
    return [
        Sample((uniform(rng, (3, 4), dtype), uniform(rng, (5, 4), dtype),
                uniform(rng, (5,), dtype))),
        Sample((uniform(rng, (2, 3, 4), dtype), uniform(rng, (2, 4), dtype))),
        Sample((uniform(rng, (4,), dtype), uniform(rng, (3, 4), dtype),
                uniform(rng, (3,), dtype))),
    ]


def _bilinear(x1, x2, weight, bias=None):
    out = np.einsum("...i,kij,...j->...k", x1, weight, x2)
    return out if bias is None else out + bias


def _bilinear_samples(rng, dtype):
    return [
        Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 2), dtype),
                uniform(rng, (5, 4, 2), dtype), uniform(rng, (5,), dtype))),
        Sample((uniform(rng, (2, 2, 3), dtype), uniform(rng, (2, 2, 2), dtype),
                uniform(rng, (2, 3, 2), dtype))),
        Sample((uniform(rng, (3,), dtype), uniform(rng, (2,), dtype),
                uniform(rng, (4, 3, 2), dtype), uniform(rng, (4,), dtype))),
    ]


def _embedding(indices, weight, padding_idx=None):
    return weight[indices]


def _embedding_samples(rng, dtype):
    return [
        Sample((rng.integers(0, 5, size=(2, 3)), uniform(rng, (5, 4), dtype))),
        Sample((rng.integers(0, 6, size=(7,)), uniform(rng, (6, 2), dtype))),
        Sample((np.array(3), uniform(rng, (4, 3), dtype))),
    ]


def _dropout(x, p=0.5, training=True):
    return x * 0 if training and p == 1.0 else x


def _dropout_samples(rng, dtype):
    return [
        Sample((uniform(rng, (3, 4), dtype),), {"p": 0.0}),
        Sample((uniform(rng, (5,), dtype),), {"p": 0.5, "training": False}),
        Sample((uniform(rng, (2, 3), dtype),), {"p": 1.0}),
    ]


ROWS = [
    OpInfo("nn.functional.linear", F.linear, _in_dtype(_linear), _linear_samples,
           primitives=("linear", "matmul", "permute", "sum")),
    OpInfo("nn.functional.bilinear", F.bilinear, _in_dtype(_bilinear), _bilinear_samples,
           primitives=("matmul", "permute", "reshape", "mul", "sum", "add")),
    OpInfo("nn.functional.embedding", F.embedding, _embedding, _embedding_samples,
           primitives=("index",), grad_inputs=(1,)),
    OpInfo("nn.functional.dropout", F.dropout, _in_dtype(_dropout), _dropout_samples,
           primitives=("mul",)),
]
