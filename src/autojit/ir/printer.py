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


def same_text(first: Graph, second: Graph) -> bool:
    """Whether `format_graph(first) == format_graph(second)`, formatting only what is not the
    same object in both: the pass pipeline asks after each round whether the round changed
    the graph, and passes copy unchanged nodes with the same operands, attributes and types."""
    if len(first.nodes) != len(second.nodes) or len(first.inputs) != len(second.inputs) or \
            len(first.outputs) != len(second.outputs):
        return False
    for one, other in zip(first.inputs, second.inputs):
        if ("" if one.kind == "arg" else one.kind) != ("" if other.kind == "arg" else other.kind) \
                or one.name != other.name or not _same_value(one.value, other.value):
            return False
    for one, other in zip(first.outputs, second.outputs):
        if one.value.id != other.value.id or one.name != other.name:
            return False
    for one, other in zip(first.nodes, second.nodes):
        if one.op is not other.op and _printed_op(one.op) != _printed_op(other.op):
            return False
        if len(one.outputs) != len(other.outputs) or len(one.inputs) != len(other.inputs) or \
                not all(map(_same_value, one.outputs, other.outputs)) or \
                not all(map(_same_operand, one.inputs, other.inputs)):
            return False
        attrs, others = one.attrs, other.attrs
        if attrs is not others and (list(attrs) != list(others) or not all(
                _same_operand(value, others[name]) for name, value in attrs.items())):
            return False
    return True


def _printed_op(op) -> str:
    return op.name  # as format_node prints it (two registrations of one name print alike)


def _same_value(one: Value, other: Value) -> bool:
    return one.id == other.id and (one.dtype is other.dtype and one.shape is other.shape or
                                   one.type_text == other.type_text)


def _same_operand(one, other) -> bool:
    if one is other:
        return True
    if isinstance(one, Value) and isinstance(other, Value):
        return one.id == other.id
    return format_literal(one) == format_literal(other)

