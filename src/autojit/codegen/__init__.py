"""Code generation, below the device runtimes and above the compiler: what a kernel is
(kernel.py), the expression templates of the registry's elementwise ops (expression.py), the
fusion schedule and step plan (schedule/), and the CPU (cpu/, through LLVM) and CUDA (cuda/,
through numba.cuda) backends. See docs/notes/cpu-codegen.md and docs/notes/cuda.md.
"""

import importlib

from .. import config
from ..compiler import backends
from ..ops.elementwise import math_primitives, native_math
from ..ops.indexing import row_accumulation
from ..ops.nn import activations, batch_norm, convolution, normalization, softmax

backends.register("cpu", __name__ + ".backend")


def _installed(owner, module: str, function: str, doc: str):
    """Set owner.NATIVE to a first call that imports cpu/<module>.py (on first use, so that
    `import autojit` stays light), puts its `function` in the slot itself and calls it: the
    later calls reach the routine directly, without an import statement's lookup each
    (half a microsecond, on eager routines that take a few)."""
    def first_call(*arguments):
        target = getattr(importlib.import_module(f"{__name__}.cpu.{module}"), function)
        if owner.NATIVE is first_call:
            owner.NATIVE = target
        return target(*arguments)

    first_call.__doc__ = doc
    first_call.__qualname__ = first_call.__name__ = f"native_{module}"
    owner.NATIVE = first_call
    return first_call


_native_convolution = _installed(
    convolution, "convolution", "eager",
    "The convolution primitives' eager products, natively (cpu/convolution/__init__.py).")
_native_channels = _installed(
    batch_norm, "channels", "run",
    "The eager batch norm routines' elementwise passes as native loops (cpu/channels.py).")
_native_math = _installed(
    native_math, "eager_math", "unary",
    "The eager impls' exp, tanh, erf, ... of large arrays as native loops (cpu/eager_math.py).")
_native_select = _installed(
    math_primitives, "eager_select", "run",
    "The eager relu and threshold_backward of large arrays as one native loop each "
    "(cpu/eager_select.py).")
_native_gelu = _installed(
    activations, "eager_gelu", "run",
    "The eager gelu routines of large arrays as one native loop each (cpu/eager_gelu.py).")
_native_softmax = _installed(
    softmax, "eager_softmax", "run",
    "The eager softmax routines over a last dim as one native loop over the rows each "
    "(cpu/eager_softmax.py).")
_native_norm = _installed(
    normalization, "eager_norm", "run",
    "The eager layer_norm routines over trailing dims as one native loop over the rows each "
    "(cpu/eager_norm.py).")
_native_add_rows = _installed(
    row_accumulation, "rows", "add_rows",
    "The eager accumulating index_put's rows added by the compiled plans' native loop "
    "(cpu/rows.py).")


def _threads_changed(count: int) -> None:
    """autojit.set_num_threads: the CPU backend's worker threads and NumPy's BLAS follow it
    (imported here only when the count changes, so that `import autojit` stays light)."""
    from .cpu import workers
    from .cpu.gemm import blas

    workers.threads_changed(count)
    blas.threads_changed(count)


config.THREAD_LISTENERS.append(_threads_changed)


def _load_code(key: str):
    from .cpu import disk_cache

    return disk_cache.load_code(key)


def _store_code(key: str, data: bytes) -> bool:
    from .cpu import disk_cache

    return disk_cache.store_code(key, data)


config.CODE_STORE.update(load=_load_code, store=_store_code)
