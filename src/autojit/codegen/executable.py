"""The executable: one traced, optimized graph ready to run, and its side effects.

compile.py builds an Executable per guard set. `run(args)` binds the call's tensors to the
graph's inputs, runs the graph (through the fused kernel plan when a backend compiled one, else
the reference interpreter), then applies the side effects the trace recorded, in eager's order:
in-place updates of captured tensors are written into their storage (bumping version
counters), `.grad` outputs are accumulated into the existing .grad tensor in place (so its
identity, which guards check, stays the same) or assigned, and `.grad = None` is repeated. The
results are rebuilt into the structure the function returned.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph
from ..ir.interpreter import interpret
from ..tensor import Tensor


class Executable:
    def __init__(self, graph: Graph, traced: Graph, template, cleared_grads: list, guards,
                 arg_positions: list, plan=None):
        self.graph = graph  # optimized
        self.traced = traced  # as traced, before the passes
        self.template = template  # the result structure, leaves are output indices
        self.cleared_grads = cleared_grads  # tensors whose .grad the function set to None
        self.guards = guards
        self.arg_positions = arg_positions  # graph arg input k <- call argument position
        self.plan = plan  # a backend's kernel plan, or None for the interpreter
        self.calls = 0
        # Output names of results that required grad when traced, and the grad_fn they get.
        self.requiring_grad: set = set()
        self.result_node = None

    def run(self, args: tuple):
        self.calls += 1
        arg_tensors = [args[position] for position in self.arg_positions]
        if self.plan is not None:
            arrays = self.plan.run(arg_tensors)
        else:
            arrays = interpret(self.graph, *arg_tensors)
        self._write_back(arrays, args)
        return _rebuild(self.template, arrays, self)

    def _write_back(self, arrays: tuple, args: tuple) -> None:
        targets = [output.target.tensor._data for output in self.graph.outputs
                   if output.kind == "update"]
        for output, array in zip(self.graph.outputs, arrays):
            if output.kind == "update":
                tensor = output.target.tensor
                if any(np.may_share_memory(array, target) for target in targets):
                    array = array.copy()
                tensor._data[...] = array
                tensor._bump_version()
            elif output.kind == "grad":
                tensor = self._target_tensor(output.target, args)
                _assign_grad(tensor, array, output.value.dtype)
        for tensor in self.cleared_grads:
            tensor._grad = None

    def _target_tensor(self, entry, args: tuple) -> Tensor:
        if entry.kind == "captured":
            return entry.tensor
        position = self.graph.arg_inputs.index(entry)
        return args[self.arg_positions[position]]


def _assign_grad(tensor: Tensor, array: np.ndarray, dtype) -> None:
    current = tensor._grad
    if current is not None and current._data is not None and not current._requires_grad and \
            current._data.shape == array.shape and current._dtype is dtype:
        if not np.shares_memory(current._data, array):
            current._data[...] = array
        current._bump_version()
        return
    tensor._grad = Tensor._make(np.array(array, copy=True), dtype)


def _rebuild(template, arrays: tuple, executable: Executable):
    kind = template[0]
    if kind == "tensor":
        index = template[1]
        output = executable.graph.outputs[index]
        tensor = Tensor._make(arrays[index], output.value.dtype)
        if output.name in executable.requiring_grad:
            tensor._requires_grad = True
            tensor.grad_fn = executable.result_node
        return tensor
    if kind == "constant":
        return template[1]
    if kind in ("tuple", "list"):
        items = [_rebuild(item, arrays, executable) for item in template[1]]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {key: _rebuild(item, arrays, executable) for key, item in template[1]}
    raise AssertionError(f"unknown result template {kind!r}")
