"""Floats that change from call to call (a learning rate a scheduler sets) are read afresh on
every call, as graph inputs, instead of being traced in as constants: a compiled step keeps one
executable, and every call equals eager (compiler/tracing.py, ScalarSource; tensor/symbolic.py,
runtime floats)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning, nn

torch = pytest.importorskip("torch")


def _train(lib, compiled: bool, optimizer_name: str, scheduler, steps: int = 30):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
    with lib.no_grad():
        for index, parameter in enumerate(model.parameters()):
            generator = np.random.default_rng(index)
            parameter.copy_(lib.tensor(generator.uniform(-0.5, 0.5, tuple(parameter.shape)),
                                       dtype=lib.float32))
    optimizer = getattr(lib.optim, optimizer_name)(model.parameters(), lr=0.05)
    schedule = scheduler(lib, optimizer)
    generator = np.random.default_rng(7)
    x = lib.tensor(generator.standard_normal((16, 4)), dtype=lib.float32)
    y = lib.tensor(generator.standard_normal((16, 2)), dtype=lib.float32)

    def step(x, y):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss.detach()

    function = autojit.compile(step) if compiled else step
    losses = []
    for _ in range(steps):
        losses.append(float(function(x, y)))
        schedule.step()
    weights = [parameter.detach().numpy().copy() for parameter in model.parameters()]
    return losses, weights, function


SCHEDULERS = {
    "exponential": lambda lib, optimizer: lib.optim.lr_scheduler.ExponentialLR(optimizer, 0.9),
    "cosine": lambda lib, optimizer: lib.optim.lr_scheduler.CosineAnnealingLR(optimizer, 10),
    "step": lambda lib, optimizer: lib.optim.lr_scheduler.StepLR(optimizer, 3, gamma=0.5),
}


@pytest.mark.parametrize("optimizer_name", ["SGD", "Adam", "AdamW"])
@pytest.mark.parametrize("scheduler", sorted(SCHEDULERS))
def test_a_scheduled_learning_rate_keeps_one_executable(optimizer_name, scheduler):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        losses, weights, step = _train(autojit, True, optimizer_name, SCHEDULERS[scheduler])
    eager_losses, eager_weights, _ = _train(autojit, False, optimizer_name,
                                            SCHEDULERS[scheduler])
    torch_losses, torch_weights, _ = _train(torch, False, optimizer_name, SCHEDULERS[scheduler])
    # An optimizer's group floats are runtime floats from the first trace: one executable
    # serves every step, and no change of the rate traces again.
    assert len(step.executables) == 1
    assert step.stats().recompiles == 0
    assert step.runtime_float_paths
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(losses, torch_losses, rtol=1e-4)
    for mine, eager, reference in zip(weights, eager_weights, torch_weights):
        np.testing.assert_allclose(mine, eager, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(mine, reference, rtol=1e-4, atol=1e-5)


def test_a_float_the_function_reads_is_read_on_every_call():
    settings = {"scale": 0.5}
    step = autojit.compile(lambda x: (x * settings["scale"]).exp())
    x = autojit.tensor([0.25, -1.0, 2.0], dtype=autojit.float64)
    for scale in (0.5, 1.5, -2.0, 3.25, 1e-3):
        settings["scale"] = scale
        np.testing.assert_allclose(step(x).numpy(), np.exp(x.numpy() * scale), rtol=1e-15)
    assert len(step.executables) == 2
    header = step.forward_ir().splitlines()[0]
    assert "scalar %" in header and "settings['scale']" in header
    assert "settings['scale'].__class__ is float  # settings['scale'] is no longer a float" in \
        step.guards()


def test_the_float_is_rounded_to_the_dtype_the_op_computes_in_as_eager_rounds_it():
    settings = {"scale": 0.1}
    step = autojit.compile(lambda x: x * settings["scale"] + settings["scale"] * 3)
    x = autojit.tensor(np.linspace(-1, 1, 7), dtype=autojit.float32)
    for scale in (0.1, 1 / 3, 2.0 ** -30, 7.7):
        settings["scale"] = scale
        got = step(x)
        assert got.dtype is autojit.float32
        np.testing.assert_array_equal(got.numpy(), (x * scale + scale * 3).numpy())


def test_a_branch_on_a_runtime_float_is_a_guard_on_the_branch_taken():
    settings = {"threshold": 0.5}

    def function(x):
        if settings["threshold"] > 1.0:
            return x * 2
        return x - settings["threshold"]

    step = autojit.compile(function)
    x = autojit.ones(3)
    outcomes, expected = [], []
    for threshold in (0.5, 0.25, 0.75, 2.0, 3.0, 0.1):
        settings["threshold"] = threshold
        outcomes.append(step(x).tolist())
        expected.append(function(x).tolist())
    assert outcomes == expected
    # 0.5 (constant), then the runtime float below 1, then above 1: three traces at most.
    assert len(step.executables) <= 3
    assert "broke a condition the trace relied on" in step.guards()


def test_a_float_needed_as_a_python_value_is_specialized_not_wrong():
    settings = {"scale": 4.0}
    step = autojit.compile(lambda x: x * math.sqrt(settings["scale"]))
    x = autojit.ones(2, dtype=autojit.float64)
    for scale in (4.0, 9.0, 16.0, 9.0):
        settings["scale"] = scale
        assert step(x).tolist() == [math.sqrt(scale)] * 2


def test_round_of_a_runtime_float_stays_symbolic():
    settings = {"scale": 0.125}
    step = autojit.compile(lambda x: x * round(settings["scale"], 2))
    x = autojit.ones(2, dtype=autojit.float64)
    for scale in (0.125, 0.25, 0.5, 0.375):
        settings["scale"] = scale
        assert step(x).tolist() == [round(scale, 2)] * 2
    assert step.runtime_float_paths and len(step.executables) == 2


def test_a_float_the_function_writes_stays_a_constant():
    settings = {"scale": 1.0}

    def function(x):
        settings["scale"] = settings["scale"] * 0.5
        return x * settings["scale"]

    step = autojit.compile(function)
    eager_settings = {"scale": 1.0}
    x = autojit.ones(2, dtype=autojit.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for _ in range(4):
            got = step(x).tolist()
            eager_settings["scale"] *= 0.5
            assert got == [eager_settings["scale"]] * 2
            assert settings["scale"] == eager_settings["scale"]


def test_an_optimizers_floats_are_read_on_every_call_from_the_first_trace():
    def run(lib, wrap):
        weight = lib.tensor([1.0, -2.0], requires_grad=True)
        optimizer = lib.optim.Adam([weight], lr=0.1)

        def step():
            optimizer.zero_grad()
            (weight ** 2).sum().backward()
            optimizer.step()

        compiled = wrap(step)
        compiled()
        compiled()
        optimizer.param_groups[0]["lr"] = 0.5
        optimizer.param_groups[0]["eps"] = 1e-3
        compiled()
        return weight.detach().numpy(), compiled

    expected, _ = run(torch, lambda step: step)
    got, compiled = run(autojit, autojit.compile)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    # The first call made the optimizer's state; the executable of the second served the
    # third, the new rate and eps read where the scheduler (here the caller) put them.
    assert compiled.stats().recompiles == 0 and compiled.executables[0].calls == 2
    assert "optimizer.param_groups[0]['lr']" in compiled.forward_ir().splitlines()[0]
    # dynamic=False keeps them constants: a changed rate traces again.
    got, fixed = run(autojit, lambda step: autojit.compile(step, dynamic=False))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert fixed.stats().recompiles == 1 and not fixed.runtime_float_paths


def test_dynamic_false_keeps_floats_constant():
    settings = {"scale": 1.0}
    step = autojit.compile(lambda x: x * settings["scale"], dynamic=False)
    x = autojit.ones(2)
    for scale in (1.0, 2.0, 3.0):
        settings["scale"] = scale
        assert step(x).tolist() == [scale] * 2
    assert len(step.executables) == 3 and not step.runtime_float_paths


def test_an_int_that_changes_is_read_on_every_call():
    settings = {"power": 2}
    step = autojit.compile(lambda x: x ** settings["power"])
    x = autojit.tensor([2.0, 3.0])
    for power in (2, 3, 4, 5):
        settings["power"] = power
        assert step(x).tolist() == [2.0 ** power, 3.0 ** power]
    assert len(step.executables) == 2 and step.runtime_float_paths


def test_an_int_used_as_a_size_is_specialized():
    settings = {"rows": 2}
    step = autojit.compile(lambda x: x[:settings["rows"]] * 2)
    x = autojit.arange(6.0)
    for rows in (2, 3, 4, 3):
        settings["rows"] = rows
        assert step(x).tolist() == (x[:rows] * 2).tolist()
    # 2 as a constant, then a runtime int specialized to 3 and to 4; 3 again reuses its trace
    assert len(step.executables) == 3


def test_a_runtime_float_reaches_a_compiled_backward():
    settings = {"scale": 0.5}
    step = autojit.compile(lambda x: (x * settings["scale"]).tanh().sum())
    for scale in (0.5, 1.5, -0.25):
        settings["scale"] = scale
        leaf = autojit.tensor([0.1, -0.3, 0.7], dtype=autojit.float64, requires_grad=True)
        step(leaf).backward()
        reference = torch.tensor([0.1, -0.3, 0.7], dtype=torch.float64, requires_grad=True)
        (reference * scale).tanh().sum().backward()
        np.testing.assert_allclose(leaf.grad.numpy(), reference.grad.numpy(), rtol=1e-12)
    assert len(step.executables) == 2


def test_a_runtime_float_in_a_module_attribute():
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(3, 3)
            self.temperature = 1.0

        def forward(self, x):
            return nn.functional.softmax(self.linear(x) / self.temperature, -1)

    model = Scaled()
    step = autojit.compile(model)
    x = autojit.randn(4, 3)
    for temperature in (1.0, 0.5, 2.0, 0.1):
        model.temperature = temperature
        np.testing.assert_allclose(step(x).detach().numpy(), model(x).detach().numpy(),
                                   rtol=1e-6)
    assert len(step.executables) == 2


def test_a_float_in_an_arguments_attribute_is_read_there():
    """A float changing in an attribute of an argument (`cfg.scale`): the symbol is put at that
    attribute, not in the argument's place (the function then read `cfg.scale` of a number,
    and every later change traced again)."""
    class Config:
        pass

    f = autojit.compile(lambda x, config: x * config.scale)
    config, x = Config(), autojit.ones(2)
    for scale in (2.0, 3.0, 4.0, 5.0):
        config.scale = scale
        assert f(x, config).tolist() == [scale, scale]
        assert config.scale == scale  # put back where it was
    assert f.stats().traces == 2
