"""autojit.func against torch.func where torch's functorch/test_eager_transforms.py found them
apart: in-place writes into captured tensors inside grad, vjp and jvp (refused), in-place
layout changes of batched tensors (per-sample gradients through `squeeze_`), the in_dims a
custom Function's vmap staticmethod receives, what functionalize refuses, how tensors print
inside transforms, and torch._C._functorch.dlevel. Each case runs under both libraries and
compares the outcomes (values, or error types and messages)."""

from __future__ import annotations

import re
from functools import partial

import numpy as np
import pytest

import autojit
from autojit.drop_in import _C_functorch

torch = pytest.importorskip("torch")


def _plain(value):
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_plain(item) for item in value]
    if hasattr(value, "detach"):
        return ("tensor", tuple(value.shape),
                np.round(np.asarray(value.detach().tolist(), dtype=float), 6).tolist())
    return value


def outcome(case, lib):
    """case's result as plain values, or (exception type, message); torch names an operator
    with its overload (`aten::add_.Tensor`), autojit without."""
    try:
        result = case(lib, lib.func)
    except Exception as error:  # noqa: BLE001 - the outcome compared is the error itself
        message = re.sub(r"\(aten::(\w+)(\.\w+)?\)", r"(aten::\1)", str(error))
        return type(error).__name__, message.replace("autojit.", "torch.")
    return _plain(result)


def same(case):
    assert outcome(case, autojit) == outcome(case, torch)


# ---- in-place writes into captured tensors -------------------------------------------------

def _add_const(lib, T):
    captured = lib.ones(3)
    return T.grad(lambda x: (captured.add_(1.0), (x * 2).sum())[1])(lib.tensor([1.0, 2, 3]))


def _copy_wrapped(lib, T):  # the test suite's test_inplace_on_captures
    captured = lib.ones(3)

    def foo(x):
        captured.copy_(x)
        return (x * captured).sum()

    return T.grad(foo)(lib.tensor([1.0, 2, 3]))


def _view_of_captured(lib, T):
    captured = lib.ones(3)
    return T.grad(lambda x: (captured.view(3).mul_(2), x.sum())[1])(lib.tensor([1.0, 2, 3]))


def _under_no_grad(lib, T):
    captured = lib.ones(3)

    def foo(x):
        with lib.no_grad():
            captured.zero_()
        return x.sum()

    return T.grad(foo)(lib.tensor([1.0, 2, 3]))


def _made_inside(lib, T):
    def foo(x):
        y = lib.zeros(3)
        y.copy_(x)
        z = lib.empty(3)
        z.fill_(1)
        w = lib.arange(3.0)
        w.add_(1)
        v = x.new_zeros(3)
        v.add_(x)
        s = lib.stack([x, x])
        s[0] = 1
        s[1].mul_(2)
        e = lib.ones_like(x)
        e.unsqueeze_(0)
        return (y + z + w + v + s[1] + e[0]).sum()

    return T.grad(foo)(lib.tensor([1.0, 2, 3]))


def _input_detached(lib, T):
    return T.grad(lambda x: (x.detach().mul_(1), x.sum())[1])(lib.tensor([1.0, 2, 3]))


def _nondifferentiated_argument(lib, T):
    buffer = lib.zeros(3)
    grads = T.grad(lambda x, b: (b.add_(1), (x * b).sum())[1])(lib.tensor([1.0, 2, 3]), buffer)
    return grads, buffer


def _keyword_argument(lib, T):
    buffer = lib.zeros(3)
    return T.grad(lambda x, b: (b.add_(1), x.sum())[1])(lib.tensor([1.0, 2, 3]), b=buffer)


def _inner_writes_outer(lib, T):
    def foo(x):
        y = x * 2
        T.grad(lambda z: (y.add_(1) * z).sum())(x)
        return y.sum()

    return T.grad(foo)(lib.tensor([1.0, 2, 3]))


def _inner_writes_outer_input(lib, T):
    return T.grad(lambda a: T.grad(lambda b: (a.mul_(1) * b).sum())(a[0]))(
        lib.tensor([1.0, 2, 3]))


def _outer_writes_escaped(lib, T):
    def foo(x):
        escaped = []

        def inner(z):
            w = z * 2
            escaped.append(w)
            return w.sum()

        T.grad(inner)(x)
        escaped[0].add_(1)
        return (x * escaped[0]).sum()

    return T.grad(foo)(lib.tensor([1.0, 2, 3]))


