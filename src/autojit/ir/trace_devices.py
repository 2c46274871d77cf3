"""Which values of a trace for a GPU are CPU tensors in eager, and the device error eager raises.

A function compiled for CUDA tensors runs its whole graph on the GPU. Eager does not put every
tensor there: a CPU factory (`zeros(3)` without device=) makes a CPU tensor, an op whose
tensor operands are all on the CPU computes on the CPU, and an op that mixes a CPU tensor with
a CUDA one raises, unless the CPU tensor has no dimensions or is the index of `x[index]` (the
"host_index" operand). The tracer keeps a Placement when the call's tensors are on a GPU
(compiler/tracing.py): each op's result is placed as eager's would be (`place`, from
Tracer.bind), a mixed op raises eager's error while tracing, a symbolic tensor answers
`.device` and `.is_cuda` as eager's tensor does (Tensor.device), and a CPU value the function
returns is copied back to the CPU after each run (compiler/executable.py). Inside the graph a
CPU value is still computed on the GPU: its values are the same, and only its device shows.
"""

from __future__ import annotations

import numpy as np

from ..ops.registry import host_index_operand
from ..tensor.device import MIXED_DEVICES
from ..tensor.graph_break import user_location
from ..tensor.tensor import Tensor


class Placement:
    """The CPU values of a trace whose call's tensors are on `device` (a GPU)."""

    def __init__(self, device) -> None:
        self.device = device
        self.host_values: set = set()  # ids of the graph values eager keeps on the CPU

    def is_host(self, tensor: Tensor) -> bool:
        """Whether eager's tensor is on the CPU: a real tensor by its data, a symbolic one by
        the op that made it."""
        data = tensor._payload
        if data is None:
            return id(tensor._value) in self.host_values
        return data.__class__ is np.ndarray

    def place(self, op, inputs: tuple, operands: list, value) -> None:
        """Place the result `value` of `op` on `inputs` (`operands`: their graph values),
        raising eager's error, with the op and the CPU operand, for an op that mixes the
        devices."""
        host_index = host_index_operand(op)
        tensors = on_device = False
        on_host = None
        for position, operand in enumerate(inputs):
            if not isinstance(operand, Tensor):
                continue
            tensors = True
            if not self.is_host(operand):
                on_device = True
            elif operand.ndim > 0 and position != host_index and on_host is None:
                on_host = position
        if on_device and on_host is not None:
            source = "captured tensor" if inputs[on_host]._payload is not None else "value"
            where = user_location()
            raise RuntimeError(
                f"{MIXED_DEVICES.format(self.device)} (in the compiled function, {op.name} "
                f"reads {operands[on_host]!r} from the CPU {source} with {self.device} values"
                f"{f' at {where[0]}:{where[1]}' if where else ''}; move it with .to('cuda') "
                "or .cuda())")
        if tensors and not on_device:
            self.host_values.add(id(value))
