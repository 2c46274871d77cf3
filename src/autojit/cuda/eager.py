"""Eager ops on CUDA tensors: each primitive becomes one kernel launch.

ops.registry.run_eager hands every primitive to `dispatch` once a CUDA tensor exists; it
returns None when no input is on a GPU (the NumPy path goes on), raises torch's error when
inputs sit on different devices (a 0-d CPU tensor may join, as in torch), and otherwise runs
the op by its lowering:

- Elementwise: a one-step Kernel (codegen/kernel.py) over the broadcast shape, inputs read through
  broadcast strides, rendered by codegen/cuda/render.py from the op's expression template.
- Reductions that combine values (sum, prod, amax, amin; any and all over truth values): a
  one-output reducing Kernel, by the lowering's `combine`.
- Layout ops that are views (reshape, expand, permute, slice): views sharing the input's
  memory (views.py), made view tensors as on the CPU. Other layout ops (cat, embed_slice):
  a gather through an index map computed once on the host from the NumPy impl applied to
  element numbers, kept on the device per shape.
- Extern calls, by their routine (indexing.EXTERN_ROUTINES): matmul as a tiled shared-memory
  kernel (batched through the grid's z axis) or cuBLAS; index, index_put, gather and
  scatter_add as hand-written kernels (indexing.py). An operand in the "host_index" role (the
  index of x[index] and index_put) may be a CPU tensor, as in torch.
- Reductions that give an index (argmax, argmin): a hand-written kernel (indexing.py).
- Other extern routines (those no CUDA kernel implements yet): the NumPy impl on host copies,
  the result copied back, with one HostFallbackWarning per op.
- Ops with a Decomposition (softmax, log_softmax and their backward formulas): the
  primitives of the decomposition, each dispatched here in turn.

Everything else raises NotImplementedError naming the op and cuda, as does any op on bfloat16
tensors (docs/notes/bfloat16.md). See docs/notes/cuda.md.
"""

from __future__ import annotations

import math

import numpy as np

from ..codegen.kernel import CheckFailed, Kernel, KernelInput, KernelOutput, Operand, Step
from ..ops.elementwise import ADD, CLONE
from ..ops.registry import (
    Decomposition,
    Elementwise,
    Extern,
    Layout,
    Reduction,
    decompose,
    host_index_operand,
    run_eager,
    shape_error,
    view_tensor,
)
from ..tensor import dtypes
from ..tensor.device import MIXED_DEVICES
from ..tensor.once import warn_once
from ..tensor.tensor import Tensor
from .array import CudaArray
from .conversions import broadcast_strides, convert_array
from .counters import COUNTS
from .indexing import EXTERN_ROUTINES, arg_extreme
from .kernels import run_kernel
from .matmul import gather
from .views import make_view


def dispatch(op, inputs: tuple, attrs: dict):
    """The op run on the GPU, or None when no input is a CUDA tensor."""
    device_index = None
    on_cpu = False
    host_indices = host_index_operand(op)
    for position, x in enumerate(inputs):
        if isinstance(x, Tensor):
            data = x._payload
            if data.__class__ is np.ndarray:
                on_cpu = on_cpu or (data.ndim > 0 and position != host_indices)
            elif data is not None:
                device_index = data.device_index
    if device_index is None:
        return None
    if on_cpu:
        raise RuntimeError(MIXED_DEVICES.format(f"cuda:{device_index}"))
    lowering = op.lowering
    if lowering.__class__ is Decomposition:
        return decompose(op, inputs, attrs)
    try:
        shape = tuple(op.shape(*[tuple(x.shape) if isinstance(x, Tensor) else ()
                                 for x in inputs], **attrs))
    except (ValueError, IndexError, TypeError) as error:
        raise shape_error(op, inputs, attrs, error) from None
    compute, out_dtype = op.dtype(inputs, attrs)
    if out_dtype is dtypes.bfloat16 or any(isinstance(x, Tensor) and x._dtype is dtypes.bfloat16
                                           for x in inputs):
        # The kernels would compute in float32 without rounding to bfloat16 (its values are
        # float32 in memory, tensor/dtypes.py): refused rather than silently wrong.
        raise NotImplementedError(f"{op.name}: bfloat16 is not supported on cuda tensors (move "
                                  "the tensor to the CPU, or convert it with .float())")
    if out_dtype.category == dtypes.COMPLEX:
        # A complex result is made on the host, whose copy to the device raises the device's
        # error (cuda/array.py): CUDA kernels are generated for real values.
        host = tuple(Tensor._make(x._host(op.name), x._dtype) if isinstance(x, Tensor) else x
                     for x in inputs)
        data = CudaArray.from_host(run_eager(op, host, attrs)._payload, device_index)
    elif isinstance(lowering, Elementwise):
        data = _elementwise(op, inputs, attrs, shape, compute, out_dtype)
    elif isinstance(lowering, Reduction):
        if lowering.combine is None:
            data = arg_extreme(op, inputs, attrs, shape, out_dtype)
        else:
            data = _reduce(op, inputs[0], attrs, shape, out_dtype)
    elif isinstance(lowering, Layout):
        data = _layout(op, inputs, attrs, shape, out_dtype)
    elif isinstance(lowering, Extern) and lowering.routine in EXTERN_ROUTINES:
        data = EXTERN_ROUTINES[lowering.routine](op, inputs, attrs, shape, out_dtype)
    elif isinstance(lowering, Extern):
        data = _on_host(op, inputs, attrs, device_index)
    else:
        raise NotImplementedError(f"{op.name}: not implemented for cuda tensors yet (the CUDA "
                                  "target runs elementwise, reduction, layout, indexing and "
                                  "matmul ops)")
    if op.view and data._root() is inputs[0]._payload._root():
        return view_tensor(data, out_dtype, op, inputs[0], attrs)
    return Tensor._make(data, out_dtype)