def _sibling_writes_escaped(lib, T):
    def foo(x):
        escaped = []

        def inner(z):
            w = z * 2
            escaped.append(w)
            return w.sum()

        T.grad(inner)(x)
        T.grad(lambda z: (escaped[0].add_(1) * z).sum())(x)
        return x.sum()

    return T.grad(foo)(lib.tensor([1.0, 2, 3]))


def _jvp_captured(lib, T):
    captured = lib.ones(3)
    x = lib.tensor([1.0, 2, 3])
    return T.jvp(lambda v: (captured.copy_(v), v * captured)[1], (x,), (x,))


def _jvp_input(lib, T):
    x, tangent = lib.tensor([1.0, 2, 3]), lib.ones(3)
    result = T.jvp(lambda v: v.mul_(2), (x,), (tangent,))
    return result, x, tangent


def _jvp_of_jvp_input(lib, T):
    def outer(a):
        return T.jvp(lambda b: b.mul_(2), (a * 1,), (lib.ones(3),))[1]

    return T.jvp(outer, (lib.tensor([1.0, 2, 3]),), (lib.ones(3),))


def _vjp_captured(lib, T):
    captured = lib.ones(3)
    return T.vjp(lambda v: (captured.add_(v), v * 2)[1], lib.tensor([1.0, 2, 3]))[0]


def _jacrev_captured(lib, T):
    captured = lib.ones(3)
    return T.jacrev(lambda x: captured.add_(x))(lib.tensor([1.0, 2, 3]))


def _jacfwd_captured(lib, T):
    captured = lib.ones(3)
    return T.jacfwd(lambda x: captured.add_(x))(lib.tensor([1.0, 2, 3]))


def _jacrev_other_argument(lib, T):  # the suite's test_inplace: every argument is an input
    def g(x, y, z):
        x[:2] = y
        return lib.vstack([(x**2).sum(), (z**3).sum()])

    x, y, z = lib.tensor([1.0, 2, 3]), lib.tensor([0.5, 0.25]), lib.tensor([2.0])
    return (T.jacrev(lambda a, b: b.copy_(a), argnums=0)(lib.ones(2), lib.zeros(2)),
            T.jacrev(g, argnums=(1, 2))(x, y, z))


def _jacfwd_other_argument(lib, T):
    def g(x, y, z):
        x[:2] = y
        return lib.vstack([(x**2).sum(), (z**3).sum()])

    x, y, z = lib.tensor([1.0, 2, 3]), lib.tensor([0.5, 0.25]), lib.tensor([2.0])
    return (T.jacfwd(lambda a, b: b.copy_(a), argnums=0)(lib.ones(2), lib.zeros(2)),
            T.jacfwd(g, argnums=(1, 2))(x, y, z))


def _vmap_inside_grad_captured(lib, T):
    captured = lib.ones(3)
    return T.grad(lambda x: T.vmap(lambda r: r.add_(1))(captured.unsqueeze(0)).sum() + x.sum())(
        lib.tensor([1.0, 2, 3]))


def _vmap_inside_grad_made(lib, T):
    captured = lib.ones(3)
    return T.grad(lambda x: T.vmap(lambda r: r.add_(x))(captured.clone().unsqueeze(0)).sum())(
        lib.tensor([1.0, 2, 3]))


def _grad_inside_vmap_made(lib, T):
    def foo(x):
        y = x * 2
        y.add_(1)
        with lib.no_grad():
            x.view(-1).add_(1)
        return y.sum()

    return T.vmap(T.grad(foo))(lib.ones(2, 3))


def _vmap_alone_captured(lib, T):  # vmap is no grad transform: a constant write is allowed
    captured = lib.ones(3)
    result = T.vmap(lambda x: (captured.add_(1), x * 1)[1])(lib.ones(2, 3))
    return result, captured


def _batch_norm(lib, T):
    lib.manual_seed(0)
    norm = lib.nn.BatchNorm1d(3)
    return T.grad(lambda x: norm(x).sum())(lib.ones(4, 3))


def _layout_change(lib, T):
    captured = lib.ones(3)
    return T.grad(lambda x: (captured.unsqueeze_(0), x.sum())[1])(lib.tensor([1.0, 2, 3]))


def _out_argument(lib, T):  # torch checks in-place ops, not out= forms
    captured, other = lib.ones(3), lib.full((3,), 2.0)
    return T.grad(lambda x: (lib.add(other, 1, out=captured), x.sum())[1])(
        lib.tensor([1.0, 2, 3])), captured


