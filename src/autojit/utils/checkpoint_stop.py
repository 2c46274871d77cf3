"""The early stop of a non-reentrant checkpoint's recomputation (utils/checkpoint.py).

torch counts the tensors a checkpointed function saves in its forward, and stops the
recomputation once it has saved as many again: what the function would compute after its last
saving op is not run (its Python code included). Here a checkpoint watches, through
`state.saved_watch`, every autograd node that saves tensors (graph.py's record and a custom
Function's, each called once the node holds them), in the order they are made. The forward
remembers, for each saved entry backward will need, the place of its node in that order; the
recomputation stops once it has made as many saving nodes as the forward did, and reads each
entry from the node at the same place.

A compiled function's call (compiler/api.py) makes one node for all the ops it runs: it tells
the watches how many saving nodes eager's run of it makes (counted when it was traced), which
take that many places (`made`). Where a recomputation's stop falls inside such a call and the
call has Python effects (global hooks, writes, prints, in-place updates), it runs its function
eagerly instead, so that the stop comes at eager's place and the effects after it do not
happen; a call without effects runs compiled, and the stop comes once it returns.
"""

from __future__ import annotations

from ..autograd.saved_tensors import PackedSavedTensor, SavedTensor, holds_own_entries
from ..tensor.state import state


class StopRecomputation(Exception):  # noqa: N818 - torch's _StopRecomputationError
    """Raised by the watch of a recomputation (its argument) once it has made every saving
    node it needs."""


class SavingNodes:
    """The autograd nodes that save tensors while a checkpointed function runs, in order;
    with `stop_after`, StopRecomputation once there are that many. A context manager that
    installs it in `state.saved_watch`."""

    def __init__(self, stop_after: int | None = None):
        self.nodes: list = []  # the saving nodes; None for a place a compiled call took
        self.stop_after = stop_after
        self.unknown = False  # a compiled call made saving nodes of an unknown count

    def __call__(self, node) -> None:
        if not holds_own_entries(node):
            return
        self.nodes.append(node)
        if len(self.nodes) == self.stop_after:
            raise StopRecomputation(self)

    def stops_within(self, count: int | None) -> bool:
        """Whether the stop falls among the next `count` saving nodes (None: an unknown
        count)."""
        if self.stop_after is None:
            return False
        return count is None or len(self.nodes) + count >= self.stop_after

    def made(self, count: int | None) -> None:
        """A compiled call made `count` saving nodes (None: unknown) as one node of its own;
        StopRecomputation once they reach the stop."""
        if count is None:
            self.unknown = True
            return
        self.nodes.extend([None] * count)
        if self.stop_after is not None and count and len(self.nodes) >= self.stop_after:
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
            if node is None:  # a compiled call's place: it keeps its own residuals
                break
            saved = node._saved_out if slot == "out" else (
                node._saved[slot] if node._saved is not None and slot < len(node._saved)
                else None)
            if not isinstance(saved, SavedTensor) or isinstance(saved, PackedSavedTensor):
                break
            found.append(saved)
        return found
