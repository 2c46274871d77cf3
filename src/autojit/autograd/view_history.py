"""A view's autograd history after its base (or a sibling view) was written in place:
refresh_view rebuilds the view's grad_fn by applying its view op again to its refreshed
source, as torch regenerates the grad_fn of views of modified bases; the view's tensor hooks
and retain_grad follow it to the new node. graph.record and gradient_edge call it for a view
whose version moved since its grad_fn was made, and Tensor.requires_grad reads through it."""

from __future__ import annotations

from ..tensor.state import state
from ..tensor.tensor import Tensor


def refresh_view(view: Tensor) -> None:
    """Regenerate a view's grad_fn after its storage was written in place.

    An in-place op on a base (or on another view of it) changes the values the view shows, so
    the view's old grad_fn no longer describes it: it is rebuilt by applying the view op again
    to its (refreshed) source, as torch does for views of modified bases.
    """
    source, op, attrs = view._view_source
    if source._base is not None and source._view_version != source._version_counter.value:
        refresh_view(source)
    view._view_version = view._version_counter.value
    if not source._requires_grad:
        return
    from ..ops.registry import bind

    previous = state.grad_enabled
    state.grad_enabled = True
    try:
        rebuilt = bind(op, (source,), attrs)
    finally:
        state.grad_enabled = previous
    _move_tensor_hooks(view, rebuilt.grad_fn)
    view.grad_fn = rebuilt.grad_fn
    view._output_nr = 0
    view._requires_grad = True


def _move_tensor_hooks(view: Tensor, node) -> None:
    """The view's hooks and retain_grad follow it to its regenerated grad_fn.

    The hook containers move as they are, so that handles returned earlier still remove their
    hooks. A view op's node has one output, so output numbers stay valid.
    """
    old = view.grad_fn
    if old is None or old.output_count != 1:
        return
    if old._tensor_hooks:
        node._tensor_hooks, old._tensor_hooks = old._tensor_hooks, None
    if old._retained:
        node._retained, old._retained = old._retained, None
