"""autojit.__config__: what torch.__config__ says about a build (`show()`, `parallel_info()`),
for autojit: the libraries its kernels are built with and the threads they run on."""

from __future__ import annotations

import os
import platform


def _versions() -> list:
    import llvmlite
    import numba
    import numpy
    import scipy

    return [("NumPy", numpy.__version__), ("SciPy (LAPACK, BLAS, FFT)", scipy.__version__),
            ("llvmlite (LLVM code generation)", llvmlite.__version__),
            ("Numba (CUDA kernels)", numba.__version__)]


def show() -> str:
    """A description of this autojit build: the libraries it runs on, the CPU capability its
    kernels use and its version."""
    from . import config
    from .backends.cpu import get_cpu_capability

    lines = ["autojit built with:", f"  - Python {platform.python_version()}"]
    lines += [f"  - {name} {version}" for name, version in _versions()]
    lines += [f"  - CPU capability usage: {get_cpu_capability()}",
              f"  - Build settings: VERSION={config.VERSION}, USE_CUDA=numba.cuda, "
              "USE_MKL=OFF, USE_MKLDNN=OFF, USE_OPENMP=OFF", ""]
    return "\n".join(lines)


def parallel_info() -> str:
    """How autojit runs in parallel: its worker threads, and the variables that set them."""
    from . import config

    lines = ["autojit parallel backend: its own worker threads (autojit.set_num_threads)",
             f"\tautojit.get_num_threads() : {config.get_num_threads()}",
             f"\tautojit.get_num_interop_threads() : {config.get_num_interop_threads()}",
             f"usable cores : {config.usable_cores()}", f"os.cpu_count() : {os.cpu_count()}"]
    return "\n".join(lines) + "\n"


def _cxx_flags() -> str:
    """The C++ compiler flags of the build: autojit has no C++ code."""
    return ""
