"""Code generation, below the device runtimes and above the compiler: what a kernel is
(kernel.py), the expression templates of the registry's elementwise ops (expression.py), the
fusion schedule and step plan (schedule/), and the CPU (cpu/, through LLVM) and CUDA (cuda/,
through numba.cuda) backends. See docs/notes/cpu-codegen.md and docs/notes/cuda.md.
"""

from .. import config
from ..compiler import backends
from ..ops.elementwise import native_math
from ..ops.indexing import row_accumulation
from ..ops.nn import activations, batch_norm, convolution, normalization, softmax

backends.register("cpu", __name__ + ".backend")


def _native_convolution(kind: str, first, second, attrs: dict):
    """The convolution primitives' eager products, natively (cpu/convolution/__init__.py; imported
    on the first convolution, so that `import autojit` stays light)."""
    from .cpu import convolution as native

    return native.eager(kind, first, second, attrs)


convolution.NATIVE = _native_convolution


def _native_channels(name: str, elements: list, channels: list):
    """The eager batch norm routines' elementwise passes as native loops (cpu/channels.py,
    imported on the first call, so that `import autojit` stays light)."""
    from .cpu import channels as native

    return native.run(name, elements, channels)


batch_norm.NATIVE = _native_channels


def _native_math(name: str, x, out):
    """The eager impls' exp, tanh, erf, ... of large arrays as native loops (cpu/eager_math.py,
    imported on the first such call, so that `import autojit` stays light)."""
    from .cpu import eager_math

    return eager_math.unary(name, x, out)


native_math.NATIVE = _native_math


def _native_gelu(name: str, arrays: list):
    """The eager gelu routines of large arrays as one native loop each (cpu/eager_gelu.py,
    imported on the first such call, so that `import autojit` stays light)."""
    from .cpu import eager_gelu

    return eager_gelu.run(name, arrays)


activations.NATIVE = _native_gelu


def _native_softmax(name: str, arrays: list, safe: bool):
    """The eager softmax routines over a last dim as one native loop over the rows each
    (cpu/eager_softmax.py, imported on the first such call)."""
    from .cpu import eager_softmax

    return eager_softmax.run(name, arrays, safe)


softmax.NATIVE = _native_softmax


def _native_norm(name: str, arrays: list, count: int, eps: float):
    """The eager layer_norm routines over trailing dims as one native loop over the rows each
    (cpu/eager_norm.py, imported on the first such call)."""
    from .cpu import eager_norm

    return eager_norm.run(name, arrays, count, eps)


normalization.NATIVE = _native_norm


def _native_add_rows(out, index, values) -> bool:
    """The eager accumulating index_put's rows added by the compiled plans' native loop
    (cpu/rows.py, imported on the first such call)."""
    from .cpu import rows

    return rows.add_rows(out, index, values)


row_accumulation.NATIVE = _native_add_rows


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
