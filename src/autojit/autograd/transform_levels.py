"""The levels of the running torch.func transforms and what depends on them: which tensors a
grad transform's function may write in place, the level a tensor is wrapped at
(torch._C._functorch.dlevel), and how a tensor prints inside a transform.

torch runs a grad transform's (grad, vjp, jvp) function on wrappers of its inputs at the
transform's level, and wraps what each op returns at that level; a tensor from outside (a
captured one) is not wrapped, and a view of one is a wrapper that may not be written. An
in-place op on anything but a writable wrapper of the innermost level is refused, since the
transform's autograd could not see the write (functorch's checkForInvalidMutationOnCaptures).
autojit's transforms do not wrap: `running` marks the inputs of a level (`_func_roots`), and
Tensor._make (tensor.py) stamps what it makes while a level runs with the level
(`_func_level`); a view belongs to the level its source belongs to (`_view_source`).

Levels are numbered as torch numbers them, by depth: 1 for the outermost transform running,
one more for each inside it (vmap's levels too, whose depths vmap.py records here). A tensor
prints as torch prints its wrappers, innermost first: `GradTrackingTensor(lvl=2, value=...)`
around `BatchedTensor(lvl=1, bdim=0, value=...)` around the tensor itself.
"""

from __future__ import annotations

import sys
import textwrap
from contextlib import contextmanager

from ..ops import inplace
from ..ops.layout.eager_views import LazySource
from ..tensor.printing import tensor_repr
from ..tensor.state import state
from ..tensor.tensor import Tensor

_CAPTURED = ("During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to "
             "call in-place operation (aten::{}) that would mutate a captured Tensor. This is not "
             "supported; please rewrite the function being transformed to explicitly accept the "
             "mutated Tensor(s) as inputs.")

# The depth of each running vmap level, by its id (vmap.py adds and removes them).
VMAP_DEPTHS: dict = {}


class GradLevel:
    """One run of a grad transform's function. Once it returns, what it made belongs to the
    level it ran in (`parent`), as torch unwraps an escaped wrapper of a dead level."""

    __slots__ = ("parent", "alive", "marked", "depth")

    def __init__(self, parent, depth: int):
        self.parent = parent
        self.alive = True
        self.marked = []
        self.depth = depth


@contextmanager
def running(inputs, made=()):
    """A new grad level, innermost while the block runs the transform's function, whose inputs
    are the tensors among `inputs` (every argument's leaves, differentiated or not, as torch
    wraps them all). `made`: those the transform made to stand for arguments (aliases, duals),
    which belong to the level as what its function makes does."""
    levels = state.grad_levels
    state.func_transforms += 1
    level = GradLevel(levels[-1] if levels else None, state.func_transforms)
    for alias in made:
        alias._func_level = level
    for leaf in inputs:
        while isinstance(leaf, Tensor):
            leaf._func_roots = (*leaf._func_roots, level)
            level.marked.append(leaf)
            # inside vmap, the physical tensor is what a write reaches (ops/inplace.py)
            leaf = leaf._value.physical if leaf._batched else None
    state.grad_levels = (*levels, level)
    try:
        yield level
    finally:
        state.grad_levels = levels
        state.func_transforms -= 1
        level.alive = False
        for leaf in level.marked:
            roots = tuple(other for other in leaf._func_roots if other is not level)
            if roots:
                leaf._func_roots = roots
            elif "_func_roots" in leaf.__dict__:
                del leaf._func_roots
        level.marked = []


# ---- in-place writes into captured tensors --------------------------------------------------

def _owner(level):
    """The running level a tensor made at `level` belongs to now."""
    while level is not None and not level.alive:
        level = level.parent
    return level


def _belongs(tensor: Tensor, level: GradLevel) -> bool:
    while True:
        fields = tensor.__dict__
        if level in fields.get("_func_roots", ()):
            return True
        source = fields.get("_view_source")
        if source is None:
            return _owner(fields.get("_func_level")) is level
        tensor = source.source if source.__class__ is LazySource else source[0]


def _by_autograd() -> bool:
    """Whether the in-place op was called by autograd's own machinery (forward AD writing a
    tangent, say), which torch runs below the transform's level, where nothing is checked:
    the first caller outside the op and tensor layers tells."""
    frame = sys._getframe(3)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not name.startswith(("autojit.ops.", "autojit.tensor.")):
            return name.startswith("autojit.autograd.")
        frame = frame.f_back
    return False


