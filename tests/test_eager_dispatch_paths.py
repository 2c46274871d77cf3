"""The eager dispatch's shorter paths against torch and against the general path: the Tensor
operators that bind a binary elementwise op in their own frame, the keyword wrappers that a
plain call skips (axis= and out= of cat, squeeze's new view), squeeze and unsqueeze of strided
tensors as views, and the objects an autograd graph keeps for the cyclic garbage collector
(autograd/graph.py record). docs/notes/eager-dispatch.md says why each exists."""

import gc

import numpy as np
import pytest
import torch

import autojit


def _pair(array, requires_grad=False):
    return (autojit.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


OPERANDS = [2, 0.5, True, -3]


@pytest.mark.parametrize("name", ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
                                  "__rmul__", "__truediv__", "__rtruediv__", "__pow__",
                                  "__rpow__", "__lt__", "__ge__", "__eq__", "__ne__",
                                  "__floordiv__", "__rmod__"])
def test_operators_match_torch(name):
    array = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]], dtype=np.float32)
    other = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    (x, tx), (y, ty) = _pair(array), _pair(other)
    for mine, theirs in [(y, ty), (x, tx)] + [(value, value) for value in OPERANDS]:
        if mine is True and "sub" in name:  # torch refuses a Python bool in a subtraction
            with pytest.raises(RuntimeError) as refused:
                getattr(x, name)(mine)
            with pytest.raises(RuntimeError) as theirs_refused:
                getattr(tx, name)(theirs)
            assert str(refused.value) == str(theirs_refused.value)
            continue
        result, expected = getattr(x, name)(mine), getattr(tx, name)(theirs)
        assert result.dtype.name == str(expected.dtype).split(".")[-1]
        np.testing.assert_allclose(result.numpy(), expected.numpy(), rtol=1e-6)
    # an int tensor with a float: torch's promotion, through the same frame
    (i, ti) = _pair(np.array([1, 2, 3]))
    result, expected = getattr(i, name)(0.5), getattr(ti, name)(0.5)
    np.testing.assert_allclose(result.numpy(), expected.numpy(), rtol=1e-6)
    assert result.dtype.name == str(expected.dtype).split(".")[-1]


def test_operators_defer_and_raise_as_torch():
    x, tx = _pair(np.ones(3, dtype=np.float32))
    assert x.__add__("a") is NotImplemented and tx.__add__("a") is NotImplemented
    assert x.__rsub__(object()) is NotImplemented

    class Other:  # a library's type with its own reflected operator
        def __rmul__(self, tensor):
            return "reflected"

    assert x * Other() == "reflected" and tx * Other() == "reflected"
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'Tensor' and "
                                        "'str'"):
        x + "a"
    with pytest.raises(TypeError, match="descriptor '__add__' for 'Tensor' objects doesn't "
                                        "apply to a 'int' object"):
        autojit.Tensor.__add__(2, x)
    with pytest.raises(RuntimeError) as mine:
        autojit.ones(3, dtype=autojit.bool) - autojit.ones(3, dtype=autojit.bool)
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(3, dtype=torch.bool) - torch.ones(3, dtype=torch.bool)
    assert str(mine.value) == str(theirs.value)


