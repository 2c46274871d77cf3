"""autojit.backends.mkl: Intel MKL's switches. autojit's BLAS is SciPy's (OpenBLAS) and its own
LLVM kernels, so `is_available()` is False; `verbose(level)` is a context manager that does
nothing, as torch's does without MKL."""

from __future__ import annotations

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available() -> bool:
    """Whether MKL is used: never, autojit does not use it."""
    return False


class verbose:
    """`with torch.backends.mkl.verbose(level):` MKL's verbose output for a block; accepted
    and ignored (mkldnn.verbose is this one)."""

    def __init__(self, enable: int):
        self.enable = enable

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False
