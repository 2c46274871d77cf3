"""The CPU backend: compiles a Kernel to native code through llvmlite and calls it.

`compile_kernel(kernel)` renders the kernel (render.py), optimizes the module with LLVM's
O3 pipeline for the host CPU (its features included, so the loop and SLP vectorizers use AVX2
or AVX-512 where present), generates its object file and loads it (native_loader.py, on Linux
x86-64; elsewhere, or for a file it refuses, through one process-wide MCJIT engine), and
returns a CompiledKernel: a callable taking the input and output arrays. Compiled kernels are
cached in memory by `Kernel.structural_key()`, and on disk across processes (disk_cache.py:
the object file, loaded back without optimizing or generating code again). A warm start that
finds every kernel on disk never imports llvmlite's bindings: what LLVM detects about the host
(the cache key's target) is remembered on disk per processor (llvm/host.py's `cache_target`,
re-exported here with the host's other names). Inside `parallel_compiles` (the plan builder's
block) LLVM's part runs on the compile threads (compile_threads.py) while the schedule goes on.
No C compiler is involved. See docs/notes/cpu-codegen.md and docs/notes/compile-latency.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import hashlib
import itertools
import threading
import time

import numpy as np
from numpy.lib.array_utils import byte_bounds

from ... import config
from ..kernel import ERRORS, Kernel, code_name, generic_layout, loop_plan
from . import compile_threads, disk_cache, native_loader
from .llvm.host import (  # noqa: F401 - the host's names, re-exported for the backend's modules
    Backend,
    backend,
    cache_target,
    has_avx512,
    layout,
    object_layout,
)

# Reentrant: compile_kernel holds it while a serial compile goes through the engine, which
# takes it again as ENGINE_LOCK.
_LOCK = threading.RLock()
_CACHE: dict = {}
_COUNTER = itertools.count()
# Entry symbols defined in the engine: a loaded object must not redefine one.
ENGINE_SYMBOLS: set = set()
# Held around what goes through llvmlite's engine (helper_modules.py takes it too).
ENGINE_LOCK = _LOCK
# How kernels were obtained in this process: LLVM compiles, loads from the disk cache, and the
# CPU time the asking threads spent on them in all (compiling, loading, storing; read by
# bench/compile_latency.py). The compile threads' time is compile_threads.STATISTICS's.
STATISTICS = {"compiled": 0, "loaded": 0, "cpu seconds": 0.0}
_FUNCTION_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)
# The object entry reads Python objects, so it runs holding the GIL (PYFUNCTYPE).
_OBJECT_FUNCTION_TYPE = ctypes.PYFUNCTYPE(ctypes.c_int32, ctypes.py_object, ctypes.py_object)


class CompiledKernel:
    """A kernel in native code: `compiled(inputs, outputs)` runs it.

    Inputs are arrays whose element (i0, i1, ...) of the kernel's space lies at their data
    pointer plus sum(i_k * strides_k) elements (the KernelInput strides); outputs are
    preallocated C-contiguous arrays of `kernel.output_shape(output)` and the output's dtype.
    The call does no checking, for speed; `validate(inputs, outputs)` checks the arrays.
    """

    def __init__(self, kernel, symbol, function, llvm_ir, optimized_ir, compile_seconds,
                 module, object_function=None, object_code=None, source="compiled"):
        self.kernel = kernel
        self.symbol = symbol
        self.llvm_ir = llvm_ir
        self._optimized_ir = optimized_ir  # None unless made: made again when asked for
        self.compile_seconds = compile_seconds  # compiling, or loading from the disk cache
        self.source = source  # "compiled" (by LLVM in this process) or "disk"
        # What holds the code: the module (MCJIT's engine owns the code compiled from it) or
        # the native_loader.LoadedObject.
        self._module = module
        self._object_code = object_code
        self._function = function
        inputs = len(kernel.inputs) + (1 if kernel.generic else 0)  # a generic kernel's sizes
        self._arity = inputs + len(kernel.outputs)
        self._pointer_array = ctypes.c_void_p * self._arity
        self._object_function = object_function
        self._counts = (inputs, len(kernel.outputs))
        # While a compile thread makes the code (parallel_compiles): its _Pending, and the
        # fields above that hold code are None until `finish` fills them.
        self._pending = None

    def finish(self) -> None:
        """Wait for the compile thread making this kernel's code, and load it (raising the
        compile's error, if any); nothing to do for a kernel that has its code."""
        pending = self._pending
        if pending is None:
            return
        with pending.lock:
            if self._pending is not None:
                pending.complete(self)
                self._pending = None

    def __call__(self, inputs, outputs):
        if self._object_function is not None and inputs.__class__ is list and \
                outputs.__class__ is list and (len(inputs), len(outputs)) == self._counts:
            status = self._object_function(inputs, outputs)
        else:
            if self._pending is not None:
                self.finish()
            pointers = self._pointer_array(*[array.ctypes.data for array in (*inputs, *outputs)])
            status = self._function(pointers)
        if status:
            error, message = ERRORS[status & -status]
            raise error(message)

    def call_pointers(self, pointers: list) -> None:
        """Run on raw data pointers (ints: inputs then outputs), unchecked; the GIL is released
        during the call. codegen/cpu/parallel.py runs blocks of a split kernel this way."""
        if self._pending is not None:
            self.finish()
        self.check_status(self._function(self._pointer_array(*pointers)))

    @property
    def address(self) -> int:
        """The native entry `i32 (ptr pointers)`, for callers in native code (workers.py)."""
        if self._pending is not None:
            self.finish()
        return ctypes.cast(self._function, ctypes.c_void_p).value

    def entry_pointers(self, pointers: list) -> list:
        """What the native entry reads for these data pointers (inputs then outputs)."""
        return pointers

    @staticmethod
    def check_status(status: int) -> None:
        """Raise the error a nonzero result of the native entry stands for."""
        if status:
            error, message = ERRORS[status & -status]
            raise error(message)

    @property
    def optimized_ir(self) -> str:
        """The module after the O3 pipeline (for a kernel loaded from disk: optimized again
        from its IR, for inspection only; the code that runs is the cached object)."""
        if self._optimized_ir is None:
            state = backend()
            module = state.parse(self.llvm_ir)
            state.optimize(module)
            self._optimized_ir = str(module)
        return self._optimized_ir

    def object_code(self) -> bytes:
        """The kernel's machine code as a relocatable object file (what the disk cache keeps)."""
        if self._pending is not None:
            self.finish()
        if self._object_code is None:
            self._object_code = backend().target_machine.emit_object(self._module)
        return self._object_code

    def validate(self, inputs, outputs) -> None:
        """Raise a clear error when the arrays do not fit the kernel (the call trusts them)."""
        kernel = self.kernel
        if len(inputs) != len(kernel.inputs) or len(outputs) != len(kernel.outputs):
            raise ValueError(f"kernel {kernel.name} takes {len(kernel.inputs)} inputs and "
                             f"{len(kernel.outputs)} outputs, got {len(inputs)} and "
                             f"{len(outputs)}")
        for position, (array, entry) in enumerate(zip(inputs, kernel.inputs)):
            if array.dtype != entry.dtype.numpy:
                raise TypeError(f"kernel {kernel.name}: input {position} has dtype {array.dtype},"
                                f" expected {entry.dtype.name}")
            _check_extent(kernel, f"input {position}", array, entry.strides, entry.offset)
        for position, (array, entry) in enumerate(zip(outputs, kernel.outputs)):
            shape = kernel.output_shape(entry)
            if entry.strides is not None:  # part of a larger array, as `array` is a view of it
                if array.dtype != entry.dtype.numpy or not array.flags.writeable or \
                        array.shape != shape or any(
                            extent > 1 and stride != own * array.itemsize for extent, stride, own
                            in zip(shape, array.strides, entry.strides)):
                    raise ValueError(f"kernel {kernel.name}: output {position} must be a "
                                     f"writeable {entry.dtype.name} view of strides "
                                     f"{entry.strides}, got {array.dtype} {array.strides}")
                _check_extent(kernel, f"output {position}", array, entry.strides)
                continue
            if array.dtype != entry.dtype.numpy or array.shape != shape or \
                    not array.flags.c_contiguous or not array.flags.writeable:
                raise ValueError(f"kernel {kernel.name}: output {position} must be a writeable "
                                 f"C-contiguous {entry.dtype.name} array of shape {shape}, got "
                                 f"{array.dtype} {array.shape}")

    def __repr__(self):
        return f"<CompiledKernel {self.kernel.name} ({self.compile_seconds * 1e3:.1f} ms)>"


