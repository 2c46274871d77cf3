"""torch.overrides under the drop-in: the `__torch_function__` protocol as torch runs it for
functions written in Python (has_torch_function, handle_torch_function, wrap_torch_function,
is_tensor_like), which libraries with a tensor-like type of their own call.

autojit's ops themselves do not dispatch to `__torch_function__` (their arguments are
autojit's tensors and Python values); a library function that asks handle_torch_function does
dispatch, as under torch. TorchFunctionMode, and the tables of torch's overridable functions,
have no counterpart.
"""

from __future__ import annotations

import functools

from ..tensor.tensor import Tensor


def _overrides(value) -> bool:
    method = getattr(type(value), "__torch_function__", None)
    return method is not None and not isinstance(value, type)


def has_torch_function(relevant_args) -> bool:
    """Whether an argument's type defines __torch_function__."""
    return any(_overrides(value) for value in relevant_args)


def has_torch_function_unary(value) -> bool:
    return _overrides(value)


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def is_tensor_like(inp) -> bool:
    """A Tensor, or an object whose type defines __torch_function__."""
    return isinstance(inp, Tensor) or hasattr(type(inp), "__torch_function__")


def is_tensor_method_or_property(func) -> bool:
    return any(func is member or getattr(member, "fget", None) is func
               for member in vars(Tensor).values())


def _overloaded(relevant_args) -> list:
    """The arguments whose types define __torch_function__, one per type, a subclass before
    its bases (torch's order)."""
    found: list = []
    types: list = []
    for value in relevant_args:
        kind = type(value)
        if not _overrides(value) or kind in types:
            continue
        position = len(found)
        for index, other in enumerate(types):
            if issubclass(kind, other):
                position = index
                break
        found.insert(position, value)
        types.insert(position, kind)
    return found


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the first __torch_function__ among the arguments' types that does not return
    NotImplemented, as torch does: `type.__torch_function__(public_api, types, args, kwargs)`."""
    overloaded = _overloaded(relevant_args)
    types = tuple(type(value) for value in overloaded)
    for value in overloaded:
        result = type(value).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__qualname__", getattr(public_api, "__name__", public_api))
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


__all__ = ["handle_torch_function", "has_torch_function", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function"]
