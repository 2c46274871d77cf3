"""Splitting a graph into segments at the decisions its trace made on graph values.

A trace decides some things on values the graph computes (`if loss.item() > 10:`, the size a
`nonzero` takes, text Python reads): the decision is a check of those values on every run
(tensor/symbolic.py's ValueCheck), and nothing computed after it in the trace may take effect
unless the check holds. `split(graph, boundaries)` cuts the graph, as a pure function, into
segments run in order (compiler/segments.py runs them, checking after each):

- segment k computes what the checks at boundary k read (the outputs named in
  `boundaries[k]`) that no earlier segment computed, and returns those values as "check"
  outputs, and as "carry" outputs the values it computes that a later segment reads;
- the last segment computes everything else and returns the graph's outputs, in order, so
  that whoever reads them sees the graph's own outputs;
- every segment takes all of the graph's inputs (in order, so the same arrays are supplied to
  each: the call's arguments, random draws made once per run, runtime scalars), then the
  values it reads from earlier segments as "carried" inputs.

So no segment computes anything on a branch the run has not yet been checked to take, and only
the last one writes in place into a tensor from outside (codegen/schedule/in_place.py stores
nothing in place in a graph with "check" outputs). See docs/notes/segments.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .graph import Graph, Value


@dataclass
class Segment:
    """One segment: its graph, and where each of its "carried" inputs comes from ((segment
    number, output position) in order); `checks` are the output names the checks after it
    read."""

    graph: Graph
    carried: list = field(default_factory=list)
    checks: list = field(default_factory=list)


def split(graph: Graph, boundaries: list) -> list[Segment]:
    """The segments of `graph` (see the module docstring); `boundaries` holds, per check
    boundary in order, the names of the outputs its checks read."""
    outputs = {output.name: output for output in graph.outputs}
    node_of = {id(node.output): index for index, node in enumerate(graph.nodes)}
    segment_of: dict = {}  # node index -> segment number
    for number, names in enumerate(boundaries):
        stack = [outputs[name].value for name in names if name in outputs]
        while stack:
            value = stack.pop()
            index = node_of.get(id(value))
            if index is None or index in segment_of:
                continue
            segment_of[index] = number
            stack.extend(operand for operand in graph.nodes[index].inputs
                         if isinstance(operand, Value))
    last = len(boundaries)
    made_in = {}  # id(Value) -> the segment that computes it
    for index, node in enumerate(graph.nodes):
        made_in[id(node.output)] = segment_of.get(index, last)
    # Values each segment reads from an earlier one (the last one: for the outputs too).
    reads: list = [dict() for _ in range(last + 1)]
    for index, node in enumerate(graph.nodes):
        number = segment_of.get(index, last)
        for operand in node.inputs:
            if isinstance(operand, Value) and made_in.get(id(operand), number) < number:
                reads[number][id(operand)] = operand
    for output in graph.outputs:
        if made_in.get(id(output.value), last) < last:
            reads[last][id(output.value)] = output.value
    for number, names in enumerate(boundaries):  # a checked value an earlier segment made
        for name in names:
            value = outputs[name].value if name in outputs else None
            if value is not None and made_in.get(id(value), number) < number:
                reads[number][id(value)] = value
    carried_out: list = [[] for _ in range(last + 1)]  # per segment: the values it hands on
    for number in range(last + 1):
        for key, value in reads[number].items():
            source = made_in[key]
            if value not in carried_out[source]:
                carried_out[source].append(value)
    segments, positions = [], {}  # id(Value) -> (segment, output position) of a carry
    for number in range(last + 1):
        segment_graph = Graph()
        mapping = {}
        for entry in graph.inputs:
            mapping[id(entry.value)] = segment_graph.add_input(
                entry.value.shape, entry.value.dtype, entry.kind, entry.name, entry.tensor)
        inputs = {id(old): new for old, new in zip(graph.inputs, segment_graph.inputs)}
        carried = []
        for key, value in reads[number].items():
            mapping[key] = segment_graph.add_input(value.shape, value.dtype, "carried",
                                                   f"carried{value.id}")
            carried.append(positions[key])
        for index, node in enumerate(graph.nodes):
            if segment_of.get(index, last) != number:
                continue
            made = segment_graph.add_node(
                node.op, [mapping[id(operand)] if isinstance(operand, Value) else operand
                          for operand in node.inputs],
                node.attrs, node.output.shape, node.output.dtype)
            mapping[id(node.output)] = made
            for ids, copied in ((graph.backward_ids, segment_graph.backward_ids),
                                (graph.recompute_ids, segment_graph.recompute_ids),
                                (graph.checkpoint_ids, segment_graph.checkpoint_ids)):
                if node.output.id in ids:
                    copied.add(made.id)
        checks = []
        if number < last:
            for name in boundaries[number]:
                if name in outputs:
                    segment_graph.add_output(mapping[id(outputs[name].value)], name, "check")
                    checks.append(name)
        else:
            for output in graph.outputs:
                target = inputs[id(output.target)] if output.target is not None else None
                segment_graph.add_output(mapping[id(output.value)], output.name, output.kind,
                                         target)
        for value in carried_out[number]:
            positions[id(value)] = (number, len(segment_graph.outputs))
            segment_graph.add_output(mapping[id(value)], f"carry{value.id}", "carry")
        segments.append(Segment(segment_graph, carried, checks))
    return segments
