"""The step plan: the steps a schedule made (fusion.py), run over one environment dict.

A Plan runs its steps (steps.py, matmul_steps.py) from Python, mapping value ids to arrays,
until it reaches its steady state; then one run is recorded and every later call that matches
it runs as one native call (cpu/program.py). Kernel and product outputs that never leave the
plan keep their buffers from one call to the next, shared between values alive at different
times (buffers.py plans them, `plan_buffer_reuse`).
"""

from __future__ import annotations

import functools
import math
import time

from ...ir.graph import Graph, Value
from ...tensor.state import state
from ..cpu.gemm import blas
from ..cpu.program import Program, Recording, Refused
from ..cpu.program import available as programs_available
from ..expression import parse
from ..kernel import Kernel, KernelError, inputs_feeding, reads_pointwise
from .buffers import StepBuffers, plan_buffers
from .conv_steps import ConvStep
from .direct_calls import direct_call
from .environment_keys import IN_PLACE, RECORD, REUSE, WRITTEN
from .matmul_steps import ConcurrentProducts, GemmStep, MatmulStep, products_of
from .overlap import settle
from .steps import (
    AllocateStep,
    KernelStep,
    NodesStep,
    NodeStep,
    PlacedKernelStep,
    RegionKernelStep,
    mark_repeatable,
    reference_error,
)

# Outputs that leave the plan as they are: returned to the caller, kept for a backward, or
# read by a later segment of a split graph (which may return them).
_ESCAPING_KINDS = ("result", "saved", "carry")


def plan_buffer_reuse(graph: Graph, steps: list, fresh_grads: frozenset = frozenset()) -> list:
    """Plan the buffers of the kernel and matmul outputs (buffers.py) and return the slots.

    An output can keep its buffer across calls, and share it with values alive at other
    times, when nothing holds on to it after this call: it is not returned (nor kept as a
    residual), and neither is anything a single-node step makes from it, which may be a view
    of it (a transposed weight gradient's `permute`). "update" outputs and "grad" outputs
    accumulated into an existing .grad qualify: the executable copies them into the tensors
    they belong to; they live to the plan's end. A .grad the function assigns (`fresh_grads`)
    is a new tensor each call: its array is allocated per call, and the executable keeps it
    as that tensor's data instead of copying it (5-9 us of the gradient-penalty step's
    650-680 us, interleaved in one process, two runs).
    """
    escaping = {id(output.value) for output in graph.outputs
                if output.kind in _ESCAPING_KINDS or
                (output.kind == "grad" and output.name in fresh_grads)}
    # Readers come after what they read: walking backwards, a node's output is known to
    # escape or not before its operands are decided.
    for step in reversed(steps):
        if isinstance(step, AllocateStep) and step.within is not None and \
                id(step.value) in escaping:
            escaping.add(id(step.within[0]))  # its array is part of the enclosing one
        for product in products_of(step):
            if _stores_into_accumulate(product) and id(product.output) in escaping:
                escaping.add(id(product.epilogue.accumulate))
        if isinstance(step, (KernelStep, MatmulStep, ConcurrentProducts, AllocateStep,
                             ConvStep)):
            continue
        nodes = step.steps if isinstance(step, NodesStep) else [step]
        for inner in reversed(nodes):
            if id(inner.node.output) in escaping:
                escaping.update(id(value) for value in value_operands(inner.node))
    returned = {id(output.value) for output in graph.outputs}
    return plan_buffers([_step_buffers(step) for step in steps], escaping, returned)


def _stores_into_accumulate(product) -> bool:
    return isinstance(product, GemmStep) and product.epilogue.into_accumulate


