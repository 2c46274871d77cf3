"""CUDA kernels compiled and launched on device memory: the runtime side of codegen/cuda.

`compile_kernel(kernel)` renders a Kernel (codegen/cuda/render.py), compiles it with
`cuda.jit` (codegen/cuda/jit.py) and returns a CudaCompiledKernel; compiled kernels are cached
in memory by `Kernel.structural_key()` (and the simulator flag). A call launches the kernel
asynchronously on the default stream: nothing is copied back, so a sequence of launches runs
without host round trips; reading a value (`.item()`, `.cpu()`) synchronizes. Eager ops
(eager.py), views (views.py) and compiled plans (plan.py) launch kernels through here;
`run_kernel` compiles and launches one into fresh output arrays.
"""

from __future__ import annotations

import itertools
import math
import threading
import time

import numpy as np

from ..codegen.cuda.jit import kernel_function, render_for
from ..codegen.kernel import CheckFailed, Kernel
from ..ir.scalars import real_math
from ..tensor import dtypes
from .array import CudaArray
from .availability import driver, is_simulator
from .counters import COUNTS
from .handwritten import block_size, compiling_with_real_math, grid_size, hand_written

_LOCK = threading.Lock()
_CACHE: dict = {}
_COUNTER = itertools.count()


class CudaCompiledKernel:
    """`compiled(inputs, outputs)` launches the kernel; arrays are CudaArrays (or flat device
    arrays), inputs read through the kernel's strides, outputs C-contiguous."""

    def __init__(self, kernel: Kernel, rendered, function, compile_seconds: float,
                 simulated: bool, python_function=None):
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
        self._grid = (max(blocks, 1), rendered.block)
        self._launch = None if rendered.total == 0 else function[self._grid]
        # The kernel's Python function, compiled at the first launch for that launch's argument
        # types (`_bind`); then the launch with those types bound, which skips numba's
        # dispatch on the types of every argument at each launch.
        self._python_function = python_function
        self._bound = None

    def __repr__(self):
        return f"<CudaCompiledKernel {self.kernel.name} ({self.compile_seconds * 1e3:.1f} ms)>"

    def arguments(self, inputs, outputs, wide=(), status=None) -> list:
        """The launch's arguments: the flat arrays, then the float64 arrays `wide` split sums
        add into (RenderedCuda.wide), then for a kernel with a vector path the number of
        vector groups to run: all of them when each array accessed by vectors starts at a
        multiple of the vector's size (a view may start anywhere), else none; then for a
        kernel that checks, the status array (a fresh zeroed one when `status` is None)."""
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
        rendered = self.rendered
        first_output = len(inputs)
        wide = [CudaArray((math.prod(outputs[index].shape),), np.float64)
                for index in rendered.wide]
        arrays = self.arguments(inputs, outputs, wide, status)
        for index in (*rendered.zeroed, *range(len(outputs), len(outputs) + len(wide))):
            _zero(arrays[first_output + index])
        COUNTS["launches"] += 1
        (self._bound or self._bind(arrays))(*arrays)
        for position, index in enumerate(rendered.wide):
            _narrow(arrays[first_output + len(outputs) + position], arrays[first_output + index])
        if rendered.checks and status is None and status_failed(arrays[-1]):
            raise CheckFailed(f"kernel {self.kernel.name} reported an error")

    def _bind(self, arrays: list):
        """The launch compiled for the types of `arrays` alone (`cuda.jit(signature)`, which
        numba marks specialized: its launches take the one compiled kernel without typing
        their arguments). A generated kernel's argument types follow from its structure, the
        key it is cached by (flat C-contiguous arrays of the kernel's dtypes, int64 counts),
        so every later launch has these types. Where binding fails, numba's own dispatch
        launches it, as before."""
        launch = self._launch
        if self._python_function is not None:
            try:
                with real_math():  # a launch inside a trace compiles here (handwritten.py)
                    function = driver().jit(launch_signature(arrays))(self._python_function)
                launch = function[self._grid]
            except Exception:  # noqa: BLE001 - numba's dispatch still launches the kernel
                launch = self._launch
        self._bound = launch
        return launch


