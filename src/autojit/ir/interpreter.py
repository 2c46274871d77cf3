"""The reference interpreter: runs a graph node by node with each op's NumPy impl.

This is the ground truth every backend (CPU codegen, CUDA) is tested against, and the fallback
when no backend applies. Each node runs through the same function eager mode uses
(ops.registry.run_eager), so dtype promotion, casts and error messages are eager's exactly;
autograd is not recorded (the graph already contains any adjoint the trace built).
"""

from __future__ import annotations

import numpy as np

from ..ops.registry import run_eager
from ..tensor.tensor import Tensor
from .graph import Graph, Input, Value


def _bind_input(entry: Input, supplied) -> Tensor:
    """The concrete tensor for one graph input, checked against the input's shape and dtype."""
    value = entry.value
    if isinstance(supplied, Tensor):
        data = supplied._payload
        if data is None:
            raise TypeError(f"interpret: input {entry.name} is a symbolic tensor; pass data")
    else:
        data = np.asarray(supplied)
    if data.shape != value.shape:
        raise ValueError(f"interpret: input {entry.name} expects shape {list(value.shape)}, got "
                         f"{list(data.shape)}")
    if data.dtype != value.dtype.numpy:
        raise TypeError(f"interpret: input {entry.name} expects dtype {value.dtype.name}, got "
                        f"{data.dtype}")
    return Tensor._make(data, value.dtype)


def interpret(graph: Graph, *args, captured=None) -> tuple:
    """Run `graph` on `args` (Tensors or arrays, one per "arg" input, in order).

    Captured inputs read their tensor's current data, unless `captured` maps an input name to
    a replacement. Returns a tuple of NumPy arrays, one per graph output, in order. An output
    may share memory with an input (a reshape of an argument, say), as eager views do.
    """
    arg_inputs = [entry for entry in graph.inputs if entry.kind != "captured"]
    if len(args) != len(arg_inputs):
        names = ", ".join(entry.name for entry in arg_inputs)
        raise TypeError(f"interpret: the graph takes {len(arg_inputs)} arguments ({names}), "
                        f"got {len(args)}")
    captured = dict(captured or {})
    environment: dict = {}  # id(Value) -> concrete Tensor
    supplied = iter(args)
    for entry in graph.inputs:
        if entry.kind != "captured":
            source = next(supplied)
        else:
            source = captured.pop(entry.name, entry.tensor)
        environment[id(entry.value)] = _bind_input(entry, source)
    if captured:
        raise KeyError(f"interpret: the graph has no captured inputs named {sorted(captured)}")

    # Each value is dropped after the last node that reads it, as eager frees a temporary: a
    # training step's first, state-creating call runs here, and keeping every activation and
    # gradient to the end held 285 MiB of a ResNet-8 step that eager runs in 30.
    kept = {id(entry.value) for entry in graph.outputs}
    last_reader: dict = {}
    for position, node in enumerate(graph.nodes):
        for operand in node.inputs:
            if isinstance(operand, Value):
                last_reader[id(operand)] = position
    done_after: dict = {}
    for key, position in last_reader.items():
        if key not in kept:
            done_after.setdefault(position, []).append(key)
    for position, node in enumerate(graph.nodes):
        operands = tuple(environment[id(operand)] if isinstance(operand, Value) else operand
                         for operand in node.inputs)
        result = run_eager(node.op, operands, node.attrs)
        output = node.outputs[0]
        if result._dtype is not output.dtype or result._payload.shape != output.shape:
            raise RuntimeError(f"interpret: {node.op.name} produced {result._dtype.short}"
                               f"{list(result._payload.shape)}, the graph recorded "
                               f"{output.type_text} for %{output.id}")
        del operands
        if id(output) in kept or id(output) in last_reader:
            environment[id(output)] = result
        for key in done_after.get(position, ()):
            environment.pop(key, None)
    return tuple(environment[id(entry.value)]._payload for entry in graph.outputs)
