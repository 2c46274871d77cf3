"""Convolutions in a compiled plan: a convolution primitive's node run by the native routines
of codegen/cpu/convolution/__init__.py, so that the plan's native program repeats it.

The step's result and its scratch memory (the images laid out as the products read them, the
packed weight, the weight gradient's partial sums) are buffers of the plan (buffers.py): the
result shares a slot with values alive at other times, and the scratch, needed only while
the step runs, is handed to the next step's outputs right after it.

The routines read C-contiguous operands. An operand the plan makes as a strided view (a
ConvNeXt block's `permute` back to channels first, a ViT's patch gradient reshaped from its
transposed tokens) is copied in C order by a kernel of the step's own, reading the view's
source through the view's strides (group_steps.fold_layout), so that the program repeats the
copy too. Operands of another layout or dtype than planned run through the op's impl, as a
NodeStep does.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from ...ops.registry import Extern
from ..cpu import convolution
from .environment_keys import RECORD, REUSE
from .steps import NodeStep, copy_by_kernel

_KINDS = {"convolution_forward": "forward", "convolution_input_grad": "input",
          "convolution_weight_grad": "weight"}


def convolves(node) -> bool:
    """Whether a node is a convolution product the native routines compute: float32 or
    float64 operands of one dtype, fixed sizes, nothing empty."""
    lowering = node.op.lowering
    if lowering.__class__ is not Extern or lowering.routine not in _KINDS:
        return False
    values = [*node.inputs, node.output]
    return all(hasattr(value, "shape") and all(isinstance(n, int) and n > 0
                                               for n in value.shape) for value in values) and \
        len({value.dtype for value in values}) == 1 and \
        convolution.supported(node.output.dtype.numpy) and \
        convolution.available(node.output.dtype.numpy)


class ConvStep(NodeStep):
    """One convolution product (see the module docstring)."""

    def __init__(self, node, copies=(None, None)):
        super().__init__(node)
        first, second = node.inputs
        dtype = node.output.dtype.numpy
        self.geometry = convolution.geometry(
            _KINDS[node.op.lowering.routine], tuple(first.shape), tuple(second.shape),
            convolution.attrs_key(node.attrs), dtype.str)
        self._keys = (id(first), id(second))
        self._dtype = dtype
        # Per operand: (the key and shape of its source, the compiled copy, where its copy
        # lies in the scratch past the routines' part) where the plan makes it a strided view
        # (group_steps.strided_copy), else None. The sources are values the step reads
        # (plan.step_reads); the copies live only while the step runs, as the scratch does.
        self._copies: list = []
        self._copy_elements = 0
        line = 64 // dtype.itemsize
        for value, copy in zip((first, second), copies):
            if copy is None:
                self._copies.append(None)
                continue
            self._copies.append((id(copy[0]), tuple(copy[0].shape), copy[1],
                                 self._copy_elements))
            self._copy_elements += -(-math.prod(value.shape) // line) * line
        self.copy_sources = [copy[0] for copy in copies if copy is not None]
        # Buffers (buffers.py): the result, and the scratch, a value no other step reads.
        self._line = line
        self.scratch = SimpleNamespace(
            shape=(self._routines_part() + self._copy_elements,),
            dtype=SimpleNamespace(numpy=dtype))
        self.reusable = [False, False]
        self.slots: list = [None, None]
        self._kept: list = [None, None]
        self.compiled = self  # Program._fail asks the failing step's `compiled`

    @staticmethod
    def check_status(status: int) -> None:
        raise RuntimeError(f"native convolution failed with status {status}")

    def _buffer(self, index: int, shape: tuple, environment: dict) -> np.ndarray:
        if not (self.reusable[index] and environment.get(REUSE, False)):
            return np.empty(shape, self._dtype)
        kept = self._kept[index]
        if kept is None or kept.shape != shape:
            kept = self._kept[index] = self.slots[index].take(shape, self._dtype)
        return kept

    def _scratch(self, environment: dict) -> tuple:
        """(the scratch array, the elements of it the routines use, from its start). It holds
        a part's room per core (convolution.Geometry.parts), counted when the plan was made: a
        process whose workers have more parts (a child forked with other cores) gets scratch
        of its own. The operands' copies follow the routines' part."""
        size = self._routines_part()
        needed = size + self._copy_elements
        scratch = self._buffer(1, self.scratch.shape, environment) \
            if needed <= self.scratch.shape[0] else np.empty(needed, self._dtype)
        return scratch, size

    def _routines_part(self) -> int:
        """The routines' scratch elements, rounded up to a cache line when copies follow."""
        size = self.geometry.scratch_elements()
        return -(-size // self._line) * self._line if self._copy_elements else size

    def run(self, environment: dict) -> None:
        first, second = (environment[key] for key in self._keys)
        scratch = None
        if self._copy_elements:
            scratch, size = self._scratch(environment)
            first, second = (self._contiguous(index, array, environment, scratch, size)
                             for index, array in enumerate((first, second)))
        node = self.node
        if not all(array.__class__ is np.ndarray and array.flags.c_contiguous and
                   array.dtype == self._dtype and array.shape == value.shape
                   for array, value in zip((first, second), node.inputs, strict=True)):
            super().run(environment)  # the impl, which refuses a recording
            return
        geometry = self.geometry
        out = self._buffer(0, tuple(node.output.shape), environment)
        if scratch is None:
            scratch, _ = self._scratch(environment)
        calls = geometry.calls(first, second, out, scratch)
        geometry.run_calls(calls)
        environment[id(node.output)] = out
        record = environment.get(RECORD)
        if record is not None:
            for function, words, pointers, parts in calls:
                record.call(function, words, pointers, first, second, out, scratch,
                            geometry.table, parts=parts)

    def _contiguous(self, index: int, array, environment: dict, scratch, start: int):
        """Operand `index` in C order: copied into the scratch (from element `start` on) by
        the step's kernel from the source of the strided view it is, where that source is
        the array planned; else as it is (run() then hands the node to its impl)."""
        copy = self._copies[index]
        if copy is None or array.__class__ is not np.ndarray or array.flags.c_contiguous:
            return array
        key, shape, compiled, offset = copy
        source = environment[key]
        if source.__class__ is not np.ndarray or not source.flags.c_contiguous or \
                source.shape != shape or source.dtype != self._dtype:
            return array
        begin = start + offset
        out = scratch[begin:begin + array.size].reshape(array.shape)
        copy_by_kernel(compiled, source, out, scratch, environment)
        return out

    def kept_arrays(self) -> list:
        # (a generic copy kernel reads its sizes from an array of its own, as KernelStep's)
        sizes = [getattr(copy[2], "sizes", None) for copy in self._copies if copy is not None]
        return [array for array in (*self._kept, self.geometry.table, *sizes)
                if array is not None]

    def describe(self) -> str:
        copied = [f"%{value.id}" for value, copy in zip(self.node.inputs, self._copies)
                  if copy is not None]
        return f"convolution {self.node.op.name}" + (
            f" (reading {', '.join(copied)} copied in C order)" if copied else "")
