"""Formatted tensors and scalars in functions with no source file (a script piped to
`python -`, `exec` of a string), compiled against eager: the text each call prints, logs,
warns, stores or returns is that call's, read from bytecode (ir/bytecode_uses.py) where
ir/source_uses.py has no source to read; text Python decides on still breaks the graph.
Also `warnings.warn` called through a name bound before compiling, which runs eagerly."""

from __future__ import annotations

import io
import logging
import warnings

import pytest

import autojit
from autojit import CompileWarning
from autojit.ir import GraphBreak

_STEP = """
import logging, warnings
log = logging.getLogger("autojit.tests.sourceless")

class Holder:
    pass

holder = Holder()
history = []

def step(x):
    loss = (x * x).sum()
    print(f"loss {loss}", "item", f"{loss.item():.3f}")
    msg = "mean %s" % loss.mean()
    log.info(msg)
    warnings.warn(f"loss is {loss.item():.2f}")
    history.append("sum " + str(loss))
    holder.text = f"last {loss:.1f}"
    return f"{loss:.4f}"
"""


def _run(source: str, wrap, calls):
    """exec `source` under a file name linecache has no text for, then call its `step`."""
    namespace = {}
    exec(compile(source, "<no source>", "exec"), namespace)  # noqa: S102
    step = wrap(namespace["step"])
    results = [step(autojit.tensor(values)) for values in calls]
    return namespace, step, results


def test_text_reaching_each_run_sinks_compiles_without_source(capsys):
    stream = io.StringIO()
    logger = logging.getLogger("autojit.tests.sourceless")
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    calls = [[1.0, 2.0], [0.5, -3.0], [2.0, 2.0]]
    runs = {}
    try:
        for name, wrap in (("eager", lambda fn: fn),
                           ("compiled", lambda fn: autojit.compile(fn, fullgraph=True))):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                namespace, step, results = _run(_STEP, wrap, calls)
            runs[name] = (results, namespace["history"], namespace["holder"].text,
                          [str(w.message) for w in caught], capsys.readouterr().out,
                          stream.getvalue())
            stream.truncate(0)
            stream.seek(0)
            if name == "compiled":
                assert step.stats().compiled_calls == len(calls)
    finally:
        logger.removeHandler(handler)
    assert runs["compiled"] == runs["eager"]
    results, history, text, warned, out, logged = runs["eager"]
    assert results == ["5.0000", "9.2500", "8.0000"] and text == "last 8.0"
    assert warned == ["loss is 5.00", "loss is 9.25", "loss is 8.00"]
    assert out.splitlines()[0] == "loss 5.0 item 5.000"
    assert logged.splitlines() == ["mean tensor(5.)", "mean tensor(9.2500)", "mean tensor(8.)"]
    assert history == ["sum tensor(5.)", "sum tensor(9.2500)", "sum tensor(8.)"]


@pytest.mark.parametrize("body", [
    "text = f'{loss}'\n    return x * 2 if text.startswith('-') else x",  # decided on
    "print(f'{loss}', file=buffer)",  # another stream
    "print('%8s' % loss)",  # padding computed on the text
    "holder = {}\n    holder['t'] = f'{loss}'\n    return holder",  # a dict the call made
])
def test_text_python_decides_on_breaks_the_graph_without_source(body):
    source = f"import io\nbuffer = io.StringIO()\n\ndef step(x):\n    loss = x.sum()\n    {body}\n"
    with pytest.raises(GraphBreak, match="formatted|print"):
        _run(source, lambda fn: autojit.compile(fn, fullgraph=True), [[1.0]])


def test_warn_bound_by_name_runs_eagerly_with_every_calls_warning():
    def step(x):
        loss = x.sum()
        warn(f"loss {loss.item()}")
        return loss

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = autojit.compile(step)
        for value in (1.0, 2.0, 3.0):
            compiled(autojit.tensor([value]))
    messages = [str(w.message) for w in caught if w.category is not CompileWarning]
    assert messages == ["loss 1.0", "loss 2.0", "loss 3.0"]
    assert any("name bound before compiling" in str(w.message) for w in caught
               if w.category is CompileWarning)
    with pytest.raises(GraphBreak, match="from warnings import warn"):
        autojit.compile(step, fullgraph=True)(autojit.tensor([1.0]))


warn = warnings.warn
