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

from ..ir.graph import Value
from ..ir.interpreter import interpret
from ..ir.printer import format_graph
from ..tensor.symbolic import symbols_in


def boundaries(env, graph=None) -> list:
    """(output names, checks) per boundary, in the order the trace decided: a check whose
    values earlier boundaries already compute joins the latest boundary. With the traced
    `graph`, the range check of a size the graph computes (shape_env.size_from_value) joins
    the latest boundary too where that one was opened by another such check and its value
    does not depend on the sizes bound there: a Mixture-of-Experts router's counts are
    computed in one segment and bound together, rather than one segment each."""
    unbacked = {size.condition: name for name, size in env.unbacked.items()}
    key = (id(graph), len(env.value_checks))
    kept = env.__dict__.get("_boundaries")
    if unbacked and kept is not None and kept[0] == key:
        return kept[1]  # each binding of the sizes the graph computes asks again
    found: list = []
    computed: set = set()
    bound_at: list = []  # per boundary: the size symbols its range checks bind
    depends = symbols_of_outputs(graph) if graph is not None and unbacked else {}
    for check in env.value_checks:
        names = [env.leaves[name].output for name in sorted(check.names) if name in env.leaves]
        new = [name for name in names if name not in computed]
        bound = unbacked.get(check.condition) if check.kind == "size" else None
        if found and (not new or bound is not None and found[-1][1][0].kind == "size" and
                      not any(depends.get(name, set()) & bound_at[-1] for name in new)):
            found[-1][0].extend(new)
            found[-1][1].append(check)
        else:
            found.append((new, [check]))
            bound_at.append(set())
        if bound is not None:
            bound_at[-1].add(bound)
        computed.update(new)
    if unbacked:
        env._boundaries = (key, found)
    return found


def symbols_of_outputs(graph) -> dict:
    """Output name -> the size symbols in the shapes and attributes of the nodes its value is
    computed from (a traced graph's, before a binding is substituted)."""
    symbols: dict = {}
    for entry in graph.inputs:
        symbols[id(entry.value)] = symbols_in(entry.value.shape)
    for node in graph.nodes:
        found = symbols_in(node.output.shape) | symbols_in(node.attrs)
        for operand in node.inputs:
            found |= symbols.get(id(operand), set()) if isinstance(operand, Value) else \
                symbols_in(operand)
        symbols[id(node.output)] = found
    return {output.name: symbols.get(id(output.value), set()) for output in graph.outputs}


class ValueCheckFailed(Exception):
    """A decision the trace made on a graph value went the other way in this run (or the run
    failed before the decision could be checked): nothing was written back."""

    def __init__(self, check, reason: str | None = None):
        self.check = check
        if reason is None:
            where = f" at {check.where[0]}:{check.where[1]}" if check.where else ""
            reason = f"a value the trace decided on changed{where}: {check.condition} no " \
                "longer holds"
        super().__init__(reason)


class Rebind(ValueCheckFailed):
    """The sizes a run's graph computed (shape_env.UnbackedSize) are not those its executable
    was compiled for: `values` maps each size symbol bound at the boundary to the run's
    value; `state` is the run's state there (SegmentedPlan.run_owning). Nothing was written
    back; unbacked_sizes.py goes on with the executable for those values."""

    def __init__(self, values: dict):
        super().__init__(None, f"the sizes the graph computed are not the executable's: "
                         f"{values}")
        self.values = values
        self.state = None


class SegmentedPlan:
    """The plans of a split graph's segments, run in order with the checks between them."""

    def __init__(self, segments: list, plans: list, checks: list):
        self.segments = segments  # ir/segments.Segment per segment
        self.plans = plans  # per segment: a backend's plan, or None for the interpreter
        self.checks = checks  # per boundary: the ValueChecks run after that segment
        self._check_positions = [
            [(index, output.name) for index, output in enumerate(segment.graph.outputs)
             if output.kind == "check"] for segment in segments]

    def run_owning(self, supplied: list, check, resume=None) -> tuple:
        """The last segment's outputs (the graph's) and the positions it owns; `check(number,
        arrays by output name)` runs boundary `number`'s checks, raising when one fails. A
        check sees the values read at its boundary and every earlier one (`start == end` over
        two elements of a tolist() compares one read before with one read now).

        A check that finds the sizes the graph computed other than this plan's (an
        executable.Rebind) is given the run's state, (boundary, results, values read), which
        `resume` takes to go on after that boundary in a plan whose segments up to it are
        these (unbacked_sizes.py)."""
        results = []
        read: dict = {}
        start = 0
        if resume is not None:
            number, done, before = resume
            results, read, start = list(done), dict(before), number + 1
        last = len(self.segments) - 1
        for number in range(start, last + 1):
            segment = self.segments[number]
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
            try:
                check(number, dict(read))
            except Rebind as rebind:
                rebind.state = (number, results, read)
                raise
        raise AssertionError("a split graph has a last segment")

    def same_until(self, other: SegmentedPlan, number: int) -> bool:
        """Whether this plan's segments up to `number` compute and hand on what `other`'s do,
        so that its later segments can take their results (unbacked_sizes.py): the same
        Segments (binding_plans.py shares them between bindings), else the same text."""
        if len(other.segments) == len(self.segments) and all(
                mine is theirs for mine, theirs in zip(self.segments[:number + 1],
                                                       other.segments[:number + 1])):
            return True
        return self.signature(number) == other.signature(number)

    def signature(self, number: int) -> tuple:
        """What segments up to `number` compute and hand on, to tell whether another plan's
        later segments can take their results (unbacked_sizes.py)."""
        texts = self.__dict__.setdefault("_signatures", {})
        if number not in texts:
            texts[number] = tuple((format_graph(segment.graph), tuple(segment.carried))
                                  for segment in self.segments[:number + 1])
        return texts[number]

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
        kind = {"value": "graph break, the trace specialized on a value",
                "size": "graph break, a size the graph computes: later segments are compiled "
                        "for its value"}.get(check.kind, "the branch taken")
        lines.append(f"# --- checked before the next segment ({kind}): {check.condition}  "
                     f"# {where}")
    return "\n".join(lines)
