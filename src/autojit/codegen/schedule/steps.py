"""The plan's step kinds that are not products: a fused kernel, and single nodes run through
their ops' NumPy impls (matmul_steps.py holds the products).

fusion.py groups the graph's nodes into these steps and runs them in order over one environment dict
(value ids to arrays, plus the keys of environment_keys.py). When the plan records a run for its
native program (codegen/cpu/program.py), each step reports the native calls it made to the Recording
under RECORD; a step that ran anything else in Python refuses. When a kernel reports an error,
`reference_error` finds the error eager raises.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir.graph import Value
from ...ops.registry import Extern, Layout, communicates, run_eager
from ...tensor.tensor import Tensor
from ..cpu import workers
from ..kernel import Kernel
from .environment_keys import IN_PLACE, RECORD, REUSE, WRITTEN


def folds_into_strides(node) -> bool:
    """Whether a node is a layout a kernel reads through strides (registry.Layout.fold)."""
    lowering = node.op.lowering
    return lowering.__class__ is Layout and lowering.fold is not None


def _views_directly(node) -> bool:
    """Whether a node's impl is a NumPy view of its input and nothing else: a folding layout,
    or a view reinterpreting its input's memory (registry.Extern.reinterprets: view_as_real,
    view_as_complex), which the native program records as any view."""
    lowering = node.op.lowering
    return folds_into_strides(node) or (lowering.__class__ is Extern and lowering.reinterprets)


def copy_by_kernel(compiled, source: np.ndarray, out: np.ndarray, held: np.ndarray,
                   environment: dict) -> None:
    """Run a compiled copy in C order (group_steps.strided_copy's kernel) of `source` into
    `out`, and report it to the environment's Recording, if any, keeping `held` (the array
    `out` lies in) alive with the source: a ConvStep's or an IndexedRowsStep's strided
    operand."""
    compiled([source], [out])
    record = environment.get(RECORD)
    if record is not None:
        address = workers.data_address
        table = np.array([compiled.entry_pointers([address(source), address(out)])], np.int64)
        record.kernel(compiled.address, table, source, held)


class NodeStep:
    """One node run with its op's NumPy impl, as the reference interpreter runs it."""

    # The values a step copies its strided operands from (ConvStep's, IndexedRowsStep's
    # index): it reads them too (plan.step_reads).
    copy_sources: list = []

    def __init__(self, node):
        self.node = node
        # A layout that folds into strides is, on a NumPy array, its impl's view and nothing
        # else: called directly, without the eager op's dispatch (5 to 15 us a step).
        self._view_of = id(node.inputs[0]) if _views_directly(node) and \
            isinstance(node.inputs[0], Value) else None

    def run(self, environment: dict) -> None:
        node = self.node
        if self._view_of is not None:
            array = environment[self._view_of]
            if array.__class__ is np.ndarray:
                result = environment[id(node.output)] = node.op.impl(array, **node.attrs)
                record = environment.get(RECORD)
                if record is not None:
                    if np.shares_memory(result, array):
                        record.view(array, result)
                    else:
                        record.refuse(f"{node.op.name} copied its operand")
                return
        if environment.get(RECORD) is not None:
            environment[RECORD].refuse(f"{node.op.name} ran through its NumPy impl")
        operands = tuple(Tensor._make(environment[id(x)], x.dtype) if isinstance(x, Value)
                         else x for x in node.inputs)
        environment[id(node.output)] = run_eager(node.op, operands, node.attrs)._payload

    def kept_arrays(self) -> list:
        return []

    def describe(self) -> str:
        return f"node {self.node.op.name}"


class NodesStep:
    """A group the backend could not compile, run node by node."""

    def __init__(self, nodes: list):
        self.steps = [NodeStep(node) for node in nodes]

    def run(self, environment: dict) -> None:
        if environment.get(RECORD) is not None:
            environment[RECORD].refuse("an unfused group ran node by node")
        for step in self.steps:
            step.run(environment)

    def kept_arrays(self) -> list:
        return []

    def describe(self) -> str:
        return "unfused " + ", ".join(step.node.op.name for step in self.steps)


