"""What a compiled function shows of itself: its counts, recompile reasons and graph breaks,
the latest executable's graphs as text (`ir`, `forward_ir`, `backward_ir`, each node marked
with the plan step that runs it) and as Graphviz DOT, its guards, fusion groups and kernel
source. CompiledFunction (api.py) takes these methods from `Inspection`; they read its
executables, counts and history, and change nothing.
"""

from __future__ import annotations

from ..ir.dot import DotPart, to_dot
from ..ir.graph import Graph
from ..ir.printer import format_graph
from .executable import Executable
from .segments import SegmentedPlan
from .stats import CompileStats


class Inspection:
    """The inspection methods of CompiledFunction (api.py)."""

    def stats(self) -> CompileStats:
        """A copy of the counts so far: calls, compiled_calls, eager_calls, traces,
        recompiles, graph_breaks, split_breaks, value_check_failures, and the segments of
        the executable the last compiled call ran (stats.py documents each)."""
        counts = self._stats.as_dict()
        plan = getattr(self._last_run, "plan", None) if self._stats.compiled_calls else None
        counts["segments"] = len(plan.segments) if isinstance(plan, SegmentedPlan) else \
            int(self._last_run is not None and self._stats.compiled_calls > 0)
        return CompileStats(**counts)

    @property
    def recompile_reasons(self) -> list:
        """What changed before each recompile, oldest first (the most recent 64)."""
        return list(self._history.recompile_reasons)

    @property
    def graph_breaks(self) -> list:
        """The graph breaks met (GraphBreakRecord: reason, filename, lineno), oldest first."""
        return list(self._history.graph_breaks)

    def _latest(self) -> Executable:
        if not self.executables:
            raise RuntimeError(f"{self.name()} has not been compiled yet: call it first")
        return self.executables[0]

    def ir(self, optimized: bool = True) -> str:
        """The latest executable's graph as text: forward and adjoint in one graph (for a
        function whose results are differentiated outside it, the joint graph that is split
        into the compiled forward and backward, see `forward_ir` and `backward_ir`)."""
        executable = self._latest()
        if not optimized:
            return str(executable.traced)
        if executable.joint is not None:
            return str(executable.joint)
        return _annotated(executable.graph, executable.plan)

    def forward_ir(self) -> str:
        """The graph the latest executable runs on each call, each node marked with the
        kernel (or product, or NumPy step) that runs it."""
        executable = self._latest()
        return _annotated(executable.graph, executable.plan)

    def backward_ir(self) -> str:
        """The compiled backward of the latest executable's results ("" when there is none),
        marked like forward_ir."""
        backward = self._latest().backward
        if backward is None:
            return ""
        return _annotated(backward.graph, getattr(backward, "plan", None))

    def graph_dot(self) -> str:
        """The latest executable's graphs as Graphviz DOT text: each kernel's nodes in a box
        named after it, forward nodes blue and backward (adjoint) nodes orange; a compiled
        backward is drawn beside the forward graph (ir/dot.py)."""
        executable = self._latest()
        plan = executable.plan
        parts = [DotPart(f"{self.name()}: forward" if executable.backward is not None else
                         self.name(), executable.graph,
                         plan.kernel_nodes() if hasattr(plan, "kernel_nodes") else {})]
        backward = executable.backward
        if backward is not None:
            backward_plan = getattr(backward, "plan", None)
            parts.append(DotPart(f"{self.name()}: backward", backward.graph,
                                 backward_plan.kernel_nodes()
                                 if hasattr(backward_plan, "kernel_nodes") else {}))
        return to_dot(parts, self.name())

    def render_graph(self, path: str, format: str = "svg") -> str:  # noqa: A002 - graphviz's
        """Render graph_dot() to `path` (without extension) as `format` (svg, png, pdf) with
        the `graphviz` Python package (pip install "autojit[graph]", and Graphviz's `dot`
        program); returns the file written."""
        try:
            import graphviz
        except ImportError as error:
            raise ImportError("render_graph needs the graphviz package: pip install "
                              "'autojit[graph]' (and Graphviz's dot program); graph_dot() "
                              "gives the DOT text without it") from error
        return graphviz.Source(self.graph_dot()).render(path, format=format, cleanup=True)

    def guards(self, detail: bool = False) -> str:
        """The latest executable's guards, one condition per line with its reason; those on
        autojit's own state (modes, hook registries) only with `detail`."""
        return self._latest().guards.text(detail)

    def fusion_groups(self) -> str:
        plan = self._latest().plan
        if plan is None:
            return "(no kernel plan: interpreted)"
        program = getattr(plan, "program", None)
        if program:
            return f"{plan.describe()}\nnative program: {program.operation_count} native calls"
        if program is False:
            return f"{plan.describe()}\nPython loop: {plan.program_refusal}"
        return plan.describe()

    def kernel_source(self) -> str:
        plan = self._latest().plan
        return plan.llvm_ir() if plan is not None else ""


def _annotated(graph: Graph, plan) -> str:
    """The graph's text with each node marked by the plan step that runs it; a split graph's
    segments one after the other, with the checks between them (segments.py)."""
    if isinstance(plan, SegmentedPlan):
        return plan.text()
    labels = plan.node_labels() if hasattr(plan, "node_labels") else None
    return format_graph(graph, labels)
