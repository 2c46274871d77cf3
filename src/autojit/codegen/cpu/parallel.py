"""One large fused kernel on several cores: its space split along the first axis.

A kernel (codegen/kernel.py) walks its space with strides fixed at compile time, so the same
machine code runs any block of rows when its array pointers are moved to the block's first
row. `split_kernel` compiles the kernel once more for a block of `rows / parts` rows (cached
like any kernel); `SplitKernel.run` then calls that code once per block, one block on the
calling thread and the others on the native workers of workers.py (a table of each block's
pointers, read by their `kernel_part`), or where there are none on the Python pool of
gemm/blas.py (the ctypes call releases the GIL, so the blocks still run at the same time).

Outputs that keep the first axis are written in place, block by block. Outputs reduced over
the first axis (a total, a column sum) get one partial result per block, combined at the end
with the reduction's NumPy counterpart; float sums are then added in another order than one
core would, as a vectorized sum already does.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import mathlib, workers
from .gemm import blas

# Splitting a kernel pays when one core's time for it exceeds twice the split's own cost, both
# measured on the 2-core development machine. One core's time is modelled as its bytes at
# about 80 GB/s (arrays that stay in L2) plus each transcendental function (mathlib/__init__.py) at
# about 0.5 ns per float32 element and 1.5 ns per float64 one. The split costs the hand-off and
# the pointer table, about 4 us; with outputs reduced over the split axis, also their partial
# blocks and the combine, about 8 us. (A 128x256 add-tanh kernel: 20 us on one core, 14 us
# split; a 128x256 kernel of four outputs and a column sum: 11 us on one core, 14 us split.)
_NS_PER_BYTE = 1 / 80
_FUNCTION_NS = {4: 0.5, 8: 1.5}
_SPLIT_NS = 4000
_REDUCED_SPLIT_NS = 8000
_FUNCTIONS = tuple(f"{name}(" for name in (*mathlib.UNARY, "pow"))
# Through the Python pool (a hand-off ~20 us), kernels below this many elements stay on one
# core.
MIN_ELEMENTS = 1 << 18
# Partial blocks start this many bytes apart at least: two cache lines, since the L2
# prefetcher fetches lines in pairs.
_BLOCK_ALIGNMENT = 128
_COMBINE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def split_kernel(kernel, compile_kernel):
    """A SplitKernel for `kernel`, or None where one core is the better choice."""
    parts = workers.cores_in_use()
    shape = kernel.shape
    if parts < 2 or not shape or blas.pool() is None:
        return None
    elements = math.prod(shape)
    if workers.shared() is not None:
        reduced = any(output.reduce is not None for output in kernel.outputs) and \
            0 in kernel.reduce_axes
        if one_core_ns(kernel) < 2 * (_REDUCED_SPLIT_NS if reduced else _SPLIT_NS):
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


def splits_never(kernel) -> bool:
    """Whether `split_kernel` leaves `kernel` on one core on any machine: too little work by
    either of its rules (a quick test, which asks nothing of the machine's cores)."""
    return math.prod(kernel.shape) < MIN_ELEMENTS and one_core_ns(kernel) < 2 * _SPLIT_NS


def one_core_ns(kernel) -> float:
    """The modelled time of `kernel` on one core, in nanoseconds (see _NS_PER_BYTE)."""
    elements = math.prod(kernel.shape)
    memory = 0
    for entry in kernel.inputs:
        # A broadcast input is read once per distinct element.
        distinct = math.prod(extent for extent, stride in zip(kernel.shape, entry.strides)
                             if stride)
        memory += distinct * entry.dtype.itemsize
    for output in kernel.outputs:
        memory += math.prod(kernel.output_shape(output)) * output.dtype.itemsize
    functions = 0.0
    for step in kernel.steps:
        expression = getattr(step.op.lowering, "expression", "")
        if expression.startswith(_FUNCTIONS):
            itemsize = (step.compute_dtype or step.out_dtype).itemsize
            functions += _FUNCTION_NS.get(itemsize, _FUNCTION_NS[8])
    return memory * _NS_PER_BYTE + elements * functions


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
            elif output.strides is not None:  # part of a larger array
                self._output_steps.append(output.strides[0] * rows * output.dtype.itemsize)
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
        self._entry = None  # compiled.address, asked once: a ctypes cast per call costs ~1 us
        self._last_bases: list | None = None
        self._table = self._argument = None  # the table is kept alive for the argument
        self._kept_partials: dict | None = None

    def run(self, inputs: list, outputs: list, keep: bool = False, record=None) -> None:
        """Run the blocks. `keep`: this is the plan's one run that may use buffers kept from
        the last (codegen/schedule/fusion.py), so the partial buffers and pointer table are kept
        too.
        `record`: a program.Recording the native calls are reported to."""
        # One buffer per reduced output holds every block's partial result, so that the
        # combine is one NumPy reduction straight into the output.
        partials = self._kept_partials if keep else None
        if partials is None:
            partials = {index: _partial_blocks(self.block.output_shape(
                self.kernel.outputs[index]), self.kernel.outputs[index].dtype.numpy, self.parts)
                for index in self._reduced}
            if keep:
                self._kept_partials = partials
        native = workers.shared()
        if native is not None and self.parts <= native.parts:
            table = self._run_native(native, inputs, outputs, partials, keep)
            if record is not None:
                record.kernel(self._entry_address(), table, *inputs, *outputs)
        else:
            self._run_on_pool(inputs, outputs, partials)
            if record is not None:
                record.refuse(f"kernel {self.kernel.name} ran on the Python pool")
        for index, blocks in partials.items():
            output = outputs[index]
            kind = self.kernel.outputs[index].reduce
            _COMBINE[kind].reduce(blocks, axis=0, out=output.reshape(blocks.shape[1:]))
            if record is not None:
                record.combine(kind, blocks, output)

    def _entry_address(self) -> int:
        # Asked on first run, not when the plan is built: the block's code may still be
        # compiling then (jit.parallel_compiles).
        if self._entry is None:
            self._entry = self.compiled.address
        return self._entry

    def kept_arrays(self) -> list:
        """The partial blocks kept across calls, and the sizes the block's code reads where it
        is a generic kernel's (jit.SizedKernel), which every part's pointer table names
        (program.py)."""
        kept = list(self._kept_partials.values()) if self._kept_partials else []
        sizes = getattr(self.compiled, "sizes", None)
        return kept if sizes is None else [*kept, sizes]

    def _run_native(self, native, inputs: list, outputs: list, partials: dict,
                    keep: bool) -> np.ndarray:
        """Run the parts on the workers; returns the pointer table they read."""
        address = workers.data_address
        bases = [address(array) for array in (*inputs, *outputs)]
        for index in self._reduced:
            bases.append(address(partials[index]))
        # The steady state calls with the same buffers each time: the pointer table and the
        # job's argument are made once per set of addresses (and used only by the run that
        # keeps buffers: a concurrent run builds its own).
        argument = self._argument if keep and bases == self._last_bases else None
        if argument is None:
            table = self._offsets + np.array(self.compiled.entry_pointers(
                bases[:len(inputs) + len(outputs)]), np.int64)
            for position, (index, column) in enumerate(zip(self._reduced,
                                                           self._reduced_columns)):
                table[:, column] = [bases[len(inputs) + len(outputs) + position] +
                                    part * partials[index].strides[0]
                                    for part in range(self.parts)]
            argument = np.array([self._entry_address(), address(table), table.shape[1]], np.int64)
            if keep:
                self._last_bases, self._table, self._argument = bases, table, argument
        else:
            table = self._table
        self.compiled.check_status(native.run(native.kernel_part, address(argument), self.parts))
        return table

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


def _partial_blocks(shape: tuple, dtype, parts: int) -> np.ndarray:
    """An array of `parts` C-contiguous blocks of `shape`, each starting on its own pair of
    cache lines, with a pair of lines between blocks. A block reduced over rows is stored to
    once per row; two cores storing to blocks that shared a cache line passed it between them
    every row (a 256x512 column sum split in two took 25 us, against 11 us with the blocks
    apart)."""
    dtype = np.dtype(dtype)
    count = math.prod(shape)
    # Rounded up, plus a gap: a block's rows are walked in order, and the prefetcher runs on
    # past its last line into the next block (blocks exactly 2 KB apart: 16 us).
    stride = (-(-count * dtype.itemsize // _BLOCK_ALIGNMENT) + 1) * _BLOCK_ALIGNMENT
    raw = np.empty(parts * stride + _BLOCK_ALIGNMENT, np.uint8)
    start = -workers.data_address(raw) % _BLOCK_ALIGNMENT
    rows = raw[start:start + parts * stride].reshape(parts, stride)
    return rows[:, :count * dtype.itemsize].view(dtype).reshape((parts, *shape))