def _check_extent(kernel, what, array, strides, offset=0):
    """Every element the strides reach (from `offset`) must lie inside the array's buffer."""
    if any(extent == 0 for extent in kernel.shape):
        return
    lowest = offset + sum(min(0, s * (e - 1)) for s, e in zip(strides, kernel.shape))
    highest = offset + sum(max(0, s * (e - 1)) for s, e in zip(strides, kernel.shape))
    base = array.__array_interface__["data"][0]
    start, end = byte_bounds(array)
    size = array.dtype.itemsize
    if base + lowest * size < start or base + (highest + 1) * size > end:
        raise ValueError(f"kernel {kernel.name}: {what} strides {strides} over shape "
                         f"{kernel.shape} reach outside its array of shape {array.shape}")


def compile_kernel(kernel: Kernel):
    """The kernel compiled for this CPU: from the in-memory cache when an equal one was built in
    this process, else from the disk cache, else compiled by LLVM (and stored on disk). A
    generic kernel's code is shared by every kernel of its loop structure; it comes bound to
    this kernel's sizes (SizedKernel). Kernels of the same structure share their code, so the
    LLVM function is named after what the kernel fuses without its number in the plan
    (`autojit_tanh_mul_sum_<digest>` for the plan's `k3_tanh_mul_sum`)."""
    if not kernel.generic and shares_small_code(kernel):
        kernel = dataclasses.replace(kernel, generic=True, small=True)
    elif not kernel.generic and shares_large_code(kernel):
        kernel = dataclasses.replace(kernel, generic=True)
    key = kernel.structural_key()
    found = _CACHE.get(key)
    if found is None:
        with _LOCK:
            found = _CACHE.get(key)
            if found is None:
                started = time.thread_time()
                found = _load_or_compile(kernel, key)
                STATISTICS["cpu seconds"] += time.thread_time() - started
                _CACHE[key] = found
    if kernel.generic:
        return SizedKernel(found, kernel)
    return found