def _step_buffers(step) -> StepBuffers:
    if isinstance(step, AllocateStep):
        if step.within is not None:  # a part of the enclosing array, which it keeps alive
            outer = step.within[0]
            return StepBuffers([], [outer], [(step.value, [outer])])
        return StepBuffers([(step, 0, step.value)], [])
    if isinstance(step, PlacedKernelStep):
        placed = [region[0] for region in step.regions if region is not None]
        return StepBuffers([(step, index, value) for index, (value, _) in
                            enumerate(step.outputs) if step.regions[index] is None],
                           [*step.sources, *placed])
    if isinstance(step, RegionKernelStep):  # writes into the array, so keeps it alive
        return StepBuffers([], [*step.sources, step.target])
    if isinstance(step, KernelStep):
        return StepBuffers([(step, index, value) for index, (value, _) in
                            enumerate(step.outputs)], list(step.sources),
                           donors=_pointwise_donors(step))
    if isinstance(step, ConvStep):  # a fresh result, and scratch no other step reads
        return StepBuffers([(step, 0, step.node.output), (step, 1, step.scratch)],
                           value_operands(step.node))
    products = products_of(step)
    if products:
        # A product storing into an earlier product's result makes a value that is that
        # array: no buffer of its own, and the earlier result lives as long as it.
        into = [product for product in products if _stores_into_accumulate(product)]
        return StepBuffers([(product, 0, product.output) for product in products
                            if product not in into],
                           [value for product in products for value in product.operands],
                           [(product.output, [product.epilogue.accumulate]) for product in into])
    nodes = step.steps if isinstance(step, NodesStep) else [step]
    reads = [value for inner in nodes for value in value_operands(inner.node)]
    # A single node's result may be a view of any of its operands (reshape, indexing).
    views = [(inner.node.output, value_operands(inner.node)) for inner in nodes]
    return StepBuffers([], reads, views)


def _pointwise_donors(step: KernelStep) -> list:
    """(output index, source Value) pairs where the kernel stores the output element for
    element over the source's memory safely: the output covers the whole space, the source is
    read only at the point stored, through the same element size, and the store follows the
    load whatever the compiler reorders (store_follows_load). Worked out once per kernel and
    sizes of its sources: a plan rebound to other sizes (rebinding.py) shares the kernels
    whose sizes did not change."""
    kernel = step.kernel
    sizes = tuple(math.prod(source.shape) for source in step.sources)
    found = kernel.__dict__.setdefault("_donors", {})
    positions = found.get(sizes)
    if positions is None:
        positions = found[sizes] = _donor_positions(kernel, step, sizes)
    return [(index, step.sources[position]) for index, position in positions]


def _donor_positions(kernel: Kernel, step: KernelStep, sizes: tuple) -> list:
    """_pointwise_donors's pairs, with each source by its position among the kernel's."""
    size = math.prod(kernel.shape)
    # Whether every position reading a source reads it point for point: once per source.
    pointwise: dict = {}
    for position, source in enumerate(step.sources):
        pointwise[id(source)] = pointwise.get(id(source), True) and \
            reads_pointwise(kernel, position)
    candidates = {position: source for position, source in enumerate(step.sources)
                  if pointwise[id(source)] and sizes[position] == size}
    feeding = _feeding(kernel)
    donors = []
    for index, ((value, reshape), output) in enumerate(zip(step.outputs, kernel.outputs)):
        if output.reduce is not None or reshape is not None:
            continue
        itemsize = value.dtype.numpy.itemsize
        # Only an input the output is computed from can qualify (store_follows_load).
        for position in sorted(feeding.fed(output.step) & candidates.keys()):
            source = candidates[position]
            if source.dtype.numpy.itemsize == itemsize and \
                    store_follows_load(kernel, output.step, position):
                donors.append((index, position))
    return donors


