"""The compile stages (compiler/stages.py): one ordered list, each stage named, timed and
dumpable by name, none changing its input."""

from __future__ import annotations

import pytest

import autojit
from autojit.compiler import guard_stage, stages, tracing
from autojit.ir.printer import format_graph


def _training_step():
    weight = autojit.ones(3, 2, requires_grad=True)

    def step(x):
        loss = (x @ weight).tanh().sum()
        loss.backward()
        with autojit.no_grad():
            weight.sub_(0.1 * weight.grad)
        weight.grad = None
        return loss

    return step


def test_the_stages_are_one_ordered_list_and_each_is_timed():
    assert stages.STAGES == ("trace", "prune", "guard", "optimize", "partition", "split",
                             "schedule", "build")
    step = autojit.compile(_training_step())
    step(autojit.ones(4, 3))
    # No result is differentiated outside the function: no partition.
    assert list(step.stage_seconds) == ["trace", "prune", "guard", "optimize", "schedule",
                                        "build"]
    assert all(seconds >= 0 for seconds in step.stage_seconds.values())

    outside = autojit.compile(lambda x: (x * x).sum())
    leaf = autojit.ones(3, requires_grad=True)
    outside(leaf).backward()
    assert "partition" in outside.stage_seconds and "split" not in outside.stage_seconds
    assert leaf.grad.tolist() == [2.0, 2.0, 2.0]

    # A branch on a graph value: the graph runs in segments, checked between them.
    branching = autojit.compile(lambda x: x * 2 if x.sum().item() > 0 else x * 3)
    branching(autojit.ones(3))
    assert "split" in branching.stage_seconds


def test_a_stage_is_dumped_by_name(monkeypatch, capsys):
    monkeypatch.setenv("AUTOJIT_DUMP", "guard,schedule")
    step = autojit.compile(_training_step())
    step(autojit.ones(4, 3))
    dumped = capsys.readouterr().err
    assert "after guard ===" in dumped and "--- guards ---" in dumped
    assert "after schedule ===" in dumped and "kernel" in dumped
    assert "after optimize" not in dumped


def test_an_unknown_stage_name_is_an_error_listing_the_stages(monkeypatch):
    step = autojit.compile(lambda x: x * 2)
    monkeypatch.setenv("AUTOJIT_DUMP", "optimise")
    with pytest.raises(ValueError, match="unknown stage optimise; the stages are trace, prune"):
        step(autojit.ones(2))
    with pytest.raises(ValueError, match="unknown stage optimise"):  # checked when compiling
        autojit.compile(lambda x: x * 2)


def test_prune_and_guard_leave_the_trace_as_it_was():
    """A leaf made inside the function gets a .grad while tracing: prune drops that output
    from a new graph, and the trace it was given keeps it."""
    def function(x):
        local = autojit.ones(2, requires_grad=True)
        (local * x).sum().backward()
        return x * 2

    compiled = autojit.compile(function)
    traced = tracing.trace(compiled, (autojit.ones(2),))
    text = format_graph(traced.graph)
    pruned = guard_stage.prune(traced)
    assert pruned.graph is not traced.graph
    assert [o.kind for o in pruned.graph.outputs] == ["result"]
    assert "grad" in [o.kind for o in traced.graph.outputs]
    assert format_graph(traced.graph) == text
    guarded = guard_stage.guard(pruned)
    assert format_graph(pruned.graph) == format_graph(guarded.graph)
    assert len(guarded.guards) > 0


def test_a_trace_that_creates_optimizer_state_runs_once_on_the_interpreter():
    """Adam's first step creates its state: traced, it would serve that call only, so a
    compiled step runs it eagerly, untraced (a state call); explain() traces it, on the
    interpreter rather than optimized and scheduled. The second call compiles; both equal
    eager."""

    def make():
        autojit.manual_seed(0)
        model = autojit.nn.Linear(3, 2)
        optimizer = autojit.optim.Adam(model.parameters(), lr=0.1)

        def step(x):
            optimizer.zero_grad()
            loss = model(x).square().sum()
            loss.backward()
            optimizer.step()
            return loss

        return model, step

    x = autojit.arange(12.0).reshape(4, 3) / 10
    eager_model, eager_step = make()
    compiled_model, step = make()
    step = autojit.compile(step)
    eager_losses = [eager_step(x).item() for _ in range(3)]
    _, explained = make()
    report = autojit.compiler.explain(explained, x)
    assert report.graph_count == 1 and report.state_changing
    losses = [step(x).item()]
    assert step.stage_seconds == {} and step.stats().state_calls == 1
    losses += [step(x).item() for _ in range(2)]
    assert "optimize" in step.stage_seconds and "schedule" in step.stage_seconds
    assert losses == pytest.approx(eager_losses, rel=1e-6)
    for mine, reference in zip(compiled_model.parameters(), eager_model.parameters(),
                               strict=True):
        assert mine.flatten().tolist() == pytest.approx(reference.flatten().tolist(), rel=1e-5)


def test_the_cyclic_collector_is_paused_while_compiling_and_restored():
    """A compile's survivors made CPython run full collections in the middle of it (0.12 s
    each in a process holding torch: stages.without_cycle_collection); it is paused while
    tracing and compiling, back on after, also when the compile raises, and a program that
    paused it itself keeps it paused."""
    import gc

    seen = []

    def double(x):
        seen.append(gc.isenabled())  # read while the trace runs the function
        return x * 2

    assert gc.isenabled()
    autojit.compile(double)(autojit.ones(3))
    assert seen[0] is False and gc.isenabled()

    def breaks(x):
        raise ValueError("from the function")

    with pytest.raises(ValueError, match="from the function"):
        autojit.compile(breaks)(autojit.ones(3))
    assert gc.isenabled()
    gc.disable()
    try:
        autojit.compile(lambda x: x + 1)(autojit.ones(2))
        assert not gc.isenabled()
    finally:
        gc.enable()
