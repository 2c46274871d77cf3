"""`.item()` and `.tolist()` inside a compiled function: returned, printed and used in tensor
ops without a graph break (fullgraph=True holds), equal to eager on every call; arithmetic on
them stays symbolic, a branch on them is checked on every run, and a value Python needs as a
real number specializes the trace on it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning
from autojit.ir import GraphBreak


def training_step(compiled: bool):
    autojit.manual_seed(0)
    model = autojit.nn.Linear(4, 2)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.05)

    def step(x, y):
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"loss {loss.item():.4f}")
        print(loss.item())
        return loss.item(), {"weight": model.weight.tolist(), "scaled": x * loss.item()}

    return autojit.compile(step, fullgraph=True) if compiled else step


def test_returned_printed_and_used_values_equal_eager(capsys):
    rng = np.random.default_rng(0)
    x, y = autojit.tensor(rng.standard_normal((8, 4)), dtype=autojit.float32), autojit.zeros(8, 2)
    results, outputs = [], []
    for compiled in (False, True):
        step = training_step(compiled)
        results.append([step(x, y) for _ in range(5)])
        outputs.append(capsys.readouterr().out)
    # Compiled kernels sum in another order than NumPy: float32 results agree to rounding.
    for eager, compiled in zip(*results):
        assert type(compiled[0]) is float and compiled[0] == pytest.approx(eager[0], rel=1e-6)
        np.testing.assert_allclose(compiled[1]["weight"], eager[1]["weight"], rtol=1e-6)
        np.testing.assert_allclose(np.asarray(compiled[1]["scaled"]),
                                   np.asarray(eager[1]["scaled"]), rtol=1e-6)
        assert compiled[1]["scaled"].dtype is autojit.float32
    assert outputs[0].splitlines()[::2] == outputs[1].splitlines()[::2]
    printed = [float(line) for line in outputs[1].splitlines()[1::2]]
    assert printed == [result[0] for result in results[1]]
    assert outputs[1].count("loss ") == 5


def test_item_in_tensor_ops_promotes_as_a_number():
    x = autojit.arange(3, dtype=autojit.int64)
    scale = autojit.tensor(2.5, dtype=autojit.float64)
    eager = x * scale.item()
    compiled = autojit.compile(lambda x, s: x * s.item(), fullgraph=True)(x, scale)
    assert compiled.dtype is eager.dtype is autojit.float32
    assert compiled.tolist() == eager.tolist()


def test_arithmetic_and_branches_on_item_stay_compiled():
    """Arithmetic on `.item()` stays symbolic (one trace serves every value); a branch on it is
    a check on the branch taken, so a call that goes the other way traces that branch."""
    def body(x):
        total = x.sum().item()
        scaled = x * (total + 1)
        return scaled if total > 0 else -scaled

    compiled = autojit.compile(body, fullgraph=True)
    for values in ([1.0, 2.0], [3.0, 4.0], [-5.0, 1.0], [2.0, 2.0], [-1.0, -1.0]):
        x = autojit.tensor(values)
        assert compiled(x).tolist() == body(x).tolist()
    assert len(compiled.executables) == 2
    stats = compiled.stats()
    assert stats.eager_calls == 0 and stats.value_check_failures == 3, stats


def test_float_of_a_traced_tensor_specializes_and_fullgraph_refuses_it():
    def body(x):
        return x * float(x.sum())

    x = autojit.tensor([1.0, 2.0])
    with pytest.raises(GraphBreak, match="float"):
        autojit.compile(body, fullgraph=True)(x)
    compiled = autojit.compile(body)
    for values in ([1.0, 2.0], [1.0, 2.0], [2.0, 2.0]):
        x = autojit.tensor(values)
        assert compiled(x).tolist() == body(x).tolist()
    assert compiled.stats().compiled_calls == 3 and len(compiled.executables) == 2


def test_a_stored_item_runs_eagerly():
    history = []

    def f(x):
        total = (x * 2).sum()
        history.append(total.item())
        return total

    compiled = autojit.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for _ in range(3):
            compiled(autojit.tensor([1.0, 2.0]))
    assert history == [6.0, 6.0, 6.0]
    assert all(type(value) is float for value in history)


def test_values_read_from_captured_tensors_are_never_stale(capsys):
    """A captured tensor's .item() is read on every call, a print shows the value before a
    later in-place write, and a Python decision on a captured tensor's values is guarded."""
    scale = autojit.tensor(1.0)
    weights = autojit.tensor([1.0, 2.0])

    def f(x):
        print(weights.tolist())
        weights.add_(x)
        factor = 2.0 if float(scale) > 0 else -2.0
        return x * scale.item() * factor, weights.sum().item()

    compiled = autojit.compile(f)
    x = autojit.tensor([1.0, 1.0])
    assert compiled(x)[0].tolist() == [2.0, 2.0]
    scale.fill_(-3.0)
    assert compiled(x)[0].tolist() == [6.0, 6.0]
    assert compiled(x)[1] == 9.0
    assert capsys.readouterr().out.splitlines() == ["[1.0, 2.0]", "[2.0, 3.0]", "[3.0, 4.0]"]


@pytest.mark.parametrize("pattern", ["return", "print", "tolist", "scale"])
def test_logging_patterns_stay_compiled(pattern, capsys):
    """30 calls of a training step that logs its loss: at least 28 run compiled."""
    autojit.manual_seed(0)
    model = autojit.nn.Linear(3, 1)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.01)
    x, y = autojit.ones(4, 3), autojit.zeros(4, 1)

    def step(x, y):
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if pattern == "print":
            print(f"{loss.item():.4f}")
        if pattern == "tolist":
            return model.weight.detach().tolist()
        if pattern == "scale":
            return loss.detach() * loss.item()
        return loss.item()

    compiled = autojit.compile(step)
    for _ in range(30):
        compiled(x, y)
    stats = compiled.stats()
    assert stats.calls == 30 and stats.compiled_calls >= 28, stats
    assert stats.graph_breaks == 0
