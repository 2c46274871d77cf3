"""The eager fast paths of the data path (ops/layout/eager_views.py) against torch and against the
general dispatch they stand in for: basic indexing, reshape and its forms, cat and stack,
tensor() of a list of numbers, item() and tolist().

Each fast path must give what the general path gives (the same values and dtype, a view of
the same base sharing its version counter, the same chain of view primitives for in-place
writes and grad_fn regeneration), and what torch gives (values, errors, gradients through
the view after its base or the view itself is written in place).
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import autojit
from autojit.ops import registry
from autojit.ops.indexing import subscript
from autojit.ops.inplace import view_steps
from autojit.ops.layout import eager_views
from autojit.ops.layout import primitives as layout

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
SHAPES = [(5,), (4, 6), (2, 3, 4)]
KEYS = [
    0, -1, 3, slice(1, 3), slice(None, None, 2), slice(-3, None), slice(2, 100),
    slice(1, None, 3), None, Ellipsis, (1, 2), (None, 1), (Ellipsis, 1), (1, Ellipsis),
    (slice(1, 3), None, 0), (None, Ellipsis, None), (0, None, slice(None, None, 2)),
    (-1, -1), (slice(None), 1), (Ellipsis, None), (1, slice(None), None), (-1, None),
    (None, -2), (Ellipsis, -1, None), (slice(None), None), (slice(0, 100), None),
]
ERROR_KEYS = [
    7, -7, (0, 0, 0, 0), slice(None, None, 0), slice(None, None, -1), (0, 9),
    (Ellipsis, 0, -9), (1, Ellipsis, 5),
]


def _outcome(function, *args):
    try:
        return ("returns", function(*args))
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return ("raises", type(error).__name__, str(error))


def _chain(view):
    return [(op.name, attrs) for op, attrs in view_steps(view)]


def _general(monkeypatch):
    """Make getitem and the reshapes take the general dispatch."""
    monkeypatch.setattr(subscript, "getitem", subscript._general)
    monkeypatch.setattr(autojit.Tensor, "__getitem__", subscript._general)
    monkeypatch.setattr(layout, "reshape_view", lambda *args: None)


@pytest.mark.parametrize("shape", SHAPES)
def test_basic_keys_match_torch_and_the_general_path(shape, monkeypatch):
    array = rng.standard_normal(shape).astype(np.float32)
    general = []

    def counted(*args):
        general.append(args)
        return general_path(*args)

    general_path = subscript._general
    monkeypatch.setattr(subscript, "_general", counted)
    for key in KEYS:
        general.clear()
        x, t = autojit.from_numpy(array.copy()), torch.from_numpy(array.copy())
        mine, theirs = _outcome(operator.getitem, x, key), _outcome(operator.getitem, t, key)
        assert mine[0] == theirs[0], key
        if mine[0] == "raises":
            assert mine[1:] == theirs[1:], key
            continue
        out, expected = mine[1], theirs[1]
        np.testing.assert_array_equal(out.numpy(), expected.numpy())
        assert out.dtype is autojit.float32 and tuple(out.shape) == tuple(expected.shape)
        if tuple(out.shape) == tuple(x.shape):
            # x[:], x[...]: a view of x of its own (the general path's), as torch's
            assert out is not x and out._base is x, key
            assert np.shares_memory(out.numpy(), x.numpy())
            continue
        if not out.numel():  # empty results (a copy)
            continue
        assert not general, key  # the fast path made every non-empty view
        assert out._base is x and out._version_counter is x._version_counter
        assert np.shares_memory(out.numpy(), x.numpy())
        other = general_path(x, key)
        assert _chain(out) == _chain(other), key
        assert out._base is other._base
        assert out.numpy().strides == other.numpy().strides, key  # new dims' too


def test_integer_index_of_a_vector_is_a_0d_view():
    y = autojit.tensor([3, 1, 4, 1, 5])
    item = y[2]
    assert item.shape == () and item.dtype is autojit.int64 and item.item() == 4
    assert item._base is y and np.shares_memory(item.numpy(), y.numpy())
    assert _chain(item) == [("slice", {"slices": ((2, 3, 1),)}), ("reshape", {"shape": ()})]


def test_the_intermediate_view_is_made_only_when_the_chain_is_walked():
    x = autojit.zeros(4, 6)
    view = x[1, 2:5]
    assert view._view_source.made is None
    middle, op, attrs = view._view_source
    assert op is layout.RESHAPE and attrs == {"shape": (3,)}
    assert middle._base is x and middle._view_source[0] is x
    assert tuple(middle.shape) == (1, 3) and middle._version_counter is x._version_counter
    assert view._view_source.made is not None


@pytest.mark.parametrize("key", ERROR_KEYS)
def test_errors_are_torchs(key):
    array = np.zeros((2, 3, 4), dtype=np.float32)
    mine = _outcome(lambda: autojit.from_numpy(array)[key])
    theirs = _outcome(lambda: torch.from_numpy(array)[key])
    assert mine[0] == theirs[0] == "raises"
    assert mine[1] == theirs[1] and mine[2] == theirs[2], key


def test_zero_dim_tensors_are_indexed_as_in_torch():
    for key in (None, Ellipsis, (None, None), 0, slice(None), (0,), (None, 0), True, -1, 2,
                np.int64(0)):
        mine = _outcome(operator.getitem, autojit.tensor(2.5), key)
        theirs = _outcome(operator.getitem, torch.tensor(2.5), key)
        assert mine[0] == theirs[0]
        if mine[0] == "returns":
            assert mine[1].tolist() == theirs[1].tolist()
        else:
            assert mine[1:] == theirs[1:]


def _writes(lib):
    base = lib.arange(24.0).reshape(4, 6)
    row, column, block = base[1], base[:, -1], base[2:, None, 1:5:2]
    row.add_(1)
    column.mul_(-1)
    block.fill_(7)
    return base, row, column, block


def test_writes_through_views_reach_the_base_with_torchs_versions():
    mine, theirs = _writes(autojit), _writes(torch)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a._version == b._version


def _regenerated(lib, weights):
    base = lib.zeros(4, 6, dtype=lib.float64)
    view = base[1, 2:5]  # base needs no gradient yet: the fast path made this view
    w = lib.tensor(weights, requires_grad=True)
    scale = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
    base.add_(w * w)
    # Recording the product regenerates the view's grad_fn from its chain of view ops.
    loss = ((view * scale) ** 3).sum()
    (grad,) = lib.autograd.grad(loss, w, create_graph=True)
    (second,) = lib.autograd.grad((grad * grad).sum(), w)
    return view.detach(), grad.detach(), second


def test_a_view_regenerates_its_grad_fn_after_its_base_is_written():
    weights = rng.standard_normal((4, 6))
    for a, b in zip(_regenerated(autojit, weights), _regenerated(torch, weights), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def _written_through(lib, weights):
    base = lib.ones(3, 4, dtype=lib.float64)
    view = base[1:, None, 2]
    w = lib.tensor(weights, requires_grad=True)
    view.mul_(w)
    loss = (base ** 3).sum()
    (grad,) = lib.autograd.grad(loss, w, create_graph=True)
    (second,) = lib.autograd.grad(grad.sum(), w)
    return base.detach(), grad.detach(), second


def test_a_write_with_gradient_through_a_view_reaches_the_base():
    weights = rng.standard_normal((2, 1))
    for a, b in zip(_written_through(autojit, weights), _written_through(torch, weights),
                    strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def _after_transpose(lib):
    x = lib.zeros(3, 4)
    view = x[1, 1:3]
    x.t_()
    view.add_(5)
    return x, view


def test_a_view_made_before_its_source_is_transposed_in_place():
    for a, b in zip(_after_transpose(autojit), _after_transpose(torch), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_source_that_needs_a_node_takes_the_general_path():
    weights = rng.standard_normal((3, 4))
    x, t = autojit.tensor(weights, requires_grad=True), torch.tensor(weights, requires_grad=True)
    out, expected = x[1, ::2], t[1, ::2]
    assert out.grad_fn is not None and out.requires_grad
    (out * out).sum().backward()
    (expected * expected).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    with autojit.no_grad():
        plain = x[1, ::2]
    assert plain.grad_fn is None and not plain.requires_grad and plain._base is x


def test_no_fast_path_while_a_vjp_chain_is_recorded(monkeypatch):
    x = autojit.zeros(3, 4)
    monkeypatch.setattr(registry, "STEP", lambda *args: None)
    assert x[1]._view_source[0] is not x  # the general path's slice, not a LazySource
    assert eager_views.reshape_view(x, (12,), layout.RESHAPE) is None
    assert eager_views.joined((x, x), 0, True, layout.CAT) is None


def test_compiled_indexing_equals_eager():
    array = rng.standard_normal((5, 6)).astype(np.float32)

    def step(x):
        return x[1] * 2, x[None, 2, ::2] - 1, x[..., -1].reshape(5, 1) * x[-1, 1:3]

    x = autojit.from_numpy(array)
    compiled = autojit.compile(step)
    for mine, eager, theirs in zip(compiled(x), step(x), step(torch.from_numpy(array)),
                                   strict=True):
        np.testing.assert_array_equal(mine.numpy(), eager.numpy())
        np.testing.assert_array_equal(eager.numpy(), theirs.numpy())


# ---- reshape, view, unsqueeze, squeeze, flatten -----------------------------------------------

RESHAPES = [
    lambda x: x.view(-1), lambda x: x.reshape(2, -1), lambda x: x.unsqueeze(0),
    lambda x: x.unsqueeze(-1), lambda x: x.unsqueeze(1).squeeze(1), lambda x: x.squeeze(),
    lambda x: x[:, :1].squeeze(1), lambda x: x.flatten(), lambda x: x.flatten(1),
    lambda x: x.t().reshape(-1), lambda x: x.t().flatten(), lambda x: x[:, ::2].reshape(6),
    lambda x: x.view(3, 5), lambda x: x.reshape(-1, -1), lambda x: x.squeeze(4),
    lambda x: x.unsqueeze(3), lambda x: x.flatten(-1),
]


@pytest.mark.parametrize("index", range(len(RESHAPES)))
def test_reshapes_match_torch_and_the_general_path(index, monkeypatch):
    function = RESHAPES[index]
    array = rng.standard_normal((3, 4)).astype(np.float32)
    x, t = autojit.from_numpy(array.copy()), torch.from_numpy(array.copy())
    mine, theirs = _outcome(lambda: function(x)), _outcome(lambda: function(t))
    assert mine[0] == theirs[0]
    if mine[0] == "raises":
        assert mine[1] == theirs[1]
        return
    out, expected = mine[1], theirs[1]
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert tuple(out.shape) == tuple(expected.shape)
    if out is x:  # squeeze() of nothing: x itself (torch: a view of it)
        return
    # A view where torch's is one, a copy of its own where torch copies.
    assert (out._base is not None) == (expected._base is not None)
    with monkeypatch.context() as patch:
        _general(patch)
        general = function(x)
    assert _chain(out) == _chain(general)
    assert (out._base is None) == (general._base is None)


def test_a_reshaped_view_shares_the_version_counter():
    x = autojit.zeros(2, 3)
    flat = x.view(-1)
    flat.add_(1)
    assert x._version == flat._version == 1 and x.tolist() == [[1.0] * 3] * 2


# ---- cat and stack ------------------------------------------------------------------------------

JOINS = [
    ("cat", [(4,), (3,)], 0), ("cat", [(2, 3), (2, 1)], 1), ("cat", [(2, 3), (5, 3)], -2),
    ("cat", [(2, 2), (2, 2)], 1), ("stack", [(2, 2), (2, 2)], 1),
    ("stack", [(3,), (3,), (3,)], 0), ("stack", [(2, 3), (2, 3)], 2),
    ("stack", [(), ()], 0), ("stack", [(2,), (2,)], -1), ("cat", [(0,), (2, 2)], 0),
    ("cat", [(0,), (3,)], 0), ("cat", [(2, 3), (2, 4)], 0), ("stack", [(2,), (3,)], 0),
    ("cat", [(2,), ()], 0), ("cat", [(3,)], 1), ("stack", [(3,)], 2),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "bfloat16"])
@pytest.mark.parametrize("join", JOINS)
def test_cat_and_stack_match_torch(join, dtype):
    name, shapes, dim = join
    arrays = [rng.standard_normal(shape) * 3 for shape in shapes]

    def run(lib):
        kind = getattr(lib, dtype)
        return getattr(lib, name)([lib.tensor(a).to(kind) for a in arrays], dim)

    mine, theirs = _outcome(lambda: run(autojit)), _outcome(lambda: run(torch))
    assert mine[0] == theirs[0]
    if mine[0] == "raises":
        assert mine[1:] == theirs[1:]
        return
    assert str(mine[1].dtype).split(".")[-1] == str(theirs[1].dtype).split(".")[-1]
    np.testing.assert_array_equal(mine[1].float().numpy(), theirs[1].float().numpy())


def test_cat_and_stack_of_tensors_that_need_gradients():
    weights = [rng.standard_normal(3) for _ in range(3)]

    def run(lib):
        leaves = [lib.tensor(w, requires_grad=True) for w in weights]
        joined = lib.stack([leaves[0], leaves[1] * 2]) * lib.cat(leaves[1:]).reshape(2, 3)
        (grad,) = lib.autograd.grad(joined.sum(), leaves[1], create_graph=True)
        return joined.detach(), grad.detach()

    for a, b in zip(run(autojit), run(torch), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_joined_results_are_laid_out_as_torchs():
    def run(lib):
        a, b = lib.arange(6.0).reshape(2, 3).t(), lib.arange(6.0, 12.0).reshape(2, 3).t()
        c = lib.arange(120.0).reshape(2, 3, 4, 5).to(memory_format=lib.channels_last)
        joins = [lib.cat([a, b]), lib.cat([a, b], 1), lib.stack([a, b]), lib.stack([a, b], 1),
                 lib.cat([c, c]), lib.cat([c, c], 1), lib.stack([c[0], c[1]]),
                 lib.stack([a[:, :1], b[:, :1]])]
        return [(tuple(j.stride()), j.tolist()) for j in joins]

    assert run(autojit) == run(torch)


def test_mixed_dtypes_promote_as_torch():
    for name in ("cat", "stack"):
        mine = getattr(autojit, name)([autojit.ones(2, dtype=autojit.int64), autojit.ones(2)])
        theirs = getattr(torch, name)([torch.ones(2, dtype=torch.int64), torch.ones(2)])
        assert str(mine.dtype) == str(theirs.dtype).replace("torch", "autojit")


# ---- tensor() of numbers, item(), tolist() ------------------------------------------------------

LISTS = [[1, 2, 3], [1.5, 2], [True, False], [True, 2], [1, 2.5, True], [0.1, -2.5, -0.0]]


@pytest.mark.parametrize("values", LISTS)
@pytest.mark.parametrize("dtype", [None, "float64", "float16", "bfloat16", "int64", "int32",
                                   "uint8", "bool"])
def test_tensor_of_a_list_of_numbers_matches_torch(values, dtype):
    def run(lib):
        return lib.tensor(values, dtype=None if dtype is None else getattr(lib, dtype))

    mine, theirs = _outcome(lambda: run(autojit)), _outcome(lambda: run(torch))
    assert mine[0] == theirs[0]
    if mine[0] == "raises":
        assert mine[1] == theirs[1]
        return
    assert str(mine[1].dtype).split(".")[-1] == str(theirs[1].dtype).split(".")[-1]
    assert mine[1].tolist() == theirs[1].tolist()


def test_tensor_of_floats_follows_the_default_dtype():
    previous = autojit.get_default_dtype()
    autojit.set_default_dtype(autojit.float64)
    try:
        assert autojit.tensor([0.1, 2]).dtype is autojit.float64
        assert autojit.tensor([0.1, 2]).tolist() == [0.1, 2.0]
    finally:
        autojit.set_default_dtype(previous)


def test_item_and_tolist_match_torch():
    array = rng.standard_normal((2, 3)).astype(np.float32)
    x, t = autojit.from_numpy(array), torch.from_numpy(array)
    assert x[1, 2].item() == t[1, 2].item() and x.tolist() == t.tolist()
    assert x[:1, 2:].item() == t[:1, 2:].item()
    assert autojit.tensor(7).tolist() == 7 and autojit.tensor(True).item() is True
    mine, theirs = _outcome(lambda: x.item()), _outcome(lambda: t.item())
    assert mine == theirs
