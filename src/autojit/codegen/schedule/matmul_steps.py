"""Matrix products in a compiled plan: how the schedule (fusion.py) runs matmul nodes.

Three things are decided here, once per plan, from the graph:

- Transposed operands are read where they lie: a matmul operand made by a 2-D `permute`
  (h.T in a weight gradient h.T @ g) is read as the transpose of its source, which BLAS does
  through its strides; the permute step is then dropped when nothing else reads it.
- Epilogues: a product whose only use is `C ± s * (a @ b)` or `s * (a @ b) ± C` (an SGD update
  `W - lr * (h.T @ g)` once `.grad` is cleared, a gradient accumulated into a kept one), with
  C of the product's shape and dtype and s a Python number, is one BLAS call
  `alpha * a @ b + beta * C` (GemmStep). When C is a captured tensor this step updates, the
  call writes straight into its storage (in_place.py decides and checks, as for kernels), so
  the product is never stored apart and no update kernel reads it back. When C is an earlier
  product's result that nothing else reads (a weight's gradient reaching it along two paths,
  as every weight's does in a double backward), the call adds into C's own array where the
  product stands, and may still run beside its neighbour: the gradient-penalty step's two
  [256, 256] and [64, 256] sums lose their add kernels (its native program 548-553 us
  against 560-562, interleaved in one process, two builds each).
- Pairs: two products that the schedule runs one after the other and that do not depend on
  each other, each large enough that it would be split over the cores, run side by side, one whole
  product per core (ConcurrentProducts): one hand-off instead of two, and neither operand is
  re-packed by a second part. A 256x512x512 pair (an MLP's hidden-layer input gradient and weight
  gradient): 1.02 ms side by side against 1.25-1.30 ms split one after the other, through the Python
  pool. There smaller products lose more to the hand-off than they gain (108 us one after the other
  against 160 us side by side for 256x10x512 and 512x256x10); on the native workers
  (codegen/cpu/workers.py) they pair from 2^18 multiply-adds, as they split (the gradient-penalty
  step's products: 1.30 ms of profiled steps paired, against 1.35 ms split one after the other, two
  runs each). A paired product keeps only an epilogue adding into an earlier product's result: an
  update could not be written in place while the other product of the pair reads the same tensor. So
  a product whose epilogue updates a graph input (an SGD update of a weight) is not paired at all:
  the MLP step's hidden-layer input gradient and weight update one after the other, the update in
  place, took 3.13-3.21 ms a step against 3.20-3.28 ms paired with a separate update kernel (medians
  of interleaved rounds in one process, two runs).

CUDA plans keep plain matmul steps (`host` False): device arrays go through the eager op.
"""

from __future__ import annotations

import numpy as np

from ...ir.graph import Value
from ...ops import elementwise
from ...ops.linalg import MATMUL
from ...ops.registry import Extern, Layout, run_eager
from ...tensor.tensor import Tensor
from ..cpu.gemm import blas
from .environment_keys import IN_PLACE, RECORD, REUSE, WRITTEN

# A product pairs with its neighbour from this many multiply-adds: the size from which it
# would be split over the cores anyway (through the Python pool, or on the native workers).
PAIR_THRESHOLD = blas.SPLIT_THRESHOLD
NATIVE_PAIR_THRESHOLD = blas.NATIVE_SPLIT_THRESHOLD


def transposed_source(value) -> tuple:
    """(value read, whether the product reads its transpose) for a matmul operand: the
    source of a 2-D permute (dims (1, 0)), else the operand itself."""
    producer = value.producer
    if producer is not None and isinstance(producer.op.lowering, Layout) and \
            producer.op.lowering.kind == "permute" and tuple(producer.attrs["dims"]) == (1, 0) \
            and isinstance(producer.inputs[0], Value):
        return producer.inputs[0], True
    return value, False


def is_product(node) -> bool:
    """Whether a node is a matrix product (an extern call of the batched gemm routine)."""
    lowering = node.op.lowering
    return isinstance(lowering, Extern) and lowering.routine == "batched_gemm"


