"""Matrix products for compiled plans: NumPy's BLAS, split over the cores.

A plan's matmul steps (codegen/schedule/fusion.py) call `matmul` here instead of np.matmul. BLAS
libraries run their own threads, which spin and synchronize inside every call; on a machine
shared with other work they stall (a 256x784x512 float32 product measured 8 to 24 ms with
OpenBLAS's two threads while another process ran, and 1.7 ms on one thread), and they compete
with the threads of whatever else the process runs. So while a compiled run that calls BLAS
is under way, OpenBLAS is set to one thread (`one_thread`; the setting is process-wide), and a
large product's rows are split between the calling thread and the native workers of
workers.py: one hand-off per product (about a microsecond), each part a
single-threaded CBLAS gemm called from native code (`gemm_records`, `run_records`). Where those
workers or a gemm with 64-bit integers are missing, parts go to a Python thread pool instead
(NumPy and ctypes release the GIL in their calls), whose hand-off costs tens of microseconds.

When the last such run ends, OpenBLAS's own thread count comes back, so that eager products
(np.matmul, the `matmul` primitive's reference) always run on it: OpenBLAS rounds a product
differently on two threads than on one (256x784 by 784x512 in float32), and an eager result
must not depend on whether something was compiled before (tests/test_compile_products.py).
The thread count is set through OpenBLAS's own `*set_num_threads*` entry point, found in the
libraries loaded into the process; where there is none (another BLAS, another platform),
products run through np.matmul unchanged.

`gemm` calls, from the workers' native code, the faster ?gemm that kernel.py generates
where it has one, else the same library's CBLAS `?gemm` (through ctypes where the workers are
missing; ctypes releases the GIL, so that parts still run side by side): it reads a transposed
operand through its strides, where np.matmul would want a copy or a view step, and computes
`alpha * a @ b + beta * c` into c's storage, so a plan can fold an update such as
`W - lr * (h.T @ g)` into the product (codegen/schedule/matmul_steps.py).
"""

from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import workers
from . import kernel as gemm_kernel

# Below this many multiply-adds a product is not worth splitting: the hand-off to a worker
# and the smaller blocks cost more than the second core gives back (measured on the gradient
# penalty benchmark's 128x64x256 and 128x256x256 products).
SPLIT_THRESHOLD = 1 << 24
# The same for the native workers (workers.py), whose hand-off costs about a microsecond.
NATIVE_SPLIT_THRESHOLD = 1 << 18
# From this many multiply-adds a native product wider than it is tall splits by columns,
# each part at least _WIDE_PART columns wide (two of the gemm's panels of float32).
WIDE_SPLIT_THRESHOLD = 1 << 24
_WIDE_PART = 64
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
    """The Python worker threads (one fewer than the cores), or None on one core."""
    found = _state.get("pool")
    if found is None:
        with _lock:
            found = _state.get("pool")
            if found is None:
                count = workers.usable_cores() - 1
                found = ThreadPoolExecutor(count, "autojit-blas") if count else None
                _state["pool"] = found
    return found


def _forget_pool_after_fork() -> None:
    # A forked child has none of the pool's threads, and the executor would queue its jobs
    # for them forever: the child starts its own pool when it needs one.
    _state.pop("pool", None)


os.register_at_fork(after_in_child=_forget_pool_after_fork)


