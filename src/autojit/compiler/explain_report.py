"""autojit.compiler.explain, defined here: what compiling a function on given arguments gives,
as torch._dynamo.explain reports it: the graphs traced (their number and the ops in each), the
graph breaks with their reasons and the user's lines, the guards, and the recompiles.

It sits on top of the compiled function's calls (api.py): the function is compiled afresh
(a compiled function's own executables are left alone), called once on the arguments with
graph breaks allowed, and what that call traced is read from the compiled function's
history (stats.py).
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field

from .api import CompiledFunction, CompileWarning
from .segments import SegmentedPlan
from .stats import CompileStats

__all__ = ["ExplainOutput", "explain"]


@dataclass
class ExplainOutput:
    """What explain found; `str()` gives it as a readable report.

    graphs          the traced graphs, as text (ir.md's format), one per trace that compiled,
                    or one per segment of a graph split where the trace decided on graph
                    values (its graph breaks compiled as splits, and its branches on them)
    graph_count     len(graphs)
    ops_per_graph   per graph, the number of nodes of each op ({"mul": 2, "sum": 1})
    op_count        the nodes of every graph together
    break_reasons   the graph breaks (stats.GraphBreakRecord: reason, filename, lineno,
                    and `split` for one compiled as a split rather than run eagerly)
    segment_checks  the checks between segments (tensor/symbolic.py's ValueCheck: its
                    condition, kind and user line)
    graph_break_count
    out_guards      per graph, its guards, one condition per line (as `f.guards()` shows)
    recompile_reasons  what changed before each recompile
    state_changing  (graph number, what changed) of the graphs whose trace changed the
                    structure of Python state (a first optimizer step creating its state):
                    each served its own call only; the report says so
    stats           the compiled function's counts (stats.CompileStats)
    compile_seconds the time spent compiling
    result          what the call returned
    """

    graphs: list = field(default_factory=list)
    ops_per_graph: list = field(default_factory=list)
    break_reasons: list = field(default_factory=list)
    out_guards: list = field(default_factory=list)
    recompile_reasons: list = field(default_factory=list)
    segment_checks: list = field(default_factory=list)
    # (graph number, what it changed) of traces that changed the structure of Python state
    # (a first optimizer step creating its state): each served its own call only.
    state_changing: list = field(default_factory=list)
    stats: CompileStats = field(default_factory=CompileStats)
    compile_seconds: float = 0.0
    result: object = None

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    @property
    def graph_break_count(self) -> int:
        return len(self.break_reasons)

    @property
    def op_count(self) -> int:
        return sum(sum(ops.values()) for ops in self.ops_per_graph)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            for number, record in enumerate(self.break_reasons, 1):
                lines.append(f"  Break Reason {number}:")
                lines.append(f"    Reason: {record.reason}"
                             + (" (compiled as a split graph)" if record.split else ""))
                lines.append(f"    User Line: {record.where}"
                             + (f": {record.source}" if record.source else ""))
        if self.segment_checks:
            lines.append("Checked between Segments:")
            for check in self.segment_checks:
                where = f"{check.where[0]}:{check.where[1]}" if check.where else "<unknown>"
                kind = {"value": "graph break (specialized)",
                        "size": "graph break (a size the graph computes)"}.get(check.kind,
                                                                              "branch")
                lines.append(f"  {kind}: {check.condition} at {where}")
        if self.ops_per_graph:
            lines.append("Ops per Graph:")
            for number, ops in enumerate(self.ops_per_graph, 1):
                listed = ", ".join(f"{name} x{count}" if count > 1 else name
                                   for name, count in ops.items())
                lines.append(f"  Ops {number}: {listed or '(none)'}")
        if self.out_guards:
            lines.append("Guards:")
            for number, guards in enumerate(self.out_guards, 1):
                lines.append(f"  Guards {number}:")
                lines.extend(f"    {line}" for line in guards.splitlines())
        for number, changed in self.state_changing:
            what = ", ".join(list(dict.fromkeys(changed))[:3])
            lines.append(f"Note: graph {number} changed the structure of state the function "
                         f"reads ({what}), as a first optimizer step that creates its state "
                         "does: it served that call only, and the next call traces the graph "
                         "later calls run. explain() a second call to see it.")
        if self.recompile_reasons:
            lines.append("Recompile Reasons:")
            lines.extend(f"  {reason}" for reason in self.recompile_reasons)
        stats = self.stats
        lines.append(f"Calls: {stats.calls} ({stats.compiled_calls} compiled, "
                     f"{stats.eager_calls} eager), traces: {stats.traces}")
        lines.append(f"Compile Time: {self.compile_seconds:.3f} s")
        return "\n".join(lines)


def explain(fn, *args, **kwargs):
    """Compile `fn` afresh and call it on `args` and `kwargs` with graph breaks allowed;
    return an ExplainOutput of what that call traced. As torch._dynamo.explain, with no
    arguments it returns a function that takes them: `explain(fn)(*args, **kwargs)` (the form
    a function of no arguments needs).

    `fn` may be a function, a callable object (an nn.Module), or a compiled function, whose
    options (backend, dynamic) are kept; its own executables are left as they are.
    """
    if not callable(fn):
        raise TypeError(f"explain expects a callable, got {type(fn).__name__}")

    def run(*call_args, **call_kwargs) -> ExplainOutput:
        return _explain(fn, call_args, call_kwargs)

    if args or kwargs:
        return run(*args, **kwargs)
    return run


def _explain(fn, args: tuple, kwargs: dict) -> ExplainOutput:
    options = {"backend": "cpu", "dynamic": None}
    if isinstance(fn, CompiledFunction):
        options = {"backend": fn.backend, "dynamic": fn.dynamic}
        fn = fn.user_function()
    compiled = CompiledFunction(fn, fullgraph=False, recompile_limit=8, **options)
    # A first call that makes an optimizer's state is traced here, not run eagerly as a
    # compiled function's is: the report shows that graph and says that it serves that call.
    compiled.first_trace = False
    recorded: list = []
    compiled._history.recording = recorded
    with warnings.catch_warnings():
        # The graph breaks are what the report lists; their warnings would say it twice.
        warnings.simplefilter("ignore", CompileWarning)
        result = compiled(*args, **kwargs)
    compiled._history.recording = None
    output = ExplainOutput(result=result, stats=compiled.stats(),
                           break_reasons=compiled.graph_breaks,
                           recompile_reasons=compiled.recompile_reasons,
                           compile_seconds=compiled.compile_seconds + sum(
                               variant.compile_seconds for variant in
                               compiled.__dict__.get("_keyword_variants", {}).values()))
    for executable in recorded:
        if getattr(executable, "state_changed", None):
            output.state_changing.append((len(output.graphs) + 1, executable.state_changed))
        plan = getattr(executable, "plan", None)
        # A split graph's segments are graphs of their own (segments.py), as torch's graph
        # breaks make several graphs; the checks between them are listed as boundaries.
        graphs = [segment.graph for segment in plan.segments] \
            if isinstance(plan, SegmentedPlan) else [executable.traced]
        for number, graph in enumerate(graphs):
            output.graphs.append(str(graph))
            output.ops_per_graph.append(dict(Counter(node.op.name for node in graph.nodes)))
            output.out_guards.append(str(executable.guards) if number == 0 else
                                     "(the guards of the segment before it, and the checks "
                                     "between them)")
        if isinstance(plan, SegmentedPlan):
            output.segment_checks.extend(check for checks in plan.checks for check in checks)
    return output
