"""The early stop of a non-reentrant checkpoint's recomputation (utils/checkpoint.py).

torch counts the tensors a checkpointed function saves in its forward, and stops the
recomputation once it has saved as many again: what the function would compute after its last
saving op is not run (its Python code included). Here a checkpoint watches, through
`state.saved_watch`, every autograd node that saves tensors (graph.py's record and a custom
Function's, each called once the node holds them), in the order they are made. The forward
remembers, for each saved entry backward will need, the place of its node in that order; the
recomputation stops once it has made as many saving nodes as the forward did, and reads each
entry from the node at the same place.
"""

from __future__ import annotations

from ..autograd.saved_tensors import PackedSavedTensor, SavedTensor
from ..tensor.state import state


class StopRecomputation(Exception):  # noqa: N818 - torch's _StopRecomputationError
    """Raised by the watch of a recomputation (its argument) once it has made every saving
    node it needs."""


def _holds_entries(node) -> bool:
    """Whether a node keeps saved tensors of its own (not ones saved-tensor hooks packed)."""
    for entry in (getattr(node, "_saved_out", None), *(getattr(node, "_saved", None) or ())):
        if isinstance(entry, SavedTensor) and not isinstance(entry, PackedSavedTensor):
            return True
    return False


class SavingNodes:
    """The autograd nodes that save tensors while a checkpointed function runs, in order;
    with `stop_after`, StopRecomputation once there are that many. A context manager that
    installs it in `state.saved_watch`."""

    def __init__(self, stop_after: int | None = None):
        self.nodes: list = []
        self.stop_after = stop_after

    def __call__(self, node) -> None:
        if not _holds_entries(node):
            return
        self.nodes.append(node)
        if len(self.nodes) == self.stop_after:
            raise StopRecomputation(self)

    def __enter__(self):
        state.saved_watch = (*state.saved_watch, self)
        return self

    def __exit__(self, *exc_info) -> None:
        state.saved_watch = tuple(watch for watch in state.saved_watch if watch is not self)

    def places(self, entries: list):
        """(place of the node, slot) of each (node, slot, entry) the forward saved, or None
        where a node was not seen saving (made outside autograd's record, say)."""
        place = {id(node): index for index, node in enumerate(self.nodes)}
        found = []
        for node, slot, _ in entries:
            index = place.get(id(node))
            if index is None:
                return None
            found.append((index, slot))
        return found

    def entries(self, places: list) -> list:
        """The recomputation's entries at the forward's places, as far as it made them."""
        found = []
        for index, slot in places:
            if index >= len(self.nodes):
                break
            node = self.nodes[index]
            saved = node._saved_out if slot == "out" else (
                node._saved[slot] if node._saved is not None and slot < len(node._saved)
                else None)
            if not isinstance(saved, SavedTensor) or isinstance(saved, PackedSavedTensor):
                break
            found.append(saved)
        return found