def test_operators_record_gradients_to_second_order():
    array = np.array([0.5, -1.5, 2.0], dtype=np.float32)
    (x, tx), (w, tw) = _pair(array, True), _pair(array[::-1].copy(), True)
    results = []
    for a, b in ((x, w), (tx, tw)):
        y = ((1 - a) * b + a / (b + 3) - 2 ** a) < 0.5
        z = ((1 - a) * b + a / (b + 3) - 2 ** a) * (~y)
        (g,) = (autojit if a is x else torch).autograd.grad(z.sum(), a, create_graph=True)
        (h,) = (autojit if a is x else torch).autograd.grad((g * g).sum(), b)
        results.append((g.detach().numpy(), h.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5)


def test_operators_of_a_parameter_and_under_no_grad():
    w = autojit.nn.Parameter(autojit.ones(3))
    y = 2 * w - w
    assert y.requires_grad and y.grad_fn.name() == "SubBackward0"
    with autojit.no_grad():
        assert not (w * 2).requires_grad


def test_keyword_wrappers_skipped_only_by_plain_calls():
    pieces = [np.arange(4, dtype=np.float32) + i for i in range(3)]
    mine, theirs = [autojit.tensor(p) for p in pieces], [torch.tensor(p) for p in pieces]
    np.testing.assert_array_equal(autojit.cat(mine, axis=0).numpy(),
                                  torch.cat(theirs, axis=0).numpy())
    out, tout = autojit.empty(12), torch.empty(12)
    assert autojit.cat(mine, out=out) is out
    torch.cat(theirs, out=tout)
    np.testing.assert_array_equal(out.numpy(), tout.numpy())
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'axis'"):
        autojit.cat(mine, dim=0, axis=0)
    column, tcolumn = _pair(np.ones((3, 1), dtype=np.float32))
    assert column.squeeze(axis=1).shape == tcolumn.squeeze(axis=1).shape
    row, trow = _pair(np.ones((3,), dtype=np.float32))
    same = row.squeeze()  # changes nothing: torch's new tensor, a view
    assert same is not row and same._base is row
    assert trow.squeeze() is not trow


def test_a_wrapper_of_a_wrapper_is_not_skipped():
    from autojit.ops import aliases, out_argument

    calls = []

    def inner(x):
        return x

    with_out = out_argument.with_out(inner)

    def outer(*args, **kwargs):  # copies with_out's attributes, as functools.wraps does
        calls.append(args)
        return with_out(*args, **kwargs)

    outer.__dict__.update(with_out.__dict__)
    wrapped = aliases.numpy_keywords(outer, "outer")
    x = autojit.ones(2)
    assert wrapped(x) is x and calls == [(x,)]
    assert aliases.numpy_keywords(with_out, "inner")(x) is x


def _strides(tensor):
    """The strides of the dims of more than one element (a size-1 dim's stride is free: a
    trailing one differs, 1 in torch and the next dim's step here, on any path)."""
    return [step for step, extent in zip(tensor.stride(), tensor.shape) if extent != 1]


MAKES = [lambda a: a.T, lambda a: a[:, ::2], lambda a: a.expand(2, 3, 4)[1],
         lambda a: a.unsqueeze(0).expand(2, 3, 4).transpose(0, 2)]


@pytest.mark.parametrize("make", MAKES)
def test_squeeze_and_unsqueeze_of_strided_tensors_are_views(make):
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, tx = _pair(array)
    x, tx = make(x), make(tx)
    for dim in range(-x.ndim - 1, x.ndim + 1):
        view, expected = x.unsqueeze(dim), tx.unsqueeze(dim)
        assert _strides(view) == _strides(expected) and view._base is not None
        assert view.shape == expected.shape
        np.testing.assert_array_equal(view.numpy(), expected.numpy())
    for dims in ((), (0,), (-1,)):
        view, expected = x.unsqueeze(0).unsqueeze(-1).squeeze(*dims), \
            tx.unsqueeze(0).unsqueeze(-1).squeeze(*dims)
        assert view.shape == expected.shape and _strides(view) == _strides(expected)
        assert np.shares_memory(view.numpy(), x.numpy())
    if make in MAKES[2:]:
        return  # expanded: torch refuses to write through it
    view = x.unsqueeze(1)
    base = view._base
    version = view._version
    view.mul_(2)  # a write through the view reaches its base
    assert view._version == version + 1
    np.testing.assert_array_equal(make(autojit.tensor(array * 2)).numpy(), x.numpy())
    assert base is not None


def test_an_autograd_graph_keeps_few_objects_per_op():
    """Each object a recorded node keeps alive is counted by the cyclic collector and
    promoted with the graph: equal meta and flags are shared between nodes (about 8.4 objects
    per op in this loop before, 5.7 after)."""
    start = np.linspace(-1, 1, 8, dtype=np.float32)
    (w, tw), (y, ty) = _pair(start[::-1].copy(), True), _pair(start)
    for _ in range(3):
        y = (y * w + 1.0).sigmoid()
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(100):
        y = (y * w + 1.0).sigmoid()
    per_op = (len(gc.get_objects()) - before) / 300
    assert per_op < 6.5, per_op
    for _ in range(103):
        ty = (ty * tw + 1.0).sigmoid()
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-7)