class Epilogue:
    """`out = alpha * (a @ b) + beta * accumulate` for the nodes `product`, `scale` (or
    None) and `combine` (whose output is the result). `into_accumulate`: the accumulated value
    is an earlier product's result that nothing else reads, so the call stores the sum into
    that result's own array, and runs where the product stands in the graph."""

    def __init__(self, product, scale, combine, alpha: float, beta: float, accumulate):
        self.product, self.scale, self.combine = product, scale, combine
        self.alpha, self.beta, self.accumulate = alpha, beta, accumulate
        self.into_accumulate = False


def prepare_products(products) -> None:
    """Start the native gemm the product nodes will run on (blas.prepare_product) on a
    compile thread, where it compiles while the plan is built, or earlier while the passes
    run (backend.prepare); a dtype's gemm is started once."""
    for node in products:
        blas.prepare_product(node.output.dtype.numpy, node.output.shape)


class ProductPlan:
    """What the schedule does with the graph's matmul nodes (see the module docstring)."""

    def __init__(self, graph, consumers: dict, returned: set, host: bool):
        self.paired: set = set()  # ids of matmul nodes that run beside a neighbour
        # id(node where the step runs) -> Epilogue: the combine node, or the product where the
        # epilogue stores into an earlier product's result.
        self.epilogues: dict = {}
        self.absorbed: set = set()  # ids of the nodes an epilogue computes elsewhere
        if not host:
            return
        products = [node for node in graph.nodes if is_product(node)]
        prepare_products(products)
        self._pair(graph.nodes, consumers, returned)
        claimed: set = set()  # ids of the combine nodes given an epilogue
        # (a @ b) + (c @ d), a gradient reaching a weight along two paths: the later product
        # adds its result into the earlier one's array, paired or not, with no copy.
        earlier: set = set()
        for node in products:
            epilogue = _epilogue(node, consumers, returned)
            if epilogue is not None and id(epilogue.accumulate) in earlier and \
                    id(epilogue.combine) not in claimed and \
                    _only_consumer(epilogue.accumulate, consumers, returned) is \
                    epilogue.combine:
                epilogue.into_accumulate = True
                claimed.add(id(epilogue.combine))
                self.epilogues[id(node)] = epilogue
                self.absorbed.update(id(other) for other in (epilogue.scale, epilogue.combine)
                                     if other is not None)
            earlier.add(id(node.output))
        # Otherwise an unpaired product folds the value in where the combine stands: into the
        # captured tensor's storage where in_place.py allows, else into a copy of the value
        # (a pair's members keep none: one could not update a tensor in place while the
        # other reads it).
        for node in products:
            if id(node) in self.paired or id(node) in self.epilogues:
                continue
            epilogue = _epilogue(node, consumers, returned)
            if epilogue is not None and id(epilogue.combine) not in claimed:
                claimed.add(id(epilogue.combine))
                self.epilogues[id(epilogue.combine)] = epilogue
                self.absorbed.add(id(node))
                if epilogue.scale is not None:
                    self.absorbed.add(id(epilogue.scale))

    def _pair(self, nodes: list, consumers: dict, returned: set) -> None:
        """Pair each large product with the next one that does not depend on it. The steps
        are joined only where the schedule puts them next to each other (pair_products)."""
        previous, derived = None, set()  # the candidate, and ids of values computed from it
        for node in nodes:
            reads_previous = any(id(x) in derived for x in node.inputs if isinstance(x, Value))
            if is_product(node) and _pairable(node) and \
                    not _updates_an_input(node, consumers, returned):
                if previous is not None and not reads_previous:
                    self.paired.update((id(previous), id(node)))
                    previous, derived = None, set()
                else:
                    previous, derived = node, {id(node.output)}
            elif reads_previous:
                derived.add(id(node.output))


def _pairable(node) -> bool:
    first, second = node.inputs
    if len(first.shape) != 2 or len(second.shape) != 2:
        return False
    rows, inner = first.shape
    threshold = NATIVE_PAIR_THRESHOLD if blas.native_gemm(node.output.dtype.numpy) else \
        PAIR_THRESHOLD
    return rows * inner * second.shape[1] >= threshold and blas.pool() is not None