def launch_signature(arguments) -> tuple:
    """The numba types of a launch's arguments, as numba's dispatch would type them: a device
    array by its `_numba_type_` (a simulator's array, which has none, as a C-contiguous array of
    its dtype), other values by `numba.typeof`. Raises TypeError for an array not C-contiguous
    (every flat array autojit makes is): such a launch is left to numba's dispatch."""
    import numba
    from numba.core import types
    from numba.np import numpy_support

    found = []
    for argument in arguments:
        if hasattr(argument, "shape") and not isinstance(argument, np.generic):
            kind = getattr(argument, "_numba_type_", None)
            if kind is None:
                kind = types.Array(numpy_support.from_dtype(argument.dtype), len(argument.shape),
                                   "C")
            if kind.layout != "C":
                raise TypeError(f"a launch argument of layout {kind.layout}")
            found.append(kind)
        else:
            found.append(numba.typeof(argument))
    return tuple(found)


def new_status():
    """A zeroed int32 device array of one element for kernels that check to set."""
    status = CudaArray((1,), np.int32)
    _zero(status.flat)
    return status


def status_failed(status_flat) -> bool:
    COUNTS["readbacks"] += 1
    return bool(status_flat.copy_to_host()[0])


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
    function, _ = hand_written("zero_kernel", ZERO_SOURCE, flat.dtype)
    block = block_size()
    COUNTS["launches"] += 1
    function[grid_size(-(-flat.shape[0] // block)), block](flat)


NARROW_SOURCE = '''
def narrow_kernel(wide, out):
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = DTYPE(wide[i])
'''


def _narrow(wide, out) -> None:
    """Round the float64 sums a split reduction added into `wide` into `out`'s dtype."""
    function, _ = hand_written("narrow_kernel", NARROW_SOURCE, out.dtype)
    block = block_size()
    COUNTS["launches"] += 1
    function[grid_size(-(-out.shape[0] // block)), block](wide, out)


def compile_kernel(kernel: Kernel) -> CudaCompiledKernel:
    """The kernel compiled for the GPU (or the simulator), cached by its structure. A kernel
    with complex values (which only CPU kernels lower, as pairs of reals) raises
    NotImplementedError: the plan runs its nodes one by one, as eager does, which refuses
    complex tensors on the device."""
    if any(dtype.category == dtypes.COMPLEX for dtype in (
            *(entry.dtype for entry in kernel.inputs), *(out.dtype for out in kernel.outputs),
            *(step.out_dtype for step in kernel.steps),
            *(step.compute_dtype for step in kernel.steps if step.compute_dtype))):
        raise NotImplementedError("CUDA kernels are generated for real values")
    simulated = is_simulator()
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


def run_kernel(kernel: Kernel, inputs: list, output_shapes: list | None = None) -> list:
    """Compile (cached) and launch `kernel`; returns its freshly allocated outputs."""
    outputs = [CudaArray(kernel.output_shape(output), output.dtype.numpy)
               for output in kernel.outputs]
    compile_kernel(kernel)(inputs, outputs)
    if output_shapes is not None:
        outputs = [out.reshape(shape) for out, shape in zip(outputs, output_shapes)]
    return outputs


def _compile(kernel: Kernel, simulated: bool) -> CudaCompiledKernel:
    start = time.perf_counter()
    rendered = render_for(kernel, f"autojit_{kernel.name}_{next(_COUNTER)}", simulated)
    python_function = kernel_function(rendered.source, rendered.name, driver(), simulated)
    function = compiling_with_real_math(driver().jit(python_function))
    return CudaCompiledKernel(kernel, rendered, function, time.perf_counter() - start,
                              simulated, python_function)


def clear_cache() -> None:
    _CACHE.clear()
