"""Numba's CUDA simulator, set up for the CUDA test modules (import this before autojit).

NUMBA_ENABLE_CUDASIM must be set before numba.cuda is first imported; it is set here (unless
already set, so NUMBA_ENABLE_CUDASIM=0 runs the CUDA tests on a real GPU). If numba.cuda was
already imported without the simulator and no GPU is present, `requires_cuda` skips the tests.

The simulator runs each GPU thread as a Python thread. Two things about that are fixed here:
- `cuda.shared.array` finds a block's array in a dict without a lock, so two threads can each
  create one and a thread's partial result lands in an array the others never read: a
  reduction that is right on a GPU comes out wrong, now and then. The allocation is locked.
- The simulator polls its threads for `syncthreads()` while holding the GIL, so with Python's
  5 ms switch interval every barrier costs milliseconds. The `simulated_threads` fixture
  (conftest.py) shortens the interval while a CUDA module runs: several times faster.
"""

from __future__ import annotations

import os
import sys
import threading

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
import numba  # noqa: E402

if os.environ["NUMBA_ENABLE_CUDASIM"] == "1" and "numba.cuda" not in sys.modules:
    numba.config.ENABLE_CUDASIM = 1

import pytest  # noqa: E402

import autojit  # noqa: E402

SIMULATED = bool(numba.config.ENABLE_CUDASIM)
SWITCH_INTERVAL = 5e-5  # seconds

requires_cuda = pytest.mark.skipif(not autojit.cuda.is_available(),
                                   reason="no GPU and the CUDA simulator was not enabled in time")
# What each CUDA test module sets as its pytestmark.
MARKS = [requires_cuda, pytest.mark.usefixtures("simulated_threads")]


def _lock_shared_arrays() -> None:
    """FakeCUDAShared.array as numba writes it (a block's arrays told apart by the line that
    asks for them), with the lookup and the allocation under one lock."""
    import numpy as np
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


if SIMULATED:
    _lock_shared_arrays()
