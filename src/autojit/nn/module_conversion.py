"""Module's dtype and device conversions: to(), float(), double(), half(), bfloat16(), type(),
cuda() and cpu(), which Module (module.py) takes from ConversionMixin, and the _apply they all
go through.

_apply converts every parameter and its .grad in place, giving the same object the converted
storage (so an optimizer built before a move still updates it), and replaces each buffer; a
subclass overriding _apply sees each conversion of its parent, as torch's does. to()'s
memory_format step is module_memory.py's.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from ..tensor import dtypes
from ..tensor.tensor import Tensor
from .module_memory import laid_out
from .parameter import is_lazy

if TYPE_CHECKING:
    from .module import Module

__all__ = ["ConversionMixin"]


def _adopt(tensor: Tensor, converted: Tensor) -> None:
    """Give a leaf tensor the storage (and dtype) of `converted` in place, keeping the object:
    Parameters stay the same objects after module.to(), so optimizers built before still see
    them."""
    tensor._payload = converted._payload
    tensor._dtype = converted._dtype
    tensor._bump_version()


class ConversionMixin:
    """Module methods that change the dtype or the device of parameters and buffers."""

    def _apply(self, convert, recurse: bool = True) -> Module:
        """convert(tensor): the tensor converted (a new tensor), or the tensor itself (or None)
        to leave it; as torch's `fn`, it always returns a tensor for a tensor, so a subclass's
        own `_apply` may convert its plain attributes with it (gpytorch's constraints do).
        Every parameter and its .grad take their converted storage in place; buffers are
        replaced. As torch's, it recurses through each child's own ``_apply`` (a subclass
        overriding it sees every conversion of its parent), then converts this module's
        tensors."""
        if recurse:
            for module in self.children():
                module._apply(convert)
        self._apply_here(convert)
        return self

    def _apply_here(self, convert) -> None:
        """_apply on this module's own parameters and buffers (not its children's)."""
        for param in self._parameters.values():
            if param is None:
                continue
            if is_lazy(param):  # no data yet: the dtype and device are kept for later
                param._convert_placeholder(convert)
                continue
            for tensor in (param, param._grad):
                if tensor is not None:
                    tensor._concrete("Module.to()")
                    converted = convert(tensor)
                    if converted is not None and converted is not tensor:
                        _adopt(tensor, converted)
        for name, buffer in self._buffers.items():
            if buffer is not None and is_lazy(buffer):
                buffer._convert_placeholder(convert)
            elif buffer is not None:
                converted = convert(buffer)
                if converted is not None and converted is not buffer:
                    self._buffers[name] = converted

    def _apply_dtype(self, convert) -> Module:
        """Change the dtype of every parameter (in place) and buffer for which convert(tensor)
        returns a new dtype."""

        def converted(tensor):
            dtype = convert(tensor)
            if dtype is None or dtype is tensor.dtype:
                return tensor
            return tensor.detach().to(dtype)  # a cast kernel for a CUDA tensor

        return self._apply(converted)

    def to(self, *args, **kwargs) -> Module:
        """Move the parameters and buffers to a device and/or convert the floating-point ones
        to a dtype, in place.

        Accepts ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)`` and the
        keywords ``dtype=``, ``device=`` and ``memory_format=`` (which lays out the 4-d and 5-d
        parameters and buffers, as torch's: ``autojit.channels_last``). Parameters keep their
        identity, so an optimizer built before the move still updates them.
        """

        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        memory_format = kwargs.pop("memory_format", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() received an invalid combination of arguments: {kwargs}")
        for arg in args:
            if isinstance(arg, Tensor):
                dtype, device = arg.dtype, arg.device
            elif isinstance(arg, dtypes.DType):
                dtype = arg
            elif isinstance(arg, bool):
                continue  # non_blocking given positionally
            else:
                device = arg
        if dtype is not None:
            dtype = dtypes.to_dtype(dtype)
            if dtype.category < dtypes.FLOATING:
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose "
                              "design may change, and some modules might not work as expected "
                              "when using complex tensors as parameters or buffers.",
                              UserWarning, stacklevel=2)
        if device is not None:
            self._move_to(device)
        if memory_format is not None:
            self._apply(lambda t: laid_out(t, memory_format))
        if dtype is None:
            return self
        return self._apply_dtype(lambda t: dtype if t.dtype.category >= dtypes.FLOATING else
                                 None)

    # float(), cpu() and their kin apply their conversion directly, as torch's do, never
    # through self.to(): a subclass whose to() calls one of them must not recurse.
    def _move_to(self, device) -> Module:
        from ..tensor.device import check_device

        device = check_device(device)
        return self._apply(lambda t: t if t.device == device else t.detach().to(device))

    def _cast_floating(self, dtype) -> Module:
        return self._apply_dtype(lambda t: dtype if t.dtype.is_floating_point else None)

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to float32."""
        return self._cast_floating(dtypes.float32)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to float64."""
        return self._cast_floating(dtypes.float64)

    def half(self) -> Module:
        """Cast floating-point parameters and buffers to float16."""
        return self._cast_floating(dtypes.float16)

    def bfloat16(self) -> Module:
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._cast_floating(dtypes.bfloat16)

    def type(self, dst_type) -> Module:
        """Cast all parameters and buffers to dst_type."""
        dtype = dtypes.to_dtype(dst_type)
        return self._apply_dtype(lambda t: dtype)

    def cuda(self, device=None) -> Module:
        """Move the parameters and buffers to the GPU (in place)."""
        if isinstance(device, int):
            device = f"cuda:{device}"
        return self._move_to("cuda" if device is None else device)

    def cpu(self) -> Module:
        """Move the parameters and buffers to the CPU (in place)."""
        return self._move_to("cpu")
