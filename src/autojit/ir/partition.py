"""Splitting a joint forward+backward graph into a forward graph and a backward graph.

When a compiled function returns tensors that require grad, compiler/api.py traces the function
and then, in the same trace, the gradient of those results with respect to every input that
requires grad, seeded by "cotangent" inputs (the gradients that will arrive from outside). The
result is one joint graph: the printed IR shows forward and adjoint together, and the passes
(CSE across the two halves included) run on it once.

`partition(joint)` cuts it in two, as a pure function:

- the forward graph computes every output except the "input_grad" ones, plus a "saved" output
  for each forward value the backward reads (the residuals). Costly values that depend only
  on the forward inputs (a matmul, a reduction) are computed in the forward graph even when
  only backward reads them; cheap elementwise and layout values are recomputed by the
  backward from the residuals they are made of, instead of being saved (`_rematerialize`).
- the forward values a checkpointed segment recomputes (`Graph.recompute_ids`, see
  utils/checkpoint.py) are computed in the backward graph like the adjoint: the forward
  saves what the segment was made from, never the segment's own values.
- the backward graph takes the residuals and the cotangents as "arg" inputs, in that order,
  and returns the input gradients as results, in the order of the joint graph's input_grad
  outputs.

A residual that is itself a forward input (an argument, a parameter) is not copied: the
backward reads the tensor, and the caller checks its version counter before running it. A
"random" input the backward reads (a dropout mask's uniform draws) is saved like a computed
value: it is drawn anew on each forward run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ops.registry import Elementwise, Layout
from .graph import Graph, Input, Node, Value


@dataclass
class Residual:
    """One backward input: where its value comes from when the forward has run."""

    kind: str        # "saved": a forward output; "input": a forward input; "cotangent"
    index: int       # forward output index ("saved"), forward input index ("input"),
                     # or position among the cotangent inputs ("cotangent")
    name: str
    # A saved view of a forward input (a transposed weight, say) shares the input's memory:
    # the input's position here, so its version can be checked as if it were read directly.
    aliases: int | None = None


@dataclass
class Partition:
    forward: Graph
    backward: Graph
    residuals: list   # Residual per backward input, in order
    gradient_targets: list  # the joint graph's Input each backward result is the gradient of


def partition(joint: Graph) -> Partition:
    cotangents = [entry for entry in joint.inputs if entry.kind == "cotangent"]
    gradient_outputs = [entry for entry in joint.outputs if entry.kind == "input_grad"]
    forward_outputs = [entry for entry in joint.outputs if entry.kind != "input_grad"]

    # Values computed by the backward: those that depend on a cotangent, and the forward
    # values a checkpointed segment recomputes (with what is made from them).
    tangent = {id(entry.value) for entry in cotangents}
    for node in joint.nodes:
        if node.output.id in joint.recompute_ids or any(
                isinstance(operand, Value) and id(operand) in tangent for operand in node.inputs):
            tangent.update(id(value) for value in node.outputs)

    backward_needed = _needed(joint, [entry.value for entry in gradient_outputs])
    adjoint_nodes = [node for node in joint.nodes
                     if id(node) in backward_needed and id(node.output) in tangent]
    # Forward values the backward reads: operands of backward nodes, and gradient outputs that
    # do not depend on a cotangent at all (a gradient that is a constant, say).
    read = []
    seen: set = set()
    for node in adjoint_nodes:
        for operand in node.inputs:
            if isinstance(operand, Value) and id(operand) not in tangent and \
                    id(operand) not in seen:
                seen.add(id(operand))
                read.append(operand)
    for entry in gradient_outputs:
        if id(entry.value) not in tangent and id(entry.value) not in seen:
            seen.add(id(entry.value))
            read.append(entry.value)

    read, recomputed = _rematerialize(read, {id(entry.value) for entry in forward_outputs},
                                      joint.checkpoint_ids)
    backward_nodes = [node for node in joint.nodes if id(node) in recomputed or (
        id(node) in backward_needed and id(node.output) in tangent)]

    forward_needed = _needed(joint, [entry.value for entry in forward_outputs] + read)
    forward_nodes = [node for node in joint.nodes if id(node) in forward_needed]
    primal_inputs = [entry for entry in joint.inputs if entry.kind != "cotangent"]
    forward, forward_map = _copy(primal_inputs, forward_nodes)
    forward.backward_ids = {forward_map[id(node.output)].id for node in forward_nodes
                            if node.output.id in joint.backward_ids}
    input_position = {id(entry.value): index for index, entry in enumerate(primal_inputs)}
    copied_input = {id(entry): copied for entry, copied in zip(primal_inputs, forward.inputs)}
    for entry in forward_outputs:
        target = copied_input.get(id(entry.target)) if entry.target is not None else None
        forward.add_output(forward_map[id(entry.value)], entry.name, entry.kind, target)

    residuals = []
    backward = Graph()
    backward_map: dict = {}
    for value in read:
        position = input_position.get(id(value))
        if position is not None and primal_inputs[position].kind not in ("random", "scalar"):
            residuals.append(Residual("input", position, forward.inputs[position].name))
        else:
            name = f"saved{len(residuals)}"
            forward.add_output(forward_map[id(value)], name, "saved")
            source = input_position.get(id(_view_source(value)))
            if source is not None and primal_inputs[source].kind in ("random", "scalar"):
                source = None  # drawn for this call alone: nothing else can write to it
            residuals.append(Residual("saved", len(forward.outputs) - 1, name, source))
        backward_map[id(value)] = backward.add_input(value.shape, value.dtype, "arg",
                                                     residuals[-1].name)
    for position, entry in enumerate(cotangents):
        residuals.append(Residual("cotangent", position, entry.name))
        backward_map[id(entry.value)] = backward.add_input(entry.value.shape, entry.value.dtype,
                                                           "arg", entry.name)
    for node in backward_nodes:
        _emit(backward, node, backward_map)
    # The backward graph is the adjoint, recomputed forward values aside.
    backward.backward_ids = {backward_map[id(node.output)].id for node in backward_nodes
                             if id(node) not in recomputed and
                             node.output.id not in joint.recompute_ids}
    for entry in gradient_outputs:
        backward.add_output(backward_map[id(entry.value)], entry.name)
    return Partition(forward, backward, residuals, [entry.target for entry in gradient_outputs])


def _rematerialize(read: list, returned: set, checkpointed: set) -> tuple[list, set]:
    """Which forward values to save, and which forward nodes the backward recomputes.

    Elementwise and layout values are recomputed from what they are made of, back to values
    that are costly (matmul, reductions, gathers) or free (inputs, the forward's own outputs):
    those are saved. A fused kernel recomputes tanh(x) faster than it reads a saved array,
    and the forward then writes fewer arrays. A value computed inside a checkpointed segment
    (ids in `checkpointed`: the backward reads only the segment's outputs) is saved as it is:
    recomputing it would save one of the segment's inner values instead.
    """
    saved, seen, recomputed = [], set(), set()
    stack = list(reversed(read))
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        producer = value.producer
        if producer is None or id(value) in returned or value.id in checkpointed or \
                not isinstance(producer.op.lowering, (Elementwise, Layout)):
            saved.append(value)
            continue
        recomputed.add(id(producer))
        stack.extend(operand for operand in reversed(producer.inputs)
                     if isinstance(operand, Value))
    return saved, recomputed


def _view_source(value: Value) -> Value:
    """The value `value` is a chain of views of (itself when its producer is not a view op)."""
    while value.producer is not None and value.producer.op.view:
        value = next(operand for operand in value.producer.inputs if isinstance(operand, Value))
    return value


def _needed(graph: Graph, roots: list) -> set:
    """ids of the nodes whose outputs `roots` depend on."""
    wanted = {id(value) for value in roots}
    needed: set = set()
    for node in reversed(graph.nodes):
        if any(id(value) in wanted for value in node.outputs):
            needed.add(id(node))
            wanted.update(id(operand) for operand in node.inputs if isinstance(operand, Value))
    return needed


def _copy(inputs: list[Input], nodes: list[Node]):
    graph = Graph()
    mapping: dict = {}
    for entry in inputs:
        mapping[id(entry.value)] = graph.add_input(entry.value.shape, entry.value.dtype,
                                                   entry.kind, entry.name, entry.tensor)
    for node in nodes:
        _emit(graph, node, mapping)
    return graph, mapping


def _emit(graph: Graph, node: Node, mapping: dict) -> None:
    operands = [mapping[id(operand)] if isinstance(operand, Value) else operand
                for operand in node.inputs]
    output = node.output
    mapping[id(output)] = graph.add_node(node.op, operands, node.attrs, output.shape,
                                         output.dtype)
