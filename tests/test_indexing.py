"""x[key], x[key] = value, gather/scatter_add, index_select, nonzero, masked_fill, max/min."""

import numpy as np
import pytest

import autojit as aj
from autojit.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(2)
BASE = rng.standard_normal((2, 3, 4))


def leaf(array=BASE):
    return aj.tensor(array, requires_grad=True)


# NumPy keys; torch places int+advanced combinations like the `expected` column.
KEYS = [
    (1, None), (-1, None), (slice(None, None, 2), None), ((Ellipsis, 1), None),
    ((None, 0, slice(1, None)), None), ((slice(None), 1, slice(0, 4, 3)), None),
    ([1, 0, 1], None), ((slice(None), [0, 2], [1, 3]), None), (([0, 1], slice(None), [1, 2]),
                                                                None),
    ((0, slice(None), [1, 2]), lambda a: a[0][:, [1, 2]]),
    ((None, [0, 1], slice(None), [1, 2]), None), ((Ellipsis, [[0], [3]]), None),
    ((np.array([True, False]),), None), ((BASE > 0,), None), ((slice(None), BASE[0] > 0), None),
    ((1, np.array([[0, 1], [2, 0]])), None), ((Ellipsis, None), None), ((True,), None),
]


@pytest.mark.parametrize("key, expected", KEYS)
def test_getitem_values_and_gradients(key, expected):
    x = leaf()
    reference = expected(BASE) if expected else BASE[key]
    autojit_key = tuple(aj.tensor(k) if isinstance(k, np.ndarray) else k for k in key) \
        if isinstance(key, tuple) else key
    out = x[autojit_key]
    np.testing.assert_array_equal(out.detach().numpy(), reference)
    assert gradcheck(lambda t: t[autojit_key], (x,))
    assert gradgradcheck(lambda t: t[autojit_key], (x,))


def test_repeated_indices_accumulate_gradient():
    x = leaf(np.arange(4.0))
    x[aj.tensor([0, 0, 3, 0])].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 0.0, 1.0]


def test_basic_indexing_returns_views_sharing_the_version_counter():
    base = aj.zeros(4, 3)
    view = base[0:2]
    assert view._version == 0
    base.add_(1)
    assert view._version == 1 and view.tolist() == [[1.0] * 3] * 2
    copy = base[[0, 1]]
    base.add_(1)
    assert copy.tolist() == [[1.0] * 3] * 2  # advanced indexing copies


