"""Placement: a cat's pieces computed where the cat keeps them, instead of copied there.

fusion.py writes a cat (or an embed_slice) as an AllocateStep and a kernel per piece copying
it into its part (RegionKernelStep). Two kinds of piece need no copy:

- a piece a fused kernel stores and nothing else reads (an LSTM gate's gradient, made for the
  cat of the four): the kernel stores it into its part of the cat's array directly, through
  the part's strides (a PlacedKernelStep);
- a piece that is itself a cat, whose part of the enclosing cat is one C-contiguous block (a
  time step's gate gradients, a [batch, 4 * hidden] block of the [steps, batch, 4 * hidden]
  input projection's gradient): its AllocateStep takes that block instead of an array of its
  own (`AllocateStep.within`), and other readers see an ordinary C-contiguous array.

The AllocateStep of the enclosing array moves up to just before the first step that now
writes into it; it has no inputs, so any earlier place is valid. Values the graph returns
are never placed: their arrays leave the plan.
"""

from __future__ import annotations

import dataclasses
import math

from ...ops.layout import RESHAPE, contiguous_strides
from ..cpu.parallel import split_kernel
from .plan import step_reads
from .steps import AllocateStep, KernelStep, PlacedKernelStep, RegionKernelStep

# A piece's part seen over the space of the kernel making it (a [1, batch, 4 * hidden] part
# made by a [batch, 4 * hidden] kernel): the piece is the kernel's value reshaped.
_reshape_fold = RESHAPE.lowering.fold


def place_parts(steps: list, returned: set, compile_kernel) -> list:
    """The steps with the pieces that need no copy placed (see the module docstring)."""
    readers: dict = {}
    makers: dict = {}
    for step in steps:
        for value in step_reads(step):
            readers[id(value)] = readers.get(id(value), 0) + 1
        if isinstance(step, AllocateStep):
            makers[id(step.value)] = step
        elif isinstance(step, KernelStep) and not isinstance(step, RegionKernelStep):
            for index, (value, _) in enumerate(step.outputs):
                makers[id(value)] = (step, index)
    # Arrays whose zeros a kernel writes first (an embed_slice's): a piece written earlier
    # would be overwritten, so theirs stay copies.
    zeroed = {id(step.target) for step in steps
              if isinstance(step, RegionKernelStep) and not step.sources}
    placed: dict = {}  # id(KernelStep) -> {output index: (Value, region bounds, strides)}
    dropped: set = set()  # ids of the RegionKernelSteps no longer needed
    before: dict = {}  # id(AllocateStep) -> the steps it must now come before
    for step in steps:
        if not isinstance(step, RegionKernelStep) or id(step.target) in returned or \
                not step.sources or id(step.target) in zeroed:
            continue
        source = step.sources[0]
        if id(source) in returned or not _reads_whole(step) or \
                source.dtype is not step.target.dtype:
            continue  # a copy that converts (a cat promoting its pieces) stays
        maker = makers.get(id(source))
        region = step.regions[0]
        bounds = tuple((part.start, part.stop, part.step) for part in region)
        allocate = makers.get(id(step.target))
        if isinstance(maker, AllocateStep) and maker.within is None and \
                _contiguous(step.kernel.outputs[0].strides, step.kernel.shape):
            maker.within = (step.target, region)
            dropped.add(id(step))
            before.setdefault(id(allocate), []).append(maker)
        elif isinstance(maker, tuple) and readers.get(id(source), 0) == 1:
            kernel_step, index = maker
            output = kernel_step.kernel.outputs[index]
            if output.reduce is not None or kernel_step.outputs[index][1] is not None or \
                    any(id(value) in returned for value, _ in kernel_step.outputs) or \
                    kernel_step.writes_in_place:
                continue
            strides = _reshape_fold(step.kernel.shape, step.kernel.outputs[0].strides,
                                    kernel_step.kernel.shape, {})
            if strides is None:
                continue
            placed.setdefault(id(kernel_step), {})[index] = (step.target, bounds, strides)
            dropped.add(id(step))
            before.setdefault(id(allocate), []).append(kernel_step)
    if not dropped:
        return steps
    replacement = {id(step): _placed_step(step, placed[id(step)], compile_kernel)
                   for step in steps if id(step) in placed}
    result = [replacement.get(id(step), step) for step in steps if id(step) not in dropped]
    # Move each AllocateStep that something now writes through up before its first writer:
    # in list order, so that an enclosed array's allocation has moved before the enclosing
    # array's is placed before it.
    for allocate in [step for step in result if id(step) in before]:
        writers = {id(replacement.get(id(step), step)) for step in before[id(allocate)]}
        first = min(index for index, step in enumerate(result) if id(step) in writers)
        current = result.index(allocate)
        if current > first:
            result.pop(current)
            result.insert(first, allocate)
    return result


def _reads_whole(step: RegionKernelStep) -> bool:
    """Whether a piece's copy reads its source whole, in C order (no slice, no transpose):
    then the source's own values are the part's, element for element. A leading slice of the
    source (a packed sequence's first rows) has contiguous strides too, so the sizes must
    agree as well."""
    entry = step.kernel.inputs[0]
    return entry.offset == 0 and _contiguous(entry.strides, step.kernel.shape) and \
        math.prod(step.kernel.shape) == math.prod(step.sources[0].shape)


def _contiguous(strides: tuple, shape: tuple) -> bool:
    own = contiguous_strides(shape)
    return all(stride == expected for stride, expected, extent in zip(strides, own, shape)
               if extent != 1)


def _placed_step(step: KernelStep, placements: dict, compile_kernel) -> PlacedKernelStep:
    """`step`'s kernel compiled again with the placed outputs' strides."""
    outputs = [dataclasses.replace(output, strides=placements[index][2])
               if index in placements else output
               for index, output in enumerate(step.kernel.outputs)]
    kernel = dataclasses.replace(step.kernel, outputs=outputs)
    regions = [(placements[index][0], placements[index][1]) if index in placements else None
               for index in range(len(outputs))]
    placed = PlacedKernelStep(kernel, compile_kernel(kernel), step.sources, step.outputs,
                              regions)
    placed.split = split_kernel(kernel, compile_kernel)
    placed.nodes = step.nodes
    return placed
