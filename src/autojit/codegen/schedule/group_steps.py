"""Turning the fusion schedule's groups into steps: the Kernel of a group of elementwise nodes
and reductions (`group_step`), and the kernels that stand in for single layout nodes: a copy
in C order of a view no strides can express (`copy_step`), the parts of a cat or embed_slice
written by kernels into one allocation (`part_steps`). `fold_layout` follows the layouts that
fold into a kernel's strides back to the array they read; `is_elementwise` says which nodes a
kernel computes (real dtypes, and complex ones through Elementwise.complex_expression).
fusion.py decides the groups; this module makes their kernels (docs/notes/cpu-codegen.md).
"""

from __future__ import annotations

import math

from ...ir.graph import Value
from ...ops.elementwise import CLONE
from ...ops.lowering import complex_template
from ...ops.registry import Elementwise, Extern, Layout
from ...tensor import dtypes
from ...tensor.tensor import Tensor
from ..cpu.parallel import split_kernel
from ..kernel import (
    Kernel,
    KernelInput,
    KernelOutput,
    Operand,
    Step,
    contiguous_strides,
    kernel_name,
)
from .plan import value_operands
from .steps import (
    AllocateStep,
    KernelOrigin,
    KernelStep,
    NodesStep,
    NodeStep,
    RegionKernelStep,
    folds_into_strides,
)

SUPPORTED_DTYPES = (dtypes.bool_, dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32,
                    dtypes.int64, dtypes.float32, dtypes.float64)


# Complex values are pairs of real ones in a CPU kernel: the elementwise ops whose lowering
# gives an expression over complex operands (Elementwise.complex_expression) fuse with them, as
# do the copies of complex arrays (docs/notes/complex.md).
COMPLEX_DTYPES = (dtypes.complex64, dtypes.complex128)
COPIED_DTYPES = SUPPORTED_DTYPES + COMPLEX_DTYPES


def is_elementwise(node) -> bool:
    lowering = node.op.lowering
    if lowering.__class__ is not Elementwise:
        return False
    if all(value.dtype in SUPPORTED_DTYPES for value in value_operands(node)) and \
            node.output.dtype in SUPPORTED_DTYPES:
        return True
    return bool(lowering.complex_expression) and all(
        value.dtype in COPIED_DTYPES for value in value_operands(node)) and \
        node.output.dtype in COPIED_DTYPES and complex_template(lowering, tuple(
            None if isinstance(operand, Value) else operand for operand in node.inputs)) \
        is not None



