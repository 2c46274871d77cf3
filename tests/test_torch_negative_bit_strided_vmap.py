"""The negative bit and as_strided under vmap, against torch (from torch's forward-AD metadata
tests): `_neg_view`, `is_neg`, `resolve_neg`, the bit of `z.conj().imag` and of views, the
refusal of `numpy()`, make_dual's copy of a tangent whose bit differs from its primal's; and
torch's checks of an as_strided call on a batched tensor (the memory each example may reach,
torch's first vmap's batch dims outermost, a batched tangent of forward AD) with the values
each example reads. Each program runs under torch and under autojit."""

from __future__ import annotations

import itertools

import pytest

from autojit.drop_in import _vmap_internals as autojit_vmap_internals

torch = pytest.importorskip("torch")
import torch._vmap_internals as torch_vmap_internals  # noqa: E402
from torch_outcomes import both, error_of  # noqa: E402


def _legacy_vmap(t):
    return (torch_vmap_internals if t is torch else autojit_vmap_internals)._vmap


# ---- the negative bit -----------------------------------------------------------------------

def test_neg_view_sets_the_bit_that_views_keep_and_results_drop():
    def program(t):
        x = t.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
        n = x._neg_view()
        bits = (n.is_neg(), t.is_neg(n), n._neg_view().is_neg(), x.is_neg(),
                n[1:].is_neg(), n.t().is_neg(), n.view(4).is_neg(), n.detach().is_neg(),
                n.data.is_neg(), [row.is_neg() for row in n.unbind()],
                n.expand(2, 2, 2).is_neg(), n.contiguous().is_neg(), n.float().is_neg(),
                n.clone().is_neg(), (n + 0).is_neg(), n.double().is_neg(),
                t.zeros_like(n).is_neg(), n.t().reshape(4).is_neg())
        resolved = n.resolve_neg()
        (n * t.tensor([[3.0, 4.0], [5.0, 6.0]])).sum().backward()
        return (n.tolist(), bits, resolved.tolist(), resolved.is_neg(),
                type(resolved.grad_fn).__name__, x.resolve_neg() is x,
                t.resolve_neg(n).is_neg(), x.grad.tolist())

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_imag_of_a_conjugated_tensor_has_the_negative_bit():
    def program(t):
        z = t.tensor([1 + 2j, 3 - 1j])
        c = z.conj()
        n = z._neg_view()
        return (c.imag.tolist(), c.imag.is_neg(), c.real.is_neg(), z.imag.is_neg(),
                t.imag(c).is_neg(), c.imag[1:].is_neg(), n.is_conj(), c._neg_view().is_conj(),
                n.conj().is_neg(), n.conj().is_conj(), n.conj().imag.is_neg(),
                n.conj().imag.tolist(), t.view_as_real(n).is_neg(), t.view_as_real(n).tolist())

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_the_negative_bit_is_refused_where_torch_refuses_it():
    def program(t):
        return (error_of(lambda: t.tensor([1.0, 2.0])._neg_view().numpy()),
                error_of(lambda: t.is_neg(3)),
                t.tensor([1.0, 2.0])._neg_view().resolve_neg().numpy().tolist(),
                t.tensor([1, 2], dtype=t.uint8)._neg_view().tolist(),
                t.tensor([1.0, 2.0])._neg_view()[0].item())

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_data_assignment_brings_the_bits_along():
    def program(t):
        p = t.tensor([1.0, 2.0])
        p.data = t.tensor([3.0, 4.0])._neg_view()
        q = t.tensor([1j])
        q.data = t.tensor([2j]).conj()
        return p.is_neg(), p.tolist(), q.is_conj(), q.data.is_conj()

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


KEYS = {"neither": lambda x: x, "conj": lambda x: x.conj(), "neg": lambda x: x._neg_view()}


@pytest.mark.parametrize("primal_key,tangent_key", list(itertools.product(KEYS, KEYS)))
def test_make_dual_copies_a_tangent_whose_bits_differ_from_its_primal(primal_key, tangent_key):
    def program(t):
        t.manual_seed(0)
        x = KEYS[primal_key](t.randn(2, 3, dtype=t.cdouble))
        v = KEYS[tangent_key](t.arange(6.0, dtype=t.float64).reshape(2, 3) * (1 + 2j))
        forward_ad = t.autograd.forward_ad
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(x, v)
            tangent = forward_ad.unpack_dual(dual).tangent
            real_tangent = forward_ad.unpack_dual(t.real(dual)).tangent
            imag_tangent = forward_ad.unpack_dual(t.imag(dual)).tangent
            return (tangent is v, tangent.is_conj(), tangent.is_neg(),
                    tangent.resolve_conj().resolve_neg().tolist(),
                    real_tangent.resolve_neg().tolist(), imag_tangent.resolve_neg().tolist())

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_make_dual_of_a_primal_with_the_negative_bit():
    def program(t):
        a = t.tensor([[1 + 2j, 3 + 4j], [5 + 6j, 7 + 8j]]).conj().imag
        b = t.tensor([[1 + 1j, 2 + 2j], [3 + 3j, 4 + 4j]]).imag
        forward_ad = t.autograd.forward_ad
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(a, b)
            tangent = forward_ad.unpack_dual(dual).tangent
            part = forward_ad.unpack_dual(dual[1:]).tangent
            return (t.is_neg(a), len(a.untyped_storage()) == len(b.untyped_storage()),
                    tangent is b, tangent.is_neg(), tangent.tolist(), part.tolist(),
                    tangent.stride(), tangent.storage_offset(), len(tangent.untyped_storage()))

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_make_dual_lays_a_tangent_out_as_the_real_parts_of_a_complex_tensor():
    # the primal's storage holds complex numbers: its size, offset and strides in the primal's
    # elements (twice as many reals)
    def program(t):
        z = t.tensor([[1 + 2j, 3 + 4j, 5 + 6j], [7 + 8j, 9 + 1j, 2 + 3j]])
        found = []
        for primal in (z.imag, z.real.t(), t.view_as_real(z)[1:]):
            tangent = t.arange(float(primal.numel())).reshape(primal.shape)
            forward_ad = t.autograd.forward_ad
            with forward_ad.dual_level():
                laid = forward_ad.unpack_dual(forward_ad.make_dual(primal, tangent)).tangent
                found.append((laid is tangent, laid.tolist(), laid.stride(),
                              laid.storage_offset(), len(laid.untyped_storage())))
        return found

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


