"""The fusion schedule: which IR nodes run together as one kernel.

`build_plan(graph)` walks the optimized graph in order and groups nodes into Kernels
(kernel.py): a group is a run of elementwise nodes over one iteration shape, plus reductions
(those whose registry lowering combines values: sum, prod, amax, amin) of values of that shape
over one set of axes, whether the group or an earlier step made them. Values a group computes
that nothing outside it reads stay in registers: only values used by later steps or returned
by the graph become kernel outputs, but for values later kernels compute again from cheaper
inputs (recompute.py, run once every group is known: kernels are made at the end). Several
groups may be open at once, one per shape in practice: a node joins the newest open group it
may join; a node that reads an open group's values closes that group first (its kernel runs
before the node), and other steps run before the groups still open, so independent work of
another shape does not split a kernel. A layout node reading an open group's value (the
transpose of a column sum) runs right after that group's kernel, without closing it.

Layout ops that only reinterpret an array (registry.Layout.fold: reshape, expand, permute,
slice) are folded into the strides a kernel reads its inputs with, and a slice also into the
element the kernel starts reading at (Layout.start), so a broadcast bias, a transposed operand
or one gate of an LSTM's chunk(4) is never materialized for a kernel. Matmuls run through BLAS
(matmul_steps.py: transposed operands, update epilogues, products side by side). Complex
values join kernels through the ops whose lowering has an expression over them
(Elementwise.complex_expression) and through sums, as pairs of reals in the CPU kernels
(docs/notes/complex.md). Everything
else (indexing, layout ops whose results are used elsewhere) runs as a single node with the
op's NumPy impl, exactly as the reference interpreter would, but for convolution products,
which run as native routines (conv_steps.py). A group the backend cannot
compile runs node by node the same way, so the plan is always correct.

Legality (what may fuse) is `_joins`; there is no cost model yet: every legal fusion is taken.
A kernel output that is a captured tensor's in-place update may be stored straight into that
tensor's storage (in_place.py decides which, and checks each run). The steps become a Plan
(plan.py), which runs them.
"""

from __future__ import annotations

import itertools

from ...ir.graph import Graph, Value, collection_paused
from ...ops.registry import Reduction, communicates, companions
from ...tensor import dtypes
from ..kernel import kernel_name
from .conv_steps import ConvStep, convolves
from .group_steps import (
    COPIED_DTYPES,
    SUPPORTED_DTYPES,
    copied_view,
    copy_step,
    gathers_along_last_dim,
    group_step,
    indexes_rows,
    is_elementwise,
    part_steps,
    strided_copy,
)
from .in_place import plan_in_place_updates
from .matmul_steps import (
    GemmStep,
    MatmulStep,
    ProductPlan,
    is_product,
    pair_products,
)
from .overlap import run_in_background
from .placement import place_parts
from .plan import Plan, step_makes, step_reads, value_operands
from .recompute import recompute_across_groups
from .row_steps import GatherRowsStep, IndexedRowsStep
from .steps import NodeStep, folds_into_strides


class _Group:
    def __init__(self, shape: tuple, makers: dict):
        self.shape = shape
        # id(value) -> the group computing it (or holding it as a view), shared by the plan's
        # groups: which open groups a node reads is a lookup per operand, not a scan of them.
        self.makers = makers
        self.open = True
        self.nodes: list = []
        self.values: set = set()  # ids of the values computed inside
        self.reduced: set = set()  # ids of the reductions' outputs among them
        self.reduce_axes: tuple | None = None
        # Layout nodes (views) of the group's values, run once the kernel has: a node that
        # reads one cannot join (the kernel would read its own unfinished output).
        self.views: list = []
        self.view_ids: set = set()
        self.period = None  # _period of its nodes, found once it holds PERIODIC_CUT_NODES
        self.name = ""
        # Nodes of earlier groups whose values this one computes again (recompute.py).
        self.recomputed: list = []

    def full(self) -> bool:
        """Whether the group takes no more nodes (MAX_KERNEL_NODES, PERIODIC_CUT_NODES)."""
        size = len(self.nodes)
        if size >= MAX_KERNEL_NODES:
            return True
        if size < PERIODIC_CUT_NODES:
            return False
        if self.period is None:
            self.period = _period([node.op for node in self.nodes[-PERIODIC_WINDOW:]]) or 0
        return bool(self.period) and size % self.period == 0

    def add_view(self, node) -> None:
        self.views.append(node)
        self.view_ids.add(id(node.output))
        self.makers[id(node.output)] = self