@dataclass
class KernelOrigin:
    """What a fused kernel was made from (group_steps.group_step), for rebinding.py to make it
    again for other sizes: the nodes it recomputes, each value it reads through an input with
    that input's index, the node each kernel step computes (None for a reduction's clone of
    its operand), and per node of the group (recomputed ones first) whether it reduces."""
    recomputed: list
    folds: list
    step_nodes: list
    reduces: list


class KernelStep:
    def __init__(self, kernel: Kernel, compiled, sources: list, outputs: list):
        self.kernel = kernel
        self.compiled = compiled
        self.sources = sources
        self.outputs = outputs  # (Value, shape to reshape the kernel's output to, or None)
        # Worked out once: run() is on every compiled call's path.
        self._sources = [(id(value), value.shape, value.dtype.numpy) for value in sources]
        self._results = [(kernel.output_shape(output), output.dtype.numpy)
                         for output in kernel.outputs]
        self._targets = [(id(value), reshape) for value, reshape in outputs]
        # Output buffers kept from one call to the next, for values that never leave the plan
        # (plan_buffer_reuse decides which): no allocation, no page faults on fresh memory.
        self._kept: list = [None] * len(outputs)
        self._all_kept = False
        self.reusable = [False] * len(outputs)
        self.slots: list = [None] * len(outputs)  # buffers.BufferSlot per reusable output
        # Per output: the id of the captured input whose own storage receives it, when the
        # run allows (in_place.py plans it), else None.
        self.in_place: list = [None] * len(outputs)
        self.writes_in_place = False
        self.split = None  # a parallel.SplitKernel when the kernel runs on several cores
        self.nodes: list = []  # the graph nodes the kernel computes (in_place.py reads them)
        self.origin: KernelOrigin | None = None  # a fused group's (group_steps.group_step)

    def _inputs(self, environment: dict) -> list:
        inputs = []
        for key, shape, dtype in self._sources:
            array = environment[key]
            if array.shape != shape or (array.dtype is not dtype and array.dtype != dtype):
                # The kernel reads raw memory through strides planned for this shape and
                # dtype: a mismatch must stop here, not read out of bounds.
                self._mismatch(key, array)
            inputs.append(array if array.flags.c_contiguous else _contiguous(array))
        return inputs

    def _call(self, environment: dict, inputs: list, results: list, reuse: bool) -> None:
        """Run the kernel (split over the cores where planned), reporting to a recording."""
        record = environment.get(RECORD)
        if record is not None and any(array is not environment[key] for array, (key, _, _)
                                      in zip(inputs, self._sources)):
            record.refuse(f"kernel {self.kernel.name} read a copy of a strided input")
        if self.split is not None:
            self.split.run(inputs, results, reuse, record)
        else:
            self.compiled(inputs, results)
            if record is not None:
                address = workers.data_address
                table = np.array([self.compiled.entry_pointers(
                    [address(array) for array in (*inputs, *results)])], np.int64)
                record.kernel(self.compiled.address, table, *inputs, *results)

    def run(self, environment: dict) -> None:
        inputs = self._inputs(environment)
        reuse = environment.get(REUSE, False)
        if reuse and self._all_kept and not self.writes_in_place:
            results = list(self._kept)  # the steady state: every buffer kept from before
        elif not self.writes_in_place and not any(self.reusable):
            results = [np.empty(shape, dtype) for shape, dtype in self._results]
        else:
            results = self._buffers(environment, reuse)
        self._call(environment, inputs, results, reuse)
        for (key, reshape), result in zip(self._targets, results):
            environment[key] = result.reshape(reshape) if reshape is not None else result

    def _buffers(self, environment: dict, reuse: bool) -> list:
        """The output arrays of this run: a captured tensor's own storage where the run
        allows an in-place store, a buffer kept from the last run, or a fresh one."""
        allowed = environment.get(IN_PLACE) if self.writes_in_place else None
        results = []
        for index, (shape, dtype) in enumerate(self._results):
            if allowed and self.in_place[index] in allowed:
                results.append(environment[self.in_place[index]])
                environment[WRITTEN].append(self.in_place[index])
                continue
            buffer = self._kept[index] if reuse else None
            if buffer is None:
                if reuse and self.reusable[index]:
                    buffer = self._kept[index] = self.slots[index].take(shape, dtype)
                else:
                    buffer = np.empty(shape, dtype)
            results.append(buffer)
        self._all_kept = all(buffer is not None for buffer in self._kept)
        return results

    def kept_arrays(self) -> list:
        """The arrays this step keeps from one call to the next (codegen/cpu/program.py)."""
        kept = [array for array in self._kept if array is not None]
        if self.split is not None:
            kept.extend(self.split.kept_arrays())
        sizes = getattr(self.compiled, "sizes", None)  # a generic kernel's (cpu.SizedKernel)
        return kept if sizes is None else [*kept, sizes]

    def _mismatch(self, key: int, array: np.ndarray):
        value = next(value for value in self.sources if id(value) == key)
        raise RuntimeError(f"kernel {self.kernel.name}: input %{value.id} expected "
                           f"{value.type_text}, got {array.dtype}{list(array.shape)}")

    def describe(self) -> str:
        ops = " ".join(step.op.name for step in self.kernel.steps)
        kinds = ", ".join(output.reduce or ("store in place" if target is not None else "store")
                          for output, target in zip(self.kernel.outputs, self.in_place))
        return (f"kernel {self.kernel.name}{list(self.kernel.shape)}: {ops} -> "
                f"{len(self.kernel.outputs)} outputs ({kinds})")