def check_captured_write(target: Tensor, op_name: str) -> None:
    """Refuse an in-place op on `target` while a grad transform runs its function, unless the
    target belongs to the innermost level (ops/inplace.py calls it). A BatchedTensor passes:
    the write into its physical tensor, which follows, is checked."""
    if target._batched or _by_autograd():
        return
    if not _belongs(target, state.grad_levels[-1]):
        raise RuntimeError(_CAPTURED.format(op_name))


inplace.CHECK_CAPTURED = check_captured_write


# ---- the level a tensor is wrapped at -------------------------------------------------------

def _grad_level(tensor: Tensor, limit: float):
    """The innermost running grad level of depth at most `limit` that `tensor` is wrapped at:
    one it is an input of, or the one it was made at (or, that one done, the level that ran
    it)."""
    fields = tensor.__dict__
    found = None
    for level in fields.get("_func_roots", ()):
        if level.alive and level.depth <= limit and (found is None or level.depth > found.depth):
            found = level
    made = fields.get("_func_level")
    while made is not None and (not made.alive or made.depth > limit):
        made = made.parent
    if made is not None and (found is None or made.depth > found.depth):
        found = made
    return found


def _vmap_depth(tensor: Tensor, limit: float):
    if not tensor._batched:
        return None
    depth = VMAP_DEPTHS.get(tensor._value.level)
    return depth if depth is not None and depth <= limit else None


def dlevel(tensor: Tensor) -> int:
    """torch._C._functorch.dlevel: the depth of the grad level `tensor` is a wrapper of, -1
    where that level is done (an escaped wrapper), 0 for a tensor no grad level wraps (a
    BatchedTensor outermost among them included)."""
    fields = tensor.__dict__
    made = fields.get("_func_level")
    roots = [level for level in fields.get("_func_roots", ()) if level.alive]
    depth = max((level.depth for level in roots), default=0)
    if made is not None and made.depth > depth:
        if not made.alive:
            return -1
        depth = made.depth
    vmap_depth = _vmap_depth(tensor, float("inf"))
    return 0 if vmap_depth is not None and vmap_depth > depth else depth


# ---- printing --------------------------------------------------------------------------------

def wrapped_repr(tensor: Tensor):
    """`repr(tensor)` inside a transform as torch prints its wrappers, or None where no running
    level wraps it (a captured tensor prints as itself)."""
    limit = float("inf")
    if _grad_level(tensor, limit) is None and _vmap_depth(tensor, limit) is None:
        return None
    return _describe(tensor, limit)


def _wrapper(head: str, value: str) -> str:
    return f"{head}, value=\n{textwrap.indent(value, ' ' * 4)}\n)"


def _describe(tensor: Tensor, limit: float) -> str:
    """`tensor` as the levels of depth at most `limit` see it."""
    from .function_vmap import vmap_input

    grad = _grad_level(tensor, limit)
    vmap_depth = _vmap_depth(tensor, limit)
    if grad is not None and (vmap_depth is None or grad.depth > vmap_depth):
        inner = tensor
        if grad in tensor._func_roots:  # an input: the tensor it stands for, if it is an alias
            inner = tensor.__dict__.get("_func_unwrapped", tensor)
        return _wrapper(f"GradTrackingTensor(lvl={grad.depth}", _describe(inner, grad.depth - 1))
    if vmap_depth is not None:
        value = tensor._value
        inner, dim = vmap_input(tensor, value.level) or (value.physical, 0)
        return _wrapper(f"BatchedTensor(lvl={vmap_depth}, bdim={dim}",
                        _describe(inner, vmap_depth - 1))
    if tensor._batched:  # a BatchedTensor whose level is done
        return _wrapper(f"BatchedTensor(lvl={tensor._value.level}, bdim=0",
                        _describe(tensor._value.physical, limit))
    fields = tensor.__dict__
    if "_func_level" in fields or "_func_roots" in fields:
        # a value inside a transform: its history there is no part of the level below
        return tensor_repr(tensor.detach(), history="")
    return tensor_repr(tensor)


Tensor._transform_repr = staticmethod(wrapped_repr)  # (tensor.py's __repr__)
