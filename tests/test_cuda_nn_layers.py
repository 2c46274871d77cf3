"""Every layer family of autojit.nn trains on CUDA tensors, compiled: each row of
tests/nn_training_rows.py (the rows tests/test_nn_compiled_layers.py trains on the CPU against
eager and torch) takes two compiled training steps with its model and inputs on the device,
with CompileWarning an error (no graph break, no fallback to eager), and its losses and final
parameters and buffers match the same steps run eagerly on the CPU, which the CPU test matches
compiled. A row whose layers draw random numbers (nn_training_rows.DRAWING) draws from the
device's generator, another stream than the CPU's: it is matched with the same steps run
eagerly on the device, and since random numbers drawn on a GPU are a graph break
(docs/compiler.md), its compiled steps run eagerly with a CompileWarning.

Runs under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 (tests/cuda_simulator.py);
two steps, not ten, because the simulator runs each GPU thread as a Python thread.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator
from nn_training_rows import DRAWING, rows, total_loss

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


def train(device: str, name: str, compiled: bool = True):
    """(losses, final state as NumPy arrays, the devices of the state) of STEPS steps of row
    `name`."""
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

    function = autojit.compile(step) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if name in DRAWING else "error", autojit.CompileWarning)
        losses = [function(*inputs).item() for _ in range(STEPS)]
    state = {key: value.detach().cpu().numpy() for key, value in model.state_dict().items()}
    devices = {value.device.type for value in model.state_dict().values()}
    return losses, state, devices


@pytest.mark.parametrize("name", list(ROWS))
def test_compiled_training_on_cuda_matches_eager(name):
    losses, state, devices = train("cuda", name)
    expected_losses, expected, _ = train("cuda" if name in DRAWING else "cpu", name,
                                         compiled=False)
    assert devices <= {"cuda"}
    # A drawing row's compiled call runs in part compiled (a split before the draw) and in
    # part eagerly: kernels that sum in another order than NumPy's.
    rtol = 1e-3 if name in DRAWING else 1e-5
    np.testing.assert_allclose(losses, expected_losses, rtol=rtol, atol=1e-6)
    assert state.keys() == expected.keys()
    for key, value in expected.items():
        assert state[key].dtype == value.dtype, key
        np.testing.assert_allclose(state[key], value, rtol=10 * rtol, atol=1e-6, err_msg=key)
