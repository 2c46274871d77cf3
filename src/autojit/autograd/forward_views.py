"""Forward-mode AD through views and in-place writes: a view's tangent is the same view of its
base's tangent, so tangents share storage as their primals do (torch's rule, its note
[Forward Grad View/inplace]).

A tensor is linked to the tensor it views by its `_view_source` (ops/registry.py view_tensor),
or inside vmap, where a BatchedTensor's views are not tracked for reverse mode, by the
`_fw_source` that `mark_batched_view` gives it. make_dual's and unpack_dual's views are cut at
their level (`_fw_cut`): they share the primal's storage but not its tangent, as torch's
forward non-differentiable views. Following the links up from a tensor reaches its root.

Reading a linked tensor's tangent (`current_tangent`) gives the view of its source's current
tangent, made on first use and kept while the source's tangent stays the same object. An
in-place write (`write_tangents`, called by ops/inplace.py) puts the result's tangent where
the target's tangent lies in its root's tangent: in place when the root owns its tangent (a
tangent made here, or given to make_dual, which torch writes in place too), else by a new root
tangent with the result scattered in (zeros elsewhere when the root had none), from which
every view then re-reads its own. Only the paths where a dual level is active come here.
"""

from __future__ import annotations

import numpy as np

from ..ops import inplace, registry
from ..ops.layout.eager_views import LazySource
from ..tensor.state import state
from ..tensor.tensor import Tensor


def set_tangent(tensor: Tensor, level: int, tangent: Tensor | None) -> None:
    """Make `tangent` the one `tensor` carries at dual `level` (None: none); forward_ad.py's."""
    tangents = dict(tensor._tangents) if tensor._tangents else {}
    if tangent is None:
        tangents.pop(level, None)
    else:
        tangents[level] = tangent
    tensor._tangents = tangents or None


# ---- links ----------------------------------------------------------------------------------

def link(tensor: Tensor, level: int):
    """(source, view op, attrs) that made `tensor` a view sharing its source's tangent at
    `level`, or None for a root."""
    fields = tensor.__dict__
    if not fields:
        return None
    cut = fields.get("_fw_cut")
    if cut is not None and level in cut:
        return None
    found = fields.get("_view_source")
    if found is None:
        found = fields.get("_fw_source")
        if found is None:
            return None
    if found.__class__ is LazySource:
        found = tuple(found)  # makes (once) the views between, as reverse mode's walk does
    return found


def cut(tensor: Tensor, level: int) -> None:
    """Make `tensor` a root at `level`: a view whose tangent is not its source's."""
    fields = tensor.__dict__
    fields["_fw_cut"] = (*fields.get("_fw_cut", ()), level)


def own(tensor: Tensor, level: int, tangent: Tensor) -> None:
    """Record that `tangent`, tensor's tangent at `level`, is tensor's alone to write in place
    (no tensor but tensor and its views has it)."""
    fields = tensor.__dict__
    owned = dict(fields.get("_owned_tangents") or {})
    owned[level] = tangent
    fields["_owned_tangents"] = owned


def _owns(tensor: Tensor, level: int, tangent: Tensor) -> bool:
    owned = tensor.__dict__.get("_owned_tangents")
    return owned is not None and owned.get(level) is tangent


def mark_batched_view(op, inputs: tuple, attrs: dict, out: Tensor) -> None:
    """Link a view made inside vmap to its source (propagate calls it for view ops): the
    BatchedTensor has no `_view_source`, but its physical tensor views the source's."""
    if out._batched and "_view_source" not in out.__dict__ and inputs and \
            isinstance(inputs[0], Tensor) and _shares(out, inputs[0]):
        out.__dict__["_fw_source"] = (inputs[0], op, attrs)


# ---- reading ----------------------------------------------------------------------------------

def current_tangent(tensor: Tensor, level: int) -> Tensor | None:
    """tensor's tangent at `level`: for a view, the view of its source's current tangent."""
    fields = tensor.__dict__
    tangents = fields.get("_tangents")
    mine = tangents.get(level) if tangents else None
    if "_view_source" not in fields and "_fw_source" not in fields:
        return mine  # not a view: every op's inputs are read here, most of them such
    found = link(tensor, level)
    if found is None:
        return mine
    source, op, attrs = found
    above = current_tangent(source, level)
    if above is None:
        return mine
    made = tensor.__dict__.get("_tangent_src")
    if mine is not None and made is not None and made.get(level) is above:
        return mine
    derived = _view_of(above, op, attrs, level, tensor)
    if derived is None:
        return mine
    # A view that is a copy (a reshape of a tangent laid out otherwise than its primal) is
    # made again at each read: it would not see writes into `above`.
    _set_derived(tensor, level, derived, above if _shares(derived, above) else None)
    return derived


def refresh(tensor: Tensor) -> None:
    """Bring tensor's own `_tangents` up to date at every active level (before an in-place
    op snapshots them), and a BatchedTensor's physical tensor's, where the tangents are when
    the dual level is outside the vmap."""
    levels = state.forward_levels
    while True:
        for level in levels:
            current_tangent(tensor, level)
        if not tensor._batched:
            return
        tensor = tensor._value.physical


def _set_derived(tensor: Tensor, level: int, tangent: Tensor, above) -> None:
    set_tangent(tensor, level, tangent)
    fields = tensor.__dict__
    made = dict(fields.get("_tangent_src") or {})
    made[level] = above
    fields["_tangent_src"] = made


