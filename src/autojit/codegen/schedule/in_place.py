"""In-place update outputs: which fused kernels may store a captured tensor's new value straight
into that tensor's own storage, and the run-time checks that confirm it on each call.

A compiled training step updates captured tensors (`p.sub_(lr * p.grad)`, momentum buffers,
Adam's moments); the graph turns each update into an "update" output (ir/graph.py) that the
executable (compiler/executable.py) writes back into the tensor after the run. When the kernel that
computes the new value can store it into the tensor's storage directly, the write-back has
nothing left to copy: it sees that the output array *is* the tensor's data and only bumps the
version counter.

`plan_in_place_updates(graph, steps)` (called by schedule.build_plan) decides at plan time.
An update output of value `v` for the captured input `c` is written in place when all hold:

- the graph has no anomaly-mode "check" outputs (those raise before any side effect is
  written back, so a parameter must not change before they are looked at);
- `v` is a stored (not reduced) output of a fused kernel over exactly `c`'s shape and dtype,
  `c` has one update output, and no other graph output holds `v`, `c`, or a value that may be a
  view of either (a single-node step's NumPy result may be a view of its operand, so aliases
  follow such steps);
- the kernel reads `c` and its views only as `c` itself with C-contiguous strides over the
  space, so each element is read at the point that writes it and nowhere else, and when it
  reads `c` the stored value depends on that read, so the load comes before the store;
- no step after the kernel reads `c` or a view of it;
- every step of the kernel computes in floating point or bool: a kernel that can report an
  error (integer pow to a negative power) raises only after its loop has stored everything;
- no kernel that can report an error (an index check, an integer division) runs after it and
  computes a node that comes before the update in the traced program: eager would have
  raised before updating, so the tensor must not change (the plan then raises eager's
  error; docs/notes/errors-in-kernels.md).

A product with an update epilogue (matmul_steps.GemmStep: `W - lr * (h.T @ g)`) is written in
place on the same terms, where it accumulates into `c` itself and neither factor is `c` or a
view of it (BLAS reads the factors while it writes).

At run time (`InPlaceTargets.allowed`, once per call) the tensor's current data must be a
writeable C-contiguous ndarray of the planned shape and dtype that overlaps no other input's
memory (another captured tensor, an argument). A target that fails any check is stored into a
fresh buffer, and the executable copies it as before. See docs/notes/cpu-codegen.md.
"""

from __future__ import annotations

import operator

import numpy as np
from numpy.lib.array_utils import byte_bounds

from ...ir.graph import Graph, Value
from ...tensor import dtypes
from ..cpu.workers import data_address
from ..kernel import reads_pointwise
from .matmul_steps import ConcurrentProducts, GemmStep, MatmulStep
from .plan import step_reads, store_follows_load, value_operands
from .steps import AllocateStep, KernelStep, NodesStep


def _view_roots(steps: list, roots: set) -> dict:
    """id(value) -> the roots (ids among `roots`) whose memory the value may share.

    Kernel and matmul steps make fresh arrays; a single node run through its NumPy impl may
    return a view of an operand (reshape, permute, expand, slicing), so its result shares the
    roots of all its operands.
    """
    shared = {root: {root} for root in roots}
    for step in steps:
        if isinstance(step, (KernelStep, MatmulStep, ConcurrentProducts, AllocateStep)):
            continue
        nodes = step.steps if isinstance(step, NodesStep) else [step]
        for inner in nodes:
            found = set()
            for operand in value_operands(inner.node):
                found |= shared.get(id(operand), set())
            if found:
                shared[id(inner.node.output)] = found
    return shared


def _computes_safely(kernel) -> bool:
    """No step of `kernel` can report an error after the loop stored its outputs."""
    for step in kernel.steps:
        for dtype in (step.compute_dtype, step.out_dtype):
            if dtype is not None and not dtype.is_floating_point and dtype is not dtypes.bool_:
                return False
    return True


