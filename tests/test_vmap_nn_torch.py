"""vmap over common nn pieces against torch.func.vmap: linear, a convolution of single images,
layer norm, attention, cross entropy, an embedding lookup, and a small MLP's per-sample
gradients (functional_call under vmap(grad)). Each runs as one batched computation: a
primitive without a batching rule would run once per index with a warning, an error here."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import func as F
from autojit.tensor import once

torch = pytest.importorskip("torch")
TF = torch.func

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def no_fallback(monkeypatch):
    """A primitive run once per index of the batch warns (again: the warning is given once
    per op in a process), as an error."""
    monkeypatch.setattr(once, "given", set())
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: there is no batching rule")
        yield


def _array(*shape):
    return RNG.standard_normal(shape)


def _numpy(value):
    if isinstance(value, dict):
        return {key: _numpy(item) for key, item in value.items()}
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    if isinstance(value, autojit.Tensor):
        return np.asarray(value.detach())
    return value


def _assert_close(actual, expected):
    actual, expected = _numpy(actual), _numpy(expected)
    if isinstance(expected, dict):
        assert actual.keys() == expected.keys()
        for key in expected:
            _assert_close(actual[key], expected[key])
        return
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=1e-7, atol=1e-9)


def _vmap_both(function_of, arrays, in_dims=0, **extra):
    """vmap(function_of(lib)) on the arrays as autojit and as torch tensors."""
    ours = F.vmap(function_of(autojit), in_dims, **extra)(*[autojit.tensor(a) for a in arrays])
    theirs = TF.vmap(function_of(torch), in_dims, **extra)(*[torch.tensor(a) for a in arrays])
    _assert_close(ours, theirs)


def test_linear():
    _vmap_both(lambda lib: lambda x, w, b: lib.nn.functional.linear(x, w, b),
               (_array(3, 2, 4), _array(5, 4), _array(5)), in_dims=(0, None, None))


def test_linear_with_batched_weights():
    _vmap_both(lambda lib: lambda x, w: lib.nn.functional.linear(x, w),
               (_array(3, 4), _array(3, 5, 4)))


def test_conv2d_of_single_images():
    def function_of(lib):
        def convolve(image, weight):
            return lib.nn.functional.conv2d(image.unsqueeze(0), weight, padding=1).squeeze(0)
        return convolve

    # The batch is the images' last dim: in_dims moves it.
    _vmap_both(function_of, (_array(2, 5, 5, 3), _array(4, 2, 3, 3)), in_dims=(3, None))


def test_layer_norm():
    _vmap_both(lambda lib: lambda x, w, b: lib.nn.functional.layer_norm(x, (4,), w, b),
               (_array(3, 2, 4), _array(4), _array(4)), in_dims=(0, None, None))


def test_scaled_dot_product_attention():
    def function_of(lib):
        return lambda q, k, v: lib.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=True)

    _vmap_both(function_of, (_array(2, 3, 4), _array(2, 3, 4), _array(2, 3, 4)))


def test_cross_entropy_per_example():
    targets = np.array([[1, 0], [2, 2], [0, 1]])
    _vmap_both(lambda lib: lambda logits, target: lib.nn.functional.cross_entropy(
        logits, target, label_smoothing=0.1), (_array(3, 2, 3), targets))


def test_embedding_lookup():
    indices = np.array([[0, 3], [2, 2], [4, 1]])
    _vmap_both(lambda lib: lambda index, table: lib.nn.functional.embedding(index, table),
               (indices, _array(5, 3)), in_dims=(0, None))
    # A table per example too.
    _vmap_both(lambda lib: lambda index, table: lib.nn.functional.embedding(index, table),
               (indices, _array(3, 5, 3)))


def test_mlp_per_sample_gradients():
    layers = [_array(8, 4), _array(8), _array(3, 8), _array(3)]
    inputs, targets = _array(5, 4), np.array([0, 2, 1, 1, 0])

    def per_sample(lib, func):
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
        params = {name: lib.tensor(array) for (name, _), array in
                  zip(model.named_parameters(), layers)}

        def loss(parameters, x, target):
            logits = func.functional_call(model, parameters, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(logits, target.unsqueeze(0))

        return func.vmap(func.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(inputs), lib.tensor(targets))

    _assert_close(per_sample(autojit, F), per_sample(torch, TF))
