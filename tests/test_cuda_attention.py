"""Attention and transformer layers on CUDA tensors, eager and compiled, against the CPU:
scaled_dot_product_attention with a bool mask (values and gradients) and a causal transformer
encoder's training step.

Runs under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 (tests/cuda_simulator.py); the
shapes are tiny because the simulator runs every GPU thread as a Python thread.
"""

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit
from autojit import nn, optim
from autojit.nn import functional as F

pytestmark = MARKS


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_attention_with_a_mask_on_cuda_matches_the_cpu(compiled):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(np.float32)
              for shape in ((2, 3, 4), (2, 5, 4), (2, 5, 3))]
    mask = rng.random((3, 5)) > 0.4
    mask[:, 0] = True
    mask[1] = False  # a row with every key masked: zeros, not NaN

    def attention(q, k, v, mask):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return out, *autojit.autograd.grad((out * out).sum(), (q, k, v))

    run = autojit.compile(attention) if compiled else attention
    results = {}
    for device in ("cpu", "cuda"):
        tensors = [autojit.tensor(a, device=device, requires_grad=True) for a in arrays]
        results[device] = run(*tensors, autojit.tensor(mask, device=device))
    for on_gpu, on_cpu in zip(results["cuda"], results["cpu"]):
        assert on_gpu.is_cuda
        np.testing.assert_allclose(on_gpu.detach().cpu().numpy(), on_cpu.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    assert not np.isnan(results["cuda"][0].detach().cpu().numpy()).any()


def _train(device: str, compiled: bool, steps: int = 2):
    autojit.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, batch_first=True,
                                       norm_first=True)
    model = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).to(device)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(1)
    x = autojit.tensor(rng.standard_normal((2, 3, 4)).astype(np.float32), device=device)
    mask = nn.Transformer.generate_square_subsequent_mask(3, device=device)

    def step(x):
        optimizer.zero_grad()
        loss = model(x, mask=mask, is_causal=True).square().mean()
        loss.backward()
        optimizer.step()
        return loss

    run = autojit.compile(step) if compiled else step
    return [run(x).item() for _ in range(steps)], model


def test_a_compiled_transformer_training_step_on_cuda_matches_the_cpu():
    # Compiled only: the eager CUDA path is covered by the attention test above, and each
    # simulated training step costs seconds.
    losses_cpu, model_cpu = _train("cpu", compiled=True)
    losses, model = _train("cuda", compiled=True)
    np.testing.assert_allclose(losses, losses_cpu, rtol=1e-5, atol=1e-6)
    for param, param_cpu in zip(model.parameters(), model_cpu.parameters(), strict=True):
        assert param.is_cuda
        np.testing.assert_allclose(param.detach().cpu().numpy(), param_cpu.detach().numpy(),
                                   rtol=1e-4, atol=1e-6)
