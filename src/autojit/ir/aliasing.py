"""Views and aliases while tracing: which symbolic tensors share memory, and writes through them.

In eager mode a view (reshape, permute, slice, expand) shares its base's NumPy memory, so an
in-place write through the view changes the base, and the base and every other view see it.
A traced graph has no memory and no mutation (its in-place effects are written back after
the run, docs/compiler.md): here a write through a view becomes a new value of the view's
*root* (the tensor whose storage it is), computed by
scattering the written values into the root's current value at the positions the view
addresses. Readers of the root and of its other views then see the new value, because
Tracer.value_of regenerates a view from its source whenever the root was written after the
view's value was made. A root that is an argument or a captured tensor gets its final value
written back after each call (ir/trace_effects.py: Tracer.finish adds the "update" outputs).

Whether a view op aliases is decided exactly as eager decides it: the op's NumPy impl runs on a
stand-in, the root's real array (an argument or captured tensor) or, for a value the function
computed, an array laid out as eager's would be (eager_layout.py: row-major, unless the value
follows a non-row-major operand through elementwise and layout ops, as `a.clone()` of a
transposed `a` does), and aliases when the result shares the stand-in's memory. A reshape
that eager would copy is therefore not a view here either, and an expanded view is read-only,
so writing to it raises eager's error. See docs/notes/aliasing.md.
"""

from __future__ import annotations

import numpy as np

from ..ops.inplace import OVERLAP_ERROR, scatter_through
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .eager_layout import eager_stand_in


class TracedView:
    """How a symbolic tensor aliases a root: `op(source, **attrs)` (op None: an alias such as
    `detach()`, the whole root), the root tensor whose storage it shares, the root's graph value
    when this view's value was last made, and a NumPy stand-in laid out as eager's array."""

    __slots__ = ("source", "op", "attrs", "root", "root_value", "stand_in")

    def __init__(self, source: Tensor, op, attrs, root: Tensor, root_value, stand_in):
        self.source, self.op, self.attrs = source, op, attrs
        self.root, self.root_value, self.stand_in = root, root_value, stand_in


def _hint(extent):
    return getattr(extent, "hint", extent)


def _hinted(value):
    """attrs with every symbolic size replaced by the size it has in this call."""
    if isinstance(value, tuple):
        return tuple(_hinted(item) for item in value)
    if isinstance(value, list):
        return [_hinted(item) for item in value]
    return _hint(value)


def stand_in_of(tensor: Tensor, tracer):
    """A NumPy array laid out as eager's array for `tensor`, a root."""
    data = tensor._payload
    if data is None:
        data = tracer.argument_array(tensor)
    if data.__class__ is np.ndarray:
        return data
    if data is None:
        # A value computed while tracing: eager's layout follows its operands' through
        # elementwise and layout ops (eager_layout.py); a tensor written in place keeps the
        # layout of its storage, that of the value it had before.
        value = tracer.first_values.get(id(tensor), (None, tensor._value))[1]
        laid_out = eager_stand_in(tracer, value)
        if laid_out is not None:
            return laid_out
    # Row-major, as compiled kernels and NumPy's copies make arrays (or a device array).
    # np.empty touches no memory, whatever its size.
    return np.empty(tuple(_hint(extent) for extent in tensor.shape), dtype=np.uint8)


def make_view(tracer, source: Tensor, op, attrs: dict, out: Tensor) -> None:
    """Mark `out = op(source)` as a view of source's root when eager's result would alias."""
    link = source._traced_view
    if link is not None:
        root, stand_in = link.root, link.stand_in
    else:
        root, stand_in = source, stand_in_of(source, tracer)
    try:
        result = op.impl(stand_in, **{name: _hinted(value) for name, value in attrs.items()})
    except (ValueError, TypeError):  # a size only known symbolically: assume it aliases
        result = stand_in
    if not np.may_share_memory(result, stand_in):
        return  # eager copies here: out is a value of its own
    out._traced_view = TracedView(source, op, attrs, root, tracer.root_value(root), result)
    # The same autograd fields eager gives a view (ops/registry.py: view_tensor), so that the
    # checks and the grad_fn refresh after a write behave the same while tracing.
    out._version_counter = source._version_counter
    out._base = source if source._base is None else source._base
    out._view_source = (source, op, attrs)
    out._view_version = out._version_counter.value


def make_alias(tracer, source: Tensor, alias: Tensor) -> None:
    """`alias` shares all of source's storage (detach, .data): a write to either is a write
    to both."""
    if source._payload is None:
        # The source's value now: a view written through another view since it was made
        # (`g[0].zero_()` then `g.detach()`) is made again from its root first.
        alias._value = tracer.value_of(source)
    link = source._traced_view
    if link is not None:
        root, stand_in = link.root, link.stand_in
    else:
        root, stand_in = source, stand_in_of(source, tracer)
    alias._traced_view = TracedView(source, None, None, root, tracer.root_value(root), stand_in)


def chain_of(view: Tensor) -> list:
    """The (op, attrs) steps from the root to `view`, identity aliases left out."""
    steps = []
    while view._traced_view is not None:
        link = view._traced_view
        if link.op is not None:
            steps.append((link.op, link.attrs))
        view = link.source
    steps.reverse()
    return steps


def root_written_through(view: Tensor, result: Tensor) -> Tensor:
    """The root's new value after `result` is written into `view`, as autojit ops (graph nodes
    while tracing), without recording autograd: ops/inplace.py records that on its own."""
    link = view._traced_view
    if not link.stand_in.flags.writeable:
        raise RuntimeError(OVERLAP_ERROR)
    previous = state.grad_enabled
    state.grad_enabled = False
    try:
        return scatter_through(link.root, chain_of(view), result)
    finally:
        state.grad_enabled = previous
