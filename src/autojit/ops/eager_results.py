"""What run_eager (registry.py) hands an op's impl and makes of its result: the operands cast
to the compute dtype as torch converts tensors and Python numbers (bfloat16 and complex32
rounded, ints wrapped), a view tensor over a result that shares its input's memory, and the
complex32 results (rounded, or a read-only copy for view_as_real and view_as_complex).

registry.py re-exports view_tensor, retyped_copy and complex32_result, which the CUDA and meta
dispatches read from there.
"""

from __future__ import annotations

import numpy as np

from ..tensor import dtypes
from ..tensor.once import warn_once
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .complex_rules import user_stacklevel
from .view_creation import meta_of_new_view

_BFLOAT16 = dtypes.bfloat16  # stored as float32: results are rounded (tensor/dtypes.py)
_COMPLEX32 = dtypes.complex32  # stored as complex64, likewise (docs/notes/complex32.md)
_COMPLEX = dtypes.COMPLEX
COMPLEX32_WARNING = dtypes.COMPLEX32_WARNING


def complex32_result(values: np.ndarray) -> np.ndarray:
    """values (complex64) rounded to complex32's float16 parts, with torch's warning, given
    once per process, that its support of the dtype is experimental."""
    warn_once(COMPLEX32_WARNING, COMPLEX32_WARNING, UserWarning, stacklevel=user_stacklevel())
    return dtypes.round_to_complex32(values)


def retyped_copy(data: np.ndarray, out_dtype, source: Tensor) -> Tensor:
    """view_as_real of a complex32 tensor (float16 parts) or view_as_complex of a float16 one:
    no NumPy view holds one's elements as the other's (complex32 is stored as complex64), so
    the result is a copy, read-only, whose base is the source: a write through it raises
    inplace.RETYPED_COPY_ERROR instead of missing the source (docs/notes/complex32.md)."""
    data = np.array(data)
    if out_dtype is _COMPLEX32:
        data = complex32_result(data)
    data.flags.writeable = False
    out = Tensor._make(data, out_dtype)
    out._base = source if source._base is None else source._base
    return out


def _operand_arrays(op, inputs: tuple, compute: dtypes.DType) -> list:
    """The impl's operands: each tensor's data cast to the compute dtype, Python numbers
    converted as torch converts them."""
    arrays = []
    for position, x in enumerate(inputs):
        if isinstance(x, Tensor):
            data = x._payload
            if x._dtype is not compute and position not in op.uncast:
                data = data.astype(compute.numpy)
                if compute is _BFLOAT16 and not (
                        position == 1 and data.ndim == 0 and 1 in op.float32_scalars):
                    data = dtypes.round_to_bfloat16(data)
                elif compute is _COMPLEX32:
                    data = dtypes.round_to_complex32(data)
            arrays.append(data)
        elif compute is _COMPLEX32 and x.__class__ in (int, float, complex):
            # torch converts a Python number to complex32 first (`z + 0.0004883` adds 2**-11)
            if x.__class__ is int:
                dtypes.check_int_argument(x)
            arrays.append(complex(dtypes.round_to_complex32(x)))
        elif (compute is _BFLOAT16 and x.__class__ is float
              and position not in op.float32_scalars):
            # torch converts a Python number to the computation's dtype first.
            arrays.append(float(dtypes.round_to_bfloat16(x)))
        elif x.__class__ is int:
            # torch reads a Python int as an int64 or uint64 scalar (OverflowError beyond)
            # and converts it to the computation's dtype, wrapping (uint8 - 1 subtracts 255);
            # NumPy would raise for one out of the dtype's range.
            dtypes.check_int_argument(x)
            arrays.append(dtypes.wrap_integer(x, compute)
                          if compute.category == dtypes.INTEGER else x)
        else:
            arrays.append(x)
    return arrays


def view_tensor(data, out_dtype, op, source: Tensor, attrs: dict) -> Tensor:
    """A tensor over `data`, which shares source's memory: a view, sharing its version
    counter, with source's base as its own."""
    out = Tensor._make(data, out_dtype, source._version_counter)
    out._base = source if source._base is None else source._base
    if source._is_conj and out_dtype.category == _COMPLEX:
        out._is_conj = True  # torch's views keep the conjugate bit
    if source._is_neg:
        out._is_neg = True  # and the negative bit, of any dtype
    # What regenerates the view's grad_fn after an in-place write to its base or a sibling
    # view (autograd/graph.py: refresh_view).
    out._view_source = (source, op, attrs)
    out._view_version = out._version_counter.value
    if not state.grad_enabled or source._creation_meta is not None:
        out._creation_meta = meta_of_new_view(source)
        if out._is_inference and not source._is_inference:
            # a view of a normal tensor made in inference mode is a normal tensor (torch's
            # rule), whose creation meta forbids writing it in place with grad mode on
            out._is_inference = False
    return out
