"""Resampling against torch (nn/functional/resampling.py, nn/functional/interpolation.py,
nn/functional/grid.py, nn/resampling.py): pixel_shuffle, pixel_unshuffle, channel_shuffle,
interpolate (every mode but antialiasing), affine_grid,
grid_sample and the layers; outputs and gradients, reprs, errors, second derivatives and
compiled training steps."""

from __future__ import annotations

import numpy as np
import pytest
from torch_reference import check_function, check_module, module_pair

import autojit
from autojit import nn

torch = pytest.importorskip("torch")
F = nn.functional


def _random(shape, dtype="float64", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize(("name", "shape", "factor"), [
    ("pixel_shuffle", (2, 8, 2, 3), 2), ("pixel_shuffle", (2, 1, 9, 2, 1), 3),
    ("pixel_unshuffle", (2, 2, 4, 6), 2), ("pixel_unshuffle", (3, 3, 6), 3),
    ("channel_shuffle", (2, 6, 3), 3), ("channel_shuffle", (1, 4, 2, 2, 1), 2),
])
def test_shuffles_match_torch(name, shape, factor):
    check_function(name, (_random(shape), factor))


@pytest.mark.parametrize(("kind", "factor", "shape"), [
    ("PixelShuffle", 2, (1, 4, 3, 2)), ("PixelUnshuffle", 2, (1, 1, 4, 2)),
    ("ChannelShuffle", 2, (2, 4, 3)),
])
def test_shuffle_layers_match_torch(kind, factor, shape):
    mine, theirs = module_pair(kind, "float32", factor)
    check_module(mine, theirs, (_random(shape, "float32"),), "float32")


@pytest.mark.parametrize(("call", "message"), [
    (lambda: F.pixel_shuffle(autojit.zeros(1, 5, 2, 2), 2), "divisible by the square"),
    (lambda: F.pixel_unshuffle(autojit.zeros(1, 1, 3, 4), 2), "height to be divisible"),
    (lambda: F.channel_shuffle(autojit.zeros(1, 5, 2), 2), "divisible by groups"),
    (lambda: F.pixel_shuffle(autojit.zeros(4, 4), 2), "at least 3 dimensions"),
])
def test_shuffle_errors_match_torch(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


INTERPOLATE_CASES = [
    ((2, 3, 5), dict(size=8, mode="nearest")),
    ((2, 3, 5), dict(scale_factor=1.7, mode="nearest-exact")),
    ((1, 2, 4, 5), dict(scale_factor=(2, 0.6), mode="nearest")),
    ((1, 2, 4, 5), dict(size=(7, 3), mode="bilinear")),
    ((1, 2, 4, 5), dict(size=(7, 3), mode="bilinear", align_corners=True)),
    ((2, 3, 5), dict(scale_factor=2.5, mode="linear")),
    ((2, 3, 5), dict(scale_factor=2.5, mode="linear", recompute_scale_factor=True)),
    ((1, 1, 3, 4, 3), dict(scale_factor=(1.5, 2, 0.7), mode="trilinear")),
    ((1, 2, 6, 5), dict(size=(4, 2), mode="area")),
    ((1, 2, 4, 5), dict(scale_factor=(2.5, 0.7), mode="bicubic")),
    ((1, 2, 4, 5), dict(size=(7, 9), mode="bicubic", align_corners=True)),
    ((1, 2, 3, 2, 3), dict(scale_factor=2, mode="nearest")),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("shape", "options"), INTERPOLATE_CASES)
def test_interpolate_matches_torch(shape, options, dtype):
    check_function("interpolate", (_random(shape, dtype),), options, dtype)


@pytest.mark.parametrize(("kind", "args", "kwargs", "shape"), [
    ("Upsample", (), dict(scale_factor=2), (1, 2, 3)),
    ("Upsample", (), dict(scale_factor=(2, 1.5), mode="bilinear"), (1, 2, 3, 2)),
    ("Upsample", ((4, 3, 5),), dict(mode="trilinear", align_corners=True), (1, 1, 2, 2, 3)),
    ("UpsamplingNearest2d", (), dict(size=(3, 4)), (1, 2, 2, 2)),
    ("UpsamplingBilinear2d", (), dict(scale_factor=2), (1, 2, 2, 3)),
])
def test_upsample_layers_match_torch(kind, args, kwargs, shape):
    mine, theirs = module_pair(kind, "float64", *args, **kwargs)
    check_module(mine, theirs, (_random(shape),))


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.interpolate(autojit.zeros(1, 2, 3), size=4, scale_factor=2), ValueError,
     "only one of size or scale_factor"),
    (lambda: F.interpolate(autojit.zeros(1, 2, 3), size=4, align_corners=True), ValueError,
     "align_corners option can only be set"),
    (lambda: F.interpolate(autojit.zeros(1, 2, 3, 3), size=4, mode="linear"),
     NotImplementedError, "linear mode needs 3D input"),
])
def test_interpolate_errors_match_torch(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_interpolate_second_derivatives():
    x = autojit.tensor(_random((1, 2, 3, 2)), requires_grad=True)
    assert autojit.autograd.gradgradcheck(
        lambda a: F.interpolate(a * a, scale_factor=1.5, mode="bilinear"), [x])


def test_a_compiled_training_step_equals_eager():
    def run(compiled):
        autojit.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 4, 1), nn.PixelShuffle(2), nn.PixelUnshuffle(2),
                              nn.ChannelShuffle(2), nn.Upsample(scale_factor=1.5,
                                                                mode="bilinear"))
        optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
        x = autojit.tensor(_random((2, 1, 2, 3), "float32"))

        def step(x):
            optimizer.zero_grad()
            loss = (model(x) ** 2 * autojit.arange(4.0).reshape(1, 4, 1, 1)).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()

        function = autojit.compile(step) if compiled else step
        return [function(x).item() for _ in range(3)]

    np.testing.assert_allclose(run(True), run(False), rtol=1e-5)


