"""Symbolic scalars inside a compiled function, against eager: `.item()` values that Python
stores, formats, logs, decides on and feeds to factories, ints and floats read on every call,
and the state a traced call writes. Each pattern gives eager's results on every call."""

from __future__ import annotations

import io
import json
import logging
import math
import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning
from autojit.ir import GraphBreak


def _both(make, calls, *, compile_options=None):
    """Run `make()`'s (function, state reader) eagerly and compiled on the same calls;
    return (eager results, compiled results, eager state, compiled state, compiled fn)."""
    outcomes = []
    for compiled in (False, True):
        autojit.manual_seed(0)
        function, read_state = make()
        if compiled:
            function = autojit.compile(function, **(compile_options or {}))
        results = [function(*call()) for call in calls]
        outcomes.append((results, read_state(), function))
    (eager, eager_state, _), (got, got_state, compiled) = outcomes
    return eager, got, eager_state, got_state, compiled


def _same(a, b):
    if isinstance(a, autojit.Tensor):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _same(a[key], b[key])
    elif isinstance(a, float):
        assert type(b) is float and b == pytest.approx(a, rel=1e-6, abs=1e-12)
    else:
        assert type(a) is type(b) and a == b


# ---- values stored in Python state are written back ----------------------------------------

def test_a_global_assigned_an_item_is_a_float_after_each_call():
    namespace = {}
    exec("LAST = None\n"
         "def step(x):\n"
         "    global LAST\n"
         "    LAST = x.sum().item()\n"
         "    return x * 2\n", namespace)
    step = autojit.compile(namespace["step"])
    for value in (1.0, 2.0, 3.0, 4.0):
        step(autojit.tensor([value, 1.0]))
        assert type(namespace["LAST"]) is float and namespace["LAST"] == value + 1
        assert namespace["LAST"] + 1 == value + 2
    assert step.stats().eager_calls == 0


def test_values_appended_and_accumulated_are_each_calls_values():
    def make():
        history, detached, context = [], [], {"total": 0.0, "steps": 0}

        class Meter:
            total = 0.0

        meter = Meter()

        def step(x):
            loss = (x * x).sum()
            history.append(loss.item())
            detached.append(loss.detach())
            context["total"] += loss.item()
            context["steps"] += 1
            meter.total = meter.total + loss.item() * 0.5
            return loss.item() * 0.1

        return step, lambda: (history, [t.item() for t in detached], dict(context), meter.total)

    calls = [lambda i=i: (autojit.tensor([float(i), 1.0]),) for i in range(8)]
    eager, got, eager_state, got_state, compiled = _both(make, calls)
    _same(eager, got)
    _same(eager_state, got_state)
    stats = compiled.stats()
    assert stats.eager_calls == 0 and stats.compiled_calls == 8, stats


def test_a_returned_object_holding_items_is_made_again_on_each_call():
    class Result:
        pass

    def step(x):
        result = Result()
        result.loss, result.scaled = x.sum().item(), x * 2
        return result

    compiled = autojit.compile(step)
    for value in (1.0, 2.0):
        got = compiled(autojit.tensor([value]))
        assert isinstance(got, Result) and got.loss == value
        assert got.scaled.tolist() == [2 * value]


# ---- formatted values ------------------------------------------------------------------------

def test_a_formatted_value_printed_and_stored_is_each_calls_text(capsys):
    def make():
        history = []

        def step(x):
            msg = f"loss {x.sum().item():.3f}"
            print(msg)
            history.append(msg)
            return msg

        return step, lambda: list(history)

    calls = [lambda v=v: (autojit.tensor([v]),) for v in (1.0, 2.5, -3.0)]
    eager, got, eager_state, got_state, compiled = _both(make, calls)
    assert got == eager == ["loss 1.000", "loss 2.500", "loss -3.000"]
    assert got_state == eager_state
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == out[3:] == eager
    assert compiled.stats().eager_calls == 0 and len(compiled.executables) == 1


def test_a_decision_on_formatted_text_is_made_on_each_calls_text():
    def step(x):
        text = f"{x.sum().item():.3f}"
        print(text)
        return x * 2 if text.startswith("-") else x * 3

    compiled = autojit.compile(step)
    for values in ([1.0], [-1.0], [2.0], [-1.0]):
        x = autojit.tensor(values)
        assert compiled(x).tolist() == step(x).tolist()


def test_padding_of_a_formatted_value_is_eagers(capsys):
    def step(x):
        value = x.sum().item()
        print(f"|{str(value):>8}|", str(value).rjust(8), f"{value:>8.2f}")

    for compiled in (autojit.compile(step), step):
        compiled(autojit.tensor([3.0]))
        compiled(autojit.tensor([12.5]))
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == out[2:] == ["|     3.0|      3.0     3.00", "|    12.5|     12.5    12.50"]


