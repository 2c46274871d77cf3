"""autojit.nn.utils against torch.nn.utils: gradient clipping (clip_grad_norm_ for each norm
type, clip_grad_value_, get_total_norm, clip_grads_with_norm_, error_if_nonfinite),
parameters_to_vector and vector_to_parameters, and a compiled training step that clips."""

from __future__ import annotations

import math

import numpy as np
import pytest

import autojit
from autojit.nn import utils

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(0)
ARRAYS = [_rng.standard_normal((2, 3)), _rng.standard_normal(4), _rng.standard_normal(1)]


def _params(lib, dtype="float64", with_grads=(0, 1, 2), scale=1.0):
    params = [lib.nn.Parameter(lib.tensor(array, dtype=getattr(lib, dtype)))
              for array in ARRAYS]
    for index in with_grads:
        params[index].grad = lib.tensor(ARRAYS[index] * scale + 0.5, dtype=getattr(lib, dtype))
    return params


def _grads(params) -> list:
    return [None if param.grad is None else param.grad.numpy().copy() for param in params]


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 0.5, 3.0, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    params, reference = _params(autojit), _params(torch)
    total = utils.clip_grad_norm_(params, max_norm, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(reference, max_norm, norm_type)
    assert isinstance(total, autojit.Tensor) and total.ndim == 0
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    for got, want in zip(_grads(params), _grads(reference), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_clip_grad_norm_float32_skips_missing_grads_and_takes_one_tensor():
    params, reference = _params(autojit, "float32", (0, 2)), _params(torch, "float32", (0, 2))
    total = utils.clip_grad_norm_(iter(params), 0.3)
    expected = torch.nn.utils.clip_grad_norm_(iter(reference), 0.3)
    assert total.dtype is autojit.float32
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-6)
    for got, want in zip(_grads(params), _grads(reference), strict=True):
        assert (got is None) == (want is None)
        if got is not None:
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=1e-6)
    single = _params(autojit)[1]
    np.testing.assert_allclose(utils.clip_grad_norm_(single, 1.0).item(),
                               torch.nn.utils.clip_grad_norm_(_params(torch)[1], 1.0).item())


def test_no_gradients_give_a_zero_norm():
    assert utils.clip_grad_norm_(_params(autojit, with_grads=()), 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        utils.clip_grad_norm_((p for p in []), 1.0)


def test_error_if_nonfinite_as_torch():
    for lib in (torch, autojit):
        params = _params(lib, scale=math.inf)
        with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients "
                                               "from `parameters` is non-finite"):
            lib.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    params, reference = _params(autojit, scale=math.inf), _params(torch, scale=math.inf)
    assert utils.clip_grad_norm_(params, 1.0).item() == math.inf
    torch.nn.utils.clip_grad_norm_(reference, 1.0)
    np.testing.assert_array_equal(_grads(params)[0], _grads(reference)[0])


def test_total_norm_and_clip_with_norm_as_torch():
    params, reference = _params(autojit), _params(torch)
    total = utils.get_total_norm([p.grad for p in params], 3.0, foreach=True)
    expected = torch.nn.utils.get_total_norm([p.grad for p in reference], 3.0)
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    utils.clip_grads_with_norm_(params, 0.7, total)
    torch.nn.utils.clip_grads_with_norm_(reference, 0.7, expected)
    for got, want in zip(_grads(params), _grads(reference), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_clip_grad_value_matches_torch():
    params, reference = _params(autojit), _params(torch)
    assert utils.clip_grad_value_(params, 0.6, foreach=False) is None
    torch.nn.utils.clip_grad_value_(reference, 0.6)
    for got, want in zip(_grads(params), _grads(reference), strict=True):
        np.testing.assert_array_equal(got, want)


def test_deprecated_clip_grad_norm_warns():
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        utils.clip_grad_norm(_params(autojit), 1.0)


def test_parameters_to_vector_and_back():
    params, reference = _params(autojit), _params(torch)
    vector = utils.parameters_to_vector(params)
    np.testing.assert_array_equal(
        vector.detach().numpy(), torch.nn.utils.parameters_to_vector(reference).detach().numpy())
    assert vector.requires_grad
    utils.vector_to_parameters(autojit.arange(11.0, dtype=autojit.float64), params)
    torch.nn.utils.vector_to_parameters(torch.arange(11.0, dtype=torch.float64), reference)
    for param, expected in zip(params, reference, strict=True):
        assert param.shape == tuple(expected.shape)
        np.testing.assert_array_equal(param.detach().numpy(), expected.detach().numpy())
    for lib in (torch, autojit):
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            lib.nn.utils.vector_to_parameters([1.0], _params(lib))


def _clipped_training(compiled, steps=4):
    rng = np.random.default_rng(2)
    autojit.manual_seed(0)
    model = autojit.nn.Linear(3, 2)
    with autojit.no_grad():
        model.weight.copy_(autojit.tensor(rng.standard_normal((2, 3)), dtype=autojit.float32))
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
    x = autojit.tensor(rng.standard_normal((5, 3)) * 4, dtype=autojit.float32)

    def train_step(x):
        loss = model(x).square().mean()
        loss.backward()
        norm = utils.clip_grad_norm_(model.parameters(), 0.5)
        utils.clip_grad_value_(model.parameters(), 0.3)
        optimizer.step()
        optimizer.zero_grad()
        return norm

    function = autojit.compile(train_step, fullgraph=True) if compiled else train_step
    norms = [function(x).item() for _ in range(steps)]
    return norms, model.weight.detach().numpy().copy(), function


def test_clipping_compiles_and_matches_eager():
    eager_norms, eager_weight, _ = _clipped_training(False)
    norms, weight, function = _clipped_training(True)
    np.testing.assert_allclose(norms, eager_norms, rtol=1e-5)
    np.testing.assert_allclose(weight, eager_weight, rtol=1e-5, atol=1e-6)
    assert len(function.executables) == 1
