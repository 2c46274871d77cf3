"""The Tensor methods that take torch's `memory_format=`: clone, contiguous, is_contiguous and
the layout half of `to`, with Tensor.stride; the layouts themselves are tensor/memory_format.py's.

A copy into a format is the clone primitive (so its gradient is the identity and it traces as
one) whose fresh result is then laid out in that format's order: only the strides differ,
never the values. Inside a compiled function a traced tensor has the layout eager would give
its array (ir/eager_layout.py): is_contiguous, stride and contiguous answer and copy as eager
does, and the compiled run lays its results out so.
"""

from __future__ import annotations

import numpy as np

from ..tensor.memory_format import (
    check_format,
    contiguous_format,
    is_laid_out,
    laid_out,
    layout_for,
    order_of,
    preserve_format,
    strides_of,
    suggested_format,
)
from ..tensor.state import state
from ..tensor.tensor import Tensor, normalize_dim
from . import elementwise as ew


def relaid(result: Tensor, order) -> Tensor:
    """`result`, a fresh tensor no one else holds, with its data laid out in `order`."""
    data = result._payload
    if order is not None and data.__class__ is np.ndarray:  # GPU arrays stay contiguous
        result._payload = laid_out(data, order)
    return result


def clone(input, *, memory_format=preserve_format) -> Tensor:  # noqa: A002
    """A copy of x in storage of its own (the gradient passes through unchanged), laid out as
    `memory_format` says: preserve_format (the default) keeps x's layout where x is dense."""
    if memory_format is preserve_format and input.__class__ is Tensor:
        data = input._payload
        if data.__class__ is not np.ndarray or data.flags.c_contiguous and 1 not in data.shape:
            return ew.clone(input)  # the common case: nothing to lay out
    check_format(memory_format, "clone")
    x = ew.operand(input, "clone")
    order = layout_for(memory_format, x._payload if isinstance(x, Tensor) else None,
                       x.ndim if isinstance(x, Tensor) else 0)
    return relaid(ew.clone(x), order)


def contiguous(self, memory_format=contiguous_format) -> Tensor:
    """x in `memory_format`'s layout (row-major by default): x itself when it already is,
    else a copy."""
    check_format(memory_format, "contiguous")
    if memory_format is preserve_format:
        memory_format = contiguous_format
    order = order_of(memory_format, self.ndim)
    data = self._payload
    if data is None:
        # Traced: eager's array may be laid out otherwise (`x.t()`), and then eager copies.
        data = _eager_array(self)
        if data is None or is_laid_out(data, memory_format):
            return self
        result = ew.clone(self)
        state.tracer.note_eager_layout(result, order)
        return result
    if is_laid_out(data, memory_format):
        return self
    return relaid(ew.clone(self), order)


def _eager_array(tensor: Tensor):
    """For a traced tensor, an array laid out as eager's array for it (ir/eager_layout.py:
    the trace then depends on the layouts of the inputs it comes from, which are guarded);
    None outside a trace, or for a tensor that is no value of the trace (vmap's)."""
    tracer = state.tracer
    return None if tracer is None else tracer.eager_layout(tensor)


def is_contiguous(self, memory_format=contiguous_format) -> bool:
    """Whether x's elements are in `memory_format`'s layout (dims of size 1 aside, as torch
    counts them); a symbolic tensor is contiguous."""
    check_format(memory_format, "is_contiguous")
    data = self._payload if self._payload is not None else _eager_array(self)
    if data is None:
        return memory_format in (contiguous_format, preserve_format)
    return is_laid_out(data, contiguous_format if memory_format is preserve_format
                       else memory_format)


def stride(self, dim=None):
    """The step in elements between neighbours along each dim (or along `dim`), as torch.stride:
    (W*H*C, 1, W*C, C) for an (N, C, H, W) tensor in channels_last."""
    data = self._payload
    if data is None:
        data = _eager_array(self)
        if data is not None and data.flags.c_contiguous:
            data = None  # the sizes of a dynamic shape: strides that follow them
    if data is None:  # a symbolic tensor eager lays out row-major
        steps, step = [], 1
        for size in reversed(tuple(self.shape)):
            steps.append(step)
            step *= max(int(size), 1)
        steps = tuple(reversed(steps))
    else:
        steps = strides_of(data)
    return steps if dim is None else steps[normalize_dim(dim, len(steps))]


def to_format(result: Tensor, source: Tensor, memory_format, copied: bool) -> Tensor:
    """The layout step of Tensor.to: `result` (source converted, or source itself when nothing
    changed) in `memory_format`'s layout; a copy only where the layout changes or `copied`."""
    if memory_format is None or memory_format is preserve_format:
        return result
    check_format(memory_format, "to")
    order = order_of(memory_format, result.ndim)
    data = result._payload
    # torch's rule: x is kept where the format it suggests is the one asked for.
    if data is None or suggested_format(data) is memory_format:
        return result
    if result is source and not copied:
        result = ew.clone(result)
    return relaid(result, order)
