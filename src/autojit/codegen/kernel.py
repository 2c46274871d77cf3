"""The kernel description: what the fusion schedule hands to a renderer.

A Kernel is one loop nest over an iteration space (`shape`, C order). Its inputs are arrays
read through element strides over that space (a stride of 0 broadcasts an axis). Its body is a
straight-line list of steps, each one elementwise registry primitive applied to inputs, earlier
steps and Python scalar literals. Its outputs store a step's value: either at every point of
the space (a C-contiguous array of `shape`), or reduced over `reduce_axes` with a reduction kind
(sum, prod, max, min), giving a C-contiguous array of `shape` with those axes set to 1.

The fusion schedule (schedule/fusion.py) builds Kernels from IR graphs; a backend renders and
compiles them (cpu/render.py and cpu/jit.py, cuda/render.py and cuda/jit.py). Below the kernel,
the loop nest that runs it (`loop_plan`), which both renderers emit. Nothing here depends on a
backend.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field

import numpy as np

from ..ops.registry import COMBINE_IDENTITY, Op
from ..tensor import dtypes

# The combines a reduced output may use: registry.Reduction.combine's values.
REDUCTION_KINDS = tuple(COMBINE_IDENTITY)


def identity_value(kind: str, dtype: dtypes.DType):
    """The value a `kind` accumulator of `dtype` starts from: the registry's identity, with
    the infinities of max and min read as the dtype's extremes (False and True for bool)."""
    value = COMBINE_IDENTITY[kind]
    if math.isinf(value) and not dtype.is_floating_point:
        if dtype is dtypes.bool_:
            return value > 0
        info = np.iinfo(dtype.numpy)
        return info.min if value < 0 else info.max
    return value
# Reduced outputs whose partial results are kept in a wider dtype than the output's own, by
# reduction kind and output dtype: a float32 sum is accumulated in float64, so that its error
# does not grow with the number of elements (docs/notes/accurate-numerics.md).
WIDER_ACCUMULATOR = {("sum", dtypes.float32): dtypes.float64}


class KernelError(Exception):
    """A kernel reported an error through its status (ERRORS below). The plan that
    ran it raises eager's error instead: its graph run through the reference interpreter on
    the same inputs raises it, from the op eager would have failed at first, with eager's
    message (schedule.Plan, docs/notes/errors-in-kernels.md)."""


class KernelRuntimeError(KernelError, RuntimeError):
    """A kernel's error whose message is eager's already (a negative integer power, an
    integer division by 0)."""


class CheckFailed(KernelError):
    """A kernel's index check failed; the message, which names the offending index, comes
    from the reference."""


# Error codes a kernel returns, one bit each (the lowest set bit is raised). A plan turns
# them into eager's error (KernelError); an index check's message names the offending
# entry, which the kernel does not keep (docs/notes/errors-in-kernels.md).
NEGATIVE_POWER, INDEX_OUT_OF_RANGE, DIVISION_BY_ZERO = 1, 2, 4
ERRORS = {
    NEGATIVE_POWER: (KernelRuntimeError, "Integers to negative integer powers are not allowed."),
    INDEX_OUT_OF_RANGE: (CheckFailed, "an index is out of range"),
    DIVISION_BY_ZERO: (KernelRuntimeError, "ZeroDivisionError"),
}


@dataclass(frozen=True)
class KernelInput:
    """An array read by the kernel: its dtype, its element strides over the space, and the
    element at which the space's first point lies (a slice of the array starts inside it).
    `same_as`: an earlier input that is the same array with the same strides, only another
    offset (a pooling window's elements, a stencil's neighbours); the CPU renderer reads both
    through that input's pointer, so that LLVM sees one array at nearby offsets and loads it
    with wide loads and shuffles where separate pointers made it gather element by element."""
    dtype: dtypes.DType
    strides: tuple
    offset: int = 0
    same_as: int | None = None


@dataclass(frozen=True)
class Operand:
    """What a step reads: ("input", i), ("step", j) with j < this step, ("literal", v), or,
    in a generic kernel, ("runtime", k): its k-th constant (Kernel.constants), read at run
    time with its sizes (a mean's divisor that is a size the graph computes)."""
    kind: str
    index: object  # int for input/step/runtime, the Python scalar for literal


@dataclass(frozen=True)
class Step:
    """`op(*operands, **attrs)`: operands are cast to `compute_dtype` (when not None) before the
    op's expression is evaluated; the value has `out_dtype` (the op's dtype rule)."""
    op: Op
    operands: tuple
    attrs: dict
    compute_dtype: dtypes.DType | None
    out_dtype: dtypes.DType


