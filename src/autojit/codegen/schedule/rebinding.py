"""Rebinding a plan: the plan of a graph that differs from a planned one only in its sizes, made
from that plan's decisions instead of a new schedule.

A trace whose graph computes sizes (compiler/unbacked_sizes.py, a Mixture-of-Experts router's
counts) is compiled once per binding of them, and each binding's graph is the same nodes with
other extents. What the fusion schedule decides (fusion.py: which nodes fuse into which kernel,
the order of the steps, which products take an epilogue or run side by side, which views fold
into a kernel's strides) is decided on the nodes; what follows the extents is a generic
kernel's loop extents and strides (kernel.py's generic_layout, read at run time), the shapes a
step checks and allocates, and the plan's buffers. `rebind_plan(plan, graph)` maps each step of
`plan` onto `graph`'s nodes (node k onto node k) and works out only those, which costs a small
part of a schedule (docs/notes/segments.md, "Sizes the graph computes").

A decision taken where two extents happened to be equal (two experts given the same count) may
not hold at other sizes, so each is checked again: every node of a kernel iterates the kernel's
space, every value a kernel reads folds into strides over the same array as before, and an
epilogue's accumulated value still has the product's shape. Where one does not hold, or the
plan has a step made only at fixed sizes, `NotRebindable` is raised and the caller schedules
the graph. A kernel step whose constants changed (a mean's divisor, the count itself) gets its
code from compile_kernel again, as a schedule would.
"""

from __future__ import annotations

import math

from ...ir.graph import Value
from ...tensor import dtypes
from ..cpu.jit import SizedKernel, compile_kernel
from ..cpu.parallel import split_kernel, splits_never
from ..kernel import Kernel, KernelInput, Operand, Step, generic_layout, reads_pointwise
from .buffers import PACKED_FROM, BufferSlot
from .group_steps import dtype_probes, fold_layout
from .in_place import plan_in_place_updates
from .matmul_steps import ConcurrentProducts, Epilogue, GemmStep, MatmulStep
from .plan import Plan, plan_buffer_reuse
from .steps import KernelStep, NodesStep, NodeStep


class NotRebindable(Exception):
    """The plan cannot be rebound to the graph: schedule it instead."""


def rebind_plan(plan: Plan, graph) -> Plan:
    """The plan of `graph`, whose nodes are `plan.graph`'s in order with other sizes, from
    `plan`'s decisions; raises NotRebindable where they do not hold for `graph`."""
    old = plan.graph
    if plan.__class__ is not Plan or len(old.inputs) != len(graph.inputs) or \
            len(old.nodes) != len(graph.nodes) or len(old.outputs) != len(graph.outputs):
        raise NotRebindable("another graph")
    values: dict = {}
    for before, after in zip(old.inputs, graph.inputs):
        values[id(before.value)] = after.value
    nodes: dict = {}
    for before, after in zip(old.nodes, graph.nodes):
        if before.op is not after.op:
            raise NotRebindable("another graph")
        nodes[id(before)] = after
        values[id(before.output)] = after.output
    steps = [_rebound(step, values, nodes) for step in plan.steps]
    rebound = Plan(graph, steps, plan.fresh_grads, buffers=False)
    slots = _slots_like(plan, steps)
    rebound.buffer_slots = slots if slots is not None else \
        plan_buffer_reuse(graph, steps, plan.fresh_grads)
    rebound.in_place = plan_in_place_updates(graph, rebound.steps)
    return rebound


def _slots_like(plan: Plan, steps: list) -> list | None:
    """The buffers of `steps` (`plan`'s steps rebound) shared as `plan` shares them: which
    values may share memory follows from when each is made and last read, the same at any
    sizes; each slot holds the largest of its values here. None (plan them afresh) where
    `plan` packed its slots into an arena, or where a kernel stores an output over an input
    it reads that it could not at these sizes (buffers.py's donations)."""
    slot_of: dict = {}  # id(Value) -> its slot in `plan`
    pairs = []
    for before, after in zip(plan.steps, steps):
        for old, new in zip(_holders(before), _holders(after)):
            pairs.append((old, new))
            for (holder, position, value) in old:
                slot = holder.slots[position]
                if slot is not None:
                    if slot.arena is not None:
                        return None
                    slot_of[id(value)] = slot
    made: dict = {}  # id(slot of `plan`) -> its slot here
    for old, new in pairs:
        for (holder, position, _), (other, _, value) in zip(old, new):
            other.reusable[position] = holder.reusable[position]
            slot = holder.slots[position]
            if slot is None:
                continue
            mine = made.get(id(slot))
            if mine is None:
                mine = made[id(slot)] = BufferSlot()
                mine.values = slot.values
            mine.nbytes = max(mine.nbytes, math.prod(value.shape) * value.dtype.numpy.itemsize)
            other.slots[position] = mine
        holder = old[0][0] if old else None
        if holder.__class__ is KernelStep and not _donations_hold(holder, new[0][0], slot_of):
            return None
    if sum(slot.nbytes for slot in made.values()) >= PACKED_FROM:
        return None
    return list(made.values())


