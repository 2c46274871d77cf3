"""What torch's own autograd tests check beyond the values, against torch on the same programs:
the engine's answer to `_will_engine_execute_node`, a Function's vmap defaults, torch's private
forms of unique (`torch._unique`, `_unique2`, `_VF.unique_dim`), forward AD's refusal for
igamma's first input, of out= forms and of a tangent with a tangent of its own, a dual
tensor's printed tangent, a GradientEdge as an output of autograd.grad (implicit gradients and the
checks of given ones), gradcheck's refusal of outputs whose shape or dtype move with the input,
a saved tensor detached in place, and allow_mutation_on_saved_tensors' bookkeeping (which
tensors an op saves: pow by a number keeps its input only)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from test_autograd_internals_torch import both, same_outcome

import autojit
from autojit.drop_in import _VF as autojit_VF

torch = pytest.importorskip("torch")


# ---- the engine ------------------------------------------------------------------------------

def test_will_engine_execute_node_answers_and_refuses_as_torch():
    def program(t, C):
        answers = []
        a = t.tensor([1.0, 2.0], requires_grad=True)
        b = a * 2
        leaf_node = b.grad_fn.next_functions[0][0]

        def ask(node):
            try:
                return C._will_engine_execute_node(node)
            except RuntimeError as error:
                return str(error)

        b.register_hook(lambda g: answers.append((ask(leaf_node), ask(b.grad_fn))))
        t.autograd.grad(b.sum(), (a,), retain_graph=True)  # a leaf autograd.grad reads: refused
        t.autograd.backward(b.sum(), inputs=(a,), retain_graph=True)
        c = a * 3
        d = c * 2
        d.register_hook(lambda g: answers.append(ask(c.grad_fn.next_functions[0][0])))
        t.autograd.grad(d.sum(), (c,))  # a leaf the pass does not reach: False
        answers.append(ask(b))
        answers.append(ask(b.grad_fn))
        return answers

    expected, actual = both(program)
    assert actual == expected


def test_a_functions_vmap_defaults_are_torchs():
    def program(t, C):
        class Square(t.autograd.Function):
            @staticmethod
            def forward(x):
                return x ** 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

        try:
            Square.vmap(None, (0,), None)
        except NotImplementedError as error:
            message = str(error)
        return Square.generate_vmap_rule, message

    expected, actual = both(program)
    assert actual == expected


# ---- unique's private forms --------------------------------------------------------------------

@pytest.mark.parametrize("sorted_", [True, False])
@pytest.mark.parametrize("inverse", [True, False])
@pytest.mark.parametrize("counts", [True, False])
def test_private_unique_forms_are_torchs(sorted_, inverse, counts):
    data = np.array([[3.0, 1.0], [3.0, 1.0], [0.0, 5.0]])

    def program(t, VF):
        x = t.tensor(data, requires_grad=True)
        results = [t._unique(x, sorted=sorted_, return_inverse=inverse),
                   t._unique2(x, sorted=sorted_, return_inverse=inverse, return_counts=counts),
                   VF.unique_dim(x, 0, sorted=sorted_, return_inverse=inverse,
                                 return_counts=counts)]
        return [[(r.tolist(), str(r.dtype).split(".")[-1], r.requires_grad) for r in result]
                for result in results]

    assert program(autojit, autojit_VF) == program(torch, torch._VF)


# ---- forward AD ----------------------------------------------------------------------------------

def test_forward_ad_of_igammas_first_input_raises_torchs_error():
    def program(t, C):
        import importlib

        fw = importlib.import_module(t.__name__ + ".autograd.forward_ad")
        with fw.dual_level():
            a = fw.make_dual(t.tensor([1.5, 2.0]), t.tensor([1.0, 1.0]))
            t.igamma(a, t.tensor([0.5, 1.0]))

    same_outcome(program)


def _forward_ad(t):
    import importlib

    return importlib.import_module(t.__name__ + ".autograd.forward_ad")


@pytest.mark.parametrize("out_is_dual", [True, False], ids=["dual-out", "dual-input"])
def test_forward_ad_refuses_out_forms_as_torch(out_is_dual):
    def program(t, C):
        fw = _forward_ad(t)
        with fw.dual_level():
            dual = fw.make_dual(t.tensor([1.0, 2.0]), t.tensor([0.5, 0.5]))
            plain = t.tensor([3.0, 4.0])
            if out_is_dual:
                t.add(plain, plain, out=dual)
            else:
                t.add(dual, plain, out=plain)

    same_outcome(program)


def test_a_tangent_with_a_tangent_of_its_own_is_refused_as_by_torch():
    def program(t, C):
        fw = _forward_ad(t)
        with fw.dual_level():
            dual = fw.make_dual(t.tensor([1.0, 2.0]), t.tensor([0.5, 0.5]))
            fw.make_dual(t.tensor([3.0, 4.0]), dual)

    same_outcome(program)


def test_detach_in_place_drops_the_tangent_as_torch():
    def program(t, C):
        fw = _forward_ad(t)
        with fw.dual_level():
            dual = fw.make_dual(t.tensor([1.0, 2.0]), t.tensor([0.5, 0.5])).clone()
            kept = fw.unpack_dual(dual).tangent.tolist()
            dual.detach_()
            return kept, fw.unpack_dual(dual).tangent, fw.unpack_dual(dual * 2).tangent

    expected, actual = both(program)
    assert actual == expected == ([0.5, 0.5], None, None)


def test_a_dual_tensor_prints_its_tangent_as_torch():
    def program(t, C):
        fw = _forward_ad(t)
        with fw.dual_level():
            a = t.tensor([1.0, 2.5])
            b = fw.make_dual(a, t.tensor([0.25, -1.0]))
            primal, tangent = fw.unpack_dual(b)
            texts = [str(a), str(b), str(primal), str(tangent), str(b * 2), str(b[1:])]
        return texts + [str(b)]  # outside the level: no tangent

    expected, actual = both(program)
    assert actual == expected
    assert "tangent=tensor([ 0.5000, -2.0000])" in expected[4]


# ---- a GradientEdge as an output of autograd.grad ---------------------------------------------

def _edge_program(grad_output, reduce=True):
    def program(t, C):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        tmp = x.sin().cos()
        if reduce:
            tmp = tmp.sum()
        edge = t.autograd.graph.get_gradient_edge(tmp)
        given = None if grad_output is None else grad_output(t)
        return t.autograd.grad(edge, (x,), grad_outputs=given)[0]
    return program


@pytest.mark.parametrize("grad_output, reduce", [
    (None, True),  # a scalar edge: the implicit gradient of ones
    (None, False),  # not a scalar: refused
    (lambda t: t.tensor([1.0, 2.0, 3.0, 4.0]), True),  # the wrong shape
    (lambda t: t.tensor(2.0, dtype=t.float64), True),  # another real dtype: converted
    (lambda t: t.tensor(1.0 + 1.0j), True),  # complex for a real output: refused
], ids=["implicit", "not-scalar", "shape", "float64", "complex"])
def test_a_gradient_edge_as_output_is_checked_as_torch(grad_output, reduce):
    same_message(_edge_program(grad_output, reduce))


def test_a_complex_gradient_for_a_real_output_is_refused():
    def program(t, C):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        return t.autograd.grad(x.sin().sum(), (x,), grad_outputs=t.tensor(1.0 + 0j))[0]

    same_message(program)


# ---- gradcheck --------------------------------------------------------------------------------

@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("moves", ["shape", "dtype"])
def test_gradcheck_refuses_outputs_that_change_shape_or_dtype(fast_mode, moves):
    def program(t, C):
        def fn(x):
            if bool(t.all(x >= 1)):
                return t.cat([x, x]) if moves == "shape" else x.to(t.float32)
            return x

        return t.autograd.gradcheck(fn, (t.ones(1, dtype=t.float64, requires_grad=True),),
                                    fast_mode=fast_mode)

    expected, actual = both(lambda t, C: _message(lambda: program(t, C)))
    assert expected[0] == actual[0] == "AssertionError"
    if fast_mode:  # the order of the two outputs is the random direction's sign
        start = f"Expected `func` to return outputs with the same {moves} when inputs"
        assert actual[1].startswith(start) and expected[1].startswith(start)
    else:
        assert actual == expected


def _message(run):
    try:
        value = run()
    except Exception as error:  # noqa: BLE001 - the exception is what is compared
        return type(error).__name__, str(error).replace("torch.", "").replace("autojit.", "")
    if hasattr(value, "detach"):
        return "ok", np.asarray(value.detach().tolist())
    return "ok", value


def same_message(program):
    """program gives torch's outcome: its error type and message (framework names aside), or
    its value to float32 rounding."""
    (kind, expected), (actual_kind, actual) = both(lambda t, C: _message(lambda: program(t, C)))
    assert actual_kind == kind
    if kind == "ok" and isinstance(expected, np.ndarray):
        np.testing.assert_allclose(actual, expected, rtol=1e-6)
    else:
        assert actual == expected


# ---- saved tensors ---------------------------------------------------------------------------

def test_a_saved_input_detached_in_place_is_refused_at_backward():
    def program(t, C):
        a = t.tensor(1.0, requires_grad=True).clone()
        b = a.sin()  # saves its input
        a.detach_()
        b.backward()

    same_outcome(program)

    def output_saved(t, C):
        a = t.tensor(1.0, requires_grad=True).clone()
        b = a.exp()  # saves its output only
        a.detach_()
        b.backward()
        return "ok"

    same_outcome(output_saved)


def test_allow_mutation_on_saved_tensors_keeps_torchs_books():
    def program(t, C):
        counts = []
        with t.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = t.randn(2, 3, requires_grad=True).clone()
            out = (a ** 2).sum()  # pow by a number saves its input only
            counts.append(len(ctx.tid_to_weakhandle))
            out.backward()
            a.sin_()
            counts.append(len(ctx.cloned))
            out = (a ** 2).sum()
            a.sin_()
            counts.append(len(ctx.cloned))
            del out
            gc.collect()
            counts.append(len(ctx.cloned))
            b = a ** 2
            c = a ** 2
            a.sin_()
            counts.append(len(ctx.cloned))  # one clone for the same tensor saved twice
            del b, c
            gc.collect()
            counts.append(len(ctx.cloned))
        return counts

    expected, actual = both(program)
    assert actual == expected == [1, 0, 1, 0, 1, 0]


def test_backward_in_another_allow_mutation_context_is_refused():
    def program(t, C):
        with t.autograd.graph.allow_mutation_on_saved_tensors():
            a = t.rand(2, 3, requires_grad=True)
            out = (a ** 2).sum()
        with t.autograd.graph.allow_mutation_on_saved_tensors():
            out.backward()

    same_outcome(program)


def test_pow_keeps_its_output_only_for_the_exponents_gradient():
    x = autojit.tensor([1.5, 2.0], requires_grad=True)
    y = autojit.tensor([2.0, 3.0], requires_grad=True)
    assert x.__pow__(2).grad_fn._saved_out is None
    assert (x ** y).grad_fn._saved_result.tolist() == pytest.approx([2.25, 8.0])
    with pytest.raises(AttributeError):
        (x ** 2).grad_fn._saved_result  # noqa: B018 - torch's PowBackward0 has none either
    assert not hasattr(torch.tensor([1.5], requires_grad=True).pow(2).grad_fn, "_saved_result")


# ---- reentrant backward ------------------------------------------------------------------------

def test_thousands_of_nested_backward_calls_run_as_in_torch():
    """A backward that calls backward, 1,500 levels deep: far past the recursion limit of one
    thread's stack (each level takes about five frames), which the engine leaves for fresh
    threads every 32 levels; the grad mode and the hooks' state go with them."""
    def program(t, C):
        seen = []

        class DeepReentrant(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with t.enable_grad():
                    ctx.x = t.tensor(float(x), requires_grad=True) - 1
                return ctx.x.detach()

            @staticmethod
            def backward(ctx, grad):
                seen.append(t.is_grad_enabled())
                if ctx.x < 0:
                    return grad
                with t.enable_grad():
                    DeepReentrant.apply(ctx.x).sum().backward()
                return grad * 2

        v = t.tensor(1500.0, requires_grad=True)
        DeepReentrant.apply(v).sum().backward()
        return v.grad.item(), len(seen), set(seen)

    expected, actual = both(program)
    assert actual == expected == (2.0, 1501, {False})


def test_a_reentrant_checkpoint_whose_outputs_need_no_grad_refuses_backward():
    def program(t, C):
        import importlib

        checkpoint = importlib.import_module(t.__name__ + ".utils.checkpoint").checkpoint
        weight = t.tensor([[1.0, 2.0], [3.0, 4.0]])

        def body(x):
            with t.no_grad():
                return x @ weight

        a = t.tensor([[0.5, -1.0], [2.0, 1.5]], requires_grad=True)
        out = checkpoint(body, a, use_reentrant=True)
        flags = (out.requires_grad, type(out.grad_fn).__name__)
        (out + a).sum().backward()
        return flags

    same_outcome(program)
