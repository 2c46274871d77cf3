"""Views of CUDA tensors: results of reshape, expand, permute and slice that share memory with
their input, as torch's views do, so that a write through either one is seen by the other.

Kernels read and write flat, C-contiguous device arrays (array.py), so a view takes one of
two forms, chosen from its layout over its source: the element strides and offset the op's
NumPy impl gives a stand-in array with the source's layout (never read, only measured):
- contiguous (a reshape, a leading index, a slice of rows): a CudaArray over the matching
  slice of the source's flat buffer. Nothing is copied; reads and writes share the memory.
- strided (a transpose, a column, an expand): a CudaArray with its own contiguous copy, made
  at its first read, that remembers how it is copied (`_view`: source, strides, offset); a
  product reads a transposed matrix in place instead (matmul.py). A write to the view writes
  the copy and scatters it into the source; reading it after the source's memory was written
  (through the base, or another view) copies it again first. Every write to a CUDA array
  counts on its root array (`_generation`), and a strided view compares that count with the
  one it last copied at.
ops/registry.py then makes the result a view tensor as on the CPU (shared version counter,
`_base`), so autograd's rules for in-place writes to views apply unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from ..codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step, contiguous_strides
from ..ops.elementwise import CLONE
from ..tensor import dtypes
from .array import CudaArray
from .counters import COUNTS
from .handwritten import block_size, grid_size, hand_written
from .kernels import compile_kernel

STRIDED_WRITE_SOURCE = '''
def strided_write_kernel(target, values, shape, strides, ndim, offset, total):
    for i in range(cuda.grid(1), total, cuda.gridsize(1)):
        rest = i
        position = offset
        for back in range(ndim):
            axis = ndim - 1 - back
            position += (rest % shape[axis]) * strides[axis]
            rest //= shape[axis]
        target[position] = values[i]
'''


def layout(array: CudaArray) -> tuple:
    """(contiguous source array, element strides, element offset) that `array` reads."""
    if array._view is not None:
        return array._view
    return array, contiguous_strides(array.shape), 0


def view_layout(op, array: CudaArray, attrs: dict):
    """(source, strides, offset) of the op's result as a view, or None when its NumPy impl
    copies. The stand-in has the input's layout over a one-byte buffer (byte strides equal
    element strides) and is never read."""
    source, strides, offset = layout(array)
    base = np.empty(1, np.uint8)
    stand_in = np.lib.stride_tricks.as_strided(base, array.shape, strides, writeable=False)
    result = op.impl(stand_in, **attrs)
    if not isinstance(result, np.ndarray) or not _made_from(result, base):
        return None
    moved = result.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return source, tuple(result.strides), offset + moved


def _made_from(array: np.ndarray, base: np.ndarray) -> bool:
    """Whether array views base's memory. Not np.may_share_memory: the stand-in reaches past
    its one byte, so bounds say nothing; and a copy NumPy makes may be a view of the copy."""
    while array is not None:
        if array is base:
            return True
        array = getattr(array, "base", None)
    return False


def is_contiguous(shape: tuple, strides: tuple) -> bool:
    return all(extent == 1 or stride == expected for extent, stride, expected
               in zip(shape, strides, contiguous_strides(shape), strict=True))


def make_view(op, array: CudaArray, attrs: dict, shape: tuple):
    """The op's result as a view of `array`, or None when the op copies."""
    found = view_layout(op, array, attrs)
    if found is None:
        return None
    source, strides, offset = found
    count = math.prod(shape)
    if is_contiguous(shape, strides):
        return CudaArray.alias(source, shape, offset, count)
    result = CudaArray(shape, array.dtype, device_index=array.device_index)
    result._view = (source, strides, offset)
    # Copied at its first read (`CudaArray.flat` sees a generation it was not copied at), not
    # here: a product reads a transposed matrix in place (matmul.py), so the transposed
    # weight a backward product reads is never copied.
    result._synced = source._root()._generation - 1
    return result


def refresh(view: CudaArray) -> None:
    """Copy the view's elements from its source into its own buffer (a strided copy)."""
    source, strides, offset = view._view
    view._synced = source._root()._generation
    if not view.size:
        return
    dtype = dtypes.from_numpy(view.dtype)
    kernel = Kernel(name="view", shape=view.shape)
    kernel.inputs.append(KernelInput(dtype, strides))
    kernel.steps.append(Step(CLONE, (Operand("input", 0),), {}, None, dtype))
    kernel.outputs.append(KernelOutput(0, dtype))
    compile_kernel(kernel)([source.flat[offset:]], [view._flat])


def write_through(view: CudaArray) -> None:
    """Scatter the view's own buffer into its source (after a write to the view)."""
    source, strides, offset = view._view
    if view.size:
        function, _ = hand_written("strided_write_kernel", STRIDED_WRITE_SOURCE)
        block = block_size()
        padded = tuple(view.shape) + (1,)
        COUNTS["launches"] += 1
        function[grid_size(-(-view.size // block)), block](
            source.flat, view._flat, padded, tuple(strides) + (0,), view.ndim, offset,
            view.size)
    root = source._root()
    root._generation += 1
    view._synced = root._generation


CudaArray._refresh_view = staticmethod(refresh)  # a stale strided view's read (array.py)
CudaArray._write_through = staticmethod(write_through)  # a write to a strided view
