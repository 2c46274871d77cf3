"""Dead-code elimination: the nodes no output needs are dropped (a pass of pipeline.py)."""

from __future__ import annotations

from ...ops.registry import communicates
from ..graph import Graph, Value
from .rewriter import GraphRewriter


def dead_code_elimination(graph: Graph) -> Graph:
    """Drop the nodes no graph output depends on. The graph has no side effects to keep but
    one: a node that communicates (a collective, registry.Extern.communicates) is kept even
    when its result is not used, since the other processes run it too and would wait for this
    one (docs/notes/distributed.md)."""
    live = {id(entry.value) for entry in graph.outputs}
    kept = []
    for node in reversed(graph.nodes):
        if any(id(value) in live for value in node.outputs) or communicates(node.op):
            kept.append(node)
            live.update(id(operand) for operand in node.inputs if isinstance(operand, Value))
    rewriter = GraphRewriter(graph)
    for node in reversed(kept):
        rewriter.copy(node)
    return rewriter.finish()
