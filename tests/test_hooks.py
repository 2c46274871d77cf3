"""Tensor hooks, node hooks, retain_grad and post-accumulate-grad hooks (autograd/hooks.py)."""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest

import autojit
from autojit import autograd


def values(tensor):
    return tensor.detach().numpy().tolist()


def test_reference_example_doubles_the_gradient():
    v = autojit.tensor([0., 0., 0.], requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)  # double the gradient
    v.backward(autojit.tensor([1., 2., 3.]))
    assert values(v.grad) == [2., 4., 6.]
    h.remove()  # removes the hook
    v.grad = None
    v.backward(autojit.tensor([1., 2., 3.]))
    assert values(v.grad) == [1., 2., 3.]


def test_old_reference_example_with_variable():
    v = autograd.Variable(autojit.Tensor([0, 0, 0]), requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)
    v.backward(autojit.Tensor([1, 1, 1]))
    assert values(v.grad.data) == [2., 2., 2.]
    h.remove()


def test_hooks_run_in_registration_order_and_chain():
    x = autojit.tensor([1., 2.], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(("first", values(g))) or g + 1)
    x.register_hook(lambda g: seen.append(("second", values(g))) or g * 10)
    (x * 1).sum().backward()
    assert seen == [("first", [1., 1.]), ("second", [2., 2.])]
    assert values(x.grad) == [20., 20.]


def test_leaf_hook_sees_the_new_gradient_before_accumulation():
    x = autojit.tensor([1., 2.], requires_grad=True)
    x.grad = autojit.tensor([100., 100.])
    seen = []
    x.register_hook(lambda g: seen.append(values(g)))
    (x * 3).sum().backward()
    assert seen == [[3., 3.]]
    assert values(x.grad) == [103., 103.]


def test_removed_hook_stops_running_and_remove_is_idempotent():
    x = autojit.tensor([1.], requires_grad=True)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    handle.remove()
    handle.remove()
    x.sum().backward()
    assert calls == []
    with x.register_hook(lambda g: g * 0) as scoped:
        assert scoped is not None
    x.grad = None
    x.sum().backward()
    assert values(x.grad) == [1.]


def test_non_leaf_hook_changes_what_flows_upstream():
    x = autojit.tensor([1., 2.], requires_grad=True)
    y = x * x
    seen = []
    y.register_hook(lambda g: seen.append(values(g)) or g * 10)
    y.sum().backward()
    assert seen == [[1., 1.]]
    assert values(x.grad) == [20., 40.]


def test_hooks_on_two_outputs_of_one_node():
    x = autojit.tensor([1., 2., 3., 4.], requires_grad=True)
    first, second = x.split(2)
    # split's pieces have their own nodes; a shared node shows up with max's two outputs.
    values_out, indices = autojit.tensor([[1., 5.], [7., 2.]], requires_grad=True).max(dim=1)
    values_out.register_hook(lambda g: g * 3)
    first.register_hook(lambda g: g * 2)
    (first.sum() + second.sum()).backward()
    assert values(x.grad) == [2., 2., 1., 1.]
    assert indices.grad_fn is None


def test_hooks_apply_to_autograd_grad_results():
    x = autojit.tensor([1., 2.], requires_grad=True)
    x.register_hook(lambda g: g * 2)
    (gx,) = autograd.grad((x * x).sum(), x)
    assert values(gx) == [4., 8.]
    assert x.grad is None

    a = autojit.tensor([1., 2.], requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: g + 5)
    (gb,) = autograd.grad(b.sum(), b)
    assert values(gb) == [6., 6.]


def test_hooks_of_leaves_outside_autograd_grad_inputs_do_not_run():
    x = autojit.tensor([1.], requires_grad=True)
    w = autojit.tensor([2.], requires_grad=True)
    calls = []
    w.register_hook(lambda g: calls.append(1))
    autograd.grad((x * w).sum(), x)
    assert calls == []


def test_hook_result_is_differentiable_under_create_graph():
    x = autojit.tensor([3.], requires_grad=True)
    x.register_hook(lambda g: g * x)
    (gx,) = autograd.grad((x * x).sum(), x, create_graph=True)
    assert values(gx) == [18.]  # 2x * x
    (ggx,) = autograd.grad(gx.sum(), x)
    # d(2x^2)/dx = 12, and the hook, still registered, multiplies that gradient by x again.
    assert values(ggx) == [36.]


def test_register_hook_errors():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        autojit.tensor([1.]).register_hook(lambda g: g)
    x = autojit.tensor([1., 2.], requires_grad=True)
    x.register_hook(lambda g: autojit.ones(3))
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the size of value"):
        x.sum().backward()
    y = autojit.tensor([1., 2.], requires_grad=True)
    y.register_hook(lambda g: 3)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        y.sum().backward()


# ---- retain_grad ------------------------------------------------------------------------------

def test_retain_grad_populates_non_leaf_grad_after_its_hooks():
    x = autojit.tensor([1., 2.], requires_grad=True)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    y.register_hook(lambda g: g * 10)  # registered after retain_grad, still runs before it
    (y * y).sum().backward()
    assert values(y.grad) == [60., 120.]
    assert values(x.grad) == [180., 360.]