class SizedKernel:
    """A generic kernel's code with one kernel's sizes: called like a CompiledKernel."""

    def __init__(self, compiled: CompiledKernel, kernel: Kernel, sizes: list | None = None):
        """`sizes`: generic_layout(kernel)'s values, where the caller has them."""
        self.compiled, self.kernel = compiled, kernel
        self.sizes = np.array(generic_layout(kernel)[1] if sizes is None else sizes,
                              dtype=np.int64)
        self.symbol, self.llvm_ir = compiled.symbol, compiled.llvm_ir

    @property
    def compile_seconds(self) -> float:
        return self.compiled.compile_seconds

    @property
    def source(self) -> str:
        return self.compiled.source

    def finish(self) -> None:
        self.compiled.finish()

    def __call__(self, inputs, outputs):
        self.compiled([*inputs, self.sizes], outputs)

    def call_pointers(self, pointers: list) -> None:
        self.compiled.call_pointers(self.entry_pointers(pointers))

    @property
    def address(self) -> int:
        return self.compiled.address

    def entry_pointers(self, pointers: list) -> list:
        count = len(self.kernel.inputs)
        return [*pointers[:count], self.sizes.ctypes.data, *pointers[count:]]

    check_status = staticmethod(CompiledKernel.check_status)

    @property
    def optimized_ir(self) -> str:
        return self.compiled.optimized_ir

    def object_code(self) -> bytes:
        return self.compiled.object_code()

    def validate(self, inputs, outputs) -> None:
        CompiledKernel.validate(self, inputs, outputs)

    def __repr__(self):
        return f"<SizedKernel {self.kernel.name}{list(self.kernel.shape)} of {self.compiled!r}>"


