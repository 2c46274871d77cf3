"""Convolutions whose operands a compiled plan makes as strided views, in the native program.

The native routines read C-contiguous operands. A ConvNeXt block permutes its layer norm's
channels-last result back to channels first for its depthwise convolution, and a ViT's patch
embedding gets its gradient through its tokens' transpose: both operands are strided views in
the plan. Such an operand is now copied in C order by a kernel of the convolution's step
(schedule/conv_steps.py, group_steps.strided_copy), so the plan runs as one native program;
before, the convolution ran through its NumPy impl and the whole plan kept its Python loop
("Python loop: convolution ran through its NumPy impl"). Compiled equals eager over calls with
new inputs, and eager equals torch.
"""

from __future__ import annotations

import numpy as np
import pytest
from native_program_cases import NEEDS_WORKERS

import autojit

pytestmark = NEEDS_WORKERS


def block(lib, weights, x):
    """A patch embedding (stride 4), its tokens through a linear layer and back by a transposed
    view, a channels-last layer norm, then a depthwise 7x7 convolution of the permuted view."""
    patch_w, patch_b, linear_w, linear_b, depth_w, depth_b = weights
    F = lib.nn.functional
    h = F.conv2d(x, patch_w, patch_b, stride=4)                      # (2, 16, 8, 8)
    tokens = F.linear(h.flatten(2).transpose(1, 2), linear_w, linear_b)  # (2, 64, 16)
    h = tokens.transpose(1, 2).reshape(2, 16, 8, 8)                  # a strided view
    h = F.layer_norm(h.permute(0, 2, 3, 1), (16,)).permute(0, 3, 1, 2)
    return F.conv2d(h, depth_w, depth_b, padding=3, groups=16).square().mean()


def arrays(seed: int) -> list:
    rng = np.random.default_rng(seed)
    shapes = [(16, 3, 4, 4), (16,), (16, 16), (16,), (16, 1, 7, 7), (16,)]
    return [(rng.standard_normal(shape) * 0.3).astype(np.float32) for shape in shapes]


def gradients(lib, weights, x, compiled=None):
    def step(x):
        for weight in weights:
            weight.grad = None
        loss = block(lib, weights, x)
        loss.backward()
        return loss.detach()

    loss = (compiled or step)(x)
    return [loss.numpy()] + [weight.grad.numpy() for weight in weights], step


def test_convolutions_of_strided_views_run_in_the_native_program_and_equal_eager():
    values = arrays(0)
    weights = [autojit.tensor(value, requires_grad=True) for value in values]
    eager_weights = [autojit.tensor(value, requires_grad=True) for value in values]
    step = gradients(autojit, weights, autojit.zeros(2, 3, 32, 32))[1]
    compiled = autojit.compile(step)
    rng = np.random.default_rng(1)
    for index in range(6):
        x = rng.standard_normal((2, 3, 32, 32)).astype(np.float32)
        got = gradients(autojit, weights, autojit.tensor(x), compiled)[0]
        expected = gradients(autojit, eager_weights, autojit.tensor(x))[0]
        for mine, theirs in zip(got, expected):
            np.testing.assert_allclose(mine, theirs, rtol=2e-5, atol=1e-7)
        if index == 2:
            plan = compiled.fusion_groups()
            assert plan.splitlines()[-1].startswith("native program:"), plan.splitlines()[-1]
            # The strided operands' copies: the depthwise convolution's input (forward and
            # weight gradient) and the patch embedding's output gradient.
            assert plan.count("copied in C order") >= 3, plan


def test_eager_equals_torch():
    torch = pytest.importorskip("torch")
    values = arrays(2)
    x = np.random.default_rng(3).standard_normal((2, 3, 32, 32)).astype(np.float32)
    got = gradients(autojit, [autojit.tensor(v, requires_grad=True) for v in values],
                    autojit.tensor(x))[0]
    expected = gradients(torch, [torch.tensor(v, requires_grad=True) for v in values],
                         torch.tensor(x))[0]
    for mine, theirs in zip(got, expected):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-6)