def _holders(step) -> list:
    """Per object of `step` that holds output slots: its (holder, position, Value) triples."""
    kind = step.__class__
    if kind is KernelStep:
        return [[(step, index, value) for index, (value, _) in enumerate(step.outputs)]]
    if kind is MatmulStep or kind is GemmStep:
        return [[(step, 0, step.output)]]
    if kind is ConcurrentProducts:
        return [[(member, 0, member.output)] for member in step.members]
    return []


def _donations_hold(before: KernelStep, after: KernelStep, slot_of: dict) -> bool:
    """Whether each output `before` stores over an input it reads (its slot is that
    input's) may be stored so by `after`: the input read point for point, of the space's size
    (plan.py's _pointwise_donors; the order of loads and stores is the kernel's steps')."""
    size = None
    for slot in before.slots:
        if slot is None:
            continue
        for position, source in enumerate(before.sources):
            if slot_of.get(id(source)) is not slot:
                continue
            if size is None:
                size = math.prod(after.kernel.shape)
            if math.prod(after.sources[position].shape) != size or \
                    not reads_pointwise(after.kernel, position):
                return False
    return True


def _rebound(step, values: dict, nodes: dict):
    kind = step.__class__
    if kind is KernelStep:
        return _rebound_kernel(step, values, nodes)
    if kind is NodeStep:
        return NodeStep(nodes[id(step.node)])
    if kind is MatmulStep:
        rebound = MatmulStep(nodes[id(step.node)])
        if rebound._keys[0][1] != step._keys[0][1] or rebound._keys[1][1] != step._keys[1][1]:
            raise NotRebindable("a product reads its operands otherwise")
        return rebound
    if kind is GemmStep:
        return _rebound_gemm(step, values, nodes)
    if kind is ConcurrentProducts:
        return ConcurrentProducts([_rebound(member, values, nodes) for member in step.members])
    if kind is NodesStep:
        return NodesStep([nodes[id(inner.node)] for inner in step.steps])
    # Steps made at fixed sizes only (row gathers, convolutions, a cat's parts) and
    # collectives run in the background.
    raise NotRebindable(f"a {kind.__name__} step")


def _rebound_gemm(step: GemmStep, values: dict, nodes: dict) -> GemmStep:
    epilogue = step.epilogue
    product, combine = nodes[id(epilogue.product)], nodes[id(epilogue.combine)]
    scale = nodes[id(epilogue.scale)] if epilogue.scale is not None else None
    accumulate = values[id(epilogue.accumulate)]
    if accumulate.shape != product.output.shape or \
            (scale is not None and not _same_constants(epilogue.scale, scale)):
        raise NotRebindable("an epilogue no longer fits its product")
    rebound = Epilogue(product, scale, combine, epilogue.alpha, epilogue.beta, accumulate)
    rebound.into_accumulate = epilogue.into_accumulate
    return GemmStep(rebound)


def _rebound_kernel(step: KernelStep, values: dict, nodes: dict) -> KernelStep:
    kernel = step.kernel
    found = step.__dict__.get("_rebinding")
    if found is None:
        found = step.__dict__["_rebinding"] = _kernel_origin(step)
    members, recomputed, folds, constants, reduced = found
    # The space: the first node's, as the group took it; every node must iterate it.
    key, reduces = members[recomputed]
    first = nodes[key]
    shape = first.inputs[0].shape if reduces else first.outputs[0].shape
    mapped = []
    for key, reduces in members:
        node = nodes[key]
        if (node.inputs[0].shape if reduces else node.outputs[0].shape) != shape:
            raise NotRebindable(f"kernel {kernel.name} no longer iterates one space")
        mapped.append(node)
    inputs = kernel.inputs
    sources = [values[id(source)] for source in step.sources]
    folded: dict = {}  # input index -> its strides here
    for key, index, planned in folds:
        value = values[key]
        if value.shape == planned:  # an array read as it lies, of the planned shape
            strides = kernel.inputs[index].strides
            if folded.setdefault(index, strides) != strides:
                raise NotRebindable(f"kernel {kernel.name} reads its inputs otherwise")
            continue
        source, strides, offset = fold_layout(value, shape, False)
        if source is not sources[index] or offset or folded.get(index, strides) != strides:
            raise NotRebindable(f"kernel {kernel.name} reads its inputs otherwise")
        if index not in folded:
            folded[index] = strides
            if strides != inputs[index].strides:
                if inputs is kernel.inputs:
                    inputs = list(inputs)
                inputs[index] = KernelInput(inputs[index].dtype, strides)
    # The steps, but where a node's constants changed (a mean's divisor of a computed count).
    kernel_steps, runtime = kernel.steps, []
    for number, node in constants:
        other = nodes[id(node)]
        if not _same_constants(node, other):
            if kernel_steps is kernel.steps:
                kernel_steps = list(kernel_steps)
            kernel_steps[number] = _step_of(kernel_steps[number], node, other, runtime,
                                            len(kernel.constants))
    compiled = step.compiled
    if shape == kernel.shape and inputs is kernel.inputs and kernel_steps is kernel.steps:
        rebound = kernel  # the same kernel, with the same sizes: its code and sizes too
    else:
        rebound = Kernel(name=kernel.name, shape=shape, inputs=inputs, steps=kernel_steps,
                         outputs=kernel.outputs, reduce_axes=kernel.reduce_axes, generic=True,
                         constants=(*kernel.constants, *runtime))
        structure, sizes = generic_layout(rebound)
        if kernel_steps is kernel.steps and isinstance(compiled, SizedKernel) and \
                structure == _structure(step):
            compiled = SizedKernel(compiled.compiled, rebound, sizes)
            feeding = kernel.__dict__.get("_feeding")
            if feeding is not None:  # what plan.py worked out of the same steps
                rebound.__dict__["_feeding"] = feeding
        else:
            compiled = compile_kernel(rebound)  # another loop structure, or other constants
    kept = None
    outputs = []
    for (value, _), reduces in zip(step.outputs, reduced):
        value = values[id(value)]
        if reduces:
            if kept is None:
                axes = kernel.reduce_axes
                kept = tuple(1 if axis in axes else extent for axis, extent in enumerate(shape))
            outputs.append((value, value.shape if kept != value.shape else None))
        else:
            outputs.append((value, None if value.shape == shape else value.shape))
    rebound_step = KernelStep(rebound, compiled, sources, outputs)
    if step.split is not None or not splits_never(rebound):
        rebound_step.split = split_kernel(rebound, compile_kernel)
    rebound_step.nodes = mapped[recomputed:]
    return rebound_step


