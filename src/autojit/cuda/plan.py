"""Compiled graphs on CUDA tensors: the fusion schedule's plan with its kernels launched on
the GPU, the compiler's "cuda" backend (registered in autojit/cuda/__init__.py).

`build_plan` schedules the graph as the CPU backend does (codegen/schedule/fusion.py), with
kernels compiled by kernels.py, and returns a CudaPlan whose values live on the device from
the first step to the last. `claims` tells the compiler whether a call's tensors are on a GPU,
refusing with torch's error an op that would combine a CPU tensor with CUDA values.
"""

from __future__ import annotations

import re

import numpy as np

from ..codegen.kernel import CheckFailed
from ..codegen.schedule.environment_keys import STATUS
from ..codegen.schedule.fusion import build_plan as build_schedule
from ..codegen.schedule.plan import Plan
from ..codegen.schedule.steps import KernelStep, reference_error
from ..ir.graph import Value
from ..ops.registry import host_index_operand
from ..tensor.device import MIXED_DEVICES
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .array import CudaArray
from .kernels import compile_kernel, new_status, status_failed


def graph_device(graph, args) -> str:
    """"cuda" when the call's tensors (arguments and captured tensors) are on a GPU, else
    "cpu"; a call that mixes the two where an op combines them raises torch's error, as the
    eager op would (`check_devices`)."""
    arguments = [x for x in args if isinstance(x, Tensor) and x._payload is not None]
    captured = [entry.tensor for entry in graph.inputs if entry.kind == "captured"]
    on_cuda = [x for x in arguments + captured if x._payload is not None and x.is_cuda]
    if not on_cuda:
        return "cpu"
    if any(not x.is_cuda and x.ndim for x in arguments):
        raise RuntimeError(MIXED_DEVICES.format(on_cuda[0].device))
    check_devices(graph, args_on_cuda=True)
    return "cuda"


# The names the tracer gives captured tensors it found nowhere in the function's reach before
# the call (ir/trace.py, compiler/api.py): constants made while tracing.
_UNNAMED = re.compile(r"c\d+(_\d+)?")


def _made_while_tracing(entry) -> bool:
    """Whether a captured CPU tensor is a constant the trace itself made.

    Symbolic tensors are device-neutral, so a constant made with `device=x.device` from a
    traced CUDA tensor (`arange(classes)` in cross_entropy, backward's seed) is a CPU tensor
    that eager would have made on the GPU: such constants are uploaded, not refused. They are
    the captured inputs the tracer could not name from the function's reach and that do not
    require grad (a parameter always requires grad)."""
    return _UNNAMED.fullmatch(entry.name) is not None and not entry.tensor.requires_grad


def check_devices(graph, args_on_cuda: bool = False) -> None:
    """Raise torch's mixed-device error where an op of `graph` combines a CPU tensor with
    CUDA values, as the eager op would: a captured CPU tensor (a parameter left on the CPU)
    read with CUDA arguments is refused at the call instead of being uploaded silently.

    Devices follow the data flow: captured CUDA tensors are "cuda", and so are the graph's
    arguments of one or more dimensions when `args_on_cuda` (graph_device has refused CPU
    ones by then; the arguments of a backward graph are forward values, on the device too);
    otherwise arguments are neutral. The user's captured CPU tensors are "cpu"; constants
    made while tracing join either side. A node's output is "cuda" when any input is. A node
    reading a "cpu" value of one or more dimensions next to a "cuda" one raises, naming the op,
    the node and the captured tensor the CPU value comes from (0-d CPU values may join, as in
    eager; the index operand of index/index_put may be a CPU tensor, as in `x[index]`)."""
    device: dict = {}  # id(Value) -> ("cuda", device index) or ("cpu", captured Input)
    for entry in graph.inputs:
        if entry.kind == "captured":
            data = entry.tensor._payload
            if data.__class__ is not np.ndarray:
                device[id(entry.value)] = ("cuda", data.device_index)
            elif not _made_while_tracing(entry):
                device[id(entry.value)] = ("cpu", entry)
        elif entry.kind == "arg" and args_on_cuda and entry.value.shape:
            device[id(entry.value)] = ("cuda", 0)
    for node in graph.nodes:
        on_cuda, on_cpu, neutral_shaped = None, None, False
        host_index = host_index_operand(node.op)
        for position, operand in enumerate(node.inputs):
            found = device.get(id(operand)) if isinstance(operand, Value) else None
            if found is None:
                neutral_shaped = neutral_shaped or bool(getattr(operand, "shape", ()))
                continue
            if found[0] == "cuda":
                on_cuda = on_cuda or found
            elif operand.shape and position != host_index:
                if on_cpu is None or on_cpu[1] is None:
                    on_cpu = (found[1], operand)
            elif on_cpu is None:
                on_cpu = (found[1], None)  # 0-d (or an index): joins, stays cpu alone
        if on_cuda is not None and on_cpu is not None and on_cpu[1] is not None:
            source, operand = on_cpu
            cuda_name = f"cuda:{on_cuda[1]}"
            raise RuntimeError(
                f"{MIXED_DEVICES.format(cuda_name)} (in the compiled function, "
                f"{node.op.name} reads {operand!r} from the CPU captured tensor "
                f"'{source.name}' {list(source.value.shape)} with {cuda_name} values: "
                f"{node!r}; move it with .to('cuda') or .cuda())")
        result = on_cuda or (("cpu", on_cpu[0]) if on_cpu is not None else None)
        if on_cuda is None and on_cpu is not None and on_cpu[1] is None and neutral_shaped:
            # A 0-d CPU value joining a device-neutral tensor (backward's seed, made on the
            # loss's device in eager): the result is where that tensor is, not on the CPU.
            result = None
        if result is not None:
            for output in node.outputs:
                device[id(output)] = result


