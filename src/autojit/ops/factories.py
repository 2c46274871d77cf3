"""Tensor's factory methods: new_tensor, new_zeros, new_ones, new_full and new_empty.

Each makes a new leaf tensor (no history) with the dtype and device of the tensor it is called
on unless `dtype=` or `device=` say otherwise, through the creation functions of
tensor/creation.py; ops/tensor_methods.py attaches them to Tensor.
"""

from __future__ import annotations

import warnings

from ..tensor import creation, dtypes
from ..tensor.tensor import Tensor

_COPY_WARNING = ("To copy construct from a tensor, it is recommended to use "
                 "sourceTensor.detach().clone() or "
                 "sourceTensor.detach().clone().requires_grad_(True), rather than "
                 "tensor.new_tensor(sourceTensor).")


def _options(self: Tensor, dtype, device, requires_grad: bool) -> tuple:
    dtype = self.dtype if dtype is None else dtypes.to_dtype(dtype)
    if requires_grad and not dtype.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    if device is None:  # a symbolic x's device is eager's (ir/trace_devices.py)
        device = self.device
    return dtype, device


def new_tensor(self: Tensor, data, *, dtype=None, device=None, requires_grad: bool = False):
    """A new tensor holding a copy of `data`, with x's dtype and device unless given."""
    if isinstance(data, Tensor):
        warnings.warn(_COPY_WARNING, UserWarning, stacklevel=2)
        data = data.detach()
    dtype, device = _options(self, dtype, device, requires_grad)
    return creation.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def _per_sample(method: str, self: Tensor, size: tuple, *args, **options):
    """functorch's rule for new_zeros, new_ones, new_empty and new_full on a tensor batched by
    vmap: one result per sample, materialized (not a broadcast), so that an in-place write of
    a batched value into it works, as in torch."""
    from .batching import batched

    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    physical, level = self._value.physical, self._value.level
    made = getattr(physical, method)((physical.shape[0], *size), *args, **options)
    return batched(made, level)


def new_zeros(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False):
    """A tensor of zeros of `size` (integers or one sequence), with x's dtype and device
    unless given."""
    if self._batched:
        return _per_sample("new_zeros", self, size, dtype=dtype, device=device,
                           requires_grad=requires_grad)
    dtype, device = _options(self, dtype, device, requires_grad)
    return creation.zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_ones(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False):
    """A tensor of ones of `size` (integers or one sequence), with x's dtype and device unless
    given."""
    if self._batched:
        return _per_sample("new_ones", self, size, dtype=dtype, device=device,
                           requires_grad=requires_grad)
    dtype, device = _options(self, dtype, device, requires_grad)
    return creation.ones(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty(self: Tensor, *size, dtype=None, device=None, requires_grad: bool = False):
    """An uninitialized tensor of `size` (integers or one sequence), with x's dtype and device
    unless given."""
    if self._batched:
        return _per_sample("new_empty", self, size, dtype=dtype, device=device,
                           requires_grad=requires_grad)
    dtype, device = _options(self, dtype, device, requires_grad)
    return creation.empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_full(self: Tensor, size, fill_value, *, dtype=None, device=None,
             requires_grad: bool = False):
    """A tensor of `size` (a sequence) filled with `fill_value`, with x's dtype and device
    unless given."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    if self._batched:
        return _per_sample("new_full", self, (tuple(size),), fill_value, dtype=dtype,
                           device=device, requires_grad=requires_grad)
    dtype, device = _options(self, dtype, device, requires_grad)
    return creation.full(tuple(size), fill_value, dtype=dtype, device=device,
                         requires_grad=requires_grad)