# Each pair: a write torch allows beside one it refuses, so that the refusal is neither too
# narrow nor too wide.
CAPTURE_PAIRS = [
    (_made_inside, _add_const), (_input_detached, _view_of_captured),
    (_nondifferentiated_argument, _copy_wrapped), (_keyword_argument, _under_no_grad),
    (_outer_writes_escaped, _sibling_writes_escaped), (_jvp_input, _jvp_captured),
    (_jvp_of_jvp_input, _inner_writes_outer_input), (_vmap_inside_grad_made,
                                                      _vmap_inside_grad_captured),
    (_grad_inside_vmap_made, _batch_norm), (_vmap_alone_captured, _inner_writes_outer),
    (_out_argument, _layout_change), (_out_argument, _vjp_captured),
    (_jacrev_other_argument, _jacrev_captured), (_jacfwd_other_argument, _jacfwd_captured),
]


@pytest.mark.parametrize("allowed, refused", CAPTURE_PAIRS,
                         ids=[f"{a.__name__[1:]}-{r.__name__[1:]}" for a, r in CAPTURE_PAIRS])
def test_inplace_on_captured(allowed, refused):
    same(allowed)
    same(refused)
    assert "mutate a captured Tensor" in outcome(refused, autojit)[1]


def test_setitem_on_captured_refused():
    """torch names the write copy_ (or index_put_), autojit setitem: the refusal is the same."""
    for lib in (autojit, torch):
        captured = lib.ones(3)

        def foo(x, captured=captured, lib=lib):
            captured[0] = 5.0
            return x.sum()

        with pytest.raises(RuntimeError, match="that would mutate a captured Tensor"):
            lib.func.grad(foo)(lib.tensor([1.0, 2, 3]))


# ---- in-place layout changes of batched tensors ----------------------------------------------

