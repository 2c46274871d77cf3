"""Indexing on CUDA tensors: argmax/argmin, index, index_put, gather, scatter_add kernels.

eager.dispatch sends these primitives here: extern calls by their routine (EXTERN_ROUTINES,
keyed by registry.Extern.routine, matmul included), argmax/argmin as the reductions with no
combine. Each runs hand-written numba.cuda kernels (compiled through matmul.hand_written) on
flat device arrays:

- argmax/argmin: one block per kept position; its threads stride over the reduced axis keeping
  (best value, first index), then combine in shared memory. NaN wins and ties keep the lower
  index, as NumPy's argmax/argmin do.
- index (x[i_1, ..., i_k]) and index_put: one thread per position of the indexed result turns
  its coordinates into an offset of x (kept axes through x's strides, broadcast axes through
  the stacked index rows); index reads there, index_put writes there, or adds atomically
  when it accumulates.
- gather / scatter_add along a dim: the same, with the index tensor giving the coordinate on
  that dim; scatter_add adds atomically (cuda.atomic.add), so repeated indices accumulate.

Shapes and strides travel as tuples (numba specializes a kernel on their length), padded with
one 0 so that no tuple is empty. Negative indices wrap once, as in the NumPy reference. Bounds
are checked before the op runs (the check_index op of ops/indexing/checks.py); in a compiled
plan that check's failure is read only after the last step (plan.py), so these
kernels skip an index out of range rather than touch memory outside the tensor.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import dtypes
from ..tensor.determinism import alert_not_deterministic
from .array import CudaArray
from .conversions import convert_array
from .counters import COUNTS
from .handwritten import block_size, grid_size, hand_written
from .matmul import matmul as product

ARG_SOURCE = '''
def better(value, place, best, best_place, want_max):
    if best != best:
        return value != value and place < best_place
    if value != value:
        return True
    if value == best:
        return place < best_place
    return value > best if want_max else value < best

def arg_kernel(x, out, kept, extent, inner, want_max):
    values = cuda.shared.array(BLOCK, DTYPE)
    places = cuda.shared.array(BLOCK, np.int64)
    thread = cuda.threadIdx.x
    for position in range(cuda.blockIdx.x, kept, cuda.gridDim.x):
        base = (position // inner) * extent * inner + position % inner
        best = x[base]
        best_place = 0
        for place in range(thread, extent, BLOCK):
            value = x[base + place * inner]
            if better(value, place, best, best_place, want_max):
                best = value
                best_place = place
        values[thread] = best
        places[thread] = best_place
        cuda.syncthreads()
        width = BLOCK // 2
        while width > 0:
            if thread < width and better(values[thread + width], places[thread + width],
                                         values[thread], places[thread], want_max):
                values[thread] = values[thread + width]
                places[thread] = places[thread + width]
            cuda.syncthreads()
            width //= 2
        if thread == 0:
            out[position] = places[0]
        cuda.syncthreads()
'''

# The offset in x of position `i` of an indexed result: `shape` is the result's shape,
# `x_strides` give x's stride for kept axes (0 on broadcast axes), `row_strides` the index
# rows' stride for broadcast axes (0 on kept axes); each of the `rows` index rows then adds
# its (wrapped) index times x's stride on the dim it addresses.
INDEX_SOURCE = '''
def index_offset(i, indices, shape, x_strides, row_strides, dim_strides, dim_extents, ndim,
                 rows, count):
    rest = i
    offset = 0
    at = 0
    for back in range(ndim):
        axis = ndim - 1 - back
        coordinate = rest % shape[axis]
        rest //= shape[axis]
        offset += coordinate * x_strides[axis]
        at += coordinate * row_strides[axis]
    for row in range(rows):
        index = indices[row * count + at]
        if index < 0:
            index += dim_extents[row]
        if index < 0 or index >= dim_extents[row]:
            return -1
        offset += index * dim_strides[row]
    return offset

def index_kernel(x, indices, out, shape, x_strides, row_strides, dim_strides, dim_extents,
                 ndim, rows, count, total):
    for i in range(cuda.grid(1), total, cuda.gridsize(1)):
        offset = index_offset(i, indices, shape, x_strides, row_strides, dim_strides,
                              dim_extents, ndim, rows, count)
        if offset >= 0:
            out[i] = x[offset]

def index_put_kernel(out, values, indices, shape, x_strides, row_strides, dim_strides,
                     dim_extents, ndim, rows, count, total, accumulate):
    for i in range(cuda.grid(1), total, cuda.gridsize(1)):
        offset = index_offset(i, indices, shape, x_strides, row_strides, dim_strides,
                              dim_extents, ndim, rows, count)
        if offset < 0:
            continue
        if accumulate:
            cuda.atomic.add(out, offset, values[i])
        else:
            out[offset] = values[i]
'''

# Position i of `index` (shape `shape`) addresses x at the same coordinates except on `dim`,
# where the index gives the coordinate; `source_strides` read src at the same coordinates.
ALONG_SOURCE = '''
def along_offsets(i, index, shape, x_strides, source_strides, ndim, dim, extent):
    rest = i
    target = 0
    source = 0
    for back in range(ndim):
        axis = ndim - 1 - back
        coordinate = rest % shape[axis]
        rest //= shape[axis]
        source += coordinate * source_strides[axis]
        if axis == dim:
            coordinate = index[i]
            if coordinate < 0:
                coordinate += extent
            if coordinate < 0 or coordinate >= extent:
                return -1, source
        target += coordinate * x_strides[axis]
    return target, source

def gather_along_kernel(x, index, out, shape, x_strides, ndim, dim, extent, total):
    for i in range(cuda.grid(1), total, cuda.gridsize(1)):
        target, source = along_offsets(i, index, shape, x_strides, x_strides, ndim, dim, extent)
        if target >= 0:
            out[i] = x[target]

def scatter_add_kernel(out, index, src, shape, x_strides, source_strides, ndim, dim, extent,
                       total):
    for i in range(cuda.grid(1), total, cuda.gridsize(1)):
        target, source = along_offsets(i, index, shape, x_strides, source_strides, ndim, dim,
                                       extent)
        if target >= 0:
            cuda.atomic.add(out, target, src[source])
'''

ATOMIC_DTYPES = (np.float32, np.float64, np.int32, np.int64)


def _strides(shape) -> list:
    strides, running = [], 1
    for extent in reversed(shape):
        strides.append(running)
        running *= extent
    return strides[::-1]


def _padded(values) -> tuple:
    return tuple(int(v) for v in values) + (0,)


def _launch(name: str, source: str, devices: tuple, dtype, work: int):
    function, _ = hand_written(name, source, dtype, devices)
    block = block_size()
    COUNTS["launches"] += 1
    return function[grid_size(-(-work // block)), block]


def _flat(x) -> object:
    return x._payload.flat


def _on_device(x, dtype=None) -> CudaArray:
    """x's data on the device (index tensors may come from the host, as in torch)."""
    data = x._payload
    if data.__class__ is not CudaArray:
        data = CudaArray.from_host(data)
    return data if dtype is None else convert_array(data, data.shape, dtype)