def group_step(group, name: str, consumers: dict, returned: set, compile_kernel,
                generic, host: bool = True, covered: dict | None = None):
    """The kernel of a group, after the nodes it recomputes (never its outputs); `covered`:
    id(value) -> the consumers that compute it themselves (recompute.py), which a value's
    kernel need not store it for."""
    covered = covered or {}
    kernel = Kernel(name=name, shape=group.shape, reduce_axes=group.reduce_axes or (),
                    generic=generic)
    step_of: dict = {}  # id(Value) -> step index inside the kernel
    sources: list = []  # (Value, strides) per kernel input
    source_index: dict = {}
    first_of: dict = {}  # (id(source), strides) -> the first input reading it that way
    outputs: list = []  # (KernelOutput, Value, reshape to)
    # What rebinding.py needs to make this kernel again at other sizes: each value read
    # through an input, and the node each step computes (None for a reduction's clone).
    folds: dict = {}  # id(Value read) -> (that Value, its input's index)
    step_nodes: list = []
    reduces: list = []  # per node, recomputed ones first: whether it is a reduction

    def operand_for(value) -> Operand:
        if not isinstance(value, Value):
            return Operand("literal", value)
        if id(value) in step_of:
            return Operand("step", step_of[id(value)])
        # Slices fold with the element they start at: host kernels at fixed sizes only.
        source, strides, offset = fold_layout(value, group.shape, host and not generic)
        key = (id(source), strides, offset)
        if key not in source_index:
            source_index[key] = len(sources)
            same_as = first_of.setdefault((id(source), strides), len(sources))
            sources.append((source, strides))
            kernel.inputs.append(KernelInput(source.dtype, strides, offset,
                                             None if same_as == len(kernel.inputs) else same_as))
        folds.setdefault(id(value), (value, source_index[key]))
        return Operand("input", source_index[key])

    inside = {id(node) for node in group.nodes}
    again = {id(node) for node in group.recomputed}
    for node in (*group.recomputed, *group.nodes):
        reduces.append(not is_elementwise(node))
        if not reduces[-1]:
            compute, _ = node.op.dtype(dtype_probes(node), node.attrs)
            kernel.steps.append(Step(node.op, tuple(operand_for(x) for x in node.inputs),
                                     dict(node.attrs), compute, node.output.dtype))
            step_nodes.append(node)
            step_of[id(node.output)] = len(kernel.steps) - 1
            if id(node) not in again and read_outside(
                    node.output, inside | covered.get(id(node.output), set()), consumers,
                    returned):
                outputs.append((KernelOutput(step_of[id(node.output)], node.output.dtype),
                                node.output, None))
        else:
            source = node.inputs[0]
            if id(source) not in step_of:
                kernel.steps.append(Step(CLONE, (operand_for(source),), {}, None,
                                         source.dtype))
                step_nodes.append(None)
                step_of[id(source)] = len(kernel.steps) - 1
            kind = node.op.lowering.combine
            kept = tuple(1 if axis in kernel.reduce_axes else extent
                         for axis, extent in enumerate(group.shape))
            outputs.append((KernelOutput(step_of[id(source)], node.output.dtype, kind),
                            node.output, node.output.shape if kept != node.output.shape
                            else None))
    kernel.outputs = [entry[0] for entry in outputs]
    try:
        compiled = compile_kernel(kernel)
    except NotImplementedError:
        return NodesStep([*group.recomputed, *group.nodes])
    step = KernelStep(kernel, compiled, [source for source, _ in sources],
                      [(value, reshape) for _, value, reshape in outputs])
    step.split = split_kernel(kernel, compile_kernel)
    step.nodes = list(group.nodes)
    step.origin = KernelOrigin(list(group.recomputed), list(folds.values()), step_nodes,
                               reduces)
    return step


def indexes_rows(node) -> bool:
    """Whether a node is an indexed gather (index) or scatter (index_put) of whole rows of its
    data: one index tensor on one dim (the first, an embedding's; or another, a cache's
    `index_copy_` at a position), every operand of the data's dtype at fixed sizes (the
    routines' attrs: `dims`, and the index stacked as (1, ...)); IndexedRowsStep runs it, once
    for each index of the dims before that one. A scatter's values may also be one Python
    number (T5's decoder inputs shifted right write the start token, `ids[..., 0] = 0`): the
    step writes it from rows of that number made once."""
    lowering = node.op.lowering
    if lowering.__class__ is not Extern or \
            lowering.routine not in ("indexed_gather", "indexed_scatter"):
        return False
    data, index = node.inputs[0], node.inputs[-1]
    values = node.inputs[1:-1]
    dims = tuple(node.attrs.get("dims", ()))
    if len(dims) != 1 or not isinstance(index, Value) or not isinstance(data, Value) or \
            not 0 <= dims[0] < len(data.shape) or len(index.shape) < 1:
        return False
    dim = dims[0]
    shape = tuple(data.shape)
    return index.shape[0] == 1 and index.dtype is dtypes.int64 and \
        all(value.dtype is data.dtype and
            tuple(value.shape) == shape[:dim] + tuple(index.shape[1:]) + shape[dim + 1:]
            if isinstance(value, Value) else
            lowering.routine == "indexed_scatter" and _number(value)
            for value in values) and \
        all(isinstance(extent, int) for extent in (*data.shape, *index.shape))


def _number(value) -> bool:
    """A Python number a scatter writes everywhere it is indexed (not complex: rows.py's rows
    of that number are made in the data's dtype as NumPy's setitem casts it)."""
    return value.__class__ in (int, float, bool)


# A gather along the last dim runs natively (GatherRowsStep) for at most this many blocks of
# the dims before it: one native call each.
GATHERED_BLOCKS = 64


