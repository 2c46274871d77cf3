"""A graph node's saved values as torch shows them: `grad_fn._saved_self`, `_saved_other`,
`_saved_result`, `_saved_<attr>`, and `_raw_saved_<name>` / a custom Function's
`_raw_saved_tensors`, the SavedTensor handles whose `register_hooks(pack, unpack)` sets
saved-tensor hooks on one value.

Where it sits: OpNode.__getattr__ and BackwardFunction (graph.py, function.py) come here for a
name they do not hold; the saved entries themselves are saved_tensors.py's SavedTensor and
PackedSavedTensor. An op's inputs are named by position as torch's schemas name the common
ones (self, other), or as the op's entry names them (Op.saved_names: torch's names of its
saved values, some computed from the node); "result" is the op's own output and any attr of
the op is `_saved_<attr>`.
"""

from __future__ import annotations

from ..tensor.tensor import Tensor
from .saved_tensors import FREED_MESSAGE, PackedSavedTensor, SavedTensor

# torch's schema names of an op's first positional inputs
_INPUT_NAMES = {"self": 0, "other": 1, "exponent": 1, "mat2": 1, "weight": 1, "input": 0}

# torch's message for register_hooks on the handle of a value freed by a backward pass (the
# handle itself is still given: `_raw_saved_self` does not raise).
_HOOKS_AFTER_FREE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need "
    "to access saved variables after calling backward.")

_HOOK_ARGUMENTS = (
    "register_hooks(): incompatible function arguments. The following argument types are "
    "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: Callable, arg1: "
    "Callable) -> None\n")


class SavedTensorHandle:
    """torch._C._autograd.SavedTensor: one saved value of a node, for register_hooks."""

    __slots__ = ("_node", "_slot")

    def __init__(self, node=None, slot=None):
        if node is None:
            raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")
        self._node, self._slot = node, slot  # slot: an input index, or "out"

    def _entry(self):
        node = self._node
        if getattr(node, "_released", False):
            raise RuntimeError(FREED_MESSAGE)
        if self._slot is None:  # a value torch saves as None (an index list's slices)
            return None
        if self._slot == "out":
            return node._saved_out
        return node._saved[self._slot]

    def _store(self, entry) -> None:
        node = self._node
        if self._slot == "out":
            node._saved_out = entry
        else:
            saved = list(node._saved)
            saved[self._slot] = entry
            node._saved = tuple(saved) if isinstance(node._saved, tuple) else saved
        node._packed = True

    def register_hooks(self, *hooks):
        if len(hooks) != 2 or not all(callable(hook) for hook in hooks):
            raise TypeError(_HOOK_ARGUMENTS)
        if getattr(self._node, "_released", False):
            raise RuntimeError(_HOOKS_AFTER_FREE)
        entry = self._entry()
        if entry is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        if isinstance(entry, PackedSavedTensor):
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at a "
                               "time.")
        is_output = entry.tensor is None
        tensor = entry.unpack(self._node)
        output_nr = entry.output_nr if is_output else 0
        self._store(PackedSavedTensor(tensor, is_output, output_nr, hooks))


SavedTensorHandle.__name__ = SavedTensorHandle.__qualname__ = "SavedTensor"  # torch's name


def _unpacked(node, entry):
    if isinstance(entry, SavedTensor):
        return entry.unpack(node)
    return entry


def op_node_attribute(node, name: str):
    """`_saved_<name>` or `_raw_saved_<name>` of an OpNode; AttributeError otherwise."""
    raw = name.startswith("_raw_saved_")
    key = name[len("_raw_saved_"):] if raw else name[len("_saved_"):] \
        if name.startswith("_saved_") else None
    if key is None:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    attrs = node.attrs or {}
    names = node.op.saved_names
    named = names.get(key) if names is not None else None
    if callable(named):
        if node._released:
            raise RuntimeError(FREED_MESSAGE)
        return named(node, lambda slot: _saved_at(node, slot, raw), raw)
    if not raw and key in attrs:
        return attrs[key]
    if named is not None:
        slot = named
        if slot != "out" and (node._saved is None and not node._released
                              or node._saved is not None and slot >= len(node._saved)):
            slot = None
    elif key in ("result", "result0"):
        slot = "out" if any(entry == "out" or entry.__class__ is tuple and entry[0] == "out"
                            for entry in node.op.saves) and (
            node._saved_out is not None or node._released) else None
    elif names is not None:  # the op names its saved values itself: not this one
        slot = None
    else:
        slot = _INPUT_NAMES.get(key)
        if slot is not None and (node._saved is None and not node._released
                                 or node._saved is not None and slot >= len(node._saved)):
            slot = None
    if slot is None:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
    if raw:  # given after a backward pass freed the value too, as torch's
        return SavedTensorHandle(node, slot)
    if node._released:
        raise RuntimeError(FREED_MESSAGE)
    entry = node._saved_out if slot == "out" else node._saved[slot]
    return _unpacked(node, entry)


def _saved_at(node, slot, raw: bool):
    """For an op's saved_names function: the tensor saved at input `slot` ("out": the
    output), None where none is; with `raw`, its SavedTensor handle."""
    entry = None
    if slot == "out":
        entry = node._saved_out
    elif slot is not None and node._saved is not None and slot < len(node._saved):
        entry = node._saved[slot]
    if isinstance(entry, Tensor) and not raw:  # unpacked for the length of an apply
        return entry
    if not isinstance(entry, SavedTensor):
        entry, slot = None, None
    if raw:
        return SavedTensorHandle(node, slot)
    return None if entry is None else _unpacked(node, entry)


def raw_saved_tensors(node) -> tuple:
    """A custom Function node's `_raw_saved_tensors`: a handle per value given to
    save_for_backward (None included, as torch cannot tell without unpacking)."""
    if node._released:
        raise RuntimeError(FREED_MESSAGE)
    saved = node._saved
    if saved is None:
        return ()
    return tuple(SavedTensorHandle(node, index) for index in range(len(saved)))
