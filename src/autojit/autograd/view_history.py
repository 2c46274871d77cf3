"""A view's autograd history after its base (or a sibling view) was written in place:
refresh_view rebuilds the view's grad_fn by applying its view op again to its refreshed
source, as torch regenerates the grad_fn of views of modified bases; retain_grad follows the view
to the new node, its tensor hooks stay on the old one (as in torch: a hook registered before the
write sees no gradient of the view's new value). graph.record and gradient_edge call it for a view
whose version moved since its grad_fn was made, and Tensor.requires_grad reads through it. A view
whose history torch refuses to rebuild (made with grad mode off, by unbind, ...) raises torch's
error there instead."""

from __future__ import annotations

from ..ops.view_creation import view_write_error
from ..tensor.state import state
from ..tensor.tensor import Tensor


def refresh_view(view: Tensor, snapshot: Tensor | None = None, strict: bool = True) -> None:
    """Regenerate a view's grad_fn after its storage was written in place.

    An in-place op on a base (or on another view of it) changes the values the view shows, so
    the view's old grad_fn no longer describes it: it is rebuilt by applying the view op again
    to its (refreshed) source, as torch does for views of modified bases.

    With `snapshot` (the copy of the view that an in-place write of the view itself is about to
    read), the rebuilt history goes to the snapshot and the view keeps its node: the write reads
    the view through its base, as torch's CopySlices does, so hooks registered on the view's old
    node do not see the gradient of the write.
    """
    source, op, attrs = view._view_source
    if view._creation_meta is not None and (source._requires_grad or
                                            view.grad_fn is not None):
        # A view whose history torch cannot rebuild (made with grad mode off, in inference
        # mode, by a function returning several views, in a custom Function): torch's grad_fn
        # of it raises once its base was written (handle_view_on_rebase), where a silent
        # rebuild would give gradients torch refuses. Not strict (the requires_grad of it, an
        # in-place write, which raises its own error): left as it is.
        if not strict:
            return
        raise RuntimeError(view_write_error(view, indirect=True))
    if source._base is not None and source._view_version != source._version_counter.value:
        refresh_view(source, strict=strict)
    if snapshot is None:
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
    if snapshot is not None:
        snapshot.grad_fn, snapshot._output_nr = rebuilt.grad_fn, 0
        return
    _move_retained(view, rebuilt.grad_fn)
    view.grad_fn = rebuilt.grad_fn
    view._output_nr = 0
    view._requires_grad = True


def _move_retained(view: Tensor, node) -> None:
    """The view's retain_grad follows it to its regenerated grad_fn; its tensor hooks stay with
    the old node, as torch's do (they see gradients of the values the view had when they were
    registered). A view op's node has one output, so output numbers stay valid."""
    old = view.grad_fn
    if old is None or old.output_count != 1:
        return
    if old._retained:
        node._retained, old._retained = old._retained, None
