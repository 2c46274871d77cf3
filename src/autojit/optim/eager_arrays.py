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