class AllocateStep:
    """The array of a value that later steps write part by part (RegionKernelStep): a cat's
    pieces, or an embed_slice's zeros and its slice. Taken from the value's planned slot
    (buffers.py) when the run may keep buffers, else allocated for this call; or, `within`
    (placement.py), a C-contiguous part of another such array that it is a piece of."""

    def __init__(self, node):
        self.node = node
        self.value = node.output
        self._shape, self._dtype = node.output.shape, node.output.dtype.numpy
        self.reusable = [False]
        self.slots: list = [None]
        self._kept = None
        self.within = None  # (the enclosing array's Value, region slices) when placed there

    def run(self, environment: dict) -> None:
        if self.within is not None:
            outer, region = self.within
            array = environment[id(outer)][region].reshape(self._shape)
        elif self.reusable[0] and environment.get(REUSE, False):
            if self._kept is None:
                self._kept = self.slots[0].take(self._shape, self._dtype)
            array = self._kept
        else:
            array = np.empty(self._shape, self._dtype)
        environment[id(self.value)] = array
        record = environment.get(RECORD)
        if record is not None:
            record.view(array)  # nothing to run: the array is kept, or the program allocates it

    def kept_arrays(self) -> list:
        return [] if self._kept is None else [self._kept]

    def describe(self) -> str:
        where = f" in %{self.within[0].id}" if self.within is not None else ""
        return f"allocate %{self.value.id} for {self.node.op.name}{where}"


