"""A graph as a picture: Graphviz DOT text, with nodes grouped into clusters and coloured by
the part of the program they belong to.

`to_dot(parts)` draws one or more graphs (a compiled function's forward graph and its compiled
backward graph, say) side by side. Each part names its graph, a cluster label per node (the
kernel that runs it: `k3_tanh_mul_sum`; nodes of one kernel are drawn in one box). A node is
coloured as backward when the tracer recorded it during a backward pass, or it belongs to a
compiled backward graph without being a recomputed forward value (`Graph.backward_ids`);
inputs and outputs are drawn apart. The text renders with Graphviz's `dot`, or with the
`graphviz` Python package (compiler/api.py: `CompiledFunction.render_graph`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .graph import Graph, Value
from .printer import format_literal

FORWARD_COLOUR = "#dbe8ff"
BACKWARD_COLOUR = "#ffe0cc"
INPUT_COLOUR = "#eeeeee"


@dataclass
class DotPart:
    """One graph to draw: `clusters` maps id(node) to the label of its group (a kernel)."""
    title: str
    graph: Graph
    clusters: dict = field(default_factory=dict)


def _quote(text: str) -> str:
    """A DOT string; `\\n` in `text` stays DOT's line break."""
    return '"' + text.replace('"', '\\"') + '"'


def _node_label(node) -> str:
    output = node.output
    operands = " ".join(format_literal(operand) for operand in node.inputs
                        if not isinstance(operand, Value))
    attributes = " ".join(f"{name}={format_literal(value)}" for name, value in
                          node.attrs.items())
    details = " ".join(part for part in (operands, attributes) if part)
    head = f"%{output.id} = {node.op.name}" + (f" {details}" if details else "")
    return head + "\\n" + output.type_text


def to_dot(parts: list, name: str = "graph") -> str:
    """DOT text drawing `parts` (DotPart) as one digraph."""
    lines = [f"digraph {_quote(name)} {{", "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fontname="monospace", fontsize=10];',
             '  edge [color="#555555"];']
    for index, part in enumerate(parts):
        prefix = f"p{index}_"
        lines.append(f"  subgraph {_quote('cluster_' + prefix + 'part')} {{")
        lines.append(f"    label={_quote(part.title)}; style=solid; color=\"#999999\";")
        for entry in part.graph.inputs:
            label = _quote(entry.name + "\\n" + entry.value.type_text)
            lines.append(f"    {prefix}v{entry.value.id} [label={label}, shape=ellipse, "
                         f"fillcolor=\"{INPUT_COLOUR}\"];")
        grouped: dict = {}
        for node in part.graph.nodes:
            grouped.setdefault(part.clusters.get(id(node)), []).append(node)
        for label, nodes in grouped.items():
            indent = "    "
            if label is not None:
                cluster = _quote(f"cluster_{prefix}{label}")
                lines.append(f"    subgraph {cluster} {{")
                lines.append(f"      label={_quote(label)}; style=dashed; color=\"#3355aa\";")
                indent = "      "
            for node in nodes:
                backward = node.output.id in part.graph.backward_ids
                colour = BACKWARD_COLOUR if backward else FORWARD_COLOUR
                lines.append(f"{indent}{prefix}v{node.output.id} [label="
                             f"{_quote(_node_label(node))}, fillcolor=\"{colour}\"];")
            if label is not None:
                lines.append("    }")
        for position, output in enumerate(part.graph.outputs):
            label = _quote(f"{output.name}\\n({output.kind})")
            lines.append(f"    {prefix}out{position} [label={label}, shape=note, "
                         "fillcolor=\"white\"];")
        lines.append("  }")
        for node in part.graph.nodes:
            for operand in node.inputs:
                if isinstance(operand, Value):
                    lines.append(f"  {prefix}v{operand.id} -> {prefix}v{node.output.id};")
        for position, output in enumerate(part.graph.outputs):
            lines.append(f"  {prefix}v{output.value.id} -> {prefix}out{position};")
    lines.append("}")
    return "\n".join(lines) + "\n"
