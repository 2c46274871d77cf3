"""GradScaler against torch.amp.GradScaler: the scale sequence, the skipped steps and the
parameters over training steps with infs injected, eagerly and inside autojit.compile; its
checks and errors, state dicts, the disabled pass-through and the deprecated forms
(docs/amp.md).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from torch_compare import torch

import autojit

rng = np.random.default_rng(3)
W = np.asarray(rng.standard_normal((3, 4)), np.float32)
X = np.asarray(rng.standard_normal((5, 4)), np.float32)
INF_STEPS = (1, 4, 7)


def _train(lib, optimizer_name: str, compiled: bool = False, steps: int = 10):
    """A few steps of a small model with GradScaler, an inf injected into the loss at
    INF_STEPS; returns the scale, growth tracker and weights after each step."""
    w = lib.tensor(W, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    x = lib.tensor(X)
    optimizer = getattr(lib.optim, optimizer_name)([w, b], lr=0.01)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 14, growth_interval=2)

    def step(x, factor):
        optimizer.zero_grad()
        with lib.autocast("cpu", dtype=lib.float16 if lib is autojit else lib.bfloat16,
                          enabled=False):
            loss = ((x @ w.t() + b) ** 2).mean() * factor
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        lib.nn.utils.clip_grad_norm_([w, b], 10.0)
        scaler.step(optimizer)
        scaler.update()
        return loss.detach()

    run = lib.compile(step) if compiled else step
    history = []
    for index in range(steps):
        factor = lib.tensor(float("inf") if index in INF_STEPS else 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run(x, factor)
        history.append((scaler.get_scale(), scaler._get_growth_tracker(),
                        w.detach().numpy().copy(), b.detach().numpy().copy()))
    return history, run


@pytest.mark.parametrize("optimizer_name", ["SGD", "Adam"])
def test_training_steps_match_torch_eager_and_compiled(optimizer_name):
    theirs, _ = _train(torch, optimizer_name)
    mine, _ = _train(autojit, optimizer_name)
    compiled, step = _train(autojit, optimizer_name, compiled=True)
    for (t_scale, t_tracker, t_w, t_b), (scale, tracker, w, b), (c_scale, c_tracker, c_w, c_b) \
            in zip(theirs, mine, compiled):
        assert (scale, tracker) == (t_scale, t_tracker) == (c_scale, c_tracker)
        np.testing.assert_allclose(w, t_w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b, t_b, rtol=1e-5, atol=1e-6)
        # compiled steps equal eager ones (the gradient norm clip_grad_norm_ divides by is a
        # sum, which compiled code may add in another order)
        np.testing.assert_allclose(c_w, w, rtol=1e-6)
        np.testing.assert_allclose(c_b, b, rtol=1e-6)
    # The first step creates the optimizer's state (it runs eagerly); the steps after it
    # compile, one trace for the calls that step and one for those that skip.
    stats = step.stats()
    assert stats.compiled_calls >= 8 and stats.traces <= 3, stats


def test_the_update_rule_matches_torch_with_odd_factors():
    scales = {}
    for lib in (torch, autojit):
        scale = lib.full((), 3.0e4, dtype=lib.float32)
        tracker = lib.full((), 0, dtype=lib.int32)
        seen = []
        for found in (0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0):
            update = torch._amp_update_scale_ if lib is torch else \
                autojit.amp.grad_scaler._amp_update_scale_
            update(scale, tracker, lib.tensor(found), 3.3, 0.37, 3)
            seen.append((scale.item(), tracker.item()))
        # growth past float32's range keeps the scale
        big = lib.full((), 3.0e38, dtype=lib.float32)
        update(big, lib.full((), 2, dtype=lib.int32), lib.tensor(0.0), 2.0, 0.5, 3)
        scales[lib.__name__] = (seen, big.item())
    assert scales["autojit"] == scales["torch"]


def _outcome(lib, action):
    w = lib.ones(2, requires_grad=True)
    optimizer = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu")
    try:
        result = action(lib, scaler, optimizer, w)
    except (RuntimeError, AssertionError, ValueError) as error:
        return type(error).__name__, str(error).replace("torch.", "autojit.")
    return "ok", result


ACTIONS = {
    "unscale twice": lambda lib, s, o, w: (s.scale(w.sum()).backward(), s.unscale_(o),
                                           s.unscale_(o)),
    "unscale after step": lambda lib, s, o, w: (s.scale(w.sum()).backward(), s.step(o),
                                                s.unscale_(o)),
    "step twice": lambda lib, s, o, w: (s.scale(w.sum()).backward(), s.step(o), s.step(o)),
    "step before scale": lambda lib, s, o, w: s.step(o),
    "update before scale": lambda lib, s, o, w: s.update(),
    "update without step": lambda lib, s, o, w: (s.scale(w.sum()), s.update()),
    "closure": lambda lib, s, o, w: (s.scale(w.sum()), s.step(o, closure=lambda: 0)),
    "no grads": lambda lib, s, o, w: (s.scale(w.sum()), s.step(o), s.get_scale())[2],
    "fp16 grads": lambda lib, s, o, w: (
        o.add_param_group({"params": [lib.ones(2, dtype=lib.float16, requires_grad=True)]}),
        s.scale(o.param_groups[1]["params"][0].sum()).backward(), s.unscale_(o)),
    "new scale float": lambda lib, s, o, w: (s.scale(w.sum()), s.update(8.0), s.get_scale())[2],
    "new scale tensor": lambda lib, s, o, w: (s.scale(w.sum()), s.update(lib.tensor(4.0)),
                                              s.get_scale())[2],
    "new scale bad": lambda lib, s, o, w: (s.scale(w.sum()), s.update(lib.ones(2))),
    "scale a list": lambda lib, s, o, w: [t.tolist() for t in s.scale([w, (w * 2, w)])[1]],
    "scale a number": lambda lib, s, o, w: s.scale([w, 3.0]),
    "bad factors": lambda lib, s, o, w: lib.amp.GradScaler("cpu", growth_factor=0.9),
    "empty state dict": lambda lib, s, o, w: s.load_state_dict({}),
    "state dict": lambda lib, s, o, w: (s.scale(w.sum()).backward(), s.step(o), s.update(),
                                        s.state_dict())[3],
    "load state dict": lambda lib, s, o, w: (s.load_state_dict(
        {"scale": 8.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 5,
         "_growth_tracker": 2}), s.scale(w.sum()), s.state_dict())[2],
    "getters": lambda lib, s, o, w: (s.get_growth_factor(), s.get_backoff_factor(),
                                     s.get_growth_interval(), s.is_enabled(), s.get_scale()),
}


@pytest.mark.parametrize("name", list(ACTIONS))
def test_checks_errors_and_state_as_torch(name):
    assert _outcome(autojit, ACTIONS[name]) == _outcome(torch, ACTIONS[name])


def test_disabled_is_a_pass_through_and_cuda_without_a_gpu_disables():
    loss = autojit.tensor(2.0, requires_grad=True)
    w = autojit.ones(2, requires_grad=True)
    optimizer = autojit.optim.SGD([w], lr=0.5)
    scaler = autojit.amp.GradScaler("cpu", enabled=False)
    assert scaler.scale(loss) is loss and not scaler.is_enabled()
    (w * w).sum().backward()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    assert w.tolist() == [0.0, 0.0] and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    with pytest.warns(FutureWarning, match=r"autojit.amp.GradScaler\('cpu', args...\)"):
        assert autojit.cpu.amp.GradScaler().is_enabled()
    gpu = autojit.cuda.is_available()  # Numba's simulator, if another test module enabled it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert autojit.amp.GradScaler().is_enabled() == gpu
        assert autojit.cuda.amp.GradScaler().is_enabled() == gpu
    expected = [FutureWarning] if gpu else [UserWarning, FutureWarning, UserWarning]
    assert [w.category for w in caught] == expected
    assert "CUDA is not available.  Disabling." in str(caught[0].message) or gpu
    assert "autojit.amp.GradScaler('cuda', args...)" in str(caught[-1 if gpu else 1].message)


def test_pickles_between_iterations_as_torch():
    w = autojit.ones(2, requires_grad=True)
    optimizer = autojit.optim.SGD([w], lr=0.1)
    scaler = autojit.amp.GradScaler("cpu", init_scale=16.0, growth_interval=1)
    scaler.scale(w.sum()).backward()
    scaler.step(optimizer)
    with pytest.raises(AssertionError, match="may only be pickled"):
        pickle.dumps(scaler)
    scaler.update()
    copy = pickle.loads(pickle.dumps(scaler))
    assert copy.get_scale() == 32.0 and copy.state_dict() == scaler.state_dict()
