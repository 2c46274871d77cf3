"""Pooling against torch (nn/functional/pooling.py, nn/pooling/): max pooling with indices,
average pooling (ceil_mode, count_include_pad, divisor_override), LP, adaptive max and
average pooling over 1, 2 and 3 dims, and max unpooling; outputs, indices and gradients in
float64 and float32, layer reprs, a compiled training step equal to eager."""

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


MAX_CASES = [
    (1, (2, 3, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (2, 2, 7, 6), dict(kernel_size=(3, 2), stride=2, dilation=(2, 1), ceil_mode=True)),
    (2, (2, 5, 6), dict(kernel_size=2, padding=1)),
    (3, (1, 2, 5, 4, 6), dict(kernel_size=2, stride=(1, 2, 2), padding=(1, 0, 1))),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("spatial", "shape", "options"), MAX_CASES)
def test_max_pool_with_indices_matches_torch(spatial, shape, options, dtype):
    (out, indices), (theirs, their_indices) = check_function(
        f"max_pool{spatial}d", (_random(shape, dtype),), dict(return_indices=True, **options),
        dtype)
    np.testing.assert_array_equal(indices.numpy(), their_indices.numpy())


AVG_CASES = [
    (1, (2, 3, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                        count_include_pad=False)),
    (2, (2, 2, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (2, 5, 6), dict(kernel_size=2, padding=1, divisor_override=3)),
    (3, (1, 2, 5, 4, 6), dict(kernel_size=(2, 3, 2), padding=1, count_include_pad=False)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("spatial", "shape", "options"), AVG_CASES)
def test_avg_pool_matches_torch(spatial, shape, options, dtype):
    check_function(f"avg_pool{spatial}d", (_random(shape, dtype),), options, dtype)


@pytest.mark.parametrize(("spatial", "shape", "output_size"), [
    (1, (2, 3, 7), 3), (2, (2, 2, 7, 5), (3, None)), (2, (3, 5, 4), 6), (3, (1, 2, 5, 4, 3), 2),
])
def test_adaptive_pools_match_torch(spatial, shape, output_size):
    x = _random(shape)
    check_function(f"adaptive_avg_pool{spatial}d", (x, output_size))
    (_, indices), (_, their_indices) = check_function(
        f"adaptive_max_pool{spatial}d", (x, output_size), dict(return_indices=True))
    np.testing.assert_array_equal(indices.numpy(), their_indices.numpy())


@pytest.mark.parametrize(("spatial", "shape", "options"), [
    (1, (2, 3, 8), dict(norm_type=2, kernel_size=3, stride=2)),
    (2, (1, 2, 6, 5), dict(norm_type=3.0, kernel_size=2, ceil_mode=True)),
    (3, (1, 2, 4, 4, 4), dict(norm_type=1, kernel_size=2)),
])
def test_lp_pool_matches_torch(spatial, shape, options):
    x = np.abs(_random(shape)) + 0.1  # away from 0, where the p-th root has no derivative
    check_function(f"lp_pool{spatial}d", (x,), options)


@pytest.mark.parametrize(("spatial", "shape", "options", "output_size"), [
    (1, (2, 3, 9), dict(kernel_size=2, stride=2), [9]),
    (2, (1, 2, 6, 5), dict(kernel_size=3, stride=2, padding=1), None),
    (3, (1, 2, 4, 4, 4), dict(kernel_size=2), None),
])
def test_max_unpool_matches_torch(spatial, shape, options, output_size):
    x = torch.tensor(_random(shape))
    pooled, indices = getattr(torch.nn.functional, f"max_pool{spatial}d")(
        x, return_indices=True, **options)
    check_function(f"max_unpool{spatial}d", (pooled.numpy(), indices.numpy()),
                   dict(output_size=output_size, **options))


POOL_LAYERS = [
    ("MaxPool1d", (3,), dict(stride=2, return_indices=True), (2, 3, 8)),
    ("MaxPool2d", ((3, 2),), dict(stride=1, padding=1, dilation=2, ceil_mode=True), (1, 2, 7, 6)),
    ("MaxPool3d", (2,), dict(), (1, 2, 4, 4, 5)),
    ("AvgPool1d", (3,), dict(padding=1, count_include_pad=False), (2, 3, 8)),
    ("AvgPool2d", (3,), dict(stride=2, ceil_mode=True, divisor_override=2), (1, 2, 7, 6)),
    ("AvgPool3d", (2,), dict(padding=1), (1, 2, 3, 4, 3)),
    ("AdaptiveAvgPool1d", (4,), dict(), (2, 3, 7)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), dict(), (1, 2, 4, 3, 5)),
    ("AdaptiveMaxPool2d", (3,), dict(return_indices=True), (1, 2, 7, 5)),
    ("LPPool2d", (2, 2), dict(), (1, 2, 4, 6)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("kind", "args", "kwargs", "shape"), POOL_LAYERS)
def test_pool_layers_match_torch(kind, args, kwargs, shape, dtype):
    mine, theirs = module_pair(kind, dtype, *args, **kwargs)
    x = _random(shape, dtype)
    if kind.startswith("LP"):
        x = np.abs(x) + 0.1
    check_module(mine, theirs, (x,), dtype)


def test_max_unpool_layer_matches_torch():
    mine, theirs = module_pair("MaxUnpool2d", "float64", 2, stride=2)
    pooled, indices = torch.nn.functional.max_pool2d(torch.tensor(_random((1, 2, 5, 4))), 2,
                                                     return_indices=True)
    out = mine(autojit.tensor(pooled.numpy()), autojit.tensor(indices.numpy()),
               output_size=[5, 4])
    np.testing.assert_array_equal(out.numpy(), theirs(pooled, indices, output_size=[5, 4]))


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.max_pool2d(autojit.zeros(1, 1, 4, 4), 3, padding=2), RuntimeError,
     "pad should be at most half"),
    (lambda: F.avg_pool1d(autojit.zeros(1, 1, 2), 3), RuntimeError, "Output size is too small"),
    (lambda: F.max_pool3d(autojit.zeros(4, 4), 2), RuntimeError, "4D or 5D"),
])
def test_pool_errors_match_torch(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_second_derivatives():
    x = autojit.tensor(_random((1, 2, 5, 4)), requires_grad=True)
    for function in (lambda a: F.avg_pool2d(a, 3, 2, 1, ceil_mode=True),
                     lambda a: F.adaptive_avg_pool2d(a, (3, 2)),
                     lambda a: F.lp_pool2d(a * a + 0.5, 2, 2)):
        assert autojit.autograd.gradgradcheck(function, [x])


def _train(make_model, shape, compiled: bool, steps: int = 3):
    autojit.manual_seed(0)
    model = make_model()
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.05)
    x = autojit.tensor(np.random.default_rng(0).standard_normal(shape), dtype=autojit.float32)

    def step(x):
        optimizer.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss.detach()

    function = autojit.compile(step) if compiled else step
    losses = [function(x).item() for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


TRAINING_MODELS = {
    "max_avg_3d": (lambda: nn.Sequential(nn.Conv3d(2, 3, 2), nn.MaxPool3d(2, ceil_mode=True),
                                         nn.AvgPool3d(1)), (2, 2, 4, 5, 4)),
    "adaptive_lp_1d": (lambda: nn.Sequential(nn.Conv1d(2, 3, 2), nn.AdaptiveMaxPool1d(3),
                                             nn.LPPool1d(2, 2)), (2, 2, 7)),
}


@pytest.mark.parametrize("name", list(TRAINING_MODELS))
def test_a_compiled_training_step_equals_eager(name):
    make_model, shape = TRAINING_MODELS[name]
    compiled_losses, compiled_weights = _train(make_model, shape, True)
    eager_losses, eager_weights = _train(make_model, shape, False)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5)
    for a, b in zip(compiled_weights, eager_weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


TIES_AND_NANS = [
    ("max_pool2d", dict(kernel_size=2)),  # tiling windows
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1)),  # overlapping, padded
    ("max_pool2d", dict(kernel_size=2, stride=3, dilation=2)),
    ("adaptive_max_pool2d", dict(output_size=(4, 3))),
]


