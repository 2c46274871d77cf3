"""A logger inside a compiled function is guarded on what decides whether a call logs (its
level, its parents' levels, `disabled`, `logging.disable`), and on its handlers and filters;
not on logging's registry of every logger nor its level cache (compiler/recorder.py's
`_logger`, reachability.py's `_logging_attributes`). A logger made after the first compile,
as the compiler's own imports make `concurrent.futures`' logger, traced the function again;
one whose cache logging refilled made every call change state, so the function ran eagerly.
Each program runs eagerly and compiled, and the records must be the same."""

import io
import logging

import autojit


def _program(compiled: bool):
    stream, other = io.StringIO(), io.StringIO()
    log = logging.getLogger(f"autojit.tests.guards.{compiled}")
    log.setLevel(logging.INFO)
    log.propagate = False
    handler = logging.StreamHandler(stream)
    log.addHandler(handler)
    weight = autojit.ones(3, requires_grad=True)

    def step(x):
        loss = (weight * x).sum()
        log.info("loss %.1f", loss.item())
        log.debug("debug %.1f", loss.item())
        return loss

    function = autojit.compile(step) if compiled else step
    seen = []

    def call(label: str, value: float = 1.0) -> None:
        function(autojit.full((3,), value))
        seen.append((label, stream.getvalue().splitlines(), other.getvalue().splitlines()))
        for buffer in (stream, other):
            buffer.truncate(0)
            buffer.seek(0)

    root_level = logging.getLogger().level
    try:
        call("first")
        call("second", 2.0)
        for index in range(5):  # loggers made after the compile: no new trace
            logging.getLogger(f"autojit.tests.guards.made{index}")
        call("new loggers", 3.0)
        traces_before = function.stats().traces if compiled else None
        log.setLevel(logging.WARNING)
        call("warning level")
        log.setLevel(logging.DEBUG)
        call("debug level")
        logging.disable(logging.INFO)
        call("disabled")
        logging.disable(logging.NOTSET)
        log.addHandler(logging.StreamHandler(other))
        call("two handlers")
        log.level = logging.NOTSET  # its parent's level decides (the root's)
        log.manager._clear_cache()
        logging.getLogger().setLevel(logging.WARNING)
        call("root warning")
        logging.getLogger().setLevel(logging.INFO)
        call("root info")
        log.disabled = True
        call("logger disabled")
    finally:
        logging.disable(logging.NOTSET)
        logging.getLogger().setLevel(root_level)
        log.handlers.clear()
    return seen, function, traces_before


def test_logging_compiled_as_eager():
    eager, _, _ = _program(False)
    compiled, function, traces_before = _program(True)
    assert compiled == eager
    assert eager[0] == ("first", ["loss 3.0"], [])
    assert eager[4][1] == ["loss 3.0", "debug 3.0"]  # debug level
    assert eager[5][1] == []  # logging.disable(INFO)
    stats = function.stats()
    assert traces_before == 1  # loggers made after the compile traced nothing again
    assert stats.eager_calls == 0 and stats.compiled_calls == len(compiled)
