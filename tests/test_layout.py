"""Layout composites (view, flatten, squeeze, transpose, stack, split, repeat, ...)."""

import numpy as np
import pytest

import autojit as aj
from autojit.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(1)
BASE = rng.standard_normal((2, 3, 4))


def leaf(array=BASE):
    return aj.tensor(array, requires_grad=True)


@pytest.mark.parametrize("function, reference", [
    (lambda x: x.view(4, 6), lambda a: a.reshape(4, 6)),
    (lambda x: x.flatten(), lambda a: a.reshape(-1)),
    (lambda x: x.flatten(1), lambda a: a.reshape(2, 12)),
    (lambda x: aj.flatten(x, 0, 1), lambda a: a.reshape(6, 4)),
    (lambda x: x.unflatten(2, (2, -1)), lambda a: a.reshape(2, 3, 2, 2)),
    (lambda x: x[:, :1].squeeze(), lambda a: a[:, 0]),
    (lambda x: x[:1, :1].squeeze((0, 1)), lambda a: a[0, 0]),
    (lambda x: x[:1].squeeze(2), lambda a: a[:1]),
    (lambda x: x.unsqueeze(-1), lambda a: a[..., None]),
    (lambda x: x.transpose(0, 2), lambda a: a.transpose(2, 1, 0)),
    (lambda x: x.swapaxes(-1, 1), lambda a: a.swapaxes(-1, 1)),
    (lambda x: x[0].t(), lambda a: a[0].T),
    (lambda x: x.T, lambda a: a.T),
    (lambda x: x.mT, lambda a: a.swapaxes(-1, -2)),
    (lambda x: x.movedim(0, -1), lambda a: np.moveaxis(a, 0, -1)),
    (lambda x: aj.movedim(x, (0, 1), (2, 0)), lambda a: np.moveaxis(a, (0, 1), (2, 0))),
    (lambda x: aj.stack([x, 2 * x], 1), lambda a: np.stack([a, 2 * a], 1)),
    (lambda x: x.select(1, -1), lambda a: a[:, -1]),
    (lambda x: x.unbind(2)[3], lambda a: a[:, :, 3]),
    (lambda x: x.split(3, 2)[1], lambda a: a[:, :, 3:]),
    (lambda x: x.split([1, 2], 1)[1], lambda a: a[:, 1:]),
    (lambda x: x.chunk(2, 1)[0], lambda a: a[:, :2]),
    (lambda x: x.flip((0, 2)), lambda a: a[::-1, :, ::-1]),
    (lambda x: x.repeat(2, 1, 3), lambda a: np.tile(a, (2, 1, 3))),
    (lambda x: x.repeat(2, 1, 1, 2), lambda a: np.tile(a, (2, 1, 1, 2))),
    (lambda x: x.tile((2,)), lambda a: np.tile(a, 2)),
    (lambda x: x[:, :1].expand_as(x), lambda a: np.broadcast_to(a[:, :1], a.shape)),
    (lambda x: x.reshape(6, 4).view_as(x), lambda a: a),
    (lambda x: x.reshape_as(aj.zeros(4, 6)), lambda a: a.reshape(4, 6)),
])
def test_values_and_gradients(function, reference):
    x = leaf()
    np.testing.assert_array_equal(function(x).detach().numpy(), reference(BASE))
    assert gradcheck(function, (x,))
    assert gradgradcheck(function, (x,))


def test_views_share_version_counter():
    base = aj.zeros(2, 3)
    for view in (base.transpose(0, 1), base.select(0, 1), base.unsqueeze(0), base.T,
                 base.split(1, 0)[1], base.flatten()):
        before = view._version
        base.add_(1)
        assert view._version == before + 1
    assert base.select(0, 1).tolist() == [base.T.tolist()[i][1] for i in range(3)]


def test_chunk_and_split_counts():
    assert [tuple(p.shape) for p in aj.zeros(5, 4).chunk(3)] == [(2, 4), (2, 4), (1, 4)]
    assert len(aj.zeros(6).chunk(4)) == 3
    assert len(aj.zeros(0).chunk(3)) == 3
    assert [tuple(p.shape) for p in aj.zeros(7).split(3)] == [(3,), (3,), (1,)]


def test_stack_split_round_trip_gradient():
    x = leaf()
    aj.stack(x.unbind(1), 1).mul(aj.arange(4.0)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(np.arange(4.0), (2, 3, 4)))


@pytest.mark.parametrize("call, error, message", [
    (lambda x: x.t(), RuntimeError, "t\\(\\) expects a tensor with <= 2 dimensions, but self is "
     "3D"),
    (lambda x: x[0, 0].mT, RuntimeError, "only supported on matrices"),
    (lambda x: aj.stack([x, x[0]]), RuntimeError, "stack expects each tensor to be equal size"),
    (lambda x: aj.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda x: x.unflatten(2, (3, -1)), RuntimeError, "don't multiply up to the size of dim 2"),
    (lambda x: x.split([1, 1], 1), RuntimeError, "split_with_sizes expects split_sizes to sum "
     "exactly to 3"),
    (lambda x: x.repeat(2), RuntimeError, "repeat dims can not be smaller"),
    (lambda x: x.chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0"),
    (lambda x: x.select(1, 3), IndexError, "select\\(\\): index 3 out of range"),
    (lambda x: x.flatten(2, 0), RuntimeError, "start_dim cannot come after end_dim"),
    (lambda x: x.squeeze(3), IndexError, "Dimension out of range"),
    (lambda x: x.transpose(0, 3), IndexError, "Dimension out of range"),
])
def test_errors_like_torch(call, error, message):
    with pytest.raises(error, match=message):
        call(aj.zeros(2, 3, 4))