def _kernel_origin(step: KernelStep) -> tuple:
    """What rebinding reads of a kernel step's KernelOrigin, by ids, worked out once: its
    nodes (recomputed ones first) with whether each reduces, how many are recomputed, each
    value read through an input with that input, the steps whose node has constants, and per
    output whether it is reduced."""
    origin = step.origin
    if origin is None or not step.kernel.generic:
        raise NotRebindable("a kernel made at fixed sizes")
    members = [(id(node), reduces) for node, reduces in
               zip((*origin.recomputed, *step.nodes), origin.reduces)]
    # A value read as it lies (no view folded into its strides) keeps its input's strides
    # where its shape is the planned one: its planned shape, else None (fold it again).
    folds = [(id(value), index, value.shape if step.sources[index] is value else None)
             for value, index in origin.folds]
    constants = [(number, node) for number, node in enumerate(origin.step_nodes)
                 if node is not None and (node.attrs or not all(
                     isinstance(operand, Value) for operand in node.inputs))]
    reduced = [output.reduce is not None for output in step.kernel.outputs]
    return members, len(origin.recomputed), folds, constants, reduced


def _structure(step: KernelStep) -> tuple:
    """The loop structure of a kernel step's generic kernel, worked out once."""
    found = step.__dict__.get("_structure")
    if found is None:
        found = step.__dict__["_structure"] = generic_layout(step.kernel)[0]
    return found


def _attributes_equal(node, other) -> bool:
    try:
        return node.attrs == other.attrs
    except (TypeError, ValueError):  # an attribute with no plain equality (an array)
        return False


def _same_constants(node, other) -> bool:
    """Whether two nodes of one op have the same attributes and literal operands (by type
    too: 1 and 1.0 are different constants of the generated code)."""
    if not _attributes_equal(node, other):
        return False
    return all(first.__class__ is second.__class__ and first == second
               for first, second in zip(node.inputs, other.inputs)
               if not isinstance(first, Value))


def _step_of(step: Step, node, other, runtime: list, offset: int) -> Step:
    """The kernel step computing `other` (`node` with other constants) as `step` computes
    `node`. Where only its literal operands changed, of a step over real numbers, those that
    changed become the kernel's constants (`runtime`, which grows, numbered from `offset`),
    read at run time, so that one compiled kernel serves every value; else the new literals
    are compiled in."""
    runtime_ok = _attributes_equal(node, other) and all(
        dtype is None or dtype.category != dtypes.COMPLEX for dtype in (
            step.compute_dtype, step.out_dtype,
            *(operand.dtype for operand in other.inputs if isinstance(operand, Value))))
    operands = []
    for entry, before, after in zip(step.operands, node.inputs, other.inputs):
        if entry.kind != "literal":
            operands.append(entry)
        elif runtime_ok and after.__class__ in (int, float) and \
                before.__class__ is after.__class__ and before != after:
            operands.append(Operand("runtime", offset + len(runtime)))
            runtime.append(after)
        else:
            operands.append(Operand("literal", after))
    compute, _ = other.op.dtype(dtype_probes(other), other.attrs)
    return Step(other.op, tuple(operands), dict(other.attrs), compute, other.output.dtype)