class Plan:
    def __init__(self, graph: Graph, steps: list, fresh_grads: frozenset = frozenset(),
                 buffers: bool = True):
        """`buffers` False: the caller plans the buffers (rebinding.py takes a plan's)."""
        self.graph = graph
        self.steps = steps
        self._running = False
        self._left_no_effect = True
        # in_place.InPlaceTargets when kernels may store updates into their tensors' storage
        # (set by build_plan; a backend whose kernels cannot keeps None).
        self.in_place = None
        self.fresh_grads = fresh_grads
        self.buffer_slots = plan_buffer_reuse(graph, steps, fresh_grads) if buffers else []
        # Worked out once, for run_arrays: each input's key and captured tensor (or None for
        # the arrays a call supplies), and each output's key.
        self._input_slots = [(id(entry.value), entry.tensor if entry.kind == "captured"
                              else None) for entry in graph.inputs]
        self._output_keys = [id(output.value) for output in graph.outputs]
        self._input_keys = [key for key, _ in self._input_slots]
        # The native entry point (codegen/cpu/program.py): None until a steady-state run is
        # recorded, then the Program, or False when the recorded run could not become one (the
        # reason in `program_refusal`).
        self.program = None
        # Positions of outputs nothing reads after a run (set by the compiler's executable:
        # compiler/result_recipe.py's _unread_results); the program's owned outputs ignore them.
        self.unread_outputs: frozenset = frozenset()
        self.program_refusal: str | None = None
        self._steady_runs = 0  # runs that used the kept buffers, completed
        # Products run with OpenBLAS on one thread (cpu/gemm/blas.py's one_thread), set once per run
        # rather than once per product.
        self.calls_blas = any(isinstance(step, (MatmulStep, ConcurrentProducts))
                              for step in steps)

    def run(self, arg_tensors: list) -> tuple:
        return self.run_arrays([tensor._payload for tensor in arg_tensors])

    def run_arrays(self, arg_arrays: list) -> tuple:
        """The graph's outputs from its non-captured inputs' arrays, in input order."""
        return self.run_owning(arg_arrays)[0]

    def direct_call(self, arg_positions: list, grads: list, cleared: list, result, skipped,
                    remake):
        """A steady-state call of an executable as one function, or None (direct_calls.py)."""
        return direct_call(self, arg_positions, grads, cleared, result, skipped, remake)

    def run_owning(self, arg_arrays: list) -> tuple:
        """(run_arrays's outputs, the positions of those whose array this call allocated for
        that output alone, which the caller may keep without copying)."""
        try:
            if self.calls_blas:
                with blas.one_thread():
                    return self._run_owning(arg_arrays)
            return self._run_owning(arg_arrays)
        except KernelError as failure:
            # Eager's error, from the op eager fails at first (docs/notes/errors-in-kernels.md).
            raise mark_repeatable(reference_error(self.graph, arg_arrays, failure),
                                  self._left_no_effect) from None

    def _run_owning(self, arg_arrays: list) -> tuple:
        # Kept buffers serve one run at a time: a run that starts while another is under way
        # (another thread, or a hook calling the same function) allocates its own.
        reuse = not self._running
        profiler = state.profiler
        supplied = iter(arg_arrays)
        inputs = [next(supplied) if tensor is None else tensor._payload
                  for _, tensor in self._input_slots]
        # Whether a run that fails has stored nothing yet (a native program may have stored
        # updates in place wherever the plan has any).
        self._left_no_effect = self.in_place is None
        if self.program and reuse and profiler is None:
            self._running = True
            try:
                outputs = self.program.run(self, inputs)
            finally:
                self._running = False
            if outputs is not None:
                return outputs, self.program.owned_outputs
        environment: dict = dict(zip(self._input_keys, inputs))
        environment[REUSE] = reuse
        if self.in_place is not None and reuse:
            environment[IN_PLACE] = self.in_place.allowed(environment)
            environment[WRITTEN] = []
        self._running = True
        try:
            if profiler is not None:
                self._run_profiled(environment, profiler)
            elif self.program is None and reuse and self._steady_runs:
                self._run_recorded(environment, inputs)
            else:
                for step in self.steps:
                    step.run(environment)
            self._steady_runs += reuse
        except BaseException:
            self._left_no_effect = not environment.get(WRITTEN)
            # A step failed after a kernel stored an update into its tensor: the tensor has
            # changed, as eager's in-place op would have changed it, so its version moves too.
            for key in environment.get(WRITTEN, ()):
                self.in_place.tensors[key]._bump_version()
            settle(environment)  # collectives it began (overlap.py)
            raise
        finally:
            if environment[REUSE]:
                self._running = False
        return tuple([environment[key] for key in self._output_keys]), frozenset()

    def _run_recorded(self, environment: dict, inputs: list) -> None:
        """Run the steps with a Recording of their native calls, and make the program."""
        if not programs_available():
            self.program, self.program_refusal = False, "no native workers on this machine"
            for step in self.steps:
                step.run(environment)
            return
        record = environment[RECORD] = Recording()
        written: list = []
        for index, step in enumerate(self.steps):
            record.begin(index)
            before = len(environment.get(WRITTEN, ()))
            step.run(environment)
            if not record.recorded:
                record.refuse(f"step {index} ({step.describe()}) ran in Python")
            written.append(environment.get(WRITTEN, [])[before:])
        del environment[RECORD]
        try:
            self.program = Program.assemble(record, self, inputs, environment,
                                            frozenset(environment.get(IN_PLACE, ())), written)
        except Refused as refusal:
            self.program, self.program_refusal = False, str(refusal)

    def _run_profiled(self, environment: dict, profiler) -> None:
        """Each step as a profiler event: kernels by name, single nodes as their op."""
        for step in self.steps:
            start = time.perf_counter_ns()
            step.run(environment)
            end = time.perf_counter_ns()
            if isinstance(step, KernelStep):
                name = f"autojit::kernel {step.kernel.name}"
                shapes = [list(value.shape) for value in step.sources]
            elif isinstance(step, (MatmulStep, ConcurrentProducts)):
                products = products_of(step)
                name = "autojit::" + "+".join(product.event_name for product in products)
                shapes = [list(value.shape) for value in products[0].node.inputs]
            elif isinstance(step, AllocateStep):
                continue  # no work: the kernels writing its parts are the events
            else:
                nodes = step.steps if isinstance(step, NodesStep) else [step]
                if not nodes:  # overlap.ProgressStep: no op of its own to report
                    continue
                name = "autojit::" + "+".join(inner.node.op.name for inner in nodes)
                shapes = [list(value.shape) for value in value_operands(nodes[0].node)]
            profiler.record_event(name, start, end, shapes if profiler.record_shapes else None)

    def describe(self) -> str:
        return "\n".join(f"{index}: {step.describe()}" for index, step in enumerate(self.steps))

    def kernel_nodes(self) -> dict:
        """id(graph node) -> the name of the fused kernel that computes it."""
        return {id(node): step.kernel.name for step in self.steps
                if isinstance(step, KernelStep) for node in step.nodes}

    def node_labels(self) -> dict:
        """id(graph node) -> where it runs: its kernel's name, "gemm" (a BLAS or generated
        product, with what its epilogue absorbed), or "numpy" (a single node run through its
        op's impl). Nodes a kernel reads through strides (folded views) have no step."""
        labels = self.kernel_nodes()
        for step in self.steps:
            if isinstance(step, KernelStep):
                continue
            if products_of(step):
                for product in products_of(step):
                    epilogue = getattr(product, "epilogue", None)
                    nodes = [product.node] if epilogue is None else [
                        node for node in (epilogue.product, epilogue.scale, epilogue.combine)
                        if node is not None]
                    for node in nodes:
                        labels[id(node)] = f"gemm {product.event_name}"
            elif isinstance(step, AllocateStep):
                labels[id(step.node)] = "kernels writing its parts"
            else:
                for inner in (step.steps if isinstance(step, NodesStep) else [step]):
                    labels[id(inner.node)] = "numpy"
        return labels

    def llvm_ir(self) -> str:
        return "\n\n".join(step.compiled.llvm_ir for step in self.steps
                           if isinstance(step, KernelStep))

    @property
    def kernel_count(self) -> int:
        return sum(isinstance(step, KernelStep) for step in self.steps)


