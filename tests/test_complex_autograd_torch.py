"""Complex autograd against torch: gradients of real losses of complex tensors (torch's
convention, dL/dx + i dL/dy: the conjugate Wirtinger derivative scaled by two), to second order
through create_graph, forward mode, and gradcheck and gradgradcheck on complex inputs, which
perturb real and imaginary parts in turn and so catch a VJP that forgets a conjugate.
"""

from __future__ import annotations

import numpy as np
import pytest
from torch_compare import torch

import autojit
from autojit.autograd import GradcheckError, gradcheck, gradgradcheck

rng = np.random.default_rng(5)


def values(shape=(3,), dtype="complex128", low=0.5, high=2.0):
    """Complex values with parts of magnitude in [low, high) and random signs: away from 0
    and from the negative real axis's branch cuts where a positive real part is asked."""
    def part():
        return rng.uniform(low, high, shape) * rng.choice([-1, 1], shape)
    return (np.abs(part()) + 1j * part()).astype(dtype)


def real_loss(framework, out, weights):
    """A real loss of any result: sum(Re(conj(w) out)), the real part of a complex one."""
    if out.dtype.is_complex:
        return (framework.tensor(weights).conj() * out).real.sum()
    return (framework.tensor(weights.real.astype(np.float64)) * out).sum()


def gradients(framework, function, arrays, order: int):
    """The gradients of a real loss of function(*inputs) with respect to every input, and with
    order 2 the gradients of a real loss of those gradients."""
    inputs = [framework.tensor(a, requires_grad=True) for a in arrays]
    out = function(framework, *inputs)
    weights = np.random.default_rng(1).uniform(0.5, 1.5, tuple(out.shape)) + \
        1j * np.random.default_rng(2).uniform(-1, 1, tuple(out.shape))
    first = framework.autograd.grad(real_loss(framework, out, weights), inputs,
                                    create_graph=order > 1)
    if order == 1:
        return out, first
    second_weights = [np.random.default_rng(3).uniform(-1, 1, tuple(g.shape)) +
                      1j * np.random.default_rng(4).uniform(-1, 1, tuple(g.shape))
                      for g in first]
    loss = sum(real_loss(framework, g, w) for g, w in zip(first, second_weights))
    if not loss.requires_grad:  # a linear function: no second derivative
        return out, [None] * len(inputs)
    return out, framework.autograd.grad(loss, inputs, allow_unused=True)


def _array(tensor):
    return None if tensor is None else np.asarray(
        tensor.detach().resolve_conj().resolve_neg() if isinstance(tensor, torch.Tensor)
        else tensor.detach().resolve_conj())