# ---- argmax / argmin ----------------------------------------------------------------------------

def arg_extreme(op, inputs, attrs, shape, out_dtype) -> CudaArray:
    (x,) = inputs
    data = _on_device(x)
    if data.dtype == np.bool_:
        data = _on_device(x, np.int32)
    dims = attrs["dim"]
    out = CudaArray(shape, np.int64)
    if len(dims) == x.ndim:  # over everything: into the flattened tensor
        outer, extent, inner = 1, max(data.size, 1), 1
    else:
        axis = dims[0]
        outer = math.prod(x.shape[:axis])
        extent = x.shape[axis]
        inner = math.prod(x.shape[axis + 1:])
    kept = outer * inner
    if kept == 0:
        return out
    function, _ = hand_written("arg_kernel", "import numpy as np\n" + ARG_SOURCE, data.dtype,
                               ("better",))
    COUNTS["launches"] += 1
    function[grid_size(kept), block_size()](data.flat, out.flat, kept, extent, inner,
                                            op.lowering.kind == "argmax")
    return out


# ---- index / index_put --------------------------------------------------------------------------

def _index_plan(x_shape, index_shape, dims) -> tuple:
    """(result shape, kernel arguments after the arrays) of x[indices] on `dims`."""
    x_strides = _strides(x_shape)
    broadcast = tuple(index_shape[1:])
    kept_axes = [axis for axis in range(len(x_shape)) if axis not in dims]
    adjacent = list(dims) == list(range(dims[0], dims[0] + len(dims)))
    at = dims[0] if adjacent else 0
    roles = [("x", axis) for axis in kept_axes[:at]] + \
        [("row", position) for position in range(len(broadcast))] + \
        [("x", axis) for axis in kept_axes[at:]]
    broadcast_strides = _strides(broadcast)
    shape = [x_shape[index] if role == "x" else broadcast[index] for role, index in roles]
    result_x = [x_strides[index] if role == "x" else 0 for role, index in roles]
    result_rows = [broadcast_strides[index] if role == "row" else 0 for role, index in roles]
    arguments = (_padded(shape), _padded(result_x), _padded(result_rows),
                 _padded(x_strides[d] for d in dims), _padded(x_shape[d] for d in dims),
                 len(shape), len(dims), math.prod(broadcast))
    return tuple(shape), arguments


