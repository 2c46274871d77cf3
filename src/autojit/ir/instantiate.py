"""Instantiation: a graph traced with symbolic sizes, made concrete for one binding of them.

A dynamic trace (compiler/api.py, tensor/symbolic.py) leaves SymInts and SymFloats in value shapes,
node attributes (a reshape's target shape, a slice's bounds), scalar operands (the count a mean
divides by) and the shapes of random inputs. `instantiate(graph, binding)` copies the graph with
each of them replaced by its value under `binding` (symbol name -> int), giving an ordinary graph
that the pass pipeline, the partitioner and the backends handle as any other; the verifier then
re-checks every node's shape rule on the concrete shapes. Inputs keep their kinds, names and
tensors; outputs keep their names, kinds and targets.
"""

from __future__ import annotations

import copy

from ..tensor.symbolic import contains_symbolic, substitute
from .graph import Graph, Value


def instantiate(graph: Graph, binding: dict) -> Graph:
    """A copy of `graph` with every symbolic size evaluated under `binding`."""
    from .verifier import verify

    concrete = Graph()
    values: dict = {}
    inputs: dict = {}
    for entry in graph.inputs:
        tensor = entry.tensor
        if entry.kind == "random" and contains_symbolic(tensor.shape):
            tensor = copy.copy(tensor)
            tensor.shape = substitute(tensor.shape, binding)
        value = concrete.add_input(substitute(entry.value.shape, binding), entry.value.dtype,
                                   entry.kind, entry.name, tensor)
        values[id(entry.value)] = value
        inputs[id(entry)] = concrete.inputs[-1]
    for node in graph.nodes:
        operands = [values[id(operand)] if isinstance(operand, Value) else
                    substitute(operand, binding) for operand in node.inputs]
        value = concrete.add_node(node.op, operands, substitute(node.attrs, binding),
                                  substitute(node.output.shape, binding), node.output.dtype)
        values[id(node.output)] = value
        if node.output.id in graph.backward_ids:
            concrete.backward_ids.add(value.id)
        if node.output.id in graph.recompute_ids:
            concrete.recompute_ids.add(value.id)
        if node.output.id in graph.checkpoint_ids:
            concrete.checkpoint_ids.add(value.id)
    for output in graph.outputs:
        target = inputs[id(output.target)] if output.target is not None else None
        concrete.add_output(values[id(output.value)], output.name, output.kind, target)
    verify(concrete)
    return concrete