def gathers_along_last_dim(node) -> bool:
    """Whether a node is a gather (torch.gather) along its data's last dim, at fixed sizes,
    whose index has the data's extents in the other dims, with at most GATHERED_BLOCKS blocks
    before that dim: GatherRowsStep runs it."""
    lowering = node.op.lowering
    if lowering.__class__ is not Extern or lowering.routine != "gather_along_dim":
        return False
    data, index = node.inputs
    if not isinstance(data, Value) or not isinstance(index, Value) or not data.shape or \
            index.dtype is not dtypes.int64 or data.dtype not in COPIED_DTYPES:
        return False
    shape, index_shape = tuple(data.shape), tuple(index.shape)
    return node.attrs.get("dim") % len(shape) == len(shape) - 1 and \
        all(isinstance(extent, int) for extent in (*shape, *index_shape)) and \
        index_shape[:-1] == shape[:-1] and math.prod(shape[:-1]) <= GATHERED_BLOCKS


def copied_view(node) -> bool:
    """Whether `node` is a layout that reads its input in C order (a reshape) over memory
    where no strides can say it (a reshape of a transposed view): NumPy's impl would copy, so
    a kernel copies instead (`copy_step`)."""
    if not folds_into_strides(node):
        return False
    source = node.inputs[0]
    if not isinstance(source, Value) or not all(
            isinstance(extent, int) for extent in (*source.shape, *node.output.shape)) or \
            source.dtype not in COPIED_DTYPES:
        return False
    own = contiguous_strides(source.shape)
    if node.op.lowering.fold(source.shape, own, node.output.shape, node.attrs) != \
            contiguous_strides(node.output.shape):
        return False  # not a reading in C order, even of contiguous memory
    return fold_layout(node.output, node.output.shape)[0] is node.output


def _clone_kernel(name: str, value: Value, folded: tuple) -> Kernel:
    """A kernel writing `value` in C order, read where `folded` (fold_layout's) says."""
    origin, strides, offset = folded
    return Kernel(name=name, shape=value.shape,
                  inputs=[KernelInput(origin.dtype, strides, offset)],
                  steps=[Step(CLONE, (Operand("input", 0),), {}, None, value.dtype)],
                  outputs=[KernelOutput(0, value.dtype)])


def copy_step(node, name: str, compile_kernel):
    """A kernel copying the input of a C-order layout (`copied_view`) in C order, through the
    strides of the view it is: its result, reshaped, is the layout's value."""
    source = node.inputs[0]
    folded = fold_layout(source, source.shape)
    kernel = _clone_kernel(name, source, folded)
    try:
        compiled = compile_kernel(kernel)
    except NotImplementedError:
        return NodeStep(node)
    step = KernelStep(kernel, compiled, [folded[0]], [(node.output, node.output.shape)])
    step.split = split_kernel(kernel, compile_kernel)
    step.nodes = [node]
    return step


def strided_copy(value, name, compile_kernel) -> tuple | None:
    """For an operand that must be C-contiguous (a ConvStep's) where the plan makes `value` a
    strided view: (the value whose array it views, a compiled kernel copying it in C order
    from there); else None (`name(value)` names the kernel)."""
    if not isinstance(value, Value):
        return None
    folded = fold_layout(value, value.shape)
    source, strides, offset = folded
    shape = tuple(value.shape)
    own = tuple(0 if extent == 1 else stride
                for extent, stride in zip(shape, contiguous_strides(shape)))
    if source is value or (strides == own and not offset) or \
            value.dtype not in COPIED_DTYPES:
        return None
    try:
        compiled = compile_kernel(_clone_kernel(name(value), value, folded))
    except NotImplementedError:
        return None
    return source, compiled


