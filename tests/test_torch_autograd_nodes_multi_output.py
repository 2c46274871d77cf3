"""The nodes of multi-output ops against torch: the outputs of unbind, split, chunk,
unsafe_split, var_mean and std_mean share one grad_fn (a hook on one output runs with None
when only another output gets a gradient, a pre-hook sees every output's gradient), the hooks
of a node no gradient reaches run with None, unsafe_split's pieces have version counters of
their own, and a view torch forbids rebuilding raises once its base is written (printed as
`grad_fn=<Invalid>`). Each program runs under torch and under autojit."""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")
from torch_outcomes import both, error_of  # noqa: E402

X = np.array([0.5, -1.25, 2.0, 0.75, -0.5])
M = np.arange(9.0).reshape(3, 3) / 4 - 1


def plain(value):
    """Tensors (nested in lists and tuples) as NumPy arrays, None as None."""
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (torch.Tensor, autojit.Tensor)):
        return value.detach().numpy()
    return value


def assert_same(expected, actual):
    expected, actual = plain(expected), plain(actual)
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(expected) == len(actual), (expected, actual)
        for e, a in zip(expected, actual):
            assert_same(e, a)
    elif isinstance(expected, np.ndarray):
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7)
    else:
        assert actual == expected


# ---- one node for all outputs -------------------------------------------------------------------

SHARING = {
    "unbind": lambda t, x: x.unbind(),
    "split": lambda t, x: x.split(2),
    "split_with_sizes": lambda t, x: x.split([1, 4]),
    "chunk": lambda t, x: x.chunk(2),
    "unsafe_split": lambda t, x: x.unsafe_split(2),
    "unsafe_chunk": lambda t, x: x.unsafe_chunk(2),
    "unsafe_split_with_sizes": lambda t, x: x.unsafe_split_with_sizes([2, 3]),
    "var_mean": lambda t, x: t.var_mean(x),
    "std_mean": lambda t, x: t.std_mean(x, dim=0),
}


@pytest.mark.parametrize("name", sorted(SHARING))
def test_outputs_share_one_node_named_as_torch(name):
    def program(t):
        x = t.tensor(X, requires_grad=True)
        outputs = SHARING[name](t, x * 1)
        node = outputs[0].grad_fn
        return (node.name(), [out.grad_fn is node for out in outputs],
                [out.output_nr for out in outputs] if t is torch else
                [out._output_nr for out in outputs],
                [next_node.name() for next_node, _ in node.next_functions])

    assert_same(*both(program))


@pytest.mark.parametrize("name", sorted(SHARING))
def test_a_hook_on_an_output_without_gradient_sees_none(name):
    def program(t):
        x = t.tensor(X, requires_grad=True)
        outputs = SHARING[name](t, x * 1)
        seen = []
        outputs[0].register_hook(lambda grad: seen.append(None if grad is None else
                                                          grad.detach().clone()))
        (outputs[-1] * 3).sum().backward(retain_graph=True)
        outputs[0].sum().backward()
        return seen, x.grad

    assert_same(*both(program))


def test_unbind_hook_called_with_none_for_each_other_output():
    def program(t):
        x = t.tensor(X, requires_grad=True)
        pieces = x.unbind()
        seen = []
        pieces[0].register_hook(lambda grad: seen.append(grad))
        grads = []
        for piece in pieces:
            piece.backward()
            grads.append(x.grad.clone())
        return seen, grads

    assert_same(*both(program))


def test_var_mean_pre_hook_sees_and_replaces_both_gradients():
    def program(t):
        a = t.tensor(M, requires_grad=True)
        var, mean = t.var_mean(a, dim=0)
        seen = []

        def prehook(grad_outputs):
            seen.append([None if g is None else g.clone() for g in grad_outputs])
            return tuple(None if g is None else g * 2 for g in grad_outputs)

        mean.grad_fn.register_prehook(prehook)
        (var + mean).sum().backward(retain_graph=True)
        first = a.grad.clone()
        a.grad = None
        mean.sum().backward()
        return seen, first, a.grad

    assert_same(*both(program))


