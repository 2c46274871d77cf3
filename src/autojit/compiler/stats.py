"""What a compiled function counted while it ran: `compiled.stats()` (CompileStats) and the
graph breaks and recompiles it met, which api.py records on each call and explain.py reports.

These sit beside the compiled function's calls (api.py) and read nothing of the graphs: a
program asserts on them in CI that a step stays compiled (`stats().eager_calls == 0`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CompileStats:
    """The counts of one compiled function (keyword calls included).

    calls           calls of the compiled function from outside a trace
                    (compiled_calls + eager_calls + state_calls; a call inlined into another
                    compiled function's trace is counted by that function only)
    compiled_calls  calls that ran a traced graph (compiled kernels, or the reference
                    interpreter for a trace that serves its own call only)
    eager_calls     calls that ran the Python function eagerly: graph breaks, a function that
                    gave up compiling, backend="eager" or AUTOJIT_DISABLE=1, and the patterns
                    one graph run cannot give (docs/compiler.md)
    state_calls     first calls run eagerly, untraced, because they make the state an
                    object keeps (an optimizer's first step): traced, such a call would
                    serve itself only (docs/notes/guards.md); not a fallback
    traces          times the function was traced (the first compile, each recompile, and a
                    trace that stopped on a graph break)
    recompiles      traces made because no executable's guards held for a call
    graph_breaks    traces that stopped on a graph break (the call ran eagerly)
    split_breaks    graph breaks compiled as a split of the graph instead: a value Python
                    needed (`int(t)`, `nonzero`, text it read), which the trace specialized
                    on, checked between segments on every run (segments.py)
    value_check_failures  compiled runs whose decision on a graph value (`if loss.item() >
                    10:`, a split break's value) went another way than traced: nothing was
                    written back, and the call ran another executable, traced again or ran
                    eagerly
    segments        the graphs the executable of the last compiled call runs: 1, or one more
                    than the decisions on graph values it checks between them
    """

    calls: int = 0
    compiled_calls: int = 0
    eager_calls: int = 0
    state_calls: int = 0
    traces: int = 0
    recompiles: int = 0
    graph_breaks: int = 0
    split_breaks: int = 0
    value_check_failures: int = 0
    segments: int = 0

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True)
class GraphBreakRecord:
    """One graph break: what the trace needed, and the user's line that asked for it."""

    reason: str
    filename: str | None
    lineno: int | None
    source: str = ""
    split: bool = False  # compiled as a split of the graph, not run eagerly

    @property
    def where(self) -> str:
        return f"{self.filename}:{self.lineno}" if self.filename is not None else "<unknown>"


@dataclass
class CompileHistory:
    """The events a compiled function keeps for explain(): the graph breaks and recompile
    reasons, newest last, and the executables built while `recording` (explain's run)."""

    graph_breaks: list = field(default_factory=list)
    recompile_reasons: list = field(default_factory=list)
    recording: list | None = None  # the executables built while explain() runs the function

    # A long-running program meets a graph break on every call of a function that breaks
    # once per call; the history keeps the most recent ones only.
    LIMIT = 64

    def add_break(self, record: GraphBreakRecord) -> None:
        self.graph_breaks.append(record)
        del self.graph_breaks[:-self.LIMIT]

    def add_recompile(self, reason: str) -> None:
        self.recompile_reasons.append(reason)
        del self.recompile_reasons[:-self.LIMIT]
