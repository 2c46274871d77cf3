"""Memory formats against torch: channels_last and channels_last_3d as real layouts (strides,
is_contiguous, values unchanged, kept by elementwise ops, clone and the *_like factories), the
methods and factories that take memory_format=, Module.to(memory_format=), torch's errors, and
a convolution step on channels-last tensors, eager and compiled.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from torch_compare import same_as_torch, torch

import autojit

rng = np.random.default_rng(7)
X4 = rng.standard_normal((2, 3, 4, 5))
X5 = rng.standard_normal((2, 3, 2, 4, 5))
M = rng.standard_normal((2, 3))


def _layout(t, result):
    """What is compared of a tensor's layout: its strides and the answers of is_contiguous."""
    return (tuple(result.stride()), result.is_contiguous(),
            result.is_contiguous(memory_format=t.channels_last),
            result.is_contiguous(memory_format=t.channels_last_3d))


LAYOUT_CASES = {
    "to_channels_last": (lambda t, x: x.to(memory_format=t.channels_last), X4),
    "to_channels_last_3d": (lambda t, x: x.to(memory_format=t.channels_last_3d), X5),
    "to_dtype_and_format": (lambda t, x: x.to(t.float32, memory_format=t.channels_last), X4),
    "to_preserve_cast": (lambda t, x: x.to(memory_format=t.channels_last).float(), X4),
    "contiguous_format": (lambda t, x: x.contiguous(memory_format=t.channels_last), X4),
    "back_to_contiguous": (lambda t, x: x.to(memory_format=t.channels_last).contiguous(), X4),
    "elementwise_keeps": (lambda t, x: (x.to(memory_format=t.channels_last) * 2).exp(), X4),
    "clone_preserves": (lambda t, x: x.to(memory_format=t.channels_last).clone(), X4),
    "clone_contiguous": (lambda t, x: t.clone(x.to(memory_format=t.channels_last),
                                              memory_format=t.contiguous_format), X4),
    "clone_channels_last": (lambda t, x: x.clone(memory_format=t.channels_last), X4),
    "empty_like_preserves": (lambda t, x: t.empty_like(x.to(memory_format=t.channels_last)),
                             X4),
    "zeros_like_preserves": (lambda t, x: t.zeros_like(x.to(memory_format=t.channels_last)),
                             X4),
    "ones_like_format": (lambda t, x: t.ones_like(x, memory_format=t.channels_last), X4),
    "full_like_format": (lambda t, x: t.full_like(x, 2.0, memory_format=t.channels_last), X4),
    "rand_like_preserves": (lambda t, x: t.rand_like(x.to(memory_format=t.channels_last)), X4),
    "empty_format": (lambda t: t.empty(2, 3, 4, 5, memory_format=t.channels_last),),
    "size_one_dims": (lambda t: t.ones(1, 3, 1, 1).to(memory_format=t.channels_last),),
    "transposed_view": (lambda t, x: x.t(), M),
    "transposed_to_contiguous_format": (lambda t, x: x.t().to(
        memory_format=t.contiguous_format), M),
    "clone_permuted_view": (lambda t, x: x.permute(0, 2, 3, 1).clone(), X4),
    "clone_sliced_channels_last": (lambda t, x: x.to(memory_format=t.channels_last)[
        :, :, 1:3].clone(), X4),
    "channels_last_3d_clone": (lambda t, x: t.empty_like(
        x.to(memory_format=t.channels_last_3d)), X5),
    "permuted_view": (lambda t, x: x.permute(0, 2, 3, 1), X4),
    "stride_of_dim": (lambda t, x: t.tensor([x.stride(1), x.stride(-1)]), X4),
}