@pytest.mark.parametrize("data", ["nans", "ties", "infinite gradient"])
@pytest.mark.parametrize(("name", "options"), TIES_AND_NANS[:3])
def test_max_pool_backward_gives_ties_to_the_first(name, options, data):
    # Without NaNs, and with a finite gradient, the eager backward finds each window's first
    # maximum offset by offset (ops/nn/pooling.py _first_hits); an infinite gradient goes to the
    # chosen element alone, as does a NaN's.
    rng = np.random.default_rng(4)
    x = rng.integers(0, 3, (2, 3, 9, 8)).astype(np.float64)
    if data == "nans":
        x[rng.random(x.shape) < 0.15] = np.nan
    x[rng.random(x.shape) < 0.1] = -np.inf
    x[:, :, :2, :2] = -np.inf  # padded windows of -inf alone
    theirs = torch.tensor(x, requires_grad=True)
    their_out = getattr(torch.nn.functional, name)(theirs, **options)
    g = rng.standard_normal(their_out.shape).astype(np.float64)
    if data == "infinite gradient":
        g.reshape(-1)[::7] = np.inf
    their_out.backward(torch.tensor(g))
    mine = autojit.tensor(x, requires_grad=True)
    getattr(F, name)(mine, **options).backward(autojit.tensor(g))
    # overlapping windows add in torch's order or another
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-14, atol=0)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize(("name", "options"), TIES_AND_NANS)
def test_max_pool_gives_ties_to_the_first_and_nans_to_the_last(name, options, compiled):
    # torch's kernels scan each window in order: a tie keeps the first maximum, and every NaN
    # replaces the maximum, so the value, the index and the gradient go to the last NaN.
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, (2, 3, 9, 8)).astype(np.float64)
    x[rng.random(x.shape) < 0.15] = np.nan
    x[rng.random(x.shape) < 0.1] = -np.inf
    theirs = torch.tensor(x, requires_grad=True)
    their_out, their_indices = getattr(torch.nn.functional, name)(
        theirs, return_indices=True, **options)
    g = rng.standard_normal(their_out.shape)
    their_out.backward(torch.tensor(g))
    mine = autojit.tensor(x, requires_grad=True)

    def pool(t):
        return getattr(F, name)(t, return_indices=True, **options)

    out, indices = (autojit.compile(pool) if compiled else pool)(mine)
    out.backward(autojit.tensor(g))
    np.testing.assert_array_equal(out.detach().numpy(), their_out.detach().numpy())
    np.testing.assert_array_equal(indices.numpy(), their_indices.numpy())
    np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-15, atol=0)