def test_logging_writes_each_calls_record_once():
    stream = io.StringIO()
    logger = logging.getLogger("autojit.tests.symbolic")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s %(funcName)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        def step(x):
            loss = x.sum()
            logger.info(f"loss {loss.item():.3f}")
            logger.info("loss %.2f at %d", loss.item(), 7)
            return loss

        for function in (step, autojit.compile(step)):
            for value in (1.0, 2.0, 3.0):
                function(autojit.tensor([value]))
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 12 and lines[:6] == lines[6:]
    assert lines[:2] == ["loss 1.000 step", "loss 1.00 at 7 step"]


def test_print_to_another_stream_runs_eagerly():
    def step(x):
        buffer = io.StringIO()
        print(f"{x.sum().item():.1f}", file=buffer)
        return buffer.getvalue()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        assert autojit.compile(step)(autojit.tensor([3.0])) == "3.0\n"
    with pytest.raises(GraphBreak, match="print"):
        autojit.compile(step, fullgraph=True)(autojit.tensor([3.0]))


# ---- what Python asks of a symbolic scalar ---------------------------------------------------

def test_an_item_is_a_python_number_to_isinstance_and_to_factories():
    def step(x):
        value = x.sum().item()
        count = (x > 0).sum().item()
        return (isinstance(value, float), isinstance(count, int), autojit.tensor(value),
                autojit.as_tensor(count), autojit.full((2,), value), x.new_full((2,), value),
                autojit.tensor([value, 2 * value]), math.exp(value), abs(-value))

    compiled = autojit.compile(step, fullgraph=True)
    for values in ([1.0, -2.0], [0.5, 0.25]):
        x = autojit.tensor(values)
        _same(step(x), compiled(x))
    assert len(compiled.executables) == 1


def test_json_of_an_item_runs_eagerly():
    def step(x):
        return json.dumps({"loss": x.sum().item()})

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        assert autojit.compile(step)(autojit.tensor([1.5])) == '{"loss": 1.5}'


def test_branches_on_items_are_checked_before_anything_is_written_back():
    weight = autojit.tensor([1.0, 2.0])

    def step(x):
        loss = (x * weight).sum()
        if loss.item() > 10:
            weight.mul_(0.5)  # only on the branch taken
        else:
            weight.add_(1.0)
        return loss.item()

    compiled = autojit.compile(step)
    eager_weight = autojit.tensor([1.0, 2.0])
    for value in (1.0, 5.0, 1.0, 5.0, 5.0, 1.0):
        got = compiled(autojit.tensor([value, value]))
        expected = (autojit.tensor([value, value]) * eager_weight).sum().item()
        if expected > 10:
            eager_weight.mul_(0.5)
        else:
            eager_weight.add_(1.0)
        assert got == expected and weight.tolist() == eager_weight.tolist()
    assert compiled.stats().eager_calls == 0 and len(compiled.executables) == 2


def test_a_branch_on_a_dropout_step_draws_the_same_numbers():
    def make():
        model = autojit.nn.Sequential(autojit.nn.Linear(4, 4), autojit.nn.Dropout(0.5))

        def step(x):
            out = model(x).sum()
            return out * 2 if out.item() > 0 else out * 3

        return step, lambda: autojit.rand(3).tolist()

    calls = [lambda: (autojit.ones(2, 4),)] * 6
    eager, got, eager_state, got_state, _ = _both(make, calls)
    _same(eager, got)
    assert eager_state == got_state  # the generator is where eager leaves it


# ---- ints and floats read on every call ------------------------------------------------------

def test_an_int_step_argument_used_in_prints_does_not_recompile(capsys):
    def step(x, i):
        if i % 10 == 0:
            print(f"step {i}: {x.sum().item():.2f}")
        return x * 2

    compiled = autojit.compile(step)
    for i in range(30):
        compiled(autojit.ones(2), i)
    assert capsys.readouterr().out.splitlines() == [f"step {i}: 2.00" for i in (0, 10, 20)]
    stats = compiled.stats()
    assert stats.compiled_calls == 30 and stats.traces <= 3, stats


@pytest.mark.parametrize("use", ["clamp", "isfinite", "sqrt", "floor"])
def test_a_float_read_on_every_call_through_math_does_not_retrace(use):
    """The conditions a float read on every call gets (clamp's check of its bound, the math
    module's predicates and functions) are checked on each call; they once failed to run
    (NameError) and retraced every call."""
    def step(x, eps):
        if use == "clamp":
            return x.clamp(min=eps) * 2
        if use == "isfinite":
            return x * 2 if math.isfinite(eps) else x
        if use == "sqrt":
            return x * 2 if math.sqrt(eps) > 0.05 else x * 3
        return x * 2 if math.floor(eps * 100) >= 1 else x * 3

    compiled = autojit.compile(step)
    for i in range(8):
        eps = 1e-3 * (i + 1)
        np.testing.assert_allclose(compiled(autojit.ones(2) * 0.002, eps).numpy(),
                                   step(autojit.ones(2) * 0.002, eps).numpy())
    stats = compiled.stats()
    assert stats.compiled_calls == 8 and stats.traces <= 3, stats