FUNCTIONS = {
    "mul": (lambda f, a, b: a * b, 2),
    "div": (lambda f, a, b: a / b, 2),
    "add_sub": (lambda f, a, b: (a + 2 * b) - a * 1j, 2),
    "exp_log": (lambda f, a, b: (a * b).exp() + a.log() * b, 2),
    "sqrt": (lambda f, a: a.sqrt(), 1),
    "sin_cos": (lambda f, a: a.sin() * a.cos(), 1),
    "tanh_sigmoid": (lambda f, a: a.tanh() + a.sigmoid(), 1),
    "log1p_expm1": (lambda f, a: a.log1p() + a.expm1(), 1),
    "pow_tensor": (lambda f, a, b: a ** b, 2),
    "pow_scalar": (lambda f, a: a ** 3 + a ** 0.5 + 2 ** a, 1),
    "reciprocal_rsqrt": (lambda f, a: a.reciprocal() + a.rsqrt(), 1),
    "abs": (lambda f, a: a.abs() ** 2, 1),
    "abs_of_product": (lambda f, a, b: (a * b).abs(), 2),
    "angle": (lambda f, a: a.angle(), 1),
    "sgn": (lambda f, a: a.sgn(), 1),
    "real_imag": (lambda f, a: a.real * a.imag + a.imag.exp(), 1),
    "conj": (lambda f, a, b: a.conj() * b, 2),
    "view_as_real": (lambda f, a: f.view_as_real(a * a).sum(-1), 1),
    "complex_polar": (lambda f, a: f.complex(a.real * 2, a.imag.sin()) * f.polar(a.abs(),
                                                                             a.real), 1),
    "sum_prod_mean": (lambda f, a: a.sum() * a.prod() + a.mean(), 1),
    "var_norm": (lambda f, a: a.var() + a.norm(), 1),
    "matmul": (lambda f, a, b: a.reshape(3, 1) @ b.reshape(1, 3), 2),
    "vdot_dot": (lambda f, a, b: f.vdot(a, b) + f.dot(a, b), 2),
    "indexing_cat": (lambda f, a, b: f.cat([a[1:], b[f.tensor([2, 0])]]) * a[0], 2),
    "where": (lambda f, a, b: f.where(a.real > 1, a, b), 2),
    "sinh_cosh_tan": (lambda f, a: a.sinh() + a.cosh() * a.tan(), 1),
    "inverse_trigonometric": (lambda f, a: a.asin() + a.acos() * a.atan() + a.acosh(), 1),
    "cumsum_H": (lambda f, a, b: a.cumsum(0) * (a.reshape(3, 1) @ b.reshape(1, 3)).mH.sum(0),
                 2),
    "cumprod": (lambda f, a: a.cumprod(0) + f.where(f.arange(3) == 1, 0, a).cumprod(0), 1),
}


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gradients_are_torchs(name, order):
    function, arity = FUNCTIONS[name]
    arrays = [values() for _ in range(arity)]
    mine_out, mine = gradients(autojit, function, arrays, order)
    theirs_out, theirs = gradients(torch, function, arrays, order)
    np.testing.assert_allclose(_array(mine_out), _array(theirs_out), rtol=1e-10, atol=1e-12)
    for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        if b is None:
            assert a is None or not np.any(_array(a)), (name, index)
            continue
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(_array(a), _array(b), rtol=1e-9, atol=1e-10,
                                   err_msg=f"{name}: gradient {index} of order {order}")


@pytest.mark.parametrize("order", [1, 2])
def test_mixed_real_and_complex_inputs_get_real_gradients(order):
    def function(f, x, z):
        return (x * z).exp() + f.complex(x, x * x) * z.conj() + x.to(z.dtype).sin()

    arrays = [rng.uniform(0.5, 2, 3), values()]
    mine_out, mine = gradients(autojit, function, arrays, order)
    theirs_out, theirs = gradients(torch, function, arrays, order)
    assert mine[0].dtype is autojit.float64 and mine[1].dtype is autojit.complex128
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(_array(a), _array(b), rtol=1e-9, atol=1e-10)


def test_backward_of_real_losses_accumulates_torchs_grads():
    data = values((2, 2), "complex64")
    for framework in (autojit, torch):
        z = framework.tensor(data, requires_grad=True)
        w = framework.tensor(data * 0.5 + 1j, requires_grad=True)
        loss = (z.abs() ** 2).sum() + (z * w).real.sum() + (z @ w).imag.abs().sum()
        loss.backward()
        (z * w).angle().sum().backward()
        if framework is autojit:
            mine = (z.grad, w.grad)
        else:
            theirs = (z.grad, w.grad)
    for a, b in zip(mine, theirs, strict=True):
        assert a.dtype is autojit.complex64
        np.testing.assert_allclose(_array(a), _array(b), rtol=1e-5, atol=1e-6)
    # |z|^2's gradient is 2z: dL/dx + i dL/dy
    z = autojit.tensor([3 - 4j], requires_grad=True)
    (z.abs() ** 2).sum().backward()
    assert z.grad.tolist() == [6 - 8j]


def test_implicit_gradient_of_a_complex_output_is_refused():
    for framework in (autojit, torch):
        z = framework.tensor([1 + 1j], requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for real "
                                               "scalar outputs"):
            (z * z).sum().backward()
    z = autojit.tensor([1 + 1j], requires_grad=True)
    (z * z).sum().backward(autojit.tensor(1 + 0j))
    assert z.grad.tolist() == [2 - 2j]  # conj(2z)


def test_integers_cannot_require_grad_but_complex_can():
    assert autojit.ones(2, dtype=autojit.cfloat, requires_grad=True).requires_grad
    assert autojit.zeros(2, dtype=autojit.cdouble).requires_grad_().requires_grad
    with pytest.raises(RuntimeError, match="floating point and complex"):
        autojit.ones(2, dtype=autojit.int64, requires_grad=True)