# ---- as_strided under vmap ------------------------------------------------------------------

STRIDED_CASES = [
    # (what, the batch, the example's as_strided arguments)
    ("fits", lambda t: t.arange(40.0).reshape(10, 4), ((2, 2), (1, 2), 0)),
    ("past the end", lambda t: t.arange(40.0).reshape(10, 4), ((5,), (1,), 0)),
    ("offset past the end", lambda t: t.arange(40.0).reshape(10, 4), ((2, 2), (1, 2), 1)),
    ("before the base", lambda t: t.arange(40.0).reshape(10, 4)[:, 1:], ((2,), (1,), 0)),
    ("the base's offset", lambda t: t.arange(40.0).reshape(10, 4)[:, 1:], ((2,), (1,))),
    ("an offset from the base", lambda t: t.arange(40.0).reshape(10, 4)[:, 1:],
     ((2,), (1,), 2)),
    ("a transposed example", lambda t: t.arange(40.0).reshape(10, 2, 2).transpose(1, 2),
     ((2, 2), (1, 2), 0)),
    ("an example with gaps", lambda t: t.arange(40.0).reshape(10, 4)[:, ::2],
     ((2,), (1,), 0)),
    ("an empty example", lambda t: t.zeros(10, 0), ((2,), (1,), 0)),
    ("an empty result", lambda t: t.arange(40.0).reshape(10, 4), ((0,), (1,), 100)),
    ("a 0-dim result", lambda t: t.arange(10.0).reshape(10, 1), ((), (), 0)),
]


@pytest.mark.parametrize("legacy", [False, True], ids=["func.vmap", "legacy vmap"])
@pytest.mark.parametrize("case", STRIDED_CASES, ids=[case[0] for case in STRIDED_CASES])
def test_as_strided_of_a_batched_tensor(case, legacy):
    _, make, arguments = case

    def program(t):
        vmap = _legacy_vmap(t) if legacy else t.func.vmap
        outcome = []
        error = error_of(lambda: outcome.append(vmap(lambda x: x.as_strided(*arguments))(
            make(t))))
        return error, [out.tolist() for out in outcome]

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


@pytest.mark.parametrize("legacy", [False, True], ids=["func.vmap", "legacy vmap"])
def test_as_strided_with_the_batch_dim_inside(legacy):
    # torch's first vmap refuses batch dims that are not outermost in memory; the second reads
    # each example's as_strided from the physical tensor's memory, another example's included
    def program(t):
        vmap = _legacy_vmap(t) if legacy else t.func.vmap
        outcome = []
        batch = t.arange(40.0).reshape(10, 4)
        error = error_of(lambda: outcome.append(
            vmap(lambda x: x.as_strided((2,), (1,), 0), in_dims=1)(batch)))
        return error, [out.tolist() for out in outcome]

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_as_strided_under_nested_vmaps_and_its_gradients():
    def program(t):
        vmap = t.func.vmap
        nested = vmap(vmap(lambda x: x.as_strided((2,), (1,), 0)))(t.arange(24.0).reshape(4, 3,
                                                                                           2))
        refused = error_of(lambda: vmap(vmap(lambda x: x.as_strided((3,), (1,), 0)))(
            t.zeros(4, 3, 2)))
        x = t.arange(40.0).reshape(10, 4).requires_grad_()
        vmap(lambda e: e.as_strided((2,), (1,), 1))(x).sum().backward()
        weights = t.tensor([1.0, 3.0])
        per_example = vmap(t.func.grad(lambda e: (e.as_strided((2,), (2,), 0) * weights).sum()))(
            t.ones(3, 4))
        return nested.tolist(), refused, x.grad[:2].tolist(), per_example.tolist()

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_as_strided_of_a_dual_with_a_batched_tangent():
    # torch's as_strided runs as_strided on the tangent, which its vmap checks: the tangent
    # given (no copy: only the storage's size differs) reaches 4 elements, the primal 5
    def program(t):
        primal = t.arange(5.0)[:4].detach()
        found = []

        def jvp(tangent):
            forward_ad = t.autograd.forward_ad
            with forward_ad.dual_level():
                dual = forward_ad.make_dual(primal, tangent)
                found.append(forward_ad.unpack_dual(dual)[1] is tangent)
                found.append(error_of(lambda: dual.as_strided((5,), (1,), 0)))
                inside = forward_ad.unpack_dual(dual.as_strided((2,), (1,), 1))[1]
            return inside

        out = _legacy_vmap(t)(jvp, 0, 0)(t.arange(40.0).reshape(10, 4))
        return found, out.tolist()

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result
