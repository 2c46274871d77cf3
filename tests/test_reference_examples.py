"""The reference documents' examples, one test each, grouped by document: torch.autograd's page
in English (an old release's, which names Variable and the nvprof profiler), its older Chinese
translation, OneFlow's autograd page and tensorplay's (/work/shared/reference/).

Each example is written as the document writes it, with `torch` (or `oneflow`, `tensorplay`)
read as `autojit`, and checks what the document prints. Where a document's example does not
hold in torch 2.x either, the test says so and checks torch's current behaviour instead:
  - `torch.tensor([1], requires_grad=True)`: an integer tensor cannot require grad any more;
    the examples are run with `[1.]`.
  - `Variable(..., volatile=True)`, `reinforce(reward)`, `retain_variables=`, old-style
    Function instances called as `Exp()(input)`, gradcheck's `check_sparse_nnz` and
    `autograd.profiler.load_nvprof` (which reads nvprof's trace of a CUDA program) are gone
    from torch, or never were autojit's: the tests check the error torch gives now.
"""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import pytest
import torch

import autojit
from autojit import autograd
from autojit.autograd import Function, Variable


def values(tensor) -> list:
    return tensor.detach().tolist()


# ---- torch.autograd (English) -----------------------------------------------------------------

class TestTorchAutogradEnglish:
    def test_backward_with_grad_tensors_and_the_deprecated_grad_variables(self):
        x = autojit.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        autograd.backward(y, grad_tensors=autojit.tensor([1.0, 1.0]), retain_graph=True,
                          create_graph=False)
        assert values(x.grad) == [2.0, 4.0]
        autograd.backward([y], grad_variables=[autojit.tensor([1.0, 0.0])])
        assert values(x.grad) == [4.0, 4.0]  # accumulated in the leaves

    def test_grad_with_only_inputs_and_allow_unused(self):
        x = autojit.tensor([3.0], requires_grad=True)
        unused = autojit.tensor([1.0], requires_grad=True)
        (gradient,) = autograd.grad(x ** 2, x, grad_outputs=autojit.ones(1), retain_graph=None,
                                    create_graph=True, only_inputs=True)
        assert values(gradient) == [6.0] and gradient.requires_grad
        assert autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)[1] is None
        with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to "
                                               "not have been used in the graph"):
            autograd.grad((x * 2).sum(), [x, unused], allow_unused=False)

    def test_no_grad(self):
        x = autojit.tensor([1.0], requires_grad=True)  # the document's [1]: see the module
        with autojit.no_grad():
            y = x * 2
        assert y.requires_grad is False

        @autojit.no_grad()
        def doubler(x):
            return x * 2

        z = doubler(x)
        assert z.requires_grad is False
        with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
            autojit.tensor([1], requires_grad=True)
        with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
            torch.tensor([1], requires_grad=True)

    def test_enable_grad(self):
        x = autojit.tensor([1.0], requires_grad=True)
        with autojit.no_grad():
            with autojit.enable_grad():
                y = x * 2
        assert y.requires_grad is True
        y.backward()
        assert values(x.grad) == [2.0]

        @autojit.enable_grad()
        def doubler(x):
            return x * 2

        with autojit.no_grad():
            z = doubler(x)
        assert z.requires_grad is True

    def test_set_grad_enabled(self):
        x = autojit.tensor([1.0], requires_grad=True)
        is_train = False
        with autojit.set_grad_enabled(is_train):
            y = x * 2
        assert y.requires_grad is False
        autojit.set_grad_enabled(True)
        y = x * 2
        assert y.requires_grad is True
        autojit.set_grad_enabled(False)
        y = x * 2
        assert y.requires_grad is False
        autojit.set_grad_enabled(True)

    def test_in_place_correctness_checks(self):
        a = autojit.tensor([1.0, 2.0], requires_grad=True)
        b = a.sigmoid()  # saves its output for backward
        b.mul_(2)
        with pytest.raises(RuntimeError, match="has been modified by an inplace operation"):
            b.sum().backward()

    def test_variable_is_deprecated_and_returns_tensors(self):
        tensor = autojit.ones(2, 3)
        assert isinstance(Variable(tensor), autojit.Tensor)
        var = Variable(tensor, requires_grad=True)
        assert var.requires_grad and var.is_leaf
        assert bool((var.data == tensor).all())
        out = (var * 2).sum()
        out.backward()
        assert values(var.grad) == [[2.0] * 3] * 2
        assert not var.detach().requires_grad
        handle = var.register_hook(lambda grad: grad)
        handle.remove()
        autograd_tensor = autojit.randn((2, 3, 4), requires_grad=True)
        assert autograd_tensor.shape == (2, 3, 4) and autograd_tensor.requires_grad

    def test_tensor_backward_arguments(self):
        x = autojit.tensor([1.0, 2.0], requires_grad=True)
        y = x ** 3
        y.backward(gradient=autojit.tensor([1.0, 1.0]), retain_graph=True, create_graph=True)
        assert values(x.grad) == [3.0, 12.0] and x.grad.requires_grad
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
            (x * 2).backward()

    def test_detach_shares_data(self):
        x = autojit.tensor([1.0, 2.0], requires_grad=True)
        detached = x.detach()
        assert detached.requires_grad is False
        with autojit.no_grad():
            x.mul_(3)
        assert values(detached) == [3.0, 6.0]  # in-place changes are seen by both

    def test_grad_accumulates(self):
        x = autojit.tensor([1.0], requires_grad=True)
        assert x.grad is None
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        assert values(x.grad) == [5.0]

    def test_is_leaf_on_the_cpu(self):
        a = autojit.rand(10, requires_grad=True)
        assert a.is_leaf
        c = autojit.rand(10, requires_grad=True) + 2
        assert c.is_leaf is False  # made by the addition

    def test_is_leaf_on_a_gpu(self):
        if not autojit.cuda.is_available():
            pytest.skip("no GPU, and the CUDA simulator is not on in this process")
        b = autojit.rand(10, requires_grad=True).cuda()
        assert b.is_leaf is False  # made by the copy of a CPU tensor to the GPU
        d = autojit.rand(10).cuda()
        assert d.is_leaf  # does not require grad: no operation is tracked
        e = autojit.rand(10).cuda().requires_grad_()
        assert e.is_leaf
        f = autojit.rand(10, requires_grad=True, device="cuda")
        assert f.is_leaf

    def test_register_hook(self):
        v = autojit.tensor([0.0, 0.0, 0.0], requires_grad=True)
        h = v.register_hook(lambda grad: grad * 2)  # double the gradient
        v.backward(autojit.tensor([1.0, 2.0, 3.0]))
        assert values(v.grad) == [2.0, 4.0, 6.0]
        assert v.grad.type() == "autojit.FloatTensor" and v.grad.shape == (3,)
        h.remove()  # removes the hook
        v.grad = None
        v.backward(autojit.tensor([1.0, 2.0, 3.0]))
        assert values(v.grad) == [1.0, 2.0, 3.0]

    def test_requires_grad(self):
        x = autojit.tensor([1.0], requires_grad=True)
        y = x * 2
        assert y.requires_grad and y.grad_fn is not None
        assert autojit.ones(1).requires_grad is False

    def test_function_exp(self):
        class Exp(Function):
            @staticmethod
            def forward(ctx, i):
                result = i.exp()
                ctx.save_for_backward(result)
                return result

            @staticmethod
            def backward(ctx, grad_output):
                result, = ctx.saved_tensors
                assert ctx.needs_input_grad == (True,)
                return grad_output * result

        x = autojit.tensor([0.0, 1.0], dtype=autojit.float64, requires_grad=True)
        y = Exp.apply(x)
        y.sum().backward()
        np.testing.assert_allclose(values(x.grad), np.exp([0.0, 1.0]))
        assert autograd.gradcheck(Exp.apply, (x,))

    def test_gradcheck_and_gradgradcheck(self):
        x = autojit.tensor([0.5, 1.5], dtype=autojit.float64, requires_grad=True)
        assert autograd.gradcheck(lambda t: (t * t).sin(), (x,), eps=1e-06, atol=1e-05,
                                  rtol=0.001, raise_exception=True)
        assert autograd.gradgradcheck(lambda t: (t * t).sin(), (x,), grad_outputs=None,
                                      eps=1e-06, atol=1e-05, rtol=0.001,
                                      gen_non_contig_grad_outputs=False, raise_exception=True)
        # check_sparse_nnz is gone from torch's gradcheck (sparse tensors: `masked=`).
        for module in (autograd, torch.autograd):
            with pytest.raises(TypeError, match="check_sparse_nnz"):
                module.gradcheck(lambda t: t, (x,), check_sparse_nnz=False)

    def test_profiler(self):
        x = autojit.randn((1, 1), requires_grad=True)
        with autograd.profiler.profile(enabled=True, use_cuda=False) as prof:
            y = x ** 2
            y.backward()
        table = str(prof)
        assert "autojit::pow" in table and "PowBackward0" in table
        assert "self_cpu_time_total" not in prof.key_averages().table(sort_by="cpu_time_total")
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "trace.json")
            prof.export_chrome_trace(path)
            with open(path) as file:
                assert json.load(file)["traceEvents"]

    def test_emit_nvtx_runs_its_block(self):
        x = autojit.ones(2, requires_grad=True)
        with autograd.profiler.emit_nvtx(enabled=True):
            (x * 2).sum().backward()
        assert values(x.grad) == [2.0, 2.0]
        # load_nvprof reads nvprof's trace of a CUDA program: no such trace exists here.
        assert not hasattr(autograd.profiler, "load_nvprof")

    @pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
    def test_detect_anomaly(self):
        class MyFunc(autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.clone()

            @staticmethod
            def backward(ctx, gO):
                # Error during the backward pass
                raise RuntimeError("Some error in backward")

        def run_fn(a):
            out = MyFunc.apply(a)
            return out.sum()

        inp = autojit.rand(10, 10, requires_grad=True)
        out = run_fn(inp)
        with pytest.raises(RuntimeError, match="Some error in backward"):
            out.backward()
        with pytest.warns(UserWarning, match="Error detected in MyFuncBackward"):
            with autograd.detect_anomaly():
                inp = autojit.rand(10, 10, requires_grad=True)
                out = run_fn(inp)
                with pytest.raises(RuntimeError, match="Some error in backward"):
                    out.backward()
        with autograd.set_detect_anomaly(True):
            assert autojit.is_anomaly_enabled()
        assert not autojit.is_anomaly_enabled()


# ---- torch.autograd (an older release, Chinese) -----------------------------------------------

class TestTorchAutogradOldChinese:
    def test_backward_with_variables_positionally(self):
        x = autojit.tensor([2.0], requires_grad=True)
        autograd.backward([x * x], [autojit.ones(1)])
        assert values(x.grad) == [4.0]
        # retain_variables became retain_graph.
        for module, tensor in ((autograd, autojit.tensor), (torch.autograd, torch.tensor)):
            y = tensor([2.0], requires_grad=True) * 3
            with pytest.raises(TypeError, match="retain_variables"):
                module.backward([y], [tensor([1.0])], retain_variables=False)

    def test_grad_returns_the_gradients(self):
        x = autojit.tensor([2.0], requires_grad=True)
        (gradient,) = autograd.grad([x ** 3], [x], grad_outputs=None, retain_graph=None,
                                    create_graph=None, only_inputs=True)
        assert values(gradient) == [12.0]

    def test_variable_attributes(self):
        tensor = autojit.tensor([1.0, 2.0])
        v = Variable(tensor, requires_grad=True)
        assert bool((v.data == tensor).all()) and v.is_leaf and v.grad_fn is None
        w = v * 2
        assert w.grad_fn is not None and not w.is_leaf and w.requires_grad
        # volatile was removed: it warns and has no effect, in torch as here.
        for make in (lambda: Variable(tensor, volatile=True),
                     lambda: torch.autograd.Variable(torch.ones(1), volatile=True)):
            with pytest.warns(UserWarning, match="volatile was removed"):
                made = make()
            assert not made.requires_grad

    def test_requires_grad_changes_only_on_leaves(self):
        v = Variable(autojit.tensor([1.0]), requires_grad=True)
        w = v * 2
        for change in (lambda t: setattr(t, "requires_grad", False),
                       lambda t: t.requires_grad_(False)):
            for m, leaf in ((autojit, v), (torch, torch.ones(1, requires_grad=True))):
                with pytest.raises(RuntimeError, match="you can only change requires_grad "
                                                       "flags of leaf variables"):
                    change(w if m is autojit else leaf * 2)

    def test_variable_backward_detach_and_detach_(self):
        v = Variable(autojit.tensor([1.0, 2.0]), requires_grad=True)
        w = v * 3
        w.backward(autojit.ones(2))
        assert values(v.grad) == [3.0, 3.0]
        u = v * 2
        assert u.detach().requires_grad is False
        u.detach_()
        assert u.is_leaf and u.requires_grad is False and u.grad_fn is None

    def test_register_hook_with_the_legacy_constructor(self):
        v = Variable(autojit.Tensor([0, 0, 0]), requires_grad=True)
        h = v.register_hook(lambda grad: grad * 2)  # double the gradient
        v.backward(autojit.Tensor([1, 1, 1]))
        assert values(v.grad.data) == [2.0, 2.0, 2.0]
        h.remove()  # removes the hook

    def test_reinforce_is_gone(self):
        for tensor in (autojit.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)):
            with pytest.raises(RuntimeError, match=r"reinforce\(\) was removed"):
                (tensor * 2).reinforce(autojit.ones(1))

    def test_retain_grad(self):
        v = Variable(autojit.tensor([1.0, 2.0]), requires_grad=True)
        w = v * 2
        w.retain_grad()
        w.sum().backward()
        assert values(w.grad) == [1.0, 1.0]

    def test_function_fields(self):
        seen = {}

        class Scale(Function):
            @staticmethod
            def forward(ctx, x, factor):
                ctx.save_for_backward(x)
                ctx.factor = factor
                return x * factor

            @staticmethod
            def backward(ctx, grad_output):
                seen["needs_input_grad"] = ctx.needs_input_grad
                (x,) = ctx.saved_tensors
                seen["saved"] = values(x)
                return grad_output * ctx.factor, None

        x = autojit.tensor([1.0, 2.0], requires_grad=True)
        Scale.apply(x, 3.0).sum().backward()
        assert values(x.grad) == [3.0, 3.0]
        assert seen == {"needs_input_grad": (True, False), "saved": [1.0, 2.0]}


