"""The eager relu and threshold_backward of large arrays as native loops
(codegen/cpu/eager_select.py through ops/elementwise/math_primitives.py's NATIVE): the bits of
the NumPy select they replace and torch's values, -0.0, NaN, infinities and thresholds of
either sign included, float32 and float64; small and strided operands keep the NumPy form;
a ReLU network's gradients through them, against torch."""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit.ops import elementwise as ew
from autojit.ops.elementwise import math_primitives, native_math

torch = pytest.importorskip("torch")


def sample(dtype, seed=0) -> np.ndarray:
    """Long enough for the native loop and no multiple of a vector, with the special values."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(native_math.MIN_ELEMENTS + 37).astype(dtype)
    x[:9] = [-0.0, 0.0, np.nan, -np.inf, np.inf, -1.0, 0.25, -0.25, 0.3]
    return x


@pytest.fixture
def native_calls(monkeypatch):
    """The names of the native loops that ran."""
    calls = []
    run = math_primitives.NATIVE

    def spy(name, arrays, threshold=0.0):
        result = run(name, arrays, threshold)
        calls.append(name if result is not None else None)
        return result

    monkeypatch.setattr(math_primitives, "NATIVE", spy)
    return calls


def numpy_relu(x):
    return ew.WHERE.impl(np.less(x, 0), 0, x)


def numpy_threshold_backward(grad, x, threshold):
    return ew.WHERE.impl(np.less_equal(x, x.dtype.type(threshold)), np.zeros((), grad.dtype),
                         grad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_is_the_selects_bits_and_torchs(dtype, native_calls):
    x = sample(dtype)
    mine = autojit.relu(autojit.tensor(x)).numpy()
    assert native_calls == ["relu"]
    assert mine.tobytes() == numpy_relu(x).tobytes()
    theirs = torch.relu(torch.from_numpy(x)).numpy()
    assert mine.tobytes() == theirs.tobytes()  # -0.0 and NaN kept, as torch keeps them


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threshold", [0.0, 0.3, -0.25, 1e-40])
def test_threshold_backward_is_the_selects_bits_and_torchs(dtype, threshold, native_calls):
    x, grad = sample(dtype), sample(dtype, seed=1)
    mine = math_primitives.threshold_backward(autojit.tensor(grad), autojit.tensor(x),
                                              threshold).numpy()
    assert native_calls == ["threshold_backward"]
    assert mine.tobytes() == numpy_threshold_backward(grad, x, threshold).tobytes()
    theirs = torch.ops.aten.threshold_backward(torch.from_numpy(grad), torch.from_numpy(x),
                                               threshold).numpy()
    assert mine.tobytes() == theirs.tobytes()


def test_small_and_strided_operands_keep_the_numpy_select(native_calls):
    x = sample(np.float32)
    small = x[:100]
    strided = np.concatenate([x, x]).reshape(2, -1).T  # a transposed view
    for array in (small, strided):
        mine = autojit.relu(autojit.tensor(array)).numpy()
        np.testing.assert_array_equal(mine, numpy_relu(np.ascontiguousarray(array)))
    assert native_calls == []
    grad = sample(np.float64)  # promoted with x before the select: float64, as torch's
    mine = math_primitives.threshold_backward(autojit.tensor(grad), autojit.tensor(x), 0.0)
    theirs = torch.ops.aten.threshold_backward(torch.from_numpy(grad), torch.from_numpy(x), 0.0)
    assert mine.dtype == autojit.float64 and theirs.dtype == torch.float64
    assert mine.numpy().tobytes() == theirs.numpy().tobytes()


def test_a_relu_network_trains_as_torchs(native_calls):
    """A ReLU MLP's gradients, the relus and their gradients run by the native loops."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((256, 256)).astype(np.float32)
    w1 = (rng.standard_normal((256, 256)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((256, 8)) * 0.1).astype(np.float32)

    def gradients(library, make):
        weights = [make(w1), make(w2)]
        hidden = library.relu(make(x) @ weights[0])
        loss = (library.relu(hidden @ weights[1]) ** 2).sum()
        return [g.detach().numpy() for g in library.autograd.grad(loss, weights)]

    mine = gradients(autojit, lambda v: autojit.tensor(v, requires_grad=True))
    theirs = gradients(torch, lambda v: torch.tensor(v, requires_grad=True))
    assert "relu" in native_calls and "threshold_backward" in native_calls
    for ours, reference in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-4)