def value_operands(node) -> list:
    """The operands of a node that are graph values (not Python literals)."""
    return [operand for operand in node.inputs if isinstance(operand, Value)]



def store_follows_load(kernel: Kernel, stored: int, position: int) -> bool:
    """Whether storing step `stored`, element for element, over the memory of input
    `position` (read element for element) can never overwrite a point before the kernel has
    read it, however a compiler reorders the loads and stores of the different points (it
    may: the kernel's arrays are declared not to alias).

    It can when the stored value is computed from that load whatever the selects decide, or
    when nothing but this value reads the input: where a select drops the load, the point is
    read by no one. Not when the input also feeds another output (or a reduction) and reaches
    this one only through a select's branch: a compiler that knows the condition (a mask
    broadcast along the loop, unswitched) may store the other branch first, before the other
    output's load.
    """
    feeding = _feeding(kernel)
    always, fed = feeding.always(stored), feeding.fed(stored)
    if position in always:
        return True
    if position not in fed:
        return False
    return feeding.outputs_fed_by(position) <= {stored}


class _Feeding:
    """inputs_feeding of a kernel's steps, worked out once per kernel: buffer planning asks
    store_follows_load for every output and source of a kernel, and an unrolled recurrent
    step's kernels have hundreds of each (a 20-step LSTM's schedule took 25 s)."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self._always: dict = {}
        self._fed: dict = {}
        self._outputs_fed_by: dict | None = None

    def always(self, stored: int) -> set:
        found = self._always.get(stored)
        if found is None:
            found = self._always[stored] = inputs_feeding(self.kernel, stored, _always_named)
        return found

    def fed(self, stored: int) -> set:
        found = self._fed.get(stored)
        if found is None:
            found = self._fed[stored] = inputs_feeding(self.kernel, stored)
        return found

    def outputs_fed_by(self, position: int) -> set:
        """The steps of the kernel's outputs that input `position` feeds."""
        if self._outputs_fed_by is None:
            self._outputs_fed_by = {}
            for output in self.kernel.outputs:
                for fed in self.fed(output.step):
                    self._outputs_fed_by.setdefault(fed, set()).add(output.step)
        return self._outputs_fed_by.get(position, set())


