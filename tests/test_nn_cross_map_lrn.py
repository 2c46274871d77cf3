"""CrossMapLRN2d (nn/cross_map_lrn.py) against torch: outputs and input gradients (torch's
hand-written backward) in float64 and float32, repr, state_dict keys and errors as torch's.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def _error(call, lib):
    try:
        call(lib)
    except Exception as error:  # noqa: BLE001 - the type is what the test compares
        return type(error), str(error)
    return None


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("size, channels", [(5, 7), (3, 4), (4, 6), (2, 2), (6, 3), (5, 1)])
def test_cross_map_lrn_matches_torch(size, channels, dtype):
    """torch's forward and its hand-written backward (which is not the forward's derivative)."""
    rng = np.random.default_rng(size * 10 + channels)
    x = rng.standard_normal((2, channels, 3, 4)).astype(dtype)
    grad = rng.standard_normal(x.shape).astype(dtype)
    outputs = []
    for lib in (autojit, torch):
        layer = lib.nn.CrossMapLRN2d(size, alpha=0.1, beta=0.6, k=1.5)
        inputs = lib.tensor(x, requires_grad=True)
        out = layer(inputs)
        out.backward(lib.tensor(grad))
        outputs.append((repr(layer), list(layer.state_dict()), str(out.dtype).split(".")[-1],
                        out.detach().numpy(), inputs.grad.numpy()))
    mine, theirs = outputs
    assert mine[:3] == theirs[:3]
    tolerance = 1e-12 if dtype == "float64" else 1e-5
    for got, expected in zip(mine[3:], theirs[3:]):
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 4, 4)])
def test_cross_map_lrn_errors_match_torch(shape):
    def call(lib):
        return lib.nn.CrossMapLRN2d(3)(lib.randn(*shape))

    mine, theirs = _error(call, autojit), _error(call, torch)
    assert theirs is not None and mine == theirs
