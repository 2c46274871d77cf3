"""autojit.nn.init against torch.nn.init: the structured initializations (orthogonal_,
sparse_, dirac_, eye_) for their defining properties and torch's values where deterministic,
calculate_gain for every nonlinearity, the distributions' statistics, and torch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import autojit
from autojit.nn import init

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(4, 4), (3, 6), (6, 3), (4, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    weight = init.orthogonal_(autojit.empty(*shape, dtype=autojit.float64), gain=2.0,
                              generator=np.random.default_rng(0))
    flat = weight.numpy().reshape(shape[0], -1)
    gram = flat @ flat.T if shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(gram, 4.0 * np.eye(len(gram)), atol=1e-12)


def test_sparse_zeros_each_column_as_torch():
    weight = init.sparse_(autojit.empty(10, 6), sparsity=0.3, std=0.5,
                          generator=np.random.default_rng(0))
    values = weight.numpy()
    assert ((values == 0).sum(axis=0) == math.ceil(0.3 * 10)).all()
    assert 0.3 < values[values != 0].std() < 0.7


@pytest.mark.parametrize("shape, groups", [((4, 4, 3), 1), ((6, 2, 3, 3), 3),
                                           ((2, 3, 3, 2, 5), 1), ((4, 2, 1, 3), 2)])
def test_dirac_matches_torch(shape, groups):
    got = init.dirac_(autojit.empty(*shape), groups).numpy()
    expected = torch.nn.init.dirac_(torch.empty(*shape), groups).numpy()
    np.testing.assert_array_equal(got, expected)


def test_eye_matches_torch():
    np.testing.assert_array_equal(init.eye_(autojit.empty(3, 5)).numpy(),
                                  torch.nn.init.eye_(torch.empty(3, 5)).numpy())


@pytest.mark.parametrize("nonlinearity, param", [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
    ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
    ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
    ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)])
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == \
        torch.nn.init.calculate_gain(nonlinearity, param)


@pytest.mark.parametrize("name, args", [
    ("calculate_gain", ("swish",)), ("calculate_gain", ("leaky_relu", "0.1")),
    ("orthogonal_", ((3,),)), ("sparse_", ((2, 3, 4), 0.1)), ("dirac_", ((3, 3),)),
    ("dirac_", ((3, 2, 2), 2)), ("eye_", ((2, 2, 2),)), ("kaiming_normal_", ((2, 3),)),
    ("xavier_uniform_", ((3,),)),
])
def test_errors_are_torchs(name, args):
    def call(lib):
        converted = [lib.empty(*arg) if isinstance(arg, tuple) else arg for arg in args]
        if name == "kaiming_normal_":
            return getattr(lib.nn.init, name)(*converted, mode="fan_mid")
        return getattr(lib.nn.init, name)(*converted)

    with pytest.raises(ValueError) as expected:
        call(torch)
    with pytest.raises(ValueError) as got:
        call(autojit)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("name, kwargs, mean, std", [
    ("uniform_", dict(a=-1.0, b=3.0), 1.0, 4 / math.sqrt(12)),
    ("normal_", dict(mean=0.5, std=2.0), 0.5, 2.0),
    ("xavier_uniform_", dict(gain=2.0), 0.0, 2.0 * math.sqrt(2.0 / 600)),
    ("xavier_normal_", dict(), 0.0, math.sqrt(2.0 / 600)),
    ("kaiming_uniform_", dict(a=0.5, mode="fan_out"),
     0.0, math.sqrt(2.0 / 1.25) / math.sqrt(200)),
    ("kaiming_normal_", dict(nonlinearity="linear"), 0.0, 1 / math.sqrt(400)),
    ("trunc_normal_", dict(std=1.0, a=-1.0, b=1.0), 0.0, 0.5379),
])
def test_distributions_have_torchs_moments(name, kwargs, mean, std):
    weight = autojit.empty(200, 400, dtype=autojit.float64)
    getattr(init, name)(weight, generator=np.random.default_rng(0), **kwargs)
    values = weight.numpy()
    assert abs(values.mean() - mean) < 5 * std / math.sqrt(values.size) + 1e-12
    assert values.std() == pytest.approx(std, rel=0.02)


def test_structured_fills_keep_the_parameter():
    weight = autojit.nn.Parameter(autojit.empty(4, 3))
    assert init.orthogonal_(weight) is weight and weight.requires_grad and weight.is_leaf
    assert init.dirac_(autojit.empty(2, 2, 3)).numpy()[1, 1, 1] == 1
