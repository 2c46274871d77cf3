"""Engine-level behaviours against torch: torch's first vmap (torch._vmap_internals._vmap, which
gradcheck's batched checks and is_grads_batched use) refusing random ops with its own message,
torch.autograd._calculate_shape of nested tensors, saved-tensor hooks entered during backward
ending with it, a custom Function's jvp checked to return a view of the right tangent,
torch._C._current_graph_task_execution_order, and the names of the nodes torch writes in C++
(AccumulateGrad, CopyBackwards). Each program runs under torch and under autojit."""

from __future__ import annotations

import gc
import weakref

import pytest

from autojit.drop_in import _C as autojit_C
from autojit.drop_in import _vmap_internals as autojit_vmap_internals

torch = pytest.importorskip("torch")
import torch._vmap_internals as torch_vmap_internals  # noqa: E402
from torch_outcomes import both, error_of  # noqa: E402


def legacy_vmap(t):
    return (torch_vmap_internals if t is torch else autojit_vmap_internals)._vmap


def c_module(t):
    return torch._C if t is torch else autojit_C


# ---- torch's first vmap refuses random ops ----------------------------------------------------

@pytest.mark.filterwarnings("ignore")
def test_legacy_vmap_refuses_random_ops_with_its_own_message():
    def program(t):
        x = t.ones(2, 3)
        found = []
        for draw in (lambda row: t.randn(3), lambda row: t.randn_like(row),
                     lambda row: t.bernoulli(row * 0.5), lambda row: row.clone().normal_(),
                     lambda row: t.nn.functional.dropout(row, 0.5)):
            found.append(error_of(lambda draw=draw: legacy_vmap(t)(draw)(x)))
            found.append(error_of(lambda draw=draw: t.func.vmap(draw)(x)))
        return found

    assert_same(*both(program))


def test_gradcheck_batched_forward_check_reports_the_legacy_refusal():
    def program(t):
        class Fn(t.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                return foo * 2

            @staticmethod
            def vjp(ctx, grad):
                return grad * 2

            @staticmethod
            def jvp(ctx, tangent):
                t.randn_like(tangent)
                return tangent * 2

        x = t.rand(2, dtype=t.float64, requires_grad=True)
        kind, message = error_of(lambda: t.autograd.gradcheck(
            Fn.apply, (x,), check_forward_ad=True, check_batched_forward_grad=True))
        return kind, message.splitlines()[0]

    assert_same(*both(program))


# ---- _calculate_shape -------------------------------------------------------------------------

def test_calculate_shape_of_nested_and_plain_tensors():
    def program(t):
        from_autograd = t.autograd._calculate_shape
        out, grad = t.randn(10, 5), t.randn(5, 10)
        plain = from_autograd(out, grad, False)
        batched = from_autograd(out, t.randn(3, 10, 5), True)
        nested_out = t.nested.as_nested_tensor([t.randn(10, 5), t.randn(10, 5)])
        nested_grad = t.nested.as_nested_tensor([t.randn(5, 10), t.randn(5, 10),
                                                 t.randn(2, 3)])
        out_sizes, grad_sizes = from_autograd(nested_out, nested_grad, False)
        return (tuple(plain[0]), tuple(plain[1]), tuple(batched[1]), out_sizes.tolist(),
                grad_sizes.tolist(),
                error_of(lambda: from_autograd(nested_out, nested_grad, True)))

    assert_same(*both(program))


# ---- saved-tensor hooks entered during backward -----------------------------------------------

def test_saved_tensor_hooks_entered_in_backward_end_with_it():
    # torch's test_saved_tensor_hooks_extra_enter_during_bw_no_leak: an unpack hook that enters
    # its hooks again; the entry ends with the backward, and nothing keeps the hooks alive
    def program(t):
        packs = []

        def scope():
            def unpack(x):
                weak_hooks().__enter__()
                return x

            hooks = t.autograd.graph.saved_tensors_hooks(lambda x: packs.append(1) or x, unpack)
            weak_hooks = weakref.ref(hooks)
            x = t.randn(3, 3, requires_grad=True)
            with hooks:
                x.sin().sum().backward()
                z = t.ones(2, requires_grad=True)
                z * z  # both factors packed: the block's hooks are active
            z * z  # after the block: no hooks
            return weakref.ref(unpack)

        enabled = gc.isenabled()
        gc.disable()
        try:
            unpack_ref = scope()
            return unpack_ref() is None, len(packs)
        finally:
            if enabled:
                gc.enable()

    assert_same(*both(program))


# ---- a custom Function's jvp of a view --------------------------------------------------------

@pytest.mark.parametrize("flag", ["ok", "not_a_view", "not_a_view_of_inp",
                                  "not_a_view_of_inp_base"])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_jvp_of_a_view_must_be_a_view_of_the_given_tangent(flag, requires_grad):
    def program(t):
        class ViewFn(t.autograd.Function):
            @staticmethod
            def forward(ctx, foo, flag):
                ctx.flag = flag
                return foo.narrow(0, 0, 2)

            @staticmethod
            def vjp(ctx, grad):
                return grad, None

            @staticmethod
            def jvp(ctx, tangent, _):
                result = tangent.narrow(0, 0, 2)
                if ctx.flag != "ok":
                    result = result.clone()
                if ctx.flag in ("not_a_view_of_inp", "not_a_view_of_inp_base"):
                    result = result.view_as(result)
                return result

        x = t.rand(4, 4, dtype=t.float64, requires_grad=requires_grad)
        with t.autograd.forward_ad.dual_level():
            dual = t.autograd.forward_ad.make_dual(x.detach(), t.rand(4, 4, dtype=t.float64))
            if flag == "not_a_view_of_inp_base":
                dual = dual.view_as(dual)
            return error_of(lambda: ViewFn.apply(dual, flag))

    assert_same(*both(program))


# ---- the engine's order, and the names of torch's C++ nodes -----------------------------------

def test_current_graph_task_execution_order():
    def program(t):
        predicted = []

        def hook(_):
            predicted.append([node.name() for node in
                              c_module(t)._current_graph_task_execution_order()])

        found = []
        with t.autograd.set_multithreading_enabled(False):
            chain = t.tensor(1.0, requires_grad=True).clone().sin().exp()
            chain.register_hook(hook)
            chain.backward()
            a = t.tensor(1.0, requires_grad=True)
            b = a * 2
            out, out2, out3 = b.sin(), b.cos(), b.cos()
            out3.register_hook(hook)
            t.autograd.grad((out, out3, out2), inputs=(a,))
            c = t.tensor(1.0, requires_grad=True)
            d = a * c
            top = d.sin()
            top.register_hook(hook)
            t.autograd.grad((top,), inputs=(a,))
        found.append(predicted)
        found.append(error_of(lambda: c_module(t)._current_graph_task_execution_order()))
        again = t.tensor(1.0, requires_grad=True).clone().sin()
        again.register_hook(hook)
        found.append(error_of(again.backward))
        return found

    assert_same(*both(program))


def test_names_of_the_nodes_torch_writes_in_cpp():
    def program(t):
        x = t.ones(2, requires_grad=True)
        accumulator = x.clone().grad_fn.next_functions[0][0]
        (x * x).sum().backward(create_graph=True)
        copy = x.grad.grad_fn
        return (accumulator.name(), type(accumulator).__name__, repr(accumulator).split()[0],
                copy.name(), type(copy).__name__, repr(copy).split()[0])

    assert_same(*both(program))


def assert_same(torch_result, autojit_result):
    assert torch_result == autojit_result
