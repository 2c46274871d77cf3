"""Tests of autograd.gradcheck and gradgradcheck: passing, failing with useful messages, options.

A wrong gradient is produced two ways: by detaching part of a computation, and by a primitive
declared here with a deliberately wrong VJP (removed from the registry at once, so the op table
coverage does not see it).
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import autojit
from autojit.autograd import GradcheckError, gradcheck, gradgradcheck
from autojit.ops.elementwise import NO_ATTRS
from autojit.ops.registry import (
    REGISTRY,
    Elementwise,
    bind,
    broadcast_shapes,
    define_op,
    rule_float,
)


def leaf(*shape, seed=0, low=-1.0, high=1.0):
    rng = np.random.default_rng(seed)
    return autojit.tensor(rng.uniform(low, high, size=shape), dtype=autojit.float64,
                          requires_grad=True)


def _op(name, vjp):
    op = define_op(name=name, arity=1, shape=broadcast_shapes, dtype=rule_float, impl=np.sin,
                   vjp=vjp, saves=(0,), lowering=Elementwise("sin({0})"))
    del REGISTRY[name]
    return op


# sin with the derivative off by 10% (first derivative wrong)
WRONG_SIN = _op("test_wrong_sin", lambda ctx, g: (g * ctx.inputs[0].cos() * 1.1,))
# sin whose derivative is right but written so its own derivative is wrong: cos(x) computed from
# a detached x has no dependence on x, so the second derivative comes out 0 instead of -sin(x).
FLAT_SIN = _op("test_flat_sin", lambda ctx, g: (g * ctx.inputs[0].detach().cos(),))


def wrong_sin(x):
    return bind(WRONG_SIN, (x,), NO_ATTRS)


def flat_sin(x):
    return bind(FLAT_SIN, (x,), NO_ATTRS)


# ---- passing ----------------------------------------------------------------------------------

def test_passes_on_correct_functions():
    x, y = leaf(3, 4), leaf(4, seed=1)
    assert gradcheck(lambda a, b: (a * b).exp() + a.sin() / (b * b + 1), (x, y)) is True
    assert gradcheck(lambda a: a.sum(dim=1), x) is True
    assert gradcheck(lambda a: a.reshape(4, 3).sigmoid(), [x]) is True


def test_tuple_outputs_and_non_tensor_inputs():
    x, y = leaf(2, 3), leaf(2, 3, seed=1)
    assert gradcheck(lambda a, k, b: (a * k, (a * b).sum(), b.tanh()), (x, 2.5, y))


def test_inputs_not_requiring_grad_are_constants():
    x = leaf(3)
    constant = autojit.tensor([1.0, 2.0, 3.0], dtype=autojit.float64)
    assert gradcheck(lambda a, c: a * c, (x, constant))


def test_unused_input_gives_consistent_zero():
    x, y = leaf(3), leaf(3, seed=1)
    # the gradient with respect to y is None (unused); numerically it is 0: consistent
    assert gradcheck(lambda a, b: a * 2, (x, y))
    # one output depends on y, the other does not
    assert gradcheck(lambda a, b: (a.exp(), b * a), (x, y))


def test_fast_mode_passes_and_fails():
    x = leaf(3, 4)
    assert gradcheck(lambda a: a ** 3, (x,), fast_mode=True)
    with pytest.raises(GradcheckError, match="mismatch for output 0 with respect to input 0"):
        gradcheck(wrong_sin, (x,), fast_mode=True)


def test_no_differentiable_outputs_expects_zero_numerical_gradient():
    x = leaf(3)
    assert gradcheck(lambda a: a > 0, (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda a: a.detach() * 2, (x,))


# ---- failing ----------------------------------------------------------------------------------

def test_wrong_vjp_names_output_and_input():
    x, y = leaf(3), leaf(2, 3, seed=1)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda a, b: b * wrong_sin(a), (x, y))
    message = str(info.value)
    assert "Jacobian mismatch for output 0 with respect to input 0" in message
    assert "numerical:" in message and "analytical:" in message
    assert "The largest difference is at" in message


def test_detached_part_names_second_input():
    x, y = leaf(3), leaf(3, seed=1)
    with pytest.raises(GradcheckError,
                       match="Jacobian mismatch for output 1 with respect to input 1"):
        gradcheck(lambda a, b: (a * b, a + b.detach() * b), (x, y))


def test_message_points_at_the_largest_difference():
    x = leaf(4)

    def function(a):
        # only element 2 of the gradient is wrong: the value there is treated as a constant
        mask = autojit.tensor([1.0, 1.0, 0.0, 1.0], dtype=autojit.float64)
        return a * a * mask + (a * a).detach() * (1 - mask)

    with pytest.raises(GradcheckError) as info:
        gradcheck(function, (x,))
    found = re.search(r"largest difference is at \[(\d+), (\d+)\] \(input element \((\d+),\), "
                      r"output element \((\d+),\)\): numerical (\S+), analytical (\S+),",
                      str(info.value))
    assert found, str(info.value)
    assert found.group(1, 2, 3, 4) == ("2", "2", "2", "2")
    assert float(found.group(5)) == pytest.approx(2 * x.detach().numpy()[2], rel=1e-6)
    assert float(found.group(6)) == 0.0


def test_raise_exception_false_returns_false():
    x = leaf(3)
    assert gradcheck(wrong_sin, (x,), raise_exception=False) is False
    assert gradgradcheck(flat_sin, (x,), raise_exception=False) is False
    assert gradcheck(autojit.sin, (x,), raise_exception=False) is True


def test_error_is_a_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)
    assert autojit.autograd.GradcheckError is GradcheckError


def test_tolerances_apply():
    x = leaf(3)
    # 10% off: fails at the default rtol, passes when rtol allows it
    assert not gradcheck(wrong_sin, (x,), raise_exception=False)
    assert gradcheck(wrong_sin, (x,), rtol=0.2, atol=0.0)


# ---- input checks -------------------------------------------------------------------------------

def test_requires_an_input_requiring_grad():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (autojit.ones(3, dtype=autojit.float64),))


def test_warns_on_single_precision():
    x = autojit.tensor([0.5, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        gradcheck(lambda a: a * 2, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_refuses_overlapping_inputs():
    x = autojit.tensor([1.0, 2.0], dtype=autojit.float64).expand(3, 2).detach()
    x.requires_grad_(True)
    with pytest.raises(RuntimeError, match="stride 0"):
        gradcheck(lambda a: a * 2, (x,))


def test_inputs_are_restored():
    x = leaf(3, 4)
    before = x.detach().numpy().copy()
    gradcheck(lambda a: a.exp(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.grad is None


# ---- gradgradcheck ------------------------------------------------------------------------------

def test_gradgradcheck_passes_on_cube():
    x = leaf(3, 4)
    assert gradgradcheck(lambda a: a ** 3, (x,)) is True
    assert gradgradcheck(lambda a: a ** 3, (x,), gen_non_contig_grad_outputs=True) is True


def test_gradgradcheck_with_given_grad_outputs_and_tuple_outputs():
    x, y = leaf(2, 3), leaf(3, seed=1)
    grad_outputs = (leaf(2, 3, seed=2), leaf(seed=3))
    assert gradgradcheck(lambda a, b: (a * b.exp(), (a * a).sum()), (x, y), grad_outputs)


def test_gradgradcheck_catches_wrong_second_derivative():
    x = leaf(3)
    assert gradcheck(flat_sin, (x,))  # the first derivative is right
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        gradgradcheck(flat_sin, (x,))


def test_gradgradcheck_on_linear_function():
    # the gradient does not depend on x: grad_outputs are the only inputs it moves with
    x = leaf(3)
    assert gradgradcheck(lambda a: a * 2 + 1, (x,))


# ---- signatures ---------------------------------------------------------------------------------

def test_gradcheck_signature_matches_the_reference():
    parameters = inspect.signature(gradcheck).parameters
    expected = {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3, "raise_exception": True,
                "nondet_tol": 0.0, "check_undefined_grad": True, "check_grad_dtypes": False,
                "check_batched_grad": False, "fast_mode": False, "masked": None}
    assert list(parameters)[:2] == ["func", "inputs"]
    for name, default in expected.items():
        assert parameters[name].default == default, name
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY, name


def test_gradgradcheck_signature_matches_the_reference():
    parameters = inspect.signature(gradgradcheck).parameters
    expected = {"grad_outputs": None, "eps": 1e-6, "atol": 1e-5, "rtol": 1e-3,
                "gen_non_contig_grad_outputs": False, "raise_exception": True}
    assert list(parameters)[:3] == ["func", "inputs", "grad_outputs"]
    for name, default in expected.items():
        assert parameters[name].default == default, name


def test_batched_grad_check():
    x = leaf(2)
    assert gradcheck(autojit.sin, (x,), check_batched_grad=True)
    assert gradgradcheck(lambda a: (a * a).tanh(), (x,), check_batched_grad=True)


def test_batched_gradcheck_of_a_0d_output_into_a_custom_function():
    """check_batched_grad with a 0-d output whose gradient reaches a leaf through a custom
    Function (torch's test_custom_function_save_for_forward): it passes, as torch's does."""
    torch = pytest.importorskip("torch")

    def passes(lib):
        class Copy(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad

        x = lib.tensor(1., requires_grad=True, dtype=lib.float64)
        return lib.autograd.gradcheck(Copy.apply, (x,), check_batched_grad=True)

    assert passes(autojit) is passes(torch) is True
