"""nn.SyncBatchNorm (nn/sync_batchnorm.py) in one process against torch's, which without a
process group is batch norm: outputs, gradients and running statistics, repr, state_dict,
errors and convert_sync_batchnorm; and its synchronized path in a world of one process, which
gives batch norm's values and gradients, eagerly and compiled. tests/distributed/ddp_checks.py
checks the synchronization across two processes.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit
import autojit.distributed as dist
from autojit.nn.sync_batchnorm import _sync_batch_norm

torch = pytest.importorskip("torch")


def _pair(dtype="float64", **options):
    torch.manual_seed(0)
    theirs = torch.nn.SyncBatchNorm(3, **options).to(getattr(torch, dtype))
    mine = autojit.nn.SyncBatchNorm(3, **options).to(getattr(autojit, dtype))
    return mine, theirs


@pytest.mark.parametrize("options", [{}, {"momentum": None}, {"affine": False, "eps": 1e-3},
                                     {"track_running_stats": False}, {"bias": False}])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 2, 3)])
def test_without_a_process_group_it_is_torchs_batch_norm(options, shape):
    mine, theirs = _pair(**options)
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    rng = np.random.default_rng(0)
    for _ in range(2):
        x = rng.standard_normal(shape)
        grad = rng.standard_normal(shape)
        x_mine = autojit.tensor(x, requires_grad=True)
        x_theirs = torch.tensor(x, requires_grad=True)
        out_mine, out_theirs = mine(x_mine), theirs(x_theirs)
        np.testing.assert_allclose(out_mine.detach().numpy(), out_theirs.detach().numpy(),
                                   rtol=1e-10, atol=1e-12)
        out_mine.backward(autojit.tensor(grad))
        out_theirs.backward(torch.tensor(grad))
        np.testing.assert_allclose(x_mine.grad.numpy(), x_theirs.grad.numpy(), rtol=1e-10,
                                   atol=1e-12)
        for key, value in theirs.state_dict().items():
            np.testing.assert_allclose(mine.state_dict()[key].detach().numpy(),
                                       value.detach().numpy(), rtol=1e-12, err_msg=key)
    mine.eval()
    theirs.eval()
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(mine(autojit.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10, atol=1e-12)


def _error(call, lib):
    try:
        call(lib)
    except Exception as error:  # noqa: BLE001 - the type is what the test compares
        return type(error), str(error)
    return None


@pytest.mark.parametrize("shape", [(3,), (4, 0), (1, 3)])
def test_errors_match_torch(shape):
    def call(lib):
        return lib.nn.SyncBatchNorm(shape[1] if len(shape) > 1 else 3)(lib.zeros(*shape))

    mine, theirs = _error(call, autojit), _error(call, torch)
    assert theirs is not None and mine == theirs


def test_convert_sync_batchnorm_as_torch():
    def convert(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3, momentum=0.2),
                                  lib.nn.Sequential(lib.nn.BatchNorm1d(3, affine=False)),
                                  lib.nn.InstanceNorm2d(3), lib.nn.LayerNorm(3))
        model[2].eval()
        weight = model[1].weight
        converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        return (repr(converted), list(converted.state_dict()), converted[1].weight is weight,
                converted[2][0].training, type(lib.nn.SyncBatchNorm.convert_sync_batchnorm(
                    lib.nn.BatchNorm3d(2))).__name__)

    assert convert(autojit) == convert(torch)


@pytest.mark.parametrize("compiled", [False, True])
def test_the_synchronized_path_in_a_world_of_one_is_batch_norm(compiled):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    weight = autojit.tensor([1.0, 2.0, 0.5], requires_grad=True)
    bias = autojit.tensor([0.0, -1.0, 1.0], requires_grad=True)
    dist.init_process_group()
    try:
        def run(function):
            x_ = autojit.tensor(x, requires_grad=True)
            mean, var = autojit.zeros(3), autojit.ones(3)
            out = function(x_, mean, var)
            (out * out).sum().backward()
            grads = [t.grad.numpy().copy() for t in (x_, weight, bias)]
            weight.grad = bias.grad = None
            return [out.detach().numpy(), mean.numpy(), var.numpy()] + grads

        def synchronized(x_, mean, var):
            return _sync_batch_norm(x_, weight, bias, mean, var, 1e-5, 0.1, dist.group.WORLD)

        mine = run(autojit.compile(synchronized) if compiled else synchronized)
        expected = run(lambda x_, mean, var: autojit.nn.functional.batch_norm(
            x_, mean, var, weight, bias, True, 0.1, 1e-5))
    finally:
        dist.destroy_process_group()
    for got, want in zip(mine, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