def index(op, inputs, attrs, shape, out_dtype) -> CudaArray:
    x, indices = inputs
    result_shape, arguments = _index_plan(tuple(x.shape), tuple(indices.shape), attrs["dims"])
    out = CudaArray(shape, out_dtype.numpy)
    if out.size:
        _launch("index_kernel", INDEX_SOURCE, ("index_offset",), None, out.size)(
            _flat(x), _on_device(indices).flat, out.flat, *arguments, out.size)
    return out


def index_put(op, inputs, attrs, shape, out_dtype) -> CudaArray:
    x, values, indices = inputs
    accumulate = attrs["accumulate"]
    target, arguments = _index_plan(tuple(x.shape), tuple(indices.shape), attrs["dims"])
    out = x._payload.copy()
    count = math.prod(target)
    if not count:
        return out
    if accumulate and out.dtype.kind == "f":
        # Float atomic adds of repeated indices sum in the order the threads run.
        alert_not_deterministic("index_put_ with accumulate=True on cuda")
    if accumulate and out.dtype.type not in ATOMIC_DTYPES:
        raise NotImplementedError(f"index_put with accumulate=True: dtype {out_dtype.name} is "
                                  "not supported on cuda (atomic adds take float32, float64, "
                                  "int32 and int64)")
    if hasattr(values, "_payload"):
        source = convert_array(_on_device(values), target, out.dtype)
    else:  # a Python scalar
        source = CudaArray(target, out.dtype)
        source[...] = dtypes.from_numpy(out.dtype).numpy.type(values)
    _launch("index_put_kernel", INDEX_SOURCE, ("index_offset",), None, count)(
        out.flat, source.flat, _on_device(indices).flat, *arguments, count, accumulate)
    return out


# ---- gather / scatter_add ---------------------------------------------------------------------

def _along_shape(x) -> tuple:
    # A 0-d x is addressed as shape (1,): its index holds 0 or -1 (checked before binding).
    return tuple(x.shape) or (1,)


def _strides_over(shape, ndim: int) -> tuple:
    """Contiguous strides of `shape`, with 0s in front up to `ndim` entries, padded."""
    strides = _strides(shape)
    return _padded([0] * (ndim - len(strides)) + strides)


def gather(op, inputs, attrs, shape, out_dtype) -> CudaArray:
    x, index_tensor = inputs
    dim = attrs["dim"]
    out = CudaArray(shape, out_dtype.numpy)
    if not out.size:
        return out
    x_shape = _along_shape(x)
    _launch("gather_along_kernel", ALONG_SOURCE, ("along_offsets",), None, out.size)(
        _flat(x), _on_device(index_tensor).flat, out.flat, _padded(index_tensor.shape),
        _strides_over(x_shape, index_tensor.ndim), index_tensor.ndim, dim, x_shape[dim],
        out.size)
    return out


def scatter_add(op, inputs, attrs, shape, out_dtype) -> CudaArray:
    x, index_tensor, src = inputs
    dim = attrs["dim"]
    out = x._payload.copy()
    count = math.prod(index_tensor.shape)
    if not count:
        return out
    if out.dtype.kind == "f":
        alert_not_deterministic("scatter_add_cuda_kernel")
    if out.dtype.type not in ATOMIC_DTYPES:
        raise NotImplementedError(f"scatter_add: dtype {out_dtype.name} is not supported on "
                                  "cuda (atomic adds take float32, float64, int32 and int64)")
    x_shape = _along_shape(x)
    _launch("scatter_add_kernel", ALONG_SOURCE, ("along_offsets",), None, count)(
        out.flat, _on_device(index_tensor).flat, _flat(src), _padded(index_tensor.shape),
        _strides_over(x_shape, index_tensor.ndim), _strides_over(src.shape, index_tensor.ndim),
        index_tensor.ndim, dim, x_shape[dim], count)
    return out


def matmul(op, inputs, attrs, shape, out_dtype) -> CudaArray:
    return product(inputs[0]._payload, inputs[1]._payload, shape)


# The CUDA kernels of the registry's extern routines (registry.Extern.routine).
EXTERN_ROUTINES = {"batched_gemm": matmul, "indexed_gather": index,
                   "indexed_scatter": index_put, "gather_along_dim": gather,
                   "scatter_add_along_dim": scatter_add}
