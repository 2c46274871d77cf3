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

`gemm` calls the same library's CBLAS `?gemm` through ctypes (which releases the GIL, so parts
still run side by side): it reads a transposed operand through its strides, where np.matmul
would want a copy or a view step, and computes `alpha * a @ b + beta * c` into c's storage, so
a plan can fold an update such as `W - lr * (h.T @ g)` into the product (matmul_steps.py).
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
# CBLAS gemm entry points, with the width of their integer arguments: OpenBLAS built with
# 64-bit indices (NumPy's and SciPy's wheels) adds the 64_ suffix.
_GEMM_NAMES = {np.dtype(np.float32): (("scipy_cblas_sgemm64_", ctypes.c_int64),
                                      ("cblas_sgemm64_", ctypes.c_int64),
                                      ("cblas_sgemm", ctypes.c_int)),
               np.dtype(np.float64): (("scipy_cblas_dgemm64_", ctypes.c_int64),
                                      ("cblas_dgemm64_", ctypes.c_int64),
                                      ("cblas_dgemm", ctypes.c_int))}
_ROW_MAJOR, _NO_TRANSPOSE, _TRANSPOSE = 101, 111, 112
_lock = threading.Lock()
_state: dict = {}


def _openblas_libraries() -> list:
    """The OpenBLAS libraries loaded into the process, opened with ctypes."""
    if "libraries" in _state:
        return _state["libraries"]
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line.lower()
                            and line.split()[-1].startswith("/")})
    except OSError:
        paths = []
    libraries = []
    for path in paths:
        try:
            libraries.append(ctypes.CDLL(path))
        except OSError:
            continue
    _state["libraries"] = libraries
    return libraries


def _blas_threads():
    """(get, set) for OpenBLAS's thread count, or None when no OpenBLAS is loaded."""
    if "threads" in _state:
        return _state["threads"]
    found = None
    for library in _openblas_libraries():
        for set_name, get_name in zip(_SETTER_NAMES, _GETTER_NAMES):
            setter = getattr(library, set_name, None)
            getter = getattr(library, get_name, None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                found = (getter, setter)
                _state["threads_library"] = library
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


def _parts(rows: int, inner: int, columns: int) -> tuple:
    """(number of parts, split by columns) for a rows x inner x columns product."""
    workers = pool()
    # Each part packs its share of one operand and the whole of the other: split the side
    # whose whole operand is the smaller copy (rows re-pack b, columns re-pack a). A 256x784
    # by 784x512 product: 218 GF/s split by rows, 237 by columns (two cores, one run each).
    by_columns = rows < columns
    extent = columns if by_columns else rows
    parts = 1
    if workers is not None and rows * inner * columns >= SPLIT_THRESHOLD:
        parts = min(workers._max_workers + 1, extent // _MIN_ROWS)
    return parts, by_columns


def _single_threaded(threads) -> None:
    if not _state.get("single"):
        threads[1](1)
        _state["single"] = True


def _run_parts(function, a, b, out, parts: int, by_columns: bool) -> None:
    """function(a_part, b_part, out_part) over `parts` blocks of out, the first on this thread
    and the others on the pool (the calls release the GIL)."""
    extent = out.shape[1] if by_columns else out.shape[0]
    bounds = [extent * part // parts for part in range(parts + 1)]
    if by_columns:
        pieces = [(a, b[:, start:stop], out[:, start:stop])
                  for start, stop in zip(bounds[:-1], bounds[1:])]
    else:
        pieces = [(a[start:stop], b, out[start:stop])
                  for start, stop in zip(bounds[:-1], bounds[1:])]
    pending = [pool().submit(function, *piece) for piece in pieces[1:]]
    function(*pieces[0])
    for future in pending:
        future.result()


def _np_matmul(a, b, out):
    return np.matmul(a, b, out=out)


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None,
           split: bool = True) -> np.ndarray:
    """np.matmul(a, b) (into `out` when given), split over the cores when large (and `split`):
    by rows, or by columns when the product is wider than it is tall."""
    threads = _blas_threads()
    if threads is None or a.ndim != 2 or b.ndim != 2:
        return np.matmul(a, b, out=out)
    _single_threaded(threads)
    parts, by_columns = _parts(a.shape[0], a.shape[1], b.shape[1]) if split else (1, False)
    if parts <= 1:
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty((a.shape[0], b.shape[1]), np.result_type(a, b))
    _run_parts(_np_matmul, a, b, out, parts, by_columns)
    return out


def _gemm_function(dtype: np.dtype):
    """The library's CBLAS gemm for `dtype` (float32 or float64) through ctypes, or None."""
    key = ("gemm", dtype)
    if key in _state:
        return _state[key]
    found = None
    library = _state.get("threads_library") if _blas_threads() is not None else None
    for name, integer in _GEMM_NAMES.get(dtype, ()) if library is not None else ():
        function = getattr(library, name, None)
        if function is None:
            continue
        scalar = ctypes.c_float if dtype == np.float32 else ctypes.c_double
        pointer, flag = ctypes.c_void_p, ctypes.c_int
        function.argtypes = [flag, flag, flag, integer, integer, integer, scalar, pointer,
                             integer, pointer, integer, scalar, pointer, integer]
        function.restype = None
        found = function
        break
    _state[key] = found
    return found


def gemm_supported(dtype) -> bool:
    """Whether `gemm` runs natively for arrays of this NumPy dtype."""
    dtype = np.dtype(dtype)
    return dtype in _GEMM_NAMES and _gemm_function(dtype) is not None


def _layout(array: np.ndarray) -> tuple | None:
    """(transpose flag, leading dimension) with which BLAS reads the 2-D `array` where it
    lies, or None when its strides fit neither a row-major matrix nor a transposed one."""
    item = array.itemsize
    rows, columns = array.shape
    row_stride, column_stride = array.strides
    if not array.flags.aligned or row_stride % item or column_stride % item:
        return None
    if column_stride == item and row_stride >= max(1, columns) * item:
        return _NO_TRANSPOSE, row_stride // item
    if row_stride == item and column_stride >= max(1, rows) * item:
        return _TRANSPOSE, column_stride // item
    return None


def gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray, alpha: float, beta: float,
         split: bool = True) -> np.ndarray:
    """out = alpha * (a @ b) + beta * out, in out's storage, for 2-D arrays of one dtype that
    `gemm_supported` accepts; out must be row-major and overlap neither operand. With beta 0
    the old values of out are not read. Large products are split over the cores as in
    `matmul`."""
    function = _gemm_function(out.dtype)
    _single_threaded(_blas_threads())
    rows, inner = a.shape
    columns = b.shape[1]
    if rows == 0 or columns == 0:
        return out
    if inner == 0:
        if beta == 0:
            out[...] = 0
        else:
            out *= beta
        return out
    if _layout(a) is None:
        a = np.ascontiguousarray(a)
    if _layout(b) is None:
        b = np.ascontiguousarray(b)

    def call(a_part, b_part, out_part):
        transpose_a, lead_a = _layout(a_part)
        transpose_b, lead_b = _layout(b_part)
        function(_ROW_MAJOR, transpose_a, transpose_b, out_part.shape[0], out_part.shape[1],
                 inner, alpha, a_part.ctypes.data, lead_a, b_part.ctypes.data, lead_b, beta,
                 out_part.ctypes.data, out_part.strides[0] // out_part.itemsize)

    parts, by_columns = _parts(rows, inner, columns) if split else (1, False)
    if parts <= 1:
        call(a, b, out)
    else:
        _run_parts(call, a, b, out, parts, by_columns)
    return out
