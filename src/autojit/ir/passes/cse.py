"""Common-subexpression elimination: nodes applying the same op to the same operands with the
same attributes become one (a pass of pipeline.py)."""

from __future__ import annotations

from ..graph import Graph
from .rewriter import GraphRewriter, structural_key


def common_subexpression_elimination(graph: Graph) -> Graph:
    """Merge nodes applying the same op to the same operands with the same attributes.

    Operands are compared after earlier merges (so chains of duplicates collapse in one walk),
    values by identity and literals and attributes structurally (`structural_key`). Every
    primitive is deterministic (random numbers enter a graph as inputs drawn per call).
    A value a checkpointed segment recomputes for the backward (`Graph.recompute_ids`) is
    never merged with a forward one: that would keep the forward's value alive until the
    backward, which is what checkpointing is asked to avoid.
    """
    rewriter = GraphRewriter(graph)
    recomputed = graph.recompute_ids
    seen: dict = {}
    for node in graph.nodes:
        inputs = rewriter.operands(node)
        output = node.output
        key = (node.op, structural_key(inputs), structural_key(node.attrs), output.shape,
               output.dtype.name, output.id in recomputed)
        found = seen.get(key)
        if found is not None:
            rewriter.alias(node, found)
        else:
            seen[key] = rewriter.copy(node, inputs)
    return rewriter.finish()
