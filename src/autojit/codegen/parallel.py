"""One large fused kernel on several cores: its space split along the first axis.

A kernel (codegen/kernel.py) walks its space with strides fixed at compile time, so the same
machine code runs any block of rows when its array pointers are moved to the block's first
row. `split_kernel` compiles the kernel once more for a block of `rows / parts` rows (cached
like any kernel); `SplitKernel.run` then calls that code once per block, one block on the
calling thread and the others on the native workers of workers.py (a table of each block's
pointers, read by their `kernel_part`), or where there are none on the Python pool of
codegen/blas.py (the ctypes call releases the GIL, so the blocks still run at the same time).

Outputs that keep the first axis are written in place, block by block. Outputs reduced over
the first axis (a total, a column sum) get one partial result per block, combined at the end
with the reduction's NumPy counterpart; float sums are then added in another order than one
core would, as a vectorized sum already does.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import blas, workers

# A kernel runs on several cores from this much work: its elements times the instructions of
# its rendered function beyond the loop's own (~40 lines: a proxy for the work per element).
# On the native workers (hand-off ~1 us, ~5 us with the pointer table): a 128x256 tanh kernel
# (2.5M) took 37 us split against 54 us on one core, a 128x256 relu (0.7M) 17 us against 9.
MIN_WORK = 1 << 21
LOOP_LINES = 40
# Through the Python pool (a hand-off ~20 us), kernels below this many elements stay on one
# core.
MIN_ELEMENTS = 1 << 18
_COMBINE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def split_kernel(kernel, compile_kernel, compiled=None):
    """A SplitKernel for `kernel` (whose one-core code is `compiled`), or None where one core
    is the better choice."""
    parts = workers.usable_cores()
    shape = kernel.shape
    if parts < 2 or not shape or blas.pool() is None:
        return None
    elements = math.prod(shape)
    if workers.shared() is not None:
        lines = compiled.llvm_ir.count("\n  ") if compiled is not None else 2 * LOOP_LINES
        if elements * max(1, lines - LOOP_LINES) < MIN_WORK:
            return None
    elif elements < MIN_ELEMENTS:
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
        self._reduced = [index for index, step in enumerate(self._output_steps) if step is None]
        # For the native workers: the pointer table (a row per part: the entry's pointers) is
        # the arrays' addresses plus these offsets; a reduced output's column gets its partial
        # buffers' addresses instead.
        steps = self._input_steps + [step or 0 for step in self._output_steps]
        unmoved = np.array(compiled.entry_pointers([0] * len(steps)), np.int64)
        self._offsets = np.array([compiled.entry_pointers([part * step for step in steps])
                                  for part in range(parts)], np.int64) - unmoved
        self._reduced_columns = [compiled.entry_pointers(list(range(len(steps))))
                                 .index(len(kernel.inputs) + index) for index in self._reduced]
        self._entry = compiled.address  # asked once: a ctypes cast per call costs ~1 us

    def run(self, inputs: list, outputs: list) -> None:
        partials = {index: [np.empty(self.block.output_shape(self.kernel.outputs[index]),
                                     self.kernel.outputs[index].dtype.numpy)
                            for _ in range(self.parts)] for index in self._reduced}
        native = workers.shared()
        if native is not None and self.parts <= native.parts:
            self._run_native(native, inputs, outputs, partials)
        else:
            self._run_on_pool(inputs, outputs, partials)
        for index, blocks in partials.items():
            combined = _COMBINE[self.kernel.outputs[index].reduce].reduce(blocks, axis=0)
            np.copyto(outputs[index], combined.reshape(outputs[index].shape),
                      casting="unsafe")

    def _run_native(self, native, inputs: list, outputs: list, partials: dict) -> None:
        address = workers.data_address
        table = self._offsets + np.array(self.compiled.entry_pointers(
            [address(array) for array in (*inputs, *outputs)]), np.int64)
        for index, column in zip(self._reduced, self._reduced_columns):
            table[:, column] = [address(block) for block in partials[index]]
        argument = np.array([self._entry, address(table), table.shape[1]], np.int64)
        self.compiled.check_status(
            native.run(native.kernel_part, address(argument), self.parts))

    def _run_on_pool(self, inputs: list, outputs: list, partials: dict) -> None:
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
