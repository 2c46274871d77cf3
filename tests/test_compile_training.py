"""Compiled training steps against eager: an MLP with cross-entropy for 20 steps under SGD with
momentum and under Adam, a new batch size, and a gradient-penalty step (double backward).

After N compiled steps, parameters, their .grad and the optimizer state must equal eager's to
rounding (the update is written back after each run), with one trace per distinct batch shape.
"""

import numpy as np
import pytest

import autojit
import autojit.nn as nn
import autojit.nn.functional as F


def mlp(seed=0):
    autojit.manual_seed(seed)
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 5))


def batches(count, rows, seed=3):
    generator = np.random.default_rng(seed)
    return [(autojit.tensor(generator.standard_normal((rows, 12)), dtype=autojit.float32),
             autojit.tensor(generator.integers(0, 5, rows))) for _ in range(count)]


def train(model, optimizer, data, compiled):
    def train_step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    step = autojit.compile(train_step, fullgraph=True) if compiled else train_step
    losses = [step(x, y).item() for x, y in data]
    return losses, step


def optimizers():
    return {
        "sgd-momentum": lambda parameters: autojit.optim.SGD(parameters, lr=0.05, momentum=0.9,
                                                             nesterov=True, weight_decay=1e-3),
        "adam": lambda parameters: autojit.optim.Adam(parameters, lr=1e-2, betas=(0.8, 0.99)),
    }


@pytest.mark.parametrize("name", sorted(optimizers()))
def test_twenty_compiled_steps_equal_eager(name):
    data = batches(2, 32) * 10
    results = {}
    for compiled in (True, False):
        model = mlp()
        optimizer = optimizers()[name](model.parameters())
        losses, step = train(model, optimizer, data, compiled)
        results[compiled] = (losses, model, optimizer, step)
    compiled_losses, compiled_model, compiled_optimizer, step = results[True]
    eager_losses, eager_model, eager_optimizer, _ = results[False]
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=2e-5, atol=1e-6)
    assert compiled_losses[-2] < compiled_losses[0]  # the same batch, 18 steps later
    for (name_, mine), (_, theirs) in zip(compiled_model.named_parameters(),
                                          eager_model.named_parameters()):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name_)
        assert mine.grad is not None
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-3, atol=1e-5)
    for mine, theirs in zip(compiled_model.parameters(), eager_model.parameters()):
        state, eager_state = compiled_optimizer.state[mine], eager_optimizer.state[theirs]
        assert sorted(state) == sorted(eager_state)
        for key in state:
            np.testing.assert_allclose(np.asarray(state[key].tolist()),
                                       np.asarray(eager_state[key].tolist()), rtol=1e-3,
                                       atol=1e-6, err_msg=key)
    # One trace for the first step (it creates the optimizer state), one for the rest.
    assert len(step.executables) <= 2
    assert sum(executable.calls for executable in step.executables) >= 19


def test_new_batch_size_retraces_and_stays_correct():
    model, eager_model = mlp(), mlp()
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    eager_optimizer = autojit.optim.SGD(eager_model.parameters(), lr=0.1, momentum=0.5)
    data = batches(3, 32) + batches(3, 7, seed=4) + batches(2, 32, seed=5)
    compiled_losses, step = train(model, optimizer, data, True)
    eager_losses, _ = train(eager_model, eager_optimizer, data, False)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=2e-5, atol=1e-6)
    shapes = {executable.guards.failure((autojit.zeros(7, 12), autojit.zeros(7).long()))
              is None for executable in step.executables}
    assert True in shapes  # an executable exists for batch 7
    assert len(step.executables) <= 3


def penalty_step(model, optimizer):
    def step(x):
        x = x.detach().requires_grad_(True)
        out = model(x).sum()
        (gradient,) = autojit.autograd.grad(out, x, create_graph=True)
        norm = (gradient * gradient).sum(dim=1).sqrt()
        loss = out / x.shape[0] + 10 * ((norm - 1) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.detach()
    return step


def test_gradient_penalty_step_equals_eager():
    generator = np.random.default_rng(7)
    data = [autojit.tensor(generator.standard_normal((16, 12)), dtype=autojit.float32)
            for _ in range(5)]
    losses = {}
    models = {}
    for compiled in (True, False):
        autojit.manual_seed(1)
        model = nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 1))
        optimizer = autojit.optim.Adam(model.parameters(), lr=1e-2)
        step = penalty_step(model, optimizer)
        if compiled:
            step = autojit.compile(step, fullgraph=True)
        losses[compiled] = [step(x).item() for x in data]
        models[compiled] = model
    np.testing.assert_allclose(losses[True], losses[False], rtol=1e-5, atol=1e-6)
    for mine, theirs in zip(models[True].parameters(), models[False].parameters()):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-4,
                                   atol=1e-6)
