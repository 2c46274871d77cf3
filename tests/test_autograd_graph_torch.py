"""autograd.graph's public API against torch: saved-tensor hooks (saved_tensors_hooks, nesting,
disable_saved_tensors_hooks, save_on_cpu, allow_mutation_on_saved_tensors), GradientEdge,
register_multi_grad_hook, increment_version and Node's hooks, on the same programs in both;
and saved-tensor hooks under autojit.compile (a graph break, with the hooks run eagerly)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit.utils import checkpoint as autojit_checkpoint

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as torch_checkpoint  # noqa: E402

X = np.array([0.5, -1.25, 2.0])
Y = np.array([1.5, 0.75, -0.5])


def both(program):
    """program(t, cp) run with torch and with autojit: the two results."""
    return program(torch, torch_checkpoint), program(autojit, autojit_checkpoint)


def plain(value):
    """Tensors (nested in lists and tuples) as NumPy arrays, for comparing the two results."""
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (torch.Tensor, autojit.Tensor)):
        return value.detach().numpy()
    return value


def assert_same(expected, actual):
    expected, actual = plain(expected), plain(actual)
    if isinstance(expected, list):
        assert len(expected) == len(actual)
        for e, a in zip(expected, actual):
            assert_same(e, a)
    elif isinstance(expected, np.ndarray):
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7)
    else:
        assert actual == expected


def error_of(function) -> tuple:
    try:
        function()
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return type(error).__name__, str(error)
    return None


# ---- saved_tensors_hooks ------------------------------------------------------------------------

def _hooked_program(t, cp, create_graph=False):
    a = t.tensor(X, requires_grad=True)
    b = t.tensor(Y, requires_grad=True)
    log = []

    def pack(x):
        log.append(("pack", tuple(x.shape), x.requires_grad, t.is_grad_enabled()))
        return x.detach() * 1.0

    def unpack(x):
        log.append(("unpack", t.is_grad_enabled()))
        return x

    with t.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (a * b).exp()
    (ga, gb) = t.autograd.grad(y.sum(), (a, b), create_graph=create_graph)
    result = [ga, gb]
    if create_graph:
        result += list(t.autograd.grad((ga * gb).sum(), (a, b)))
    return sorted(log, key=repr), result


@pytest.mark.parametrize("create_graph", [False, True])
def test_saved_tensor_hooks_pack_and_unpack_as_torch(create_graph):
    (torch_log, torch_grads), (log, grads) = both(
        lambda t, cp: _hooked_program(t, cp, create_graph))
    assert log == torch_log
    assert_same(torch_grads, grads)


def test_pack_sees_the_saved_tensors_themselves():
    def program(t, cp):
        a, b = t.tensor(X, requires_grad=True), t.tensor(Y)
        seen = []
        with t.autograd.graph.saved_tensors_hooks(lambda x: seen.append(x) or x, lambda x: x):
            y = a * b
            z = y.exp()
        return sorted((s is a, s is b, s is z, s.grad_fn is not None) for s in seen)

    expected, actual = both(program)
    assert actual == expected


def test_nested_hooks_the_innermost_applies_and_custom_functions_are_packed():
    def program(t, cp):
        class Square(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad

        a = t.tensor(X, requires_grad=True)
        log = []
        with t.autograd.graph.saved_tensors_hooks(lambda x: log.append("outer") or x,
                                                  lambda x: log.append("outer-") or x):
            with t.autograd.graph.saved_tensors_hooks(lambda x: log.append("inner") or x,
                                                      lambda x: log.append("inner-") or x):
                y = Square.apply(a)
            z = y.sin()
        z.sum().backward()
        return log, a.grad

    (torch_log, torch_grad), (log, grad) = both(program)
    assert log == torch_log
    assert_same(torch_grad, grad)


def test_hooks_errors_as_torch():
    def program(t, cp):
        a = t.tensor(X, requires_grad=True)
        hooks = t.autograd.graph.saved_tensors_hooks
        errors = [error_of(lambda: [hooks(lambda x: x.add_(1), lambda x: x).__enter__(),
                                    a.clone() * a.clone()])]
        t.autograd.graph.saved_tensors_hooks(None, None).__exit__()
        with hooks(lambda x: 1, lambda x: 3):
            y = (a * a).sum()
        errors.append(error_of(y.backward))

        def disabled():
            with t.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
                with t.autograd.graph.save_on_cpu():
                    pass

        def disable_inside():
            with hooks(lambda x: x, lambda x: x):
                with t.autograd.graph.disable_saved_tensors_hooks("not inside hooks"):
                    pass

        errors += [error_of(disabled), error_of(disable_inside)]
        with hooks(lambda x: x, lambda x: x):  # enabled again
            (a * a).sum().backward()
        return errors

    expected, actual = both(program)
    assert actual == expected


def test_hooked_tensors_are_not_version_checked_and_save_on_cpu():
    def program(t, cp):
        a = t.tensor(X, requires_grad=True)
        with t.autograd.graph.saved_tensors_hooks(lambda x: x.clone(), lambda x: x):
            c = a * 2
            d = c * c
        c.add_(1)  # the hooks own the saved value: no version error
        d.sum().backward()
        with t.autograd.graph.save_on_cpu(pin_memory=True):
            e = (a.exp() * a).sum()
        (g,) = t.autograd.grad(e, a)
        return a.grad, g

    expected, actual = both(program)
    assert_same(expected, actual)


def test_checkpoint_saves_its_own_tensors_inside_hooks():
    def program(t, cp):
        w = t.ones(3, requires_grad=True)
        packs = []

        def segment(x):
            with t.autograd.graph.saved_tensors_hooks(lambda v: packs.append(v.shape) or v,
                                                      lambda v: v):
                return (x * w).sin().sum()

        cp.checkpoint(segment, t.tensor(X), use_reentrant=False).backward()
        return len(packs), w.grad

    expected, actual = both(program)
    assert_same(expected, actual)


def test_hooks_under_compile_break_the_graph_and_run_eagerly():
    w = autojit.tensor(X, requires_grad=True)
    packs = []

    @autojit.compile
    def step(x):
        loss = (x * w).tanh().sum()
        loss.backward()
        return loss

    x = autojit.tensor(Y)
    step(x)
    expected = w.grad.clone()
    w.grad = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with autojit.autograd.graph.saved_tensors_hooks(lambda v: packs.append(1) or v,
                                                        lambda v: v):
            step(x)  # the trace made without hooks does not serve this call
    assert len(packs) == 2  # mul saved x, tanh its output: packed eagerly
    assert any("saved_tensors_hooks" in str(w.message) for w in caught)
    np.testing.assert_allclose(w.grad.numpy(), expected.numpy())
    assert step.stats().graph_breaks == 1


# ---- allow_mutation_on_saved_tensors ---------------------------------------------------------

def test_allow_mutation_on_saved_tensors():
    def program(t, cp):
        results = []
        with t.autograd.graph.allow_mutation_on_saved_tensors():
            x = t.ones(2, 3, requires_grad=True)
            y = x.clone()
            out = (y ** 2).sum()
            y.mul_(2)
            out.backward()
            results.append(x.grad.clone())
            view = y[0]
            q = (view * view).sum()
            y.mul_(3)  # a write through the base clones the saved view
            q.backward()
            results.append(x.grad)
            results.append(error_of(lambda: t.autograd.graph.allow_mutation_on_saved_tensors()
                                    .__enter__()))
        with t.autograd.graph.allow_mutation_on_saved_tensors():
            z = t.ones(2, requires_grad=True).clone()
            out = (z * z).sum()
        results.append(error_of(out.backward))
        return results

    expected, actual = both(program)
    assert_same(expected, actual)


# ---- GradientEdge, multi-grad hooks, versions, nodes ------------------------------------------

def test_gradient_edges_as_grad_inputs_and_outputs():
    def program(t, cp):
        edge = t.autograd.graph.get_gradient_edge
        x = t.tensor(X, requires_grad=True)
        y = x * 2
        z = (y * y).sum()
        results = list(t.autograd.grad(z, edge(y), retain_graph=True))
        results += t.autograd.grad(z, [edge(x), y], retain_graph=True)
        results += t.autograd.grad(edge(y), x, grad_outputs=t.ones(3), retain_graph=True)
        results.append(error_of(lambda: t.autograd.grad(edge(y), x, retain_graph=True)))
        results.append(error_of(lambda: edge(t.ones(2))))
        z.backward(inputs=[edge(x)], retain_graph=True)
        results.append(x.grad)
        results.append((edge(x).output_nr, edge(y).output_nr, edge(y).node is y.grad_fn))
        return results

    expected, actual = both(program)
    assert_same(expected, actual)


def test_register_multi_grad_hook_as_torch():
    def program(t, cp):
        a = t.tensor(X, requires_grad=True)
        b = t.tensor(Y, requires_grad=True)
        c, d = a * b, a * b
        calls = []
        handle = t.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: calls.append([g is not None for g in grads]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        (c.sum() + d.sum()).backward(retain_graph=True)
        handle.remove()
        c.sum().backward(retain_graph=True)
        firsts = []
        t.autograd.graph.register_multi_grad_hook((a, b, c), lambda g: firsts.append(g),
                                                  mode="any")
        (c.sum() * 2).backward(retain_graph=True)
        (c.sum() * 3).backward()
        calls.append(error_of(lambda: t.autograd.graph.register_multi_grad_hook(
            (a,), print, mode="some")))
        return calls, firsts

    expected, actual = both(program)
    assert_same(expected, actual)


def test_increment_version_and_node_api():
    def program(t, cp):
        x = t.tensor(X, requires_grad=True)
        y = x.exp()
        t.autograd.graph.increment_version(y)
        results = [y._version, error_of(lambda: y.sum().backward())[0]]
        with t.inference_mode():
            results.append(t.is_inference_mode_enabled())
            frozen = t.ones(2)
        t.autograd.graph.increment_version([frozen])
        results.append(t.is_inference_mode_enabled())
        y = x.exp()
        z = y.sum()
        log = []
        node = y.grad_fn
        results.append(isinstance(node, t.autograd.graph.Node))
        results.append(isinstance(t.autograd.graph.get_gradient_edge(x).node,
                                  t.autograd.graph.Node))
        pre = node.register_prehook(lambda grad_outputs: log.append(len(grad_outputs)))
        node.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 10,))
        node.metadata["tag"] = "exp"
        z.backward(retain_graph=True)
        pre.remove()
        z.backward()
        results += [log, dict(node.metadata), node.name(), x.grad]
        with t.autograd.set_multithreading_enabled(False):
            results.append(True)
        return results

    expected, actual = both(program)
    assert_same(expected, actual)
