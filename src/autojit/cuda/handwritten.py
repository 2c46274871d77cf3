"""Hand-written CUDA kernels compiled from their source, and the sizes their launches take.

The kernels written by hand rather than generated from a Kernel (matmul.py's product and
gather, indexing.py's, kernels.py's zeroing and narrowing, views.py's strided write) are
Python source for numba.cuda, compiled here once per dtype; tools/cuda_ptx_check.py compiles
the same source for a GPU through `hand_written_function`.
"""

from __future__ import annotations

import numpy as np

from ..ir.scalars import real_math
from .availability import driver, is_simulator

_KERNELS: dict = {}


def hand_written(name: str, source: str, dtype=None, devices: tuple = ()):
    """(the kernel `name` defined by `source`, compiled; TILE), cached per dtype. The source
    sees `cuda`, `TILE`, `BLOCK` (threads per block), `DTYPE` (a NumPy scalar type) and the
    device functions named in `devices`, which it defines before the kernel."""
    key = (name, None if dtype is None else np.dtype(dtype), is_simulator())
    found = _KERNELS.get(key)
    if found is None:
        cuda = driver()
        function, tile = hand_written_function(cuda, is_simulator(), name, source, dtype,
                                               devices)
        found = _KERNELS[key] = (compiling_with_real_math(cuda.jit(function)), tile)
    return found


def compiling_with_real_math(dispatcher):
    """`dispatcher` (a lazily compiled numba.cuda kernel), compiling each new signature with
    math's own functions: its first launch may come while a trace has wrapped them
    (ir/scalars.real_math). The simulator compiles nothing."""
    compile_signature = getattr(dispatcher, "compile", None)
    if compile_signature is None or is_simulator():
        return dispatcher

    def compile(signature):
        with real_math():
            return compile_signature(signature)

    dispatcher.compile = compile
    return dispatcher


def hand_written_function(cuda, simulated: bool, name: str, source: str, dtype=None,
                          devices: tuple = ()):
    """(the Python function `name` of `source`, not yet compiled; TILE). Taking the
    numba.cuda module lets tools/cuda_ptx_check.py compile it without a GPU."""
    tile = 4 if simulated else 16
    namespace = {"cuda": cuda, "TILE": tile, "BLOCK": 32 if simulated else 256,
                 "DTYPE": None if dtype is None else getattr(np, np.dtype(dtype).name)}
    exec(compile(source, f"<autojit cuda {name}>", "exec"), namespace)  # noqa: S102
    for device_function in devices:
        namespace[device_function] = cuda.jit(device=True)(namespace[device_function])
    return namespace[name], tile


def block_size() -> int:
    """Threads per block of the hand-written kernels (the simulator runs each as a thread)."""
    return 32 if is_simulator() else 256


def grid_size(work: int) -> int:
    """Blocks for a grid-stride loop over `work` items (or blocks of work)."""
    return max(1, min(work, 4 if is_simulator() else 4096))
