"""torch.onnx.symbolic_helper under the drop-in: `parse_args`, the decorator symbolic functions
are declared with, and the helpers they call, which raise NotImplementedError if called (only
an export would call them, and autojit has no ONNX exporter: _symbolics.py)."""

from __future__ import annotations

import functools

from ._symbolics import module_getattr


def parse_args(*arg_descriptors):
    """The decorator of a symbolic function, naming how each argument is read ("v", "i",
    "f", ...): the function is kept as it is (an export would convert its arguments)."""
    def decorator(function):
        @functools.wraps(function)
        def wrapper(g, *args, **kwargs):
            return function(g, *args, **kwargs)

        wrapper._arg_descriptors = arg_descriptors
        return wrapper

    return decorator


__getattr__ = module_getattr("symbolic_helper")
