"""Ops on meta tensors (tensor/meta.py): each primitive's result is a meta tensor of the shape
and dtype its registry entry's rules give, computed without data.

Installed as a device dispatch of the registry (registry.add_device_dispatch) when the first
meta tensor is made, ahead of CUDA's. Composites, VJPs and in-place ops are written from
primitives, so they follow; an op whose result's size depends on values (nonzero, unique,
masked_select) reads them and raises torch's "Cannot copy out of meta tensor". A meta tensor
meets only meta tensors and 0-d tensors of other devices (torch's rule for scalars).
"""

from __future__ import annotations

from ..tensor import meta
from ..tensor.meta import MetaArray
from ..tensor.tensor import Tensor
from . import registry


def dispatch(op, inputs: tuple, attrs: dict):
    """op's meta result, or None when no input is a meta tensor."""
    found = False
    for x in inputs:
        if isinstance(x, Tensor) and x._payload.__class__ is MetaArray:
            found = True
            break
    if not found:
        return None
    for x in inputs:
        if isinstance(x, Tensor) and x._payload.__class__ is not MetaArray and x.ndim > 0:
            raise RuntimeError(f"Tensor on device {x.device} is not on the expected device "
                               "meta!")
    try:
        shape = op.shape(*registry.input_shapes(inputs), **attrs)
    except (ValueError, IndexError, TypeError) as error:
        raise registry.shape_error(op, inputs, attrs, error) from None
    out_dtype = op.dtype(inputs, attrs)[1]
    data = MetaArray(tuple(shape), out_dtype.numpy)
    if op.view and isinstance(inputs[0], Tensor):
        return registry.view_tensor(data, out_dtype, op, inputs[0], attrs)
    return Tensor._make(data, out_dtype)


def _install() -> None:
    # Ahead of CUDA's dispatch, which would take a meta array for a device one.
    registry.add_device_dispatch(dispatch, first=True)


meta.DISPATCH = _install