def _modes():
    """Context managers that make state.dispatch SPECIAL, and one that does not."""
    import contextlib

    return [contextlib.nullcontext, autojit.autograd.detect_anomaly,
            lambda: autojit.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x),
            autojit.autograd.forward_ad.dual_level]


@pytest.mark.parametrize("mode", range(4))
def test_grad_mode_writes_keep_the_dispatch_summary(mode):
    # A write of grad mode updates the summary alone (tensor/state.py): inside a mode that
    # makes every op take the general path, toggling grad mode must leave it there, and the
    # summary must equal the one computed from every flag at each point.
    from autojit.tensor.state import state

    with _modes()[mode]():
        for context in (autojit.no_grad, autojit.enable_grad, autojit.inference_mode):
            with context():
                assert state.dispatch == state._summary()
                with autojit.enable_grad():
                    assert state.dispatch == state._summary()
            assert state.dispatch == state._summary()
        x = autojit.tensor([1.0, 2.0], requires_grad=True)
        with autojit.no_grad():
            with autojit.enable_grad():
                y = (x * x).sum()
        y.backward()
        assert state.dispatch == state._summary()
    assert x.grad.tolist() == [2.0, 4.0]
    assert state.dispatch == state._summary() == 1  # RECORDING: grad mode on, nothing else


def test_backward_restores_grad_mode_and_hooks():
    from autojit.tensor.state import state

    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    for create_graph in (False, True):
        with autojit.no_grad():
            with autojit.enable_grad():
                y = (x * x).sum()
            autojit.autograd.backward(y, create_graph=create_graph)
            assert not autojit.is_grad_enabled() and state.dispatch == state._summary() == 0
        hooks = state.saved_tensor_hooks
        (x * x).sum().backward(create_graph=create_graph)
        assert autojit.is_grad_enabled() and state.saved_tensor_hooks is hooks
        x.grad = None


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_implicit_gradient_and_first_grad_match_torch(dtype):
    # The implicit gradient is made directly (autograd/api.py) and a first .grad is a copy in
    # the parameter's layout (tensor/memory_format.py's row-major shortcut): both as torch's.
    array = np.array([[0.5, -1.5, 2.0], [3.0, 0.25, -0.75]], dtype=np.float32)
    results = []
    for library in (autojit, torch):
        x = library.tensor(array, dtype=getattr(library, dtype), requires_grad=True)
        loss = (x * x).sum()
        loss.backward()
        first = x.grad
        results.append((first.dtype, first.float().numpy().copy(), first.stride()))
        given = library.ones(2, 3, dtype=getattr(library, dtype))
        x.grad = None
        x.backward(given)
        given.add_(1)  # the .grad made from it is its own copy
        results.append((x.grad.dtype, x.grad.float().numpy().copy(), x.grad.stride()))
        w = library.tensor(array.T.copy(), dtype=getattr(library, dtype)).t().requires_grad_()
        (w * 2).sum().backward()
        results.append((w.grad.dtype, w.grad.float().numpy().copy(), w.grad.stride()))
    mine, theirs = results[:3], results[3:]
    for (dtype_a, values_a, strides_a), (dtype_b, values_b, strides_b) in zip(mine, theirs):
        assert str(dtype_a).split(".")[-1] == str(dtype_b).split(".")[-1]
        np.testing.assert_array_equal(values_a, values_b)
        assert strides_a == strides_b