def _updates_an_input(product, consumers: dict, returned: set) -> bool:
    """Whether the product folds into `W ± s * (a @ b)` with W a graph input (a captured
    tensor that the step may update in place)."""
    epilogue = _epilogue(product, consumers, returned)
    return epilogue is not None and epilogue.accumulate.producer is None


def _only_consumer(value, consumers: dict, returned: set):
    readers = consumers.get(id(value), ())
    if id(value) in returned or len(readers) != 1:
        return None
    return readers[0]


def _epilogue(product, consumers: dict, returned: set) -> Epilogue | None:
    output = product.output
    if len(output.shape) != 2 or any(len(x.shape) != 2 for x in product.inputs) or \
            not blas.gemm_supported(output.dtype.numpy) or \
            any(x.dtype is not output.dtype for x in product.inputs):
        return None
    following = _only_consumer(output, consumers, returned)
    if following is None:
        return None
    scale, alpha, scaled = None, 1.0, output
    if following.op is elementwise.MUL:
        factors = [x for x in following.inputs if x is not output]
        if len(factors) != 1 or factors[0].__class__ not in (int, float) or \
                following.output.dtype is not output.dtype:
            return None
        scale, alpha, scaled = following, float(factors[0]), following.output
        following = _only_consumer(scaled, consumers, returned)
        if following is None:
            return None
    if following.op is not elementwise.ADD and following.op is not elementwise.SUB:
        return None
    left, right = following.inputs
    accumulate = right if left is scaled else left
    if not isinstance(accumulate, Value) or accumulate is scaled or \
            accumulate.shape != output.shape or accumulate.dtype is not output.dtype or \
            following.output.dtype is not output.dtype:
        return None
    beta = 1.0
    if following.op is elementwise.SUB:
        if right is scaled:
            alpha = -alpha
        else:
            beta = -1.0
    return Epilogue(product, scale, following, alpha, beta, accumulate)


class MatmulStep:
    """A matmul node: BLAS called directly (codegen/cpu/gemm/blas.py splits large products over the
    cores), without the eager op's dispatch, reading transposed operands in place."""

    event_name = "matmul"  # the profiler's name for it

    def __init__(self, node, host: bool = True):
        self.node = node
        self.output = node.output
        operands = [transposed_source(x) if host else (x, False) for x in node.inputs]
        self.operands = [value for value, _ in operands]  # the values the step reads
        self._keys = [(id(value), transposed) for value, transposed in operands]
        self.reusable = [False]
        self.slots = [None]  # the buffers.BufferSlot of the result, when reusable
        self._kept = None

    def _operands(self, environment: dict) -> list:
        arrays = []
        for key, transposed in self._keys:
            array = environment[key]
            arrays.append(array.T if transposed else array)
        return arrays

    def run(self, environment: dict, split: bool = True) -> None:
        record = environment.get(RECORD)
        if record is not None:
            keep: list = []
            calls = self.records(environment, keep, split)
            if calls is not None:
                blas.run_records(calls)
                record.gemm(calls, *keep, environment[id(self.output)])
                return
            record.refuse(f"matmul %{self.output.id} ran off the native gemm")
        a, b = self._operands(environment)
        if a.__class__ is not np.ndarray or b.__class__ is not np.ndarray:
            environment[id(self.output)] = self._eager(a, b)  # device arrays
            return
        if a.ndim > 2 or b.ndim > 2:
            # The calls the native program makes, so that results do not depend on which ran.
            calls = self.records(environment, [], split)
            if calls is not None:
                blas.run_records(calls)
                return
        environment[id(self.output)] = blas.matmul(a, b, self._buffer(environment, a, b),
                                                   split)

    def kept_arrays(self) -> list:
        """The result buffer kept across calls, if any (codegen/cpu/program.py)."""
        return [] if self._kept is None else [self._kept]

    def _buffer(self, environment: dict, a, b):
        """The array kept across calls for the result, or None for a fresh one."""
        if not (self.reusable[0] and environment.get(REUSE, False)):
            return None
        dtype = np.result_type(a, b)
        shape = self.output.shape
        out = self._kept
        if out is None or out.dtype != dtype or out.shape != shape:
            out = self._kept = self.slots[0].take(shape, dtype)
        return out

    def records(self, environment: dict, keep: list, split: bool = False) -> list | None:
        """The product as native gemm calls (blas.gemm_records: one part, or split over the
        cores as blas.matmul splits it) with its result array bound, or None (nothing done)
        where it cannot run natively. `keep` receives the operands the calls read (a copy
        where BLAS cannot read an operand where it lies)."""
        a, b = self._operands(environment)
        if a.__class__ is not np.ndarray or b.__class__ is not np.ndarray or \
                a.ndim < 2 or b.ndim < 2 or a.dtype != b.dtype or \
                not blas.native_gemm(a.dtype) or 0 in self.output.shape:
            return None
        if a.ndim > 2 or b.ndim > 2:  # one call per matrix of the batch, on this core
            out = self._buffer(environment, a, b)
            out = np.empty(self.output.shape, a.dtype) if out is None else out
            calls = blas.batched_records(a, b, out, keep)
            if calls is not None:
                environment[id(self.output)] = out
            return calls
        out = self._buffer(environment, a, b)
        if out is None:
            out = np.empty((a.shape[0], b.shape[1]), a.dtype)
        environment[id(self.output)] = out
        parts, by_columns = blas.split_of(a, b) if split else (1, False)
        return blas.gemm_records(a, b, out, 1.0, 0.0, parts, by_columns, keep=keep)

    def _eager(self, a, b):
        operands = tuple(Tensor._make(array, value.dtype)
                         for array, value in zip((a, b), self.node.inputs))
        return run_eager(MATMUL, operands, {})._payload

    def describe(self) -> str:
        marks = ["ᵀ" if transposed else "" for _, transposed in self._keys]
        return "matmul " + " @ ".join(f"%{value.id}{mark}"
                                       for value, mark in zip(self.operands, marks))


