"""Matrix products for compiled plans: NumPy's BLAS, split over the cores by rows.

A plan's matmul steps (codegen/schedule.py) call `matmul` here instead of np.matmul. BLAS
libraries run their own threads, which spin and synchronize inside every call; on a machine
shared with other work they stall (a 256x784x512 float32 product measured 8 to 24 ms with
OpenBLAS's two threads while another process ran, and 1.7 ms on one thread), and they compete
with the threads of whatever else the process runs. So from the first compiled product on,
OpenBLAS is set to one thread (process-wide: NumPy products elsewhere in the process then run
on one thread too), and a large product's rows are split between the calling thread and a
small worker pool (NumPy releases the GIL inside matmul): one hand-off per product, each part
a single-threaded BLAS call. A wide product is split by columns instead (see `matmul`).

The thread count is set through OpenBLAS's own `*set_num_threads*` entry point, found in the
libraries loaded into the process; where there is none (another BLAS, another platform),
products run through np.matmul unchanged.
"""

from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# Below this many multiply-adds a product is not worth splitting: the hand-off to a worker
# and the smaller blocks cost more than the second core gives back (measured on the gradient
# penalty benchmark's 128x64x256 and 128x256x256 products).
SPLIT_THRESHOLD = 1 << 24
_MIN_ROWS = 16
_SETTER_NAMES = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                 "openblas_set_num_threads64_", "openblas_set_num_threads")
_GETTER_NAMES = tuple(name.replace("set_", "get_") for name in _SETTER_NAMES)
_lock = threading.Lock()
_state: dict = {}


def _blas_threads():
    """(get, set) for OpenBLAS's thread count, or None when no OpenBLAS is loaded."""
    if "threads" in _state:
        return _state["threads"]
    found = None
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line.lower()
                            and line.split()[-1].startswith("/")})
    except OSError:
        paths = []
    for path in paths:
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in zip(_SETTER_NAMES, _GETTER_NAMES):
            setter = getattr(library, set_name, None)
            getter = getattr(library, get_name, None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                found = (getter, setter)
                break
        if found:
            break
    _state["threads"] = found
    return found


def pool():
    """The worker threads (one fewer than the cores), or None on one core."""
    pool = _state.get("pool")
    if pool is None:
        with _lock:
            pool = _state.get("pool")
            if pool is None:
                workers = max(0, (os.cpu_count() or 1) - 1)
                pool = ThreadPoolExecutor(workers, "autojit-blas") if workers else None
                _state["pool"] = pool
    return pool


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """np.matmul(a, b) (into `out` when given), split over the cores when large: by rows, or
    by columns when the product is wider than it is tall."""
    threads = _blas_threads()
    if threads is None or a.ndim != 2 or b.ndim != 2:
        return np.matmul(a, b, out=out)
    rows, inner = a.shape
    columns = b.shape[1]
    workers = pool()
    # Each part packs its share of one operand and the whole of the other: split the side
    # whose whole operand is the smaller copy (rows re-pack b, columns re-pack a). A 256x784
    # by 784x512 product: 218 GF/s split by rows, 237 by columns (two cores, one run each).
    by_columns = rows < columns
    extent = columns if by_columns else rows
    parts = 1
    if workers is not None and rows * inner * columns >= SPLIT_THRESHOLD:
        parts = min(workers._max_workers + 1, extent // _MIN_ROWS)
    if not _state.get("single"):
        threads[1](1)
        _state["single"] = True
    if parts <= 1:
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty((rows, columns), np.result_type(a, b))
    bounds = [extent * part // parts for part in range(parts + 1)]
    if by_columns:
        pieces = [(a, b[:, start:stop], out[:, start:stop])
                  for start, stop in zip(bounds[:-1], bounds[1:])]
    else:
        pieces = [(a[start:stop], b, out[start:stop])
                  for start, stop in zip(bounds[:-1], bounds[1:])]
    pending = [workers.submit(np.matmul, left, right, out=target)
               for left, right, target in pieces[1:]]
    left, right, target = pieces[0]
    np.matmul(left, right, out=target)
    for future in pending:
        future.result()
    return out