def _load_or_compile(kernel: Kernel, key: tuple) -> CompiledKernel:
    entry_key = None
    if disk_cache.directory() is not None:
        entry_key = disk_cache.entry_key((key, quick_codegen(kernel)), cache_target())
        entry = disk_cache.load(entry_key)
        if entry is not None:
            loaded = _load(kernel, entry)
            if loaded is not None:
                return loaded
    batch = getattr(_BATCH, "kernels", None)
    if batch is not None and native_loader.available() and compile_threads.thread_count():
        pending = _compile_on_thread(kernel, key, entry_key)
        if pending is not None:
            batch.append(pending)
            return pending
    compiled = _compile(kernel, _symbol(kernel, key))
    _store(entry_key, compiled)
    return compiled


def _store(entry_key: str | None, compiled: CompiledKernel, object_code=None) -> None:
    if entry_key is not None:
        disk_cache.store(entry_key, disk_cache.Entry(
            compiled.symbol, object_code or compiled.object_code(), compiled.llvm_ir))


# The kernels being compiled on the compile threads for the innermost parallel_compiles block of
# this thread (its `kernels` list), if any.
_BATCH = threading.local()


@contextlib.contextmanager
def parallel_compiles():
    """Inside the block, the kernels compile_kernel has to compile with LLVM are compiled on the
    compile threads (compile_threads.py) while the caller goes on building its plan: each comes
    back at once, without its code, and is ready when first called, and every one of them when
    the block ends, which raises the first compile error; so is every compile handed to
    `wait_at_block_end` in the block. codegen/backend.py builds plans in such a block; a block
    inside another one ends with the outer one's kernels still pending."""
    outer = getattr(_BATCH, "kernels", None), getattr(_BATCH, "futures", None)
    kernels, futures = _BATCH.kernels, _BATCH.futures = [], []
    try:
        yield
    finally:
        _BATCH.kernels, _BATCH.futures = outer
    for compiled in kernels:
        compiled.finish()
    for future in futures:
        future.result()


def wait_at_block_end(future) -> None:
    """Have the innermost parallel_compiles block of this thread end only once `future` (a
    compile that is not a kernel: gemm_kernel.prepare's) is done, so that no compile outlives
    the compile that started it; outside a block, nothing."""
    futures = getattr(_BATCH, "futures", None)
    if futures is not None:
        futures.append(future)


class _Pending:
    """A kernel's code being made on a compile thread: `complete` loads it into the kernel."""

    def __init__(self, future, key: tuple, entry_key: str | None):
        self.future, self.key, self.entry_key = future, key, entry_key
        self.lock = threading.Lock()
        self.started = time.perf_counter()

    def complete(self, compiled: CompiledKernel) -> None:
        try:
            object_code = self.future.result()[0]
        except BaseException:
            with _LOCK:
                if _CACHE.get(self.key) is compiled:
                    del _CACHE[self.key]  # compiled again on the next request, as serially
            raise
        native = _native_entry_points(object_code, compiled.symbol)
        if native is None:  # the loader refused it: through the engine, on this thread
            compiled._module, compiled._function, compiled._object_function, \
                compiled._object_code = _in_engine(compiled.llvm_ir, compiled.symbol, backend())
        else:
            compiled._module, compiled._function, compiled._object_function = native
            compiled._object_code = object_code
        compiled.compile_seconds = time.perf_counter() - self.started
        compiled.source = "compiled"
        STATISTICS["compiled"] += 1
        config.log("kernels", f"compiled {compiled.symbol} on a compile thread, ready "
                              f"{compiled.compile_seconds * 1e3:.1f} ms after it was asked for")
        if compiled._object_code is not None:
            _store(self.entry_key, compiled, compiled._object_code)


def _compile_on_thread(kernel: Kernel, key: tuple, entry_key: str | None):
    """The kernel, its code being made on a compile thread (see parallel_compiles), or None
    where there are no compile threads."""
    from .render import render

    state = backend()
    rendered = render(kernel, _symbol(kernel, key), state.object_layout)
    future = compile_threads.submit(compile_threads.object_code, state, rendered.text,
                                    _optimization(kernel), quick_codegen(kernel))
    if future is None:
        return None
    compiled = CompiledKernel(kernel, rendered.name, None, rendered.text, None, 0.0, None,
                              source="compiling")
    compiled._pending = _Pending(future, key, entry_key)
    return compiled


