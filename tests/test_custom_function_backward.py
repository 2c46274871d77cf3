"""Custom autograd.Function, continued: the gradients backward returns (count, shapes,
broadcasting, errors), double backward, once_differentiable and gradcheck, tracing, anomaly
mode and the profiler, and autograd.Variable. test_custom_function.py has the reference
examples, ctx, saved tensors, outputs and mark_dirty."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from custom_function_cases import Exp, assert_close, leaf

import autojit
from autojit import autograd
from autojit.autograd import Function, Variable, once_differentiable

# ---- gradients backward returns -------------------------------------------------------------

def _returning(*gradients, inputs=1):
    """A Function of `inputs` arguments whose backward returns `gradients`."""

    class Fixed(Function):
        @staticmethod
        def forward(ctx, *args):
            return args[0] * 2

        @staticmethod
        def backward(ctx, grad):
            return gradients if len(gradients) != 1 else gradients[0]

    return Fixed


def test_wrong_number_of_gradients():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"function FixedBackward returned an incorrect number "
                       r"of gradients \(expected 2, got 1\)"):
        _returning(autojit.ones(2)).apply(x, x).sum().backward()
    _returning(autojit.ones(2), None, None).apply(x).sum().backward()  # extra Nones are allowed
    assert x.grad.tolist() == [1.0, 1.0]


def test_wrong_gradient_shape_names_function_and_index():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"Function FixedBackward returned an invalid gradient "
                       r"at index 0 - got \[3\] but expected shape compatible with \[2\]"):
        _returning(autojit.ones(3)).apply(x).sum().backward()
    with pytest.raises(RuntimeError, match=r"at index 1 - got \[\] but expected shape "
                       r"compatible with \[2\]"):
        _returning(None, autojit.tensor(1.0)).apply(x, x).sum().backward()


def test_broadcast_gradients_are_summed_and_cast():
    x = leaf([1.0, 2.0])
    _returning(autojit.ones(3, 2, dtype=autojit.float64)).apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and x.grad.dtype is autojit.float32
    column = leaf([[1.0], [2.0]])
    _returning(autojit.ones(2, 4)).apply(column).sum().backward()
    assert column.grad.tolist() == [[4.0], [4.0]]


def test_gradients_for_non_tensor_or_non_requiring_inputs():
    x, plain = leaf([1.0, 2.0]), autojit.ones(2)
    _returning(autojit.ones(2), autojit.ones(5), inputs=2).apply(x, plain).sum().backward()
    assert plain.grad is None and x.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="function FixedBackward returned a gradient different "
                       "than None at position 2, but the corresponding forward input was not a "
                       "Variable"):
        _returning(autojit.ones(2), autojit.ones(1)).apply(x, 3).sum().backward()
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got int\)"):
        _returning(3).apply(x).sum().backward()


def test_error_raised_in_backward_propagates():
    class MyFunc(Function):  # the detect_anomaly example of torch-autograd-en.txt
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


# ---- higher order, once_differentiable, gradcheck -------------------------------------------

class Cube(Function):
    @staticmethod
    def forward(ctx, a, power):
        ctx.save_for_backward(a)
        ctx.power = power
        return a ** power

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * ctx.power * a ** (ctx.power - 1), None


def test_gradcheck_and_gradgradcheck_of_custom_functions():
    x = autojit.randn(3, dtype=autojit.float64, requires_grad=True)
    assert autograd.gradcheck(Exp.apply, (x,))
    assert autograd.gradgradcheck(Exp.apply, (x,))
    assert autograd.gradcheck(lambda a: Cube.apply(a, 3), (x,))
    assert autograd.gradgradcheck(lambda a: Cube.apply(a, 3), (x,))


def test_gradcheck_catches_a_wrong_custom_backward():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, a):
            return a * a

        @staticmethod
        def backward(ctx, grad):
            return grad  # should be 2 * a * grad

    x = autojit.randn(3, dtype=autojit.float64, requires_grad=True)
    assert not autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)


class OnceSquare(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        assert not autojit.is_grad_enabled()
        return 2 * a * grad


def test_once_differentiable_first_order():
    x = leaf([1.0, 2.0])
    OnceSquare.apply(x).sum().backward()
    assert_close(x.grad, [2.0, 4.0])
    (gradient,) = autograd.grad(OnceSquare.apply(x).sum(), x, create_graph=True)
    assert not gradient.requires_grad  # the incoming gradient did not require grad


def test_once_differentiable_refuses_double_backward():
    x = leaf([1.0, 2.0])
    (gradient,) = autograd.grad((OnceSquare.apply(x) * x).sum(), x, create_graph=True)
    assert_close(gradient, [3.0, 12.0])  # d/dx x^3
    assert gradient.requires_grad
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                       "marked with @once_differentiable"):
        gradient.sum().backward()


def test_hooks_on_custom_function_outputs():
    x = leaf([1.0, 2.0])
    y = Exp.apply(x)
    y.register_hook(lambda grad: grad * 2)
    y.retain_grad()
    y.sum().backward()
    assert_close(y.grad, [2.0, 2.0])
    assert_close(x.grad, 2 * np.exp([1.0, 2.0]))


# ---- integration: tracing, anomaly mode, profiler ----------------------------------------

def test_custom_function_while_tracing():
    from autojit.ir import interpret, make_graph

    def loss_and_grad(x):
        loss = Cube.apply(Exp.apply(x), 2).sum()
        (gradient,) = autograd.grad(loss, x)
        return loss, gradient

    x = autojit.randn(4, dtype=autojit.float64, requires_grad=True)
    graph = make_graph(loss_and_grad, x)
    text = str(graph)
    assert "= exp %0" in text and "pow" in text
    loss, gradient = interpret(graph, x)
    eager_loss, eager_gradient = loss_and_grad(x)
    np.testing.assert_allclose(loss, eager_loss.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gradient, 2 * np.exp(2 * x.detach().numpy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, eager_gradient.numpy(), rtol=1e-12)


def test_anomaly_mode_records_the_forward_trace():
    x = leaf([1.0])
    assert Exp.apply(x).grad_fn._forward_trace is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd.detect_anomaly():
            node = Exp.apply(x).grad_fn
    assert node._forward_trace is not None


def test_profiler_records_custom_function_forward_and_backward():
    x = leaf([1.0, 2.0])
    with autograd.profiler.profile() as prof:
        Exp.apply(x).sum().backward()
    names = [event.name for event in prof.function_events]
    assert "Exp" in names and "ExpBackward" in names
    forward = next(event for event in prof.function_events if event.name == "Exp")
    backward = next(event for event in prof.function_events if event.name == "ExpBackward")
    assert forward.sequence_nr == backward.sequence_nr != -1


# ---- autograd.Variable ----------------------------------------------------------------------

def test_variable_returns_a_tensor_sharing_storage():
    t = autojit.ones(2)
    v = Variable(t, requires_grad=True)
    assert type(v) is autojit.Tensor and v is not t
    assert v.requires_grad and not t.requires_grad and v.is_leaf
    assert v._version_counter is t._version_counter
    t.add_(1)
    assert v.tolist() == [2.0, 2.0] and v._version == 1
    assert not Variable(t).requires_grad
    history = Variable(v * 2)
    assert history.grad_fn is None and not history.requires_grad
    assert isinstance(t, Variable) and not isinstance(3, Variable)
    assert Variable().shape == (0,)


def test_variable_errors_and_volatile():
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        Variable(3)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        Variable(autojit.tensor([1, 2]), requires_grad=True)
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        assert not Variable(autojit.ones(1), volatile=True).requires_grad


# ---- forward mode over a backward that reads a saved output -----------------------------------

def _saved_output_functions(library):
    class SavedExp(library.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result

        @staticmethod
        def jvp(ctx, tangent):
            (result,) = ctx.saved_tensors
            return result * tangent

    class CubeAndSlope(library.autograd.Function):  # two outputs, the second saved
        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, grad_cube, grad_slope):
            x, slope = ctx.saved_tensors
            return grad_cube * slope + grad_slope * 6 * x

        @staticmethod
        def jvp(ctx, tangent):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * tangent, 6 * x * tangent

    return (lambda x: SavedExp.apply(x).sum(),
            lambda x: CubeAndSlope.apply(x)[0].sum() + CubeAndSlope.apply(x)[1].sum())


def test_forward_over_reverse_reads_the_tangent_of_a_saved_output():
    import torch

    data = np.array([0.5, -1.0, 2.0])
    results = []
    for library in (autojit, torch):
        x = library.tensor(data, dtype=library.float64)
        row = []
        for function in _saved_output_functions(library):
            row.append(library.func.jvp(library.func.grad(function), (x,),
                                        (library.ones_like(x),))[1].numpy())
        with library.autograd.forward_ad.dual_level():
            dual = library.autograd.forward_ad.make_dual(x.clone().requires_grad_(),
                                                         library.ones_like(x))
            (first,) = library.autograd.grad(_saved_output_functions(library)[0](dual), dual,
                                             create_graph=True)
            row.append(library.autograd.forward_ad.unpack_dual(first).tangent.detach().numpy())
        results.append(row)
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)
    saved_exp = _saved_output_functions(autojit)[0]
    hessian = autojit.func.hessian(saved_exp)(autojit.tensor(data, dtype=autojit.float64))
    np.testing.assert_allclose(hessian.numpy(), np.diag(np.exp(data)), rtol=1e-12)
