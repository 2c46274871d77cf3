"""The CUDA backend: compiles a Kernel through numba.cuda and launches it on CudaArrays.

`compile_kernel(kernel)` renders the kernel to Python source (render_cuda.py), executes it in
a namespace holding the scalar helpers the expressions call, compiles it with `cuda.jit` and
returns a CudaCompiledKernel; compiled kernels are cached in memory by
`Kernel.structural_key()` (and the simulator flag). A call launches the kernel asynchronously
on the default stream: nothing is copied back, so a sequence of launches runs without host
round trips; reading a value (`.item()`, `.cpu()`) synchronizes.

Under Numba's CUDA simulator every GPU thread is a Python thread: blocks are 32 threads, grids
are capped at a few blocks (the kernels are grid-stride loops, so any grid is correct), and the
math names resolve to NumPy's scalar functions so that inf and nan are values, as on a GPU.
See docs/notes/cuda.md.
"""

from __future__ import annotations

import itertools
import math
import re
import threading
import time

import numpy as np

from ..kernel import CheckFailed, Kernel
from ..schedule.environment_keys import STATUS
from ..schedule.fusion import KernelStep, Plan
from ..schedule.fusion import build_plan as build_schedule
from ..schedule.steps import reference_error
from . import vector as cuda_vector
from .render import render

_LOCK = threading.Lock()
_CACHE: dict = {}
_COUNTER = itertools.count()

# Scalar helpers the expressions call by name (render_cuda.DIRECT); compiled as device
# functions. They follow the NumPy reference: NaN wins in maximum/minimum, ties give the
# second argument, sign gives 0 for zeros and NaN (as torch), floor keeps inf and NaN. The
# integer division, power and index check helpers report an error by setting `status[0]` (a
# kernel's last argument, see CudaCompiledKernel); their result there is never read.
HELPERS = '''
def sigmoid_(x):
    small = exp(-abs(x))
    ratio = 1 / (small + 1)
    return ratio if x >= 0 else small * ratio

def sign_(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0

def floor_(x):
    if x != x or x - x != 0:
        return x
    return x - x % 1.0

def maximum_(a, b):
    return a if (a > b or a != a) else b

def minimum_(a, b):
    return a if (a < b or a != a) else b

def floor_divide_(a, b, status):
    if b == 0:
        status[0] = 1
        return a - a
    return a // b

def remainder_(a, b, status):
    if b == 0:
        status[0] = 1
        return a - a
    return a % b

def power_(a, b, status):
    if b < 0:
        status[0] = 1
        return a - a
    return a ** b

def check_index_(index, low, size, ignore, has_ignore, status):
    if (index < low or index >= size) and not (has_ignore and index == ignore):
        status[0] = 1
    return index
'''
HELPER_NAMES = ("sigmoid_", "sign_", "floor_", "maximum_", "minimum_", "floor_divide_",
                "remainder_", "power_", "check_index_")