def _view_of(tangent: Tensor, op, attrs: dict, level: int, like: Tensor) -> Tensor | None:
    """op applied to `tangent` as it made `like` from its source, or None where it does not
    apply (a source whose layout an in-place t_() changed since)."""
    levels = state.forward_levels
    state.forward_levels = tuple(other for other in levels if other != level)
    try:
        view = registry.bind(op, (tangent,), attrs)
    except (RuntimeError, ValueError, IndexError, TypeError):
        return None
    finally:
        state.forward_levels = levels
    if tuple(view.shape) != tuple(like.shape):
        return None
    return view


# ---- writing ----------------------------------------------------------------------------------

def write_tangents(target: Tensor, result: Tensor) -> None:
    """`result` was written into `target` in place: its tangent goes where target's lies."""
    results = result._tangents
    for level in state.forward_levels:
        new = results.get(level) if results else None
        old = current_tangent(target, level)
        if new is old:
            continue
        levels = state.forward_levels
        # The tangent's own ops push the other levels' tangents, not this one's (propagate).
        state.forward_levels = tuple(other for other in levels if other != level)
        try:
            _write(target, level, new, old)
        finally:
            state.forward_levels = levels


def _write(target: Tensor, level: int, new: Tensor | None, old: Tensor | None) -> None:
    """Give `target` the tangent `new` at `level` (None: the written value had none) where
    its old tangent `old` lies in its root's."""
    from ..tensor.creation import zeros_like

    root, steps = _chain(target, level)
    root_tangent = current_tangent(root, level)
    if new is None:
        if root_tangent is None:  # nothing had a tangent where this wrote
            set_tangent(target, level, None)
            return
        new = zeros_like(target)  # a value without a tangent: zero where it was written
    if root is target:
        if root_tangent is not None and _owns(root, level, root_tangent) and \
                _writable(root_tangent, root_tangent, new):
            root_tangent.copy_(new)
        else:
            _own_new(root, level, new.clone())  # a copy: `new` may be another tensor's
        return
    if root_tangent is None:
        if _same_layout(target, root):
            # torch's shortcut: the view is all of its base, which takes the tangent itself
            tangent = new.clone()
            _own_new(root, level, tangent)
            _set_derived(target, level, tangent, current_tangent(link(target, level)[0], level))
            return
        root_tangent = zeros_like(root)
    elif _owns(root, level, root_tangent) and old is not None and \
            _writable(old, root_tangent, new):
        old.copy_(new)
        return
    # A new root tangent (zeros where the root had none), not a view of anything, so that
    # its views' tangents have it as their base as torch's do.
    _own_new(root, level, inplace.scatter_through(root_tangent, steps, new).clone())


def _own_new(root: Tensor, level: int, tangent: Tensor) -> None:
    set_tangent(root, level, tangent)
    own(root, level, tangent)


def _chain(tensor: Tensor, level: int) -> tuple:
    """(root, the (op, attrs) of the views from root to tensor, root first)."""
    steps = []
    found = link(tensor, level)
    while found is not None:
        tensor, op, attrs = found
        steps.append((op, attrs))
        found = link(tensor, level)
    steps.reverse()
    return tensor, steps


# ---- storage ----------------------------------------------------------------------------------

def _array(tensor: Tensor):
    """The NumPy array under `tensor` (a BatchedTensor's physical one), or None (traced, or
    on a device)."""
    while tensor._batched:
        tensor = tensor._value.physical
    data = tensor._payload
    return data if data.__class__ is np.ndarray else None


def _shares(a: Tensor, b: Tensor) -> bool:
    """Whether a's storage overlaps b's: True where that is not known (traced tensors)."""
    left, right = _array(a), _array(b)
    if left is None or right is None:
        return True
    return np.may_share_memory(left, right)


def aliases(tangent: Tensor, tangents: list) -> bool:
    """Whether `tangent` is, or overlaps the storage of, one of `tangents` (None for none)."""
    physical = tangent
    while physical._batched:
        physical = physical._value.physical
    # Only a view can overlap another tensor's storage (views carry their base).
    view = physical._base is not None and physical._payload.__class__ is np.ndarray
    for other in tangents:
        if other is tangent or view and other is not None and _shares(tangent, other):
            return True
    return False


def _batch_levels(tensor: Tensor) -> tuple:
    levels = []
    while tensor._batched:
        levels.append(tensor._value.level)
        tensor = tensor._value.physical
    return tuple(levels)


def _same_layout(a: Tensor, b: Tensor) -> bool:
    left, right = _array(a), _array(b)
    if left is None or right is None or _batch_levels(a) != _batch_levels(b):
        return False
    return left.shape == right.shape and left.strides == right.strides and left.dtype == \
        right.dtype and left.__array_interface__["data"][0] == \
        right.__array_interface__["data"][0]


def _writable(view: Tensor, root_tangent: Tensor, new: Tensor) -> bool:
    """Whether `new` can be copied into `view` in place, reaching `root_tangent`'s storage:
    eager NumPy storage that `view` shares with the root tangent and may write (not a
    broadcast, not a leaf that requires grad, not an inference tensor), and `new` batched
    at no vmap level where `view` is not."""
    array = _array(view)
    if array is None or not array.flags.writeable or _array(root_tangent) is None or \
            not np.may_share_memory(array, _array(root_tangent)):
        return False
    if not set(_batch_levels(new)) <= set(_batch_levels(view)):
        return False
    tensor = root_tangent
    while True:
        if tensor._is_inference and not state.inference:
            return False
        if state.grad_enabled and tensor._requires_grad and tensor.grad_fn is None:
            return False
        if not tensor._batched:
            break
        tensor = tensor._value.physical
    base = view._base
    return not (state.grad_enabled and base is not None and base._requires_grad and
                base.grad_fn is None)


inplace.REFRESH_TANGENTS = refresh
inplace.WRITE_TANGENTS = write_tangents
