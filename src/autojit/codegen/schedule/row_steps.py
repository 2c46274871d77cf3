"""Indexed rows in a compiled plan: an embedding's lookup and its gradient, a cache's
`index_copy_`, a basic slice's write (`ids[..., 0] = 0`) and a gather along the last dim, each
run by the native routines of codegen/cpu/rows.py, so that the plan's native program repeats
them (fusion.py chooses these steps with group_steps.indexes_rows and gathers_along_last_dim).

The routines read an index in C order and values whose blocks of rows are each in C order. An
operand the plan makes as a strided view of another layout (a basic slice's positions, a
transposed gradient) is copied in C order by a kernel of the step's own, reading the view's
source through the view's strides (group_steps.strided_copy), into an array the step keeps;
a number written at each index becomes rows of that number, made once. Operands of another
layout or dtype than planned run through the op's impl, as a NodeStep does.
"""

from __future__ import annotations

import math

import numpy as np

from ...ir.graph import Value
from ..cpu import rows, workers
from .environment_keys import RECORD, REUSE
from .steps import NodeStep, copy_by_kernel


class IndexedRowsStep(NodeStep):
    """An index or index_put node on one dim with one index tensor (an embedding's lookup,
    and its gradient added into a zero table, on the first dim; a cache's `index_copy_` at a
    position on a later one), run natively (cpu/rows.py): rows copied, put or added one index
    at a time, in the order the op's NumPy impl takes them, one call per block of the dims
    before the indexed one, so that the plan's native program can repeat it. Other arrays
    than planned (data or index not C-contiguous, values whose blocks are not, another
    dtype) run through the impl, as a NodeStep does."""

    def __init__(self, node, scatter: bool, copies=None):
        super().__init__(node)
        self.scatter = scatter
        data = node.inputs[0]
        self.accumulate = bool(node.attrs.get("accumulate")) if scatter else False
        self._dtype = data.dtype.numpy
        dim = self._dim = tuple(node.attrs.get("dims", (0,)))[0]
        # The dims before the indexed one: a block of rows each (a cache's batch and heads).
        self._outer = math.prod(data.shape[:dim])
        self._rows = data.shape[dim]
        self._row = math.prod(data.shape[dim + 1:])
        self._count = math.prod(node.inputs[-1].shape[1:])
        kind = ("add" if self.accumulate else "put") if scatter else "gather"
        self._function = rows.function(kind, self._dtype)
        self.compiled = self  # Program._fail asks the failing step's `compiled`
        self._keys = [id(value) for value in node.inputs]
        # A number written at each index (indexes_rows): its rows made once, in the data's
        # dtype as the impl's setitem casts it, and kept from call to call for the program.
        self._numbers = {}
        for position, value in enumerate(node.inputs[1:-1], 1):
            if not isinstance(value, Value):
                rows_shape = data.shape[:dim] + tuple(node.inputs[-1].shape[1:]) + \
                    data.shape[dim + 1:]
                made = np.empty(rows_shape, self._dtype)
                try:
                    made[...] = value
                except (OverflowError, TypeError, ValueError):
                    self._function = None  # the impl raises NumPy's error itself
                self._numbers[position] = made
        # Per operand after the data: (its source's key and shape, the compiled copy, the array
        # it is copied into, kept from call to call) where the plan makes it a strided view
        # whose layout the routines do not read (a basic slice's positions, `ids[..., 0]`; a
        # relative position bias's gradient, transposed), from group_steps.strided_copy.
        self._copies: list = [None]
        for value, copy in zip(node.inputs[1:], copies or ()):
            self._copies.append(None if copy is None else (
                id(copy[0]), tuple(copy[0].shape), copy[1],
                np.empty(value.shape, value.dtype.numpy)))
        self.copy_sources = [copy[0] for copy in copies or () if copy is not None]

    @staticmethod
    def check_status(status: int) -> None:
        from ..cpu.jit import CompiledKernel

        CompiledKernel.check_status(status)

    def _blocks(self, array: np.ndarray) -> list | None:
        """The byte offsets of `array`'s blocks (one per index of the dims before the indexed
        one), each of whose rows must lie one after another (C order within the block, as a
        cache's values transposed from (batch, position, heads, size) are), else None."""
        if array.flags.c_contiguous:
            block = array.nbytes // max(self._outer, 1)
            return [number * block for number in range(self._outer)]
        outer = self._dim
        if array.size == 0 or not array[(0,) * outer].flags.c_contiguous:
            return None
        strides = array.strides[:outer]
        return [sum(index * stride for index, stride in zip(place, strides))
                for place in np.ndindex(array.shape[:outer])]

    def run(self, environment: dict) -> None:
        arrays = [self._numbers[position] if position in self._numbers else environment[key]
                  for position, key in enumerate(self._keys)] if self._numbers else \
            [environment[key] for key in self._keys]
        if self.copy_sources:
            for position, copy in enumerate(self._copies):
                if copy is not None:
                    arrays[position] = self._contiguous(position, arrays[position], environment)
        dtype = self._dtype
        if self._function is None or not all(array.__class__ is np.ndarray for array in arrays) \
                or not arrays[0].flags.c_contiguous or not arrays[-1].flags.c_contiguous \
                or arrays[-1].dtype != np.int64 or \
                any(array.dtype != dtype for array in arrays[:-1]):
            super().run(environment)
            return
        taken_blocks = self._blocks(arrays[1]) if self.scatter else None
        if self.scatter and taken_blocks is None:
            super().run(environment)
            return
        record = environment.get(RECORD)
        item = dtype.itemsize
        if self.scatter:
            data, values, index = arrays
            out = np.empty_like(data)
            np.copyto(out, data)
            if record is not None:
                record.copy(out, data)
            row = self._row if self.accumulate else self._row * item
            words = (out, values, index)
        else:
            data, index = arrays
            out = np.empty(self.node.output.shape, dtype)
            row = self._row * item
            words = (data, out, index)
        address = workers.data_address
        first, second, index = (address(array) for array in words)
        # Block by block of the dims before the indexed one: the data's block of rows (out's,
        # for a scatter), and the values' block of `count` rows (out's, for a gather).
        data_block, taken_block = self._rows * self._row * item, self._count * self._row * item
        if taken_blocks is None:  # a gather's fresh output
            taken_blocks = [block * taken_block for block in range(self._outer)]
        for block, taken in enumerate(taken_blocks):
            table = np.array([first + block * data_block, second + taken, index,
                              self._count, row, self._rows], np.int64)
            status = rows.call(self._function, table)
            if status:
                self.check_status(status)
            if record is not None:
                record.call(self._function, table.tolist(), (0, 1, 2), *arrays, out)
        environment[id(self.node.output)] = out

    def _contiguous(self, position: int, array, environment: dict):
        """Operand `position` in a layout the routines read: a strided view copied in C order
        by the step's kernel from its source, where that source is the array planned; else as
        it is (run() then hands the node to its impl where the routines cannot read it)."""
        key, shape, compiled, out = self._copies[position]
        if array.__class__ is not np.ndarray or array.flags.c_contiguous or \
                (position < len(self._keys) - 1 and self._blocks(array) is not None):
            return array
        source = environment[key]
        if source.__class__ is not np.ndarray or not source.flags.c_contiguous or \
                source.shape != shape or source.dtype != out.dtype:
            return array
        if not environment.get(REUSE, False):
            # Kept buffers serve one run at a time (plan.py): a run beside another, on another
            # thread, copies into an array of its own.
            out = np.empty_like(out)
        copy_by_kernel(compiled, source, out, out, environment)
        return out

    def kept_arrays(self) -> list:
        kept = list(self._numbers.values())
        for copy in self._copies:
            if copy is not None:
                # (a generic copy kernel reads its sizes from an array of its own)
                sizes = getattr(copy[2], "sizes", None)
                kept.extend(array for array in (copy[3], sizes) if array is not None)
        return kept

    def describe(self) -> str:
        copied = [f"%{value.id}" for value, copy in zip(self.node.inputs, self._copies)
                  if copy is not None]
        return f"rows {self.node.op.name}" + (
            f" (reading {', '.join(copied)} copied in C order)" if copied else "")


