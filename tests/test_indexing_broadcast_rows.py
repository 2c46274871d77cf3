"""x[i, j, ...] with index tensors broadcasting to a large shape, as torchvision's roi_align in
Python reads a feature map: values, gradients and errors against torch, the flat positions
the read keeps for backward (a k-th of the stacked rows), and the same read compiled."""

import numpy as np
import pytest

import autojit as aj
from autojit.autograd import gradcheck

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)
MAP = rng.standard_normal((2, 8, 10, 12))


def _rows(n=80, negative=False):
    """roi_align's four rows: batch per box, channel, and y/x per sample, broadcasting to
    (n, 8, 3, 3, 2, 2): 92,160 stacked entries, past the flat path's threshold."""
    g = np.random.default_rng(3)
    batch = g.integers(0, 2, n)[:, None, None, None, None, None]
    channel = np.arange(8)[None, :, None, None, None, None]
    y = g.integers(0, 10, (n, 3, 2))[:, None, :, None, :, None]
    x = g.integers(0, 12, (n, 3, 2))[:, None, None, :, None, :]
    if negative:
        y, x = y - 10, x - 12
    return batch, channel, y, x


@pytest.mark.parametrize("negative", [False, True])
def test_broadcast_rows_read_and_differentiate_as_in_torch(negative):
    rows = _rows(negative=negative)
    upstream = rng.standard_normal((80, 8, 3, 3, 2, 2))
    x, t = aj.tensor(MAP, requires_grad=True), torch.tensor(MAP, requires_grad=True)
    out = x[tuple(aj.tensor(r) for r in rows)]
    expected = t[tuple(torch.tensor(r) for r in rows)]
    assert tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    v, tv = aj.tensor(upstream, requires_grad=True), torch.tensor(upstream, requires_grad=True)
    (grad,) = aj.autograd.grad(out, x, v, create_graph=True)
    (expected_grad,) = torch.autograd.grad(expected, t, tv, create_graph=True)
    np.testing.assert_allclose(grad.detach().numpy(), expected_grad.detach().numpy(),
                               rtol=1e-12, atol=1e-12)
    # second order: the gradient's gradient w.r.t. the upstream values reads the map again
    weights = rng.standard_normal(MAP.shape)
    (again,) = aj.autograd.grad((grad * aj.tensor(weights)).sum(), v)
    (expected_again,) = torch.autograd.grad((expected_grad * torch.tensor(weights)).sum(), tv)
    np.testing.assert_allclose(again.numpy(), expected_again.numpy(), rtol=1e-12, atol=1e-12)


def test_broadcast_rows_keep_one_flat_row_for_backward():
    rows = [aj.tensor(r) for r in _rows()]
    out = aj.tensor(MAP, requires_grad=True)[tuple(rows)]
    kept = [entry for entry in out.grad_fn._saved if entry is not None]
    (entry,) = kept
    index = entry.unpack(out.grad_fn)
    # one row of the broadcast shape, not four, and int32 positions
    assert tuple(index.shape) == (1, *out.shape)
    assert index.dtype == aj.int32


def test_broadcast_rows_out_of_range_raise_torchs_error():
    rows = list(_rows())
    rows[2] = rows[2].copy()
    rows[2][5, 0, 1, 0, 1, 0] = 10
    with pytest.raises(IndexError) as expected:
        torch.tensor(MAP)[tuple(torch.tensor(r) for r in rows)]
    with pytest.raises(IndexError) as got:
        aj.tensor(MAP)[tuple(aj.tensor(r) for r in rows)]
    assert str(got.value) == str(expected.value)


def test_broadcast_rows_compiled_equal_eager():
    rows = [aj.tensor(r) for r in _rows()]

    def read(m):
        return (m[tuple(rows)] * 2).sum(dim=(2, 3))

    x = aj.tensor(MAP, requires_grad=True)
    eager = read(x)
    compiled = aj.compile(read)(x)
    np.testing.assert_allclose(compiled.detach().numpy(), eager.detach().numpy(), rtol=1e-12)


def test_broadcast_rows_gradcheck_small_map():
    small = rng.standard_normal((2, 3, 4, 5))
    rows = (aj.tensor(np.arange(2)[:, None, None, None].repeat(300, 1)),
            aj.tensor(np.arange(3)[None, None, :, None]),
            aj.tensor(rng.integers(-4, 4, (1, 300, 1, 1))),
            aj.tensor(rng.integers(0, 5, (1, 1, 1, 40))))
    assert gradcheck(lambda m: m[rows], (aj.tensor(small, requires_grad=True),), fast_mode=True)
