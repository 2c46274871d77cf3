"""LLVM modules that are not kernels: native helpers (workers.py, program.py, rows.py), the gemm.

`add_module` compiles IR text as written (the helpers' loops wait on memory: O3 would only cost
time); `compile_module` optimizes it as a kernel is optimized, or leaves it as written where
the caller says so (gemm/kernel.py's IR is vectorized by hand), or runs the light pipeline
(compile_threads.LIGHT: the channel convolutions' modules). Each gives the addresses of the
named functions and keeps the object file in the disk cache as jit.py keeps a kernel's, and one
text is compiled once per process. Compiles run on the calling thread, which may be a compile
thread (compile_threads.py): a text asked for by two threads at once is compiled by the first,
and the second waits for it. `prefetch_module` starts a compile on a compile thread that a
later `compile_module` of the same text then finds done or under way (the routines a first call
will want next, compiled beside the one it wants now). Where native_loader.py cannot load an
object file the module goes to llvmlite's engine (jit.py), under jit's lock.
"""

from __future__ import annotations

import re
from concurrent.futures import Future
from threading import Lock

from . import compile_threads, disk_cache, jit, native_loader

_MODULES: dict = {}  # (kind, text) -> Future of (what holds the code, the names' addresses)
_KIND = {True: "optimized", False: "as written", compile_threads.LIGHT: "lightly optimized"}
_MODULES_LOCK = Lock()


def add_module(text: str, names: list) -> tuple:
    """Compile LLVM IR text that is not a kernel (the native helpers of workers.py and
    program.py): (what holds the code, kept alive by the caller, and the addresses of the
    named functions, which must be every function the text defines). The text is used as
    written: its loops wait on memory, and O3 would only cost ~8 ms."""
    return _once(("plain", text), lambda: _add_module(text, names))


def compile_module(text: str, names: list, key: tuple, optimize: bool | str = True) -> list:
    """The addresses of the functions `names` of LLVM IR text that is not a kernel (the native
    gemm of gemm/kernel.py, rows.py's routines), optimized like a kernel unless `optimize` is
    False (or by the light pipeline where it is compile_threads.LIGHT), and cached on disk
    under `key` as kernels are (names must be unique per text: the key holds the text)."""
    return _once((_KIND[optimize], text),
                 lambda: _compile_module(text, list(names), key, optimize))[1]


def prefetch_module(text: str, names: list, key: tuple, optimize: bool | str = True) -> None:
    """Start compile_module(text, names, key, optimize) on a compile thread and return at once;
    nothing where there are no compile threads or the text is compiled or under way. A caller
    that asks for the text before the thread has started on it compiles it itself: a waiter
    only ever waits on a compile that is running."""
    memo = (_KIND[optimize], text)
    with _MODULES_LOCK:
        if memo in _MODULES:
            return
    compile_threads.submit(_first, memo, lambda: _compile_module(text, list(names), key,
                                                                 optimize))


def _first(memo: tuple, make) -> None:
    """A prefetch on its compile thread: _once(memo, make) unless some thread has taken the
    text meanwhile; a failure is left to the caller who asks for the text (it compiles again
    and raises)."""
    with _MODULES_LOCK:
        if memo in _MODULES:
            return
    try:
        _once(memo, make)
    except Exception:  # noqa: BLE001 - _once forgot the text; the asking caller raises
        pass


def _once(memo: tuple, make):
    with _MODULES_LOCK:
        found = _MODULES.get(memo)
        owner = found is None
        if owner:
            found = _MODULES[memo] = Future()
    if owner:
        try:
            found.set_result(make())
        except BaseException as error:
            with _MODULES_LOCK:
                del _MODULES[memo]
            found.set_exception(error)
            raise
    return found.result()


def _add_module(text: str, names: list) -> tuple:
    entry_key = None
    if native_loader.available():
        if disk_cache.directory() is not None:
            entry_key = disk_cache.entry_key(("module", text), jit.cache_target())
            entry = disk_cache.load(entry_key, disk_cache.MODULE_PREFIX)
            if entry is not None:
                found = jit.load_native(entry.object_code, names)
                if found is not None:
                    return found
        object_code, _ = compile_threads.object_code(jit.backend(), text, False, False)
        found = jit.load_native(object_code, names)
        if found is not None:
            if entry_key is not None:
                disk_cache.store(entry_key, disk_cache.Entry(names[0], object_code, text),
                                 disk_cache.MODULE_PREFIX)
            return found
    # Through the engine, where each name is defined once per process: a text compiled again
    # (another process's cache, a fork) gets its names suffixed.
    with jit.ENGINE_LOCK:
        state = jit.backend()
        if any(name in jit.ENGINE_SYMBOLS for name in names):
            suffix = f"_{jit.unique_number()}"
            for name in names:
                text = re.sub(f"@{re.escape(name)}(?![\\w.$])", f"@{name}{suffix}", text)
            names = [f"{name}{suffix}" for name in names]
        module = state.parse(text)
        module.verify()
        state.engine.add_module(module)
        state.engine.finalize_object()
        state.objects.pop(id(module), None)
        jit.ENGINE_SYMBOLS.update(names)
        return module, [state.engine.get_function_address(name) for name in names]


def _compile_module(text: str, names: list, key: tuple, optimize: bool | str) -> tuple:
    entry_key = None
    if disk_cache.directory() is not None:
        entry_key = disk_cache.entry_key(key, jit.cache_target())
        entry = disk_cache.load(entry_key)
        if entry is not None and entry.symbol == names[0]:
            found = jit.load_native(entry.object_code, names)
            if found is not None:
                return found
            with jit.ENGINE_LOCK:
                state = jit.backend()
                if not jit.ENGINE_SYMBOLS.intersection(names):
                    state.engine.add_object_file(
                        state.llvm.ObjectFileRef.from_data(entry.object_code))
                    state.engine.finalize_object()
                    addresses = [state.engine.get_function_address(name) for name in names]
                    if all(addresses):
                        jit.ENGINE_SYMBOLS.update(names)
                        return None, addresses
    state = jit.backend()
    found = object_code = None
    if native_loader.available():
        object_code, _ = compile_threads.object_code(state, text, optimize, False)
        found = jit.load_native(object_code, names)
    if found is None:
        with jit.ENGINE_LOCK:
            if jit.ENGINE_SYMBOLS.intersection(names):
                return None, [state.engine.get_function_address(name) for name in names]
            module = state.parse(text)
            module.verify()
            if optimize:
                state.optimize(module, optimize)
            state.engine.add_module(module)
            state.engine.finalize_object()
            object_code = state.objects.pop(id(module), None)
            found = module, [state.engine.get_function_address(name) for name in names]
            jit.ENGINE_SYMBOLS.update(names)
    if entry_key is not None and object_code is not None:
        disk_cache.store(entry_key, disk_cache.Entry(names[0], object_code, text))
    return found
