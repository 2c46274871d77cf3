"""A custom Function under forward-mode AD: its jvp gives the outputs' tangents at each active
dual level (push_tangents), checked as torch checks them (check_pushed_tangents), and saved
outputs take the tangents their outputs got (saved_outputs_take_tangents). function.py's
apply calls these after the forward has run and the outputs are wrapped."""

from __future__ import annotations

from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .saved_tensors import PackedSavedTensor, SavedTensor


def push_tangents(cls, node, args: tuple, results: list, levels: tuple) -> None:
    """Set the outputs' tangents at each active level from the inputs' through cls.jvp."""
    from ..tensor.creation import zeros_like
    from .forward_ad import set_tangent

    for level in levels:
        found = [a._tangents.get(level) if isinstance(a, Tensor) and a._tangents else None
                 for a in args]
        if all(tangent is None for tangent in found):
            continue
        tangents = [tangent if tangent is not None or not isinstance(a, Tensor) else
                    (zeros_like(a) if a.dtype.category >= dtypes.FLOATING else None)
                    for a, tangent in zip(args, found)]
        state.forward_levels = tuple(other for other in levels if other != level)
        versions = [t._version if isinstance(t, Tensor) else None for t in tangents]
        node._in_jvp = True
        try:
            pushed = cls.jvp(node, *tangents)
        finally:
            node._in_jvp = False
            state.forward_levels = levels
        pushed = pushed if isinstance(pushed, tuple) else (pushed,)
        outputs = [r for r in results]
        if len(pushed) != len(outputs):
            raise RuntimeError(f"jvp() returned an incorrect number of tangents (got "
                               f"{len(pushed)}, but expected {len(outputs)})")
        check_pushed_tangents(node, args, outputs, pushed, tangents, versions, found)
        for output, tangent in zip(outputs, pushed):
            if isinstance(output, Tensor) and tangent is not None:
                if tuple(tangent.shape) != tuple(output.shape):
                    raise RuntimeError(f"Function {cls.__name__} returned an invalid tangent "
                                       f"of shape {list(tangent.shape)} for an output of shape "
                                       f"{list(output.shape)}")
                set_tangent(output, level, tangent)


def check_pushed_tangents(node, args, outputs, pushed, tangents, versions, given) -> None:
    """torch's checks of what a Function's jvp returned: no tangent for an output that is not
    differentiable, the input's own tangent written in place for a dirty input, and a view of
    the tangent for an output that is a view of an input (or the input as-is). `tangents`
    are those the jvp was given, `given` the inputs' own (None where an input had none)."""
    non_differentiable = {id(t) for t in node.non_differentiable or ()}
    dirty = {id(t) for t in node.dirty_tensors or ()}
    views = node.__dict__.get("_returned_views", ())
    for position, (output, tangent) in enumerate(zip(outputs, pushed)):
        if tangent is None:
            continue
        if not isinstance(output, Tensor) or id(output) in non_differentiable or \
                output._dtype.category < dtypes.FLOATING:
            raise RuntimeError(
                f"Function's jvp returned a gradient at position {position}, but  the "
                "corresponding forward output is not a differentiable Tensor.You should return "
                "None at that position instead.")
        if id(output) in dirty:
            index = next(i for i, a in enumerate(args) if a is output)
            if tangent is not tangents[index] or tangent._version == versions[index]:
                raise RuntimeError(
                    "An inplace custom Function is not modifying the forward mode gradients "
                    "inplace. If the forward is modifying an input inplace, then the jvp "
                    "function must modify the corresponding gradient inplace.")
        elif id(output) in views:
            if tangent._base is None:
                raise RuntimeError("A custom Function's forward is returning a view (or an "
                                   "input as-is) but the jvp is not returning a view.")
            _check_view_of_tangent(args, output, tangent, given)


def _check_view_of_tangent(args, output, tangent, given) -> None:
    """An output that is a view of an input (of the input's base) takes a view of that input's
    tangent (of its base, where the tangent is a view), as torch checks."""
    for arg, arg_tangent in zip(args, given):
        if not isinstance(arg, Tensor) or arg_tangent is None or \
                (arg._base if arg._base is not None else arg) is not output._base:
            continue
        if arg_tangent._base is not None:
            if arg_tangent._base is not tangent._base:
                raise RuntimeError("A custom Function is returning a view but the jvp is not "
                                   "returning a view of the same base as the given grad input.")
        elif arg_tangent is not tangent._base:
            raise RuntimeError("A custom Function is returning a view but the jvp is not "
                               "returning a view of the given grad input.")
        return


def saved_outputs_take_tangents(node, results: list) -> None:
    """Give the saved outputs the tangents forward mode set on the outputs after they were
    saved: backward rebuilds a saved output from its storage, and a backward that reads it
    under an outer forward level (forward-over-reverse: jvp of grad, hessian, jacfwd of
    jacrev) must see its tangent, as with the saved outputs of ops (forward_ad.py)."""
    for entry in node._saved or ():
        if isinstance(entry, PackedSavedTensor):
            is_output = entry.is_output
        else:
            is_output = isinstance(entry, SavedTensor) and entry.tensor is None
        if is_output:
            entry.tangents = results[entry.output_nr]._tangents