def _parts(rows: int, inner: int, columns: int, native: bool = False) -> tuple:
    """(number of parts, split by columns) for a rows x inner x columns product, on the native
    workers or on the Python pool."""
    if native:
        # Split by rows, each part packs its block of a and the whole of b; by columns, the
        # whole of a and its block of b. Repeated alone (operands in the core's L2), rows
        # did better: 256x512 by 512x512 460-480 us against 490-515 by columns. Inside a
        # training step the operands come from memory or the other core, and a large product
        # wider than tall packs less by columns: the MLP step's forward and backward products
        # (256x784x512, 256x512x512) cut its native program by 91-100 us in three runs
        # (docs/notes/cpu-codegen.md). Below WIDE_SPLIT_THRESHOLD (the gradient penalty's
        # 128x256x256) columns measured no better.
        native_workers = workers.shared()
        # The parts of a product: one per thread that runs them (set_num_threads).
        count, threshold = native_workers.count + 1, NATIVE_SPLIT_THRESHOLD
        by_columns = rows < count * _MIN_ROWS <= columns or (
            rows < columns and columns >= count * _WIDE_PART and
            rows * inner * columns >= WIDE_SPLIT_THRESHOLD)
    else:
        python_pool = pool()
        count = 1 if python_pool is None else min(python_pool._max_workers + 1,
                                                  workers.cores_in_use())
        threshold = SPLIT_THRESHOLD
        # Split the side whose whole operand is the smaller copy (rows re-pack b, columns
        # re-pack a): a 256x784 by 784x512 product: 218 GF/s split by rows, 237 by columns.
        by_columns = rows < columns
    extent = columns if by_columns else rows
    parts = 1
    if count > 1 and rows * inner * columns >= threshold:
        # A large product over few rows (or columns) still has one part.
        parts = max(1, min(count, extent // _MIN_ROWS))
    return parts, by_columns


def threads_changed(count: int) -> None:
    """autojit.set_num_threads(count): NumPy's BLAS runs eager products on `count` threads
    (after the compiled runs under way end, where some are)."""
    threads = _blas_threads()
    if threads is None:
        return
    with _lock:
        if _scope["depth"]:
            _scope["restore"] = count
        else:
            threads[1](count)


# Compiled runs under way that set OpenBLAS to one thread, and the count to set back after
# the last of them (None: OpenBLAS was on one thread already).
_scope: dict = {"depth": 0, "restore": None}


class _OneThread:
    """The context of `one_thread`."""

    __slots__ = ()

    def __enter__(self):
        threads = _blas_threads()
        if threads is not None:
            with _lock:
                if not _scope["depth"]:
                    count = threads[0]()
                    _scope["restore"] = count if count != 1 else None
                    if count != 1:
                        threads[1](1)
                _scope["depth"] += 1
        return self

    def __exit__(self, *exception):
        threads = _blas_threads()
        if threads is not None:
            with _lock:
                _scope["depth"] -= 1
                if not _scope["depth"] and _scope["restore"] is not None:
                    threads[1](_scope["restore"])
                    _scope["restore"] = None
        return False


_ONE_THREAD = _OneThread()


def one_thread() -> _OneThread:
    """A context in which OpenBLAS runs on one thread: a compiled plan that calls BLAS runs
    in it (schedule/plan.py), as do `matmul` and `gemm`; nested and concurrent ones share
    it, and OpenBLAS's thread count comes back when the last ends. An eager product on another
    Python thread meanwhile runs on one thread too."""
    return _ONE_THREAD


def _run_parts(function, pieces: list) -> None:
    """function(a_part, b_part, out_part) for each piece, the first on this thread and the
    others on the Python pool (the calls release the GIL)."""
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
    if _blas_threads() is None or a.ndim != 2 or b.ndim != 2:
        return np.matmul(a, b, out=out)
    with _ONE_THREAD:
        return _matmul(a, b, out, split)


def _matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None, split: bool) -> np.ndarray:
    native = a.dtype == b.dtype and native_gemm(a.dtype) and \
        (out is None or (out.dtype == a.dtype and out.flags.c_contiguous))
    parts, by_columns = _parts(*a.shape, b.shape[1], native) if split else (1, False)
    long = _long_float32(a, b)
    if long and not native:
        return _blocked_product(a, b, out)
    # NumPy's matmul takes a strided operand (a transposed view, a broadcast column) off BLAS
    # to a plain loop: a 1x128 by 128x256 product read through a stride-0 view measured 47 us
    # in the penalty step. gemm reads transposed views as they lie, and copies the rest.
    if parts <= 1 and not long and (
            not native or a.flags.c_contiguous and b.flags.c_contiguous and
            gemm_kernel.address(a.dtype, False, False, a.shape[0], b.shape[1]) is None):
        return np.matmul(a, b, out=out)
    if native:
        if out is None:
            out = np.empty((a.shape[0], b.shape[1]), a.dtype)
        return gemm(a, b, out, 1.0, 0.0, split)
    if out is None:
        out = np.empty((a.shape[0], b.shape[1]), np.result_type(a, b))
    _run_parts(_np_matmul, _pieces(a, b, out, parts, by_columns))
    return out


def _long_float32(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether a float32 product's inner extent is longer than one float32 chain of the
    library's may be (workers.FLOAT32_LONG_INNER)."""
    return a.dtype == np.float32 and b.dtype == np.float32 and \
        a.shape[1] > workers.FLOAT32_LONG_INNER


def _blocked_product(a: np.ndarray, b: np.ndarray, out: np.ndarray | None,
                     alpha: float = 1.0, beta: float = 0.0) -> np.ndarray:
    """alpha * a @ b + beta * out for float32 operands with a long inner extent, where the
    native workers are missing: as their gemm_part computes it, one library product per block
    of `workers.inner_block` k's, summed in float64 and rounded once. The library's own
    product sums all k's of an element in one float32 chain: a conv weight gradient whose
    batch the compiled graph folds into k (ir/passes/products.py) was up to 11 times further
    from exact than eager's (docs/notes/accurate-numerics.md)."""
    block = workers.inner_block(a.shape[1])
    total = np.zeros((a.shape[0], b.shape[1]), np.float64)
    for start in range(0, a.shape[1], block):
        total += np.matmul(a[:, start:start + block], b[start:start + block])
    if alpha != 1.0:
        total *= alpha
    if out is None:
        return total.astype(np.float32)
    if beta:
        total += beta * out.astype(np.float64)
    out[...] = total
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


def _gemm_operands(a: np.ndarray, b: np.ndarray, out: np.ndarray, beta: float):
    """(a, b, a's layout, b's layout) as BLAS reads them (see `_layout`), or None when the
    product is done already (an empty one)."""
    rows, inner = a.shape
    if rows == 0 or b.shape[1] == 0:
        return None
    if inner == 0:
        if beta == 0:
            out[...] = 0
        else:
            out *= beta
        return None
    layout_a, layout_b = _layout(a), _layout(b)
    if layout_a is None:
        a = np.ascontiguousarray(a)
        layout_a = _layout(a)
    if layout_b is None:
        b = np.ascontiguousarray(b)
        layout_b = _layout(b)
    return a, b, layout_a, layout_b


def _pieces(a, b, out, parts: int, by_columns: bool) -> list:
    """(a, b, out) blocks of a product split into `parts` along rows or columns of out."""
    if parts <= 1:
        return [(a, b, out)]
    extent = out.shape[1] if by_columns else out.shape[0]
    bounds = [extent * part // parts for part in range(parts + 1)]
    if by_columns:
        return [(a, b[:, start:stop], out[:, start:stop])
                for start, stop in zip(bounds[:-1], bounds[1:])]
    return [(a[start:stop], b, out[start:stop]) for start, stop in zip(bounds[:-1], bounds[1:])]


def gemm_records(a: np.ndarray, b: np.ndarray, out: np.ndarray, alpha: float, beta: float,
                 parts: int = 1, by_columns: bool = False, keep: list | None = None) -> list:
    """The native calls (tuples of the words workers.py's gemm_part reads) that compute
    out = alpha * a @ b + beta * out in `parts` blocks, for `native_gemm` dtypes; [] when
    nothing is left to compute. The records hold raw addresses: copies made of the operands
    are appended to `keep`, which the caller holds until the calls have run."""
    operands = _gemm_operands(a, b, out, beta)
    if operands is None:
        return []
    a, b, (transpose_a, lead_a), (transpose_b, lead_b) = operands
    if keep is not None:
        keep.extend((a, b))
    generated = gemm_kernel.address(out.dtype, transpose_a == _TRANSPOSE,
                                    transpose_b == _TRANSPOSE, *out.shape)
    function = generated or _gemm_address(out.dtype)
    # 2: float32 through the library, whose sums over a long inner extent gemm_part cuts into
    # blocks (the generated gemm blocks them itself).
    kind = 1 if out.dtype != np.float32 else 0 if generated else 2
    lead_out = out.strides[0] // out.itemsize
    alpha_bits, beta_bits = workers.float_bits(alpha), workers.float_bits(beta)
    # A block keeps its matrix's layout and leading dimension: each part's addresses are the
    # whole's moved by its offset.
    address = workers.data_address
    a_address, b_address, out_address = address(a), address(b), address(out)
    rows, columns = out.shape
    inner = a.shape[1]
    extent = columns if by_columns else rows
    records = []
    parts = max(parts, 1)
    for part in range(parts):
        start, stop = extent * part // parts, extent * (part + 1) // parts
        if by_columns:
            shape = (rows, stop - start)
            addresses = (a_address, b_address + start * b.strides[1],
                         out_address + start * out.strides[1])
        else:
            shape = (stop - start, columns)
            addresses = (a_address + start * a.strides[0], b_address,
                         out_address + start * out.strides[0])
        # The words workers.py's gemm_part reads.
        records.append((function, kind, _ROW_MAJOR, transpose_a, transpose_b, *shape, inner,
                        alpha_bits, addresses[0], lead_a, addresses[1], lead_b, beta_bits,
                        addresses[2], lead_out))
    return records


def batched_records(a: np.ndarray, b: np.ndarray, out: np.ndarray,
                    keep: list | None = None) -> list | None:
    """The native calls computing out = a @ b for batched operands (more than 2 dims, the
    batch dims broadcast as np.matmul's): one gemm record per matrix of `out`, in C order
    (rows of an int64 array). None where a matrix cannot be read where it lies (a copy
    would be memory the native program cannot name) or has an inner extent of 0."""
    batch = out.shape[:-2]
    firsts, offsets = [], []
    for operand in (a, b, out):
        skip = len(batch) - (operand.ndim - 2)
        first = operand[(0,) * (operand.ndim - 2)]
        if _layout(first) is None:
            return None
        firsts.append(first)
        # The byte offset of each matrix of the batch: 0 along broadcast (or missing) dims.
        offset = np.zeros(batch, np.int64)
        for axis, extent in enumerate(batch):
            if axis >= skip and operand.shape[axis - skip] != 1:
                shape = [1] * len(batch)
                shape[axis] = extent
                offset = offset + (np.arange(extent, dtype=np.int64) *
                                   operand.strides[axis - skip]).reshape(shape)
        offsets.append(offset.reshape(-1))
    if a.shape[-1] == 0:
        return None
    template = gemm_records(*firsts, 1.0, 0.0, keep=keep)
    if keep is not None:
        keep.extend((a, b))
    records = np.repeat(np.array(template, np.int64), len(offsets[0]), axis=0)
    for name, offset in zip(("a", "b", "c"), offsets):
        records[:, _RECORD_POSITIONS[name]] += offset
    return list(records)


_RECORD_POSITIONS = {name: index for index, (name, _) in enumerate(workers.GEMM_RECORD)}


def _gemm_address(dtype) -> int | None:
    """The address of the CBLAS gemm with 64-bit integers for `dtype`, or None."""
    dtype = np.dtype(dtype)
    key = ("gemm address", dtype)
    if key not in _state:
        function = _gemm_function(dtype) if dtype in _GEMM_NAMES else None
        wide = function is not None and function.argtypes[3] is ctypes.c_int64
        _state[key] = ctypes.cast(function, ctypes.c_void_p).value if wide else None
    return _state[key]


def native_gemm(dtype) -> bool:
    """Whether products of this dtype run on the native workers (workers.py): a gemm with
    64-bit integers and the workers both present."""
    return _gemm_address(dtype) is not None and workers.shared() is not None


def prepare_product(dtype, shape: tuple) -> None:
    """Start compiling the native ?gemm for a plan's product of this NumPy dtype and result
    shape, where it will run on it (gemm_kernel.prepare): the schedule calls this as it
    begins. Shapes with symbolic sizes are skipped."""
    if len(shape) < 2 or not all(isinstance(extent, int) for extent in shape[-2:]):
        return
    if np.dtype(dtype) in _GEMM_NAMES and native_gemm(dtype):
        gemm_kernel.prepare(dtype, shape[-2], shape[-1])


def run_records(records: list) -> None:
    """Run native gemm calls (gemm_records), one per core at a time."""
    native = workers.shared()
    for start in range(0, len(records), native.parts):
        table = np.array(records[start:start + native.parts], np.int64)
        native.run(native.gemm_part, workers.data_address(table), len(table))


def split_of(a: np.ndarray, b: np.ndarray) -> tuple:
    """(parts, split by columns) for the product of these 2-D operands, as `matmul` and
    `gemm` split it."""
    return _parts(*a.shape, b.shape[1], native_gemm(a.dtype))


def gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray, alpha: float, beta: float,
         split: bool = True, record=None) -> np.ndarray:
    """out = alpha * (a @ b) + beta * out, in out's storage, for 2-D arrays of one dtype that
    `gemm_supported` accepts; out must be row-major and overlap neither operand. With beta 0
    the old values of out are not read. Large products are split over the cores as in
    `matmul`. `record`: a program.Recording the native calls are reported to."""
    with _ONE_THREAD:
        return _gemm(a, b, out, alpha, beta, split, record)


def _gemm(a, b, out, alpha, beta, split, record) -> np.ndarray:
    native = native_gemm(out.dtype)
    parts, by_columns = _parts(*a.shape, b.shape[1], native) if split else (1, False)
    if native:
        keep: list = []
        records = gemm_records(a, b, out, alpha, beta, parts, by_columns, keep)
        run_records(records)
        if record is not None:
            record.gemm(records, *keep, out)
        return out
    if record is not None:
        record.refuse("a product ran through ctypes")
    if _long_float32(a, b):
        return _blocked_product(a, b, out, alpha, beta)
    function = _gemm_function(out.dtype)
    operands = _gemm_operands(a, b, out, beta)
    if operands is None:
        return out
    a, b = operands[:2]

    def call(a_part, b_part, out_part):
        transpose_a, lead_a = _layout(a_part)
        transpose_b, lead_b = _layout(b_part)
        function(_ROW_MAJOR, transpose_a, transpose_b, out_part.shape[0], out_part.shape[1],
                 a.shape[1], alpha, a_part.ctypes.data, lead_a, b_part.ctypes.data, lead_b,
                 beta, out_part.ctypes.data, out_part.strides[0] // out_part.itemsize)

    _run_parts(call, _pieces(a, b, out, parts, by_columns))
    return out