def _feeding(kernel: Kernel) -> _Feeding:
    key = (len(kernel.steps), len(kernel.outputs))  # a kernel still being built changes
    cached = kernel.__dict__.get("_feeding")
    if cached is None or cached[0] != key:
        cached = kernel.__dict__["_feeding"] = (key, _Feeding(kernel))
    return cached[1]


@functools.lru_cache(maxsize=4096)
def _always_named(expression: str) -> frozenset:
    """The operands an expression's value depends on whatever its select conditions are: not
    those named only in a select's branches, which a compiler that knows the condition may
    never load."""
    named: set = set()

    def walk(node) -> None:
        kind = node[0]
        if kind == "operand":
            named.add(node[1])
        elif kind == "call":
            for argument in node[2][:1] if node[1] == "select" else node[2]:
                walk(argument)
        elif kind == "binary":
            walk(node[2])
            walk(node[3])
        elif kind == "unary":
            walk(node[2])

    walk(parse(expression))
    return frozenset(named)


def step_reads(step) -> list:
    """The values a plan step reads (in_place.py asks too, of paired products)."""
    if isinstance(step, NodeStep):  # and the arrays its strided operands are copied from
        return [*value_operands(step.node), *step.copy_sources]
    if isinstance(step, RegionKernelStep):
        return [*step.sources, step.target]
    if isinstance(step, PlacedKernelStep):
        return [*step.sources, *(region[0] for region in step.regions if region is not None)]
    if isinstance(step, AllocateStep):
        return [] if step.within is None else [step.within[0]]
    if isinstance(step, KernelStep):
        return step.sources
    if isinstance(step, (MatmulStep, ConcurrentProducts)):
        return [value for product in products_of(step) for value in product.operands]
    return [value for inner in step.steps for value in value_operands(inner.node)]


def step_makes(step) -> list:
    """The values a step of build_plan's list computes."""
    if isinstance(step, NodeStep):
        return [step.node.output]
    if isinstance(step, RegionKernelStep):  # a part of the value
        return [step.target]
    if isinstance(step, PlacedKernelStep):
        return [*(value for (value, _), region in zip(step.outputs, step.regions)
                  if region is None), *(region[0] for region in step.regions
                                        if region is not None)]
    if isinstance(step, AllocateStep):
        return [step.value]
    if isinstance(step, KernelStep):
        return [value for value, _ in step.outputs]
    if isinstance(step, MatmulStep):
        return [step.output]
    return [inner.node.output for inner in step.steps]