def test_a_scheduler_stepped_inside_the_step():
    def make():
        weight = autojit.ones(3, requires_grad=True)
        optimizer = autojit.optim.SGD([weight], lr=0.1)
        scheduler = autojit.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)

        def step(x):
            optimizer.zero_grad()
            loss = (weight * x).pow(2).sum()
            loss.backward()
            optimizer.step()
            scheduler.step()
            return loss.item(), scheduler.get_last_lr()

        return step, lambda: (weight.tolist(), scheduler.last_epoch,
                              optimizer.param_groups[0]["lr"])

    calls = [lambda: (autojit.tensor([1.0, 0.5, -1.0]),)] * 12
    eager, got, eager_state, got_state, compiled = _both(make, calls)
    _same(eager, got)
    _same(eager_state, got_state)
    assert (compiled.stats().state_calls, compiled.stats().compiled_calls) == (1, 11)


def test_recompile_reasons_show_the_new_shape():
    compiled = autojit.compile(lambda x: x * 2, dynamic=True)
    compiled(autojit.ones(3))
    compiled(autojit.ones(3, 2))
    assert compiled.recompile_reasons == ["args[0].shape: [*] -> [3, 2]"]


def test_lbfgs_inside_a_compiled_step_gives_eagers_steps():
    """Its history grows on every step: the function gives up compiling, with eager's values
    (the state it wrote is written back with paths named by the walk after the trace)."""
    def make():
        weight = autojit.tensor([1.0, -2.0], requires_grad=True)
        optimizer = autojit.optim.LBFGS([weight], lr=0.5, max_iter=4)

        def step():
            def closure():
                optimizer.zero_grad()
                loss = ((weight - 3) ** 2).sum()
                loss.backward()
                return loss
            return optimizer.step(closure)

        return step, weight

    results = []
    for compiled in (False, True):
        step, weight = make()
        function = autojit.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            results.append([(function().item(), weight.tolist()) for _ in range(4)])
    for (eager_loss, eager_weight), (loss, weight) in zip(*results):
        assert loss == pytest.approx(eager_loss, rel=1e-5, abs=1e-7)
        np.testing.assert_allclose(weight, eager_weight, rtol=1e-5)


def test_text_stored_and_read_back_is_never_a_placeholder():
    class State:
        message = ""

    state, history = State(), []

    def step(x):
        value = x.sum().item()
        local = {"text": f"{value:.1f}"}
        state.message = f"{value:.2f}"
        history.append(f"{value:.3f}")
        first = 1.0 if local["text"].startswith("-") else 2.0
        second = 1.0 if history[-1].startswith("-") else 2.0
        return x * first * second, state.message

    compiled = autojit.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for value in (1.0, -1.0, 2.0):
            x = autojit.tensor([value])
            got, expected = compiled(x), step(x)
            assert got[0].tolist() == expected[0].tolist() and got[1] == expected[1]
    assert history == [f"{value:.3f}" for value in (1.0, 1.0, -1.0, -1.0, 2.0, 2.0)]


def test_a_value_stored_in_a_slot_runs_eagerly_and_never_leaks():
    class Slotted:
        __slots__ = ("last",)

    holder = Slotted()
    holder.last = 0.0

    def step(x):
        holder.last = x.sum().item()
        return x * 2

    compiled = autojit.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        for value in (1.0, 2.0):
            compiled(autojit.tensor([value]))
            assert type(holder.last) is float and holder.last == value


def test_a_progress_bar_postfix_is_written_with_each_calls_text():
    """Text the code only assigns (never reads back) is written by each run, and what the
    place held before is not guarded: the step does not trace again on every call."""
    class Bar:
        def __init__(self):
            self.postfix = ""

        def set_postfix(self, **values):
            self.postfix = ", ".join(f"{key}={value:.3f}" for key, value in values.items())

    def make():
        bar = Bar()
        weight = autojit.ones(3, requires_grad=True)
        optimizer = autojit.optim.SGD([weight], lr=0.01)

        def step(x):
            optimizer.zero_grad()
            loss = (weight * x).pow(2).sum()
            loss.backward()
            optimizer.step()
            bar.set_postfix(loss=loss.item(), lr=optimizer.param_groups[0]["lr"])

        return step, lambda: bar.postfix

    postfixes = []
    for compiled in (False, True):
        step, read = make()
        function = autojit.compile(step) if compiled else step
        seen = []
        for _ in range(6):
            function(autojit.ones(3))
            seen.append(read())
        postfixes.append(seen)
    assert postfixes[0] == postfixes[1]
    stats = function.stats()  # the first call makes SGD's state, untraced
    assert (stats.traces, stats.state_calls, stats.compiled_calls) == (1, 1, 5)