class GatherRowsStep(NodeStep):
    """A gather along the last dim (chosen by group_steps.gathers_along_last_dim: a BERT
    embedding's token-type ids taken from a buffer at the positions) run natively by rows.py's
    gather with rows of one element: for each index of the dims before the last, that block's
    elements of the index pick elements of the data's block, so that the plan's native program
    repeats it. The data's blocks may lie anywhere (an expanded buffer's are one block), each
    with its last dim's elements one after another; other layouts, and an index not
    C-contiguous, run through the impl, as a NodeStep does."""

    def __init__(self, node):
        super().__init__(node)
        data, index = node.inputs
        self._dtype = data.dtype.numpy
        self._rows, self._count = data.shape[-1], index.shape[-1]
        self._function = rows.function("gather")
        self.compiled = self  # Program._fail asks the failing step's `compiled`
        self._keys = (id(data), id(index))

    check_status = IndexedRowsStep.check_status

    def run(self, environment: dict) -> None:
        data, index = (environment[key] for key in self._keys)
        item = self._dtype.itemsize
        if self._function is None or data.__class__ is not np.ndarray or \
                index.__class__ is not np.ndarray or not index.flags.c_contiguous or \
                index.dtype != np.int64 or data.dtype != self._dtype or \
                (data.strides[-1] != item and self._rows > 1):
            super().run(environment)
            return
        out = np.empty(self.node.output.shape, self._dtype)
        address = workers.data_address
        record = environment.get(RECORD)
        strides = data.strides[:-1]
        for block, place in enumerate(np.ndindex(data.shape[:-1])):
            start = sum(position * stride for position, stride in zip(place, strides))
            table = np.array([address(data) + start,
                              address(out) + block * self._count * item,
                              address(index) + block * self._count * 8,
                              self._count, item, self._rows], np.int64)
            status = rows.call(self._function, table)
            if status:
                self.check_status(status)
            if record is not None:
                record.call(self._function, table.tolist(), (0, 1, 2), data, index, out)
        environment[id(self.node.output)] = out

    def describe(self) -> str:
        return f"rows {self.node.op.name} along the last dim"
