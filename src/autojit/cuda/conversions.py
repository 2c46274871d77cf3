"""The one-kernel conversions of CUDA arrays: a broadcast and a cast (`convert_array`), a fill
with one value (`fill_array`).

CudaArray's `[...] =` runs these (installed on it below, array.py); matmul.py and indexing.py
bring their operands to a shape and dtype with `convert_array`, and eager.py reads an input
through `broadcast_strides`. Each is a Kernel (codegen/kernel.py) of one step, compiled and
launched by kernels.run_kernel.
"""

from __future__ import annotations

import numpy as np

from ..codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
from ..ops.elementwise import CAST, CLONE
from ..tensor import dtypes
from .array import CudaArray
from .kernels import run_kernel


def broadcast_strides(shape: tuple, space: tuple) -> tuple:
    """The element strides that read an array of `shape` broadcast over `space`."""
    strides, running = [], 1
    for extent in reversed(shape):
        strides.append(0 if extent == 1 else running)
        running *= extent
    strides = (0,) * (len(space) - len(shape)) + tuple(reversed(strides))
    return strides


def convert_array(array: CudaArray, shape: tuple, dtype) -> CudaArray:
    """`array` broadcast to `shape` and cast to `dtype` (a new array unless nothing changes)."""
    target = dtypes.from_numpy(np.dtype(dtype))
    source = dtypes.from_numpy(array.dtype)
    if array.shape == tuple(shape) and source is target:
        return array
    kernel = Kernel(name="convert", shape=tuple(shape))
    kernel.inputs.append(KernelInput(source, broadcast_strides(array.shape, tuple(shape))))
    kernel.steps.append(Step(CAST, (Operand("input", 0),), {"dtype": target},
                             None, target))
    kernel.outputs.append(KernelOutput(0, target))
    return run_kernel(kernel, [array])[0]


def fill_array(array: CudaArray, value) -> None:
    """Write `value` into every element of `array`."""
    dtype = dtypes.from_numpy(array.dtype)
    kernel = Kernel(name="fill", shape=array.shape)
    kernel.steps.append(Step(CLONE, (Operand("literal", value),), {}, dtype, dtype))
    kernel.outputs.append(KernelOutput(0, dtype))
    array[...] = run_kernel(kernel, [])[0]


CudaArray._convert_array = staticmethod(convert_array)  # CudaArray's `[...] =` (array.py)
CudaArray._fill_array = staticmethod(fill_array)
