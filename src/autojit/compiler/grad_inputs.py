"""A `.grad` the traced call read, as an input each run reads afresh, not a tensor it holds.

A compiled `optimizer.step()`, or a step whose backward runs outside it, reads `p.grad`. That
tensor is a new object on every call whose gradients were set to None in between
(`zero_grad()` then `backward()`), with the same shape and dtype. Guarding it by identity
traced again on every call (and ran eagerly after the recompile limit). So the trace's
captured input for such a gradient stands for "whatever `p.grad` holds": its guards check
that `p.grad` is a tensor of the traced shape, dtype, device and memory layout, and each run
reads that tensor's array (the plan reads `entry.tensor._payload` on every run, and writes an
in-place update of the gradient, `clip_grad_norm_`'s, into it).

Not every gradient qualifies: one the call assigned before reading it is its own output, one
with autograd history (`create_graph=True`) is guarded by identity as any tensor with history,
and a gradient of an argument is read through the argument already. See docs/notes/guards.md.
"""

from __future__ import annotations

from ..tensor.tensor import Tensor


class GradInput:
    """Stands for the tensor `owner.grad` holds when a run starts (see the module docstring):
    attribute reads go to that tensor."""

    __slots__ = ("owner", "traced")

    def __init__(self, owner: Tensor, traced: Tensor):
        self.owner = owner
        self.traced = traced  # the gradient the trace read (its shape, dtype, name)

    @property
    def _payload(self):
        return self.owner._grad._payload

    def __getattr__(self, name: str):
        return getattr(self.owner._grad, name)

    def __repr__(self) -> str:
        return f"<the .grad of a tensor of shape {list(self.owner.shape)}>"


def runtime_grads(captured_inputs: list, candidates, read: set, overwritten: set) -> dict:
    """id(captured Input) -> the tensor whose .grad it is, for each captured input that is the
    current `.grad` of a tensor among `candidates` that the trace read the gradient of (ids in
    `read`, not in `overwritten`) and that has no autograd history."""
    owners = {}
    for tensor in candidates:
        grad = tensor._grad
        if grad is not None and id(tensor) in read and id(tensor) not in overwritten and \
                tensor._payload is not None:
            owners[id(grad)] = tensor
    found = {}
    for entry in captured_inputs:
        grad = entry.tensor
        owner = owners.get(id(grad))
        if owner is not None and isinstance(grad, Tensor) and grad.grad_fn is None and \
                not grad._requires_grad and grad._payload is not None:
            found[id(entry)] = owner
    return found