def _makers(values: list, makers: dict) -> set:
    """ids of the open groups that compute any of `values`, or hold a view of one."""
    found = set()
    for value in values:
        group = makers.get(id(value))
        if group is not None and group.open:
            found.add(id(group))
    return found


def _reduction_axes(node) -> tuple | None:
    """The axes a reduction node that may join a kernel reduces over: one that combines
    values (not argmax), reads them as they are (not any/all's truth values) and keeps their
    dtype (no dtype= attribute), over a supported dtype; else None."""
    lowering = node.op.lowering
    if lowering.__class__ is not Reduction or lowering.combine is None or lowering.logical:
        return None
    # A complex sum accumulates each part (codegen/cpu/render_reduce.py); no other complex
    # reduction is lowered.
    allowed = COPIED_DTYPES if lowering.combine == "sum" else SUPPORTED_DTYPES
    if node.inputs[0].dtype not in allowed or node.output.dtype not in allowed:
        return None
    if node.attrs.get("dtype") is not None:
        return None
    return tuple(node.attrs["dim"])


# The most nodes one kernel fuses. LLVM's time on a kernel grows faster than its body once
# the body is long (vectorized, 100 sigmoid/tanh-heavy steps took 1.2 s, 200 took 4.1 s),
# so a longer run of nodes is cut into kernels of at most this many: the values crossing a
# cut go through memory (docs/notes/compile-latency.md, "Long kernels").
MAX_KERNEL_NODES = 128
# From this many nodes on, a group whose last PERIODIC_WINDOW nodes repeat one sequence of
# ops (an unrolled loop's steps) is cut after a whole number of repeats: every kernel cut
# from the rest of the loop then starts at the same place in it, so they are the same
# kernel, compiled once (an LSTM unrolled over 59 steps: 8 long kernels become 1).
PERIODIC_CUT_NODES = 64
PERIODIC_WINDOW = 48


