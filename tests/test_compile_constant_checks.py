"""Decisions on values computed only from constant captured tensors (compiler/constant_checks.py):
a fixed-step ODE solver's time grid built from captured time points, with `.item()`, `arange`
of that count and `while t1 >= times[j]`, compiles whole (fullgraph=True, one segment) and
equals eager; the guards compare the captured tensor's values, so a change of them traces
again and still equals eager. A decision on a parameter, on an argument or on a captured
tensor the call writes after it stays a check between segments."""

from __future__ import annotations

import numpy as np
import pytest

import autojit


def _solver(times, field, y0, step_size=0.25):
    """Euler's method on the grid torchdiffeq's fixed-step solvers build from `times`."""

    def integrate():
        start, end = times[0], times[-1]
        count = autojit.ceil((end - start) / step_size + 1).item()
        grid = autojit.arange(0, count, dtype=times.dtype) * step_size + start
        grid[-1] = times[-1]
        assert grid[0] == times[0] and grid[-1] == times[-1]
        solution = autojit.empty(len(times), *y0.shape)
        solution[0] = y0
        j, y = 1, y0
        for t0, t1 in zip(grid[:-1], grid[1:]):
            y_next = y + (t1 - t0) * field(y)
            while j < len(times) and t1 >= times[j]:
                solution[j] = y + (times[j] - t0) / (t1 - t0) * (y_next - y)
                j += 1
            y = y_next
        return solution

    return integrate


def _step_pair():
    weights = []
    for _ in range(2):
        autojit.manual_seed(0)
        weights.append(autojit.nn.Linear(2, 2))
    times = autojit.tensor([0.0, 0.3, 1.0])
    y0 = autojit.tensor([[1.0, -0.5], [0.2, 0.4]])

    def make(model):
        optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
        integrate = _solver(times, model, y0)

        def step():
            loss = (integrate() ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss

        return step

    return make(weights[0]), make(weights[1]), times, weights


def test_a_time_grid_from_captured_time_points_compiles_whole():
    eager, step, times, weights = _step_pair()
    compiled = autojit.compile(step, fullgraph=True)
    for _ in range(3):
        assert compiled().item() == pytest.approx(eager().item(), rel=1e-6)
    stats = compiled.stats()
    assert stats.eager_calls == 0 and stats.split_breaks == 0 and stats.segments == 1
    np.testing.assert_allclose(weights[1].weight.detach().numpy(),
                               weights[0].weight.detach().numpy(), rtol=1e-6)
    times.copy_(autojit.tensor([0.0, 0.6, 1.2]))  # another grid: traced again, as eager runs
    assert compiled().item() == pytest.approx(eager().item(), rel=1e-6)
    assert "the values of times changed" in compiled.recompile_reasons[-1]


@pytest.mark.parametrize("source", ["parameter", "argument", "written"])
def test_other_decisions_stay_checks(source):
    weight = autojit.tensor([0.5, -1.0], requires_grad=source == "parameter")
    buffer = autojit.tensor([1.0, 2.0])

    def f(x):
        decided = {"parameter": weight, "argument": x, "written": buffer}[source]
        out = x * 2 if decided.sum() > 0 else x * 3
        buffer.add_(1.0)  # written after the decision
        return out + weight

    compiled = autojit.compile(f)
    x = autojit.tensor([1.0, 1.0])
    expected = (x * (2 if source != "parameter" else 3) + weight).detach().numpy()
    np.testing.assert_allclose(compiled(x).detach().numpy(), expected)
    assert compiled.stats().segments == 2  # the check between two segments