def test_in_place_ops_and_writes_through_views_are_differentiated():
    data = values((2, 3))
    grads = []
    for framework in (autojit, torch):
        z = framework.tensor(data, requires_grad=True)
        y = z * 1
        y.mul_(1j)
        y.real.mul_(2)
        y.imag[0] = y.imag[1] * 3
        y[1, 1] = 5 - 1j
        loss = (y.conj() * y).real.sum() + y.angle().sum()
        grads.append(framework.autograd.grad(loss, z)[0])
    np.testing.assert_allclose(_array(grads[0]), _array(grads[1]), rtol=1e-10, atol=1e-12)


def test_forward_mode_is_torchs():
    import torch.autograd.forward_ad as torch_forward

    import autojit.autograd.forward_ad as forward

    z, t = values(), values()
    results = []
    for framework, module in ((autojit, forward), (torch, torch_forward)):
        with module.dual_level():
            dual = module.make_dual(framework.tensor(z), framework.tensor(t))
            out = (dual.exp() * dual.conj() + dual.abs() + dual.sgn() * dual.angle()).sin()
            results.append(module.unpack_dual(out).tangent)
    np.testing.assert_allclose(_array(results[0]), _array(results[1]), rtol=1e-10)


# ---- gradcheck and gradgradcheck --------------------------------------------------------------

def test_gradcheck_and_gradgradcheck_take_complex_inputs():
    z = autojit.tensor(values(), requires_grad=True)
    w = autojit.tensor(values(), requires_grad=True)
    x = autojit.tensor(rng.uniform(0.5, 2, 3), requires_grad=True)
    for name, (function, arity) in FUNCTIONS.items():
        arguments = (z, w)[:arity]
        assert gradcheck(lambda *a, function=function: function(autojit, *a), arguments), name
    for function in (lambda a, b: (a * b).exp(), lambda a, b: (a / b).abs(),
                     lambda a, b: autojit.view_as_real(a.conj() * b.sqrt())):
        assert gradgradcheck(function, (z, w))
        assert gradcheck(function, (z, w), fast_mode=True)
        assert gradgradcheck(function, (z, w), fast_mode=True)
        assert gradcheck(function, (z, w), check_forward_ad=True)
        assert gradcheck(lambda a, r, function=function: function(a, r.to(a.dtype)), (z, x))
    y = autojit.tensor(rng.uniform(0.5, 2, 3), requires_grad=True)
    assert gradcheck(lambda a, b: autojit.complex(a, b).log(), (x, y))
    assert gradgradcheck(lambda a, b: autojit.polar(a, b), (x, y))


class _MissingConjugate(autojit.autograd.Function):
    """z * w with the real-valued rule g * w, where torch's is g * conj(w)."""

    @staticmethod
    def forward(ctx, z, w):
        ctx.save_for_backward(z, w)
        return z * w

    @staticmethod
    def backward(ctx, g):
        z, w = ctx.saved_tensors
        return g * w, g * z


