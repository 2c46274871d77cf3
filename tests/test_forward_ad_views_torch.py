"""Forward-mode tangents through views and in-place writes against torch's: a view's tangent
is the same view of its base's tangent, so writes through views reach the base's tangent,
writes into a base reach its views', and a dual value written into a view of a tensor without
a tangent gives that tensor one (autograd/forward_views.py)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import autojit
import autojit.autograd.forward_ad as fwAD
from autojit import func as afunc

torch = pytest.importorskip("torch")
TAD = torch.autograd.forward_ad

RNG = np.random.default_rng(7)
A = RNG.normal(size=(4, 6))
TA = RNG.normal(size=(4, 6))
B = RNG.normal(size=(3, 2))
TB = RNG.normal(size=(3, 2))

LIBS = {"autojit": (autojit, fwAD, afunc), "torch": (torch, TAD, torch.func)}


def _np(x):
    return None if x is None else np.asarray(x.detach()).copy()


def both(scenario):
    """Run `scenario(lib, ad)` (which returns tensors, or None where a tangent is None) with
    each library and compare the results."""
    results = {}
    for name, (lib, ad, _) in LIBS.items():
        with ad.dual_level():
            results[name] = [_np(x) for x in scenario(lib, ad)]
    for ours, theirs in zip(results["autojit"], results["torch"], strict=True):
        if theirs is None:
            assert ours is None
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def tangent(ad, x):
    return ad.unpack_dual(x).tangent


def dual(lib, ad, primal, tangent_):
    return ad.make_dual(lib.tensor(primal), lib.tensor(tangent_))


@pytest.mark.parametrize("make_view", [
    lambda x: x[1:3, ::2],
    lambda x: x.t()[2:],
    lambda x: x.narrow(1, 1, 3).unsqueeze(0),
    lambda x: x.view(2, 12)[1],
    lambda x: x.diagonal(),
])
def test_write_through_view_reaches_base(make_view):
    def scenario(lib, ad):
        base = dual(lib, ad, A, TA)
        view = make_view(base)
        view.mul_(view.detach() + 1.5)
        other = make_view(base)  # made after the write
        return tangent(ad, base), tangent(ad, view), tangent(ad, other), ad.unpack_dual(base)[0]

    both(scenario)


def test_write_into_base_reaches_views_made_before():
    def scenario(lib, ad):
        base = dual(lib, ad, A, TA)
        row, cols = base[1], base[:, 2:4]
        base.mul_(lib.tensor(A) ** 2)
        base[0].copy_(dual(lib, ad, A[3], TA[2] * 3))
        return tangent(ad, row), tangent(ad, cols), tangent(ad, base[0]), tangent(ad, base)

    both(scenario)


def test_views_of_views():
    def scenario(lib, ad):
        base = dual(lib, ad, A, TA)
        outer = base[1:]
        inner = outer[:, ::3]
        inner.copy_(dual(lib, ad, B, TB))
        sibling = outer[:, 1::3]
        sibling.add_(inner * 2)
        return tangent(ad, base), tangent(ad, outer), tangent(ad, inner), tangent(ad, sibling)

    both(scenario)


def test_dual_written_into_base_without_tangent():
    def scenario(lib, ad):
        base = lib.tensor(A).clone()
        earlier = base[0]  # a view made before base has a tangent
        view = base[1:, 2:4].t()
        view.copy_(dual(lib, ad, B.T, TB.T))
        sibling = base[:, 0]
        return tangent(ad, base), tangent(ad, view), tangent(ad, earlier), tangent(ad, sibling)

    both(scenario)


def test_plain_value_written_into_view_of_dual():
    def scenario(lib, ad):
        base = dual(lib, ad, A, TA)
        base[1:3, 1:3] = lib.ones(2, 2)
        view = base[:, 2]
        view.copy_(lib.zeros(4))
        return tangent(ad, base), tangent(ad, view)

    both(scenario)


def test_make_dual_tangent_written_in_place():
    # torch writes an in-place op's tangent into the tangent make_dual was given
    def scenario(lib, ad):
        given = lib.tensor(TA)
        base = ad.make_dual(lib.tensor(A), given)
        base[1].mul_(3)
        base.add_(base.detach())
        return given, tangent(ad, base)

    both(scenario)


def test_view_and_inplace_make_a_view_of_the_tangent():
    for lib, ad, _ in LIBS.values():
        with ad.dual_level():
            base = lib.zeros(2, 2, dtype=lib.float64)
            view = base.transpose(0, 1)
            view.add_(ad.make_dual(lib.tensor(B[:2]), lib.tensor(TB[:2])))
            base_tangent, view_tangent = tangent(ad, base), tangent(ad, view)
            assert view_tangent._base is base_tangent
            view.mul_(2)
            assert tangent(ad, base) is base_tangent
            np.testing.assert_allclose(_np(base_tangent), 2 * TB[:2].T)


def test_unpacked_primal_and_detached_alias_have_no_tangent():
    def scenario(lib, ad):
        plain = lib.tensor(A)
        base = ad.make_dual(plain, lib.tensor(TA))
        primal, _ = ad.unpack_dual(base)
        primal[0].mul_(2)  # the primal's storage, not the tangent
        other = lib.tensor(A).clone()
        other.detach()[1].copy_(base[1])  # a detached alias is not differentiable
        return tangent(ad, base), tangent(ad, plain), tangent(ad, primal), tangent(ad, other)

    both(scenario)


def test_other_tensors_tangents_are_not_written():
    # an op may hand an input's tangent to its output: a later in-place write to the input
    # must not change the output's
    def scenario(lib, ad):
        base = dual(lib, ad, A, TA)
        shifted = base + 2
        broadcast = base[0] + lib.zeros(4, 6)
        base.mul_(3)
        return tangent(ad, shifted), tangent(ad, broadcast), tangent(ad, base)

    both(scenario)


@pytest.mark.parametrize("method", ["t_", "unsqueeze_"])
def test_layout_changed_in_place(method):
    def scenario(lib, ad):
        base = dual(lib, ad, A, TA)
        view = base[1:3]
        getattr(view, method)(*(() if method == "t_" else (0,)))
        view.mul_(2)
        owned = dual(lib, ad, B, TB) * 1
        getattr(owned, method)(*(() if method == "t_" else (1,)))
        return tangent(ad, base), tangent(ad, view), tangent(ad, owned)

    both(scenario)


def _jvp_function(x, y):
    x = x.clone()
    row = x[0]
    x[1:, ::2].copy_(y.t())
    row.mul_(y[0, 0])
    return x, row, x[:, 1]


def test_jvp_through_views():
    primals = (A[:3, :4], RNG.normal(size=(2, 2)))
    tangents = (TA[:3, :4], RNG.normal(size=(2, 2)))
    results = {}
    for name, (lib, _, fn) in LIBS.items():
        out, out_tangent = fn.jvp(_jvp_function, tuple(map(lib.tensor, primals)),
                                  tuple(map(lib.tensor, tangents)))
        results[name] = [_np(x) for x in (*out, *out_tangent)]
    for ours, theirs in zip(results["autojit"], results["torch"], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def _view_then_write(x, y):
    view = x[:, ::2]
    view.copy_(y)
    return view, x


def _base_then_views(x, y):
    view = x[0, ::2]
    x.copy_(y)
    return x, view


def _plain_base(x, y):
    x = x.clone()
    view = x[0]
    view.copy_(y)
    return view, x


@pytest.mark.parametrize("function, shapes, right_only", [
    (_view_then_write, ((2, 6), (2, 3)), False),
    (_base_then_views, ((2, 6), (2, 6)), False),
    (_plain_base, ((2, 6), (6,)), True),
])
def test_vmap_of_jvp(function, shapes, right_only):
    batch = 3
    x = RNG.normal(size=(batch, *shapes[0]))
    xt = RNG.normal(size=(batch, *shapes[0]))
    y = RNG.normal(size=(batch, *shapes[1]))
    yt = RNG.normal(size=(batch, *shapes[1]))
    results = {}
    for name, (lib, _, fn) in LIBS.items():
        if right_only:
            def push(x, y, yt, fn=fn):
                return fn.jvp(functools.partial(function, x), (y,), (yt,))

            args = (x, y, yt)
        else:
            def push(x, xt, y, yt, fn=fn):
                return fn.jvp(function, (x, y), (xt, yt))

            args = (x, xt, y, yt)
        out, out_tangent = fn.vmap(push)(*(lib.tensor(a) for a in args))
        results[name] = [_np(t) for t in (*out, *out_tangent)]
    for ours, theirs in zip(results["autojit"], results["torch"], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def _sibling_then_view(x):
    y = x.clone()
    row = y[1]
    y[:, ::2].mul_(x[:, 1:2].sin())
    y.t()[0].copy_(x[2, :3].exp())
    row.mul_(2.0)
    return y * row, row


def test_jvp_of_vmap():
    # the dual level outside vmap: the tangents are on the physical (batched) tensors
    x, xt = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 3, 4))
    results = {}
    for name, (lib, _, fn) in LIBS.items():
        out, out_tangent = fn.jvp(fn.vmap(_sibling_then_view), (lib.tensor(x),),
                                  (lib.tensor(xt),))
        jacobian = fn.jacfwd(_sibling_then_view)(lib.tensor(x[0]))
        results[name] = [_np(t) for t in (*out, *out_tangent, *jacobian)]
    for ours, theirs in zip(results["autojit"], results["torch"], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
