"""A tqdm progress bar updated inside a compiled step (ir/deferred_calls.py): its calls are made
by every run with that run's values, its state is no part of the trace. Against the same
program run eagerly: the bar's count, postfix, description and the lines written through
tqdm.write, with one trace and no eager call; reading the bar's state inside the step is a
graph break (eager, with a warning), never a stale value."""

from __future__ import annotations

import io
import warnings

import pytest

import autojit
from autojit import CompileWarning

tqdm = pytest.importorskip("tqdm").tqdm


def _program(compiled: bool, reads: bool = False, bars: int = 1, calls: int = 6):
    autojit.manual_seed(0)
    model = autojit.nn.Linear(4, 1)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
    x, y = autojit.randn(8, 4), autojit.randn(8, 1)
    out = io.StringIO()
    state = {"bar": None, "seen": []}

    def step():
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        bar = state["bar"]
        bar.set_postfix(loss=loss.item(), lr=0.1)
        bar.set_description(f"loss {loss.item():.3f}")
        bar.update(1)
        if reads:
            state["seen"].append(bar.n)
        tqdm.write(f"step loss {loss.item():.5f}")
        return loss.detach()

    function = autojit.compile(step) if compiled else step
    finished = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(bars):
            state["bar"] = tqdm(total=calls, file=out, mininterval=0)
            for _ in range(calls):
                function()
            bar = state["bar"]
            finished.append((bar.n, bar.postfix, bar.desc))
    compile_warnings = [str(w.message) for w in caught if issubclass(w.category,
                                                                      CompileWarning)]
    return finished, state["seen"], function, compile_warnings


def test_a_bar_inside_a_compiled_step_is_updated_by_every_run(capsys):
    eager = _program(False)
    eager_lines = [line for line in capsys.readouterr().out.splitlines() if "step loss" in line]
    compiled = _program(True)
    compiled_lines = [line for line in capsys.readouterr().out.splitlines()
                      if "step loss" in line]
    assert compiled[0] == eager[0]
    assert compiled[0][0] == (6, eager[0][0][1], eager[0][0][2])
    assert len(compiled_lines) == len(eager_lines) == 6
    # the texts formatted from each run's loss: eager's, but for the last digit's rounding
    assert [line[:-2] for line in compiled_lines] == [line[:-2] for line in eager_lines]
    stats = compiled[2].stats()
    assert (stats.traces, stats.eager_calls, stats.value_check_failures) == (1, 0, 0)
    assert compiled[3] == []


def test_a_new_bar_is_a_new_trace_whose_runs_update_it():
    eager = _program(False, bars=2, calls=3)
    compiled = _program(True, bars=2, calls=3)
    assert compiled[0] == eager[0] and [bar[0] for bar in compiled[0]] == [3, 3]
    assert compiled[2].stats().traces == 2


def test_reading_the_bars_state_in_the_step_runs_it_eagerly_with_a_warning():
    eager = _program(False, reads=True)
    compiled = _program(True, reads=True)
    assert compiled[1] == eager[1] == [1, 2, 3, 4, 5, 6]
    assert compiled[0] == eager[0]
    assert any("reading tqdm.n of a progress bar inside a compiled function" in text
               for text in compiled[3])


def test_other_objects_update_and_write_methods_keep_their_meaning():
    """The bar's method names are common ones: a dict's `update` beside a logged loss leaves
    the logged text each run's (one trace), and text written to a stream with `write` is
    still made from the traced value, not a bar's deferred text (checked on every call)."""
    import logging

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    log = logging.getLogger("progress-bar-test")
    log.setLevel(logging.INFO)
    log.propagate = False
    log.addHandler(Keep())
    stream = io.StringIO()
    x = autojit.tensor([1.0, 2.0, 3.0])
    stats = {}

    def step(x):
        loss = (x * x).sum()
        log.info(f"loss {loss.item():.2f}")
        stats.update(seen=True)
        return loss

    def written(x):
        loss = (x * x).sum()
        stream.write(f"wrote {loss.item():.1f}\n")
        return loss

    compiled, compiled_written = autojit.compile(step), autojit.compile(written)
    for scale in (1.0, 2.0, 3.0):
        compiled(x * scale)
        compiled_written(x * scale)
    assert records == ["loss 14.00", "loss 56.00", "loss 126.00"]
    assert stats == {"seen": True}
    assert compiled.stats().value_check_failures == 0  # the logged text: each run's tokens
    assert stream.getvalue() == "wrote 14.0\nwrote 56.0\nwrote 126.0\n"
    assert compiled_written.stats().value_check_failures > 0  # the text was decided on