@pytest.mark.parametrize("call, error, message", [
    (lambda x: x[5], IndexError, "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda x: x[:, -5], IndexError, "index -5 is out of bounds for dimension 1 with size 3"),
    (lambda x: x[aj.tensor([0, 2])], IndexError, "index 2 is out of bounds for dimension 0"),
    (lambda x: x[::-1], ValueError, "step must be greater than zero"),
    (lambda x: x[0, 0, 0, 0], IndexError, "too many indices for tensor of dimension 3"),
    (lambda x: x[..., ...], IndexError, "an index can only have a single ellipsis"),
    (lambda x: x[aj.tensor([1.0])], IndexError, "tensors used as indices must be long, int"),
    (lambda x: x[[0, 1], [0, 1, 2]], IndexError, r"shape mismatch: indexing tensors could not "
     r"be broadcast together with shapes \[2\], \[3\]"),
    (lambda x: x[aj.ones(3, dtype=aj.bool)], IndexError, "The shape of the mask"),
])
def test_getitem_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(aj.zeros(2, 3, 4))


def test_setitem_values():
    x = aj.zeros(3, 4)
    x[1:, :2] = aj.tensor([1.0, 2.0])
    x[0] = 7
    x[aj.tensor([2]), 3] = -1.0
    x[x == 2] = 5
    expected = np.array([[7, 7, 7, 7], [1, 5, 0, 0], [1, 5, 0, -1.0]])
    np.testing.assert_array_equal(x.numpy(), expected)
    with pytest.raises(RuntimeError, match="The expanded size of the tensor"):
        x[1:, :2] = aj.ones(3)


def test_setitem_gradients_closed_form_and_gradcheck():
    x = leaf()
    value = aj.tensor(rng.standard_normal(2), requires_grad=True)
    y = x * 1
    y[0, 1:, [1, 2]] = value
    (y * 3).sum().backward()
    expected = np.full(BASE.shape, 3.0)
    expected[0, 1:, 1:3] = 0
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    np.testing.assert_array_equal(value.grad.numpy(), [6.0, 6.0])  # broadcast over 2 rows

    def assign(t, v):
        out = t * 1
        out[:, 1, :2] = v
        return out

    v = aj.tensor(rng.standard_normal((1, 2)), requires_grad=True)
    assert gradcheck(assign, (x, v)) and gradgradcheck(assign, (x, v))


def test_setitem_bumps_version_and_checks_leaves():
    x = aj.zeros(3)
    x[0] = 1
    assert x._version == 1
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf()[0] = 1.0


def test_gather_scatter_add_values_and_gradients():
    x = leaf()
    index = aj.tensor([[[0, 3], [1, 1], [2, 0]]] * 2)
    np.testing.assert_array_equal(aj.gather(x, 2, index).detach().numpy(),
                                  np.take_along_axis(BASE, index.numpy(), 2))
    assert gradcheck(lambda t: aj.gather(t, 2, index), (x,))
    assert gradgradcheck(lambda t: t.gather(2, index), (x,))
    target = aj.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    src = aj.tensor(rng.standard_normal((2, 5)), requires_grad=True)
    small = aj.tensor([[0, 2, 0], [1, 0, 0]])
    expected = target.detach().numpy().copy()
    for i in range(2):
        for j in range(3):
            expected[small.numpy()[i, j], j] += src.detach().numpy()[i, j]
    np.testing.assert_allclose(aj.scatter_add(target, 0, small, src).detach().numpy(), expected)
    assert gradcheck(lambda t, s: aj.scatter_add(t, 0, small, s), (target, src))
    assert gradgradcheck(lambda t, s: t.scatter_add(0, small, s), (target, src))


@pytest.mark.parametrize("call, message", [
    (lambda x: aj.gather(x, 1, aj.tensor([[[0]]]).float()), "Expected dtype int32/int64"),
    (lambda x: aj.gather(x, 1, aj.tensor([[0]])), "same number of dimensions"),
    (lambda x: aj.gather(x, 1, aj.zeros(3, 1, 1, dtype=aj.int64)), "Size does not match"),
    (lambda x: aj.scatter_add(x, 1, aj.zeros(1, 1, 1, dtype=aj.int64),
                              aj.ones(1, 1, 1, dtype=aj.float64)), "self.dtype to be equal"),
    (lambda x: aj.index_select(x, 1, aj.tensor([0.0])), "Expected dtype int32 or int64"),
])
def test_gather_family_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call(aj.zeros(2, 3, 4))
    with pytest.raises(RuntimeError, match="index 7 is out of bounds for dimension 1 with "
                       "size 3"):  # torch's type for gather: RuntimeError
        aj.gather(aj.zeros(2, 3, 4), 1, aj.full((1, 1, 1), 7, dtype=aj.int64))


def test_index_select_take_along_dim_nonzero_masked_fill():
    x = leaf()
    index = aj.tensor([2, 0, 2])
    np.testing.assert_array_equal(x.index_select(1, index).detach().numpy(), BASE[:, [2, 0, 2]])
    assert gradcheck(lambda t: aj.index_select(t, 2, index), (x,))
    order = aj.tensor(np.argsort(BASE, axis=2))
    np.testing.assert_array_equal(aj.take_along_dim(x, order, 2).detach().numpy(),
                                  np.sort(BASE, axis=2))
    mask = aj.tensor([[True, False], [False, True]])
    assert aj.nonzero(mask).tolist() == [[0, 0], [1, 1]]
    assert [t.tolist() for t in mask.nonzero(as_tuple=True)] == [[0, 1], [0, 1]]
    assert [t.tolist() for t in aj.where(mask)] == [[0, 1], [0, 1]]
    filled = x.masked_fill(aj.tensor(BASE > 0), 0.5)
    np.testing.assert_array_equal(filled.detach().numpy(), np.where(BASE > 0, 0.5, BASE))
    filled.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (BASE <= 0).astype(float))
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        x.masked_fill(aj.ones(2, 3, 4), 0.0)


def test_max_min_with_dim():
    x = leaf(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]]))
    result = aj.max(x, 1)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert values.tolist() == [3.0, 2.0] and indices.tolist() == [1, 0]
    values.sum().backward()
    # Ties: only the selected (first) entry gets the gradient.
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    low = x.min(dim=0, keepdim=True)
    assert low.values.tolist() == [[1.0, 0.0, -1.0]] and low.indices.tolist() == [[0, 1, 1]]
    assert x.max().item() == 3.0 and aj.min(x).item() == -1.0
    assert aj.max(x, aj.zeros(3)).tolist() == [[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]]
    assert aj.max(aj.tensor(2.0), 0).values.item() == 2.0
    assert gradcheck(lambda t: t.max(1)[0], (leaf(),))
    assert gradgradcheck(lambda t: t.min(-1, keepdim=True).values, (leaf(),))