# ---- OneFlow's autograd page (Chinese) -----------------------------------------------------------

class TestOneFlowAutograd:
    def test_function_exp_through_apply(self):
        class Exp(Function):
            @staticmethod
            def forward(ctx, i):
                result = i.exp()
                ctx.save_for_backward(result)
                return result

            @staticmethod
            def backward(ctx, grad_output):
                result, = ctx.saved_tensors
                return grad_output * result

        input = autojit.tensor([0.0, 2.0], requires_grad=True)  # noqa: A001 - the example's
        output = Exp.apply(input)
        output.sum().backward()
        np.testing.assert_allclose(values(input.grad), np.exp([0.0, 2.0]), rtol=1e-6)
        # `Exp()(input)`, as OneFlow documents: autojit calls apply (torch refuses an instance).
        again = Exp()(input)
        assert values(again) == values(output) and again.grad_fn is not None

    def test_backward_and_grad_signatures(self):
        x = autojit.tensor([1.0, 3.0], requires_grad=True)
        autograd.backward(x * x, grad_tensors=autojit.ones(2), retain_graph=False,
                          create_graph=False)
        assert values(x.grad) == [2.0, 6.0]
        result = autograd.grad(x * x, x, grad_outputs=autojit.ones(2), retain_graph=False,
                               create_graph=False)
        assert isinstance(result, tuple) and values(result[0]) == [2.0, 6.0]