def build_plan(graph, args_on_cuda: bool = False):
    """The schedule's plan for `graph`, its fused kernels compiled and run by this backend.
    Raises the mixed-device error first when an op combines CPU and CUDA tensors
    (`check_devices`; `args_on_cuda`: the call's tensor arguments are known to be on a GPU)."""
    check_devices(graph, args_on_cuda)
    plan = build_schedule(graph, compile_kernel=compile_kernel, host=False)
    steps = [CudaKernelStep(step) if isinstance(step, KernelStep) else step
             for step in plan.steps]
    return CudaPlan(plan.graph, steps)


def _on_device(data):
    # CPU inputs (constants made while tracing, 0-d tensors) are copied to the device.
    return CudaArray.from_host(data) if data.__class__ is np.ndarray else data


class CudaKernelStep(KernelStep):
    """A fused kernel step whose inputs and outputs are device arrays."""

    def __init__(self, step: KernelStep):
        super().__init__(step.kernel, step.compiled, step.sources, step.outputs)

    def run(self, environment: dict) -> None:
        inputs = [environment[id(value)] for value in self.sources]
        for array, value in zip(inputs, self.sources):
            if array.shape != value.shape or array.dtype != value.dtype.numpy:
                raise RuntimeError(f"kernel {self.kernel.name}: input %{value.id} expected "
                                   f"{value.type_text}, got {array.dtype}{list(array.shape)}")
        results = [CudaArray(self.kernel.output_shape(output), output.dtype.numpy)
                   for output in self.kernel.outputs]
        self.compiled(inputs, results, environment.get(STATUS))
        for (value, reshape), result in zip(self.outputs, results):
            environment[id(value)] = result.reshape(reshape) if reshape is not None else result


class CudaPlan(Plan):
    """A Plan whose values live on the device from the first step to the last.

    Captured CPU tensors (constants made while tracing, a 0-d CPU tensor the function reads)
    are uploaded once and the device copy is kept with the plan, keyed by the tensor's data
    and version counter: an in-place update of such a tensor (which bumps its version)
    uploads it again, an untouched constant never does."""

    def __init__(self, graph, steps):
        super().__init__(graph, steps)
        self._uploaded: dict = {}  # id(input value) -> (host data, version, device copy)
        self.uploads = 0  # host-to-device copies of captured inputs, for tests
        # Whether a kernel can report an error: each run then gives the kernels one status
        # word and reads it once, after the last step (docs/notes/errors-in-kernels.md).
        self.checks = any(isinstance(step, CudaKernelStep) and step.compiled.rendered.checks
                          for step in steps)
        # Status words that read 0 after a run, kept for the next runs: a run takes one (a
        # list's pop, so two threads never share one) instead of allocating and zeroing a new
        # one (a launch), and gives it back after reading 0. A word a kernel set is dropped.
        self._statuses: list = []

    def _captured(self, entry):
        tensor = entry.tensor
        data = tensor._payload
        if data.__class__ is not np.ndarray:
            return data
        version = tensor._version
        found = self._uploaded.get(id(entry.value))
        if found is not None and found[0] is data and found[1] == version:
            return found[2]
        device_copy = _on_device(data)
        self._uploaded[id(entry.value)] = (data, version, device_copy)
        self.uploads += 1
        return device_copy

    def run_owning(self, arg_arrays: list) -> tuple:
        """run_arrays's outputs, none of them handed over uncopied (Plan.run_owning)."""
        return self.run_arrays(arg_arrays), frozenset()

    def run_arrays(self, arg_arrays: list) -> tuple:
        environment: dict = {}
        supplied = iter(arg_arrays)
        for entry in self.graph.inputs:
            if entry.kind == "captured":
                environment[id(entry.value)] = self._captured(entry)
            else:
                environment[id(entry.value)] = _on_device(next(supplied))
        if self.checks:
            try:
                status = self._statuses.pop()
            except IndexError:
                status = new_status()
            environment[STATUS] = status
        profiler = state.profiler
        if profiler is None:
            for step in self.steps:
                step.run(environment)
        else:
            self._run_profiled(environment, profiler)
        if self.checks:
            if status_failed(status.flat):
                raise self._reference_error(arg_arrays) from None
            self._statuses.append(status)
        return tuple(environment[id(output.value)] for output in self.graph.outputs)

    def _reference_error(self, arg_arrays: list) -> Exception:
        """Eager's error for a run in which a kernel set the status word: the graph's
        reference run on host copies of the call's inputs (steps.reference_error)."""
        def host(data):
            return data if data.__class__ is np.ndarray else data.to_host()

        captured = {entry.name: host(entry.tensor._payload) for entry in self.graph.inputs
                    if entry.kind == "captured"}
        return reference_error(self.graph, [host(data) for data in arg_arrays], CheckFailed(
            "a CUDA kernel reported an error the reference does not raise"), captured)


# ---- the compiler's "cuda" backend (compiler/backends.py) -----------------------------------

def claims(graph, arguments) -> bool:
    """Whether the call's tensors are on a GPU, so that the graph runs there."""
    return graph_device(graph, arguments) == "cuda"


def build(graph, arguments, generic: bool = False, fresh_grads=frozenset()) -> CudaPlan:
    """The plan running `graph` with CUDA kernels (sizes are always compiled in)."""
    return build_plan(graph, args_on_cuda=any(
        isinstance(x, Tensor) and x._payload is not None and x.is_cuda for x in arguments))
