"""Kernel -> LLVM IR text: the loop nest around the kernel's steps.

jit.py compiles what this module renders. The loops walk the kernel's space in C order (reduce
axes innermost when the kernel reduces, unless only outer axes are reduced: then the outputs
accumulate in memory, see `accumulates_in_memory`), collapsing axes that every array walks
contiguously;
the body loads the inputs, emits each step through llvm_expression.StepEmitter (the op's
expression template from the registry), stores the elementwise outputs and folds the reduced
ones into accumulators. See docs/notes/cpu-codegen.md.

The rendered module exports `i32 NAME(ptr args)`: `args` holds the data pointers of the inputs
then the outputs; the result is 0, or an error code from ERRORS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from llvmlite import ir

from ...ops.lowering import complex_template
from ...ops.registry import Elementwise
from ...tensor import dtypes
from ..expression import RenderError, parse
from ..kernel import (
    ERRORS,
    REDUCTION_KINDS,
    Kernel,
    accumulates_in_memory,
    generic_layout,
    loop_plan,
)
from .llvm.expression import (
    BYTE,
    INT32,
    INT64,
    StepEmitter,
    Typed,
    constant,
    convert,
    register_type,
)
from .mathlib import trig as mathlib_trig
from .render_reduce import ReducingLoops

__all__ = ["ERRORS", "RenderError", "Rendered", "loop_plan", "parse", "render"]


# Interleaving of long loop bodies (KernelRenderer.interleave): instructions in the body.
INTERLEAVE_MIN_BODY = 600
INTERLEAVE_FOUR_MAX_BODY = 6000
# ... and only where the body's longest dependence chain is at least this share of it: a body
# of many independent chains (an LSTM's gates over several time steps) keeps the core busy
# without interleaving, which would only cost compile time (docs/notes/compile-latency.md).
INTERLEAVE_MIN_CHAIN = 0.05
INTERLEAVE_HINT = "llvm.loop.interleave.count"
LOOP_ID_MARK = "autojit.loop"


@dataclass(frozen=True)
class Rendered:
    name: str
    text: str
    arity: int


def _longest_chain(function) -> int:
    """The most instructions of `function` that depend one on the next (phis start chains)."""
    depth: dict = {}
    longest = 0
    for block in function.blocks:
        for instruction in block.instructions:
            if isinstance(instruction, ir.PhiInstr):
                depth[id(instruction)] = 0
                continue
            found = 1 + max((depth.get(id(operand), 0)
                             for operand in getattr(instruction, "operands", ())), default=0)
            depth[id(instruction)] = found
            longest = max(longest, found)
    return longest


class KernelRenderer(ReducingLoops):
    def __init__(self, kernel: Kernel, name: str, object_layout=None):
        for step in kernel.steps:
            if not isinstance(step.op.lowering, Elementwise):
                raise RenderError(f"{step.op.name}: only elementwise steps can be rendered, "
                                  f"its lowering is {step.op.lowering!r}")
        for output in kernel.outputs:
            if output.reduce is not None and output.reduce not in REDUCTION_KINDS:
                raise RenderError(f"kernel {kernel.name}: unknown reduction {output.reduce!r}")
        if kernel.generic and (any(entry.offset for entry in kernel.inputs) or
                               any(output.strides for output in kernel.outputs)):
            raise RenderError(f"kernel {kernel.name}: a generic kernel reads its inputs from "
                              "their first element and stores its outputs whole")
        if any(output.strides is not None and output.reduce for output in kernel.outputs):
            raise RenderError(f"kernel {kernel.name}: a reduced output is stored whole")
        self.kernel = kernel
        self.name = name
        self.module = ir.Module(name=name)
        # A generic kernel takes its sizes as one more input, after the kernel's inputs.
        self.sizes_argument = len(kernel.inputs) if kernel.generic else None
        self.inputs = len(kernel.inputs) + (1 if kernel.generic else 0)
        self.arity = self.inputs + len(kernel.outputs)
        self.arrays = len(kernel.inputs) + len(kernel.outputs)  # what offsets are kept for
        self.object_layout = object_layout
        self.runtime: list = []  # a generic kernel's sizes, loaded at entry, in layout order
        self.fill_sizes: list = []  # of those, the reduced outputs' sizes (identity fill)
        self.constant_words: list = []  # and its constants (Kernel.constants)
        self.loops = 0  # loops emitted so far (tells the innermost loop, see emit_loop)

    def render(self) -> Rendered:
        kernel = self.kernel
        body_type = ir.FunctionType(INT32, [ir.PointerType()] * self.arity)
        body = ir.Function(self.module, body_type, f"{self.name}.body")
        body.linkage = "internal"
        body.attributes.add("noinline")  # two entry points share it; noalias needs no inlining
        # Spilled vector registers go to 64-byte-aligned slots. Without this LLVM leaves the
        # stack at the ABI's 16 bytes and spills 512-bit registers with unaligned moves, which
        # straddle cache lines wherever the caller's stack happens to sit: a 64-element chain of
        # 20 tanh took 2.2 or 5.3-5.5 us from one process to the next, 2.1-2.3 us realigned.
        body.attributes.alignstack = 64
        for argument in body.args:
            argument.add_attribute("noalias")
        self.function = body
        self.b = builder = ir.IRBuilder(body.append_basic_block("entry"))
        self.status = builder.alloca(INT32, name="status")
        builder.store(ir.Constant(INT32, 0), self.status)
        self.in_memory = accumulates_in_memory(kernel)
        self.allocate_accumulators()
        plan = loop_plan(kernel)
        if kernel.generic:
            plan = self.load_runtime_plan(plan)
        if self.in_memory:
            self.emit_identity_fill()
        if not any(extent == 0 for extent, _, reduces in plan if not reduces):
            # An input read through a slice starts inside its array; outputs at their start.
            offsets = [ir.Constant(INT64, entry.offset) for entry in kernel.inputs] + \
                [ir.Constant(INT64, 0)] * len(kernel.outputs)
            if self.tiles:
                self.emit_tiled(plan, offsets)
            else:
                self.emit_level(plan, offsets)
        builder.ret(builder.load(self.status))

        entry = ir.Function(self.module, ir.FunctionType(INT32, [ir.PointerType()]), self.name)
        outer = ir.IRBuilder(entry.append_basic_block("entry"))
        pointers = [outer.load(outer.gep(entry.args[0], [ir.Constant(INT64, i)],
                                         source_etype=ir.PointerType()), typ=ir.PointerType())
                    for i in range(self.arity)]
        outer.ret(outer.call(body, pointers))
        if self.object_layout is not None:
            self.emit_object_entry(body)
        return Rendered(self.name, mathlib_trig.finish(_distinct_loop_ids(str(self.module))),
                        self.arity)

    def emit_object_entry(self, body):
        """`i32 NAME.objects(ptr inputs, ptr outputs)` taking two Python lists of ndarrays:
        it reads each list's item vector and each array's data pointer at the offsets given
        (found and checked at run time by jit.py), so a call costs no Python per array."""
        item_offset, data_offset = self.object_layout
        entry = ir.Function(self.module, ir.FunctionType(INT32, [ir.PointerType()] * 2),
                            f"{self.name}.objects")
        b = ir.IRBuilder(entry.append_basic_block("entry"))

        def field(pointer, offset):
            return b.load(b.gep(pointer, [ir.Constant(INT64, offset)], source_etype=BYTE),
                          typ=ir.PointerType())

        pointers = []
        for argument, count in zip(entry.args, (self.inputs, len(self.kernel.outputs))):
            items = field(argument, item_offset)
            for index in range(count):
                array = b.load(b.gep(items, [ir.Constant(INT64, index)],
                                     source_etype=ir.PointerType()), typ=ir.PointerType())
                pointers.append(field(array, data_offset))
        b.ret(b.call(body, pointers))

    def load_runtime_plan(self, plan) -> list:
        """The loop plan with a generic kernel's extents and runtime strides as values loaded
        from its sizes argument (in generic_layout's order); an extent of 0 stays 0."""
        sizes = self.function.args[self.sizes_argument]
        count = len(generic_layout(self.kernel)[1])
        self.runtime = [self.b.load(self.b.gep(sizes, [ir.Constant(INT64, index)],
                                               source_etype=INT64), typ=INT64)
                        for index in range(count)]
        position, loaded = 0, []
        for extent, strides, reduces in plan:
            runtime_extent = self.runtime[position] if extent else 0
            position += 1
            runtime_strides = []
            for stride in strides:
                if stride in (0, 1):
                    runtime_strides.append(stride)
                else:
                    runtime_strides.append(self.runtime[position])
                    position += 1
            loaded.append((runtime_extent, tuple(runtime_strides), reduces))
        constants = len(self.runtime) - len(self.kernel.constants)
        self.fill_sizes = self.runtime[position:constants]
        self.constant_words = self.runtime[constants:]
        return loaded

    # ---- loops ----------------------------------------------------------------------------------

    def emit_level(self, plan, offsets):
        if plan and not plan[0][2]:
            self.emit_loop(plan[0], offsets, lambda inner: self.emit_level(plan[1:], inner))
            return
        if not self.accumulators and not self.complex_totals:  # elementwise: every loop is done
            self.emit_body(offsets, reduce_stores=False)
            return
        # Reduce loops (or none) from here (render_reduce.py).
        self.emit_reduction(plan, offsets)

    def emit_loop(self, level, offsets, emit_inner, with_index=False):
        """One loop of `level`'s extent moving each array's offset by its stride; the body is
        `emit_inner(offsets)`, or `emit_inner(offsets, index)` `with_index`."""
        extent, strides, _ = level
        b = self.b
        before = b.block
        loops_before = self.loops
        self.loops += 1
        header = self.function.append_basic_block("loop")
        after = self.function.append_basic_block("after")
        b.branch(header)
        b.position_at_end(header)
        index = b.phi(INT64, name="i")
        index.add_incoming(ir.Constant(INT64, 0), before)
        inner = [offset if isinstance(stride, int) and stride == 0 else
                 b.add(offset, b.mul(index, _as_value(stride)))
                 for offset, stride in zip(offsets, strides)]
        if with_index:
            emit_inner(inner, index)
        else:
            emit_inner(inner)
        following = b.add(index, ir.Constant(INT64, 1))
        index.add_incoming(following, b.block)
        latch = b.cbranch(b.icmp_signed("<", following, _as_value(extent)), header, after)
        if self.loops == loops_before + 1:  # the innermost loop: it holds the body
            self.interleave(latch)
        b.position_at_end(after)

    def interleave(self, latch):
        """Ask the vectorizer to interleave a long body's vector iterations.

        A body of hundreds of dependent operations (a chain of sin and tanh) is one long
        latency chain per vector; the out-of-order window cannot reach into the next
        iteration, so the core idles on latency. Interleaved copies are independent chains
        the core runs side by side (a 100-op chain: 14 us -> 6 us on 64 elements, and on 64K).
        LLVM's cost model does not interleave bodies this long by itself; short bodies keep
        its choice, and so do bodies of many independent chains (INTERLEAVE_MIN_CHAIN).
        Copies cost compile time in proportion, so the longest bodies get two.
        """
        size = sum(len(block.instructions) for block in self.function.blocks)
        if size < INTERLEAVE_MIN_BODY or _longest_chain(self.function) < \
                INTERLEAVE_MIN_CHAIN * size:
            return
        count = 4 if size < INTERLEAVE_FOUR_MAX_BODY else 2
        hint = self.module.add_metadata([ir.MetaDataString(self.module, INTERLEAVE_HINT),
                                         ir.Constant(INT32, count)])
        latch.set_metadata("llvm.loop", self.module.add_metadata(
            [ir.MetaDataString(self.module, LOOP_ID_MARK), hint]))

    # ---- the body -------------------------------------------------------------------------------

    def address(self, array, offsets, dtype):
        """`array` counts the kernel's inputs then outputs (a generic kernel's sizes argument
        sits between them)."""
        memory = BYTE if dtype is dtypes.bool_ else register_type(dtype)
        return self.b.gep(self.function.args[self.argument(array)], [offsets[array]],
                          inbounds=True, source_etype=memory), memory

    def argument(self, array) -> int:
        """The body's argument holding `array`'s pointer: an input that is an earlier one's
        array (KernelInput.same_as) is read through that one's pointer."""
        inputs = self.kernel.inputs
        if array < len(inputs) and inputs[array].same_as is not None:
            return inputs[array].same_as
        return array if self.sizes_argument is None or array < self.sizes_argument else \
            array + 1

    def complex_parts(self, array, offsets, dtype):
        """The addresses of a complex element's two parts: NumPy's interleaved pairs."""
        part = register_type(dtype.to_real())
        pair = ir.LiteralStructType([part, part])
        return [self.b.gep(self.function.args[self.argument(array)],
                           [offsets[array], ir.Constant(INT32, i)], inbounds=True,
                           source_etype=pair) for i in (0, 1)], part

    def load(self, array, offsets, dtype) -> Typed:
        if dtype.category == dtypes.COMPLEX:
            pointers, part = self.complex_parts(array, offsets, dtype)
            return Typed(tuple(self.b.load(pointer, typ=part, align=dtype.itemsize // 2)
                               for pointer in pointers), dtype)
        pointer, memory = self.address(array, offsets, dtype)
        value = self.b.load(pointer, typ=memory, align=dtype.itemsize)
        if dtype is dtypes.bool_:
            value = self.b.icmp_unsigned("!=", value, ir.Constant(BYTE, 0))
        return Typed(value, dtype)

    def store(self, array, offsets, typed: Typed):
        if typed.dtype.category == dtypes.COMPLEX:
            pointers, _ = self.complex_parts(array, offsets, typed.dtype)
            for pointer, value in zip(pointers, typed.value):
                self.b.store(value, pointer, align=typed.dtype.itemsize // 2)
            return
        pointer, memory = self.address(array, offsets, typed.dtype)
        value = typed.value
        if typed.dtype is dtypes.bool_:
            value = self.b.zext(value, BYTE)
        self.b.store(value, pointer, align=typed.dtype.itemsize)

    def flag_error(self, condition, code):
        b = self.b
        flag = b.select(condition, ir.Constant(INT32, code), ir.Constant(INT32, 0))
        b.store(b.or_(b.load(self.status), flag), self.status)

    def emit_body(self, offsets, reduce_stores):
        kernel, b = self.kernel, self.b
        loaded, values = {}, []
        for step in kernel.steps:
            operands = []
            for operand in step.operands:
                if operand.kind == "input":
                    if operand.index not in loaded:
                        loaded[operand.index] = self.load(operand.index, offsets,
                                                          kernel.inputs[operand.index].dtype)
                    value = loaded[operand.index]
                elif operand.kind == "step":
                    value = values[operand.index]
                elif operand.kind == "runtime":  # as a literal of the Python scalar's dtype
                    word = self.constant_words[operand.index]
                    value = Typed(b.bitcast(word, ir.DoubleType()), dtypes.float64) \
                        if isinstance(kernel.constants[operand.index], float) else \
                        Typed(word, dtypes.int64)
                else:
                    value = constant(operand.index, step.compute_dtype or
                                     dtypes.scalar_dtype(operand.index))
                if step.compute_dtype is not None:
                    value = convert(b, value, step.compute_dtype)
                operands.append(value)
            emitter = StepEmitter(b, step, operands, self.flag_error)
            value = emitter.emit(parse(_template(step, operands)))
            values.append(convert(b, value, step.out_dtype))
        for index, output in enumerate(kernel.outputs):
            value = convert(b, values[output.step], output.dtype)
            array = len(kernel.inputs) + index
            if output.reduce is None:
                self.store(array, offsets, value)
            else:
                self.accumulate(index, output, offsets, value, reduce_stores)


def _template(step, operands: list) -> str:
    """The expression a step evaluates: its op's complex one where an operand or the value is
    complex (ops/lowering.py's Elementwise.complex_expression), else its real one."""
    lowering = step.op.lowering
    if step.out_dtype.category == dtypes.COMPLEX or \
            any(operand.dtype.category == dtypes.COMPLEX for operand in operands):
        template = complex_template(lowering, tuple(
            operand.index if operand.kind == "literal" else None for operand in step.operands))
        if template is None:
            raise RenderError(f"{step.op.name}: complex operands are not lowered")
        return template
    return lowering.expression


def _distinct_loop_ids(text: str) -> str:
    """Loop metadata must be a distinct node whose first operand is itself, which llvmlite's
    IR builder cannot express: its placeholder first operand is replaced in the text."""
    return re.sub(rf'^(!\d+) = !{{ !"{LOOP_ID_MARK}", ', r"\1 = distinct !{ \1, ", text,
                  flags=re.MULTILINE)


def _as_value(number):
    """An extent or stride as an IR value: a constant, or a value already loaded."""
    return ir.Constant(INT64, number) if isinstance(number, int) else number


def render(kernel: Kernel, name: str | None = None, object_layout=None) -> Rendered:
    """The kernel as LLVM IR text exporting `i32 name(ptr args)`, and with `object_layout`
    (list item offset, ndarray data offset) also `i32 name.objects(ptr list, ptr list)`."""
    symbol = re.sub(r"\W", "_", name or kernel.name or "kernel")
    return KernelRenderer(kernel, symbol, object_layout).render()