def test_shared_node_gradients_with_create_graph_and_retain_graph():
    def program(t):
        a = t.tensor(M, requires_grad=True)
        var, mean = t.var_mean(a, dim=1)
        pieces = (a * a).unbind(1)
        loss = (var * mean).sum() + (pieces[0] * pieces[2]).sum()
        (g,) = t.autograd.grad(loss, a, create_graph=True)
        (h,) = t.autograd.grad(g.sum(), a)
        return g, h, var.grad_fn.name(), pieces[1].grad_fn.name()

    assert_same(*both(program))


def test_shared_node_is_freed_after_backward_as_torch():
    def program(t):
        a = t.tensor(M, requires_grad=True)
        var, mean = t.var_mean(a, dim=0)
        (var + mean).sum().backward()
        pieces = a.unbind()
        pieces[0].sum().backward()
        pieces[1].sum().backward()  # unbind's node saves nothing: it runs again
        return (error_of(lambda: var.sum().backward()), a.grad,
                var.grad_fn is mean.grad_fn, pieces[0].grad_fn.name())

    expected, actual = both(program)
    assert expected[0][0] == actual[0][0] == "RuntimeError"
    assert "freed" in expected[0][1] and "freed" in actual[0][1]
    assert_same(expected[1:], actual[1:])


# ---- hooks of a node that no gradient reaches ---------------------------------------------------

def _node_hooks_program(t):
    class PassFirst(t.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            return grad, None

    log = []
    x = t.tensor(X, requires_grad=True)
    w = t.tensor(X, requires_grad=True)
    y = x * 2
    y.register_hook(lambda grad: log.append(("tensor", grad)))
    w.register_hook(lambda grad: log.append(("leaf", grad)))
    y.grad_fn.register_prehook(lambda grads: log.append(("pre", list(grads))))
    y.grad_fn.register_hook(lambda grads_in, grads_out: log.append(
        ("post", list(grads_in), list(grads_out))))
    PassFirst.apply(x, y).sum().backward()
    PassFirst.apply(x, w).sum().backward()
    return log, x.grad, w.grad


def test_hooks_of_a_node_without_gradient_run_with_none():
    assert_same(*both(_node_hooks_program))


# ---- unsafe_split: pieces with version counters of their own ------------------------------------

@pytest.mark.parametrize("split", ["unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"])
def test_unsafe_split_pieces_written_in_place(split):
    calls = {"unsafe_split": lambda s: s.unsafe_split(1),
             "unsafe_split_with_sizes": lambda s: s.unsafe_split_with_sizes((1, 1, 1)),
             "unsafe_chunk": lambda s: s.unsafe_chunk(3)}

    def program(t):
        a = t.tensor(M, requires_grad=True)
        b = a + a
        s1, s2, s3 = calls[split](b)
        views = [s1._is_view(), s1._base is None]
        s1.mul_(s2)
        versions = [s1._version, s2._version, b._version]
        s1.sum().backward()
        return views, versions, s1.grad_fn.name(), a.grad, b

    assert_same(*both(program))


# ---- views torch will not rebuild ---------------------------------------------------------------

def test_unbind_output_after_its_base_was_written_raises():
    def program(t):
        a = t.tensor(X, requires_grad=True)
        x = a * 1
        pieces = x.unbind()
        x.mul_(2)
        return pieces[0].requires_grad, error_of(lambda: (pieces[0] * 2).sum().backward())

    assert_same(*both(program))


def test_view_made_without_grad_and_written_prints_invalid():
    def program(t):
        a = t.ones(1, requires_grad=True)
        with t.no_grad():
            b = a[:]
            b *= 2
        return repr(b), repr(a.clone())

    assert_same(*both(program))
