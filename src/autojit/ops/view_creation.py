"""torch's rules for views that may not be written in place while autograd records (its
CreationMeta): a view made with grad mode off or in inference mode, an output of a function
returning several views (unbind, split, chunk) and a view returned by a custom Function. A
later in-place write through such a view, with grad mode on and a tensor requiring grad
involved, raises torch's error, since the history it would need cannot be rebuilt.

Where it sits: the view-making paths (registry.view_tensor, eager_views, subscript) call
`meta_of_new_view`; layout_composites and autograd.function mark multi-output and custom
Function views; ops/inplace.apply_inplace calls `check_view_write` before writing.
"""

from __future__ import annotations

from ..tensor.state import state

_SUFFIX = {
    "custom_function": (
        " This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom "
        "Function."),
    "multi_output": (
        " This view is the output of a function that returns multiple views. Such functions do "
        "not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."),
    "no_grad": (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
        "want the inplace to be tracked)."),
    "inference": (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "inference_mode block (if you don't want the inplace to be tracked) or both outside (if "
        "you want the inplace to be tracked)."),
}


def meta_of_new_view(source) -> str | None:
    """The creation meta of a view of `source` made now: the grad mode's, else source's own
    (a view of a forbidden view is forbidden too)."""
    if not state.grad_enabled:
        return "inference" if state.inference else "no_grad"
    return source._creation_meta


def mark_views(outputs, kind: str, name: str | None = None) -> None:
    """Mark a function's output views (kind "multi_output" or "custom_function"), unless grad
    mode is off (their meta says so already). `name` is the function as torch's error names
    it ("Unbind", "Split"); each output is then named by its position."""
    if not state.grad_enabled:
        return
    for index, output in enumerate(outputs):
        fields = output.__dict__
        fields["_creation_meta"] = kind
        if name is not None:
            fields["_multi_output"] = (name, index)


def unmark_multi_output(outputs):
    """The outputs of torch's unsafe_split/unsafe_chunk: split's, but writable in place."""
    for output in outputs:
        fields = output.__dict__
        if fields.get("_creation_meta") == "multi_output":
            del fields["_creation_meta"]
            fields.pop("_multi_output", None)
    return outputs


def _function_name(tensor) -> str:
    given = tensor.__dict__.get("_multi_output")
    if given is not None:
        return given[0]
    name = tensor.grad_fn.name()
    stripped = name.rstrip("0123456789")
    return stripped[:-len("Backward")] if stripped.endswith("Backward") else name


def view_write_error(tensor, indirect: bool = False) -> str:
    """torch's message for writing (or, indirect, reading after its base was written) a view
    whose creation meta forbids it."""
    meta = tensor._creation_meta
    modified = "its base or another view of its base has been" if indirect else "is being"
    if tensor.grad_fn is not None:
        given = tensor.__dict__.get("_multi_output")
        number = given[1] if given is not None else tensor._output_nr
        prefix = f"Output {number} of {_function_name(tensor)} is a view"
        if meta not in ("inference", "no_grad"):
            return f"{prefix} and {modified} modified inplace." + _SUFFIX[meta]
        # a view (with history) of a view made with grad mode off
        prefix += " of a view which was created in"
    else:
        prefix = "A view was created in"
    if meta == "inference":
        message = f"{prefix} inference mode and {modified} modified inplace in normal mode."
    else:
        message = (f"{prefix} no_grad mode and {modified} modified inplace with grad mode "
                   "enabled.")
    return message + _SUFFIX[meta]


def check_view_write(target, result) -> None:
    """Raise torch's error when `target`, a forbidden view, is written in place with grad mode
    on and a tensor requiring grad involved (the target, its base, or the written value)."""
    if target._creation_meta is None or not state.grad_enabled:
        return
    base = target._base
    if result._requires_grad or target._requires_grad or (
            base is not None and base._requires_grad):
        raise RuntimeError(view_write_error(target))
