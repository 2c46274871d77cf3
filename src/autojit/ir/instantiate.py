"""Instantiation: a graph traced with symbolic sizes, made concrete for one binding of them.

A dynamic trace (compiler/api.py, tensor/symbolic.py) leaves SymInts and SymFloats in value shapes,
node attributes (a reshape's target shape, a slice's bounds), scalar operands (the count a mean
divides by) and the shapes of random inputs. `instantiate(graph, binding)` copies the graph with
each of them replaced by its value under `binding` (symbol name -> int), giving an ordinary graph
that the pass pipeline, the partitioner and the backends handle as any other; the verifier then
re-checks every node's shape rule on the concrete shapes. Inputs keep their kinds, names and
tensors; outputs keep their names, kinds and targets.

`Instantiation(graph)` instantiates one graph for many bindings (the bindings of a trace's
computed sizes, compiler/binding_plans.py): it finds once which shapes, attributes and operands
hold symbols, and copies the rest as they are; the first graph it makes is verified whole, and
each later one only in the shape rules of the nodes that involve a symbol (the others, and the
graph's form, are the same at every binding), each where the values of its own symbols are new
to it (the node at a binding is a function of them).
"""

from __future__ import annotations

import copy

from ..tensor.symbolic import SymInt, contains_symbolic, substitute, symbols_in
from .graph import Graph, Value


def instantiate(graph: Graph, binding: dict) -> Graph:
    """A copy of `graph` with every symbolic size evaluated under `binding`."""
    return Instantiation(graph).instantiate(binding)


class Instantiation:
    """`instantiate` of one graph, for any number of bindings (see the module docstring)."""

    # A node's verified bindings of its own symbols kept at most: past this, forgotten.
    KEPT_CHECKS = 4096

    def __init__(self, graph: Graph):
        self.graph = graph
        self.symbols: set = set()  # the names of the symbols the graph holds
        # `inputs`: per input, whether its shape holds a symbol. Per node: its output, whether
        # its attributes hold one, which of its operands are symbolic literals, where its
        # shape holds them (or None), and which of the graph's id sets name its output.
        self.inputs = []
        for entry in graph.inputs:
            found = symbols_in(entry.value.shape)
            if entry.kind == "random":
                found |= symbols_in(entry.tensor.shape)
            self.symbols |= found
            self.inputs.append(bool(found))
        self._nodes = []
        # The nodes whose shape rule a binding checks again: (index, the names of the symbols
        # in the node and its operands' shapes), and per node the values of those names it was
        # checked at (the node at a binding is a function of them).
        self._involved = []
        self._checked: dict = {}
        marks = (graph.backward_ids, graph.recompute_ids, graph.checkpoint_ids)
        for index, node in enumerate(graph.nodes):
            output = node.outputs[0]
            attrs, shape = symbols_in(node.attrs), symbols_in(output.shape)
            literals = [position for position, operand in enumerate(node.inputs)
                        if not isinstance(operand, Value) and contains_symbolic(operand)]
            names = attrs | shape
            for operand in node.inputs:
                names |= symbols_in(operand.shape if isinstance(operand, Value) else operand)
            self.symbols |= names
            marked = tuple(number for number, ids in enumerate(marks) if output.id in ids)
            self._nodes.append((node, output, bool(attrs), literals, _extents(output.shape),
                                marked))
            if names:
                self._involved.append((index, tuple(sorted(names))))
                self._checked[index] = set()
        self._verified = False

    def instantiate(self, binding: dict, verify: bool = True, memo: dict | None = None) -> Graph:
        """The graph at `binding` (symbol name -> value), verified (see the module docstring)
        unless `verify` is False. `memo`: id(symbolic shape) -> its value at `binding`, shared
        by the instantiations of graphs that hold the same shapes (a graph and its segments)."""
        from .verifier import verify as verify_graph
        from .verifier import verify_nodes

        memo = {} if memo is None else memo
        graph = self.graph
        concrete = Graph()
        values: dict = {}
        inputs: dict = {}
        for entry, symbolic in zip(graph.inputs, self.inputs):
            tensor, shape = entry.tensor, entry.value.shape
            if symbolic:
                shape = substitute(shape, binding)
                if entry.kind == "random" and contains_symbolic(tensor.shape):
                    tensor = copy.copy(tensor)
                    tensor.shape = substitute(tensor.shape, binding)
            values[id(entry.value)] = concrete.add_input(shape, entry.value.dtype, entry.kind,
                                                         entry.name, tensor)
            inputs[id(entry)] = concrete.inputs[-1]
        marks = (concrete.backward_ids, concrete.recompute_ids, concrete.checkpoint_ids)
        add_node = concrete.add_node
        for node, output, attrs, literals, extents, marked in self._nodes:
            operands = [values[id(operand)] if isinstance(operand, Value) else operand
                        for operand in node.inputs]
            for position in literals:
                operands[position] = substitute(operands[position], binding)
            shape = output.shape
            if extents is not None:
                found = memo.get(id(shape))
                if found is None:
                    sized = list(shape)
                    for position, extent in extents:
                        sized[position] = extent.evaluate(binding)
                    found = memo[id(shape)] = (shape, tuple(sized))  # the key's shape kept
                shape = found[1]
            value = values[id(output)] = add_node(
                node.op, operands, substitute(node.attrs, binding) if attrs else node.attrs,
                shape, output.dtype)
            for number in marked:
                marks[number].add(value.id)
        for output in graph.outputs:
            target = inputs[id(output.target)] if output.target is not None else None
            concrete.add_output(values[id(output.value)], output.name, output.kind, target)
        if verify:
            self._verify(concrete, binding, verify_graph, verify_nodes)
        return concrete

    def _verify(self, concrete: Graph, binding: dict, verify_graph, verify_nodes) -> None:
        """The first graph whole; a later one in the rules of nodes that hold a symbol, each
        where the values of its symbols are new to it."""
        pending = []
        for index, names in self._involved:
            key = tuple(binding[name] for name in names)
            checked = self._checked[index]
            if key not in checked:
                pending.append((index, key, checked))
        if not self._verified:
            verify_graph(concrete)
            self._verified = True
        else:
            verify_nodes(concrete, [index for index, _, _ in pending])
        for _, key, checked in pending:
            if len(checked) >= self.KEPT_CHECKS:
                checked.clear()
            checked.add(key)


def _extents(shape: tuple) -> list | None:
    """(position, SymInt) of each symbolic extent of a shape, or None where it has none."""
    found = [(position, extent) for position, extent in enumerate(shape)
             if isinstance(extent, SymInt)]
    return found or None