@pytest.mark.parametrize(("size", "align_corners"), [((2, 3, 4, 5), False),
                                                     ((2, 3, 4, 5), True),
                                                     ((1, 2, 2, 3, 4), False)])
def test_affine_grid_matches_torch(size, align_corners):
    theta = _random((size[0], len(size) - 2, len(size) - 1))
    check_function("affine_grid", (theta, size), dict(align_corners=align_corners))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("mode", "padding_mode", "align_corners"), [
    ("bilinear", "zeros", False), ("bilinear", "border", True),
    ("bilinear", "reflection", False), ("bilinear", "reflection", True),
    ("nearest", "zeros", True), ("nearest", "reflection", False),
])
def test_grid_sample_matches_torch(mode, padding_mode, align_corners, dtype):
    x = _random((2, 3, 4, 5), dtype)
    grid = np.random.default_rng(1).uniform(-1.6, 1.6, (2, 3, 4, 2)).astype(dtype)
    check_function("grid_sample", (x, grid), dict(mode=mode, padding_mode=padding_mode,
                                                  align_corners=align_corners), dtype)


def test_grid_sample_second_derivatives():
    x = autojit.tensor(_random((1, 2, 3, 3)), requires_grad=True)
    grid = autojit.tensor(np.random.default_rng(1).uniform(-0.9, 0.9, (1, 2, 2, 2)),
                          requires_grad=True)
    assert autojit.autograd.gradgradcheck(
        lambda a, g: F.grid_sample(a, g, padding_mode="border", align_corners=False),
        [x, grid])


def test_a_compiled_spatial_transformer_step_equals_eager():
    def run(compiled):
        autojit.manual_seed(0)
        theta = nn.Parameter(autojit.tensor([[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]]]))
        optimizer = autojit.optim.SGD([theta], lr=0.1)
        x = autojit.tensor(_random((1, 2, 4, 5), "float32"))

        def step(x):
            optimizer.zero_grad()
            grid = F.affine_grid(theta, (1, 2, 3, 3), align_corners=False)
            loss = (F.grid_sample(x, grid, align_corners=False) ** 2).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()

        function = autojit.compile(step) if compiled else step
        return [function(x).item() for _ in range(3)], theta.detach().numpy()

    (compiled_losses, compiled_theta), (eager_losses, eager_theta) = run(True), run(False)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(compiled_theta, eager_theta, rtol=1e-5, atol=1e-6)