@dataclass(frozen=True)
class KernelOutput:
    """The value of step `step` stored to an output array; `reduce` is None or a kind.
    `strides`: for a stored output written into part of a larger array (a piece of a cat),
    its element strides over the space; None for a C-contiguous array of the space's shape."""
    step: int
    dtype: dtypes.DType
    reduce: str | None = None
    strides: tuple | None = None


@dataclass
class Kernel:
    name: str
    shape: tuple
    inputs: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    reduce_axes: tuple = ()
    # Generic: the loop extents and the strides other than 0 and 1 are read at run time from
    # an int64 array passed after the inputs (generic_layout below), so that one compiled
    # kernel serves every size of the same loop structure (dynamic shapes).
    generic: bool = False
    # A generic kernel's constants read at run time from the same array (ints, and floats as
    # their float64 bits), which its "runtime" operands name by position.
    constants: tuple = ()
    # A generic kernel made for a small kernel of fixed sizes (cpu/jit.py's shares_small_code):
    # its code comes from the quick code generator, so it is kept apart from the generic
    # kernels of dynamic shapes, which may run at any size.
    small: bool = False

    def output_shape(self, output: KernelOutput) -> tuple:
        if output.reduce is None:
            return self.shape
        return tuple(1 if axis in self.reduce_axes else extent
                     for axis, extent in enumerate(self.shape))

    def structural_key(self) -> tuple:
        """Everything that decides the generated code (shapes included, unless the kernel is
        generic: then its loop structure), for caching."""
        if self.generic:
            space = ("generic", generic_layout(self)[0],
                     tuple(entry.dtype.name for entry in self.inputs))
            if self.constants:
                space += (tuple(type(value).__name__ for value in self.constants),)
            if self.small:
                space += ("small",)
        else:
            space = (self.shape, self.reduce_axes,
                     tuple((entry.dtype.name, entry.strides, entry.offset, entry.same_as)
                           for entry in self.inputs))
        return (
            *space,
            # Literals by type and repr: 0.0 == -0.0 (and 1 == 1.0 == True) as Python values,
            # but they are different constants in the generated code.
            tuple((step.op.name, tuple((operand.kind, type(operand.index).__name__,
                                        repr(operand.index)) for operand in step.operands),
                   tuple(sorted(
                (key, repr(value)) for key, value in step.attrs.items())),
                step.compute_dtype.name if step.compute_dtype else None, step.out_dtype.name)
                for step in self.steps),
            tuple((output.step, output.dtype.name, output.reduce, output.strides)
                  for output in self.outputs),
        )


def accumulator_dtype(output: KernelOutput) -> dtypes.DType:
    """The dtype a reduced output's total is kept in (WIDER_ACCUMULATOR), rounded to the
    output's dtype once, when it is stored."""
    return WIDER_ACCUMULATOR.get((output.reduce, output.dtype), output.dtype)


def kernel_name(number: int, nodes: list) -> str:
    """`k3_tanh_mul_sum`: a fused kernel's number in its plan, then the ops it fuses (the first
    four distinct, in graph order; `_etc` when there are more). The plan's description, the IR
    printout and the profiler's events use it; the compiled code, which kernels of the same
    structure share, is named by `code_name`."""
    names = list(dict.fromkeys(node.op.name for node in nodes))
    fused = "_".join(names[:4]) + ("_etc" if len(names) > 4 else "")
    return f"k{number}_{fused}"


def code_name(name: str) -> str:
    """A kernel's name without its number in the plan: `tanh_mul_sum` for `k3_tanh_mul_sum`."""
    match = _NUMBERED.fullmatch(name)
    return match.group(1) if match else name


_NUMBERED = re.compile(r"k\d+_(\w+)")


def contiguous_strides(shape: tuple) -> tuple:
    """The element strides of a C-contiguous array of `shape`."""
    strides, running = [], 1
    for extent in reversed(shape):
        strides.append(running)
        running *= extent
    return tuple(reversed(strides))


def reads_pointwise(kernel: Kernel, position: int) -> bool:
    """Whether `kernel` reads input `position` element for element with the points it stores:
    C-contiguous strides over the whole space (axes of extent 1 aside)."""
    own = contiguous_strides(kernel.shape)
    entry = kernel.inputs[position]
    return entry.offset == 0 and all(stride == expected for stride, expected, extent in
                                     zip(entry.strides, own, kernel.shape) if extent != 1)