def test_retain_grad_accumulates_across_backward_calls():
    x = autojit.tensor([1., 2.], requires_grad=True)
    y = x * 3
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert values(y.grad) == [12., 24.]


def test_retain_grad_on_leaf_is_a_no_op_and_needs_requires_grad():
    x = autojit.tensor([1.], requires_grad=True)
    x.retain_grad()
    assert not x.retains_grad
    (x * 2).sum().backward()
    assert values(x.grad) == [2.]
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has "
                                           "requires_grad=False"):
        autojit.tensor([1.]).retain_grad()


def test_reading_grad_of_a_non_leaf_warns_unless_retained():
    x = autojit.tensor([1.], requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning, match="retain_grad"):
        assert y.grad is None
    y.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad is None


def test_retain_grad_does_not_keep_the_tensor_alive():
    x = autojit.tensor([1.], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = (y * 3).sum()
    reference = weakref.ref(y)
    del y
    gc.collect()
    assert reference() is None
    z.backward()  # the retained slot of a dead tensor is skipped
    assert values(x.grad) == [6.]


# ---- post-accumulate-grad hooks ---------------------------------------------------------------

def test_post_accumulate_grad_hook_runs_after_grad_is_set():
    weight = autojit.tensor([1., 2.], requires_grad=True)
    seen = []

    def sgd_step(parameter):
        seen.append(values(parameter.grad))
        with autojit.no_grad():
            parameter -= 0.5 * parameter.grad
        parameter.grad = None

    handle = weight.register_post_accumulate_grad_hook(sgd_step)
    (weight * weight).sum().backward()
    assert seen == [[2., 4.]]
    assert values(weight) == [0., 0.]
    assert weight.grad is None
    handle.remove()
    (weight + 1).sum().backward()
    assert values(weight.grad) == [1., 1.]


def test_post_accumulate_grad_hook_errors():
    x = autojit.tensor([1.], requires_grad=True)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on "
                                           "non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        autojit.tensor([1.]).register_post_accumulate_grad_hook(lambda t: None)


# ---- node hooks -------------------------------------------------------------------------------

def test_node_prehook_and_hook():
    a = autojit.tensor([1., 2.], requires_grad=True)
    b = a * 2
    seen = []
    b.grad_fn.register_prehook(lambda grad_outputs: seen.append(("pre", len(grad_outputs))))
    b.grad_fn.register_hook(
        lambda grad_inputs, grad_outputs: seen.append(("post", values(grad_inputs[0]),
                                                       grad_inputs[1])))
    b.sum().backward()
    assert seen == [("pre", 1), ("post", [2., 2.], None)]


def test_node_hooks_replace_gradients():
    a = autojit.tensor([1., 2.], requires_grad=True)
    b = a * 2
    handle = b.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 0 + 7,))
    b.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] + 1, None))
    b.sum().backward()
    assert values(a.grad) == [15., 15.]
    handle.remove()
    a.grad = None
    b = a * 2
    b.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2., 2.])


def _hooks_on_written_views(lib):
    """What hooks and retained gradients on views see after in-place writes, in `lib`: the
    cases of torch's test_retain_grad_inplace_over_view and test_tensor_hooks_inplace_over_view,
    on a full slice and on part of the base."""
    seen, results = [], []

    def hook(name):
        return lambda grad: seen.append((name, grad.tolist()))

    for key in (slice(None), slice(0, 1)):
        # retain_grad follows a view to the node of its new value; the write reads the view
        # through its base (torch's CopySlices), so the view's own gradient is its uses'
        base = lib.tensor([1., 3.], requires_grad=True).clone()
        view, view2 = base[key], base[key]
        view.retain_grad()
        view2.retain_grad()
        view.mul_(2)
        (view + view2 * 3).sum().backward()
        results.append((view.grad.tolist(), view2.grad.tolist()))
        # hooks registered before a write stay with the old value's node, which the graph of
        # the new value does not contain; a hook registered after the write sees the new one
        base = lib.tensor([1., 5.], requires_grad=True).clone()
        view, view2 = base[key], base[key]
        view.register_hook(hook("before, written view"))
        view2.register_hook(hook("before, sibling view"))
        view.mul_(2)
        view2.grad_fn  # noqa: B018 - torch regenerates a written view's node when it is read
        view2.register_hook(hook("after, sibling view"))
        (view + view2 * 3).sum().backward()
    # a hook on a view that covers its base sees the view's gradient, not the base's
    x = lib.tensor([1., 2.], requires_grad=True)
    base = x * 1
    whole = base[:]
    whole.register_hook(hook("full slice"))
    (base * 2 + whole * 3).sum().backward()
    # a hook that changes the gradient, registered before its base was written
    x = lib.tensor([1., 2., 3.], requires_grad=True)
    base = x * 1
    view = base[:2]
    view.retain_grad()
    view.register_hook(lambda g: g * 10)
    base.mul_(2)
    (view * 1).sum().backward()
    results.append((view.grad.tolist(), x.grad.tolist(), whole is base))
    return seen, results


def test_hooks_and_retained_grads_of_written_views_are_torchs():
    torch = pytest.importorskip("torch")
    assert _hooks_on_written_views(autojit) == _hooks_on_written_views(torch)