def _failing_before(graph: Graph, steps: list):
    """`failing_before(index, value)`: whether a kernel that can report an error runs after
    step `index` and computes a node that the traced program ran before the node making
    `value` (an update's new value), so that eager would have raised before the update."""
    order = {id(node.output): position for position, node in enumerate(graph.nodes)}
    failing = [(index, min(order[id(node.output)] for node in step.nodes))
               for index, step in enumerate(steps)
               if isinstance(step, KernelStep) and step.nodes and
               not _computes_safely(step.kernel)]

    def check(index: int, value: Value) -> bool:
        made = order.get(id(value), -1)
        return any(later > index and first < made for later, first in failing)

    return check


def _reads_in_step(kernel, sources: list, key: int, aliases: set, stored: int) -> bool:
    """Whether `kernel` reads the captured value `key` (and its views, ids in `aliases`) only
    as itself, element for element with the points it stores, and then feeds the stored step
    `stored` so that no compiler may move the load after the store (plan.store_follows_load;
    the body loads each input once, so every other use of it reads the same register)."""
    read = None
    for position, value in enumerate(sources):
        if id(value) not in aliases:
            continue
        if id(value) != key or not reads_pointwise(kernel, position):
            return False
        read = position
    return read is None or store_follows_load(kernel, stored, read)


def _gemm_writes_in_place(step: GemmStep, captured: Value, aliases: set) -> bool:
    """Whether the product-with-epilogue `step` may store into `captured`'s storage: it
    accumulates into `captured` itself, of the result's shape and dtype, and its factors
    share no memory with it (BLAS reads them while it writes)."""
    result = step.output
    return step.epilogue.accumulate is captured and result.shape == captured.shape and \
        result.dtype == captured.dtype and \
        not any(id(value) in aliases for value in step.operands[:2])


def plan_in_place_updates(graph: Graph, steps: list):
    """Mark the kernel outputs that store an update into its tensor's storage (each marked
    KernelStep's `in_place[i]` is the id of the captured input value); an InPlaceTargets for
    the run-time checks, or None when no output qualifies."""
    if any(output.kind == "check" for output in graph.outputs):
        return None
    updates = [output for output in graph.outputs
               if output.kind == "update" and output.target is not None and
               output.target.kind == "captured" and isinstance(output.value, Value)]
    if not updates:
        return None
    captured = {id(entry.value) for entry in graph.inputs if entry.kind == "captured"}
    produced = {}  # id(value) -> (step index, output position) for kernel and gemm outputs
    for index, step in enumerate(steps):
        if isinstance(step, KernelStep):
            for position, (value, _) in enumerate(step.outputs):
                produced[id(value)] = (index, position)
        elif isinstance(step, GemmStep):
            produced[id(step.output)] = (index, None)
    shared = _view_roots(steps, captured | set(produced))
    views: dict = {}  # root -> ids of the values that may share its memory
    for name, found in shared.items():
        for root in found:
            views.setdefault(root, []).append(name)
    # How many graph outputs hold each root (itself or a view of it).
    held: dict = {}
    for output in graph.outputs:
        for root in shared.get(id(output.value), ()):
            held[root] = held.get(root, 0) + 1
    updated: dict = {}
    for output in updates:
        updated[id(output.target)] = updated.get(id(output.target), 0) + 1
    last_read: dict = {}  # id(value) -> the last step index reading it
    for index, step in enumerate(steps):
        for value in step_reads(step):
            last_read[id(value)] = index
    failing_before = _failing_before(graph, steps)

    targets = []
    for output in updates:
        value, entry = output.value, output.target
        key = id(entry.value)
        where = produced.get(id(value))
        if where is None or key not in captured or updated[id(entry)] != 1:
            continue
        index, position = where
        step = steps[index]
        if held.get(key, 0) or held.get(id(value), 0) != 1 or \
                any(last_read.get(name, -1) > index for name in views[key]) or \
                failing_before(index, value):
            continue
        if isinstance(step, GemmStep):
            if _gemm_writes_in_place(step, entry.value, set(views[key])):
                step.in_place = key
                step.writes_in_place = True
                targets.append((key, value.dtype.numpy, value.shape))
            continue
        kernel = step.kernel
        if kernel.outputs[position].reduce is not None or step.outputs[position][1] is not None:
            continue
        if not (value.shape == entry.value.shape == kernel.shape and
                value.dtype == entry.value.dtype and _computes_safely(kernel)):
            continue
        if not _reads_in_step(kernel, step.sources, key, set(views[key]),
                              kernel.outputs[position].step):
            continue
        step.in_place[position] = key
        step.writes_in_place = True
        targets.append((key, value.dtype.numpy, value.shape))
    if not targets:
        return None
    others = [id(entry.value) for entry in graph.inputs
              if entry.kind not in ("captured", "random", "scalar")]
    tensors = {id(entry.value): entry.tensor for entry in graph.inputs if entry.kind == "captured"}
    return InPlaceTargets(targets, sorted(captured), others, tensors)


