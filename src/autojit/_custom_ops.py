"""autojit._custom_ops: torch._custom_ops' names, the older API of custom operators that
libraries still import (torchvision's fake impls call `get_ctx()`); autojit/library.py holds
the operators."""

from __future__ import annotations

from .library import custom_op, get_ctx, register_fake

__all__ = ["custom_op", "get_ctx", "impl_abstract"]


def impl_abstract(qualname: str, func=None, *, lib=None, _stacklevel: int = 1):
    """The fake impl of `qualname`, as register_fake gives it (the older name)."""
    return register_fake(qualname, func, lib=lib)
