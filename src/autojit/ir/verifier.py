"""The IR verifier: `verify(graph)` checks a graph before anything runs or compiles it.

It checks SSA form (every value is defined once, by a graph input or a node, and used only after
its definition, which also makes the graph acyclic), that operands are values or Python scalar
literals, that each node's op is the registered primitive of that name with the right number of
operands, and re-runs each op's shape and dtype rule (ops.registry.infer) to compare with the
value the node recorded. Passes run it on their result; codegen runs it before JIT.

A failure raises VerificationError quoting the printed graph around the offending line:

    verify: node 1 (mul): input %7 is used before it is defined
        graph(%0:f32[4] x) {
          %1:f32[4] = exp %0
    -->   %2:f32[4] = mul %1 %7
          return %2 out
        }
"""

from __future__ import annotations

import numbers

from ..ops.registry import REGISTRY, RUNTIME, infer
from ..tensor.tensor import Tensor
from .graph import INPUT_KINDS, OUTPUT_KINDS, TARGETED_OUTPUT_KINDS, Graph, Value
from .printer import format_lines

CONTEXT_LINES = 2


class VerificationError(ValueError):
    """A graph breaks an IR invariant; the message quotes the offending line in context."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def _fail(graph: Graph, line: int, message: str):
    lines = format_lines(graph)
    low, high = max(0, line - CONTEXT_LINES), min(len(lines), line + CONTEXT_LINES + 1)
    quoted = [("--> " if index == line else "    ") + lines[index] for index in range(low, high)]
    raise VerificationError(f"verify: {message}\n" + "\n".join(quoted), line)


def _is_literal(operand) -> bool:
    return operand is None or isinstance(operand, (bool, numbers.Number))


def verify(graph: Graph) -> Graph:
    """Check `graph`; return it unchanged, or raise VerificationError."""
    defined: set = set()  # ids of Value objects defined so far
    symbolic: dict = {}  # id(Value) -> a symbolic Tensor for the shape and dtype rules
    return_line = len(graph.nodes) + 1

    for position, entry in enumerate(graph.inputs):
        value = entry.value
        if entry.kind not in INPUT_KINDS:
            _fail(graph, 0, f"input {position} ({entry.name}) has unknown kind {entry.kind!r}")
        if not isinstance(value, Value):
            _fail(graph, 0, f"input {position} ({entry.name}) is not a Value")
        if id(value) in defined:
            _fail(graph, 0, f"input %{value.id} ({entry.name}) is defined twice")
        if value.producer is not None:
            _fail(graph, 0, f"input %{value.id} ({entry.name}) has a producer node")
        if entry.kind == "captured":
            tensor = entry.tensor
            if tensor is None or tuple(tensor.shape) != value.shape or tensor.dtype is not \
                    value.dtype:
                _fail(graph, 0, f"captured input %{value.id} ({entry.name}) does not match "
                                f"its tensor")
        defined.add(id(value))
        symbolic[id(value)] = Tensor._symbolic(value)

    for index, node in enumerate(graph.nodes):
        line = index + 1
        op = node.op
        where = f"node {index} ({getattr(op, 'name', op)})"
        name = getattr(op, "name", None)
        if REGISTRY.get(name) is not op and RUNTIME.get(name) is not op:
            _fail(graph, line, f"{where}: {op!r} is not a registered primitive")
        if op.arity >= 0 and len(node.inputs) != op.arity:
            _fail(graph, line, f"{where}: expected {op.arity} operands, got {len(node.inputs)}")
        operands = []
        for operand in node.inputs:
            if isinstance(operand, Value):
                if id(operand) not in defined:
                    _fail(graph, line, f"{where}: input %{operand.id} is used before it is "
                                       "defined")
                operands.append(symbolic[id(operand)])
            elif _is_literal(operand):
                operands.append(operand)
            else:
                _fail(graph, line, f"{where}: operand {operand!r} is neither a value nor a "
                                   "scalar literal")
        if len(node.outputs) != 1:
            _fail(graph, line, f"{where}: expected 1 output, got {len(node.outputs)}")
        output = node.outputs[0]
        if id(output) in defined:
            _fail(graph, line, f"{where}: %{output.id} is defined twice")
        if output.producer is not node:
            _fail(graph, line, f"{where}: %{output.id} does not name this node as its producer")
        try:
            shape, dtype = infer(op, tuple(operands), node.attrs)
        except Exception as error:  # a rule rejecting its operands is what is being reported
            _fail(graph, line, f"{where}: the shape/dtype rule fails: {error}")
        if shape != output.shape:
            _fail(graph, line, f"{where}: recorded shape {list(output.shape)} but the shape "
                               f"rule gives {list(shape)}")
        if dtype is not output.dtype:
            _fail(graph, line, f"{where}: recorded dtype {output.dtype.short} but the dtype "
                               f"rule gives {dtype.short}")
        defined.add(id(output))
        symbolic[id(output)] = Tensor._symbolic(output)

    names = set()
    for entry in graph.outputs:
        if entry.kind not in OUTPUT_KINDS:
            _fail(graph, return_line, f"output {entry.name} has unknown kind {entry.kind!r}")
        if not isinstance(entry.value, Value) or id(entry.value) not in defined:
            _fail(graph, return_line, f"output {entry.name} is not a defined value")
        if entry.name in names:
            _fail(graph, return_line, f"output name {entry.name} is used twice")
        names.add(entry.name)
        if entry.kind in TARGETED_OUTPUT_KINDS and (
                entry.target is None or entry.target not in graph.inputs):
            _fail(graph, return_line, f"{entry.kind} output {entry.name} has no target input")
    return graph


def verify_nodes(graph: Graph, indices: list) -> Graph:
    """Re-run the shape and dtype rules of the nodes at `indices` of `graph`, one whose form
    and other nodes are known to verify (a later binding of ir/instantiate.Instantiation's
    graph); return it unchanged, or raise VerificationError."""
    nodes = graph.nodes
    for index in indices:
        node = nodes[index]
        operands = tuple(Tensor._symbolic(operand) if isinstance(operand, Value) else operand
                         for operand in node.inputs)
        where = f"node {index} ({node.op.name})"
        try:
            shape, dtype = infer(node.op, operands, node.attrs)
        except Exception as error:  # a rule rejecting its operands is what is being reported
            _fail(graph, index + 1, f"{where}: the shape/dtype rule fails: {error}")
        output = node.outputs[0]
        if shape != output.shape or dtype is not output.dtype:
            _fail(graph, index + 1, f"{where}: recorded {output.dtype.short}"
                                    f"{list(output.shape)} but the shape/dtype rule gives "
                                    f"{dtype.short}{list(shape)}")
    return graph