def unique_number() -> int:
    """A number no other caller in this process gets (suffixes of names defined again)."""
    return next(_COUNTER)


def _symbol(kernel: Kernel, key: tuple) -> str:
    """The kernel's exported name: the same in every process for the same kernel, so a cached
    object's symbol never collides with a freshly compiled one's."""
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
    symbol = f"autojit_{code_name(kernel.name)}_{digest}"
    if symbol in ENGINE_SYMBOLS:  # compiled again after clear_cache()
        symbol = f"{symbol}_{next(_COUNTER)}"
    return symbol


def _entry_points(symbol: str, state: Backend):
    """(pointer-array entry, list entry or None) of a module or object added to the engine."""
    address = state.engine.get_function_address(symbol)
    if not address:
        return None
    object_function = None
    if state.object_layout is not None:
        object_address = state.engine.get_function_address(f"{symbol}.objects")
        if not object_address:
            return None
        object_function = _OBJECT_FUNCTION_TYPE(object_address)
    ENGINE_SYMBOLS.add(symbol)
    return _FUNCTION_TYPE(address), object_function


def load_native(object_code: bytes, names: list):
    """(the native_loader.LoadedObject, the addresses of `names`) of an object file, or None
    where the loader refuses it (the reason is logged): the caller goes to the engine."""
    if not native_loader.available():
        return None
    try:
        loaded = native_loader.load(object_code)
        return loaded, [loaded.address(name) for name in names]
    except (native_loader.Unsupported, KeyError) as error:
        config.log("kernels", f"object file not loaded natively ({error}): through MCJIT")
        return None


def _native_entry_points(object_code: bytes, symbol: str):
    """(LoadedObject, pointer-array entry, list entry or None), or None (see load_native)."""
    names = [symbol] + ([f"{symbol}.objects"] if layout() is not None else [])
    found = load_native(object_code, names)
    if found is None:
        return None
    loaded, addresses = found
    object_function = _OBJECT_FUNCTION_TYPE(addresses[1]) if len(addresses) > 1 else None
    return loaded, _FUNCTION_TYPE(addresses[0]), object_function


# Kernels with at most this much work (elements of the space times steps, and at most
# QUICK_ELEMENTS elements) get their machine code from LLVM's quickest code generator, after
# the same O3 pipeline: a few nanoseconds more per call, about 5 ms less to compile each
# (docs/notes/compile-latency.md, "Quick code generation for small kernels"). Larger
# reductions are left out: a [256, 10] column sum ran 27 times slower.
QUICK_WORK = 2048
QUICK_ELEMENTS = 1024


def quick_codegen(kernel: Kernel) -> bool:
    """Whether the kernel's code comes from the quick code generator (QUICK_WORK): a small
    kernel of fixed sizes, or the generic kernel made for one (shares_small_code)."""
    if kernel.generic:
        return kernel.small
    elements = 1
    for extent in kernel.shape:
        elements *= extent
    return elements <= QUICK_ELEMENTS and elements * max(1, len(kernel.steps)) <= QUICK_WORK


# Small kernels of fixed sizes compile as generic kernels (their sizes read at run time), so
# that one compiled code serves every size of a loop structure: programs that run the same small
# operations on tensors of several shapes (a test suite's samples, the biases of a network's
# layers) compile each structure once instead of once per shape. False: each shape its own code.
SHARE_SMALL_CODE = True


def shares_small_code(kernel: Kernel) -> bool:
    """Whether `kernel` (of fixed sizes) is compiled as a small generic kernel: it is small
    (quick_codegen) and in the form a generic kernel takes (inputs read from their first
    element, outputs stored whole)."""
    return SHARE_SMALL_CODE and quick_codegen(kernel) and _generic_form(kernel)


def _generic_form(kernel: Kernel) -> bool:
    """Whether a kernel of fixed sizes has the form of a generic kernel: no constants, inputs
    read from their first element, outputs stored whole."""
    return not kernel.constants and all(
        entry.offset == 0 and entry.same_as is None for entry in kernel.inputs) and all(
        output.strides is None for output in kernel.outputs)