# ---- tensorplay's autograd page (Chinese) -----------------------------------------------------

class TestTensorplayAutograd:
    def test_enable_grad_with_and_without_parentheses(self):
        x = autojit.tensor([1.0], requires_grad=True)
        with autojit.no_grad():
            with autojit.enable_grad():
                y = x * 2
        assert y.requires_grad is True
        y.backward()
        assert values(x.grad) == [2.0]

        @autojit.enable_grad()
        def doubler(x):
            return x * 2

        with autojit.no_grad():
            z = doubler(x)
        assert z.requires_grad is True

        @autojit.enable_grad
        def tripler(x):
            return x * 3

        with autojit.no_grad():
            z = tripler(x)
        assert z.requires_grad is True
        assert tripler.__name__ == "tripler"

    def test_no_grad_with_and_without_parentheses(self):
        x = autojit.tensor([1.0], requires_grad=True)
        with autojit.no_grad():
            y = x * 2
        assert y.requires_grad is False

        @autojit.no_grad()
        def doubler(x):
            return x * 2

        z = doubler(x)
        assert z.requires_grad is False

        @autojit.no_grad
        def tripler(x):
            return x * 3

        z = tripler(x)
        assert z.requires_grad is False
        # factory function exception
        with autojit.no_grad():
            a = autojit.nn.Parameter(autojit.rand(10))
        assert a.requires_grad is True

    def test_set_grad_enabled_as_a_function_returns_a_context(self):
        x = autojit.tensor([1.0], requires_grad=True)
        is_train = False
        with autojit.set_grad_enabled(is_train):
            y = x * 2
        assert y.requires_grad is False
        _ = autojit.set_grad_enabled(True)
        y = x * 2
        assert y.requires_grad is True
        _ = autojit.set_grad_enabled(False)
        y = x * 2
        assert y.requires_grad is False
        _ = autojit.set_grad_enabled(True)
        with pytest.raises(TypeError, match="must be bool, not function"):
            autojit.set_grad_enabled(lambda t: t)

    def test_the_modes_clone_themselves(self):
        mode = autojit.set_grad_enabled(True)
        copy = mode.clone()
        assert isinstance(copy, autojit.set_grad_enabled) and copy is not mode
        assert isinstance(autojit.no_grad().clone(), autojit.no_grad)
        assert isinstance(autojit.enable_grad().clone(), autojit.enable_grad)

    def test_grad_with_allow_unused_none(self):
        x = autojit.tensor([2.0], requires_grad=True)
        (gradient,) = autograd.grad(outputs=x * x, inputs=x, grad_outputs=None,
                                    retain_graph=None, create_graph=False, allow_unused=None)
        assert values(gradient) == [4.0]

    def test_is_grad_enabled(self):
        assert autojit.is_grad_enabled() is True
        with autojit.no_grad():
            assert autojit.is_grad_enabled() is False

    def test_function_methods(self):
        assert all(callable(getattr(Function, name)) for name in ("apply", "forward",
                                                                 "backward"))
