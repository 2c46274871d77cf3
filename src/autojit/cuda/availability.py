"""Whether CUDA can be used here, and numba.cuda, the driver every CUDA module launches through.

numba.cuda is imported only when `driver()` is first called, so a CPU-only program never pays
for it. The bottom of autojit.cuda: the modules above it ask here for the driver and whether it
is Numba's CUDA simulator; autojit/cuda/__init__.py re-exports these functions as torch.cuda
names them, and adds (`on_first_use`) what runs once CUDA is found usable: the registration of
eager ops on CUDA tensors (eager.py) with ops/registry.py.
"""

from __future__ import annotations

_DRIVER: list = []  # [numba.cuda] once imported, [None] when it cannot be; then True once set up
# What runs once, when CUDA is first found usable (autojit/cuda/__init__.py adds to it).
_ON_FIRST_USE: list = []


def on_first_use(action) -> None:
    """Call `action()` once, when `driver()` first finds CUDA usable (after the compiler's
    set-up)."""
    _ON_FIRST_USE.append(action)


def driver():
    """numba.cuda, imported on first use; raises when CUDA cannot be used here."""
    if not _DRIVER:
        try:
            from numba import cuda as numba_cuda
        except ImportError:  # numba without CUDA support
            numba_cuda = None
        _DRIVER.append(numba_cuda)
    found = _DRIVER[0]
    if found is not None and len(_DRIVER) == 1 and found.is_available():
        _check_compiler()
        for action in _ON_FIRST_USE:
            action()
        _DRIVER.append(True)
    if found is None or not found.is_available():
        raise RuntimeError("device 'cuda' is not available: found no NVIDIA driver on your "
                           "system. autojit's CUDA target needs an NVIDIA GPU with numba-cuda, "
                           "or Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1)")
    return found


def initialized() -> bool:
    """Whether CUDA was found usable and set up (by the first `driver()` call)."""
    return len(_DRIVER) == 2


def _check_compiler() -> None:
    """Set numba.cuda up for autojit's launches, and fail here, with the cause, where it cannot
    compile a kernel in this environment.

    Small tensors launch small grids, as in torch; numba warns about each such launch
    (NumbaPerformanceWarning), so that warning is off unless NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS
    asks for it. numba-cuda (0.30.4 at least) registers np.row_stack while it loads its typing,
    which NumPy 2.5 removed: every kernel's compile then fails deep inside numba, so this
    loads that part now and names the versions."""
    import os

    import numba
    import numpy as np

    if "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS" not in os.environ:
        numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    if numba.config.ENABLE_CUDASIM:
        return
    try:
        from numba.cuda import target

        target.CUDATypingContext().refresh()
    except Exception as error:  # noqa: BLE001 - any failure here fails every kernel's compile
        hint = ("; install a NumPy that numba-cuda supports (pip install 'numpy<2.5')"
                if "numpy" in str(error) else "")
        raise RuntimeError(f"numba-cuda cannot compile kernels with NumPy {np.__version__} "
                           f"({type(error).__name__}: {error}){hint}") from error


def is_available() -> bool:
    """True when a GPU (or Numba's CUDA simulator) can run CUDA tensors."""
    try:
        driver()
    except RuntimeError:
        return False
    return True


def is_simulator() -> bool:
    """True when kernels run under Numba's CUDA simulator (Python threads on the CPU)."""
    from numba import config

    return bool(config.ENABLE_CUDASIM)


def device_count() -> int:
    if not is_available():
        return 0
    return len(driver().gpus)


def synchronize(device=None) -> None:
    """Wait until every kernel launched so far has finished."""
    driver().synchronize()
