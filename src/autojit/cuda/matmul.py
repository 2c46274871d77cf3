"""Hand-written CUDA kernels (handwritten.py compiles them): tiled shared-memory matmul, and
the gather of layout ops.

matmul multiplies (batch, m, k) by (batch, k, n) C-contiguous operands, one output tile of
TILE x TILE per block: each step loads a tile of each operand into shared memory and every
thread accumulates one output element, so each operand element is read from global memory
n/TILE (or m/TILE) times instead of n (or m). The batch runs along the grid's z axis; a batch
dim broadcast in one operand is materialized first (an expand, eager.py). When CuPy is
importable (the `cublas` extra) float32 and float64 products go to cuBLAS through
`cupy.matmul` instead, on the same buffers (CuPy reads `__cuda_array_interface__`, no copy) and
the same stream (the legacy default stream, where numba launches autojit's kernels), so the
order of work is kept without a synchronization. CuPy is never used under the simulator; if
its first product fails (a CuPy built for another CUDA version), one warning says so and the
tiled kernel takes over.

gather writes `out[i] = source[map[i] - 1]`, or 0 where `map[i]` is 0: cat and embed_slice
(eager.py builds the map).
"""

from __future__ import annotations

import math
import warnings

from .array import CudaArray
from .availability import is_simulator
from .conversions import convert_array
from .counters import COUNTS
from .handwritten import block_size, grid_size, hand_written

MATMUL_SOURCE = '''
def matmul_kernel(a, b, out, m, k, n, a_batch, b_batch, a_row, a_col, b_row, b_col):
    tile_a = cuda.shared.array((TILE, TILE), DTYPE)
    tile_b = cuda.shared.array((TILE, TILE), DTYPE)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    batch = cuda.blockIdx.z
    a_base = batch * a_batch
    b_base = batch * b_batch
    total = DTYPE(0)
    for start in range(0, k, TILE):
        inner = start + tx
        if row < m and inner < k:
            tile_a[ty, tx] = a[a_base + row * a_row + inner * a_col]
        else:
            tile_a[ty, tx] = 0
        inner = start + ty
        if inner < k and col < n:
            tile_b[ty, tx] = b[b_base + inner * b_row + col * b_col]
        else:
            tile_b[ty, tx] = 0
        cuda.syncthreads()
        for i in range(TILE):
            total = DTYPE(total + tile_a[ty, i] * tile_b[i, tx])
        cuda.syncthreads()
    if row < m and col < n:
        out[batch * m * n + row * n + col] = total
'''

GATHER_SOURCE = '''
def gather_kernel(index, source, out):
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        position = index[i]
        out[i] = source[position - 1] if position > 0 else 0
'''

def matmul(a: CudaArray, b: CudaArray, shape: tuple) -> CudaArray:
    """a @ b for CUDA arrays of one dtype, with `shape` the broadcast result shape."""
    batch_shape = tuple(shape[:-2])
    m, n = shape[-2], shape[-1]
    k = a.shape[-1]
    batch = math.prod(batch_shape)
    a = convert_array(a, batch_shape + a.shape[-2:], a.dtype)
    b = convert_array(b, batch_shape + b.shape[-2:], b.dtype)
    out = CudaArray(shape, a.dtype, device_index=a.device_index)
    if out.size == 0:
        return out
    if k == 0:
        out[...] = 0
        return out
    a_flat, a_transposed = _operand(a)
    b_flat, b_transposed = _operand(b)
    if a.dtype.kind == "f" and _cublas((a_flat, a_transposed), (b_flat, b_transposed), out,
                                       (batch, m, k, n)):
        return out
    function, tile = hand_written("matmul_kernel", MATMUL_SOURCE, a.dtype)
    grid = (-(-n // tile), -(-m // tile), batch)
    COUNTS["launches"] += 1
    # Element strides of a row and a column of each operand: a transposed one is read in place.
    a_strides = (1, m) if a_transposed else (k, 1)
    b_strides = (1, k) if b_transposed else (n, 1)
    function[grid, (tile, tile)](a_flat, b_flat, out.flat, m, k, n, m * k, k * n, *a_strides,
                                 *b_strides)
    return out


def _operand(x: CudaArray) -> tuple:
    """(flat array, transposed) a product reads the matrix `x` through: for the transpose
    of a whole contiguous matrix (a strided view, `w.t()`, as every backward product of a
    linear layer reads its weight), that matrix's own memory, transposed, so that the view's
    copy (a launch and a buffer) is never made; else x's elements."""
    view = x._view
    if view is not None and x.ndim == 2:
        source, strides, offset = view
        if offset == 0 and strides == (1, x.shape[0]) and source._view is None and \
                source.size == x.size:
            return source.flat, True
    return x.flat, False


_CUPY: list = []  # [the cupy module, or None where it is missing or failed], once looked up


def cupy_module():
    """CuPy, where it is importable and a GPU (not the simulator) runs the kernels; else
    None."""
    if not _CUPY:
        module = None
        if not is_simulator():
            try:
                import cupy as module
            except ImportError:
                module = None
        _CUPY.append(module)
    return _CUPY[0]


def _cublas(a: tuple, b: tuple, out: CudaArray, sizes: tuple) -> bool:
    """out = a @ b through CuPy's cuBLAS, in place on out's buffer; False where CuPy is not
    there (the caller then runs the tiled kernel). `a` and `b`: (flat array, transposed), as
    `_operand` gives them; a transposed operand is a transposed CuPy view of its matrix."""
    cupy = cupy_module()
    if cupy is None:
        return False
    batch, m, k, n = sizes
    try:
        with cupy.cuda.Device(out.device_index):
            cupy.matmul(_cupy_matrix(cupy, a, batch, m, k), _cupy_matrix(cupy, b, batch, k, n),
                        out=cupy.asarray(out.flat).reshape(batch, m, n))
    except Exception as error:  # noqa: BLE001 - any failure of CuPy's: the kernel takes over
        _CUPY[0] = None
        warnings.warn(f"autojit: CuPy's matmul failed ({type(error).__name__}: {error}); "
                      "CUDA products run on autojit's tiled kernel from now on",
                      RuntimeWarning, stacklevel=2)
        return False
    COUNTS["launches"] += 1
    COUNTS["cublas"] += 1
    return True


def _cupy_matrix(cupy, operand: tuple, batch: int, rows: int, columns: int):
    flat, transposed = operand
    if transposed:
        return cupy.asarray(flat).reshape(batch, columns, rows).transpose(0, 2, 1)
    return cupy.asarray(flat).reshape(batch, rows, columns)


def gather(index: CudaArray, source: CudaArray, out: CudaArray) -> None:
    if out.size == 0:
        return
    function, _ = hand_written("gather_kernel", GATHER_SOURCE)
    block = block_size()
    COUNTS["launches"] += 1
    function[grid_size(-(-out.size // block)), block](
        index.flat, source.flat if source.size else out.flat, out.flat)