def part_steps(node, compile_kernel, numbers) -> list | None:
    """A layout that writes its inputs into parts of its output (registry.Layout.places: cat,
    embed_slice) as an AllocateStep and kernels storing into it: zeros where no input goes,
    then each input copied into its part, read through strides as any kernel input is (a
    slice of another array, a transpose). None where a kernel cannot (dtypes, sizes known at
    run time only); the node then runs through its impl."""
    lowering, out = node.op.lowering, node.output
    if lowering.__class__ is not Layout or lowering.places is None:
        return None
    values = list(node.inputs)
    shapes = [out.shape] + [getattr(value, "shape", ()) for value in values]
    if not all(isinstance(value, Value) and value.dtype in COPIED_DTYPES for value in values) \
            or out.dtype not in COPIED_DTYPES or \
            not all(isinstance(extent, int) for shape in shapes for extent in shape):
        return None
    regions = lowering.places(out.shape, node.attrs)
    if not all(isinstance(bound, int) for region in regions for bounds in region
               for bound in bounds):
        return None
    own = contiguous_strides(out.shape)
    steps: list = [AllocateStep(node)]
    covered = sum(math.prod(value.shape) for value in values)
    if covered < math.prod(out.shape):
        zeros = Kernel(name=kernel_name(next(numbers), [node]) + "_zeros", shape=out.shape,
                       steps=[Step(CLONE, (Operand("literal", 0),), {}, out.dtype, out.dtype)],
                       outputs=[KernelOutput(0, out.dtype, None, own)])
        steps.append(region_step(zeros, [], out, [tuple((0, extent, 1)
                                                         for extent in out.shape)],
                                  compile_kernel))
    for value, region in zip(values, regions):
        if 0 in value.shape:
            continue
        source, strides, offset = fold_layout(value, value.shape)
        copy = Kernel(name=kernel_name(next(numbers), [node]), shape=value.shape,
                      inputs=[KernelInput(source.dtype, strides, offset)],
                      steps=[Step(CLONE, (Operand("input", 0),), {}, None, out.dtype)],
                      outputs=[KernelOutput(0, out.dtype, None, tuple(
                          stride * step for stride, (_, _, step) in zip(own, region)))])
        steps.append(region_step(copy, [source], out, [region], compile_kernel))
    return None if any(step is None for step in steps) else steps


def region_step(kernel: Kernel, sources: list, target, regions: list, compile_kernel):
    try:
        compiled = compile_kernel(kernel)
    except NotImplementedError:
        return None
    step = RegionKernelStep(kernel, compiled, sources, target, regions)
    step.split = split_kernel(kernel, compile_kernel)
    return step


def read_outside(value, inside: set, consumers: dict, returned: set) -> bool:
    """Whether `value` is returned or read by a node outside the group (`inside`: the ids
    of the group's nodes, made once per group)."""
    if id(value) in returned:
        return True
    return any(id(node) not in inside for node in consumers.get(id(value), ()))


def dtype_probes(node) -> tuple:
    """Stand-ins with the operands' dtypes and ranks, for the op's dtype rule."""
    probes = []
    for operand in node.inputs:
        if isinstance(operand, Value):
            probes.append(Tensor._symbolic(operand))
        else:
            probes.append(operand)
    return tuple(probes)


def fold_layout(value: Value, space: tuple, starts: bool = True) -> tuple:
    """(source value, element strides over `space`, element of the source at the space's
    first point) reading `value` without materializing it.

    Follows the producers that fold into strides (registry.Layout.fold: reshape, expand,
    permute, slice) back to a value that is materialized as a C-contiguous array (any other
    producer, or a graph input), then replays the chain forward. Where a layout cannot be
    expressed by strides over what precedes it (a reshape of a permuted view), or starts inside
    it where `starts` is False (a slice, for a kernel that reads from its arrays' first
    elements), its own output is materialized and read from there.
    """
    chain = []
    current = value
    while current.producer is not None and folds_into_strides(current.producer):
        chain.append(current.producer)
        current = current.producer.inputs[0]
    shape, strides, offset = current.shape, contiguous_strides(current.shape), 0
    source = current
    for node in reversed(chain):
        lowering = node.op.lowering
        folded = lowering.fold(shape, strides, node.output.shape, node.attrs)
        start = 0
        if folded is not None and lowering.start is not None:
            start = lowering.start(shape, strides, node.attrs)
            if start is None or (start and not starts):
                folded = None
        shape = node.output.shape
        if folded is None:
            source, strides, offset = node.output, contiguous_strides(shape), 0
        else:
            strides, offset = folded, offset + start
    leading = len(space) - len(shape)
    strides = (0,) * leading + tuple(0 if extent == 1 else stride
                                     for extent, stride in zip(shape, strides))
    return source, strides, offset


