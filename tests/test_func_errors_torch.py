"""autojit.func's checks against torch.func's: the errors its transforms raise (type and message),
grad mode and forward-grad mode around them, and what they refuse inside a transformed function.
Each case runs under both libraries and compares the outcomes."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import autojit
from autojit import func as F

torch = pytest.importorskip("torch")

X = np.array([0.5, -1.25, 2.0])


def outcome(call, lib, transforms):
    """call's result as plain values, or (exception type, message)."""
    try:
        result = call(lib, transforms, lib.tensor(X))
    except Exception as error:  # noqa: BLE001 - the outcome compared is the error itself
        return type(error).__name__, str(error).replace("autojit.", "torch.")
    return _plain(result)


def _plain(value):
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if hasattr(value, "detach"):
        return ("tensor", np.round(np.asarray(value.detach().tolist(), dtype=float), 10).tolist(),
                bool(value.requires_grad))
    return value


def same(call):
    ours = outcome(call, autojit, F)
    theirs = outcome(call, torch, torch.func)
    assert ours == theirs


ERROR_CASES = {
    "argnums_list": lambda lib, T, x: T.grad(lib.mul, argnums=[0])(x.sum(), x.sum()),
    "argnums_float": lambda lib, T, x: T.jacrev(lib.sin, argnums=0.0)(x),
    "argnums_float_item": lambda lib, T, x: T.jacfwd(lib.mul, argnums=(1, 0.0))(x, x),
    "argnums_wrapped_repeat": lambda lib, T, x: T.grad(lib.mul, argnums=(0, -2))(x[0], x[1]),
    "argnums_empty": lambda lib, T, x: T.grad(lib.mul, argnums=())(x[0], x[1]),
    "argnums_range": lambda lib, T, x: T.grad(lib.mul, argnums=-3)(x[0], x[1]),
    "not_a_tensor": lambda lib, T, x: T.grad(lambda v: v * 2)(3.0),
    "grad_aux_int": lambda lib, T, x: T.grad(lambda v: (v.sum(), 1), has_aux=True)(x),
    "grad_aux_nested": lambda lib, T, x: T.grad(lambda v: (v.sum(), [v, "a"]),
                                                 has_aux=True)(x),
    "grad_aux_none": lambda lib, T, x: T.grad(lambda v: (v.sum(), None), has_aux=True)(x),
    "vjp_aux_float": lambda lib, T, x: T.vjp(lambda v: (v, 1.0), x, has_aux=True),
    "vjp_aux_not_pair": lambda lib, T, x: T.vjp(lambda v: [v, v], x, has_aux=True),
    "jvp_aux_not_pair": lambda lib, T, x: T.jvp(lambda v: (v, v, v), (x,), (x,), has_aux=True),
    "jvp_aux_str": lambda lib, T, x: T.jvp(lambda v: (v, {"a": "b"}), (x,), (x,),
                                           has_aux=True),
    "jacrev_aux_int": lambda lib, T, x: T.jacrev(lambda v: (v, [v, 1]), has_aux=True)(x),
    "jacfwd_aux_int": lambda lib, T, x: T.jacfwd(lambda v: (v, 1), has_aux=True)(x),
    "vjp_empty": lambda lib, T, x: T.vjp(lambda v: (), x),
    "vjp_none": lambda lib, T, x: T.vjp(lambda v: None, x),
    "vjp_int": lambda lib, T, x: T.vjp(lambda v: 1, x),
    "vjp_int_output": lambda lib, T, x: T.vjp(lambda v: v.long(), x),
    "jvp_none": lambda lib, T, x: T.jvp(lambda v: None, (x,), (x,)),
    "jvp_str": lambda lib, T, x: T.jvp(lambda v: "abc", (x,), (x,)),
    "jacrev_empty": lambda lib, T, x: T.jacrev(lambda a, b: ())(x, x),
    "jacfwd_empty": lambda lib, T, x: T.jacfwd(lambda a, b: ())(x, x),
    "jacrev_int": lambda lib, T, x: T.jacrev(lambda v: 1)(x),
    "jacfwd_true": lambda lib, T, x: T.jacfwd(lambda v: True)(x),
    "jvp_no_primals": lambda lib, T, x: T.jvp(lib.sin, (), ()),
    "jvp_empty_leaf": lambda lib, T, x: T.jvp(lib.sin, ((),), ((),)),
    "jvp_number_primal": lambda lib, T, x: T.jvp(lib.sin, ((x, x), 1), ((x, x), x)),
    "jvp_number_tangent": lambda lib, T, x: T.jvp(lib.sin, (x,), (1.0,)),
    "jvp_strict": lambda lib, T, x: T.jvp(lambda v: (v, v.detach() * 0), (x,), (x,),
                                          strict=True),
    "jacrev_complex_input": lambda lib, T, x: T.jacrev(lambda v: v)(x.to(lib.complex64)),
    "jacfwd_complex_input": lambda lib, T, x: T.jacfwd(lambda v: v)(x.to(lib.complex64)),
    "jacrev_complex_output": lambda lib, T, x: T.jacrev(lambda v: v * 0.5j)(x),
}


