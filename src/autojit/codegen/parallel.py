"""One large fused kernel on several cores: its space split along the first axis.

A kernel (codegen/kernel.py) walks its space with strides fixed at compile time, so the same
machine code runs any block of rows when its array pointers are moved to the block's first
row. `split_kernel` compiles the kernel once more for a block of `rows / parts` rows (cached
like any kernel); `SplitKernel.run` then calls that code once per block, one block on the
calling thread and the others on the worker pool of codegen/blas.py. The native call releases
the GIL (ctypes), so the blocks run at the same time.

Outputs that keep the first axis are written in place, block by block. Outputs reduced over
the first axis (a total, a column sum) get one partial result per block, combined at the end
with the reduction's NumPy counterpart; float sums are then added in another order than one
core would, as a vectorized sum already does.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np

from . import blas

# Below this many elements a kernel runs on one core: a hand-off to a worker costs ~20 us.
MIN_ELEMENTS = 1 << 18
_COMBINE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def split_kernel(kernel, compile_kernel):
    """A SplitKernel for `kernel`, or None where one core is the better choice."""
    parts = os.cpu_count() or 1
    shape = kernel.shape
    if parts < 2 or not shape or math.prod(shape) < MIN_ELEMENTS or blas.pool() is None:
        return None
    parts = min(parts, blas.pool()._max_workers + 1)
    if shape[0] < parts or shape[0] % parts:
        return None
    block = dataclasses.replace(kernel, name=f"{kernel.name}_block",
                                shape=(shape[0] // parts,) + tuple(shape[1:]))
    try:
        compiled = compile_kernel(block)
    except NotImplementedError:
        return None
    if not hasattr(compiled, "call_pointers"):
        return None
    return SplitKernel(kernel, block, compiled, parts)


class SplitKernel:
    def __init__(self, kernel, block, compiled, parts: int):
        self.kernel, self.block, self.compiled, self.parts = kernel, block, compiled, parts
        rows = block.shape[0]
        # Bytes a block's pointer moves per block, per input; None for reduced outputs, which
        # get a partial buffer per block instead.
        self._input_steps = [entry.strides[0] * rows * entry.dtype.itemsize
                             for entry in kernel.inputs]
        self._output_steps = []
        for output in kernel.outputs:
            if output.reduce is not None and 0 in kernel.reduce_axes:
                self._output_steps.append(None)
            else:
                full = kernel.output_shape(output)
                self._output_steps.append(math.prod(full[1:]) * rows * output.dtype.itemsize)

    def run(self, inputs: list, outputs: list) -> None:
        partials = [None if step is not None else
                    [np.empty(self.block.output_shape(output), output.dtype.numpy)
                     for _ in range(self.parts)]
                    for output, step in zip(self.kernel.outputs, self._output_steps)]
        input_bases = [array.ctypes.data for array in inputs]
        output_bases = [array.ctypes.data for array in outputs]

        def pointers(part: int) -> list:
            moved = [base + part * step for base, step in zip(input_bases, self._input_steps)]
            for index, step in enumerate(self._output_steps):
                moved.append(partials[index][part].ctypes.data if step is None
                             else output_bases[index] + part * step)
            return moved

        pending = [blas.pool().submit(self.compiled.call_pointers, pointers(part))
                   for part in range(1, self.parts)]
        self.compiled.call_pointers(pointers(0))
        for future in pending:
            future.result()
        for index, output in enumerate(self.kernel.outputs):
            if partials[index] is not None:
                combined = _COMBINE[output.reduce].reduce(partials[index], axis=0)
                np.copyto(outputs[index], combined.reshape(outputs[index].shape),
                          casting="unsafe")
