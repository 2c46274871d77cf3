"""The new optimizers and a cycling scheduler on CUDA tensors, compiled, against the CPU (a
representative subset; tests/test_optim_torch.py checks every option on the CPU against torch).

Runs under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 (tests/cuda_simulator.py).
"""

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator
from test_cuda_training import train

import autojit

pytestmark = MARKS

SUBSET = [("NAdam", {"lr": 0.05, "weight_decay": 0.01}), ("RAdam", {"lr": 0.05}),
          ("Rprop", {"lr": 0.01}), ("ASGD", {"lr": 0.05, "t0": 1})]


@pytest.mark.parametrize(("name", "options"), SUBSET, ids=[name for name, _ in SUBSET])
def test_new_optimizers_compiled_on_cuda_match_the_cpu(name, options):
    losses_cpu, model_cpu, _ = train("cpu", name, options, compiled=True)
    losses, model, optimizer = train("cuda", name, options, compiled=True)
    np.testing.assert_allclose(losses, losses_cpu, rtol=1e-5, atol=1e-6)
    for param, param_cpu in zip(model.parameters(), model_cpu.parameters(), strict=True):
        np.testing.assert_allclose(param.detach().cpu().numpy(), param_cpu.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    for state in optimizer.state.values():
        assert all(value.is_cuda for value in state.values() if isinstance(value, autojit.Tensor)
                   and value.ndim)


def _one_cycle(device):
    autojit.manual_seed(0)
    weight = autojit.tensor(np.random.default_rng(0).standard_normal((3, 2)),
                            dtype=autojit.float32, device=device, requires_grad=True)
    optimizer = autojit.optim.Adam([weight], lr=0.01)
    scheduler = autojit.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=8)
    x = autojit.ones(4, 3, device=device)

    @autojit.compile
    def step(x):
        loss = (x @ weight).tanh().square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    losses = []
    for _ in range(7):
        losses.append(step(x).item())
        scheduler.step()
    return losses, weight.detach().cpu().numpy(), len(step.executables)


def test_one_cycle_with_cycling_betas_on_cuda_keeps_two_executables():
    losses_cpu, weight_cpu, _ = _one_cycle("cpu")
    losses, weight, executables = _one_cycle("cuda")
    np.testing.assert_allclose(losses, losses_cpu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weight, weight_cpu, rtol=1e-5, atol=1e-6)
    assert executables <= 2
