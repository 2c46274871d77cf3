"""Sizes that depend on data (a Mixture-of-Experts router's `torch.where(choice == e)[0]`,
`x[mask]`, `masked_select`, `nonzero`): one trace serves every count. The trace binds a size
symbol for the count and later ops trace with it; each run binds it once the graph has
computed it (compiler/unbacked_sizes.py). Compiled equals eager and torch: values, gradients,
SGD updates and random draws, counts of 0 and 1 after a trace with a larger one included."""

from __future__ import annotations

import numpy as np
import pytest

import autojit
import autojit.nn.functional as F
from autojit.compiler import explain
from autojit.ir import GraphBreak

torch = pytest.importorskip("torch")

E, D, TOKENS = 4, 8, 48


def _moe(t, weights):
    """A Mixture-of-Experts layer of module `t` (torch or autojit) over shared initial weights,
    its SGD optimizer, and its training step; each step returns (loss, each token's
    expert)."""
    router = t.nn.Linear(D, E)
    experts = t.nn.ModuleList(t.nn.Linear(D, D) for _ in range(E))
    with t.no_grad():
        for parameter, value in zip([*router.parameters(), *experts.parameters()], weights):
            parameter.copy_(t.tensor(value))
    parameters = [*router.parameters(), *experts.parameters()]
    optimizer = t.optim.SGD(parameters, lr=0.1)

    def step(x):
        choice = router(x).argmax(-1)
        out = t.zeros_like(x)
        for e in range(E):
            idx = t.where(choice == e)[0]
            out = out.index_add(0, idx, t.tanh(experts[e](x[idx])))
        loss = (out - x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss, choice

    return step, parameters


def _weights(rng):
    shapes = [(E, D), (E,)] + [(D, D), (D,)] * E
    return [rng.normal(scale=0.5, size=shape).astype(np.float32) for shape in shapes]


def test_moe_training_step_traces_once_for_every_count():
    rng = np.random.default_rng(3)
    weights = _weights(rng)
    inputs = [rng.normal(size=(TOKENS, D)).astype(np.float32) for _ in range(10)]
    reference, torch_parameters = _moe(torch, weights)
    eager, eager_parameters = _moe(autojit, weights)
    compiled_step, parameters = _moe(autojit, weights)
    step = autojit.compile(lambda x: compiled_step(x)[0])
    counts = set()
    for number, x in enumerate(inputs):
        expected, choice = reference(torch.tensor(x))
        count = np.bincount(choice.numpy(), minlength=E)
        assert count.min() >= 2  # the premise: every expert gets at least 2 tokens
        counts.add(tuple(count))
        eager_loss, _ = eager(autojit.tensor(x))
        loss = step(autojit.tensor(x))
        assert loss.item() == pytest.approx(expected.item(), rel=1e-5), number
        assert loss.item() == pytest.approx(eager_loss.item(), rel=1e-6), number
    assert len(counts) >= 8  # the counts changed from call to call
    for mine, eagers, theirs in zip(parameters, eager_parameters, torch_parameters):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        np.testing.assert_allclose(mine.detach().numpy(), eagers.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        if theirs.grad is None:  # the router's: argmax passes no gradient
            assert mine.grad is None and eagers.grad is None
            continue
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-4,
                                   atol=1e-5)
    stats = step.stats()
    # The first call runs eagerly (it makes the optimizer's state); one trace serves the rest.
    assert stats.traces == 1 and stats.state_calls == 1, stats
    assert stats.value_check_failures == 0 and stats.eager_calls == 0, stats
    assert stats.compiled_calls == len(inputs) - 1 and stats.segments == 2, stats
    # The four counts are bound together after one segment (split_breaks counts them).
    assert stats.split_breaks == E


def _masked_mean(t):
    def masked(x):
        kept = x[x > 0]
        return (kept * 3).sum() / kept.shape[0] + kept.shape[0]

    return masked


@pytest.mark.parametrize("counts", [(5, 3, 7, 2, 9, 4, 6, 8, 3)])
def test_boolean_mask_traces_once(counts):
    masked = _masked_mean(autojit)
    compiled = autojit.compile(masked)
    rng = np.random.default_rng(0)
    for count in counts:
        values = -rng.random(12).astype(np.float32) - 0.1
        values[rng.permutation(12)[:count]] *= -1
        got = compiled(autojit.tensor(values))
        assert got.item() == pytest.approx(masked(autojit.tensor(values)).item(), rel=1e-6)
        assert got.item() == pytest.approx(
            _masked_mean(torch)(torch.tensor(values)).item(), rel=1e-6)
    stats = compiled.stats()
    assert stats.traces == 1 and stats.value_check_failures == 0, stats
    assert stats.eager_calls == 0 and stats.segments == 2, stats
    assert "u0" in compiled.ir(optimized=False)  # the traced graph keeps the size's symbol


def test_masked_select_and_nonzero_trace_once():
    def program(t):
        def select(x, y):
            kept = t.masked_select(x, y > 0.5)
            positions = t.nonzero(y > 0.25)
            rows, columns = t.nonzero(y > 0.75, as_tuple=True)
            return kept * 2, positions, rows + columns, kept.sum() + positions.sum()

        return select

    compiled = autojit.compile(program(autojit))
    rng = np.random.default_rng(1)
    for _ in range(6):
        x = rng.normal(size=(4, 5)).astype(np.float32)
        y = rng.random((4, 5)).astype(np.float32)
        got = compiled(autojit.tensor(x), autojit.tensor(y))
        for theirs in (program(autojit)(autojit.tensor(x), autojit.tensor(y)),
                       program(torch)(torch.tensor(x), torch.tensor(y))):
            for mine, other in zip(got, theirs):
                assert tuple(mine.shape) == tuple(other.shape)
                np.testing.assert_allclose(mine.numpy(), other.numpy(), rtol=1e-6)
    stats = compiled.stats()
    assert stats.traces == 1 and stats.value_check_failures == 0, stats


def test_unique_traces_once():
    def program(t):
        def distinct(x):
            values, inverse, counts = t.unique(x, return_inverse=True, return_counts=True)
            return values * 2, inverse, counts, t.unique_consecutive(x).sum()

        return distinct

    compiled = autojit.compile(program(autojit))
    rng = np.random.default_rng(4)
    for high in range(3, 9):
        x = rng.integers(0, high, size=12).astype(np.float32)
        got = compiled(autojit.tensor(x))
        for mine, theirs in zip(got, program(torch)(torch.tensor(x))):
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert compiled.stats().traces == 1 and compiled.stats().value_check_failures == 0


def test_counts_of_zero_and_one_after_a_larger_one():
    masked = _masked_mean(autojit)
    compiled = autojit.compile(masked)
    for values in ([1.0, -2.0, 3.0, 4.0], [-1.0, -2.0, -3.0, -4.0], [-1.0, 5.0, -3.0, -4.0],
                   [2.0, 2.0, -3.0, 4.0], [-1.0, -2.0, -3.0, -4.0], [-1.0, 5.0, -3.0, -4.0],
                   [6.0, 2.0, 3.0, 4.0]):
        got, eager = compiled(autojit.tensor(values)), masked(autojit.tensor(values))
        theirs = _masked_mean(torch)(torch.tensor(values))
        np.testing.assert_equal(got.numpy(), eager.numpy())  # nan for an empty mask
        np.testing.assert_allclose(got.numpy(), theirs.numpy(), rtol=1e-6)
    stats = compiled.stats()
    # A count of 0 and one of 1 each trace once, specialized on it; every other count runs
    # in the first trace, and no call runs eagerly.
    assert stats.traces == 3 and stats.eager_calls == 0, stats


def test_gradients_through_the_indexed_rows():
    def program(t, weight):
        def loss(x):
            rows = t.where(x.sum(1) > 0)[0]
            picked = x[rows] * weight
            return (picked.tanh() ** 2).sum() / rows.shape[0]

        return loss

    rng = np.random.default_rng(2)
    start = rng.normal(size=(3,)).astype(np.float32)
    weight = autojit.tensor(start, requires_grad=True)
    torch_weight = torch.tensor(start, requires_grad=True)
    compiled = autojit.compile(program(autojit, weight))
    for _ in range(8):
        values = rng.normal(size=(10, 3)).astype(np.float32)
        x, torch_x = autojit.tensor(values, requires_grad=True), \
            torch.tensor(values, requires_grad=True)
        loss = compiled(x)
        loss.backward()  # differentiated outside: the compiled backward
        expected = program(torch, torch_weight)(torch_x)
        expected.backward()
        assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
        np.testing.assert_allclose(x.grad.numpy(), torch_x.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(weight.grad.numpy(), torch_weight.grad.numpy(), rtol=1e-5,
                                   atol=1e-6)
    assert compiled.stats().traces == 1 and compiled.stats().value_check_failures == 0


def test_a_count_from_another_count_and_random_draws_equal_eager():
    def program(x):
        x = F.dropout(x, 0.5, training=True)
        kept = x[x != 0]
        noise = autojit.randn(kept.shape[0])  # a draw the size of a computed count
        larger = kept[kept + noise > 1.0]  # a count computed from the first one's rows
        after = autojit.rand(2)  # a draw after it: its place in the stream follows the count
        return kept.sum() + noise.sum() * 10 + larger.sum() * 100 + after.sum() * 1000

    compiled = autojit.compile(program)
    for seed in range(8):
        x = autojit.full((40,), 1.5)
        autojit.manual_seed(seed)
        got = compiled(x).item()
        autojit.manual_seed(seed)
        assert got == pytest.approx(program(x).item(), rel=1e-6), seed
        assert autojit.rand(1).item() == pytest.approx(  # the generator left where eager does
            (autojit.manual_seed(seed), program(x), autojit.rand(1))[2].item())
    assert compiled.stats().traces == 1 and compiled.stats().eager_calls == 0


def test_a_branch_on_the_count_stays_a_value_check():
    def program(x):
        idx = x.nonzero()
        if idx.numel() > 3:  # a decision on the count: checked on every run
            return x[idx[:, 0]].sum()
        return -x[idx[:, 0]].sum()

    compiled = autojit.compile(program)
    for values in ([1.0, 2.0, 0.0, 0.0, 3.0], [1.0, 2.0, 3.0, 4.0, 0.0], [1.0, 0.0, 0.0, 0.0, 3.0],
                   [1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 0.0, 6.0, 4.0, 5.0]):
        x = autojit.tensor(values)
        assert compiled(x).item() == program(x).item()
    stats = compiled.stats()
    assert stats.traces == 2 and stats.eager_calls == 0, stats  # one trace per branch
    assert "(g0) <= 3" in compiled.ir()  # the last call's: its count is 3


def test_inspection_and_fullgraph_say_where_the_graph_is_split():
    def program(x):
        return x[x > 0].sum()

    with pytest.raises(GraphBreak, match="a size the graph computes"):
        autojit.compile(program, fullgraph=True)(autojit.tensor([1.0, -2.0, 3.0]))
    report = explain(program, autojit.tensor([1.0, -2.0, 3.0]))
    assert report.graph_count == 2 and report.graph_break_count == 1
    assert report.break_reasons[0].split and "u0" in report.break_reasons[0].reason
    compiled = autojit.compile(program)
    compiled(autojit.tensor([1.0, -2.0, 3.0]))
    compiled(autojit.tensor([1.0, 2.0, 3.0]))
    text = compiled.ir()
    assert "# segment 2 of 2" in text and "g0 >= 2" in text
    assert "size=3" in text  # the latest call's binding
    assert compiled.stats().traces == 1


def test_dynamic_false_specializes_on_each_count():
    compiled = autojit.compile(lambda x: x[x > 0].sum(), dynamic=False)
    for values in ([1.0, -2.0, 3.0], [1.0, 2.0, 3.0], [4.0, -2.0, 3.0]):
        assert compiled(autojit.tensor(values)).item() == sum(v for v in values if v > 0)
    assert compiled.stats().traces == 2


def test_a_new_count_rebinds_the_plan_instead_of_scheduling(monkeypatch):
    """A new combination of counts takes the plan scheduled for the trace's first one,
    rebound to its sizes (codegen/schedule/rebinding.py): the fusion schedule runs for the
    first binding only, and the step still equals eager and torch."""
    import autojit.codegen.backend as backend

    scheduled = []
    build_plan = backend.build_plan
    monkeypatch.setattr(backend, "build_plan", lambda graph, **options: (
        scheduled.append(graph), build_plan(graph, **options))[1])
    rng = np.random.default_rng(3)
    weights = _weights(rng)
    reference, torch_parameters = _moe(torch, weights)
    compiled_step, parameters = _moe(autojit, weights)
    step = autojit.compile(lambda x: compiled_step(x)[0])
    counts = []
    for number in range(9):
        x = rng.normal(size=(TOKENS, D)).astype(np.float32)
        expected, choice = reference(torch.tensor(x))
        counts.append(tuple(np.bincount(choice.numpy(), minlength=E)))
        assert min(counts[-1]) >= 2  # the premise: every expert gets at least 2 tokens
        assert step(autojit.tensor(x)).item() == pytest.approx(expected.item(), rel=1e-5)
        if number == 1:  # the first compiled call: each segment scheduled once
            first = len(scheduled)
            assert first == 2
    assert len(set(counts[1:])) == len(counts) - 1  # a new combination on every call
    assert len(scheduled) == first  # and no schedule for any of them
    plans = step.executables[0].plans
    assert plans.scheduled == 2 and plans.rebound == len(counts) - 2
    for mine, theirs in zip(parameters, torch_parameters):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)


def test_a_plan_made_where_two_counts_were_equal_is_not_rebound():
    """Where the first binding's counts are equal, the schedule may fuse the work on both
    selections into one kernel; a call whose counts differ must not run that kernel: the
    rebinding finds its nodes no longer iterate one space, and the segment is scheduled
    again (then rebound for the later calls)."""
    def program(x, y):
        a, b = x[x > 0], y[y > 0]
        return (a * 2 + 1).sum() + (b * 3 - 1).sum() * 10

    compiled = autojit.compile(program)
    for n, m in ((4, 4), (3, 5), (6, 2), (5, 5), (2, 7)):
        x = np.full(8, -1.0, np.float32)
        x[:n] = np.arange(1, n + 1)
        y = np.full(8, -1.0, np.float32)
        y[:m] = np.arange(1, m + 1) * 0.5
        got = compiled(autojit.tensor(x), autojit.tensor(y)).item()
        assert got == program(autojit.tensor(x), autojit.tensor(y)).item()
        assert got == pytest.approx(program(torch.tensor(x), torch.tensor(y)).item())
    plans = compiled.executables[0].plans
    # The counting segment once, the last one for (4, 4) and again for (3, 5).
    assert (plans.scheduled, plans.rebound) == (3, 3)
    assert compiled.stats().traces == 1


def test_a_constant_that_is_a_count_is_read_at_run_time():
    """A mean over a mask divides by the count: a constant of the kernel that changes with
    every count. A binding rebound from the first reads it at run time with the kernel's sizes
    (codegen/schedule/rebinding.py), so new counts compile no kernel, and the results still
    equal eager's (to a float32 sum's rounding: the kernel sums in another order)."""
    from autojit.codegen.cpu import jit

    def program(x):
        kept = x[x > 0]
        count = kept.shape[0]
        return (kept * 3).sum() / count + count, (kept.exp() / count).sum()

    compiled = autojit.compile(program)
    rng = np.random.default_rng(6)
    compiles = None
    for number, count in enumerate((5, 9, 3, 12, 7, 4, 30, 17, 2, 25)):
        values = -rng.random(32).astype(np.float32) - 0.1
        values[rng.permutation(32)[:count]] *= -1
        got = compiled(autojit.tensor(values))
        for mine, eager, theirs in zip(got, program(autojit.tensor(values)),
                                       program(torch.tensor(values))):
            np.testing.assert_allclose(mine.numpy(), eager.numpy(), rtol=1e-6)
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5)
        if number == 2:  # the kernels reading the counts at run time are compiled by now
            compiles = jit.STATISTICS["compiled"] + jit.STATISTICS["loaded"]
    assert jit.STATISTICS["compiled"] + jit.STATISTICS["loaded"] == compiles
    plans = compiled.executables[0].plans
    assert plans.scheduled == 2 and compiled.stats().traces == 1


def test_a_mean_over_selected_rows_is_optimized_once_and_rebound():
    """The simplifier asks whether a mean's divisor, 3 times the count of rows, is 1: the
    count's range (at least 2) answers, with no value check, so the passes run once on the
    graph with its symbols and each new count rebinds the plan."""
    def program(x):
        return x[x[:, 0] > 0].mean(), x[x[:, 1] > 0].pow(2).mean(0)

    compiled = autojit.compile(program)
    rng = np.random.default_rng(7)
    for _ in range(8):
        x = rng.normal(size=(24, 3)).astype(np.float32)
        for mine, theirs in zip(compiled(autojit.tensor(x)), program(torch.tensor(x))):
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5)
    plans = compiled.executables[0].plans
    assert plans.scheduled == 2 and plans.rebound >= 5, (plans.scheduled, plans.rebound)
    assert compiled.stats().traces == 1 and compiled.stats().value_check_failures == 0
