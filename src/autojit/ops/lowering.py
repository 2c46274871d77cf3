"""The lowering descriptors of the op registry: what codegen, the CUDA runtime and the passes
need to know about a primitive (an elementwise expression, a reduction, an index remapping, a
library call, or the primitives it stands for while tracing).

`define_op` (registry.py) takes one of these as an op's `lowering`; none of the readers
recognises an op by its name (docs/notes/op-facts.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Elementwise:
    """A scalar expression over the inputs, e.g. ``"({0} * {1})"`` or ``"exp({0})"``.

    exact: the result for given operand values is exactly rounded (IEEE arithmetic, compares,
    selects, bit manipulation), so it does not depend on the array's size or layout and one
    element evaluated alone stands for all of a uniform operand (constant folding). NumPy's
    SIMD and scalar loops of transcendental functions may differ in the last bit: not exact.
    """
    expression: str
    exact: bool = False
    # Ops whose value on the same operand this one's evaluation computes on the way (sin and
    # cos: one reduction, both series, a quadrant select apart): the CPU schedule runs such a
    # node in its companion's kernel (codegen/schedule/fusion.py), where the code generator's
    # common subexpression elimination leaves the second a few selects.
    companions: tuple = ()
    # The expression over complex operands, which a CPU kernel computes as pairs of real
    # values (codegen/cpu/llvm/complex.py): True where `expression` holds as written (a sum,
    # a quotient, exp), a template of its own where it does not (conj's), False where complex
    # operands are not lowered and the plan runs the op's impl (docs/notes/complex.md); or a
    # function of the operands (each a Python number, or None for a tensor) giving one of
    # these, for an op lowered for some operands only (pow, by an integer number).
    complex_expression: bool | str | Callable = False


def complex_template(lowering, operands: tuple) -> str | None:
    """The template a kernel evaluates over complex operands of an elementwise op
    (Elementwise.complex_expression), or None where it has none; `operands`: the step's, each
    a Python number or None for a tensor."""
    if lowering.__class__ is not Elementwise:
        return None
    form = lowering.complex_expression
    if callable(form):
        form = form(operands)
    if form is True:
        return lowering.expression
    return form or None


# How two partial results of a reduction combine, and the combine's identity: what codegen
# starts an accumulator from (an infinity stands for the dtype's lowest or highest value).
COMBINE_IDENTITY = {"sum": 0, "prod": 1, "max": -math.inf, "min": math.inf}


@dataclass(frozen=True)
class Reduction:
    """A reduction over `dim` of one input.

    kind: what it computes (sum, prod, max, min, argmax, argmin, any, all).
    combine: how a kernel combines partial results ("sum", "prod", "max", "min"), or None for
        a reduction whose result is not a combination of values (argmax, argmin: an index).
    logical: reads its input as truth values (any, all: a max or min over bools).
    """
    kind: str
    combine: str | None
    logical: bool = False

    @property
    def identity(self) -> float:
        return COMBINE_IDENTITY[self.combine]


@dataclass(frozen=True)
class Layout:
    """An index remapping (reshape, permute, broadcast, slice, pad, concatenate, flip,
    diagonal).

    fold: for a layout a kernel can read through strides without materializing it,
        `fold(shape, strides, output_shape, **attrs)` gives the strides (in elements of the
        source) of the output over a source seen with `shape` and `strides`, or None where
        strides cannot express it (a reshape of a non-contiguous view); None for the layouts
        that always copy.
    start: for a folding view whose first element need not be its source's (a slice),
        `start(shape, strides, attrs)` gives that element's position, in elements, from the
        source's first as seen with `shape` and `strides`, or None where it cannot be told
        (a symbolic bound); None for the views that always start at their source's first
        element.
    places: for a layout that writes each input into a part of its output, zeros elsewhere
        (cat, embed_slice), `places(output_shape, attrs)` gives per input the (start, stop,
        step) per dim of its part; a compiled plan then writes the parts in place instead of
        running the impl. None for the others.
    """
    kind: str
    fold: Callable | None = None
    start: Callable | None = None
    places: Callable | None = None


# Operand roles of an extern call: what each input is to the routine. "host_index" is an index
# that may stay on the CPU while the data is on a GPU, as torch's x[index] allows.
EXTERN_ROLES = frozenset(("data", "index", "host_index", "values", "left", "right"))


@dataclass(frozen=True)
class Background:
    """How a plan runs an extern call while its next steps run (a collective's exchange with
    the other processes): `start(*arrays, **attrs)` begins it and returns a handle,
    `progress(handle)` moves it along (called between the steps that run meanwhile, since a
    transport may progress only when called), `finish(handle)` waits for it and returns the
    result, as the op's impl would have."""
    start: Callable
    progress: Callable
    finish: Callable


