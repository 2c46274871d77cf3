"""A compiled function called inside a non-reentrant checkpoint: the recomputation stops where
eager's does (utils/checkpoint_stop.py), so the Python effects after the stop happen as often
compiled as in eager autojit and in torch. Each program runs three ways: torch eager, autojit
eager and autojit with its block compiled."""

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def _program(framework, compiled: bool, steps: int = 3, after_block: bool = False):
    """A global forward hook counting module calls, and (`after_block`) a list appended to
    after the block inside the segment; the counts, losses and gradients of `steps` steps."""
    counts = {"forward": 0}
    effects = []

    def count(module, args, output):
        if type(module).__name__ != "OptimizedModule":  # torch.compile's proxy
            counts["forward"] += 1

    rng = np.random.default_rng(0)
    block = framework.nn.Sequential(framework.nn.Linear(4, 6, dtype=framework.float64),
                                    framework.nn.Tanh())
    head = framework.nn.Linear(6, 2, dtype=framework.float64)
    with framework.no_grad():
        for p in [*block.parameters(), *head.parameters()]:
            p.copy_(framework.tensor(rng.uniform(-0.6, 0.6, tuple(p.shape))))
    inner = autojit.compile(block) if compiled else block

    def segment(x):
        hidden = inner(x)
        if after_block:
            effects.append(1)  # after the segment's last saving op: not recomputed
        return hidden

    handle = framework.nn.modules.module.register_module_forward_hook(count)
    seen = []
    try:
        for step in range(steps):
            x = framework.tensor(np.random.default_rng(step).uniform(-1, 1, (3, 4)))
            out = head(framework.utils.checkpoint.checkpoint(segment, x, use_reentrant=False))
            loss = (out ** 2).mean()
            loss.backward()
            seen.append((counts["forward"], len(effects), float(loss),
                         [p.grad.numpy().copy() for p in block.parameters()]))
    finally:
        handle.remove()
    return seen, inner


@pytest.mark.parametrize("after_block", [False, True])
def test_hooks_and_effects_count_as_in_eager_and_torch(after_block):
    theirs, _ = _program(torch, False, after_block=after_block)
    eager, _ = _program(autojit, False, after_block=after_block)
    compiled, _ = _program(autojit, True, after_block=after_block)
    for mine in (eager, compiled):
        for (count, appended, loss, grads), (count_t, appended_t, loss_t, grads_t) in zip(
                mine, theirs):
            # torch's early stop: the Linear's hook runs in the recomputation, not Tanh's
            # nor the Sequential's, which come after the last saving op (tanh's)
            assert (count, appended) == (count_t, appended_t)
            np.testing.assert_allclose(loss, loss_t, rtol=1e-12)
            for grad, grad_t in zip(grads, grads_t):
                np.testing.assert_allclose(grad, grad_t, rtol=1e-10, atol=1e-12)
    assert [entry[0] for entry in compiled] == [5, 10, 15]


def test_a_block_without_effects_recomputes_compiled():
    """Only a call whose Python effects the stop would cut runs eagerly: a block with no
    hooks nor writes runs its executable in the recomputation too (two compiled calls a
    step), and the effect after it in the segment is still not recomputed."""
    effects = []
    block = autojit.nn.Sequential(autojit.nn.Linear(4, 6), autojit.nn.Tanh())
    compiled = autojit.compile(block)

    def segment(x):
        hidden = compiled(x)
        effects.append(1)
        return hidden

    for step in range(3):
        x = autojit.randn(3, 4)
        autojit.utils.checkpoint.checkpoint(segment, x, use_reentrant=False).sum().backward()
        assert len(effects) == step + 1
    stats = compiled.stats()
    assert (stats.compiled_calls, stats.eager_calls) == (6, 0)


def test_a_block_with_effects_recomputes_eagerly_up_to_the_stop():
    """With a global hook, the recomputation runs the block's function eagerly: the
    executable serves the forwards, eager the recomputations."""
    _, inner = _program(autojit, True, steps=3)
    stats = inner.stats()
    assert (stats.compiled_calls, stats.eager_calls) == (3, 3)
