"""Split graphs: where a trace decides on a value its graph computes (a branch on `.item()`, the
size `nonzero` or a boolean mask finds, `.numpy()`), the executable runs the graph in
segments and checks the decision between them. Compiled equals eager on every call, gradients
included across segments; fullgraph=True raises at the first graph break; the inspection
shows the segments and the user's lines, and stats() counts them."""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit.compiler import explain
from autojit.ir import GraphBreak


def _masked_step(x):
    y = x * 2
    selected = y[y > 1]  # its size depends on the data: a split
    count = x.nonzero().shape[0]
    total = y.sum().numpy()  # the data in Python: a split
    return selected.sum() * float(total) + count


@pytest.mark.parametrize("values", [([1.0, 0.0, 3.0], [2.0, 0.0, 5.0], [1.0, 1.0, 1.0],
                                     [2.0, 0.0, 5.0])])
def test_data_dependent_sizes_and_numpy_run_compiled_in_segments(values):
    compiled = autojit.compile(_masked_step)
    for value in values:
        x = autojit.tensor(value)
        assert compiled(x).item() == _masked_step(x).item()
    stats = compiled.stats()
    assert stats.eager_calls == 0 and stats.graph_breaks == 0 and stats.split_breaks > 0
    # The two counts do not depend on each other: computed in one segment and bound together.
    assert stats.segments == 3
    assert "# segment 3 of 3" in compiled.ir()
    assert f"{__file__}:" in compiled.ir()  # the checks name the user's lines


def test_fullgraph_raises_at_the_first_break():
    with pytest.raises(GraphBreak, match=r"selected = y\[y > 1\]"):
        autojit.compile(_masked_step, fullgraph=True)(autojit.tensor([1.0, 0.0, 3.0]))


def test_explain_shows_the_segments_and_the_breaks_with_their_lines():
    report = explain(_masked_step, autojit.tensor([1.0, 0.0, 3.0]))
    assert report.graph_count == 3 and report.graph_break_count == 3
    assert all(record.split for record in report.break_reasons)
    lines = {record.lineno for record in report.break_reasons}
    first = _masked_step.__code__.co_firstlineno
    assert lines == {first + 2, first + 3, first + 4}
    text = str(report)
    assert "compiled as a split graph" in text and "Checked between Segments:" in text


def test_a_backward_spanning_segments_equals_eager():
    def make():
        weight = autojit.tensor([0.5, -1.0, 2.0], requires_grad=True)

        def step(x):
            hidden = (x * weight).tanh()
            scale = 2.0 if hidden.sum().item() > 0 else -1.0  # a branch: two segments
            loss = (hidden[hidden > -0.5] * scale).sum()  # a mask: a third
            loss.backward()
            with autojit.no_grad():
                weight.sub_(0.1 * weight.grad)
            weight.grad = None
            return loss.item()

        return step, weight

    calls = [[1.0, 2.0, 0.5], [1.0, -2.0, 0.5], [-3.0, 2.0, 0.5], [1.0, 2.0, 0.5]]
    runs = []
    for compiled in (False, True):
        step, weight = make()
        if compiled:
            step = autojit.compile(step)
        runs.append(([step(autojit.tensor(value)) for value in calls], weight.tolist()))
    (eager, eager_weight), (got, got_weight) = runs
    np.testing.assert_allclose(got, eager, rtol=1e-6)
    np.testing.assert_allclose(got_weight, eager_weight, rtol=1e-6)


def test_results_differentiated_outside_through_a_split():
    weight = autojit.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def forward(x):
        y = x * weight
        return y[y > 0].sum()

    compiled = autojit.compile(forward)
    for value in ([1.0, 2.0, 0.5], [1.0, -2.0, 0.5]):
        x = autojit.tensor(value, requires_grad=True)
        compiled(x).backward()
        got = (x.grad.tolist(), weight.grad.tolist())
        weight.grad = None
        x = autojit.tensor(value, requires_grad=True)
        forward(x).backward()
        assert got == (x.grad.tolist(), weight.grad.tolist())
        weight.grad = None
    assert compiled.stats().eager_calls == 0


def test_masked_select_runs_compiled_in_segments():
    def select(x, mask):
        return autojit.masked_select(x, mask) * 2

    compiled = autojit.compile(select)
    x = autojit.tensor([[1.0, 2.0], [3.0, 4.0]])
    for mask in ([[True, False], [True, True]], [[False, True], [True, False]],
                 [[True, True], [False, True]]):
        mask = autojit.tensor(mask)
        assert compiled(x, mask).tolist() == select(x, mask).tolist()
    stats = compiled.stats()
    assert stats.eager_calls == 0 and stats.segments == 2, stats


def test_a_check_compares_values_read_at_two_boundaries():
    # transformers' grouped-expert loop: `start == end` over consecutive elements of
    # offs.tolist() compares a value read at an earlier boundary with one read at this one.
    def f(x, w):
        offs = (x > 0).sum(0).cumsum(0)
        start, out = 0, autojit.zeros(())
        for i, end in enumerate(offs.tolist()):
            if start == end:
                continue
            out = out + (x[start:end] * w[i]).sum()
            start = end
        return out

    compiled = autojit.compile(f)
    w = autojit.tensor([1.0, -2.0, 3.0, 0.5])
    for rows in ([[1.0, -1, 1, 1]] * 2 + [[1, 1, -1, 1]] * 4, [[1.0, -1, -1, 1]] * 6):
        x = autojit.tensor(rows)
        assert compiled(x, w).item() == pytest.approx(f(x, w).item())


def test_a_python_loop_over_thousands_of_values_runs_eagerly_with_a_warning():
    # A greedy suppression over a tensor's values, as a detection model's Python kernel runs
    # one: each read would be a leaf and a check (6,001 segments, 42 s, before the cap).
    from autojit.ir.scalars import MAX_READS

    def greedy(scores):
        kept = []
        for i in scores.argsort(descending=True).tolist():
            if scores[i] > 0.5:
                kept.append(i)
        return autojit.tensor(kept)

    compiled = autojit.compile(greedy)
    scores = autojit.rand(3 * MAX_READS, generator=autojit.Generator().manual_seed(0))
    with pytest.warns(autojit.CompileWarning, match=f"more than {MAX_READS} values read"):
        result = compiled(scores)
    assert result.tolist() == greedy(scores).tolist()
    stats = compiled.stats()
    assert stats.eager_calls == 1 and stats.split_breaks == 0
