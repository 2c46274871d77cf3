"""Forward-mode AD: dual tensors and the tangent every primitive pushes forward.

A tensor's tangents live in `Tensor._tangents`, a dict from a dual level's id to the tangent
tensor. While a level is active (`state.forward_levels`), ops.registry.bind calls `propagate`
after each primitive, which computes the output's tangent from the inputs' with the op's JVP
rule: its registry entry's `jvp` when it has one, else the transpose of its VJP (the JVP of a
linear map is the VJP of its adjoint, so `J t = d/du <J^T u, t>`, computed by reverse mode
over the VJP rule). Tangent computations are ordinary autojit ops, so they are traced when
compiled, recorded for reverse mode (forward-over-reverse Hessian-vector products are
differentiable again) and pushed forward at the other active levels (nested `jvp`).

The public API is torch.autograd.forward_ad's: `dual_level`, `make_dual`, `unpack_dual`,
`UnpackedDualTensor`, `enter_dual_level`, `exit_dual_level`. torch allows one level at a time
there; autojit.func's transforms nest levels through `enter_level`/`exit_level`.
See docs/notes/forward-mode.md.
"""

from __future__ import annotations

import functools
import itertools
from typing import NamedTuple

from ..ops import registry, storage
from ..tensor import dtypes
from ..tensor.state import TANGENT_OF, state
from ..tensor.symbolic import same_shape
from ..tensor.tensor import Tensor
from . import forward_views
from .forward_views import set_tangent

_level_ids = itertools.count(1)


# ---- levels -------------------------------------------------------------------------------

def enter_level() -> int:
    """Open a new dual level (nested ones allowed) and return its id."""
    level = next(_level_ids)
    state.forward_levels = (*state.forward_levels, level)
    return level


def exit_level(level: int) -> None:
    """Close `level`: tangents recorded at it are no longer seen by anything."""
    levels = state.forward_levels
    if not levels or levels[-1] != level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    state.forward_levels = levels[:-1]


def _public_level(level: int | None) -> int | None:
    """The id of the level a public `level=` argument (0 for the first one) names."""
    levels = state.forward_levels
    if level is None:
        return levels[-1] if levels else None
    if not 0 <= level < len(levels):
        return None
    return levels[level]


# The levels opened by the public API (dual_level, enter_dual_level), not by the function
# transforms (jvp, jacfwd): inference mode turns the public forward AD off, as torch's does
# (make_dual gives a plain alias, unpack_dual no tangent, ops propagate none), while the
# transforms keep working inside it, as torch.func's do.
_PUBLIC: set = set()


def enter_dual_level() -> int:
    """Enter a new forward-grad level and return its index (torch's enter_dual_level)."""
    if state.forward_levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _PUBLIC.add(enter_level())
    return len(state.forward_levels) - 1


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the forward-grad level; the tangents made at it are dropped."""
    levels = state.forward_levels
    if not levels:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    if level is not None and level != len(levels) - 1:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _PUBLIC.discard(levels[-1])
    exit_level(levels[-1])


def _off_in_inference(level: int) -> bool:
    """Whether `level` is a public one while inference mode is on (forward AD off there)."""
    return state.inference and level in _PUBLIC


class dual_level:  # noqa: N801 - torch's name
    """Context manager for forward AD: dual tensors made inside it carry tangents until exit.

    >>> import autojit
    >>> import autojit.autograd.forward_ad as fwAD
    >>> x = autojit.tensor([1.0, 2.0])
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, autojit.ones(2)) ** 2
    ...     fwAD.unpack_dual(y).tangent
    tensor([2., 4.])
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


# ---- dual tensors -------------------------------------------------------------------------

def tangent_of(tensor: Tensor, level: int) -> Tensor | None:
    """tensor's tangent at `level` (a view's is the view of its base's: forward_views.py)."""
    return forward_views.current_tangent(tensor, level)


def _innermost_tangent(tensor: Tensor) -> Tensor | None:
    """tensor's tangent at the innermost level (which torch's printing shows)."""
    levels = state.forward_levels
    if not levels or tensor._payload is None:
        return None
    return tangent_of(tensor, levels[-1])


TANGENT_OF[0] = _innermost_tangent