def inputs_feeding(kernel: Kernel, stored: int, named=None) -> set:
    """The kernel inputs whose values step `stored` is computed from (an operand its op's
    expression never names, like fill's, feeds nothing); `named(expression)`, when given,
    says which operand positions of an expression to follow (all it names by default)."""
    inputs, pending, seen = set(), [stored], set()
    while pending:
        index = pending.pop()
        if index in seen:
            continue
        seen.add(index)
        step = kernel.steps[index]
        expression = step.op.lowering.expression
        followed = named(expression) if named is not None else None
        for position, operand in enumerate(step.operands):
            if f"{{{position}}}" not in expression or \
                    (followed is not None and position not in followed):
                continue
            if operand.kind == "input":
                inputs.add(operand.index)
            elif operand.kind == "step":
                pending.append(operand.index)
    return inputs


# ---- the loop nest a kernel runs (both renderers emit it) -------------------------------

def accumulates_in_memory(kernel: Kernel) -> bool:
    """Whether the kernel reduces over outer axes only, keeping its innermost axis.

    Such a reduction (a column sum of a row-major matrix, a bias gradient) runs in memory
    order instead, with the reduced outputs as accumulators in memory: the inner loop walks
    rows contiguously and adds them into the output row, which vectorizes, where running the
    reduce axis innermost would stride through memory one row length per element.
    """
    if not any(output.reduce for output in kernel.outputs):
        return False
    shape, reduce_axes = kernel.shape, set(kernel.reduce_axes)
    innermost = max((axis for axis in range(len(shape)) if shape[axis] != 1), default=None)
    return innermost is not None and innermost not in reduce_axes


def loop_plan(kernel: Kernel, in_memory: bool | None = None):
    """The loops to emit, outermost first: (extent, strides per array, reduces).

    Arrays are the inputs then the outputs. When the kernel has reduced outputs the reduce axes
    run innermost, unless it accumulates in memory (then every axis runs in C order and no
    loop is marked as reducing); axes of extent 1 vanish; adjacent axes that every array walks
    contiguously merge into one loop, so a contiguous elementwise kernel is one flat loop.
    `in_memory=False` keeps the reduce axes innermost regardless (the CUDA renderer's choice).
    """
    shape = kernel.shape
    reduces = any(output.reduce for output in kernel.outputs)
    reduce_axes = set(kernel.reduce_axes) if reduces else set()
    strides = [tuple(entry.strides) for entry in kernel.inputs]
    for output in kernel.outputs:
        own = output.strides if output.strides is not None else \
            contiguous_strides(kernel.output_shape(output))
        strides.append(tuple(0 if axis in reduce_axes and output.reduce else own[axis]
                             for axis in range(len(shape))))
    if in_memory is None:
        in_memory = accumulates_in_memory(kernel)
    if in_memory:
        order, reduce_axes = list(range(len(shape))), set()
    else:
        order = [axis for axis in range(len(shape)) if axis not in reduce_axes] + \
            sorted(reduce_axes)
    loops = []
    for axis in order:
        extent = shape[axis]
        if extent == 1:
            continue
        entry = [extent, [array[axis] for array in strides], axis in reduce_axes]
        if loops and loops[-1][2] == entry[2] and all(
                outer == inner * extent for outer, inner in zip(loops[-1][1], entry[1])):
            loops[-1] = [loops[-1][0] * extent, entry[1], entry[2]]
        else:
            loops.append(entry)
    return [(extent, tuple(array_strides), reduce) for extent, array_strides, reduce in loops]


def generic_layout(kernel: Kernel) -> tuple:
    """(structure, values) of a generic kernel: what its code depends on, and the int64 values
    it reads at run time.

    The structure is the loop plan with each extent left out (but whether it is 0) and each
    stride reduced to its class: 0 (a broadcast), 1 (contiguous, so the inner loop still
    vectorizes) or "runtime"; plus whether outputs accumulate in memory. The values are, per
    loop, its extent then its runtime strides; then, accumulating in memory, the size of each
    reduced output (for the identity fill); then the kernel's constants (constant_word).
    """
    in_memory = accumulates_in_memory(kernel)
    structure, values = [in_memory], []
    for extent, strides, reduces in loop_plan(kernel):
        classes = tuple(stride if stride in (0, 1) else "runtime" for stride in strides)
        structure.append((reduces, extent == 0, classes))
        values.append(extent)
        values.extend(stride for stride in strides if stride not in (0, 1))
    if in_memory:
        values.extend(math.prod(kernel.output_shape(output)) for output in kernel.outputs
                      if output.reduce is not None)
    values.extend(constant_word(value) for value in kernel.constants)
    return tuple(structure), values


def constant_word(value) -> int:
    """A generic kernel's constant as the int64 word it reads: an int itself, a float its
    float64 bits."""
    if isinstance(value, float):
        return struct.unpack("<q", struct.pack("<d", value))[0]
    return int(value)
