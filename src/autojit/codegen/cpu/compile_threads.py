"""LLVM compiles on several threads at once: object code of IR text, made off the caller's thread.

jit.py compiles a plan's kernels, and gemm/kernel.py the native ?gemm, while the schedule goes
on building the plan (jit.parallel_compiles); both only need each module's object file, which
native_loader.py loads without LLVM. llvmlite serializes every call into LLVM behind one
process-wide lock, so threads calling it through llvmlite compile one after the other. LLVM
itself allows one thread per LLVMContext at a time: a module parsed into a context that only
one thread uses, optimized and turned into machine code by that thread's own target machine,
shares nothing with what another thread compiles. So each compile thread here owns a context
and two target machines (the full code generator and the quick one of jit.quick_codegen), and
makes the three long calls (parsing, the pass pipeline, code generation) straight through
ctypes without llvmlite's lock; ctypes releases the GIL during them. The short calls (building
the pass pipeline, setting the triple, freeing what a compile made) keep the lock. Every module
is freed on the thread that parsed it, since freeing touches its context. Where llvmlite has no
unlocked entry (`_cfn`), the locked one is used: compiles are then correct, and serial.

The threads are a ThreadPoolExecutor of one thread per core this process may run on (at most
four), or AUTOJIT_COMPILE_THREADS of them; 0 compiles on the caller's thread (jit.py's serial
path). A forked child makes its own pool on first use: the parent's threads are not in it.
See docs/notes/compile-latency.md.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

_MAX_THREADS = 4
# `optimize` of a module compiled with the light pipeline (llvm_host.Backend.add_light_passes)
# rather than O3 (True) or as written (False).
LIGHT = "light"
_local = threading.local()
_pool: dict = {}  # "executor" and "pid": the pool of this process
_pool_lock = threading.Lock()
_statistics_lock = threading.Lock()
_THREAD_PREFIX = "autojit-compile"
# The CPU time the compile threads spent compiling (read by bench/compile_latency.py).
STATISTICS = {"cpu seconds": 0.0}


def thread_count() -> int:
    """How many compile threads run beside the caller (AUTOJIT_COMPILE_THREADS, else one per
    usable core, at most four); 0 means every compile runs on its caller's thread."""
    configured = os.environ.get("AUTOJIT_COMPILE_THREADS", "").strip()
    if configured:
        try:
            count = int(configured)
        except ValueError:
            raise ValueError(f"AUTOJIT_COMPILE_THREADS must be a whole number of threads, got "
                             f"{configured!r}") from None
        if count < 0:
            raise ValueError(f"AUTOJIT_COMPILE_THREADS must be 0 or more, got {count}")
        return min(count, _MAX_THREADS)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, _MAX_THREADS))


def submit(function, *arguments) -> Future | None:
    """Run `function(*arguments)` on a compile thread: its Future, or None where there are no
    compile threads (thread_count() is 0) and the caller compiles itself."""
    executor = _executor()
    if executor is None:
        return None
    return executor.submit(function, *arguments)


def _executor():
    count = thread_count()
    if count == 0:
        return None
    with _pool_lock:
        if _pool.get("pid") != os.getpid() or _pool.get("count") != count:
            # The pool of a parent process (its threads are not in a forked child), or one of
            # another size: a new one.
            _pool.update(executor=ThreadPoolExecutor(count, _THREAD_PREFIX),
                         pid=os.getpid(), count=count)
        return _pool["executor"]


class _ThreadCompiler:
    """A compile thread's own LLVM state: a context and the two target machines."""

    def __init__(self, backend):
        llvm = backend.llvm
        self.llvm = llvm
        self.context = llvm.create_context()
        target = llvm.Target.from_default_triple()
        self.machine = target.create_target_machine(cpu=backend.cpu, features=backend.features,
                                                    opt=3, jit=True)
        self.quick_machine = target.create_target_machine(
            cpu=backend.cpu, features=backend.features, opt=0, jit=True)
        self.triple = self.machine.triple
        self.data_layout = str(self.machine.target_data)


def _unlocked(name: str):
    """llvmlite's ctypes function `name` without its process-wide lock (see the docstring)."""
    from llvmlite.binding import ffi

    function = getattr(ffi.lib, name)
    return getattr(function, "_cfn", function)


def object_code(backend, text: str, optimize: bool, quick: bool) -> tuple:
    """(the object file of the LLVM IR `text`, the calling thread's CPU seconds spent on it),
    compiled on the calling thread with its own context: verified, optimized by the pipeline of
    jit's `backend` when `optimize` (its light one where `optimize` is LIGHT), and generated by
    the quick code generator when `quick`. Safe to run on several threads at once."""
    started = time.thread_time()
    compiler = getattr(_local, "compiler", None)
    if compiler is None:
        compiler = _local.compiler = _ThreadCompiler(backend)
    llvm = compiler.llvm
    from llvmlite.binding import ffi
    from llvmlite.binding.module import ModuleRef

    with ffi.OutputString() as error:
        pointer = _unlocked("LLVMPY_ParseAssembly")(compiler.context,
                                                    ctypes.c_char_p(text.encode()), error)
        if not pointer:
            raise RuntimeError(f"LLVM IR parsing error\n{error}")
    module = ModuleRef(pointer, compiler.context)
    try:
        module.triple = compiler.triple
        module.data_layout = compiler.data_layout
        module.verify()
        machine = compiler.quick_machine if quick else compiler.machine
        if optimize == LIGHT:
            builder = backend.pass_builder(compiler.machine)
            light = llvm.create_new_module_pass_manager()
            backend.add_light_passes(light)
            _unlocked("LLVMPY_RunNewModulePassManager")(light, module, builder)
        elif optimize:
            builder = backend.pass_builder(compiler.machine)
            _unlocked("LLVMPY_RunNewModulePassManager")(builder.getModulePassManager(), module,
                                                        builder)
            inliner = llvm.create_new_module_pass_manager()
            backend.add_cleanup_passes(inliner)
            _unlocked("LLVMPY_RunNewModulePassManager")(inliner, module, builder)
        with ffi.OutputString() as error:
            buffer = _unlocked("LLVMPY_TargetMachineEmitToMemory")(machine, module, 1, error)
            if not buffer:
                raise RuntimeError(str(error))
        try:
            code = ctypes.string_at(ffi.lib.LLVMPY_GetBufferStart(buffer),
                                    ffi.lib.LLVMPY_GetBufferSize(buffer))
        finally:
            ffi.lib.LLVMPY_DisposeMemoryBuffer(buffer)
    finally:
        module.close()  # on this thread: freeing touches the context
    seconds = time.thread_time() - started
    if threading.current_thread().name.startswith(_THREAD_PREFIX):
        with _statistics_lock:
            STATISTICS["cpu seconds"] += seconds
    return code, seconds