@dataclass(frozen=True)
class Extern:
    """A call to a library routine (BLAS matmul) or an indexed gather/scatter kernel.

    routine: the routine the backends implement (batched_gemm, indexed_gather,
        indexed_scatter, gather_along_dim, scatter_add_along_dim, scatter_reduce_along_dim,
        nonzero_static), or one they run through the NumPy impl until they have their own
        (sort, cumulative_sum, search_sorted, ...).
    operands: one role per input (EXTERN_ROLES).
    communicates: the call exchanges data with other processes, which run the same call at
        the same point of the same program: every process must run it, exactly once per run,
        so the passes never drop it as dead code nor evaluate it at compile time, and a
        failed run is not run again to find eager's error (docs/notes/distributed.md).
    background: a Background when a plan may overlap the call with the steps after it, None
        when it runs where it stands.
    reinterprets: the impl is a NumPy view of its one input's memory as another dtype or
        shape and nothing else (view_as_real, view_as_complex): a compiled plan calls it
        without the eager dispatch, and its native program records it as a view.
    """
    routine: str
    operands: tuple
    communicates: bool = False
    background: Background | None = None
    reinterprets: bool = False

@dataclass(frozen=True)
class Decomposition:
    """An op with a NumPy impl of its own that compiled code sees as other primitives.

    function(*inputs, **attrs) computes the op's value in autojit ops. Eagerly the op runs its
    impl, one routine over the data where the composite would take a dispatch and a pass over
    memory per primitive (softmax: max, shift, exp, sum and divide in place). While tracing,
    and on a device with no kernel of its own for it, it runs `function` instead, with grad
    mode and forward mode off, so a graph never holds the op and codegen needs nothing for it;
    autograd, forward mode and vmap see the op itself and use its vjp, jvp and batch rule (a
    backward written with the op's own formula, as torch's derivatives of softmax and
    layer_norm are).
    """
    function: Callable


def companions(op, other) -> bool:
    """Whether `other` is one of `op`'s Elementwise.companions: evaluated on the same operand
    in one kernel, the two share their work."""
    lowering = op.lowering
    return lowering.__class__ is Elementwise and other.name in lowering.companions


def follows_operands(op) -> bool:
    """Whether the op's eager result is laid out as NumPy's ufuncs lay out theirs, after its
    operands' layout (a transposed operand, a transposed result), as torch's elementwise
    kernels do: the Elementwise ops and the Externs that run an elementwise NumPy routine."""
    lowering = op.lowering
    return lowering.__class__ is Elementwise or (
        lowering.__class__ is Extern and lowering.routine == "numpy_elementwise")


def communicates(op) -> bool:
    """Whether a primitive (a registry.Op) exchanges data with other processes
    (Extern.communicates)."""
    lowering = op.lowering
    return lowering.__class__ is Extern and lowering.communicates


LOWERINGS = (Elementwise, Reduction, Layout, Extern, Decomposition)


def host_index_operand(op) -> int | None:
    """The position of an extern's index operand that may stay on the CPU while its data is on
    a GPU (the "host_index" role), or None."""
    lowering = op.lowering
    if lowering.__class__ is Extern and "host_index" in lowering.operands:
        return lowering.operands.index("host_index")
    return None