MATH_NAMES = ("exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "sqrt")

_NAMESPACES: dict = {}


def _simulated() -> bool:
    from ...cuda import is_simulator

    return is_simulator()


def kernel_namespace(cuda, simulated: bool) -> dict:
    """What a rendered kernel's source sees: `cuda` (the numba.cuda module), the dtype
    casts, the math names and the helpers compiled as device functions. Taking the module
    lets tools/cuda_ptx_check.py compile the kernels for a GPU on a machine without one."""
    found = _NAMESPACES.get(simulated)
    if found is not None:
        return found
    # The name makes warnings from the simulated kernels fall under the registry's filter
    # for autojit's own modules (inf and nan are values, not warnings).
    namespace = {"__name__": "autojit.codegen.cuda_kernels", "cuda": cuda, "np": np,
                 "f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
                 "b1": bool, "nan": math.nan, "inf": math.inf, "erf": math.erf}
    for name in MATH_NAMES:
        namespace[name] = getattr(np, name) if simulated else getattr(math, name)
    exec(compile(HELPERS, "<autojit cuda helpers>", "exec"), namespace)  # noqa: S102
    for name in HELPER_NAMES:
        namespace[name] = cuda.jit(device=True)(namespace[name])
    namespace.update(cuda_vector.simulated_functions() if simulated
                     else cuda_vector.device_functions())
    _NAMESPACES[simulated] = namespace
    return namespace


class CudaCompiledKernel:
    """`compiled(inputs, outputs)` launches the kernel; arrays are CudaArrays (or flat device
    arrays), inputs read through the kernel's strides, outputs C-contiguous."""

    def __init__(self, kernel: Kernel, rendered, function, compile_seconds: float,
                 simulated: bool):
        self.kernel = kernel
        self.source = rendered.source
        self.llvm_ir = rendered.source  # what Plan.llvm_ir() shows for a kernel step
        self.rendered = rendered
        self.compile_seconds = compile_seconds
        self._function = function
        limit = 4 if simulated else 4096
        if rendered.reduces:
            blocks = min(rendered.total, limit)
        else:
            # A thread of a vector kernel takes `vector_width` elements at a time.
            threads = rendered.groups or rendered.total
            blocks = min(-(-threads // rendered.block), limit)
        self._launch = None if rendered.total == 0 else function[max(blocks, 1), rendered.block]

    def arguments(self, inputs, outputs, wide=(), status=None) -> list:
        """The launch's arguments: the flat arrays, then the float64 arrays `wide` split sums
        add into (RenderedCuda.wide), then for a kernel with a vector path the number of
        vector groups to run: all of them when each array accessed by vectors starts at a
        multiple of the vector's size (a view may start anywhere), else none; then for a
        kernel that checks, the status array (a fresh zeroed one when `status` is None)."""
        from ...cuda.array import CudaArray

        # Not getattr(array, "flat"): a simulated device array would answer with NumPy's.
        arrays = [array.flat if isinstance(array, CudaArray) else array
                  for array in (*inputs, *outputs, *wide)]
        rendered = self.rendered
        if rendered.vector_width:
            aligned = all(_address(arrays[index]) % (rendered.vector_width
                                                     * arrays[index].dtype.itemsize) == 0
                          for index in rendered.vector_arrays)
            arrays.append(rendered.groups if aligned else 0)
        if rendered.checks:
            arrays.append(new_status().flat if status is None else status.flat)
        return arrays

    def __call__(self, inputs, outputs, status=None) -> None:
        """Launch. A kernel that checks sets `status` (CudaPlan reads it after its run);
        without one, it gets its own, read after the launch (a synchronization): an error
        raises kernel.CheckFailed, which the caller turns into eager's error."""
        if self._launch is None:
            return
        from ...cuda.array import CudaArray

        rendered = self.rendered
        first_output = len(inputs)
        wide = [CudaArray((math.prod(outputs[index].shape),), np.float64)
                for index in rendered.wide]
        arrays = self.arguments(inputs, outputs, wide, status)
        for index in (*rendered.zeroed, *range(len(outputs), len(outputs) + len(wide))):
            _zero(arrays[first_output + index])
        self._launch(*arrays)
        for position, index in enumerate(rendered.wide):
            _narrow(arrays[first_output + len(outputs) + position], arrays[first_output + index])
        if rendered.checks and status is None and _failed(arrays[-1]):
            raise CheckFailed(f"kernel {self.kernel.name} reported an error")


def new_status():
    """A zeroed int32 device array of one element for kernels that check to set."""
    from ...cuda.array import CudaArray

    status = CudaArray((1,), np.int32)
    _zero(status.flat)
    return status


def _failed(status_flat) -> bool:
    return bool(status_flat.copy_to_host()[0])

    def __repr__(self):
        return f"<CudaCompiledKernel {self.kernel.name} ({self.compile_seconds * 1e3:.1f} ms)>"


def _address(flat) -> int:
    """Where a flat device array's data starts: its device pointer on a GPU, the address of
    the NumPy array the simulator keeps it in otherwise."""
    pointer = getattr(flat, "device_ctypes_pointer", None)
    if pointer is None:
        return flat.ctypes.data
    return pointer.value or 0


ZERO_SOURCE = '''
def zero_kernel(out):
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = 0
'''


def _zero(flat) -> None:
    """Fill a flat device array with 0 (on the device, asynchronously)."""
    from ...cuda.matmul import block_size, grid_size, hand_written

    function, _ = hand_written("zero_kernel", ZERO_SOURCE, flat.dtype)
    block = block_size()
    function[grid_size(-(-flat.shape[0] // block)), block](flat)


NARROW_SOURCE = '''
def narrow_kernel(wide, out):
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = DTYPE(wide[i])
'''


def _narrow(wide, out) -> None:
    """Round the float64 sums a split reduction added into `wide` into `out`'s dtype."""
    from ...cuda.matmul import block_size, grid_size, hand_written

    function, _ = hand_written("narrow_kernel", NARROW_SOURCE, out.dtype)
    block = block_size()
    function[grid_size(-(-out.shape[0] // block)), block](wide, out)


def compile_kernel(kernel: Kernel) -> CudaCompiledKernel:
    """The kernel compiled for the GPU (or the simulator), cached by its structure."""
    simulated = _simulated()
    key = (simulated, kernel.structural_key())
    found = _CACHE.get(key)
    if found is not None:
        return found
    with _LOCK:
        found = _CACHE.get(key)
        if found is None:
            found = _compile(kernel, simulated)
            _CACHE[key] = found
    return found


def render_for(kernel: Kernel, name: str, simulated: bool):
    """The kernel rendered for the simulator's small blocks and grids, or for a GPU."""
    return render(kernel, name, block=32 if simulated else 256, warp_shuffle=not simulated,
                  max_blocks=4 if simulated else 4096)


def kernel_function(source: str, name: str, cuda, simulated: bool):
    """The Python function `name` a rendered kernel's source defines (not yet compiled)."""
    namespace = dict(kernel_namespace(cuda, simulated))
    exec(compile(source, f"<autojit cuda kernel {name}>", "exec"), namespace)  # noqa: S102
    return namespace[name]


def _compile(kernel: Kernel, simulated: bool) -> CudaCompiledKernel:
    from ...cuda import driver

    start = time.perf_counter()
    rendered = render_for(kernel, f"autojit_{kernel.name}_{next(_COUNTER)}", simulated)
    function = driver().jit(kernel_function(rendered.source, rendered.name, driver(),
                                            simulated))
    return CudaCompiledKernel(kernel, rendered, function, time.perf_counter() - start,
                              simulated)


def clear_cache() -> None:
    _CACHE.clear()


# ---- plans: a traced graph run with CUDA kernels (compile.py picks this backend) -------------

def graph_device(graph, args) -> str:
    """"cuda" when the call's tensors (arguments and captured tensors) are on a GPU, else
    "cpu"; a call that mixes the two where an op combines them raises torch's error, as the
    eager op would (`check_devices`)."""
    from ...cuda.eager import MIXED_DEVICES
    from ...tensor.tensor import Tensor

    arguments = [x for x in args if isinstance(x, Tensor) and x._data is not None]
    captured = [entry.tensor for entry in graph.inputs if entry.kind == "captured"]
    on_cuda = [x for x in arguments + captured if x._data is not None and x.is_cuda]
    if not on_cuda:
        return "cpu"
    if any(not x.is_cuda and x.ndim for x in arguments):
        raise RuntimeError(MIXED_DEVICES.format(on_cuda[0].device))
    check_devices(graph, args_on_cuda=True)
    return "cuda"


# The names the tracer gives captured tensors it found nowhere in the function's reach before
# the call (ir/trace.py, compile.py): constants made while tracing.
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
    from ...cuda.eager import MIXED_DEVICES
    from ...ir.graph import Value
    from ...ops.registry import host_index_operand

    device: dict = {}  # id(Value) -> ("cuda", device index) or ("cpu", captured Input)
    for entry in graph.inputs:
        if entry.kind == "captured":
            data = entry.tensor._data
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
    from ...cuda.array import CudaArray

    # CPU inputs (constants made while tracing, 0-d tensors) are copied to the device.
    return CudaArray.from_host(data) if data.__class__ is np.ndarray else data


class CudaKernelStep(KernelStep):
    """A fused kernel step whose inputs and outputs are device arrays."""

    def __init__(self, step: KernelStep):
        super().__init__(step.kernel, step.compiled, step.sources, step.outputs)

    def run(self, environment: dict) -> None:
        from ...cuda.array import CudaArray

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

    def _captured(self, entry):
        tensor = entry.tensor
        data = tensor._data
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
        from ...tensor.state import state

        environment: dict = {}
        supplied = iter(arg_arrays)
        for entry in self.graph.inputs:
            if entry.kind == "captured":
                environment[id(entry.value)] = self._captured(entry)
            else:
                environment[id(entry.value)] = _on_device(next(supplied))
        if self.checks:
            environment[STATUS] = status = new_status()
        profiler = state.profiler
        if profiler is None:
            for step in self.steps:
                step.run(environment)
        else:
            self._run_profiled(environment, profiler)
        if self.checks and _failed(status.flat):
            raise self._reference_error(arg_arrays) from None
        return tuple(environment[id(output.value)] for output in self.graph.outputs)

    def _reference_error(self, arg_arrays: list) -> Exception:
        """Eager's error for a run in which a kernel set the status word: the graph's
        reference run on host copies of the call's inputs (steps.reference_error)."""
        def host(data):
            return data if data.__class__ is np.ndarray else data.to_host()

        captured = {entry.name: host(entry.tensor._data) for entry in self.graph.inputs
                    if entry.kind == "captured"}
        return reference_error(self.graph, [host(data) for data in arg_arrays], CheckFailed(
            "a CUDA kernel reported an error the reference does not raise"), captured)
