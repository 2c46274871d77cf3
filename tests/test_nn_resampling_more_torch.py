"""More resampling against torch (nn/functional/grid.py, nn/functional/interpolation.py):
grid_sample of volumes (5-D, trilinear and nearest) and bicubic grid_sample of images in every
padding mode, and interpolate with antialias=True (bilinear, bicubic and lanczos); values
and gradients of input and grid, second derivatives, errors, and compiled equal to eager."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from torch_reference import check_function

import autojit
from autojit import nn

torch = pytest.importorskip("torch")
F = nn.functional


def _random(shape, dtype="float64", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _grid(shape, dtype="float64", seed=1, reach=1.6):
    # Beyond [-1, 1] so that every padding mode is exercised.
    return np.random.default_rng(seed).uniform(-reach, reach, shape).astype(dtype)


@pytest.mark.parametrize(("mode", "padding_mode", "align_corners"), [
    (mode, padding, corners) for mode, padding, corners in itertools.product(
        ("bilinear", "nearest"), ("zeros", "border", "reflection"), (False, True))
    if mode == "bilinear" or corners
])
def test_volumetric_grid_sample_matches_torch(mode, padding_mode, align_corners):
    check_function("grid_sample", (_random((2, 2, 3, 4, 3)), _grid((2, 2, 3, 2, 3))),
                   dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners))


@pytest.mark.parametrize(("padding_mode", "align_corners"),
                         list(itertools.product(("zeros", "border", "reflection"), (False, True))))
def test_bicubic_grid_sample_matches_torch(padding_mode, align_corners):
    check_function("grid_sample", (_random((2, 2, 4, 5)), _grid((2, 3, 2, 2))),
                   dict(mode="bicubic", padding_mode=padding_mode, align_corners=align_corners))


def test_grid_sample_float32_matches_torch():
    for x, grid, mode in (((1, 2, 3, 3, 4), (1, 2, 2, 2, 3), "bilinear"),
                          ((1, 2, 4, 4), (1, 3, 3, 2), "bicubic")):
        check_function("grid_sample", (_random(x, "float32"), _grid(grid, "float32")),
                       dict(mode=mode, padding_mode="reflection", align_corners=False),
                       "float32")


@pytest.mark.parametrize(("shape", "grid_shape", "mode"), [
    ((1, 1, 2, 3, 2), (1, 1, 2, 2, 3), "bilinear"),
    ((1, 1, 3, 3), (1, 2, 2, 2), "bicubic"),
])
def test_grid_sample_second_derivatives_match_torch(shape, grid_shape, mode):
    x, grid = _random(shape), _grid(grid_shape, reach=0.9)
    cotangent = _random(shape[:2] + grid_shape[1:-1], seed=2)
    results = []
    for library in (autojit, torch):
        a = library.tensor(x, requires_grad=True)
        g = library.tensor(grid, requires_grad=True)
        out = library.nn.functional.grid_sample(a, g, mode=mode, padding_mode="border",
                                                align_corners=False)
        grads = library.autograd.grad((out * library.tensor(cotangent)).sum(), (a, g),
                                      create_graph=True)
        loss = (grads[0] ** 2).sum() + (grads[1] ** 2).sum()
        results.append([t.detach().numpy() for t in library.autograd.grad(loss, (a, g))])
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-10)


def test_grid_sample_errors_are_torchs():
    cases = [((1, 1, 3, 3), (1, 2, 2, 3), "expected grid to have size 2 in last dimension"),
             ((1, 1, 3, 3, 3), (1, 2, 2, 3), "expected 5D input and grid with same number of "
                                              "dimensions"),
             ((1, 1, 3, 3), (1, 2, 2, 2, 2), "expected 4D input and grid with same number of "
                                             "dimensions"),
             ((1, 1, 3, 3), (2, 2, 2, 2), "expected grid and input to have same batch size")]
    for x, grid, message in cases:
        for library in (autojit, torch):
            with pytest.raises(RuntimeError, match=message):
                library.nn.functional.grid_sample(library.ones(*x), library.zeros(*grid),
                                                  align_corners=False)
    for library in (autojit, torch):
        with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
            library.nn.functional.grid_sample(library.ones(1, 1, 2, 2, 2),
                                              library.zeros(1, 1, 1, 1, 3), mode="bicubic",
                                              align_corners=False)


@pytest.mark.parametrize(("mode", "kwargs"), [
    ("bilinear", dict(size=(4, 5))),
    ("bilinear", dict(scale_factor=0.4)),
    ("bilinear", dict(size=(3, 6), align_corners=True)),
    ("bicubic", dict(size=(3, 11))),
    ("bicubic", dict(scale_factor=(0.3, 0.77), recompute_scale_factor=True)),
    ("bicubic", dict(size=(12, 4))),
    ("lanczos", dict(size=(4, 5))),
    ("lanczos", dict(scale_factor=(1.5, 0.5))),
])
def test_antialiased_interpolate_matches_torch(mode, kwargs):
    check_function("interpolate", (_random((2, 2, 9, 11)),),
                   dict(mode=mode, antialias=True, **kwargs))


def test_antialiased_interpolate_float32_and_errors_match_torch():
    check_function("interpolate", (_random((1, 2, 8, 7), "float32"),),
                   dict(size=(3, 3), mode="bicubic", antialias=True), "float32")
    for library in (autojit, torch):
        for shape, mode in (((1, 1, 4), "linear"), ((1, 1, 4, 4), "nearest"),
                            ((1, 1, 2, 2, 2), "trilinear")):
            with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear"):
                library.nn.functional.interpolate(library.ones(*shape), size=1, mode=mode,
                                                  antialias=True)
        image = library.ones(1, 1, 4, 4)
        for kwargs, error, message in (
                (dict(mode="lanczos"), ValueError, "Lanczos mode requires antialias=True"),
                (dict(mode="lanczos", antialias=True, align_corners=True), ValueError,
                 "Lanczos mode does not support align_corners=True"),
                (dict(mode="box"), NotImplementedError, "trilinear \\| lanczos \\| area")):
            with pytest.raises(error, match=message):
                library.nn.functional.interpolate(image, size=2, **kwargs)


def test_compiled_resampling_equals_eager():
    def resample(x, volume, grid, volume_grid):
        small = F.interpolate(x, size=(3, 4), mode="bilinear", antialias=True)
        cubic = F.grid_sample(x, grid, mode="bicubic", padding_mode="reflection",
                              align_corners=True)
        trilinear = F.grid_sample(volume, volume_grid, padding_mode="border",
                                  align_corners=False)
        return small.sum() + (cubic ** 2).sum() + (trilinear ** 2).sum()

    values = [_random((1, 2, 7, 9), "float32"), _random((1, 2, 3, 4, 3), "float32"),
              _grid((1, 2, 3, 2), "float32"), _grid((1, 2, 2, 2, 3), "float32")]
    compiled = autojit.compile(resample, fullgraph=True)
    results = []
    for function in (resample, compiled):
        inputs = [autojit.tensor(v, requires_grad=True) for v in values]
        loss = function(*inputs)
        loss.backward()
        results.append([loss.detach().numpy()] + [t.grad.numpy() for t in inputs])
    for eager, traced in zip(*results, strict=True):
        np.testing.assert_allclose(traced, eager, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("name", "arguments"), [
    ("upsample", {"scale_factor": 2, "mode": "bilinear", "align_corners": False}),
    ("upsample", {"size": (5, 6)}),
    ("upsample_nearest", {"size": (5, 7)}),
    ("upsample_bilinear", {"scale_factor": 2}),
])
def test_deprecated_upsample_functions_warn_and_interpolate_as_torchs(name, arguments):
    data = _random((1, 2, 3, 4))
    results = []
    for library in (autojit, torch):
        with pytest.warns(UserWarning, match=rf"`nn\.functional\.{name}` is deprecated\. Use "
                                             r"`nn\.functional\.interpolate` instead\.") as caught:
            x = library.tensor(data, requires_grad=True)
            y = getattr(library.nn.functional, name)(x, **arguments)
        assert caught[0].filename == __file__
        (y * y).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


@pytest.mark.parametrize(("mode", "shape", "align_corners"), [
    ("linear", (1, 1, 3), False), ("bilinear", (1, 1, 4, 3), False),
    ("bilinear", (1, 1, 4, 3), True), ("trilinear", (1, 1, 2, 3, 4), False),
    ("nearest", (1, 1, 4, 3), None), ("bicubic", (1, 1, 4, 3), False),
])
def test_a_dim_whose_size_a_scale_factor_keeps_is_copied_as_torch_copies_it(
        mode, shape, align_corners):
    # torch's linear kernels and its 2-D nearest one copy such a dim (3 * 1.3 rounds to 3)
    # instead of resampling it with step 1 / 1.3; its bicubic one resamples it.
    data = np.arange(float(np.prod(shape))).reshape(shape)
    options = {} if align_corners is None else {"align_corners": align_corners}
    results = []
    for library in (autojit, torch):
        x = library.tensor(data, requires_grad=True)
        y = library.nn.functional.interpolate(x, scale_factor=1.3, mode=mode, **options)
        (y * y).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)