class GemmStep(MatmulStep):
    """A product with its epilogue: `alpha * a @ b + beta * accumulate` in one BLAS call,
    stored into the accumulated tensor's own storage when in_place.py allows."""

    def __init__(self, epilogue: Epilogue):
        super().__init__(epilogue.product)
        self.epilogue = epilogue
        self.event_name = "+".join(node.op.name for node in (
            epilogue.product, epilogue.scale, epilogue.combine) if node is not None)
        self.output = epilogue.combine.output
        self.operands.append(epilogue.accumulate)
        self._accumulate = id(epilogue.accumulate)
        self.in_place = None  # id of the captured input whose storage receives the result
        self.writes_in_place = False

    def run(self, environment: dict, split: bool = True) -> None:
        a, b = self._operands(environment)
        accumulate = environment[self._accumulate]
        dtype = self.output.dtype.numpy
        record = environment.get(RECORD)
        if not self._fusable(a, b, accumulate):
            if record is not None:
                record.refuse(f"{self.event_name} ran unfused")
            environment[id(self.output)] = self._unfused(a, b, accumulate)
            return
        shape = (a.shape[0], b.shape[1])
        if self.epilogue.into_accumulate:
            out = accumulate
        elif self.in_place is not None and self.in_place in environment.get(IN_PLACE, ()):
            out = accumulate
            environment[WRITTEN].append(self.in_place)
        else:
            out = self._kept if environment.get(REUSE, False) else None
            if out is None or out.shape != shape:
                if self.reusable[0] and environment.get(REUSE, False):
                    out = self._kept = self.slots[0].take(shape, dtype)
                else:
                    out = np.empty(shape, dtype)
            np.copyto(out, accumulate)
            if record is not None:
                record.copy(out, accumulate)
        environment[id(self.output)] = blas.gemm(a, b, out, self.epilogue.alpha,
                                                 self.epilogue.beta, split, record)

    def _fusable(self, a, b, accumulate) -> bool:
        """Whether one gemm call computes the step: host arrays of the result's dtype, and
        where it stores into the accumulated array, one that is row-major."""
        if a.__class__ is not np.ndarray or b.__class__ is not np.ndarray or \
                accumulate.__class__ is not np.ndarray or \
                not a.dtype == b.dtype == accumulate.dtype == self.output.dtype.numpy:
            return False
        return not self.epilogue.into_accumulate or \
            (accumulate.flags.c_contiguous and accumulate.flags.writeable)

    def records(self, environment: dict, keep: list, split: bool = False) -> list | None:
        """As MatmulStep.records, for a step that stores into the accumulated array (a pair's
        member); None for the others, which copy or may write in place."""
        if not self.epilogue.into_accumulate:
            return None
        a, b = self._operands(environment)
        accumulate = environment[self._accumulate]
        if not self._fusable(a, b, accumulate) or not blas.native_gemm(a.dtype):
            return None
        environment[id(self.output)] = accumulate
        parts, by_columns = blas.split_of(a, b) if split else (1, False)
        return blas.gemm_records(a, b, accumulate, self.epilogue.alpha, self.epilogue.beta,
                                 parts, by_columns, keep=keep)

    def _unfused(self, a, b, accumulate):
        """The epilogue's nodes one by one, as the reference interpreter runs them."""
        epilogue = self.epilogue
        result = Tensor._make(self._eager(a, b), epilogue.product.output.dtype)
        if epilogue.scale is not None:
            operands = tuple(result if x is epilogue.product.output else x
                             for x in epilogue.scale.inputs)
            result = run_eager(epilogue.scale.op, operands, {})
        scaled = epilogue.product.output if epilogue.scale is None else epilogue.scale.output
        other = Tensor._make(accumulate, epilogue.accumulate.dtype)
        operands = tuple(result if x is scaled else other for x in epilogue.combine.inputs)
        return run_eager(epilogue.combine.op, operands, {})._payload

    def describe(self) -> str:
        epilogue = self.epilogue
        into = " (store in place)" if self.in_place is not None or epilogue.into_accumulate \
            else ""
        return (f"gemm {epilogue.alpha:g} * {super().describe()[len('matmul '):]} + "
                f"{epilogue.beta:g} * %{epilogue.accumulate.id}{into}")


