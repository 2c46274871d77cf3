"""Running an executable whose graph is split into segments (ir/segments.py), checking the
trace's decisions on graph values between them.

A trace that decided something on a value its graph computes (a branch on `loss.item()`, a
size `nonzero` found, text Python read) holds *value checks* (tensor/symbolic.py). The graph is
cut at them: segment k computes what the checks at boundary k read, the checks run, and only
then does segment k + 1 run; the last segment computes the rest and returns the graph's
outputs. A check that fails raises executable.ValueCheckFailed before any later segment runs
and before anything is written back, so the call can run another way (api.py) with nothing
done twice. Each segment has a plan of its own (its kernels fused within it), or runs on the
reference interpreter.

`boundaries(env)` groups the checks into boundaries; `SegmentedPlan` runs the segments and
answers what inspection asks of a plan (api.py: `ir()`, `fusion_groups()`), segment by
segment. See docs/notes/segments.md.
"""

from __future__ import annotations

from ..ir.interpreter import interpret
from ..ir.printer import format_graph


def boundaries(env) -> list:
    """(output names, checks) per boundary, in the order the trace decided: a check whose
    values earlier boundaries already compute joins the latest boundary."""
    found: list = []
    computed: set = set()
    for check in env.value_checks:
        names = [env.leaves[name].output for name in sorted(check.names) if name in env.leaves]
        new = [name for name in names if name not in computed]
        if not new and found:
            found[-1][1].append(check)
            continue
        found.append((new, [check]))
        computed.update(new)
    return found


class SegmentedPlan:
    """The plans of a split graph's segments, run in order with the checks between them."""

    def __init__(self, segments: list, plans: list, checks: list):
        self.segments = segments  # ir/segments.Segment per segment
        self.plans = plans  # per segment: a backend's plan, or None for the interpreter
        self.checks = checks  # per boundary: the ValueChecks run after that segment
        self._check_positions = [
            [(index, output.name) for index, output in enumerate(segment.graph.outputs)
             if output.kind == "check"] for segment in segments]

    def run_owning(self, supplied: list, check) -> tuple:
        """The last segment's outputs (the graph's) and the positions it owns; `check(number,
        arrays by output name)` runs boundary `number`'s checks, raising when one fails. A
        check sees the values read at its boundary and every earlier one (`start == end` over
        two elements of a tolist() compares one read before with one read now)."""
        results = []
        read: dict = {}
        last = len(self.segments) - 1
        for number, segment in enumerate(self.segments):
            inputs = list(supplied)
            inputs.extend(results[source][position] for source, position in segment.carried)
            plan = self.plans[number]
            if plan is None:
                arrays, owned = interpret(segment.graph, *inputs), frozenset()
            else:
                arrays, owned = plan.run_owning(inputs)
            if number == last:
                return arrays, owned
            results.append(arrays)
            read.update((name, arrays[index]) for index, name in self._check_positions[number])
            check(number, dict(read))
        raise AssertionError("a split graph has a last segment")

    # ---- what inspection reads (api.py) ---------------------------------------------------------

    def describe(self) -> str:
        parts = []
        for number, plan in enumerate(self.plans):
            steps = plan.describe() if plan is not None else "(the reference interpreter)"
            parts.append(f"segment {number + 1} of {len(self.plans)}:\n{steps}")
            if number < len(self.checks):
                parts.append(_checks_text(self.checks[number]))
        return "\n".join(parts)

    def text(self, labels: bool = True) -> str:
        """Each segment's graph, marked with the steps that run its nodes, and the checks
        between them with the user's lines."""
        parts = []
        for number, (segment, plan) in enumerate(zip(self.segments, self.plans)):
            notes = plan.node_labels() if labels and plan is not None and \
                hasattr(plan, "node_labels") else None
            parts.append(f"# segment {number + 1} of {len(self.segments)}")
            parts.append(format_graph(segment.graph, notes))
            if number < len(self.checks):
                parts.append(_checks_text(self.checks[number]))
        return "\n".join(parts)

    def node_labels(self) -> dict:
        labels: dict = {}
        for plan in self.plans:
            if plan is not None and hasattr(plan, "node_labels"):
                labels.update(plan.node_labels())
        return labels

    def kernel_nodes(self) -> dict:
        nodes: dict = {}
        for plan in self.plans:
            if plan is not None and hasattr(plan, "kernel_nodes"):
                nodes.update(plan.kernel_nodes())
        return nodes

    def llvm_ir(self) -> str:
        return "\n\n".join(plan.llvm_ir() for plan in self.plans
                           if plan is not None and hasattr(plan, "llvm_ir"))

    @property
    def program(self):
        last = self.plans[-1]
        return getattr(last, "program", None) if last is not None else None

    @property
    def program_refusal(self):
        last = self.plans[-1]
        return getattr(last, "program_refusal", None) if last is not None else None


def _checks_text(checks: list) -> str:
    lines = []
    for check in checks:
        where = f"{check.where[0]}:{check.where[1]}" if check.where else "an unknown line"
        kind = "graph break, the trace specialized on a value" if check.kind == "value" else \
            "the branch taken"
        lines.append(f"# --- checked before the next segment ({kind}): {check.condition}  "
                     f"# {where}")
    return "\n".join(lines)
