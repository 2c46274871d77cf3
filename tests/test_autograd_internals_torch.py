"""The parts of torch.autograd that torch's own test suite reaches below the documented API,
against torch on the same programs: a node's saved values (`_saved_self`, `_saved_result`,
`_raw_saved_*` with register_hooks, a Function's `_raw_saved_tensors`), the views torch forbids
writing in place (multi-output views, custom Function views, views made under no_grad),
queue_callback, torch._C._functions' nodes, forward_ad._current_level, version-counter
helpers, attribute deletion, `.data`/`.grad` assignment errors, gradcheck's reentrancy check in
fast mode and its deprecated Jacobian helpers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit.drop_in import _C as autojit_C

torch = pytest.importorskip("torch")

X = np.array([0.5, -1.25, 2.0])


def both(program):
    """program(t, C) with torch and with autojit (C: the framework's torch._C)."""
    return program(torch, torch._C), program(autojit, autojit_C)


def outcome(run):
    """What a call gave: ("ok", value) or (exception type name, message)."""
    try:
        value = run()
    except Exception as error:  # noqa: BLE001 - the exception is what is compared
        return type(error).__name__, str(error)
    if isinstance(value, (torch.Tensor, autojit.Tensor)):
        value = value.detach().numpy().tolist()
    return "ok", value


def same_outcome(program):
    expected, actual = both(lambda t, C: outcome(lambda: program(t, C)))
    assert actual == expected


# ---- saved values --------------------------------------------------------------------------

def test_saved_self_other_and_result_are_torchs():
    def program(t, C):
        a = t.tensor(X, requires_grad=True)
        b = t.tensor(X * 2, requires_grad=True)
        y, e, p = a * b, a.exp(), a ** 3
        return [y.grad_fn._saved_self.tolist(), y.grad_fn._saved_other.tolist(),
                e.grad_fn._saved_result.tolist(), p.grad_fn._saved_exponent,
                e.grad_fn._saved_result._version == e._version]
    expected, actual = both(program)
    assert actual == expected


def test_saved_values_after_backward_are_freed():
    def program(t, C):
        a = t.tensor(X, requires_grad=True)
        y = a * a
        y.sum().backward()
        return y.grad_fn._saved_self
    same_outcome(program)


@pytest.mark.parametrize("leaf", [True, False])
def test_register_hooks_on_one_saved_value(leaf):
    def program(t, C):
        a = t.tensor(X, requires_grad=True)
        x = a if leaf else a * 1
        y = x * x
        y.grad_fn._raw_saved_self.register_hooks(lambda v: 2 * v, lambda v: v)
        seen = y.grad_fn._saved_self.detach().numpy().tolist()
        y.sum().backward()
        return seen, a.grad.numpy().tolist()
    expected, actual = both(program)
    assert actual == expected


@pytest.mark.parametrize("case", ["twice", "one argument", "not callable", "unpack non-tensor",
                                  "pack in place"])
def test_register_hooks_errors_are_torchs(case):
    def program(t, C):
        a = t.tensor(X, requires_grad=True) * 1
        y = a * a
        raw = y.grad_fn._raw_saved_self
        if case == "twice":
            raw.register_hooks(lambda v: v, lambda v: v)
            raw.register_hooks(lambda v: v, lambda v: v)
        elif case == "one argument":
            raw.register_hooks(lambda v: v)
        elif case == "not callable":
            raw.register_hooks(1, 1)
        elif case == "unpack non-tensor":
            raw.register_hooks(lambda v: v, lambda v: 1)
            return y.grad_fn._saved_self

        def double(v):
            v *= 2
            return v
        raw.register_hooks(double, lambda v: v)
    expected, actual = both(lambda t, C: outcome(lambda: program(t, C)))
    assert actual[0] == expected[0]
    if case != "one argument" and case != "not callable":  # pybind11's signature text differs
        assert actual == expected


@pytest.mark.parametrize("hooked", [True, False])
def test_raw_saved_handle_after_backward_is_given_and_refuses_hooks(hooked):
    # torch gives the handle after the value is freed; its register_hooks raises.
    def program(t, C):
        a = t.tensor(X, requires_grad=True)
        y = a * a
        if hooked:
            y.grad_fn._raw_saved_self.register_hooks(lambda v: v, lambda v: v)
        y.sum().backward()
        raw = y.grad_fn._raw_saved_self
        return type(raw).__name__, outcome(lambda: raw.register_hooks(lambda v: v, lambda v: v))
    same_outcome(program)


def test_function_raw_saved_tensors():
    def program(t, C):
        class Keep(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        a = t.tensor(X, requires_grad=True)
        y = Keep.apply(a)
        saved = y.grad_fn._raw_saved_tensors
        kinds = [type(s).__name__ for s in saved]
        errors = [outcome(lambda: saved[1].register_hooks(lambda v: v, lambda v: v))[0]]
        saved[0].register_hooks(lambda v: v, lambda v: v)
        y.sum().backward()
        errors.append(outcome(lambda: y.grad_fn._raw_saved_tensors)[0])
        return kinds, errors, a.grad.numpy().tolist()
    expected, actual = both(program)
    assert actual == expected
    assert actual[0] == ["SavedTensor", "SavedTensor"]


# ---- views written in place ------------------------------------------------------------------

VIEW_CASES = {
    "unbind output": lambda t: t.tensor(X, requires_grad=True).clone().unbind()[0].mul_(2),
    "split output": lambda t: t.tensor(X, requires_grad=True).clone().split(1)[1].mul_(2),
    "chunk output": lambda t: t.tensor(X, requires_grad=True).clone().chunk(3)[2].add_(1),
    "split with sizes": lambda t: t.tensor(X, requires_grad=True).clone().split([1, 2])[1]
    .add_(1),
    "view of unbind output": lambda t: t.tensor(X, requires_grad=True).clone().unbind()[0]
    .view_as(t.tensor(1.0)).mul_(2),
    "unbind of a plain tensor, grad-requiring value": lambda t: t.tensor(X).unbind()[0].copy_(
        t.tensor(1.0, requires_grad=True)),
    "unbind of a plain tensor": lambda t: t.tensor(X).unbind()[0].add_(1),
    "unsafe_split": lambda t: t.tensor(X, requires_grad=True).clone().unsafe_split(1)[1].mul_(2),
    # a multi-output view of a leaf's view: torch names the multi-output view first
    "unbind of a leaf's view": lambda t: t.tensor(X, requires_grad=True)[:].unbind()[0].mul_(2),
    "unbind of a leaf's complex view": lambda t: t.view_as_complex(
        t.ones(2, 2, 2, dtype=t.float64, requires_grad=True)).unbind(0)[0].add_(1),
}


@pytest.mark.parametrize("case", sorted(VIEW_CASES))
def test_in_place_on_multi_output_views(case):
    same_outcome(lambda t, C: VIEW_CASES[case](t))


@pytest.mark.parametrize("made", ["no_grad", "grad"])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_in_place_on_a_view_made_under_no_grad(made, requires_grad):
    def program(t, C):
        a = t.tensor(X, requires_grad=requires_grad).clone()
        with t.set_grad_enabled(made == "grad"):
            v = a.view_as(a)
            u = a[:2]
        return outcome(lambda: v.add_(1)), outcome(lambda: u.mul_(3)), a.detach().numpy().tolist()
    expected, actual = both(program)
    assert actual == expected


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("how", ["view", "index"])
def test_a_view_of_a_view_made_with_grad_off_written_in_place(mode, how):
    """torch's test_autograd_inplace_view_of_view: the view made in inference mode of a normal
    tensor is a normal tensor (it may require grad); a view of it with history, written in
    place, raises torch's message naming both views."""
    def program(t, C):
        x = t.zeros(2)
        with getattr(t, mode)():
            y = x.view(2) if how == "view" else x[:]
        results = [y.is_inference()]
        y.requires_grad_(True)
        z = y.view(2)

        def write():
            z.div_(2)
        results.append(outcome(write))
        return results
    expected, actual = both(program)
    assert actual == expected


@pytest.mark.parametrize("outputs", [1, 2])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_in_place_on_a_view_a_function_returned(outputs, requires_grad):
    def program(t, C):
        class Alias(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x) if outputs == 1 else (x.view_as(x), x * 2)

            @staticmethod
            def backward(ctx, *grads):
                return grads[0]

        a = t.tensor(X, requires_grad=requires_grad).clone()
        out = Alias.apply(a)
        view = out if outputs == 1 else out[0]
        return outcome(lambda: view.add_(t.tensor(1.0, requires_grad=True)))
    expected, actual = both(program)
    assert actual == expected


# ---- engine and _C names ---------------------------------------------------------------------

def test_queue_callback_runs_after_the_backward_in_order():
    def program(t, C):
        log = []
        a = t.tensor(X, requires_grad=True)
        y = a * 2

        def hook(g):
            log.append("hook")
            engine = t.autograd.Variable._execution_engine
            engine.queue_callback(lambda: (log.append("first"), engine.queue_callback(
                lambda: log.append("queued by a callback"))))
            engine.queue_callback(lambda: log.append("second"))
            return g
        y.register_hook(hook)
        y.sum().backward()
        log.append("after")
        error = outcome(lambda: t.autograd.Variable._execution_engine.queue_callback(print))
        return log, error
    expected, actual = both(program)
    assert actual == expected


def test_delayed_error_and_undefined_grad_nodes():
    def program(t, C):
        a = t.tensor(X, requires_grad=True)
        b = t.tensor(X, requires_grad=True)
        safe = C._functions.DelayedError("Boom!", 1)(b)
        out = a * 2 + safe
        failed = outcome(lambda: out.sum().backward())
        seen = []

        class Pass(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                seen.append(g is None)
                return g
        c = t.tensor(X, requires_grad=True)
        C._functions.UndefinedGrad()(Pass.apply(c)).sum().backward()
        return failed[0], "Boom!" in failed[1], c.grad is None, \
            isinstance(a.grad_fn, C._functions.AccumulateGrad) if a.grad_fn else None
    expected, actual = both(program)
    assert actual == expected


def test_current_level_of_forward_ad():
    def program(t, C):
        fw = t.autograd.forward_ad
        levels = [fw._current_level]
        with fw.dual_level():
            levels.append(fw._current_level)
        levels.append(fw._current_level)
        return levels
    expected, actual = both(program)
    assert actual == expected == [-1, 0, -1]


def test_version_counter_helpers_and_weak_refs():
    def program(t, C):
        x = t.ones(2, requires_grad=True).clone()
        x.add_(1)
        x.add_(2)
        with t.autograd._unsafe_preserve_version_counter(x):
            x.mul_(2)
        versions = [x._version]
        C._autograd._unsafe_set_version_counter((x,), (0,))
        versions.append(x._version)
        error = outcome(lambda: C._autograd._unsafe_set_version_counter((x,), (-1,)))
        other = t.ones(2) * 2
        ref = C._WeakTensorRef(other)
        alive = ref.expired()
        del other
        return versions, error, alive, ref.expired()
    expected, actual = both(program)
    assert actual == expected


# `del x.grad_fn` is not refused here (docs/differences.md, "Names of autograd nodes"): that
# takes a __delattr__, which slows every attribute write on every tensor.
@pytest.mark.parametrize("name", ["data", "requires_grad", "_grad_fn", "_backward_hooks",
                                  "grad"])
def test_deleting_tensor_attributes(name):
    def program(t, C):
        x = t.randn(2, 2, requires_grad=True)
        x.grad = t.ones(2, 2)
        delattr(x, name)
        return x.grad
    same_outcome(program)


def test_tensor_attribute_writes_take_the_fast_path():
    """Tensor defines no __setattr__ or __delattr__ (nor does anything between it and object):
    either makes CPython route every attribute write through the type's slot wrapper, a few
    per op."""
    import autojit
    for kind in (autojit.Tensor, autojit.nn.Parameter):
        for cls in kind.__mro__[:-1]:
            assert "__setattr__" not in cls.__dict__ and "__delattr__" not in cls.__dict__, cls


@pytest.mark.parametrize("case", ["int data on a grad leaf", "None data", "own grad",
                                  "non-static forward", "calculate shape"])
def test_assignment_and_legacy_errors(case):
    def program(t, C):
        a = t.tensor(1.0, requires_grad=True)
        if case == "int data on a grad leaf":
            a.data = t.tensor(3)
        elif case == "None data":
            a.data = None
        elif case == "own grad":
            a.grad = a
        elif case == "non-static forward":
            class Old(t.autograd.Function):
                def forward(self, x):
                    return x

            Old()(t.ones(2))
        else:
            out, grad = t.randn(10, 5), t.randn(3, 5, 10)
            return [list(s) for s in t.autograd._calculate_shape(out, grad, True)]
    same_outcome(program)


def test_materialize_grads_refuses_an_edge():
    def program(t, C):
        x = t.rand(2, requires_grad=True).clone()
        y = t.rand(2, requires_grad=True).clone()
        edge_y = t.autograd.graph.get_gradient_edge(y)
        out = x.clone().sum()
        return t.autograd.grad(out, (x, edge_y), allow_unused=True, materialize_grads=True)
    same_outcome(program)


# ---- gradcheck -------------------------------------------------------------------------------

@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_finds_a_backward_that_is_not_reentrant(fast_mode):
    def program(t, C):
        class Jitter(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g * (1 + t.rand_like(g) * 1e-6)

        x = t.tensor(X, requires_grad=True)
        found = outcome(lambda: t.autograd.gradcheck(Jitter.apply, (x,), fast_mode=fast_mode))
        tolerated = t.autograd.gradcheck(Jitter.apply, (x,), nondet_tol=1e-5,
                                         fast_mode=fast_mode)
        return found[0], "Backward is not reentrant" in found[1], tolerated
    expected, actual = both(program)
    assert actual == expected


def test_deprecated_jacobian_helpers():
    def program(t, C):
        from importlib import import_module
        module = import_module(t.autograd.gradcheck.__module__ if not hasattr(
            t.autograd.gradcheck, "get_numerical_jacobian") else t.autograd.gradcheck.__name__)
        a = t.tensor(X, requires_grad=True)
        b = t.tensor(X * 3, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            numerical = module.get_numerical_jacobian(lambda xs: 2 * xs[0] + xs[1], (a, b),
                                                      eps=1e-6)
            analytical, reentrant, sizes, types = module.get_analytical_jacobian(
                (a, b), 2 * a + b * b)
        messages = sorted({str(w.message)[:40] for w in caught})
        return ([j.numpy().round(6).tolist() for j in numerical],
                [j.numpy().tolist() for j in analytical], reentrant, sizes, types, messages)
    expected, actual = both(program)
    assert actual == expected


# ---- hooks' order, errors of grad and of calling a node --------------------------------------

def test_hooks_run_in_torchs_order():
    def program(t, C):
        log = []

        def tensor_hook(g):
            log.append("tensor")
            return g * 3

        def node_prehook(gs):
            log.append("node")
            return tuple(g * 2 for g in gs)

        a = t.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(node_prehook)
        b.register_hook(tensor_hook)
        accumulator = b.grad_fn.next_functions[0][0]
        a.register_hook(tensor_hook)
        accumulator.register_prehook(node_prehook)
        accumulator.register_hook(lambda grad_in, grad_out: log.append(
            ("post", len(grad_in), grad_out[0].item())))
        b.sum().backward(retain_graph=True)
        logs = [log[:]]
        del log[:]
        t.autograd.grad(b.sum(), inputs=(a,), retain_graph=True)
        logs.append(log[:])
        del log[:]
        b.sum().backward(inputs=(b,))
        logs.append(log[:])
        return logs, a.grad.item(), b.grad.item()
    expected, actual = both(program)
    assert actual == expected


def test_grad_errors_and_node_calls():
    def program(t, C):
        x = t.randn(2, 2, requires_grad=True)
        y = x ** 2
        return [outcome(lambda: t.autograd.grad(2 * x, [], grad_outputs=t.ones(2, 2))),
                outcome(lambda: t.autograd.grad(x.clone(), (x,), (t.ones(2, 2),),
                                                is_grads_batched=True)[0]),
                outcome(lambda: y.grad_fn(x.detach(), x.detach())),
                outcome(lambda: y.grad_fn())]
    expected, actual = both(program)
    assert [a[0] for a in actual] == [e[0] for e in expected]
    assert [a[1] for a in actual] == [e[1].replace("torch.Size", "autojit.Size")
                                      for e in expected]


def test_a_tensor_returned_twice_is_one_tensor():
    def program(t, C):
        class Twice(t.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                b = a * 2
                return b, b

            @staticmethod
            def backward(ctx, first, second):
                return (first + 10 * second) * 2

        x = t.tensor([1.0], requires_grad=True)
        p, q = Twice.apply(x)
        (p + q * 0).sum().backward()
        return p is q, p.output_nr, x.grad.tolist()
    expected, actual = both(program)
    assert actual == expected


# ---- indexing and conversions ----------------------------------------------------------------

LIST_KEYS = [[0, 4, 2], [[0, 4], [2, 2]], [slice(None), slice(None), [1, 3]],
             [slice(None), [2, 4], [1, 3]], [[1, 1, 3, 2, 1, 2], [0]], [None, 1], [Ellipsis, 2]]


@pytest.mark.parametrize("key", LIST_KEYS, ids=str)
def test_a_list_index_holding_sequences_is_a_tuple(key):
    def program(t, C):
        x = t.arange(125.0).reshape(5, 5, 5).requires_grad_()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            picked = x[key]
            y = t.zeros(5, 5, 5)
            y[key] = 2.0
        picked.sum().backward()
        return (picked.detach().numpy().tolist(), y.numpy().tolist(), x.grad.numpy().tolist(),
                sorted({w.category.__name__ for w in caught}))
    expected, actual = both(program)
    assert actual == expected


def test_numpy_of_a_tensor_requiring_grad_under_no_grad():
    def program(t, C):
        x = t.tensor(X, requires_grad=True)
        refused = outcome(lambda: x.numpy())
        with t.no_grad():
            allowed = x.numpy().tolist()
        return refused, allowed, "__cuda_array_interface__" in dir(x)
    expected, actual = both(program)
    assert actual == expected


# ---- a Function's jvp, checked as torch checks it ---------------------------------------------

@pytest.mark.parametrize("case", ["tangent for a non-differentiable output",
                                  "dirty input, new tangent", "dirty input, tangent unchanged",
                                  "dirty input, written in place", "returned input, view_as",
                                  "returned input, itself", "returned input, new tensor"])
def test_function_jvp_results_are_checked(case):
    def program(t, C):
        fw = t.autograd.forward_ad

        class Fn(t.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                if case.startswith("dirty"):
                    ctx.mark_dirty(x)
                    return x.mul_(2)
                if case.startswith("returned"):
                    return x + y, x
                out = y.clone()
                ctx.mark_non_differentiable(out)
                return x.clone(), out

            @staticmethod
            def jvp(ctx, x_t, y_t):
                if case == "dirty input, new tangent":
                    return 2 * x_t
                if case == "dirty input, tangent unchanged":
                    return x_t
                if case == "dirty input, written in place":
                    return x_t.mul_(2)
                if case == "returned input, view_as":
                    return x_t + y_t, x_t.view_as(x_t)
                if case == "returned input, itself":
                    return x_t + y_t, x_t
                if case == "returned input, new tensor":
                    return x_t + y_t, x_t * 2
                return x_t, x_t.clone()

        with fw.dual_level():
            x = fw.make_dual(t.tensor(X), t.ones(3))
            result = Fn.apply(x, t.tensor(X * 2))
            first = result if isinstance(result, t.Tensor) else result[-1]
            return fw.unpack_dual(first).tangent.tolist(), first is x
    same_outcome(program)


# ---- warnings and materialized gradients -----------------------------------------------------

def test_materialized_zeros_and_non_differentiable_outputs():
    def program(t, C):
        x = t.tensor(0.5, requires_grad=True)
        y = x * t.tensor(1.0, requires_grad=True)
        (dydx,) = t.autograd.grad(y, x, create_graph=True)
        (zero,) = t.autograd.grad(dydx, x, create_graph=True, materialize_grads=True)
        (third,) = t.autograd.grad(zero, x, materialize_grads=True)
        seen = []

        class Two(t.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a.clone()
                ctx.mark_non_differentiable(out)
                ctx._materialize_non_diff_grads = False
                return a.clone(), out

            @staticmethod
            def backward(ctx, g0, g1):
                seen.append(g1 is None)
                return g0

        Two.apply(t.tensor(1.0, requires_grad=True))[0].backward()
        return zero.requires_grad, zero.grad_fn is None, third.item(), seen
    expected, actual = both(program)
    assert actual == expected


def test_backward_with_create_graph_warns_as_torch():
    def program(t, C):
        b = t.tensor(X, requires_grad=True)
        previous = t.is_warn_always_enabled()
        t.set_warn_always(True)  # torch warns once a process, else every time
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                (b * b).sum().backward(create_graph=True)
                t.autograd.grad((b * b).sum(), b, create_graph=True)
        finally:
            t.set_warn_always(previous)
        return [str(w.message).split(" (Triggered")[0] for w in caught]
    expected, actual = both(program)
    assert actual == expected and len(actual) == 1


def test_a_grad_mode_decorating_a_class_warns():
    def program(t, C):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @t.no_grad()
            class Made:
                def __init__(self):
                    self.enabled = t.is_grad_enabled()

        return Made().enabled, [(w.category.__name__, str(w.message)) for w in caught]
    expected, actual = both(program)
    assert actual == expected


# ---- gradients torch's tests found wrong ---------------------------------------------------

@pytest.mark.parametrize("base", ["tensor", "number"])
def test_a_negative_real_base_under_a_complex_power(base):
    def program(t, C):
        exponent = t.tensor([0.5 + 0.25j, -1.5 + 2.0j], dtype=t.complex128, requires_grad=True)
        b = t.tensor([-1.0, -2.5], dtype=t.float64) if base == "tensor" else -1
        y = t.pow(b, exponent)
        (g,) = t.autograd.grad(y, exponent, t.tensor([1.0 - 1.0j, 0.5j], dtype=t.complex128),
                               create_graph=True)
        (gg,) = t.autograd.grad(g.abs().sum(), exponent)
        fw = t.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(exponent.detach(), t.ones(2, dtype=t.complex128))
            tangent = fw.unpack_dual(t.pow(b, dual)).tangent
        return [np.round(v.detach().numpy(), 10).tolist() for v in (g, gg, tangent)]
    expected, actual = both(program)
    assert actual == expected


def test_a_function_writing_a_view_in_place_gives_the_base_its_history():
    def program(t, C):
        a = t.arange(16.0, dtype=t.float64).reshape(4, 4).requires_grad_()
        b = t.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=t.float64, requires_grad=True)

        class AddInPlace(t.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_dirty(x)
                return x.add_(y)

            @staticmethod
            def backward(ctx, grad):
                return grad, grad * 3

        x = a.clone()
        AddInPlace.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
        AddInPlace.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
        x.backward(t.arange(16.0, dtype=t.float64).reshape(4, 4))
        return x.detach().numpy().tolist(), a.grad.numpy().tolist(), b.grad.numpy().tolist()
    expected, actual = both(program)
    assert actual == expected


def test_a_view_requires_grad_once_its_base_is_written_with_a_value_that_does():
    def program(t, C):
        r = t.ones(1, dtype=t.float64, requires_grad=True)
        x = t.ones(5, dtype=t.float64)
        v = x.select(0, 1)
        before = v.requires_grad
        x.add_(r)
        after = v.requires_grad
        (v * 3).backward()
        return before, after, r.grad.tolist()
    expected, actual = both(program)
    assert actual == expected


@pytest.mark.parametrize("source", [[0.0, 0.0, 3.0], [0.0, 1.0, 3.0]])
def test_scatter_prod_double_backward_where_two_zeros_meet(source):
    def program(t, C):
        warnings.simplefilter("ignore")
        x = t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True)
        src = t.tensor(source, dtype=t.float64, requires_grad=True)
        y = t.scatter_reduce(x, 0, t.tensor([0, 0, 1]), src, "prod")
        first = t.autograd.grad(y, (x, src), t.ones(2), create_graph=True)
        second = outcome(lambda: t.autograd.grad(first[1].sum() + first[0].sum(), (x, src)))
        return [f.detach().numpy().tolist() for f in first], second
    expected, actual = both(program)
    assert actual[0] == expected[0]
    assert actual[1][0] == expected[1][0]
    if expected[1][0] == "RuntimeError":
        assert actual[1][1] == expected[1][1]
    else:
        for mine, theirs in zip(actual[1][1], expected[1][1]):
            assert np.allclose(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("case", ["dirty non-input", "dirty view, two outputs"])
def test_mark_dirty_misuse(case):
    def program(t, C):
        class Bad(t.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                if case == "dirty non-input":
                    c = 3 * a
                    c.add_(b)
                    ctx.mark_dirty(c)
                    return c
                a.add_(b)
                ctx.mark_dirty(a)
                return a, a + b

            @staticmethod
            def backward(ctx, *grads):
                return grads[0] * 3, grads[0] * 3

        a = t.ones(2, requires_grad=True)
        b = t.ones(2, requires_grad=True)
        x = a.clone() if case == "dirty non-input" else a.clone().view_as(a)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = outcome(lambda: Bad.apply(x, b))
        return result[0], [str(w.message).split(" (Triggered")[0] for w in caught]
    same_outcome(program)


def test_a_function_inside_a_transform_is_torchs_generated_one():
    def program(t, C):
        names = []

        class FooBar(t.autograd.Function):
            @staticmethod
            def forward(x):
                return x.clone()

            @staticmethod
            def setup_context(ctx, inputs, output):
                return

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output

        def f(x):
            y = FooBar.apply(x)
            names.append(type(y.grad_fn).__name__)
            return y

        t.func.grad(f)(t.tensor(1.0))
        names.append(type(FooBar.apply(t.tensor(1.0, requires_grad=True)).grad_fn).__name__)
        return names
    expected, actual = both(program)
    assert actual == expected


def test_forward_gradcheck_makes_every_input_dual():
    def program(t, C):
        fw = t.autograd.forward_ad

        def bad(x, y):
            if fw._current_level >= 0:
                primal, tangent = fw.unpack_dual(y)
                y = fw.make_dual(primal, tangent * 1.1)
            return x + y, y

        x = t.tensor([0.5, 1.5], dtype=t.float64, requires_grad=True)
        y = t.tensor([2.0, -1.0], dtype=t.float64, requires_grad=True)
        good = t.autograd.gradcheck(lambda a, b: (a + b, b), (x, y), check_forward_ad=True)
        failed = outcome(lambda: t.autograd.gradcheck(bad, (x, y), check_forward_ad=True))
        return good, failed[0], failed[1].splitlines()[0]
    expected, actual = both(program)
    assert actual == expected


@pytest.mark.parametrize("write", ["add_", "mul_"])
def test_writing_a_view_made_before_its_base_was_written(write):
    def program(t, C):
        x = t.arange(9.0, dtype=t.float64).reshape(3, 3).requires_grad_()
        y = x.clone()
        row = y[1]
        y[:, ::2].mul_(2.0)
        getattr(row, write)(3.0)
        y.backward(t.arange(9.0, dtype=t.float64).reshape(3, 3) + 1)
        return y.detach().numpy().tolist(), x.grad.numpy().tolist()
    expected, actual = both(program)
    assert actual == expected


def test_resize_bumps_the_version_only_when_the_shape_changes():
    def program(t, C):
        x = t.zeros(1)
        y = t.zeros(3)
        versions = []
        for resize in (lambda: x.resize_((1, 2)), lambda: x.resize_as_(y),
                       lambda: x.resize_((3,)), lambda: x.resize_as_(y)):
            resize()
            versions.append(x._version)
        return versions
    expected, actual = both(program)
    assert actual == expected


def test_anomaly_warning_is_printed_where_warnings_are_errors(capsys):
    def program(t, C):
        with warnings.catch_warnings():
            with t.autograd.detect_anomaly():
                warnings.simplefilter("error")
                a = t.tensor(X, requires_grad=True)
                d1 = a + 1
                d2 = d1 ** 2
                d1 += 1
                failed = outcome(lambda: t.autograd.grad(d2.sum(), a))
        printed = capsys.readouterr().err
        return (failed[0], "modified by an inplace operation" in failed[1],
                "Error detected in PowBackward0" in printed)
    expected, actual = both(program)
    assert actual == expected == ("RuntimeError", True, True)


EXPANDED_WRITES = {
    "row of rows expanded, set": lambda t, e: e.__setitem__(0, 0.0),
    "row of rows expanded, divided": lambda t, e: e[0].div_(0.0),
    "column of columns expanded, filled": lambda t, e: e[:, 0].fill_(2.0),
    "whole, filled": lambda t, e: e.fill_(3.0),
    "whole, zeroed": lambda t, e: e.zero_(),
    "whole, added to": lambda t, e: e.add_(1.0),
    "row, copied into": lambda t, e: e[1].copy_(t.tensor([4.0, 5.0, 6.0])),
    "rows, set": lambda t, e: e.__setitem__(slice(0, 2), 1.0),
}


@pytest.mark.parametrize("case", sorted(EXPANDED_WRITES))
def test_writes_into_an_expanded_tensor(case):
    def program(t, C):
        base = t.tensor([[1.0, 2.0, 3.0]])
        expanded = base.clone().expand(4, 3)
        result = outcome(lambda: EXPANDED_WRITES[case](t, expanded))
        return result[0], expanded.tolist()
    same_outcome(program)


@pytest.mark.parametrize("call", ["unique", "unique dim", "unique_consecutive", "inverse"])
def test_unique_has_no_derivative_as_torch(call):
    def program(t, C):
        warnings.simplefilter("ignore")
        x = t.tensor([1.0, 2.0, 2.0], requires_grad=True)
        result = {"unique": lambda: t.unique(x), "unique dim": lambda: t.unique(x, dim=0),
                  "unique_consecutive": lambda: t.unique_consecutive(x),
                  "inverse": lambda: t.unique(x, return_inverse=True)}[call]()
        values = result[0] if isinstance(result, tuple) else result
        return (values.requires_grad, values.grad_fn.name(),
                outcome(lambda: t.autograd.grad(values.sum() + x.sum(), x)))
    expected, actual = both(program)
    assert actual == expected