@pytest.mark.parametrize("name", ERROR_CASES)
def test_errors_as_torch(name):
    same(ERROR_CASES[name])


def test_jvp_tangents_structure_as_torch():
    # torch prints its TreeSpec in the message; the start of it is what code matches on
    for tangents in (lambda x: x, lambda x: [x], lambda x: (x, x)):
        for lib, transforms in ((autojit, F), (torch, torch.func)):
            x = lib.tensor(X)
            with pytest.raises(RuntimeError, match=r"^jvp\(f, primals, tangents\): Expected "
                               "primals and tangents to have the same python structure"):
                transforms.jvp(lib.sin, (x,), tangents(x))


def _no_grad_cases(lib, T, x):
    w = x.clone().requires_grad_()

    def inner(v):
        with lib.no_grad():
            shift = v ** 2
        return (v ** 2 - shift).sum()

    with lib.no_grad():
        outside = T.grad(lib.sin)(w[0])
        mixed = T.grad(inner)(w)
        value = T.grad_and_value(lambda v: (v ** 3).sum())(w)
        out, vjp_fn = T.vjp(lambda v: v ** 2, w)
    after = vjp_fn(lib.ones(3))
    out_fn, vjp_fn = T.vjp(lambda v: v ** 2, w)
    with lib.no_grad():
        during = vjp_fn(lib.ones(3))

    def nested(v):
        with lib.no_grad():
            shift = T.grad(lambda u: 0.25 * (u ** 4).sum())(v)
        return (v ** 3 - shift).sum()

    outer = T.grad(nested)(w)
    (second,) = lib.autograd.grad(outer.sum(), w)
    return outside, mixed, value, out, after, out_fn, during, outer, second


def test_no_grad_around_transforms_as_torch():
    """A transform called under no_grad returns results without history, but still
    differentiates its function; a vjp_fn called later with grad on builds history."""
    same(_no_grad_cases)


def _refused_inside(lib, T, x):
    def requires(v):
        v.requires_grad_()
        return v.sin().sum()

    def retains(v):
        y = v.sin()
        y.retain_grad()
        return y.sum()

    def functional(v):
        return lib.autograd.functional.vjp(lambda u: u.sin().sum(), v)[1]

    def setter(v):
        w = lib.ones(3)
        w.requires_grad = True  # the attribute is allowed, as in torch
        return (v * w).sin().sum()

    results = []
    for call in (lambda: T.vmap(requires)(x.reshape(3, 1)), lambda: T.grad(requires)(x),
                 lambda: T.jvp(requires, (x,), (x,)), lambda: T.grad(retains)(x),
                 lambda: T.grad(lambda v: functional(v).sum())(x),
                 lambda: T.vmap(functional)(x), lambda: T.grad(setter)(x).detach()):
        try:
            results.append(call())
        except RuntimeError as error:
            results.append(str(error))
    return results


def test_requires_grad_and_functional_inside_transforms_as_torch():
    same(_refused_inside)


def _saved_tensor_hooks(lib, T, x):
    def g(v):
        with lib.autograd.graph.save_on_cpu():
            return v.sin().sum()

    results = []
    for call in (lambda: T.grad(g)(x), lambda: T.vjp(g, x)[0], lambda: T.jacrev(g)(x),
                 lambda: T.jvp(g, (x,), (x,))):
        try:
            results.append(call())
        except RuntimeError as error:
            results.append(str(error))
    with lib.autograd.graph.save_on_cpu():
        try:
            results.append(T.grad(lambda v: v.sin().sum())(x))
        except RuntimeError as error:
            results.append(str(error))
    return results


