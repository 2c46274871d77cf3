"""Numba's CUDA simulator, set up for the CUDA test modules (import this before autojit).

NUMBA_ENABLE_CUDASIM must be set before numba.cuda is first imported; it is set here (unless
already set, so NUMBA_ENABLE_CUDASIM=0 runs the CUDA tests on a real GPU). If numba.cuda was
already imported without the simulator and no GPU is present, `requires_cuda` skips the tests.

The simulator runs each GPU thread as a Python thread. Three things about that are fixed here:
- `cuda.shared.array` finds a block's array in a dict without a lock, so two threads can each
  create one and a thread's partial result lands in an array the others never read: a
  reduction that is right on a GPU comes out wrong, now and then. The allocation is locked.
- The simulator finds the threads of a block at a `syncthreads()` by polling them in a loop
  that holds the GIL, which took most of a simulated kernel's time (with Python's 5 ms switch
  interval, milliseconds per barrier). The threads wait on a condition here instead
  (`_block_barriers`), released when every running thread has arrived.
- Starting and joining a Python thread per simulated thread took most of what remained (the
  2-step transformer-encoder row of tests/test_cuda_nn_layers.py started 91,521 threads: 18 s,
  half of it system time). A kernel whose code never reaches a block-wide barrier or a shared
  array (`_barrier_free`: an elementwise or a reduction kernel without the shared-array stage,
  and every device function it calls) runs its block's threads one after the other on the
  launching thread instead: its threads do not wait for each other, so one after the other is
  one of the orders the threads may run in, on a GPU and in the simulator (whose threads
  switch every few milliseconds under the GIL). A kernel that does reach a barrier keeps a
  thread each, taken from threads kept between launches (`_Pool`) instead of started anew;
  a kernel that reached `syncthreads()` while run in order would raise.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
import numba  # noqa: E402

if os.environ["NUMBA_ENABLE_CUDASIM"] == "1" and "numba.cuda" not in sys.modules:
    numba.config.ENABLE_CUDASIM = 1

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import autojit  # noqa: E402

SIMULATED = bool(numba.config.ENABLE_CUDASIM)

requires_cuda = pytest.mark.skipif(not autojit.cuda.is_available(),
                                   reason="no GPU and the CUDA simulator was not enabled in time")
# What each CUDA test module sets as its pytestmark.
MARKS = [requires_cuda]


def _lock_shared_arrays() -> None:
    """FakeCUDAShared.array as numba writes it (a block's arrays told apart by the line that
    asks for them), with the lookup and the allocation under one lock."""
    from numba.core import types
    from numba.cuda.simulator.kernelapi import FakeCUDAShared
    from numba.np import numpy_support

    if getattr(FakeCUDAShared.array, "locked", False):
        return
    dynamic = FakeCUDAShared.array  # shape 0: the block's one dynamic buffer, no lookup
    lock = threading.Lock()

    def array(self, shape, dtype):
        if shape == 0:
            return dynamic(self, shape, dtype)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)
        where = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            found = self._allocations.get(where)
            if found is None:
                found = self._allocations[where] = np.empty(shape, dtype)
        return found

    array.locked = True
    FakeCUDAShared.array = array


class _BlockBarrier:
    """`syncthreads()` for one simulated block: it releases the waiting threads when every
    thread still running has arrived (a thread that returned no longer counts, as the
    simulator's own polling has it), and once a thread failed it makes every wait raise."""

    def __init__(self, threads: int) -> None:
        self.condition = threading.Condition()
        self.running, self.arrived, self.generation = threads, 0, 0
        self.failed = None  # the first thread that raised

    def wait(self) -> None:
        with self.condition:
            if self.failed is not None:
                raise RuntimeError("abort flag set on syncthreads call")
            generation = self.generation
            self.arrived += 1
            if self.arrived == self.running:
                self._release()
            while generation == self.generation and self.failed is None:
                self.condition.wait()
            if self.failed is not None:
                raise RuntimeError("abort flag set on syncthreads clear")

    def _release(self) -> None:
        self.arrived = 0
        self.generation += 1
        self.condition.notify_all()

    def leave(self, thread, failed: bool) -> None:
        with self.condition:
            if failed and self.failed is None:
                self.failed = thread
                self.condition.notify_all()
            self.running -= 1
            if self.running and self.arrived == self.running:
                self._release()


# What a kernel's code names where its threads wait for each other or share memory.
_BARRIER_NAMES = frozenset(("syncthreads", "syncthreads_count", "syncthreads_and",
                            "syncthreads_or", "shared", "cg", "this_grid"))
_BARRIER_FREE: dict = {}


def _names(code) -> set:
    """The names `code` (and the functions and lambdas defined in it) reads."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if hasattr(constant, "co_names"):
            names |= _names(constant)
    return names


def _barrier_free(function, seen=None) -> bool:
    """Whether `function` (a kernel's Python function) and every function it reaches through
    its globals (device functions, in the simulator FakeCUDAKernels holding theirs) never name
    a barrier or a shared array."""
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    found = _BARRIER_FREE.get(code)
    if found is not None:
        return found
    seen = set() if seen is None else seen
    if code in seen:
        return True
    seen.add(code)
    names = _names(code)
    free = not names & _BARRIER_NAMES
    if free:
        namespace = function.__globals__
        for name in names:
            value = namespace.get(name)
            value = getattr(value, "fn", value)  # a device function: its Python function
            if hasattr(value, "__code__") and hasattr(value, "__globals__") and \
                    not _barrier_free(value, seen):
                free = False
                break
    _BARRIER_FREE[code] = free
    return free


def _in_order(manager, grid_point, args) -> None:
    """A barrier-free block's threads, one after the other on this thread (which stands in for
    each: the simulator's kernel API reads threadIdx and blockIdx from the current thread). An
    error is raised as the simulator raises a thread's, naming the thread and block."""
    from numba.cuda.simulator.kernelapi import Dim3

    thread = threading.current_thread()
    block_dim = Dim3(*manager._block_dim)
    block_index = Dim3(*grid_point)
    saved = {name: thread.__dict__[name] for name in _STANDING_IN if name in thread.__dict__}
    thread.blockIdx = block_index
    thread.syncthreads = _no_barrier
    try:
        for block_point in np.ndindex(*manager._block_dim):
            index = thread.threadIdx = Dim3(*block_point)
            thread.thread_id = index.x + block_dim.x * (index.y + block_dim.y * index.z)
            try:
                with _errors(manager):
                    manager._f(*args)
            except Exception as error:  # noqa: BLE001 - raised as the simulator raises it
                where = f"tid={list(index)} ctaid={list(block_index)}"
                message = f"{where}: {error}" if str(error) else where
                raise type(error)(message).with_traceback(error.__traceback__) from None
    finally:
        for name in _STANDING_IN:
            thread.__dict__.pop(name, None)
        thread.__dict__.update(saved)


def _errors(manager):
    """A kernel launched with debug=True raises on a division by zero, as the simulator's
    threads do; else NumPy's error state as it is."""
    return np.errstate(divide="raise") if manager._debug else contextlib.nullcontext()


_STANDING_IN = ("blockIdx", "threadIdx", "thread_id", "syncthreads")


def _no_barrier():
    raise RuntimeError("syncthreads() in a kernel run thread after thread "
                       "(tests/cuda_simulator.py: _barrier_free missed it)")


class _Worker(threading.Thread):
    """A pooled thread that stands in for one simulated thread of a block at a time: the
    simulator's kernel API reads threadIdx, blockIdx and thread_id from the current thread
    and calls its syncthreads()."""

    def __init__(self, pool) -> None:
        super().__init__(daemon=True, name="cuda-simulator-thread")
        self.pool, self.go, self.task = pool, threading.Semaphore(0), None
        self.exception = None

    def run(self) -> None:
        while True:
            self.go.acquire()
            manager, grid_point, block_point, args, barrier, latch = self.task
            self.task = None
            self.blockIdx, self.threadIdx = Dim3(*grid_point), Dim3(*block_point)
            block_dim = Dim3(*manager._block_dim)
            self.thread_id = self.threadIdx.x + block_dim.x * (
                self.threadIdx.y + block_dim.y * self.threadIdx.z)
            self.barrier, self.exception = barrier, None
            failed = True
            try:
                with _errors(manager):
                    manager._f(*args)
                failed = False
            except Exception as error:  # noqa: BLE001 - raised by the launching thread
                where = f"tid={list(self.threadIdx)} ctaid={list(self.blockIdx)}"
                message = f"{where}: {error}" if str(error) else where
                self.exception = (type(error)(message), error.__traceback__)
            finally:
                barrier.leave(self, failed)
                latch.count_down()

    def syncthreads(self) -> None:
        self.barrier.wait()


class _Latch:
    """Released when `count` threads have counted down."""

    def __init__(self, count: int) -> None:
        self.count, self.condition = count, threading.Condition()

    def count_down(self) -> None:
        with self.condition:
            self.count -= 1
            if not self.count:
                self.condition.notify_all()

    def wait(self) -> None:
        with self.condition:
            while self.count:
                self.condition.wait()


class _Pool:
    """Idle _Workers, kept between launches: starting a Python thread per simulated thread
    and joining it cost more than running most kernels."""

    def __init__(self) -> None:
        self.idle, self.lock, self.pid = [], threading.Lock(), os.getpid()

    def take(self, count: int) -> list:
        with self.lock:
            if self.pid != os.getpid():  # a forked child: the parent's threads are not in it
                self.idle, self.pid = [], os.getpid()
            taken, self.idle = self.idle[:count], self.idle[count:]
        while len(taken) < count:
            worker = _Worker(self)
            worker.start()
            taken.append(worker)
        return taken

    def give_back(self, workers: list) -> None:
        with self.lock:
            self.idle.extend(workers)


_POOL = _Pool()
Dim3 = None  # numba's, set by _block_barriers


def _block_barriers() -> None:
    """The simulator's BlockManager.run without its polling: the simulator finds a block's
    threads at a barrier by polling every thread in a loop that holds the GIL, which
    costs most of a simulated kernel's time; here the threads wait on a _BlockBarrier and the
    launching thread waits for them to finish; they are pooled threads (_Pool), and a
    barrier-free kernel's threads run in order on the launching thread (_in_order). Errors are
    raised as the simulator raises them."""
    global Dim3
    from numba.cuda.simulator.kernel import BlockManager, BlockThread
    from numba.cuda.simulator.kernelapi import Dim3

    if getattr(BlockManager.run, "barriers", False):
        return

    def run(self, grid_point, *args):
        if _barrier_free(self._f):
            _in_order(self, grid_point, args)
            return
        points = list(np.ndindex(*self._block_dim))
        barrier, latch = _BlockBarrier(len(points)), _Latch(len(points))
        workers = _POOL.take(len(points))
        for worker, block_point in zip(workers, points, strict=True):
            worker.task = (self, grid_point, block_point, args, barrier, latch)
            worker.go.release()
        latch.wait()
        first = barrier.failed if barrier.failed is not None else \
            next((worker for worker in workers if worker.exception), None)
        exception = first.exception if first is not None else None
        _POOL.give_back(workers)
        if exception is not None:
            raise exception[0].with_traceback(exception[1])

    def syncthreads(self):
        self.barrier.wait()

    run.barriers = True
    BlockManager.run = run
    BlockThread.syncthreads = syncthreads


if SIMULATED:
    _lock_shared_arrays()
    _block_barriers()
