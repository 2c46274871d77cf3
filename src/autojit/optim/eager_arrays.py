"""An eager optimizer step on the parameters' arrays: the gate that says when an update may run
as NumPy ufuncs written in place, and the bookkeeping of the tensors it writes.

An optimizer's update is written in autojit ops (adam.py), so that a traced training step
records it as graph nodes. Eagerly, each of those ops is a dispatch: an AdamW update is about
twenty of them per parameter, most on the whole parameter, and in the eager transformer step
the optimizer took twice torch's time. Where nothing but the values is at stake (grad mode off
and no mode that changes how ops run: `state.dispatch` is PLAIN, as under the optimizer's
no_grad; CPU arrays of one float dtype; no inference tensor, which only the ops' error
reaches), the update calls the same ufuncs on the same operands in the same order, writing
into the state's arrays with `out=`, so the bits are those of the ops
(tests/test_optim_eager_arrays.py). What a write through an in-place op does besides
(the saved-tensor hook that may copy the old value, the version counter) `written` does.
Anything else (tracing, vmap, CUDA, bfloat16, a tensor learning rate) runs the ops.
"""

from __future__ import annotations

import numpy as np

from ..ops import inplace
from ..tensor.state import PLAIN, state

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_NUMBERS = (int, float)


def arrays_of(*tensors) -> list | None:
    """The NumPy arrays of these tensors, when an update may run on them directly: eager,
    grad mode off, each a writable CPU array of the same float32 or float64 dtype and shape,
    none an inference tensor or batched; else None."""
    if state.dispatch != PLAIN:
        return None
    first = tensors[0]._payload
    if first.__class__ is not np.ndarray or first.dtype not in _FLOATS:
        return None
    dtype, shape = first.dtype, first.shape
    arrays = []
    for tensor in tensors:
        data = tensor._payload
        if data.__class__ is not np.ndarray or data.dtype != dtype or data.shape != shape or \
                tensor._is_inference or tensor._batched or not data.flags.writeable:
            return None
        arrays.append(data)
    return arrays


def numbers(*values) -> bool:
    """Whether every hyperparameter is a Python number (a tensor one runs the ops)."""
    return all(value.__class__ in _NUMBERS for value in values)


def written(tensor) -> None:
    """What an in-place op does around its write, for a tensor about to be written: the
    saved-tensor hook (autograd.graph's allow_mutation_on_saved_tensors), then the version."""
    hook = inplace.BEFORE_WRITE
    if hook is not None:
        hook(tensor)
    tensor._bump_version()


# Parameters from this many elements update through one native routine (codegen/cpu/
# eager_update.py) instead of thirteen NumPy calls: the same bits, one pass over the arrays.
NATIVE_ELEMENTS = 4096


def native_adam(arrays: list, tensors: list, group: dict, correction2, scale) -> bool:
    """Adam's update of `arrays` (param, exp_avg, exp_avg_sq, [max_exp_avg_sq,] grad, as
    arrays_of gave them) by the native routine, with each write counted as the NumPy calls
    count it; False where it does not apply (small or non-contiguous arrays, a hook before
    writes, no native code), and nothing is written then."""
    param = arrays[0]
    if param.size < NATIVE_ELEMENTS or inplace.BEFORE_WRITE is not None or \
            not all(array.flags.c_contiguous for array in arrays) or \
            any(np.may_share_memory(arrays[-1], array) for array in arrays[:-1]):
        return False  # (a gradient that is the parameter is read after the decay's write)
    from ..codegen.cpu import eager_update

    beta1, beta2 = group["betas"]
    lr, weight_decay = group["lr"], group["weight_decay"]
    decoupled = weight_decay != 0 and group["decoupled_weight_decay"]
    flags = (bool(group["maximize"]), decoupled, weight_decay != 0 and not decoupled,
             len(arrays) == 5)
    # Each Python number rounded to the dtype, as NumPy rounds a scalar operand.
    dtype = param.dtype.type
    scalars = tuple(float(dtype(value)) for value in (
        1 - lr * weight_decay, weight_decay, 1 - beta1, beta2, 1 - beta2, correction2,
        group["eps"], scale))
    if not eager_update.adam(arrays, flags, scalars):
        return False
    if decoupled:
        tensors[0]._bump_version()
    for tensor in (tensors[1], tensors[2], tensors[2], *tensors[3:4], tensors[0]):
        tensor._bump_version()
    return True