def test_boolean_mask_while_tracing_is_a_graph_break(monkeypatch):
    from autojit.tensor import graph_break as trace

    calls = []
    monkeypatch.setattr(trace, "graph_break", lambda what: calls.append(what) or (_ for _ in ())
                        .throw(trace.GraphBreak(what)))
    mask = aj.tensor([True, False])
    symbolic = aj.Tensor._make(None, aj.bool)
    symbolic._value = type("Value", (), {"shape": (2,), "dtype": aj.bool})()
    with pytest.raises(trace.GraphBreak):
        aj.zeros(2)[symbolic]
    assert calls == ["boolean mask indexing"]
    assert aj.zeros(2)[mask].shape == (1,)


def test_a_zero_dim_bool_tensor_indexes_as_a_python_bool_like_torchs():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (aj, torch):
        x, y = lib.arange(3), lib.arange(6).reshape(2, 3)
        yes, no = lib.tensor(True), lib.tensor(False)
        written = lib.zeros(3)
        written[yes] = 5
        kept = lib.zeros(3)
        kept[no] = 5
        results.append([x[yes].tolist(), tuple(x[no].shape), tuple(x[None, yes].shape),
                        y[yes, 1].tolist(), tuple(y[..., no].shape), written.tolist(),
                        kept.tolist()])
    assert results[0] == results[1]
    compiled = aj.compile(lambda x, mask: x[mask] * 2)
    assert tuple(compiled(aj.arange(3.0), aj.tensor(True)).shape) == (1, 3)
    assert tuple(compiled(aj.arange(3.0), aj.tensor(False)).shape) == (0, 3)


SLICE_KEYS = [(Ellipsis, slice(None, 16)), (Ellipsis, slice(16, None)), (slice(1, 3),),
              slice(None, None, 2), (slice(-3, None), Ellipsis, slice(2, 30, 3)),
              (slice(5, 2),), (slice(100, 200),), (Ellipsis, slice(-100, 5)),
              (slice(None), Ellipsis, slice(1, None), slice(None, 7))]


@pytest.mark.parametrize("key", SLICE_KEYS)
def test_slice_keys_of_a_tensor_needing_grad_as_torch(key):
    """Keys of slices and an Ellipsis on a transposed tensor that needs a node (a rotary
    embedding's halves): one SliceBackward0 view, torch's strides and gradient, and an
    in-place write through it seen by the base."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (aj, torch):
        data = np.arange(4 * 8 * 4 * 32, dtype=np.float32).reshape(4, 8, 4, 32)
        x = lib.tensor(data).transpose(1, 2).requires_grad_()
        y = x[key]
        (y * lib.arange(y.shape[-1], dtype=lib.float32)).sum().backward()
        base = x.detach().clone()
        view = base[key]
        view.mul_(2)
        results.append((tuple(y.shape), tuple(y.stride()), type(y.grad_fn).__name__,
                        x.grad.numpy().tolist(), float(base.sum())))
    assert results[0] == results[1]


INT_KEYS = [0, -1, (slice(None), 0), (Ellipsis, 1), (0, slice(1, 3)), (1, Ellipsis, -2),
            (slice(None, None, 2), -1, slice(3, None))]


@pytest.mark.parametrize("key", INT_KEYS)
def test_int_keys_of_a_tensor_needing_grad_as_torch_and_the_general_path(key):
    """Keys with ints (a classifier's `x[:, 0]`) on a tensor that needs a node: torch's values,
    strides and gradient, and the nodes of the general path (a slice, then a reshape that
    drops the ints' dims; torch has one SelectBackward0 node there)."""
    torch = pytest.importorskip("torch")
    from autojit.ops.indexing import subscript

    results = []
    for lib in (aj, torch):
        x = lib.tensor(np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6),
                       requires_grad=True)
        y = x[key]
        (y * 3).sum().backward()
        results.append((tuple(y.shape), tuple(y.stride()), x.grad.numpy().tolist()))
    assert results[0] == results[1]
    x = aj.tensor(np.ones((4, 5, 6), np.float32), requires_grad=True)
    fast, general = x[key], subscript._general(x, key)
    names = [(type(y.grad_fn).__name__, type(y.grad_fn.next_functions[0][0]).__name__)
             for y in (fast, general)]
    assert names[0] == names[1]
    with pytest.raises(IndexError) as mine:
        aj.tensor(np.ones((2, 3)), requires_grad=True)[:, 3]
    with pytest.raises(IndexError) as theirs:
        torch.ones(2, 3, requires_grad=True)[:, 3]
    assert str(mine.value) == str(theirs.value)
