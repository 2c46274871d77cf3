"""mean as one primitive (ops/reduction.py MEAN), against torch: its node (MeanBackward0
without a dim, MeanBackward1 with one) and the values torch shows on it
(`_saved_self_sym_sizes`, `_saved_self_sym_numel`), values, first and second order gradients,
forward mode and vmap; eagerly the same bits as the sum divided by the count it replaces, and
compiled code sees that sum and division (no mean node in the graph), equal to eager."""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit.ops.reduction import sum_

torch = pytest.importorskip("torch")

CALLS = [((2, 3), {}), ((2, 3), {"dim": 0}), ((2, 3), {"dim": -1, "keepdim": True}),
         ((2, 3, 4), {"dim": (0, 2)}), ((2, 3), {"dim": None}), ((5,), {"dim": ()}),
         ((), {}), ((0, 3), {"dim": 0})]


def _pair(shape, dtype=np.float64, seed=0):
    array = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return (autojit.tensor(array.copy(), requires_grad=True),
            torch.tensor(array.copy(), requires_grad=True))


@pytest.mark.parametrize("shape, kwargs", CALLS)
def test_node_and_saved_values_are_torchs(shape, kwargs):
    x, tx = _pair(shape)
    node, tnode = x.mean(**kwargs).grad_fn, tx.mean(**kwargs).grad_fn
    assert node.name() == tnode.name()
    assert type(node).__name__ == type(tnode).__name__
    assert node._saved_self_sym_sizes == tnode._saved_self_sym_sizes == tuple(shape)
    assert all(isinstance(size, int) for size in node._saved_self_sym_sizes)
    assert node._saved_self_sym_numel == tnode._saved_self_sym_numel
    if "dim" in kwargs:
        assert node._saved_keepdim == tnode._saved_keepdim
    with pytest.raises(AttributeError):
        node._saved_self  # noqa: B018 - torch's node saves no tensor
    assert autojit.mean(x, **kwargs).grad_fn.name() == torch.mean(tx, **kwargs).grad_fn.name()


@pytest.mark.parametrize("shape, kwargs", CALLS)
def test_values_and_gradients_are_torchs(shape, kwargs):
    x, tx = _pair(shape)
    y, ty = x.mean(**kwargs), tx.mean(**kwargs)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    weight = np.linspace(1.0, 2.0, ty.numel()).reshape(tuple(ty.shape))
    (grad,) = autojit.autograd.grad(y, x, autojit.tensor(weight), create_graph=True)
    (tgrad,) = torch.autograd.grad(ty, tx, torch.tensor(weight), create_graph=True)
    np.testing.assert_allclose(grad.detach().numpy(), tgrad.detach().numpy(), rtol=1e-12)
    assert grad.requires_grad == tgrad.requires_grad  # create_graph: a graph of the gradient


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape, dim", [((7,), None), ((3, 5), 1), ((4, 3, 1100), (0, 2)),
                                        ((2000, 3), 0), ((3, 0), 1)])
def test_same_bits_as_the_sum_divided_by_the_count(dtype, shape, dim):
    rng = np.random.default_rng(1)
    array = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        array = array + 1j * rng.standard_normal(shape)
    x = autojit.tensor(array.astype(dtype))
    dims = range(len(shape)) if dim is None else dim if isinstance(dim, tuple) else (dim,)
    count = int(np.prod([shape[d] for d in dims]))
    mean = x.mean() if dim is None else x.mean(dim)
    expected = (sum_(x) if dim is None else sum_(x, dim)) / count
    np.testing.assert_array_equal(mean.numpy(), expected.numpy())
    assert mean.dtype == x.dtype and mean.stride() == expected.stride()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_is_computed_in_float32(dtype):
    array = np.random.default_rng(2).standard_normal((3, 100))
    x = autojit.tensor(array, dtype=getattr(autojit, dtype))
    tx = torch.tensor(array, dtype=getattr(torch, dtype))
    assert x.mean(1).dtype == x.dtype
    np.testing.assert_array_equal(x.mean(1).float().numpy(), tx.mean(1).float().numpy())


def test_forward_mode_and_vmap_are_torchs():
    x, tx = _pair((3, 4))
    tangent = np.arange(12.0).reshape(3, 4)
    with autojit.autograd.forward_ad.dual_level():
        dual = autojit.autograd.forward_ad.make_dual(x.detach(), autojit.tensor(tangent))
        got = autojit.autograd.forward_ad.unpack_dual(dual.mean(0)).tangent
    with torch.autograd.forward_ad.dual_level():
        dual = torch.autograd.forward_ad.make_dual(tx.detach(), torch.tensor(tangent))
        expected = torch.autograd.forward_ad.unpack_dual(dual.mean(0)).tangent
    np.testing.assert_allclose(got.numpy(), expected.numpy())
    np.testing.assert_allclose(autojit.vmap(lambda v: v.mean(0))(x.detach()).numpy(),
                               torch.vmap(lambda v: v.mean(0))(tx.detach()).numpy())


def test_compiled_sees_sum_and_division_and_equals_eager():
    rng = np.random.default_rng(3)
    x = autojit.tensor(rng.standard_normal((64, 32)).astype(np.float32), requires_grad=True)

    def step(x):
        y = (x.tanh().mean(0) ** 2).mean() + (x * x).mean(1, keepdim=True).sum()
        (grad,) = autojit.autograd.grad(y, x)
        return y, grad

    compiled = autojit.compile(step)
    for actual, expected in zip(compiled(x), step(x)):
        np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(),
                                   rtol=1e-6, atol=1e-7)
    ops = {line.split("=", 1)[1].split()[0] for line in compiled.ir().splitlines()
           if "=" in line and line.lstrip().startswith("%")}
    assert "mean" not in ops and {"sum", "div"} <= ops


@pytest.mark.parametrize("dim", [None, 0])
def test_complex32_raises_torchs_error(dim):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # complex32 is experimental in both
        x = autojit.zeros(2, 3, dtype=autojit.complex32)
        tx = torch.zeros(2, 3, dtype=torch.complex32)
    kwargs = {} if dim is None else {"dim": dim}
    with pytest.raises(NotImplementedError) as expected:
        tx.mean(**kwargs)
    with pytest.raises(NotImplementedError, match=f"^{expected.value}$"):
        x.mean(**kwargs)
