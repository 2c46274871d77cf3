"""Node classes and node-level behaviour against torch: torch.autograd.graph.Node as a virtual
base class, torch._C._functions' DelayedError and UndefinedGrad (nodes called on tensors), the
Error node once_differentiable leaves, gradcheck's checks of undefined gradients (backward and
forward mode), the in-place ops torch gives no derivative (acosh_), and the non-reentrant
checkpoint's rule that a backward unpacks each saved value once, the metadata of the
gradients a node takes (`_input_metadata`) and saved values by torch's names (`_saved_indices`).
Each program runs under torch and under autojit."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import autojit
from autojit.autograd import c_functions
from autojit.utils import checkpoint as autojit_checkpoint

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as torch_checkpoint  # noqa: E402
from torch_outcomes import both, error_of  # noqa: E402

X = np.array([0.5, -1.25, 2.0])


def functions_of(t):
    return torch._C._functions if t is torch else c_functions.functions


def graph_desc(node) -> str:
    """torch's test helper: the node's class name and, recursively, its next functions'."""
    if node is None:
        return "None"
    inner = ", ".join(graph_desc(next_node) for next_node, _ in node.next_functions)
    return f"{type(node).__name__}({inner})"


# ---- Node, a virtual base class -----------------------------------------------------------------

def test_node_is_a_virtual_base_class_of_every_node():
    def program(t):
        node_class = t.autograd.graph.Node
        functions = functions_of(t)
        a = t.rand(3, 3, requires_grad=True)
        b = a.exp()
        seen_ctx = []

        class Func(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen_ctx.append(isinstance(ctx, node_class))
                return x

            @staticmethod
            def backward(ctx, grad):
                seen_ctx.append(isinstance(ctx, node_class))
                return grad

        out = Func.apply(a)
        out.sum().backward()
        return [
            isinstance(b.grad_fn, node_class), issubclass(type(b.grad_fn), node_class),
            node_class in type(b.grad_fn).mro(), isinstance(functions.AccumulateGrad, node_class),
            issubclass(functions.AccumulateGrad, node_class),
            isinstance(b.grad_fn.next_functions[0][0], node_class),
            issubclass(functions.DelayedError, node_class),
            issubclass(functions.UndefinedGrad, node_class),
            isinstance(None, node_class), isinstance(1, node_class),
            isinstance(node_class, node_class), issubclass(node_class, node_class),
            issubclass(t.autograd.function.BackwardCFunction, node_class),
            isinstance(out.grad_fn, node_class), node_class in type(out.grad_fn).mro(),
            seen_ctx,
        ]

    expected, actual = both(program)
    assert actual == expected


# ---- DelayedError, UndefinedGrad, once_differentiable -------------------------------------------

def test_delayed_error_and_undefined_grad_are_nodes_called_on_tensors():
    def program(t):
        functions = functions_of(t)
        x = t.tensor(X, requires_grad=True)
        delayed = functions.DelayedError("boom", 2)
        first, second = delayed(x * 1, t.ones(2))
        plain = delayed(t.ones(2), t.ones(2))
        undefined = functions.UndefinedGrad()(x * 2)
        undefined.sum().backward()
        return [isinstance(delayed, t.autograd.graph.Node), delayed.next_functions,
                first.grad_fn is second.grad_fn, type(first.grad_fn).__name__,
                second.requires_grad, [p.requires_grad for p in plain],
                graph_desc(first.grad_fn), graph_desc(undefined.grad_fn), x.grad,
                error_of(lambda: first.sum().backward())]

    expected, actual = both(program)
    assert actual[:-2] == expected[:-2]
    assert expected[-2] is None and actual[-2] is None
    assert actual[-1] == expected[-1]


def _twice(t):
    """a * b * scale, with a once_differentiable backward (torch's test's Function)."""
    class Twice(t.autograd.Function):
        @staticmethod
        def forward(ctx, a, scale, b):
            ctx.save_for_backward(a, b)
            return a * b * scale

        @staticmethod
        @t.autograd.function.once_differentiable
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b, None, grad * a

    return Twice


def test_once_differentiable_results_have_an_error_node_over_leaves():
    def program(t):
        Twice = _twice(t)
        x = t.tensor(X, requires_grad=True)
        y = t.tensor(X[::-1].copy(), requires_grad=True)
        go = t.ones((), requires_grad=True)
        gx, gy = t.autograd.grad(Twice.apply(x, 2.0, y).sum(), (x, y), go, create_graph=True)
        return (graph_desc(gx.grad_fn), gx.grad_fn is gy.grad_fn, gx.detach().numpy().tolist(),
                error_of(lambda: gx.sum().backward()))

    expected, actual = both(program)
    assert actual == expected


# ---- gradcheck: undefined gradients --------------------------------------------------------------

def test_gradcheck_passes_undefined_gradients_to_hooks():
    def program(t):
        def fn(x):
            def hook(grad):
                if grad is None:
                    raise RuntimeError("x is undefined")
            y = x.clone()
            y.register_hook(hook)
            return y

        x = t.ones(1, dtype=t.float64, requires_grad=True)
        outcomes = []
        for fast in (True, False):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                outcomes.append(error_of(lambda fast=fast: t.autograd.gradcheck(
                    fn, (x,), fast_mode=fast)))
                outcomes.append(t.autograd.gradcheck(fn, (x,), raise_exception=False,
                                                     fast_mode=fast))
            outcomes.append(any("Backwards compatibility" in str(w.message) for w in caught))
        return outcomes

    expected, actual = both(program)
    assert actual == expected


def test_gradcheck_forward_mode_jvp_counts():
    def program(t):
        count = [0]

        class UserFn(t.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x.clone(), y.clone()

            @staticmethod
            def jvp(ctx, x_t, y_t):
                count[0] += 1
                return x_t, y_t

        counts = []
        for y_requires, undefined, batched in ((True, False, False), (True, True, False),
                                               (True, True, True), (False, True, True)):
            count[0] = 0
            x = t.rand(1, dtype=t.float64, requires_grad=True)
            y = t.rand(1, dtype=t.float64, requires_grad=y_requires)
            t.autograd.gradcheck(UserFn.apply, (x, y), check_forward_ad=True,
                                 check_undefined_grad=undefined, check_backward_ad=False,
                                 check_batched_grad=False, check_batched_forward_grad=batched)
            counts.append(count[0])
        return counts

    assert both(program)[1] == both(program)[0] == [2, 6, 12, 5]


# ---- in-place ops torch gives no derivative -----------------------------------------------------

@pytest.mark.parametrize("name", ["acosh_", "asinh_", "atanh_", "arccosh_"])
def test_inplace_op_without_derivative_raises_in_backward(name):
    def program(t):
        a = t.tensor([0.25, 0.5], requires_grad=True)
        base = a * 0.5 + (1.5 if "cosh" in name else 0.0)
        y = getattr(t, name)(base.clone()) if hasattr(t, name) else \
            getattr(base.clone(), name)()
        with t.no_grad():
            untracked = getattr(a.clone(), name)()
        with t.autograd.forward_ad.dual_level():
            dual = t.autograd.forward_ad.make_dual(base.detach(), t.ones(2))
            forward = error_of(lambda: getattr(dual.clone(), name)())
        return (type(y.grad_fn).__name__, graph_desc(y.grad_fn),
                error_of(lambda: y.sum().backward()), untracked.grad_fn, forward)

    expected, actual = both(program)
    assert actual == expected


# ---- checkpoint: each saved value unpacked once per backward ------------------------------------

def test_non_reentrant_checkpoint_unpacks_each_saved_value_once():
    def program(t, cp):
        outcome = []

        class MyFunc(t.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                w = x * y
                out = w + w
                ctx.save_for_backward(x, y, w, out)
                return out

            @staticmethod
            def backward(ctx, grad):
                x, y, w, out = ctx.saved_tensors
                outcome.append(error_of(lambda: ctx.saved_tensors))
                return grad * y * 2, grad * x * 2

        x = t.tensor(X, requires_grad=True)
        y = t.tensor(X[::-1].copy(), requires_grad=True)
        out = cp.checkpoint(lambda x, y: MyFunc.apply(x * y, y * y), x, y, use_reentrant=False)
        out.sum().backward(retain_graph=True)
        out.sum().backward()  # another backward pass recomputes, and may unpack again
        return outcome, x.grad.detach().numpy().tolist(), y.grad.detach().numpy().tolist()

    expected = program(torch, torch_checkpoint)
    actual = program(autojit, autojit_checkpoint)
    assert [kind for kind, _ in actual[0]] == [kind for kind, _ in expected[0]]
    pattern = re.compile(r"Unpack is being triggered for a tensor that was already unpacked")
    assert all(pattern.search(message) for _, message in actual[0] + expected[0])
    np.testing.assert_allclose(actual[1], expected[1])
    np.testing.assert_allclose(actual[2], expected[2])


def test_first_grad_under_create_graph_is_a_copy_node_over_the_gradient():
    def program(t):
        Twice = _twice(t)
        x = t.tensor(X, requires_grad=True)
        y = t.tensor(X[::-1].copy(), requires_grad=True)
        go = t.ones((), requires_grad=True)
        Twice.apply(x, 2.0, y).sum().backward(go, create_graph=True)
        first = graph_desc(x.grad.grad_fn)
        (x * y).sum().backward(create_graph=True)  # a second gradient adds to the first
        return first, x.grad.grad_fn.name(), x.grad.detach().numpy().tolist()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # backward(create_graph=True)'s reference-cycle warning
        expected, actual = both(program)
    assert actual == expected


def test_detached_saved_input_raises_on_every_backward():
    def program(t):
        outcomes = []
        for detach in (False, False, True, True):  # the later nodes run a recorded chain
            a = t.tensor(1.0, requires_grad=True).clone()
            b = a.sin()
            if detach:
                a.detach_()
            outcomes.append(error_of(b.backward))
        return outcomes

    expected, actual = both(program)
    assert actual == expected


# ---- _input_metadata ---------------------------------------------------------------------------

def test_input_metadata_describes_each_forward_output():
    # torch's test_grad_fn_input_metadata, but for its jagged nested tensor (autojit has none)
    def program(t):
        def described(node):
            return [(m.shape, str(m.dtype).split(".")[1], str(m.device), m.is_nested_tensor,
                     m.is_cpp_nested_tensor) for m in node._input_metadata]

        x = t.rand(2, requires_grad=True)
        y = t.rand(2, requires_grad=True)
        b = t.rand(3, 3, requires_grad=True, dtype=t.float64)
        var, _ = t.var_mean(b, dim=0)

        class Pair(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, 3, x.double()

            @staticmethod
            def backward(ctx, a, b, c):
                return a

        return [described((x * y).grad_fn), described((x * y).grad_fn.next_functions[0][0]),
                described(var.grad_fn), described(b.unbind()[0].grad_fn),
                described(b.expand(2, 3, 3).grad_fn), described(b.sum().grad_fn),
                described(Pair.apply(x)[0].grad_fn),
                type((x * y).grad_fn._input_metadata[0]).__name__]

    expected, actual = both(program)
    assert actual == expected


# ---- saved values by torch's names (Op.saved_names) --------------------------------------------

def test_saved_values_have_torchs_names():
    # the parts of torch's test_grad_fn_attr_bindings whose nodes autojit has as torch does
    def program(t):
        a = t.ones(2, 2, requires_grad=True)
        indices = t.tensor([0, 1])
        out = a[:, indices]
        node = out.grad_fn
        found = [node.name(), [None if i is None else i.tolist() for i in node._saved_indices],
                 tuple(node._saved_self_sym_sizes), type(node._saved_self_sym_sizes[0]).__name__,
                 type(node._raw_saved_indices[1]).__name__]
        node._raw_saved_indices[1].register_hooks(lambda x: x, lambda x: x)
        found.append(error_of(lambda: node._raw_saved_indices[0].register_hooks(
            lambda x: x, lambda x: x)))
        found.append(error_of(lambda: node._saved_self))
        cube = t.ones(2, 3, 4, requires_grad=True)
        found.append([None if i is None else i.tolist()
                      for i in cube[:, :, t.tensor([1, 3])].grad_fn._saved_indices])
        found.append([None if i is None else i.tolist()
                      for i in cube[t.tensor([1]), :, t.tensor([0])].grad_fn._saved_indices])
        x = t.randn(3, 5, requires_grad=True)
        target = t.tensor([1, 0, 4])
        loss = t.nn.NLLLoss()(x, target)
        found += [loss.grad_fn._saved_weight, loss.grad_fn._saved_target.tolist()]
        loss = t.nn.NLLLoss(weight=t.full((5,), 2.0))(x, target)
        found.append(loss.grad_fn._saved_weight.tolist())
        loss.sum().backward()
        found.append(error_of(lambda: loss.grad_fn._saved_weight))
        conv = t.nn.functional.conv2d(t.ones(1, 1, 3, 3, requires_grad=True),
                                      t.ones(1, 1, 2, 2, requires_grad=True))
        found += [conv.grad_fn._saved_bias_sym_sizes_opt, tuple(conv.grad_fn._saved_input.shape),
                  tuple(conv.grad_fn._saved_weight.shape)]
        return found

    expected, actual = both(program)
    assert actual == expected
