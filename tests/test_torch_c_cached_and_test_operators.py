"""torch._C's set of cached tensors (`_set_cached_tensors_enabled`, `_add_cached_tensor`,
`_remove_cached_tensor`, `_is_cached_tensor`) and torch's test operator
`torch._C._nn._test_warn_in_autograd` (a copy whose backward warns), against torch, from
torch's test_multiple_insert_removal_caching and test_warning_in_backward. Each program runs
under torch and under autojit's drop-in names."""

from __future__ import annotations

import warnings

import pytest

from autojit.drop_in import _C as autojit_C

torch = pytest.importorskip("torch")
from torch_outcomes import both, error_of  # noqa: E402


def _C(t):
    return torch._C if t is torch else autojit_C


def _error_class(function):
    found = error_of(function)
    return None if found is None else found[0]


def test_the_set_of_cached_tensors():
    def program(t):
        C = _C(t)
        x, y = t.rand(4), t.rand(2)
        refused = (_error_class(lambda: C._add_cached_tensor(x)),
                   _error_class(lambda: C._remove_cached_tensor(x)), C._is_cached_tensor(x))
        C._set_cached_tensors_enabled(True)
        try:
            C._add_cached_tensor(x)
            found = [C._is_cached_tensor(x), C._is_cached_tensor(x.detach()),
                     C._is_cached_tensor(x[:]), C._is_cached_tensor(y)]
            C._add_cached_tensor(x)  # a set: one removal takes it out
            C._set_cached_tensors_enabled(False)
            found.append(C._is_cached_tensor(x))  # off: kept, but not answered
            C._set_cached_tensors_enabled(True)
            found.append(C._is_cached_tensor(x))
            C._remove_cached_tensor(x)
            C._remove_cached_tensor(y)  # not in it: nothing to do
            found.append(C._is_cached_tensor(x))
            found.append(error_of(lambda: C._is_cached_tensor(3)))
        finally:
            C._set_cached_tensors_enabled(False)
        return refused, found

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_warn_in_autograd_warns_in_each_backward_through_it():
    def program(t):
        a = t.tensor([1.0, 2.0], requires_grad=True)
        b = _C(t)._nn._test_warn_in_autograd(a)
        shown = (b.tolist(), b.grad_fn.name(), b._base is None, b.data_ptr() != a.data_ptr())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (grad,) = t.autograd.grad((b * b).sum(), a, create_graph=True)
            first = [(w.category.__name__, str(w.message).startswith("Warn from backward"))
                     for w in caught]
            grad.sum().backward()  # the double backward runs through its node again
            count = len(caught)
        plain = _C(t)._nn._test_warn_in_autograd(t.tensor([1, 2]))
        return (shown, first, count, grad.tolist(), a.grad.tolist(), plain.tolist(),
                plain.requires_grad, error_of(lambda: _C(t)._nn._test_warn_in_autograd(3)))

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result


def test_warn_in_autograd_has_no_forward_mode_formula():
    def program(t):
        forward_ad = t.autograd.forward_ad
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(t.tensor([1.0]), t.tensor([2.0]))
            return error_of(lambda: _C(t)._nn._test_warn_in_autograd(dual))

    torch_result, autojit_result = both(program)
    assert torch_result == autojit_result