def test_gradcheck_catches_a_missing_conjugate():
    z = autojit.tensor(values(), requires_grad=True)
    w = autojit.tensor(values(), requires_grad=True)
    for fast_mode in (False, True):
        with pytest.raises(GradcheckError, match="Jacobian mismatch"):
            gradcheck(_MissingConjugate.apply, (z, w), fast_mode=fast_mode)
    with pytest.raises(GradcheckError, match="While considering the (real|imaginary) part of "
                                             "complex outputs only"):
        gradcheck(lambda a, b: _MissingConjugate.apply(a, b) * 1j, (z, w))
    assert not gradcheck(_MissingConjugate.apply, (z, w), raise_exception=False)
    # torch's gradcheck fails on the same rule
    torch_z = torch.tensor(values(), requires_grad=True)

    class Theirs(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    assert not torch.autograd.gradcheck(Theirs.apply, (torch_z, torch_z.detach().clone()
                                                       .requires_grad_()),
                                        raise_exception=False)


def test_gradcheck_of_a_real_input_with_complex_output_checks_both_parts():
    x = autojit.tensor(rng.uniform(0.5, 2, 3), requires_grad=True)

    class WrongImaginary(autojit.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return autojit.complex(a, a * a)

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g.real + g.imag * a  # the imaginary part's derivative is 2a

    with pytest.raises(GradcheckError, match="imaginary part of complex outputs"):
        gradcheck(WrongImaginary.apply, (x,))


# ---- optimizers and modules with complex parameters ---------------------------------------------

OPTIMIZERS = {"SGD": {"momentum": 0.9}, "Adam": {}, "AdamW": {"amsgrad": True}, "RMSprop": {},
              "Adagrad": {}, "Adamax": {}, "NAdam": {}, "RAdam": {}, "Adadelta": {},
              "ASGD": {}, "Rprop": {}}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizers_update_complex_parameters_as_torch(name):
    """torch updates a complex parameter as the real pairs of its parts (an elementwise
    update of the complex values would square them): each optimizer's steps are torch's, and
    its state stays complex."""
    start = values((2, 2))
    results = []
    for framework in (autojit, torch):
        p = framework.tensor(start, requires_grad=True)
        opt = getattr(framework.optim, name)([p], lr=0.1, **OPTIMIZERS[name])
        for _ in range(3):
            opt.zero_grad()
            loss = (p * p.conj()).real.sum() + (p * (1 + 1j)).imag.sum()
            loss.backward()
            opt.step()
        results.append((p, opt.state[p]))
    # NAdam's momentum schedule rounds as torch's float32 step count does: 1e-9 apart.
    np.testing.assert_allclose(_array(results[0][0]), _array(results[1][0]), rtol=1e-8)
    for key, theirs in results[1][1].items():
        mine = results[0][1][key]
        if isinstance(theirs, torch.Tensor) and theirs.is_complex():
            assert mine.dtype is autojit.complex128, key
            np.testing.assert_allclose(_array(mine), _array(theirs), rtol=1e-8, err_msg=key)


def test_lbfgs_with_a_complex_parameter_is_torchs():
    results = []
    for framework in (autojit, torch):
        p = framework.tensor([1 + 2j, -0.5 + 0.25j], requires_grad=True)
        q = framework.tensor([0.3, 0.2], dtype=framework.float64, requires_grad=True)
        opt = framework.optim.LBFGS([p, q], lr=0.5, max_iter=5)

        def closure(p=p, q=q, opt=opt):
            opt.zero_grad()
            shifted = p - (0.5 - 1j)
            loss = (shifted * shifted.conj()).real.sum() + ((q - 1) ** 2).sum() + \
                (p * q).real.sum()
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        results.append((p, q))
    for mine, theirs in zip(results[0], results[1], strict=True):
        np.testing.assert_allclose(_array(mine), _array(theirs), rtol=1e-9)


def test_a_module_converted_to_complex_trains():
    with pytest.warns(UserWarning, match="Complex modules are a new feature"):
        layer = autojit.nn.Linear(3, 2).to(autojit.cfloat)
    assert layer.weight.dtype is autojit.complex64 and layer.bias.dtype is autojit.complex64
    x = autojit.randn(4, 3, dtype=autojit.cfloat)
    (layer(x).abs() ** 2).sum().backward()
    assert layer.weight.grad.dtype is autojit.complex64
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
        layer.to(autojit.int64)


def test_gradcheck_names_the_part_of_a_complex_output_torch_checks_first():
    """A hook adding a real 1e-2 to a complex output's gradient spoils both parts' Jacobians;
    torch checks the imaginary part first and names it (test_gradcheck_jacobian_mismatch)."""
    def note(lib, error):
        def fn(x):
            y = x.clone() if x.is_complex() else lib.complex(x, x)
            y.register_hook(lambda g: g + 1e-2)
            return y

        notes = []
        for dtype in (lib.complex128, lib.float64):
            x = lib.ones(2, 2, dtype=dtype, requires_grad=True)
            with pytest.raises(error) as info:
                lib.autograd.gradcheck(fn, (x,), fast_mode=False)
            notes.append(str(info.value).split(",")[0])
        return notes

    ours = note(autojit, GradcheckError)
    assert ours == note(torch, RuntimeError)
    assert ours[0] == "While considering the imaginary part of complex outputs only"