class ConcurrentProducts:
    """Products that read nothing of each other's, one per core, each whole."""

    def __init__(self, members: list):
        self.members = members

    def run(self, environment: dict) -> None:
        keep: list = []
        records: list = []
        record = environment.get(RECORD)
        for member in self.members:
            calls = member.records(environment, keep)
            if calls is None:
                if record is not None:
                    record.refuse("products side by side ran on the Python pool")
                self._run_on_pool(environment)  # the records made so far have not run
                return
            records.extend(calls)
        blas.run_records(records)
        if record is not None:
            record.gemm(records, *keep, *(environment[id(member.output)]
                                           for member in self.members))

    def kept_arrays(self) -> list:
        return [array for member in self.members for array in member.kept_arrays()]

    def _run_on_pool(self, environment: dict) -> None:
        first, *others = self.members
        pending = [blas.pool().submit(member.run, environment, False) for member in others]
        first.run(environment, False)
        for future in pending:
            future.result()

    def describe(self) -> str:
        return "side by side: " + "; ".join(member.describe() for member in self.members)


def products_of(step) -> list:
    """The MatmulSteps a plan step runs (none for other steps)."""
    if isinstance(step, MatmulStep):
        return [step]
    return step.members if isinstance(step, ConcurrentProducts) else []


def pair_products(steps: list, paired: set) -> list:
    """The steps with each two consecutive MatmulSteps of paired nodes (that do not read
    each other's result) joined into one ConcurrentProducts."""
    joined: list = []
    for step in steps:
        previous = joined[-1] if joined else None
        if _pairs(step, paired) and _pairs(previous, paired) and \
                not any(value is previous.output for value in step.operands):
            joined[-1] = ConcurrentProducts([previous, step])
        else:
            joined.append(step)
    return joined


def _pairs(step, paired: set) -> bool:
    """Whether `step` is a product of a paired node that can run beside another: a plain one,
    or one storing into an earlier product's result (its call is all of it)."""
    return (step.__class__ is MatmulStep or
            (step.__class__ is GemmStep and step.epilogue.into_accumulate)) and \
        id(step.node) in paired