def attach_tangent(primal: Tensor, tangent: Tensor, level: int) -> Tensor:
    """A view of `primal` that carries `tangent` at `level` (make_dual's work, unchecked)."""
    dual = primal.view_as(primal)
    # The dual shares the primal's storage, not its tangent (a view torch calls forward
    # non-differentiable), and writes in place into the tangent it was given, as torch's do.
    forward_views.cut(dual, level)
    set_tangent(dual, level, tangent)
    forward_views.own(dual, level, tangent)
    return dual


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of `tensor` that carries `tangent` as its forward gradient at `level`.

    The tangent must have the primal's shape; both must be floating point.
    """
    found = _public_level(level)
    if found is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual(): expected Tensors for the primal and the tangent")
    if tensor.dtype.category < dtypes.FLOATING:
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if tangent.dtype.category < dtypes.FLOATING:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if not same_shape(tensor.shape, tangent.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    if tangent_of(tensor, found) is not None:
        index = state.forward_levels.index(found)
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {index} is not supported.")
    if tangent_of(tangent, found) is not None:
        index = state.forward_levels.index(found)
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the "
                           f"same level{index} is not supported.")  # (torch's message)
    if _off_in_inference(found):
        # Forward AD is off in inference mode: an alias of the primal's storage, not a view,
        # with no tangent (torch's make_dual there).
        alias = Tensor._make(tensor._payload, tensor._dtype, tensor._version_counter)
        alias._is_inference = True
        return alias
    if tangent.dtype is not tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    if not storage.same_layout(tangent, tensor):
        # As torch: a tangent laid out otherwise than its primal is copied into memory laid
        # out as the primal's, so that an as_strided (or a composite reading strides) reads the
        # same elements of both
        tangent = storage.laid_out_like(tangent, tensor)
    return attach_tangent(tensor, tangent, found)


class UnpackedDualTensor(NamedTuple):
    """A dual tensor's primal (a view without the tangent) and its tangent (or None)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor, *, level: int | None = None):
    """(primal, tangent) of a dual tensor at `level`; tangent is None where it has none."""
    if not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    found = _public_level(level)
    tangent = tangent_of(tensor, found) if found is not None and \
        not _off_in_inference(found) else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(strip_tangent(tensor, found), tangent)


def strip_tangent(tensor: Tensor, level: int) -> Tensor:
    """A view of `tensor` without its tangent at `level` (its other levels' kept)."""
    levels = state.forward_levels
    state.forward_levels = tuple(other for other in levels if other != level)
    try:
        primal = tensor.view_as(tensor)
    finally:
        state.forward_levels = levels
    forward_views.cut(primal, level)
    set_tangent(primal, level, None)
    return primal


# ---- propagation through a primitive ---------------------------------------------------------

def propagate(op, inputs: tuple, attrs: dict, out: Tensor) -> None:
    """Set `out`'s tangent at each active level from the inputs' (called by bind)."""
    levels = pending = state.forward_levels
    if op.vjp is None or out._dtype.category < dtypes.FLOATING or not state.fwd_grad_enabled:
        return
    if state.inference and _PUBLIC:  # the public levels are off in inference mode
        levels = pending = tuple(level for level in levels if level not in _PUBLIC)
        if not levels:
            return
    if op.view:
        if out._batched:
            forward_views.mark_batched_view(op, inputs, attrs, out)
        # A view's tangent is the same view of its source's, sharing its storage, so that
        # in-place writes reach it (forward_views.py); the rule runs where that is not made.
        pending = tuple(level for level in levels
                        if forward_views.current_tangent(out, level) is None)
        _share_with_saved(out)
    current_tangent = forward_views.current_tangent
    for level in pending:
        tangents = None
        for position, x in enumerate(inputs):
            if isinstance(x, Tensor):
                fields = x.__dict__  # where _tangents and a view's link are set
                if "_view_source" in fields or "_fw_source" in fields:
                    tangent = current_tangent(x, level)
                else:
                    tangent = fields.get("_tangents")
                    tangent = tangent.get(level) if tangent else None
                if tangent is not None:
                    if tangents is None:
                        tangents = [None] * len(inputs)
                    tangents[position] = tangent
        if tangents is None:
            continue
        # The rule's own ops must not push this level's tangents forward again (that would
        # be a second-order term at the same level); the other levels' they do push.
        others = tuple(other for other in levels if other != level)
        state.forward_levels = others
        try:
            rule_out = out
            if others:
                # The rule may read the output, whose tangents at the other levels are not set
                # yet: it reads a recomputation that has them.
                rule_out = registry.bind(op, inputs, attrs)
            if op.jvp is not None:
                tangent = op.jvp(inputs, tangents, rule_out, attrs)
            else:
                tangent = transposed_jvp(op, inputs, tangents, rule_out, attrs)
            if tangent is not None:
                tangent = _conform(tangent, out)
                if forward_views.aliases(tangent, tangents):
                    # A rule may hand back an input's tangent (or a view of it, expanded): a
                    # copy, since an in-place write may change that one later.
                    tangent = tangent.clone()
        finally:
            state.forward_levels = levels
        if tangent is not None:
            set_tangent(out, level, tangent)
            _share_with_saved(out)