def test_per_sample_grads_inplace_view():
    def compute_loss(lib, weight, x, t):
        x = x.mm(weight)
        y = x.squeeze_(0)
        return (y - t).sum()

    rng = np.random.default_rng(0)
    arrays = (rng.standard_normal((16, 2)), rng.standard_normal((8, 1, 16)),
              rng.standard_normal((8, 2)))
    results = []
    for lib in (autojit, torch):
        weight, x, t = (lib.tensor(array, dtype=lib.float32) for array in arrays)
        loss = partial(compute_loss, lib)
        results.append(lib.func.vmap(partial(lib.func.grad(loss), weight))(x, t).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


LAYOUT_CASES = {
    "clone_unsqueeze_": lambda lib, T: T.vmap(lambda r: r.clone().unsqueeze_(0))(
        lib.arange(24.0).reshape(2, 3, 4)),
    "input_t_": lambda lib, T: T.vmap(lambda r: (r.t_(), r)[1])(
        lib.arange(24.0).reshape(2, 3, 4)),
    "squeeze_then_mul": lambda lib, T: T.vmap(lambda r: r[None].squeeze_(0) * 2)(
        lib.arange(24.0).reshape(2, 3, 4)),
    "transpose_in_dims_1": lambda lib, T: T.vmap(lambda r: r.clone().transpose_(0, 1),
                                                 in_dims=1)(lib.arange(24.0).reshape(2, 3, 4)),
    "unsqueeze_then_mul_": lambda lib, T: T.vmap(
        lambda r: (lambda y: (y.unsqueeze_(1), y.mul_(2))[1])(r.clone()))(
        lib.arange(24.0).reshape(2, 3, 4)),
    "grad_through_t_": lambda lib, T: T.vmap(T.grad(
        lambda w: ((lambda y: (y.t_(), y)[1])(w * 1) * lib.arange(3.0)).sum()))(
        lib.ones(5, 3, 3)),
}


@pytest.mark.parametrize("name", LAYOUT_CASES)
def test_layout_inplace_batched(name):
    same(LAYOUT_CASES[name])


# ---- a custom Function's vmap staticmethod: the in_dims torch gives it ----------------------

def _function_class(lib, seen: list):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(a, b):
            return a * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def vmap(info, in_dims, a, b):
            seen.append((in_dims, tuple(a.shape),
                         tuple(b.shape) if hasattr(b, "shape") else b))
            return a * 2, in_dims[0]

    return Twice


FUNCTION_VMAP_CASES = {
    "negative_in_dims": lambda lib, T, F: T.vmap(F.apply, in_dims=-1)(
        lib.ones(2, 3), lib.ones(2, 3)),
    "in_dims_1_0": lambda lib, T, F: T.vmap(F.apply, in_dims=(1, 0))(
        lib.ones(2, 3), lib.ones(3, 2)),
    "in_dims_1_none": lambda lib, T, F: T.vmap(F.apply, in_dims=(1, None))(lib.ones(2, 3), 5),
    "derived_argument": lambda lib, T, F: T.vmap(lambda a: F.apply(a * 1, a), in_dims=1)(
        lib.ones(2, 3)),
    "nested": lambda lib, T, F: T.vmap(T.vmap(F.apply, in_dims=(0, 1)), in_dims=(1, 0))(
        lib.ones(4, 2, 3), lib.ones(2, 3, 4)),
}


@pytest.mark.parametrize("name", FUNCTION_VMAP_CASES)
def test_function_vmap_in_dims(name):
    seen = {}
    for lib in (autojit, torch):
        calls = []
        result = FUNCTION_VMAP_CASES[name](lib, lib.func, _function_class(lib, calls))
        seen[lib.__name__] = (calls, tuple(result.shape))
    assert seen["autojit"] == seen["torch"]


# ---- functionalize ----------------------------------------------------------------------------

def _no_setup_context(lib):
    class MySin(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, gy):
            (x,) = ctx.saved_tensors
            return gy * x.cos()

    return MySin


FUNCTIONALIZE_CASES = {
    "function_without_setup_context": lambda lib, T: T.functionalize(
        _no_setup_context(lib).apply)(lib.ones(3)),
    "requires_grad_": lambda lib, T: T.functionalize(lambda a: a.clone().requires_grad_())(
        lib.ones(3)),
    "autograd_functional": lambda lib, T: T.functionalize(
        lambda a: lib.autograd.functional.jacobian(lib.sin, a))(lib.ones(3)),
}


@pytest.mark.parametrize("name", FUNCTIONALIZE_CASES)
def test_functionalize_refuses(name):
    """functionalize counts as a transform: its function may not use what every torch.func
    transform refuses, while it runs as it is otherwise."""
    same(lambda lib, T: T.functionalize(lambda a: a.clone().add_(1) * 2)(lib.ones(3)))
    same(FUNCTIONALIZE_CASES[name])


# ---- printing and dlevel ---------------------------------------------------------------------

def _printed(lib, T, dlevel):
    """What a function under several transforms prints, and the levels dlevel reports."""
    captured = lib.tensor([1.0, 2.0])
    lines = []

    def show(x):
        y = x.sin()
        lines.extend([repr(x), repr(y), repr(lib.zeros(2)), repr(captured.view(2)),
                      repr(captured), (dlevel(x), dlevel(y), dlevel(captured))])
        return y.sum()

    T.grad(show)(lib.tensor([0.5, 1.0]))
    T.jvp(show, (lib.tensor([0.5, 1.0]),), (lib.ones(2),))
    T.grad(T.grad(lambda x: show(x.reshape(1).expand(2))))(lib.tensor(0.5))
    T.vmap(lambda x: (lines.append(repr(x)), lines.append(repr(x * 2)), x)[2], in_dims=1)(
        lib.ones(2, 3))
    T.vmap(T.vmap(lambda x: (lines.append(repr(x)), x)[1]), in_dims=1)(lib.ones(2, 3, 2))
    T.grad(lambda a: T.vmap(lambda x: (lines.append(repr(x)), x.sum())[1])(a).sum())(
        lib.ones(2, 2))
    T.vmap(T.grad(lambda x: (lines.append(repr(x)), x.sum())[1]))(lib.ones(2))
    T.grad(lambda x: (lines.append(repr(x)), x.sum())[1])(
        lib.ones(2, dtype=lib.float64, requires_grad=True))
    return [line.replace("autojit.", "torch.") if isinstance(line, str) else line
            for line in lines]


def test_print_inside_transforms():
    ours = _printed(autojit, autojit.func, _C_functorch.dlevel)
    theirs = _printed(torch, torch.func, torch._C._functorch.dlevel)
    assert ours == theirs


def test_escaped_wrappers():
    def run(lib, dlevel):
        x = lib.tensor(0.25)
        escaped = []
        lib.func.grad(lambda v: (escaped.append(v.sin()), escaped[-1])[1])(x)
        computed = escaped[0].sum()
        return dlevel(escaped[0]), dlevel(computed), dlevel(x), computed.item()

    assert run(autojit, _C_functorch.dlevel) == run(torch, torch._C._functorch.dlevel)
