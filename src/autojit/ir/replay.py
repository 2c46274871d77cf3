"""Running a graph on Tensors through the op registry, recording autograd.

The reference interpreter (interpreter.py) runs a graph on arrays with autograd off: the graph
already holds whatever adjoint the trace built. `replay` runs the same nodes through
`ops.registry.bind` on Tensors instead, so that each node is recorded as an eager op would be:
the values it returns carry history back to the tensors it was given and can be differentiated
again.

compiler/compiled_backward.py uses it when the results of a compiled function are differentiated
with create_graph=True. The compiled backward graph cannot serve: it was traced without
create_graph, so it holds the first-order forms of the VJPs that have one (cumprod's around
the zeros of its input, which is not the derivative's derivative there), and differentiating
those nodes again gives a wrong second derivative. `ReplayedBackward` instead replays the
forward graph's results from the call's own tensors and random draws, as eager ops, and
differentiates them with the autograd engine with create_graph=True, as eager does: every VJP
takes the form eager takes for those values in grad mode, and the gradients it returns are
differentiable to any order.
"""

from __future__ import annotations

import numpy as np

from ..autograd.engine import run_backward
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

    Built once per partition; `run` serves every call. The results are recomputed from the
    forward inputs they read: the call's tensors (`read_inputs`, the gradient targets among
    them) and the arrays it drew (`draw_inputs`: random draws and runtime floats, which
    drawing again would change).
    """

    def __init__(self, partition):
        forward = partition.forward
        self.partition = partition
        outputs = {output.name: output.value for output in forward.outputs}
        cotangents = sorted((residual for residual in partition.residuals
                             if residual.kind == "cotangent"), key=lambda item: item.index)
        # The result each cotangent seeds: the cotangent input is named after the result's
        # output (compiler/compiled_backward.trace_backward).
        self.results = [outputs[_seeded_output(residual.name, outputs)]
                        for residual in cotangents]
        names = {entry.name: index for index, entry in enumerate(forward.inputs)}
        self.targets = [names[target.name] for target in partition.gradient_targets]
        _, needed_inputs = _needed_nodes(forward, self.results, {})
        needed = {id(entry) for entry in needed_inputs}
        self.draw_inputs = [index for index, entry in enumerate(forward.inputs)
                            if id(entry) in needed and entry.kind in ("random", "scalar")]
        # The forward inputs the replay reads from the call's tensors, by forward input index.
        self.read_inputs = [index for index, entry in enumerate(forward.inputs)
                            if (id(entry) in needed or index in self.targets)
                            and entry.kind not in ("random", "scalar")]

    def run(self, input_tensors: list, residual_values: list, grads: list,
            result_meta: list, draws: dict) -> list:
        """The input gradients, one per backward output, recorded for autograd.

        input_tensors: the call's tensors for `read_inputs`, in that order; residual_values:
        the call's residuals (unused: every value is recomputed); grads: the incoming
        gradients, one per result that requires grad (None for a result that got none);
        draws: the call's random arrays for `draw_inputs`, by forward input index.
        """
        forward = self.partition.forward
        environment = {id(forward.inputs[index].value): tensor
                       for index, tensor in zip(self.read_inputs, input_tensors)}
        for index in self.draw_inputs:
            entry = forward.inputs[index]
            environment[id(entry.value)] = Tensor._make(draws[index], entry.value.dtype)
        results = replay(forward, environment, self.results)
        roots, root_grads = [], []
        for result, grad, (shape, dtype) in zip(results, grads, result_meta):
            if result._requires_grad:
                roots.append(result)
                root_grads.append(grad if grad is not None else
                                  Tensor._make(np.zeros(shape, dtype.numpy), dtype))
        targets = [environment[id(forward.inputs[index].value)] for index in self.targets]
        gradients = [None] * len(targets)
        if roots:
            # The gradients are handed to the targets' own nodes by the engine running this
            # backward, which runs their hooks: this inner pass must not run them too; and it
            # ends at the history a target came with, which the outer pass goes on through.
            stashed = [stash_hooks(tensor) for tensor in targets]
            history = frozenset(id(tensor.grad_fn) for tensor in targets
                                if tensor.grad_fn is not None)
            try:
                gradients = run_backward(roots, root_grads, retain_graph=True,
                                         create_graph=True, inputs=targets, accumulate=False,
                                         stop_at=history)
            finally:
                for restore in stashed:
                    restore()
        return [gradient if gradient is not None else
                Tensor._make(np.zeros(output.value.shape, output.value.dtype.numpy),
                             output.value.dtype)
                for gradient, output in zip(gradients, self.partition.backward.outputs)]


def _seeded_output(cotangent: str, outputs: dict) -> str:
    """The output name of the result a cotangent input named `cotangent` seeds
    (`{name}.cotangent`, or `{name}.cotangent_{n}` where that name was taken)."""
    name, _, _ = cotangent.rpartition(".cotangent")
    if name not in outputs:
        raise AssertionError(f"replay: no forward result for cotangent {cotangent}")
    return name


def stash_hooks(tensor: Tensor):
    """Take the tensor's hooks (and its grad_fn's tensor hooks and retain_grad) off it, for a
    backward pass whose gradients the tensor will be handed again; returns the function that
    puts them back."""
    node = tensor.grad_fn
    saved = (tensor.__dict__.get("_backward_hooks"), node._tensor_hooks if node else None,
             node._retained if node else None)
    tensor._backward_hooks = None
    if node is not None:
        node._tensor_hooks = node._retained = None

    def restore():
        tensor._backward_hooks = saved[0]
        if node is not None:
            node._tensor_hooks, node._retained = saved[1], saved[2]
    return restore
