"""Convolution, pooling, padding and normalization layers on CUDA tensors: a compiled training
step of a small model using a representative subset (transposed and 3-d convolution,
reflect padding, max pooling with indices and unpooling, instance norm, pixel shuffle)
matches the same step on the CPU.

Runs under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 (tests/cuda_simulator.py).
"""

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit
from autojit import nn

pytestmark = MARKS


class _Unpooled(nn.Module):
    """Max pooling with indices, then unpooling with them."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = nn.MaxPool2d(2, return_indices=True)
        self.unpool = nn.MaxUnpool2d(2)

    def forward(self, x):
        pooled, indices = self.pool(x)
        return self.unpool(pooled, indices, output_size=x.shape[-2:])


MODELS = {
    "conv2d": (lambda: nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, padding_mode="reflect"), nn.InstanceNorm2d(4, affine=True),
        nn.ConvTranspose2d(4, 4, 2, stride=2), _Unpooled(), nn.PixelShuffle(2)), (1, 1, 2, 3)),
    "conv3d": (lambda: nn.Sequential(nn.Conv3d(2, 3, 2), nn.AvgPool3d(2, ceil_mode=True),
                                     nn.RMSNorm(2)), (1, 2, 3, 3, 4)),
}


def train(device: str, name: str, steps: int = 2):
    autojit.manual_seed(0)
    make_model, shape = MODELS[name]
    model = make_model().to(device)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(1)
    x = autojit.tensor(rng.standard_normal(shape).astype(np.float32), device=device)

    def step(x):
        optimizer.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss

    run = autojit.compile(step)
    return [run(x).item() for _ in range(steps)], model


@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_training_on_cuda_matches_the_cpu(name):
    losses_cpu, model_cpu = train("cpu", name)
    losses, model = train("cuda", name)
    np.testing.assert_allclose(losses, losses_cpu, rtol=1e-5, atol=1e-6)
    for param, param_cpu in zip(model.parameters(), model_cpu.parameters(), strict=True):
        assert param.is_cuda
        np.testing.assert_allclose(param.detach().cpu().numpy(), param_cpu.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
