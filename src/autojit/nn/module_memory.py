"""Module's memory: share_memory, to_empty, the memory-format step of Module.to
(module_conversion.py), which Module takes from MemoryMixin, and the shallow replica data
parallelism makes.

The first three go through Module._apply, which converts each parameter (in place, keeping the
object an optimizer holds) and replaces each buffer.
"""

from __future__ import annotations

from ..tensor.tensor import Tensor


def laid_out(tensor: Tensor, memory_format):
    """Module.to(memory_format=)'s conversion: a 4-d or 5-d tensor in that layout (the tensor
    itself where it already is, or has another rank), as torch converts only those."""
    if tensor.dim() not in (4, 5):
        return tensor
    converted = tensor.detach().to(memory_format=memory_format)
    return tensor if converted._payload is tensor._payload else converted


class MemoryMixin:
    """Module methods that move parameters and buffers to other memory."""

    def to_empty(self, *, device, recurse: bool = True):
        """Move the parameters and buffers to `device` without copying their values (they are
        uninitialized there, as `empty`'s): how a module made on the meta device gets memory
        to be initialized or loaded into. Parameters keep their identity."""
        from ..tensor.creation import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def _replicate_for_data_parallel(self):
        """A shallow replica, as torch's data-parallel replication makes: the same attributes
        and children, no parameters of its own, and its own buffer and child registries."""
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica

    def share_memory(self):
        """Move the parameters, their gradients and the buffers to shared memory, in place
        (Tensor.share_memory_: processes forked afterwards share them)."""
        def share(tensor):
            return tensor.share_memory_()  # in place: _apply has nothing to adopt

        return self._apply(share)
