"""Running a graph on Tensors through the op registry, recording autograd.

The reference interpreter (interpreter.py) runs a graph on arrays with autograd off: the graph
already holds whatever adjoint the trace built. `replay` runs the same nodes through
`ops.registry.bind` on Tensors instead, so that each node is recorded as an eager op would be:
the values it returns carry history back to the tensors it was given and can be differentiated
again.

compiler/compiled_backward.py uses it when the results of a compiled function are differentiated
with create_graph=True: the residuals its compiled backward reads are bare arrays with no history,
so `ReplayedBackward` recomputes, from the call's own argument and captured tensors, the residuals
that depend on an input being differentiated, then replays the backward graph of the partition
(ir/partition.py) on them and on the incoming gradients. The gradients it returns are differentiable
to any order.
"""

from __future__ import annotations

import numpy as np

from ..ops.registry import bind
from ..tensor.tensor import Tensor
from .graph import Graph, Value


def replay(graph: Graph, environment: dict, wanted: list) -> list:
    """The Tensors of the `wanted` Values of `graph`, computed through `bind`.

    environment: id(Value) -> Tensor for the values that are given (inputs, or any value the
    caller already has); only the nodes the wanted values need beyond those run, in graph
    order. Grad mode decides, as for any op, whether the nodes are recorded for autograd.
    """
    environment = dict(environment)
    nodes, absent = _needed_nodes(graph, wanted, environment)
    if absent:
        raise KeyError(f"replay: no value given for input "
                       f"{', '.join(entry.name for entry in absent)}")
    for node in nodes:
        operands = tuple(environment[id(operand)] if isinstance(operand, Value) else operand
                         for operand in node.inputs)
        result = bind(node.op, operands, node.attrs)
        output = node.output
        if result._dtype is not output.dtype or tuple(result.shape) != output.shape:
            raise RuntimeError(f"replay: {node.op.name} produced {result._dtype.short}"
                               f"{list(result.shape)}, the graph recorded {output.type_text} "
                               f"for %{output.id}")
        environment[id(output)] = result
    return [environment[id(value)] for value in wanted]


def _needed_nodes(graph: Graph, wanted: list, known) -> tuple[list, list]:
    """The nodes, in graph order, that compute `wanted` from the values in `known`, and the
    graph inputs they need that `known` lacks."""
    missing = {id(value) for value in wanted if id(value) not in known}
    nodes = []
    for node in reversed(graph.nodes):
        if id(node.output) in missing:
            nodes.append(node)
            missing.update(id(operand) for operand in node.inputs
                           if isinstance(operand, Value) and id(operand) not in known)
    absent = [entry for entry in graph.inputs if id(entry.value) in missing]
    return nodes[::-1], absent


class ReplayedBackward:
    """How one compiled function's backward is run differentiably (see the module docstring).

    Built once per partition; `run` serves every call. A residual is recomputed from the
    forward inputs when it depends on an input that gets a gradient (the results'
    dependence on it is what a higher derivative differentiates); every other residual,
    random draws included, is taken as the compiled forward saved it; a draw the
    recomputation reads is the array the call drew (`draws`).
    """

    def __init__(self, partition):
        forward = partition.forward
        self.partition = partition
        targets = {entry.name for entry in partition.gradient_targets}
        depends = {id(entry.value) for entry in forward.inputs if entry.name in targets}
        for node in forward.nodes:
            if any(isinstance(operand, Value) and id(operand) in depends
                   for operand in node.inputs):
                depends.add(id(node.output))
        saved = [(position, forward.outputs[residual.index].value)
                 for position, residual in enumerate(partition.residuals)
                 if residual.kind == "saved"]
        # (residual position, forward value) of the residuals recomputed on each replay, and
        # the residual positions whose saved arrays stand in for forward values as they are.
        self.recomputed = [(position, value) for position, value in saved
                           if id(value) in depends]
        self.constant = [(position, value) for position, value in saved
                         if id(value) not in depends]
        known = {id(value) for _, value in self.constant}
        _, needed_inputs = _needed_nodes(forward, [value for _, value in self.recomputed],
                                         known)
        needed_inputs += [forward.inputs[residual.index] for residual in partition.residuals
                          if residual.kind == "input"]
        # Random draws the recomputation needs that the forward did not save (it saved only
        # values computed from them): each call's node keeps the arrays drawn for these forward
        # inputs, since drawing again would give other numbers.
        needed_draws = {id(entry) for entry in needed_inputs
                        if entry.kind in ("random", "scalar")}
        self.draw_inputs = [index for index, entry in enumerate(forward.inputs)
                            if id(entry) in needed_draws]
        # The forward inputs the replay reads from the call's tensors, by forward input index.
        needed = {id(entry) for entry in needed_inputs
                  if entry.kind not in ("random", "scalar")}
        self.read_inputs = [index for index, entry in enumerate(forward.inputs)
                            if id(entry) in needed]

    def run(self, input_tensors: list, residual_values: list, grads: list,
            result_meta: list, draws: dict) -> list:
        """The input gradients, one per backward output, recorded for autograd.

        input_tensors: the call's tensors for `read_inputs`, in that order; residual_values:
        the call's residuals (arrays, None for cotangents); grads: the incoming gradients, one
        per result that requires grad (None for a result that got none); draws: the call's
        random arrays for `draw_inputs`, by forward input index.
        """
        partition = self.partition
        forward, backward = partition.forward, partition.backward
        environment = {id(forward.inputs[index].value): tensor
                       for index, tensor in zip(self.read_inputs, input_tensors)}
        for index in self.draw_inputs:
            entry = forward.inputs[index]
            environment[id(entry.value)] = Tensor._make(draws[index], entry.value.dtype)
        residuals: list = [None] * len(partition.residuals)
        for position, value in self.constant:
            residuals[position] = environment[id(value)] = Tensor._make(
                residual_values[position], value.dtype)
        recomputed = replay(forward, environment, [value for _, value in self.recomputed])
        for (position, _), tensor in zip(self.recomputed, recomputed):
            residuals[position] = tensor
        for position, residual in enumerate(partition.residuals):
            if residual.kind == "input":
                residuals[position] = environment[id(forward.inputs[residual.index].value)]
            elif residual.kind == "cotangent":
                grad = grads[residual.index]
                if grad is None:
                    shape, dtype = result_meta[residual.index]
                    grad = Tensor._make(np.zeros(shape, dtype.numpy), dtype)
                residuals[position] = grad
        given = {id(entry.value): tensor for entry, tensor in zip(backward.inputs, residuals)}
        return replay(backward, given, [entry.value for entry in backward.outputs])
