"""The `out=` argument of the ops that take one: the result written into a given tensor.

An op computes its result out of place as usual; `write_out` then checks the `out=` tensor as
torch does (no autograd through out=, an output of another shape is resized, with torch's
deprecation warning when it held elements), and writes the result into it through the in-place
machinery (inplace.py), so a write to a captured tensor inside a compiled function becomes an
update of that tensor, as any in-place op does. The dtype an op requires of `out` differs from
op to op in torch, with messages of its own, so each op checks it before calling here.
"""

from __future__ import annotations

import warnings

from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .inplace import apply_inplace

# torch's names of the dtypes in "Expected out tensor to have dtype float" (C type names).
C_TYPE_NAMES = dtypes.C_TYPE_NAMES
# torch's scalar type names ("expected scalar_type Float but found Double").
SCALAR_TYPE_NAMES = dtypes.SCALAR_TYPE_NAMES


def check_out_type(name: str, out) -> None:
    """TypeError, as torch's argument parser gives it, unless `out` is a Tensor."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")


def check_out_pair(name: str, out) -> tuple:
    """The (values, indices) pair of an op returning both, as a tuple of two Tensors."""
    if not isinstance(out, (tuple, list)) or len(out) != 2 or not all(
            isinstance(item, Tensor) for item in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    return tuple(out)


def check_same_dtype(out: Tensor, dtype) -> None:
    """torch's check of an out tensor whose dtype must be the result's own."""
    if out.dtype is not dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {C_TYPE_NAMES[dtype.name]}, but "
                           f"got {C_TYPE_NAMES[out.dtype.name]} instead")


def check_no_grad(name: str, inputs) -> None:
    """torch refuses out= where autograd would have to record the write."""
    if not state.grad_enabled:
        return
    if any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")


def write_out(name: str, out: Tensor, result: Tensor) -> Tensor:
    """Write `result` into `out` (resized to the result's shape where it differs) and return
    out."""
    shape = tuple(result.shape)
    if tuple(out.shape) != shape:
        if state.tracer is not None or out._data is None:
            from ..tensor.graph_break import graph_break

            graph_break(f"{name}(out=...) resizing its output tensor", needs_data=False)
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
                "outputs will not be resized unless they have zero elements. You can explicitly "
                "reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).", UserWarning, stacklevel=3)
        # New storage of the result's shape; views of the old storage no longer see `out`.
        out._data = result.detach().to(out.dtype).clone()._data
        out._bump_version()
        return out
    return apply_inplace(out, name, lambda source: result.to(out.dtype))
