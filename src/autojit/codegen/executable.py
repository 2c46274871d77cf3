"""The executable: one traced, optimized graph ready to run, and its side effects.

compile.py builds an Executable per guard set. `run(args)` binds the call's tensors to the
graph's inputs, runs the graph (through the fused kernel plan when a backend compiled one, else
the reference interpreter), then applies the side effects the trace recorded, in eager's order:
in-place updates of captured tensors are written into their storage (bumping version
counters; a kernel that already stored an update there leaves only the bump, see
codegen/in_place.py), `.grad` outputs are accumulated into the existing .grad tensor in place
(so its identity, which guards check, stays the same) or assigned, and `.grad = None` is
repeated. The results are rebuilt into the structure the function returned.
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
        # Results that required grad when traced get a compiled backward
        # (compiled_backward.py): output name -> output number of their shared grad_fn.
        self.backward = None
        self.requiring: dict = {}
        self.joint = None  # the optimized forward+backward graph the two halves come from
        # (error, requiring results) when eager could not differentiate the results either.
        self.failing_backward = None
        self._result_meta = None  # (shape, dtype) of each result that requires grad
        # Anomaly mode: (output index, backward node, output position) checked for nan.
        self.nan_checks: list = []

    def run(self, args: tuple):
        self.calls += 1
        # The graph's non-captured inputs in order: the call's tensor arguments, and fresh
        # random numbers for each "random" input (drawn in the order the function drew them).
        supplied, positions, draws = [], iter(self.arg_positions), {}
        for index, entry in enumerate(self.graph.inputs):
            if entry.kind == "arg":
                supplied.append(args[next(positions)]._data)
            elif entry.kind == "random":
                draws[index] = entry.tensor.draw()
                supplied.append(draws[index])
        if self.plan is not None:
            arrays = self.plan.run_arrays(supplied)
        else:
            arrays = interpret(self.graph, *supplied)
        if self.nan_checks:
            self._check_nan(arrays)
        self._write_back(arrays, args)
        if self.failing_backward is not None:
            return self._failing_result(arrays)
        if self.backward is None:
            return _rebuild(self.template, arrays, self, None)
        if self._result_meta is None:
            self._result_meta = [None] * len(self.requiring)
            for output in self.graph.outputs:
                number = self.requiring.get(output.name)
                if number is not None:
                    self._result_meta[number] = (output.value.shape, output.value.dtype)
        node = self.backward.node_for_call(args, arrays, self._result_meta, draws)
        result = _rebuild(self.template, arrays, self, node)
        node.watch_results(result)
        return result

    def _check_nan(self, arrays: tuple) -> None:
        """Anomaly mode: the first backward node (in the order eager ran them) whose gradient
        holds nan raises eager's error, before any side effect is written back."""
        from ..autograd.anomaly import warn_forward_trace

        for index, node, position in self.nan_checks:
            if np.isnan(arrays[index]).any():
                warn_forward_trace(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                   f"{position}th output.")

    def _failing_result(self, arrays: tuple):
        from ..compiled_backward import FailingBackward

        error, requiring = self.failing_backward
        self.requiring = {name: number for number, (name, _) in enumerate(requiring)}
        return _rebuild(self.template, arrays, self, FailingBackward(error, len(requiring)))

    def _write_back(self, arrays: tuple, args: tuple) -> None:
        targets = None
        for output, array in zip(self.graph.outputs, arrays):
            if output.kind == "update":
                tensor = output.target.tensor
                # A kernel that stored the new value into the tensor's own storage hands back
                # that very array (codegen/in_place.py): nothing is left to copy.
                if array is not tensor._data:
                    if targets is None:
                        targets = [entry.target.tensor._data for entry in self.graph.outputs
                                   if entry.kind == "update"]
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
    # CUDA hook: device arrays (autojit/cuda/array.py) copy themselves on the device.
    copied = np.array(array, copy=True) if array.__class__ is np.ndarray else array.copy()
    tensor._grad = Tensor._make(copied, dtype)


def _rebuild(template, arrays: tuple, executable: Executable, node):
    kind = template[0]
    if kind == "tensor":
        index = template[1]
        output = executable.graph.outputs[index]
        tensor = Tensor._make(arrays[index], output.value.dtype)
        number = executable.requiring.get(output.name)
        if number is not None:
            tensor._requires_grad = True
            tensor.grad_fn = node
            tensor._output_nr = number
        return tensor
    if kind == "constant":
        return template[1]
    if kind in ("tuple", "list"):
        items = [_rebuild(item, arrays, executable, node) for item in template[1]]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {key: _rebuild(item, arrays, executable, node) for key, item in template[1]}
    raise AssertionError(f"unknown result template {kind!r}")