def test_saved_tensor_hooks_refused_as_torch():
    same(_saved_tensor_hooks)


def _forward_grad_switch(lib, T, x):
    fw = lib.autograd.forward_ad

    def f(v):
        with fw._set_fwd_grad_enabled(False):
            shift = v ** 2
        return v ** 2 - shift

    with fw._set_fwd_grad_enabled(False):
        outside = T.jvp(lib.sin, (x,), (lib.ones(3),))[1]
        enabled = fw._is_fwd_grad_enabled()
    inside = T.jvp(f, (x,), (lib.ones(3),))[1]
    nested = T.jvp(lambda v: T.jvp(f, (v,), (lib.ones(3),))[1], (x,), (lib.ones(3),))[1]
    return outside, enabled, fw._is_fwd_grad_enabled(), inside, nested


def test_forward_grad_switch_as_torch():
    same(_forward_grad_switch)


def _jacrev_one_row_at_a_time(lib, T, x):
    class DataDependentBackward(lib.autograd.Function):
        @staticmethod
        def forward(v):
            return v * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            return grad * 2 if grad.sum().item() != 0 else grad

    return T.jacrev(DataDependentBackward.apply, chunk_size=1)(x)


def test_jacrev_chunk_size_one_does_not_vmap_as_torch():
    same(_jacrev_one_row_at_a_time)


def _function_vmap_cases(lib, T, x):
    """autograd.Function inside vmap: its vmap staticmethod, or torch's refusals. autojit's side
    calls the forward as function.py does for a Function with setup_context."""
    from autojit.autograd.function_vmap import forward_under_vmap

    def define(rule=None, generate=False):
        class Scaled(lib.autograd.Function):
            generate_vmap_rule = generate

            @staticmethod
            def forward(v, scale):
                return v * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

        if rule is not None:
            Scaled.vmap = staticmethod(rule)
        return Scaled

    class KeywordOnly(lib.autograd.Function):
        @staticmethod
        def forward(v, *, scale):
            return v * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def vmap(info, in_dims, v, *, scale):
            return v * scale, 0

    def apply(cls, *args, **kwargs):
        if lib is torch:
            return cls.apply(*args, **kwargs)
        bound = inspect.signature(cls.forward).bind(*args, **kwargs)
        return forward_under_vmap(cls, bound.args, bound.kwargs)

    seen = []

    def rule(info, in_dims, v, scale):
        seen.append((info.batch_size, info.randomness, in_dims))
        return v.movedim(0, 1) * scale * 10, 1

    batch = x.reshape(3, 1) * lib.ones(3, 2)
    calls = {
        "rule": lambda: T.vmap(lambda v: apply(define(rule), v, 2.0),
                               randomness="same")(batch),
        "nested_list": lambda: T.vmap(lambda v: apply(define(
            lambda info, in_dims, a, b: (a * b[0], in_dims[0])), v, [v, v]))(batch),
        "unbatched_skips": lambda: T.vmap(lambda v: v * apply(define(rule), lib.ones(()),
                                                                3.0))(batch),
        "generated": lambda: T.vmap(lambda v: apply(define(generate=True), v, 3.0))(batch),
        "none": lambda: T.vmap(lambda v: apply(define(), v, 3.0))(batch),
        "both": lambda: T.vmap(lambda v: apply(define(rule, generate=True), v, 3.0))(batch),
        "one_return": lambda: T.vmap(lambda v: apply(define(
            lambda info, in_dims, v, s: v), v, 3.0))(batch),
        "three_returns": lambda: T.vmap(lambda v: apply(define(
            lambda info, in_dims, v, s: (v, 0, 0)), v, 3.0))(batch),
        "bad_out_dims": lambda: T.vmap(lambda v: apply(define(
            lambda info, in_dims, v, s: (v, (None,))), v, 3.0))(batch),
        "keyword_tensor": lambda: T.vmap(lambda v: apply(KeywordOnly, v, scale=v))(batch),
    }
    results = {}
    for name, call in calls.items():
        try:
            results[name] = call()
        except (RuntimeError, NotImplementedError) as error:
            results[name] = type(error).__name__, str(error).split(". ")[0]
    return results, seen


def test_function_vmap_staticmethod_as_torch():
    same(_function_vmap_cases)
