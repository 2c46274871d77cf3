"""Normalization layers against torch (nn/normalization*.py, nn/functional_norm*.py):
BatchNorm1d/2d/3d (momentum=None, track_running_stats=False), InstanceNorm1d/2d/3d (affine,
running statistics, unbatched), RMSNorm, LocalResponseNorm, GroupNorm and LayerNorm; outputs,
gradients and running statistics in float64 and float32; compiled training steps, and a
compiled cumulative (momentum=None) batch norm that traces once."""

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


NORM_LAYERS = [
    ("BatchNorm1d", (3,), dict(momentum=None), (4, 3, 5)),
    ("BatchNorm2d", (3,), dict(track_running_stats=False), (4, 3, 2, 3)),
    ("BatchNorm3d", (2,), dict(affine=False), (3, 2, 2, 3, 2)),
    ("InstanceNorm1d", (3,), dict(), (2, 3, 5)),
    ("InstanceNorm1d", (3,), dict(affine=True, track_running_stats=True), (3, 5)),
    ("InstanceNorm2d", (2,), dict(affine=True, momentum=None, track_running_stats=True),
     (2, 2, 3, 4)),
    ("InstanceNorm3d", (2,), dict(track_running_stats=True), (2, 2, 3, 2, 3)),
    ("RMSNorm", ((3, 4),), dict(), (2, 3, 4)),
    ("RMSNorm", (4,), dict(eps=1e-3, elementwise_affine=False), (3, 4)),
    ("LocalResponseNorm", (3,), dict(), (2, 5, 4)),
    ("LocalResponseNorm", (2,), dict(alpha=0.1, beta=0.5, k=2.0), (2, 4, 3, 2)),
    ("GroupNorm", (2, 4), dict(), (2, 4, 3)),
    ("LayerNorm", ((2, 3),), dict(bias=False), (4, 2, 3)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("kind", "args", "kwargs", "shape"), NORM_LAYERS)
def test_norm_layers_match_torch(kind, args, kwargs, shape, dtype):
    mine, theirs = module_pair(kind, dtype, *args, **kwargs)
    for step in range(2):  # the second step sees the running statistics the first one left
        check_module(mine, theirs, (_random(shape, dtype, step),), dtype)
        for key, value in theirs.state_dict().items():
            np.testing.assert_allclose(mine.state_dict()[key].numpy(), value.numpy(),
                                       rtol=1e-6, atol=1e-6)
    if any(name.startswith("running") for name in theirs.state_dict()):
        mine.eval()
        theirs.eval()
        check_module(mine, theirs, (_random(shape, dtype, 5),), dtype)


def test_functional_forms_match_torch():
    x = _random((2, 3, 4))
    check_function("instance_norm", (x, None, None, _random((3,)), _random((3,), seed=1)))
    check_function("rms_norm", (x, (4,), _random((4,))), dict(eps=None))
    check_function("local_response_norm", (_random((2, 6, 2, 3)), 4))


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: nn.InstanceNorm2d(3)(autojit.zeros(2, 3)), ValueError, "expected 3D or 4D input"),
    (lambda: nn.InstanceNorm1d(3, affine=True)(autojit.zeros(2, 4, 5)), ValueError,
     "to match num_features"),
    (lambda: nn.BatchNorm3d(3)(autojit.zeros(2, 3, 4)), ValueError, "expected 5D input"),
    (lambda: F.local_response_norm(autojit.zeros(2, 3), 2), ValueError, "3D or higher"),
    (lambda: F.rms_norm(autojit.zeros(2, 3), (2,)), RuntimeError, "normalized_shape"),
])
def test_norm_errors_match_torch(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_second_derivatives():
    x = autojit.tensor(_random((2, 3, 4)), requires_grad=True)
    for function in (lambda a: F.instance_norm(a), lambda a: F.rms_norm(a, (4,)),
                     lambda a: F.local_response_norm(a, 2, alpha=0.5)):
        assert autojit.autograd.gradgradcheck(function, [x])


def _train(make_model, shape, compiled: bool, steps: int = 3):
    autojit.manual_seed(0)
    model = make_model()
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.05)
    x = autojit.tensor(np.random.default_rng(0).standard_normal(shape), dtype=autojit.float32)

    def step(x):
        optimizer.zero_grad()
        loss = (model(x) ** 3).mean()
        loss.backward()
        optimizer.step()
        return loss.detach()

    function = autojit.compile(step) if compiled else step
    losses = [function(x).item() for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


TRAINING_MODELS = {
    "instance_rms": (lambda: nn.Sequential(nn.Conv1d(2, 3, 2), nn.InstanceNorm1d(
        3, affine=True, track_running_stats=True), nn.RMSNorm(4)), (2, 2, 5)),
    "batch3d_lrn": (lambda: nn.Sequential(nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3),
                                          nn.LocalResponseNorm(2)), (2, 2, 3, 3, 3)),
}


@pytest.mark.parametrize("name", list(TRAINING_MODELS))
def test_a_compiled_training_step_equals_eager(name):
    make_model, shape = TRAINING_MODELS[name]
    compiled_losses, compiled_weights = _train(make_model, shape, True)
    eager_losses, eager_weights = _train(make_model, shape, False)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5)
    for a, b in zip(compiled_weights, eager_weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_compiled_cumulative_batch_norm_traces_once_with_torchs_statistics(dtype):
    """momentum=None averages every batch so far: the factor 1 / num_batches_tracked is a
    tensor op, so one executable serves every step and the running statistics are torch's."""
    mine, theirs = module_pair("BatchNorm2d", dtype, 3, momentum=None)
    compiled = autojit.compile(lambda x: mine(x))
    for step in range(4):
        x = _random((4, 3, 2, 2), dtype, step)
        out_mine, out_theirs = compiled(autojit.tensor(x)), theirs(torch.tensor(x))
        np.testing.assert_allclose(out_mine.detach().numpy(), out_theirs.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    assert len(compiled.executables) == 1
    for key, value in theirs.state_dict().items():
        assert mine.state_dict()[key].dtype.name == str(value.dtype).split(".")[-1], key
        np.testing.assert_allclose(mine.state_dict()[key].numpy(), value.numpy(), rtol=1e-6,
                                   atol=1e-7, err_msg=key)
