"""float16 norms, normalizations, losses and softplus against torch: they compute in float32 and
round once (`float32_inside`, ops/autocast.py), as torch's kernels accumulate float16 in float32.
Computed in float16 they overflowed: the norm of four 200s was inf, softplus(15) inf."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

CASES = {
    "norm": lambda L, y: y.norm(),
    "vector_norm": lambda L, y: L.linalg.vector_norm(y),
    "mse_loss": lambda L, y: L.nn.functional.mse_loss(y, y * 0),
    "l1_loss": lambda L, y: L.nn.functional.l1_loss(y, y * 0),
    "smooth_l1_loss": lambda L, y: L.nn.functional.smooth_l1_loss(y * 100, y * 0),
    "normalize": lambda L, y: L.nn.functional.normalize(y, dim=0),
    "cosine_similarity": lambda L, y: L.nn.functional.cosine_similarity(y[None], y[None] * 2),
    "softplus": lambda L, y: L.nn.functional.softplus(y / 20 + 10),
    "mean": lambda L, y: (y * y).mean(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float16_results_are_torchs(name):
    data = np.array([200.0, 180.0, -150.0, 220.0], dtype=np.float16)
    results = []
    for library in (autojit, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way
            result = CASES[name](library, library.tensor(data))
        assert str(result.dtype).endswith("float16")
        results.append(np.asarray(result.tolist(), dtype=np.float64))
    assert np.all(np.isfinite(results[0]))
    np.testing.assert_allclose(results[0], results[1], rtol=2 ** -10)