class PlacedKernelStep(KernelStep):
    """A fused kernel some of whose outputs are stored straight into parts of arrays that
    AllocateSteps made (placement.py: a cat's pieces written where the cat keeps them, with
    the part's strides), the others as a KernelStep stores them. `regions[i]`: (the array's
    Value, region slices) for a placed output, else None; a placed output's own value is read
    by no other step, so it has no array of its own."""

    def __init__(self, kernel: Kernel, compiled, sources: list, outputs: list, regions: list):
        super().__init__(kernel, compiled, sources, outputs)
        self.regions = [None if region is None else
                        (region[0], tuple(slice(*bounds) for bounds in region[1]))
                        for region in regions]
        # The part, reshaped to the kernel's space where the piece is the kernel's value
        # reshaped (a [1, batch, n] part of a [batch, n] kernel).
        self._placed = []
        for region in self.regions:
            if region is None:
                self._placed.append(None)
                continue
            shape = tuple(len(range(part.start, part.stop, part.step)) for part in region[1])
            self._placed.append((id(region[0]), region[1],
                                 None if shape == tuple(kernel.shape) else kernel.shape))

    def run(self, environment: dict) -> None:
        inputs = self._inputs(environment)
        reuse = environment.get(REUSE, False)
        results = []
        for index, (shape, dtype) in enumerate(self._results):
            placed = self._placed[index]
            if placed is not None:
                part = environment[placed[0]][placed[1]]
                results.append(part if placed[2] is None else part.reshape(placed[2]))
            elif reuse and self.reusable[index]:
                if self._kept[index] is None:
                    self._kept[index] = self.slots[index].take(shape, dtype)
                results.append(self._kept[index])
            else:
                results.append(np.empty(shape, dtype))
        self._call(environment, inputs, results, reuse)
        for (key, reshape), result, placed in zip(self._targets, results, self._placed):
            if placed is None:
                environment[key] = result.reshape(reshape) if reshape is not None else result

    def describe(self) -> str:
        text = super().describe()
        targets = sorted({f"%{region[0].id}" for region in self.regions if region is not None})
        return f"{text}, stored into {', '.join(targets)}"


class RegionKernelStep(KernelStep):
    """A kernel that stores into parts of the array an AllocateStep made for `target`, each
    output into its region (a tuple of slices of that array): a cat's piece copied into
    place, an embed_slice's zeros."""

    def __init__(self, kernel: Kernel, compiled, sources: list, target, regions: list):
        super().__init__(kernel, compiled, sources, [])
        self.target = target
        self._target = id(target)
        self.regions = [tuple(slice(*bounds) for bounds in region) for region in regions]

    def run(self, environment: dict) -> None:
        inputs = self._inputs(environment)
        base = environment[self._target]
        self._call(environment, inputs, [base[region] for region in self.regions],
                   environment.get(REUSE, False))

    def kept_arrays(self) -> list:
        return [] if self.split is None else self.split.kept_arrays()

    def describe(self) -> str:
        return f"kernel {self.kernel.name}{list(self.kernel.shape)}: into %{self.target.id}"


def _contiguous(array: np.ndarray) -> np.ndarray:
    # Not np.ascontiguousarray, which turns a 0-d array into a 1-d one.
    return array if array.flags.c_contiguous else np.array(array, order="C")


def reference_error(graph, arg_arrays: list, failure: Exception, captured=None) -> Exception:
    """Eager's error for a call of `graph` in which a kernel reported one (a KernelError, or a
    CUDA plan's status word): the graph run through the reference interpreter on the same
    inputs raises it, at the op eager would fail at first and with eager's message (a failed
    index check's kernel does not keep which index failed). `captured` replaces captured
    tensors' data (host copies, for a CUDA plan). Nothing has been written back yet; should
    the reference not fail, or the graph hold a collective (which the other processes would
    not run again), `failure` is the error. See docs/notes/errors-in-kernels.md."""
    from ...ir.interpreter import interpret

    if any(communicates(node.op) for node in graph.nodes):
        # Run again here, its collectives would wait for processes that ran them already.
        return failure
    try:
        interpret(graph, *arg_arrays, captured=captured)
    except Exception as error:  # noqa: BLE001 - the error the call raises
        return error
    return failure


def mark_repeatable(error: Exception, repeatable: bool) -> Exception:
    """Say on eager's error of a failed run whether the run left no effect (no kernel stored
    into a tensor's storage): the compiled function then runs the call eagerly, which raises
    the same error from the user's own line (compiler/api.py)."""
    error.autojit_rerun_eagerly = repeatable
    return error
