"""What captum's attributions need of autojit, against torch: `torch.Future`, the class every
future is an instance of (captum's perturbation methods test `isinstance(output,
torch.Future)` on each forward's output), with torch.futures' and torch.jit's futures its
instances."""

from __future__ import annotations

import pytest

import autojit as aj

torch = pytest.importorskip("torch")


def _future_facts(top) -> list:
    made = top.futures.Future()
    forked = top.jit.fork(lambda x: x * 2, top.ones(2))
    chained = forked.then(lambda future: future.wait().sum())
    return [
        isinstance(made, top.Future),
        isinstance(forked, top.Future),
        isinstance(chained, top.Future),
        isinstance(top.ones(1), top.Future),
        top.jit.Future is top.futures.Future,
        issubclass(top.futures.Future, top.Future),
        forked.done(),
        top.jit.wait(forked).tolist(),
        chained.wait().item(),
    ]


def test_future_class_and_instances_match_torch():
    assert _future_facts(aj) == _future_facts(torch)


def test_captum_style_dispatch_on_future_outputs():
    """A forward returning a Future is told apart from one returning a tensor, as captum's
    FeatureAblation does, and its value read after wait()."""

    def attribute(top, asynchronous: bool) -> list:
        def forward(x):
            out = (x * top.arange(3.0)).sum(dim=1)
            if not asynchronous:
                return out
            future = top.futures.Future()
            future.set_result(out)
            return future

        result = forward(top.ones(2, 3))
        if isinstance(result, top.Future):
            return ["future", result.wait().tolist()]
        return ["tensor", result.tolist()]

    for asynchronous in (False, True):
        assert attribute(aj, asynchronous) == attribute(torch, asynchronous)