@pytest.mark.parametrize("name", sorted(LAYOUT_CASES))
def test_layouts_as_torch(name):
    function, *arrays = LAYOUT_CASES[name]
    results = []
    for t in (torch, autojit):
        result = function(t, *(t.tensor(a) for a in arrays))
        if name != "stride_of_dim":
            results.append(_layout(t, result))
        if name.startswith(("to_", "contiguous", "back", "elementwise", "clone")):
            expected = function(torch, *(torch.tensor(a) for a in arrays))
            np.testing.assert_allclose(result.detach().numpy(), expected.numpy(), rtol=1e-6)
    if results:
        assert results[1] == results[0]


VALUE_CASES = {
    "to_channels_last_grad": (lambda t, x: x.to(memory_format=t.channels_last) * x, X4),
    "clone_format_grad": (lambda t, x: x.clone(memory_format=t.channels_last).sin(), X4),
    "contiguous_grad": (lambda t, x: x.contiguous(memory_format=t.channels_last).sum((0, 2)),
                        X4),
    "conv_channels_last": (lambda t, x, w: t.nn.functional.conv2d(
        x.to(memory_format=t.channels_last), w.to(memory_format=t.channels_last), padding=1),
        X4, rng.standard_normal((4, 3, 3, 3))),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_and_gradients_as_torch(name):
    function, *arrays = VALUE_CASES[name]
    same_as_torch(function, *arrays, rtol=1e-10)


ERROR_CASES = {
    "to_rank": (lambda t, x: x.to(memory_format=t.channels_last), M),
    "to_rank_3d": (lambda t, x: x.to(memory_format=t.channels_last_3d), X4),
    "contiguous_rank": (lambda t, x: x.contiguous(memory_format=t.channels_last), M),
    "empty_rank": (lambda t: t.empty(2, 3, memory_format=t.channels_last),),
    "clone_rank": (lambda t, x: x.clone(memory_format=t.channels_last), M),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_as_torch(name):
    function, *arrays = ERROR_CASES[name]
    same_as_torch(function, *arrays, grad=False)


def test_the_format_objects():
    for t in (torch, autojit):
        assert isinstance(t.channels_last, t.memory_format)
        assert pickle.loads(pickle.dumps(t.channels_last)) is t.channels_last
        assert t.channels_last != t.contiguous_format
        assert not t.ones(2, 3).is_contiguous(memory_format=t.channels_last)
        assert t.ones(2, 3).contiguous(memory_format=t.preserve_format).is_contiguous()
        x = t.ones(1, 2, 3, 4).to(memory_format=t.channels_last)
        assert x.to(memory_format=t.channels_last) is x
        assert x.contiguous(memory_format=t.channels_last) is x
    assert repr(autojit.channels_last) == "autojit.channels_last"
    with pytest.raises(TypeError, match="memory_format"):
        autojit.ones(2).to(memory_format="channels_last")


def test_module_to_channels_last():
    for t in (torch, autojit):
        model = t.nn.Sequential(t.nn.Conv2d(3, 4, 3), t.nn.BatchNorm2d(4), t.nn.Linear(2, 2))
        weight = model[0].weight
        assert model.to(memory_format=t.channels_last) is model
        assert model[0].weight is weight and isinstance(weight, t.nn.Parameter)
        assert weight.is_contiguous(memory_format=t.channels_last)
        assert weight.stride() == (27, 1, 9, 3)
        assert model[2].weight.is_contiguous()  # not 4-d: left as it was


def test_a_channels_last_step_compiled_as_eager():
    """Compiled code reads strided inputs; its results are contiguous (docs/differences.md)."""
    autojit.manual_seed(0)
    conv = autojit.nn.Conv2d(3, 4, 3, padding=1).to(memory_format=autojit.channels_last)
    x = autojit.tensor(X4, dtype=autojit.float32).to(memory_format=autojit.channels_last)

    def step(x):
        loss = conv(x).relu().square().mean()
        (grad,) = autojit.autograd.grad(loss, conv.weight)
        return loss, grad

    eager = step(x)
    compiled = autojit.compile(step, fullgraph=True)
    for inputs in (x, x.contiguous()):
        for mine, theirs in zip(compiled(inputs), eager):
            np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                                       rtol=1e-6, atol=1e-7)
