"""A representative subset of the activations, losses and distances of nn/activation/extra.py,
nn/loss/extra.py and nn/functional_{activation,loss,margin,distance}.py trained on CUDA tensors,
compiled, against the same steps on the CPU: a learned slope (PReLU), a piecewise unit
(Hardswish), a gate (GLU), and the KL, triplet (a norm), multi-margin (a one-hot mask) and
cosine embedding losses.

Runs under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 (tests/cuda_simulator.py).
"""

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit
from autojit import nn, optim

pytestmark = MARKS

F = nn.functional
TARGETS = np.array([0, 2, 1, 3])
SIGNS = np.array([1.0, -1.0, -1.0, 1.0], dtype=np.float32)


def _loss(kind, out, y, device):
    if kind == "kl_div":
        return F.kl_div(F.log_softmax(out, 1), F.softmax(y, 1), reduction="batchmean")
    if kind == "triplet":
        return F.triplet_margin_loss(out, y, out * 0.5, swap=True)
    if kind == "multi_margin":
        return F.multi_margin_loss(out, autojit.tensor(TARGETS, device=device), p=2)
    return F.cosine_embedding_loss(out, y, autojit.tensor(SIGNS, device=device), margin=0.1)


def train(device: str, activation: str, loss: str, steps: int = 3):
    autojit.manual_seed(0)
    width = 8 if activation == "GLU" else 4
    model = nn.Sequential(nn.Linear(3, width), getattr(nn, activation)(
        *((4,) if activation == "PReLU" else ())), nn.Linear(4, 4)).to(device)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(1)
    x = autojit.tensor(rng.standard_normal((4, 3)).astype(np.float32), device=device)
    y = autojit.tensor(rng.standard_normal((4, 4)).astype(np.float32), device=device)

    def step(x, y):
        optimizer.zero_grad()
        value = _loss(loss, model(x), y, device)
        value.backward()
        optimizer.step()
        return value

    run = autojit.compile(step)
    losses = [run(x, y).item() for _ in range(steps)]
    return losses, model


CASES = [("PReLU", "kl_div"), ("Hardswish", "triplet"), ("GLU", "multi_margin"),
         ("Mish", "cosine_embedding")]


@pytest.mark.parametrize("activation, loss", CASES, ids=[f"{a}-{b}" for a, b in CASES])
def test_compiled_training_on_cuda_matches_the_cpu(activation, loss):
    losses_cpu, model_cpu = train("cpu", activation, loss)
    losses, model = train("cuda", activation, loss)
    np.testing.assert_allclose(losses, losses_cpu, rtol=1e-5, atol=1e-6)
    for param, param_cpu in zip(model.parameters(), model_cpu.parameters(), strict=True):
        assert param.is_cuda
        np.testing.assert_allclose(param.detach().cpu().numpy(), param_cpu.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