class InPlaceTargets:
    """The captured inputs some kernel writes in place, and the per-call check of their data.

    `targets`: (id of the captured input value, NumPy dtype, shape). `captured`: the ids of all
    captured inputs, `others`: of the inputs a call supplies (random numbers are drawn into
    fresh arrays, so they cannot overlap anything and are left out). `tensors`: the captured
    tensors by input id.
    """

    def __init__(self, targets: list, captured: list, others: list, tensors: dict):
        self.targets = targets
        self.tensors = tensors
        self.captured = captured
        self.others = others
        # The captured arrays last checked (identity), and what they allowed: overlaps between
        # captured tensors change only when a tensor's data is replaced.
        self._checked: list | None = None
        self._allowed: list = []  # (key, dtype, shape, (low, high)) passing the overlap check

    def allowed(self, environment: dict) -> set:
        """The ids of the captured input values a kernel may write in place on this call."""
        arrays = [environment[key] for key in self.captured]
        checked = self._checked
        if checked is None or len(checked) != len(arrays) or \
                not all(map(operator.is_, arrays, checked)):
            self._allowed = self._check_captured(arrays)
            self._checked = arrays
        result = set()
        for key, dtype, shape, _ in self._allowed:
            array = environment[key]
            # Flags, dtype and shape of the same ndarray object can be changed in place.
            flags = array.flags
            if flags.writeable and flags.c_contiguous and array.dtype == dtype and \
                    array.shape == shape:
                result.add(key)
        if result and self.others:
            for key in self.others:
                low, high = _bounds(environment[key])
                if low is None:
                    return set()
                for target, _, _, (start, end) in self._allowed:
                    if start < high and low < end:
                        result.discard(target)
        return result

    def _check_captured(self, arrays: list) -> list:
        """The targets whose data is an ndarray overlapping no other captured input's."""
        intervals = []
        for key, array in zip(self.captured, arrays):
            low, high = _bounds(array)
            if low is None:
                return []
            intervals.append((low, high, key))
        intervals.sort()
        overlapping = set()
        for position, (_, high, key) in enumerate(intervals):
            following = position + 1
            while following < len(intervals) and intervals[following][0] < high:
                overlapping.update((key, intervals[following][2]))
                following += 1
        found = dict(zip(self.captured, arrays))
        allowed = []
        for key, dtype, shape in self.targets:
            array = found[key]
            if key not in overlapping and array.__class__ is np.ndarray:
                allowed.append((key, dtype, shape, _bounds(array)))
        return allowed


def _bounds(array) -> tuple:
    """(first byte, one past the last byte) of an ndarray's memory, or (None, None)."""
    if not isinstance(array, np.ndarray):
        return None, None
    if array.size == 0:
        return 0, 0
    if array.flags.c_contiguous:  # every call checks its arguments: byte_bounds takes ~2 us
        low = data_address(array)
        return low, low + array.nbytes
    return byte_bounds(array)
