"""Selective activation checkpointing (utils/selective_checkpoint.py) against torch: the policy's
calls, gradients to second order, the list form, the errors; which activations the forward
keeps; and the same step under autojit.compile."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import autojit
from autojit.utils import checkpoint as autojit_checkpoint
from autojit.utils.checkpoint import _RecomputedTensor

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as torch_checkpoint  # noqa: E402

MODULES = [(torch, torch_checkpoint), (autojit, autojit_checkpoint)]


def _is_product(op) -> bool:
    return getattr(op, "name", None) == "matmul" or str(op).startswith("aten.mm")


def _run(t, cp, policy_kind: str, create_graph: bool):
    w = t.linspace(-1, 1, 9).reshape(3, 3).requires_grad_(True)
    x = t.linspace(0, 1, 6).reshape(2, 3)
    calls = []

    def policy(ctx, op, *args, **kwargs):
        calls.append((ctx.is_recompute, isinstance(ctx.op_output, t.Tensor)))
        if policy_kind == "bool":
            return _is_product(op)
        return (cp.CheckpointPolicy.MUST_SAVE if _is_product(op) else
                cp.CheckpointPolicy.PREFER_RECOMPUTE)

    runs = []

    def segment(v):
        runs.append(1)
        return (v @ w).sin().sum()

    context_fn = functools.partial(cp.create_selective_checkpoint_contexts, policy)
    y = cp.checkpoint(segment, x, use_reentrant=False, context_fn=context_fn)
    (g,) = t.autograd.grad(y, w, create_graph=create_graph)
    results = [g]
    if create_graph:
        results += list(t.autograd.grad(g.square().sum(), w))
    return [r.detach().numpy() for r in results], sorted(set(calls)), len(runs)


@pytest.mark.parametrize("policy_kind", ["enum", "bool"])
def test_selective_checkpoint_gradients_and_policy_calls_as_torch(policy_kind):
    (theirs, their_calls, their_runs), (ours, our_calls, our_runs) = (
        _run(t, cp, policy_kind, False) for t, cp in MODULES)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6, atol=1e-7)
    assert our_calls == their_calls == [(False, True)]
    # torch starts a recomputation and takes the product from its cache; here every value
    # backward reads was kept (the product saved, the rest arguments and parameters), so
    # nothing is left to recompute and the function runs once.
    assert (our_runs, their_runs) == (1, 2)


def test_selective_checkpoint_second_order_gradients():
    # torch's selective checkpoint refuses a second backward through its region ("Trying to
    # backward an extra time"); autojit's gives the gradients of the plain function.
    ours, _, _ = _run(autojit, autojit_checkpoint, "enum", True)
    w = torch.linspace(-1, 1, 9).reshape(3, 3).requires_grad_(True)
    x = torch.linspace(0, 1, 6).reshape(2, 3)
    (g,) = torch.autograd.grad((x @ w).sin().sum(), w, create_graph=True)
    (gg,) = torch.autograd.grad(g.square().sum(), w)
    for expected, actual in zip((g, gg), ours):
        np.testing.assert_allclose(actual, expected.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_list_form_and_errors_as_torch():
    def errors(cp):
        found = []
        for argument in (3, ["not an op"]):
            try:
                cp.create_selective_checkpoint_contexts(argument)
            except Exception as error:  # noqa: BLE001 - compared
                found.append((type(error).__name__, str(error).split(" of type")[0]))
        return found

    assert errors(autojit_checkpoint)[0] == errors(torch_checkpoint)[0]
    assert errors(autojit_checkpoint)[1][0] == errors(torch_checkpoint)[1][0] == "ValueError"
    assert [p.name for p in autojit_checkpoint.CheckpointPolicy] == [
        p.name for p in torch_checkpoint.CheckpointPolicy]


def _sin_input_entry(context_fn):
    w = autojit.ones(3, 3, requires_grad=True)
    y = autojit_checkpoint.checkpoint(lambda v: (v @ w).sin(), autojit.ones(2, 3),
                                      use_reentrant=False, context_fn=context_fn)
    return y, y.grad_fn._saved[0]


def test_saved_ops_results_are_kept_and_the_others_recomputed():
    plain_y, plain = _sin_input_entry(autojit_checkpoint.noop_context_fn)
    assert isinstance(plain, _RecomputedTensor)  # sin's input, the product, is recomputed
    kept_y, kept = _sin_input_entry(functools.partial(
        autojit_checkpoint.create_selective_checkpoint_contexts, ["matmul"]))
    assert not isinstance(kept, _RecomputedTensor)  # ... kept when matmul's results are saved
    for y in (plain_y, kept_y):
        y.sum().backward()


def test_selective_checkpoint_compiled_equals_eager():
    w = autojit.linspace(-1, 1, 9).reshape(3, 3).requires_grad_(True)
    context_fn = functools.partial(autojit_checkpoint.create_selective_checkpoint_contexts,
                                   ["matmul"])

    def step(x):
        y = autojit_checkpoint.checkpoint(lambda v: (v @ w).sin().sum(), x,
                                          use_reentrant=False, context_fn=context_fn)
        y.backward()
        return y

    x = autojit.linspace(0, 1, 6).reshape(2, 3)
    eager = step(x)
    expected = w.grad.clone()
    w.grad = None
    compiled = autojit.compile(step, fullgraph=True)(x)
    np.testing.assert_allclose(compiled.detach().numpy(), eager.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), expected.numpy(), rtol=1e-6)


def test_set_checkpoint_early_stop_is_a_context_manager():
    for cp in (torch_checkpoint, autojit_checkpoint):
        with cp.set_checkpoint_early_stop(False):
            pass
