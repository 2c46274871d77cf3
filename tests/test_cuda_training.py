"""Training on CUDA tensors: modules moved with .to()/.cuda(), every optimizer eager and
compiled, optimizer state, and CPU scalars updated by a compiled step, against the CPU.

Runs under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 (tests/cuda_simulator.py).
"""

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit
from autojit import nn, optim

pytestmark = MARKS

F = nn.functional


def small_model():
    autojit.manual_seed(0)
    # No bias before the batch norm: its gradient is rounding noise, which Adam-like updates
    # scale up to full steps, differently on each device.
    return nn.Sequential(nn.Linear(4, 5, bias=False), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 3))


def test_module_to_moves_parameters_buffers_and_grads_in_place():
    model = small_model()
    weight = model[0].weight
    before = weight.detach().numpy().copy()
    model(autojit.randn(6, 4)).sum().backward()
    optimizer = optim.SGD(model.parameters(), lr=0.1)  # built before the move, as often
    assert model.cuda() is model
    assert model[0].weight is weight and weight.is_cuda and weight.grad.is_cuda
    assert model[1].running_mean.is_cuda and model[1].num_batches_tracked.is_cuda
    np.testing.assert_array_equal(weight.detach().cpu().numpy(), before)
    optimizer.step()  # updates the moved parameters themselves
    assert weight.is_cuda and not np.array_equal(weight.detach().cpu().numpy(), before)
    out = model(autojit.randn(6, 4, device="cuda"))
    assert out.is_cuda
    model.to("cpu", autojit.float64)
    assert not weight.is_cuda and weight.dtype is autojit.float64 and not weight.grad.is_cuda
    assert model[1].num_batches_tracked.dtype is autojit.int64  # integers keep their dtype
    model.to(device="cuda", dtype=autojit.float32)
    assert weight.is_cuda and weight.dtype is autojit.float32
    assert model.cpu() is model and not weight.is_cuda
    with pytest.raises(TypeError, match="only accepts floating point"):
        model.to("cuda", autojit.int32)


OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("AdamW", {"lr": 0.05}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("Adagrad", {"lr": 0.1}),
]


def train(device: str, name: str, options: dict, compiled: bool, steps: int = 3):
    model = small_model().to(device)
    optimizer = getattr(optim, name)(model.parameters(), **options)
    rng = np.random.default_rng(1)
    x = autojit.tensor(rng.standard_normal((6, 4)).astype(np.float32), device=device)
    y = autojit.tensor(rng.integers(0, 3, 6), device=device)

    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    run = autojit.compile(step) if compiled else step
    losses = [run(x, y).item() for _ in range(steps)]
    if compiled:
        assert run.eager_reason is None  # the first call, creating the state, traces apart
    return losses, model, optimizer


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize(("name", "options"), OPTIMIZERS, ids=[name for name, _ in OPTIMIZERS])
def test_optimizers_on_cuda_match_the_cpu(name, options, compiled):
    losses_cpu, model_cpu, _ = train("cpu", name, options, compiled)
    losses, model, optimizer = train("cuda", name, options, compiled)
    np.testing.assert_allclose(losses, losses_cpu, rtol=1e-5, atol=1e-6)
    for param, param_cpu in zip(model.parameters(), model_cpu.parameters(), strict=True):
        assert param.is_cuda
        np.testing.assert_allclose(param.detach().cpu().numpy(), param_cpu.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    for state in optimizer.state.values():  # the state lives with its parameter
        assert all(value.is_cuda for value in state.values() if isinstance(value, autojit.Tensor))


def test_loaded_optimizer_state_follows_its_parameters():
    losses, model_cpu, optimizer_cpu = train("cpu", "Adam", {"lr": 0.05}, compiled=False)
    model = small_model().cuda()
    optimizer = optim.Adam(model.parameters(), lr=0.05)
    optimizer.load_state_dict(optimizer_cpu.state_dict())
    for state in optimizer.state.values():
        assert state["step"].is_cuda and state["exp_avg"].is_cuda
        assert state["step"].item() == 3.0


def test_compiled_step_updates_a_cpu_scalar_it_reads_on_the_gpu():
    x = autojit.tensor([1.0, 2.0, 3.0], device="cuda")
    results = []
    for compiled in (False, True):
        counter = autojit.zeros(())

        def step(x, counter=counter):
            counter.add_(1)
            return x * (1 - 0.5 ** counter)

        run = autojit.compile(step) if compiled else step
        for _ in range(3):
            y = run(x)
        assert y.is_cuda and not counter.is_cuda and counter.item() == 3.0
        results.append(y.cpu().tolist())
    assert results[0] == results[1] == [0.875, 1.75, 2.625]


def test_a_cpu_scalar_parameter_gets_its_gradient_on_the_cpu():
    """A 0-d CPU leaf used with CUDA tensors: its .grad is a CPU tensor, as in torch, eagerly
    and compiled (where the step's graph runs on the GPU)."""
    x = autojit.tensor([1.0, 2.0, 3.0], device="cuda")
    found = []
    for compiled in (False, True):
        scale = autojit.tensor(2.0, requires_grad=True)
        weight = autojit.ones(3, device="cuda", requires_grad=True)

        def step(x, scale=scale, weight=weight):
            loss = (weight * x * scale).sum()
            loss.backward()
            return loss

        run = autojit.compile(step) if compiled else step
        for _ in range(2):
            loss = run(x)
        assert not scale.grad.is_cuda and weight.grad.is_cuda
        (direct,) = autojit.autograd.grad((weight * x * scale).sum(), [scale])
        assert not direct.is_cuda and direct.item() == 6.0
        found.append((loss.item(), scale.grad.item(), weight.grad.cpu().tolist()))
    assert found[0] == found[1] == (12.0, 12.0, [4.0, 8.0, 12.0])


def test_a_copy_to_the_call_device_inside_a_compiled_function_is_the_value_itself():
    # The common `x = x.to(device)` at the top of a training step: the compiled graph runs
    # on the call's device, so the copy there compiles; a copy elsewhere breaks the graph.
    x = autojit.randn(3, 4, device="cuda")
    device = autojit.device("cuda")
    step = autojit.compile(lambda a: a.to(device).relu() * 2, fullgraph=True)
    result = step(x)
    assert result.is_cuda
    np.testing.assert_array_equal(result.cpu().numpy(), (x.relu() * 2).cpu().numpy())
    with pytest.warns(autojit.CompileWarning, match=r"Tensor.to\(device\)"):
        back = autojit.compile(lambda a: (a * 2).cpu())(x)
    assert not back.is_cuda
    np.testing.assert_array_equal(back.numpy(), (x * 2).cpu().numpy())
