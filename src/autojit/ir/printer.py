"""The IR's text form, jaxpr-like: what `str(graph)` prints and what the verifier quotes.

    graph(%0:f32[4,3] x, %1:f32[3] w, captured %2:f32[] c0) {
      %3:f32[4,3] = mul %0 %1
      %4:f32[4] = sum %3 dim=(1,) keepdim=False
      %5:f32[4] = mul %4 2.0
      return %5 out
    }

One line per node: the output values with their types, the op name, the operands (values as
`%id`, Python scalars as literals), then the attributes as `name=value`. Tuples print without
spaces so that every operand and attribute is one whitespace-free token. Line 0 is the header,
line i + 1 is node i, then the return line and the closing brace; the verifier relies on this.
"""

from __future__ import annotations

import math

from ..tensor import dtypes
from .graph import Graph, Node, Value


def format_literal(value) -> str:
    """A Python scalar, dtype, tuple or string as it appears in IR text."""
    if isinstance(value, Value):
        return f"%{value.id}"
    if isinstance(value, dtypes.DType):
        return value.short
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (tuple, list)):
        items = ",".join(format_literal(item) for item in value)
        if isinstance(value, list):
            return f"[{items}]"
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, dict):
        items = ",".join(f"{key}:{format_literal(item)}" for key, item in value.items())
        return "{" + items + "}"
    return repr(value)


def format_value(value: Value) -> str:
    return f"%{value.id}:{value.type_text}"


def format_node(node: Node) -> str:
    outputs = ", ".join(format_value(value) for value in node.outputs)
    parts = [f"{outputs} = {node.op.name}"]
    parts.extend(format_literal(operand) for operand in node.inputs)
    parts.extend(f"{name}={format_literal(value)}" for name, value in node.attrs.items())
    return " ".join(parts)


def format_header(graph: Graph) -> str:
    params = []
    for entry in graph.inputs:
        marker = "" if entry.kind == "arg" else entry.kind + " "
        params.append(f"{marker}{format_value(entry.value)} {entry.name}")
    return f"graph({', '.join(params)}) {{"


def format_return(graph: Graph) -> str:
    results = ", ".join(f"%{output.value.id} {output.name}" for output in graph.outputs)
    return f"return {results}" if results else "return"


def format_lines(graph: Graph, notes: dict | None = None) -> list[str]:
    """The text, one entry per line: header, nodes (indented), return, closing brace. `notes`
    (id(node) -> text) are appended to their nodes' lines as comments: a compiled function's
    printout says which kernel each node went to."""
    lines = [format_header(graph)]
    for node in graph.nodes:
        note = notes.get(id(node)) if notes else None
        lines.append(f"  {format_node(node)}" + (f"  # {note}" if note else ""))
    lines.append("  " + format_return(graph))
    lines.append("}")
    return lines


def format_graph(graph: Graph, notes: dict | None = None) -> str:
    return "\n".join(format_lines(graph, notes))
