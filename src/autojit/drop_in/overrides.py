"""torch.overrides under the drop-in: the `__torch_function__` protocol's functions for code
written in Python (has_torch_function, handle_torch_function, wrap_torch_function,
is_tensor_like, get_default_nowrap_functions), which libraries with a tensor-like type of their
own call.

They answer from the protocol's core in the tensor layer (tensor/torch_function.py), which
also makes autojit's own functions, methods and operators dispatch to a subclass's
`__torch_function__` and to a TorchFunctionMode, as torch's do. The tables of torch's
overridable functions have no counterpart.
"""

from __future__ import annotations

import functools
import warnings

from ..tensor import torch_function as _core
from ..tensor.state import state
from ..tensor.tensor import Tensor
from ..tensor.torch_function import TorchFunctionMode, get_default_nowrap_functions

_DISABLED = _core.disabled_torch_function_impl


def has_torch_function(relevant_args) -> bool:
    """Whether a TorchFunctionMode is on, or an argument, other than a plain Tensor, has a type
    overriding `__torch_function__`, and dispatch to it is on (torch._C._has_torch_function)."""
    if state.function_modes and state.torch_function != _core.ALL_DISABLED:
        return True
    return _core.is_torch_function_enabled() and any(
        _core.overrides(type(value)) for value in relevant_args)


def has_torch_function_unary(value) -> bool:
    return has_torch_function((value,))


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def is_tensor_like(inp) -> bool:
    """A Tensor, or an object whose type defines __torch_function__."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func) -> bool:
    if getattr(func, "__name__", None) in ("__get__", "__set__"):
        return True
    return any(func is member or getattr(member, "fget", None) is func
               for member in vars(Tensor).values())


def _get_overloaded_args(relevant_args) -> list:
    """The arguments whose types define a `__torch_function__` other than the disabled one,
    plain Tensors included, one per type, a subclass before its bases (torch's order)."""
    found = None
    for value in relevant_args:
        kind = type(value)
        if getattr(kind, "__torch_function__", _DISABLED) is not _DISABLED:
            found = _core.insert_overloaded(found, value)
    return found or []


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the first __torch_function__ among the arguments' types that does not return
    NotImplemented, as torch does: `arg.__torch_function__(public_api, types, args, kwargs)`."""
    overloaded = _get_overloaded_args(relevant_args)
    kinds = tuple(type(value) for value in overloaded)
    modes = state.function_modes
    if modes and state.torch_function != _core.ALL_DISABLED:
        result = _core._call_mode(modes, public_api, overloaded, args, kwargs,
                                  getattr(public_api, "__name__", "function"))
        if result is not NotImplemented:
            return result
    for value in overloaded:
        method = value.__torch_function__
        if getattr(method, "__self__", None) is value:
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated and "
                          "will be an error in future, please define it as a classmethod.",
                          DeprecationWarning, stacklevel=2)
        result = method(public_api, kinds, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(value) for value in overloaded]}")


def wrap_torch_function(dispatcher):
    """Decorator: the function dispatches to __torch_function__ for the arguments
    `dispatcher(*args, **kwargs)` names."""
    def decorator(function):
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return function(*args, **kwargs)

        return wrapped

    return decorator


def _get_current_function_mode():
    """The innermost TorchFunctionMode on, or None."""
    modes = state.function_modes
    return modes[-1] if modes else None


def _get_current_function_mode_stack() -> list:
    return list(state.function_modes)


def _push_mode(mode) -> None:
    _core.push_mode(mode)


def _pop_mode():
    return _core.pop_mode()


__all__ = ["TorchFunctionMode", "get_default_nowrap_functions", "handle_torch_function",
           "has_torch_function",
           "is_tensor_like", "is_tensor_method_or_property", "wrap_torch_function"]