class HostFallbackWarning(UserWarning):
    """An op on CUDA tensors ran on the host (its routine has no CUDA kernel yet)."""




def _on_host(op, inputs: tuple, attrs: dict, device_index: int) -> CudaArray:
    """An extern routine with no CUDA kernel (a sort, a scan) run by its NumPy impl on host
    copies of the inputs, its result copied back: correct, and slow by two transfers and a
    synchronization; warned once per op."""
    # keyed by the op itself, not its name (docs/notes/op-facts.md)
    warn_once(("cuda host", op), f"{op.name} on cuda tensors runs on the host (its "
              f"{op.lowering.routine} routine has no CUDA kernel yet): the inputs are copied to "
              "the host and the result back", HostFallbackWarning, stacklevel=4)
    host = tuple(Tensor._make(x._host(op.name), x._dtype) if isinstance(x, Tensor) else x
                 for x in inputs)
    return CudaArray.from_host(run_eager(op, host, attrs)._payload, device_index)


def _device_data(x: Tensor) -> CudaArray:
    data = x._payload
    return data if data.__class__ is CudaArray else CudaArray.from_host(data)


def _elementwise(op, inputs, attrs, shape, compute, out_dtype) -> CudaArray:
    kernel = Kernel(name=op.name, shape=shape)
    arrays, operands = [], []
    for x in inputs:
        if isinstance(x, Tensor):
            operands.append(Operand("input", len(arrays)))
            arrays.append(_device_data(x))
            kernel.inputs.append(KernelInput(x._dtype, broadcast_strides(tuple(x.shape), shape)))
        else:
            operands.append(Operand("literal", x))
    kernel.steps.append(Step(op, tuple(operands), dict(attrs), compute, out_dtype))
    kernel.outputs.append(KernelOutput(0, out_dtype))
    try:
        return run_kernel(kernel, arrays)[0]
    except CheckFailed:
        raise _host_error(op, inputs, attrs) from None


def _host_error(op, inputs, attrs) -> Exception:
    """The error of an op whose kernel reported one (an index out of range, an integer
    division by 0): the op's NumPy impl on host copies of the inputs raises eager's error,
    with the message the kernel cannot make (docs/notes/errors-in-kernels.md)."""
    host = tuple(Tensor._make(x._host(op.name), x._dtype) if isinstance(x, Tensor) else x
                 for x in inputs)
    try:
        run_eager(op, host, attrs)
    except Exception as error:  # noqa: BLE001 - the error the op raises
        return error
    return RuntimeError(f"{op.name}: the CUDA kernel reported an error that the NumPy "
                        "reference does not raise")


def _reduce(op, x: Tensor, attrs, shape, out_dtype) -> CudaArray:
    lowering = op.lowering
    value_dtype = dtypes.bool_ if lowering.logical else x._dtype
    space = tuple(x.shape)
    kernel = Kernel(name=op.name, shape=space, reduce_axes=tuple(sorted(
        d % len(space) for d in attrs["dim"])) if space else ())
    kernel.inputs.append(KernelInput(x._dtype, broadcast_strides(space, space)))
    kernel.steps.append(Step(CLONE, (Operand("input", 0),), {}, None, value_dtype))
    kernel.outputs.append(KernelOutput(0, out_dtype, lowering.combine))
    return run_kernel(kernel, [_device_data(x)], [shape])[0]


# ---- layout ---------------------------------------------------------------------------------

_MAPS: dict = {}


def _index_map(op, inputs, attrs, shape) -> CudaArray:
    """Per output element, 1 + its position in the inputs laid end to end (0: a zero)."""
    key = (op.name, tuple(tuple(x.shape) for x in inputs), repr(sorted(attrs.items())))
    found = _MAPS.get(key)
    if found is None:
        numbered, start = [], 1
        for x in inputs:
            count = math.prod(x.shape)
            numbered.append(np.arange(start, start + count, dtype=np.int64).reshape(x.shape))
            start += count
        host = np.ascontiguousarray(op.impl(*numbered, **attrs), dtype=np.int64)
        found = _MAPS[key] = CudaArray.from_host(host.reshape(shape))
    return found


def _layout(op, inputs, attrs, shape, out_dtype) -> CudaArray:
    x = inputs[0]
    if op.view and len(inputs) == 1:
        view = make_view(op, _device_data(x), attrs, shape)
        if view is not None:
            return view
    sources = [convert_array(_device_data(t), tuple(t.shape), out_dtype.numpy)
               for t in inputs if isinstance(t, Tensor)]
    if len(sources) == 1:
        joined = sources[0]
    else:
        joined = CudaArray((sum(s.size for s in sources),), out_dtype.numpy)
        start = 0
        for source in sources:
            if source.size:
                COUNTS["device_copies"] += 1
                joined.flat[start:start + source.size].copy_to_device(source.flat)
            start += source.size
    result = CudaArray(shape, out_dtype.numpy)
    gather(_index_map(op, inputs, attrs, shape), joined, result)
    return result


# ---- for CudaArray's `+=` and min/max (array.py) -----------------------------------------

def add_arrays(a: CudaArray, b: CudaArray) -> CudaArray:
    x, y = Tensor._make(a, dtypes.from_numpy(a.dtype)), Tensor._make(b, dtypes.from_numpy(
        b.dtype))
    return dispatch(ADD, (x, y), {})._payload


CudaArray._dispatch = staticmethod(dispatch)  # CudaArray.min and max (array.py)
CudaArray._add_arrays = staticmethod(add_arrays)  # CudaArray's `+=`