# Larger kernels of fixed sizes share their code too, as the generic kernels of dynamic shapes
# (through O3), where their innermost loop runs at least SHARED_INNER_EXTENT times: a network's
# layers repeat a few loop structures at many sizes (EfficientNet-B0's training step: 321
# distinct kernels at fixed sizes, 149 with this sharing), and a vectorized inner loop of that
# length runs as fast with its trip count read at run time. Shorter inner loops (a 2x2 image's
# four positions under each channel) stay at fixed sizes: there LLVM unrolls the inner loop and
# vectorizes across the one outside it, whose strides it knows, and the generic code took 2-3
# times as long (docs/notes/compile-latency.md). None: each size its own code.
SHARED_INNER_EXTENT: int | None = 64


def shares_large_code(kernel: Kernel) -> bool:
    """Whether `kernel` (of fixed sizes, not small) is compiled as a generic kernel: it is in the
    generic form (as shares_small_code) and its innermost loop runs at least
    SHARED_INNER_EXTENT times."""
    if SHARED_INNER_EXTENT is None or not _generic_form(kernel):
        return False
    plan = loop_plan(kernel)
    return bool(plan) and plan[-1][0] >= SHARED_INNER_EXTENT


def _optimization(kernel: Kernel):
    """The pipeline a kernel's IR goes through (compile_threads.object_code's `optimize`): O3,
    or for a small generic kernel the light pipeline. Its loops run at most QUICK_ELEMENTS
    elements, where O3's vectorized loops with their runtime trip counts (a vector body, a
    remainder, the checks between) cost more compile time than the kernel made at fixed sizes
    did, for no time a call can measure (docs/notes/compile-latency.md)."""
    return compile_threads.LIGHT if kernel.small else True


def _compile(kernel: Kernel, symbol: str) -> CompiledKernel:
    from .render import render

    state = backend()
    start = time.perf_counter()
    rendered = render(kernel, symbol, state.object_layout)
    native = None
    if native_loader.available():
        object_code = compile_threads.object_code(state, rendered.text, _optimization(kernel),
                                                  quick_codegen(kernel))[0]
        native = _native_entry_points(object_code, rendered.name)
    if native is not None:
        holder, function, object_function = native
    else:
        holder, function, object_function, object_code = _in_engine(rendered.text,
                                                                     rendered.name, state)
    seconds = time.perf_counter() - start
    STATISTICS["compiled"] += 1
    config.log("kernels", f"compiled {rendered.name} in {seconds * 1e3:.1f} ms")
    return CompiledKernel(kernel, rendered.name, function, rendered.text, None, seconds,
                          holder, object_function, object_code)


def _in_engine(text: str, symbol: str, state: Backend) -> tuple:
    """(module, pointer-array entry, list entry, object code or None) of a kernel's IR text
    optimized and given to MCJIT, where native_loader.py cannot load its object file."""
    with ENGINE_LOCK:
        module = state.parse(text)
        module.verify()
        state.optimize(module)
        state.engine.add_module(module)
        state.engine.finalize_object()
        function, object_function = _entry_points(symbol, state)
        return module, function, object_function, state.objects.pop(id(module), None)


def _load(kernel: Kernel, entry: disk_cache.Entry) -> CompiledKernel | None:
    """The kernel from a disk cache entry (already checked whole and for this key), or None."""
    start = time.perf_counter()
    native = _native_entry_points(entry.object_code, entry.symbol)
    if native is not None:
        holder, function, object_function = native
    else:
        if entry.symbol in ENGINE_SYMBOLS:
            return None  # defined already (compiled, then clear_cache()): compile a fresh copy
        state = backend()
        state.engine.add_object_file(state.llvm.ObjectFileRef.from_data(entry.object_code))
        state.engine.finalize_object()
        functions = _entry_points(entry.symbol, state)
        if functions is None:
            return None
        holder, (function, object_function) = None, functions
    seconds = time.perf_counter() - start
    STATISTICS["loaded"] += 1
    config.log("kernels", f"loaded {entry.symbol} from the disk cache in {seconds * 1e3:.1f} ms")
    return CompiledKernel(kernel, entry.symbol, function, entry.llvm_ir, None, seconds, holder,
                          object_function, entry.object_code, source="disk")


def clear_cache() -> None:
    """Forget the compiled kernels (their code stays in the engine)."""
    _CACHE.clear()