def _share_with_saved(out: Tensor) -> None:
    """The node's saved output (when it saves it) carries the output's tangents too."""
    saved_out = getattr(out.grad_fn, "_saved_out", None)
    if saved_out is not None:
        saved_out.tangents = out._tangents


def _conform(tangent: Tensor, out: Tensor) -> Tensor:
    if not same_shape(tangent.shape, out.shape):
        tangent = tangent.expand(out.shape)
    if tangent._dtype is not out._dtype:
        if tangent._dtype.category == dtypes.COMPLEX and out._dtype.category != dtypes.COMPLEX:
            tangent = tangent.real  # a real result moves along the real part only
        tangent = tangent.to(out._dtype)
    return tangent


class _VjpContext:
    """What a VJP rule reads from its node (`ctx`), for a rule run outside a recorded node."""

    def __init__(self, op, inputs, attrs, out, needs):
        self.op, self.inputs, self.attrs, self.out = op, tuple(inputs), attrs, out
        self.needs_input_grad = needs
        self.input_meta = [(tuple(x.shape), x._dtype) if isinstance(x, Tensor) and need
                           else None for x, need in zip(inputs, needs)]


def transposed_jvp(op, inputs, tangents, out, attrs) -> Tensor | None:
    """J t for a primitive without a JVP rule: the VJP u -> J^T u is linear in u, so its own
    VJP at cotangent t is J t. Exact, at the cost of two reverse passes."""
    from ..tensor.creation import ones
    from .api import grad
    from .graph import conform

    needs = tuple(t is not None for t in tangents)
    # The pushed tangent needs a history only when something it is made of requires grad, or
    # carries a tangent at another level (a plain reverse pass would detach the cotangents).
    differentiable = bool(state.forward_levels) or state.grad_enabled and any(
        isinstance(x, Tensor) and x.requires_grad for x in (*inputs, *tangents, out))
    previous = state.grad_enabled
    state.grad_enabled = True
    try:
        # Any cotangent will do, the VJP being linear in it; ones, not zeros, since a rule
        # computed in log space (logcumsumexp's) reads log(|u|).
        cotangent = ones(tuple(out.shape), dtype=out.dtype, device=out.device)
        cotangent.requires_grad_(True)
        context = _VjpContext(op, inputs, attrs, out, needs)
        pulled = op.vjp(context, cotangent)
        pairs = []
        for result, tangent, meta in zip(pulled, tangents, context.input_meta):
            if result is None or tangent is None or not result.requires_grad:
                continue
            pairs.append((conform(result, meta), tangent))
        if not pairs:
            return None
        (pushed,) = grad([result for result, _ in pairs], cotangent,
                         grad_outputs=[tangent for _, tangent in pairs],
                         create_graph=differentiable, allow_unused=True)
    finally:
        state.grad_enabled = previous
    return pushed


def _is_fwd_grad_enabled() -> bool:
    """Whether primitives push tangents forward in this thread (torch's private switch)."""
    return state.fwd_grad_enabled


class _set_fwd_grad_enabled:  # noqa: N801 - torch's name
    """Turn forward-mode AD on or off for the thread: at once, restored on exit (a context
    manager or decorator, as torch's)."""

    def __init__(self, mode: bool):
        self.previous = state.fwd_grad_enabled
        state.fwd_grad_enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        state.fwd_grad_enabled = self.previous

    def __call__(self, function):
        mode = state.fwd_grad_enabled
        state.fwd_grad_enabled = self.previous

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with _set_fwd_grad_enabled(mode):
                return function(*args, **kwargs)

        return wrapper


registry.FORWARD = propagate  # bind (ops/registry.py) pushes tangents forward through this

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


def __getattr__(name: str):
    # torch keeps `_current_level` as a module global (-1 with no level open) that code reads to
    # learn whether forward AD is running; here it is derived from the open levels
    if name == "_current_level":
        return len(state.forward_levels) - 1
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
