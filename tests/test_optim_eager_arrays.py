"""Eager optimizer updates on the arrays (optim/eager_arrays.py): the same bits, versions and
errors as the updates written in ops, taken eagerly and never while tracing."""

from __future__ import annotations

import numpy as np
import pytest
from torch_compare import torch

import autojit
from autojit.optim import adam, eager_arrays

CONFIGS = {
    "adam": (autojit.optim.Adam, {}),
    "adam_l2": (autojit.optim.Adam, {"weight_decay": 0.1}),
    "adam_amsgrad_maximize": (autojit.optim.Adam, {"amsgrad": True, "maximize": True}),
    "adamw": (autojit.optim.AdamW, {}),
    "adamw_amsgrad": (autojit.optim.AdamW, {"amsgrad": True, "weight_decay": 0.3,
                                            "lr": 0.05, "betas": (0.8, 0.99)}),
}


def _run(config, dtype, arrays_allowed, steps=4, shapes=((5, 7), (7,), ())):
    """Parameters and state after `steps` steps of quadratic losses, with the array path
    allowed or not; and how often it ran."""
    kind, options = CONFIGS[config]
    rng = np.random.default_rng(3)
    params = [autojit.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
              for shape in shapes]
    optimizer = kind(params, **options)
    taken = []
    original = adam.Adam._update_arrays

    def spy(self, *args):
        taken.append(1)
        return original(self, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(adam.Adam, "_update_arrays", spy)
        if not arrays_allowed:
            patch.setattr(eager_arrays, "arrays_of", lambda *tensors: None)
        for step in range(steps):
            targets = [rng.standard_normal(p.shape).astype(dtype) for p in params]
            loss = sum(((p - autojit.tensor(t)) ** 2 * (step + 1)).sum()
                       for p, t in zip(params, targets))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    state = [(p.detach().numpy().copy(), p._version,
              {key: (value.numpy().copy(), value._version)
               for key, value in optimizer.state[p].items()})
             for p in params]
    return state, len(taken)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_array_update_has_the_ops_bits_and_versions(config, dtype):
    fast, taken = _run(config, dtype, True)
    slow, not_taken = _run(config, dtype, False)
    assert taken == 12 and not_taken == 0
    _assert_same(fast, slow)


def _assert_same(fast, slow):
    for (value, version, state), (value_ops, version_ops, state_ops) in zip(fast, slow):
        assert value.tobytes() == value_ops.tobytes()
        assert version == version_ops
        assert state.keys() == state_ops.keys()
        for key in state:
            assert state[key][0].tobytes() == state_ops[key][0].tobytes(), key
            assert state[key][1] == state_ops[key][1], key


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_native_update_has_the_ufuncs_bits_and_versions(config, dtype):
    # Parameters of one part and of one per core (codegen/cpu/eager_update.py), and small
    # ones beside them (NumPy's calls): the native routine against the calls it replaces.
    shapes = ((300, 150), (5001,), (5, 7), ())
    with pytest.MonkeyPatch.context() as patch:
        native = _run(config, dtype, True, steps=3, shapes=shapes)[0]
        patch.setattr(eager_arrays, "NATIVE_ELEMENTS", 1 << 60)
        ufuncs = _run(config, dtype, True, steps=3, shapes=shapes)[0]
    _assert_same(native, ufuncs)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_array_update_like_torch(config):
    kind, options = CONFIGS[config]
    rng = np.random.default_rng(5)
    start = rng.standard_normal((4, 6)).astype(np.float32)
    results = []
    for module, optimizer_kind in ((autojit, kind), (torch, getattr(torch.optim, kind.__name__))):
        weight = module.tensor(start.copy(), requires_grad=True)
        optimizer = optimizer_kind([weight], **options)
        for step in range(5):
            optimizer.zero_grad()
            ((weight * (step + 1.5)) ** 2).sum().backward()
            optimizer.step()
        results.append(weight.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


def test_a_parameter_saved_for_backward_is_still_caught_after_an_array_update():
    weight = autojit.tensor([1.0, 2.0], requires_grad=True)
    optimizer = autojit.optim.AdamW([weight])
    (weight * weight).sum().backward()
    loss = (weight * weight).sum()  # saves weight at its current version
    optimizer.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_tracing_runs_the_ops_and_matches_eager():
    def make():
        weight = autojit.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4),
                                requires_grad=True)
        return weight, autojit.optim.AdamW([weight], lr=0.1)

    def train(weight, optimizer):
        optimizer.zero_grad()
        (weight.sin() ** 2).sum().backward()
        optimizer.step()

    eager_weight, eager_optimizer = make()
    compiled_weight, compiled_optimizer = make()
    compiled = autojit.compile(train)
    taken = []
    original = adam.Adam._update_arrays
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(adam.Adam, "_update_arrays",
                      lambda self, *args: (taken.append(1), original(self, *args)))
        for _ in range(3):
            train(eager_weight, eager_optimizer)
        eager_taken = len(taken)
        for _ in range(3):
            compiled(compiled_weight, compiled_optimizer)
    # The compiled function's first call makes the state, eagerly (a state call): it takes
    # the array path once; none while tracing or compiled.
    assert eager_taken == 3 and len(taken) == 4 and compiled.stats().state_calls == 1
    np.testing.assert_allclose(compiled_weight.detach().numpy(),
                               eager_weight.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_a_tensor_learning_rate_runs_the_ops():
    weight = autojit.tensor([1.0, -1.0], requires_grad=True)
    optimizer = autojit.optim.Adam([weight], lr=autojit.tensor(0.1))
    (weight ** 2).sum().backward()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(adam.Adam, "_update_arrays",
                      lambda *args: pytest.fail("the array update ran"))
        optimizer.step()
    np.testing.assert_allclose(weight.detach().numpy(), [0.9, -0.9], rtol=1e-6)
