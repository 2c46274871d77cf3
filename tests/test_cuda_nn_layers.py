"""Every layer family of autojit.nn trains on CUDA tensors, compiled: each row of
tests/nn_training_rows.py (the rows tests/test_nn_compiled_layers.py trains on the CPU against
eager and torch) takes two compiled training steps with its model and inputs on the device,
with CompileWarning an error (no graph break, no fallback to eager), and its losses and final
parameters and buffers match the same compiled steps on the CPU.

Runs under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 (tests/cuda_simulator.py);
two steps, not ten, because the simulator runs each GPU thread as a Python thread.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator
from nn_training_rows import rows, total_loss

import autojit

pytestmark = MARKS

ROWS = rows(autojit)
STEPS = 2


def _moved(value, device: str):
    if isinstance(value, autojit.Tensor):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(_moved(item, device) for item in value)
    return value


def train(device: str, name: str):
    """(losses, final state as NumPy arrays) of STEPS compiled steps of row `name`."""
    build, make_inputs = ROWS[name]
    autojit.manual_seed(0)
    model = build().to(device)
    inputs = _moved(make_inputs(np.random.default_rng(0)), device)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def step(*inputs):
        optimizer.zero_grad()
        loss = total_loss(model(*inputs))
        loss.backward()
        optimizer.step()
        return loss.detach()

    function = autojit.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        losses = [function(*inputs).item() for _ in range(STEPS)]
    state = {key: value.detach().cpu().numpy() for key, value in model.state_dict().items()}
    devices = {value.device.type for value in model.state_dict().values()}
    return losses, state, devices


@pytest.mark.parametrize("name", list(ROWS))
def test_compiled_training_on_cuda_matches_the_cpu(name):
    losses, state, devices = train("cuda", name)
    losses_cpu, state_cpu, _ = train("cpu", name)
    assert devices <= {"cuda"}
    np.testing.assert_allclose(losses, losses_cpu, rtol=1e-5, atol=1e-6)
    assert state.keys() == state_cpu.keys()
    for key, value in state_cpu.items():
        assert state[key].dtype == value.dtype, key
        np.testing.assert_allclose(state[key], value, rtol=1e-4, atol=1e-6, err_msg=key)