def _period(ops: list) -> int | None:
    """The shortest period of the sequence (at most a third of its length): the least p with
    ops[i] the same op as ops[i - p] throughout; None if it has none."""
    for period in range(1, len(ops) // 3 + 1):
        if all(ops[index] is ops[index - period] for index in range(period, len(ops))):
            return period
    return None


def _joins(node, group: _Group) -> bool:
    """Whether `node` may join the open group `group`."""
    if group.full():
        return False
    if any(id(value) in group.view_ids for value in value_operands(node)):
        return False
    if is_elementwise(node):
        # A reduced value is only known once the kernel ends: an op reading it cannot join,
        # even where it has the group's shape (a keepdim sum over an axis of extent 1).
        return node.output.shape == group.shape and not any(
            id(value) in group.values and (value.shape != group.shape or
                                           id(value) in group.reduced)
            for value in value_operands(node))
    axes = _reduction_axes(node)
    if axes is None or not axes:
        return False
    # The reduced value may come from outside the group (the kernel reads it as an input):
    # a sum of a value an earlier step made joins the kernel running over its shape.
    source = node.inputs[0]
    return source.shape == group.shape and id(source) not in group.reduced and \
        group.reduce_axes in (None, axes)


def _space(node) -> tuple | None:
    """The shape of the group `node` may join (_joins): an elementwise node's output's, a
    reduction's input's; None where it joins none."""
    if is_elementwise(node):
        return node.output.shape
    if _reduction_axes(node):
        return node.inputs[0].shape
    return None


def build_plan(graph: Graph, compile_kernel=None, generic: bool = False, host: bool = True,
               fresh_grads: frozenset = frozenset()):
    """The steps that run `graph` (see _build_plan), built with the cyclic garbage collector
    held off (ir/graph.py's collection_paused)."""
    with collection_paused():
        return _build_plan(graph, compile_kernel, generic, host, fresh_grads)


def _build_plan(graph: Graph, compile_kernel, generic: bool, host: bool,
                fresh_grads: frozenset):
    """The steps that run `graph`: fused kernels and single nodes, in a valid order. With
    `generic`, kernels read their sizes at run time (kernel.py), so that graphs that differ only
    in sizes (a dynamic trace's bindings) share compiled code. `host`: the plan runs on NumPy
    arrays, so products may use the host BLAS's epilogues and pairs (matmul_steps.py).
    `fresh_grads`: names of the "grad" outputs that become a new .grad on each call."""
    if compile_kernel is None:
        from ..cpu.jit import compile_kernel
    consumers: dict = {}
    for node in graph.nodes:
        for operand in value_operands(node):
            consumers.setdefault(id(operand), []).append(node)
    returned = {id(output.value) for output in graph.outputs}
    products = ProductPlan(graph, consumers, returned, host)

    steps: list = []
    # Kernels being built, oldest first. None reads another's values (a node that reads one
    # closes it first), so they may run in any order once closed; keeping several open lets
    # a [128, 256] kernel go on past a node of another shape.
    open_groups: list = []
    makers: dict = {}  # _Group.makers
    kernel_numbers = itertools.count()

    def close(group: _Group) -> None:
        # The group stands in the plan until every group is known (recompute.py may give it
        # nodes of an earlier one, or take a stored value from it); then it becomes a kernel.
        open_groups.remove(group)
        group.open = False
        if group.nodes:
            group.name = kernel_name(next(kernel_numbers), group.nodes)
            steps.append(group)
            steps.extend(NodeStep(view) for view in group.views)

    def close_groups_read_by(values: list, keep: _Group | None = None,
                             reader=None) -> None:
        found = _makers(values, makers)
        if not found:
            return
        for group in list(open_groups):
            if group is not keep and id(group) in found:
                if reader is not None and host:
                    _add_sibling_reductions(group, reader, open_groups, consumers, positions,
                                            scheduled, products)
                close(group)

    # Nodes run early, in a companion's kernel (_add_companions), and where each node is.
    scheduled: set = set()
    positions = {id(node): index for index, node in enumerate(graph.nodes)} if host else {}
    for node in graph.nodes:
        if id(node) in products.absorbed or id(node) in scheduled:
            continue
        epilogue = products.epilogues.get(id(node))
        if epilogue is not None:
            step = GemmStep(epilogue)
            close_groups_read_by(step.operands)
            steps.append(step)
            continue
        operands = value_operands(node)
        # Only a group of the node's space can take it (_joins): compared first, that test
        # spares the rest of _joins for every other open group (a network of many shapes
        # keeps many open).
        space = _space(node)
        target = next((group for group in reversed(open_groups)
                       if group.shape == space and _joins(node, group)), None) \
            if space is not None else None
        if target is not None:
            close_groups_read_by(operands, keep=target, reader=node)
            _add(target, node)
            if host:
                _add_companions(target, node, consumers, positions, scheduled, products)
            continue
        found = _makers(operands, makers)
        reading = [group for group in open_groups if id(group) in found] if found else []
        copied = host and not generic and copied_view(node)
        if len(reading) == 1 and folds_into_strides(node) and not copied:
            # A view (the transpose of a column sum) need not end the kernel: it runs after.
            reading[0].add_view(node)
            continue
        for group in reading:  # what the node reads runs before it
            if host:
                _add_sibling_reductions(group, node, open_groups, consumers, positions,
                                        scheduled, products)
            close(group)
        if is_elementwise(node) or (_reduction_axes(node) and node.inputs[0].shape):
            group = _Group(node.output.shape if is_elementwise(node) else node.inputs[0].shape,
                           makers)
            _add(group, node)
            open_groups.append(group)
            if host:
                _add_companions(group, node, consumers, positions, scheduled, products)
        elif is_product(node):
            steps.append(MatmulStep(node, host))
        elif copied:
            steps.append(copy_step(node, kernel_name(next(kernel_numbers), [node]),
                                    compile_kernel))
        elif host and not generic and indexes_rows(node):
            steps.append(IndexedRowsStep(
                node, node.op.lowering.routine == "indexed_scatter",
                [strided_copy(value, lambda view: kernel_name(next(kernel_numbers),
                                                              [view.producer]), compile_kernel)
                 for value in node.inputs[1:]]))
        elif host and not generic and gathers_along_last_dim(node):
            steps.append(GatherRowsStep(node))
        elif host and not generic and convolves(node):
            steps.append(ConvStep(node, [strided_copy(value, lambda view: kernel_name(
                next(kernel_numbers), [view.producer]), compile_kernel)
                for value in node.inputs]))
        else:
            parts = part_steps(node, compile_kernel, kernel_numbers) \
                if host and not generic else None
            steps.extend(parts or [NodeStep(node)])
    while open_groups:
        close(open_groups[0])
    if not positions:
        positions = {id(node): index for index, node in enumerate(graph.nodes)}
    groups = [step for step in steps if step.__class__ is _Group]
    covered = recompute_across_groups(groups, consumers, returned, positions)
    steps = [group_step(step, step.name, consumers, returned, compile_kernel, generic, host,
                         covered) if step.__class__ is _Group else step for step in steps]
    steps = _drop_unread(steps, returned)
    if host and not generic:
        steps = place_parts(steps, returned, compile_kernel)
    steps = _hoist_updates(steps)
    steps = run_in_background(pair_products(steps, products.paired), step_reads)
    plan = Plan(graph, steps, fresh_grads)
    plan.in_place = plan_in_place_updates(graph, plan.steps)
    return plan


def _drop_unread(steps: list, returned: set) -> list:
    """Remove single-node steps nothing reads: layout views that kernels folded into strides
    (not a collective, which every process runs: registry.Extern.communicates)."""
    read = set(returned)
    kept = []
    for step in reversed(steps):
        if isinstance(step, NodeStep) and id(step.node.output) not in read and \
                not communicates(step.node.op):
            continue
        read.update(id(value) for value in step_reads(step))
        kept.append(step)
    return kept[::-1]


def _hoist_updates(steps: list) -> list:
    """The steps with each product that updates a captured tensor (`W - lr * (a @ b)` as one
    GemmStep) moved up to just after the last step that makes one of its operands or reads
    the tensor's old value: in a training step the update then runs while its operands are
    still in cache, not after the other layers' updates (in the MLP step, the 512x512 weight's
    update took 407-431 us against 434-453, the last layer's 27-31 against 37-40, the first
    layer's, still last, up to 30 us more: 16-37 us less in all; docs/notes/cpu-codegen.md)."""
    ordered = list(steps)
    for step in steps:
        if step.__class__ is not GemmStep or step.epilogue.into_accumulate or \
                step.epilogue.accumulate.producer is not None:
            continue
        position = ordered.index(step)
        needed = {id(value) for value in step.operands}
        # The tensor's old value and what may be a view of it (a single-node step's NumPy
        # result), which in_place.py would not let an update write under.
        old_values = {id(step.epilogue.accumulate)}
        target = 0
        for index, earlier in enumerate(ordered[:position]):
            reads_old = any(id(value) in old_values for value in step_reads(earlier))
            if reads_old and isinstance(earlier, NodeStep):
                old_values.add(id(earlier.node.output))
            if reads_old or any(id(value) in needed for value in step_makes(earlier)):
                target = index + 1
        ordered.insert(target, ordered.pop(position))
    return ordered


def _add_companions(group: _Group, node, consumers: dict, positions: dict, scheduled: set,
                    products) -> None:
    """Add to `group`, right after `node`, the later nodes computing a companion of its op
    (registry.Elementwise.companions) on the same operand: the cos(x) a sin(x)'s backward
    needs runs in the forward kernel that computes sin(x), where the code generator shares
    their evaluation, instead of a second evaluation in a backward kernel. Moving a node that
    reads only what `node` reads to `node`'s place keeps every value before its readers."""
    if not getattr(node.op.lowering, "companions", ()) or len(node.inputs) != 1 or \
            not isinstance(node.inputs[0], Value):
        return
    source = node.inputs[0]
    for other in consumers.get(id(source), ()):
        if companions(node.op, other.op) and positions[id(other)] > positions[id(node)] and \
                id(other) not in scheduled and other.inputs == node.inputs and \
                other.attrs == node.attrs and id(other) not in products.absorbed and \
                id(other) not in products.epilogues and _joins(other, group):
            _add(group, other)
            scheduled.add(id(other))


# How far past a group's values _add_sibling_reductions looks for reductions: elementwise
# nodes between a value and the reduction that reads it.
SIBLING_DEPTH = 3


def _add_sibling_reductions(group: _Group, reader, open_groups: list, consumers: dict,
                            positions: dict, scheduled: set, products) -> None:
    """Before `group` closes for `reader` (a later node that reads one of its values), add to
    it the later reductions over its axes that read its values, with the elementwise nodes
    that feed only them. A batch norm's backward sums the gradient and then, in the graph's
    order, divides that sum (which closes the kernel) before the gradient's product with the
    centered input is summed: the second sum then ran as a kernel of its own, reading the
    gradient and the centered input again from memory (and the weight's and bias's gradient
    sums a third one). Taken here, they are summed in the same pass.

    A node moves only where everything it reads is known when the group runs: made by the
    group, by a node before `reader` in the graph that no other open group computes, or a
    graph input; and an elementwise node only where every reader of its value moves with it,
    so that nothing but the reductions' results leaves the kernel. Moving pure nodes earlier
    keeps every value before its readers."""
    if group.reduce_axes is None or group.full():
        return
    limit = positions[id(reader)]
    others = set(group.view_ids)  # views run after their group's kernel
    for other in open_groups:
        if other is not group:
            others |= other.values | other.view_ids

    def available(value) -> bool:
        if not isinstance(value, Value):
            return True
        if id(value) in others:
            return False
        if id(value) in group.values:
            return id(value) not in group.reduced and value.shape == group.shape
        producer = value.producer
        return producer is None or (positions[id(producer)] < limit and
                                    id(producer) not in products.absorbed)

    def movable(node) -> bool:
        return positions[id(node)] > limit and id(node) not in scheduled and \
            id(node) not in products.absorbed and id(node) not in products.epilogues

    def chain_of(reduction) -> list | None:
        """The nodes to move for `reduction`, in graph order, or None."""
        chain: dict = {}
        pending = [reduction.inputs[0]]
        while pending:
            value = pending.pop()
            if available(value) or id(value.producer) in chain:
                continue
            producer = value.producer
            if producer is None or not movable(producer) or not is_elementwise(producer) or \
                    producer.output.shape != group.shape or \
                    producer.output.dtype.category != dtypes.FLOATING or \
                    len(chain) >= SIBLING_DEPTH:
                return None
            chain[id(producer)] = producer
            pending.extend(value_operands(producer))
        inside = set(chain) | {id(reduction)}
        for node in chain.values():
            if any(id(consumer) not in inside for consumer in consumers.get(id(node.output), ())):
                return None
        return sorted(chain.values(), key=lambda node: positions[id(node)]) + [reduction]

    # The reductions reading the group's values, directly or through a few elementwise nodes.
    found, frontier, seen = [], [node.output for node in group.nodes
                                 if id(node.output) not in group.reduced], set()
    for _ in range(SIBLING_DEPTH + 1):
        following = []
        for value in frontier:
            for consumer in consumers.get(id(value), ()):
                if id(consumer) in seen or not movable(consumer):
                    continue
                seen.add(id(consumer))
                if _reduction_axes(consumer) == group.reduce_axes and \
                        consumer.inputs[0].shape == group.shape:
                    found.append(consumer)
                elif is_elementwise(consumer) and consumer.output.shape == group.shape:
                    following.append(consumer.output)
        frontier = following
    for reduction in sorted(found, key=lambda node: positions[id(node)]):
        if id(reduction) in scheduled:
            continue
        chain = chain_of(reduction)
        if chain is None or len(group.nodes) + len(chain) > MAX_KERNEL_NODES:
            continue
        for node in chain:
            _add(group, node)
            scheduled.add(id(node))


def _add(group: _Group, node) -> None:
    group.nodes.append(node)
    group.values.add(id(node.output))
    group.makers[id(node.output)] = group
    axes = _reduction_axes(node)
    if axes is not None and not is_elementwise(node):
        group.reduce_axes = axes
        group.reduced.add(id(node.output))
