"""The Tracer's side effects (trace.py's Tracer takes them from EffectsMixin): in-place writes
while tracing and the outputs they become when the trace ends.

A write into a tensor is functional in the graph: the tensor's symbolic value is replaced, and
for a real tensor from outside the call (a parameter, optimizer state) or an argument the new
value becomes an "update" output, written back by whoever runs the graph; `p.data = ...` is
such a write. `finish` adds the side-effect outputs: the "grad" outputs of .grad assigned or
accumulated during the trace, the "update" outputs, how far each written tensor's version
counter moved, and the .grad the function cleared; restore() (trace.py) then puts the real
tensors back as they were, so that tracing itself changes nothing.
"""

from __future__ import annotations

import numpy as np

from ..tensor.graph_break import GraphBreak, graph_break
from ..tensor.tensor import Tensor
from .aliasing import root_written_through
from .eager_layout import assigned_grad_layout
from .graph import Graph

__all__ = ["EffectsMixin", "storage_root"]


def storage_root(array) -> int:
    """The id of the buffer an array's memory belongs to: arrays that may overlap share it."""
    while isinstance(getattr(array, "base", None), np.ndarray):
        array = array.base
    owner = getattr(array, "base", None)
    return id(owner if owner is not None else array)


class EffectsMixin:
    """Tracer methods that write into traced tensors and add the side-effect outputs."""

    def assign_data(self, target: Tensor, new: Tensor) -> bool:
        """`target.data = new` while tracing; False leaves the swap to Tensor's setter.

        A tensor the function made itself swaps as in eager. A tensor from outside the call
        (a parameter: `p.data = p.data * 0.5`, vector_to_parameters) or an argument keeps its
        values in the compiled program as a write of `new`'s values into its storage, written
        back after each run, so its later reads in the call and the caller see them; its
        version counter does not move, as in eager. A new shape or dtype (`p.data =
        p.data.half()`) changes what the executable's inputs are: a graph break."""
        argument = self._argument_entries.get(id(target)) is not None
        if target._payload is None and not argument:
            return False
        if tuple(new.shape) != tuple(target.shape) or new._dtype is not target._dtype:
            graph_break(f"`.data` assigned a tensor of another shape or dtype ({new._dtype} "
                        f"{list(new.shape)} into {target._dtype} {list(target.shape)})",
                        needs_data=False)
        if new._payload is not None and new._payload is target._payload:
            return True
        self.write(target, new.detach())
        return True

    def write(self, target: Tensor, result: Tensor) -> None:
        link = target._traced_view
        if link is not None:
            # A write through a view (or alias) is a write of its root: the root's new value
            # has the written values scattered in where the view addresses it.
            root = link.root
            self.write(root, root_written_through(target, result))
            target._value = self.value_of(result)
            link.root_value = self.root_value(root)
            return
        value = self.value_of(result)
        if target._payload is None:
            entry = self._argument_entries.get(id(target))
            if entry is not None:
                self.first_writes.setdefault(id(entry), len(self.graph.nodes))
            self.first_values.setdefault(id(target), (target, target._value))
            target._value = value  # a functional update: the graph itself has no mutation
            return
        self.value_of(target)  # lift it (and remember its state) if this is its first use
        key = id(target._payload)
        if key in self._fresh_storages and key not in self._fresh_targets:
            self._read_factory_values(key, target)
        self.first_writes.setdefault(id(self._entries[key]), len(self.graph.nodes))
        # Other captured tensors sharing this storage (views made before the call) would read
        # stale values from here on: reading them again is a graph break.
        self._aliased.update(
            other for other in self._sharing.get(storage_root(target._payload), ())
            if other != key and np.may_share_memory(self._entries[other].tensor._payload,
                                                    target._payload))
        self._current[key] = value
        self._updates[key] = (self._fresh_targets.get(key, self._entries[key]), value)
        target._value = value  # read by copies autograd takes of the written tensor

    def forget_writes_to(self, before: set) -> None:
        """Write nothing back into the tensors a factory made while the backward was traced
        (their inputs are not among `before`, the ids of the graph's inputs until then): the
        backward's temporaries, `zeros_like(grad)` filled by `out=`, die with it, and their
        values are the backward graph's own."""
        fresh = {id(entry) for entry in self._fresh_targets.values()}
        for key, (entry, _) in list(self._updates.items()):
            if id(entry) in fresh and id(entry) not in before:
                del self._updates[key]

    def _read_factory_values(self, key: int, target: Tensor) -> None:
        """A tensor a factory made in this call, about to be written: the graph reads its
        factory values from a copy that nothing writes, and its final value is written back
        into it through an input of its own (which a call that stores it in Python state, run
        once, needs). Eager makes it anew on every call; read from the tensor itself, each run
        would start from the last run's values."""
        entry = self._entries[key]
        data = target._payload
        copied = np.array(data, order="K", copy=True) if data.__class__ is np.ndarray else \
            data.copy()
        entry.tensor = Tensor._make(copied, target._dtype)
        self.graph.add_input(tuple(data.shape), target._dtype, "captured",
                             self.unique_name(f"{entry.name}_made"), target)
        self._fresh_targets[key] = self.graph.inputs[-1]

    def finish(self, graph: Graph, args: list) -> None:
        """Add the side-effect outputs: .grad assigned during the trace, in-place updates."""
        for key, tensor in self._assigning.items():
            self.assigned_grads[key] = tensor._grad
        self._assigning = {}
        # Tensors a factory made in this call that a write gave autograd history: fine while
        # they die with the call; compiler/tracing.py breaks the graph where the call also
        # changed Python state, in which one may have been stored.
        self.fresh_history = [touched.tensor for touched in self._touched.values()
                              if id(touched.tensor) in self.fresh and touched.history_changed()]
        for touched in self._touched.values():
            if touched.history_changed() and id(touched.tensor) not in self.fresh:
                # Eager leaves that tensor with autograd history made inside the call, which
                # a graph run cannot give it.
                raise GraphBreak("an in-place write of a value that requires grad into a "
                                 f"tensor from outside the function ({touched.entry.name})",
                                 needs_data=False)
        # A real tensor the function gave a new .grad without reading it (`t.grad = x * 2`)
        # becomes a captured input all the same: its .grad output needs the input to name.
        for tensor, before in list(self.grads_before.values()):
            if id(tensor) not in self._touched and tensor._grad is not None and \
                    tensor._grad is not before:
                self.value_of(tensor)
                self._touched[id(tensor)].grad = before
        for entry, tensor in args:
            if tensor._grad is not None and tensor._grad._payload is None:
                output = graph.add_output(self.value_of(tensor._grad), self.unique_output(
                    f"{entry.name}.grad"), "grad", entry)
                self.grads_left[output.name] = tensor._grad
                if id(tensor) in self.grad_assigned:
                    self.fresh_grads[output.name] = tensor._grad
                    self._assigned_grad_layout(output.name, tensor)
        for touched in list(self._touched.values()):
            grad = touched.tensor._grad
            if grad is not touched.grad and grad is not None:
                output = graph.add_output(self.value_of(grad), self.unique_output(
                    f"{touched.entry.name}.grad"), "grad", touched.entry)
                self.grad_owners[output.name] = touched.tensor
                if id(touched.tensor) not in self.made:  # pruned: no .grad outlives the call
                    self.grads_left[output.name] = grad
                if id(touched.tensor) in self.grad_assigned:
                    self.fresh_grads[output.name] = grad
                    self._assigned_grad_layout(output.name, touched.tensor)
        for entry, value in self._updates.values():
            graph.add_output(value, self.unique_output(f"{entry.name}.update"), "update", entry)
        # An argument written in place (directly or through a view) gets its final value
        # written back into the caller's tensor, as a captured tensor does.
        for entry, tensor in args:
            if tensor._value is not entry.value:
                graph.add_output(self.value_of(tensor), self.unique_output(
                    f"{entry.name}.update"), "update", entry)
        # How many times each written tensor's version counter moved: the executable moves
        # the real counters as far on every call (a counter shared by views counts once).
        self.version_bumps = []
        counted = set()
        for entry, tensor in args:
            counter = tensor._version_counter
            if counter.value and id(counter) not in counted:
                counted.add(id(counter))
                self.version_bumps.append((entry, counter.value))
        for touched in self._touched.values():
            counter = touched.tensor._version_counter
            if id(touched.tensor) in self.made and \
                    counter is not touched.entry.tensor._version_counter:
                # An alias the call made with a counter of its own (`p.data`): writes through
                # it move no counter that outlives the call, as in eager.
                continue
            if counter.value != touched.version and id(counter) not in counted:
                counted.add(id(counter))
                self.version_bumps.append((touched.entry, counter.value - touched.version))
        # `.grad = None` (zero_grad(set_to_none=True)) on a tensor the trace read: the caller
        # that runs the graph repeats it, since restore() undoes it on the real tensor; also
        # where .grad was None already, since a later call may find a .grad there.
        self.cleared_grads = [touched.entry for touched in self._touched.values()
                              if touched.tensor._grad is None and (
                                  touched.grad is not None or
                                  id(touched.tensor) in self.grad_assigned)]

    def _assigned_grad_layout(self, name: str, tensor: Tensor) -> None:
        """A .grad the function assigned (and backward may have added into, in place, in
        eager) keeps the assigned tensor's layout: each run's is laid out so
        (compiler/executable.py); a .grad backward made follows the parameter's instead."""
        assigned = self.assigned_grads.get(id(tensor))
        if assigned is not None:
            self.output_layouts[name] = assigned_grad_layout(self, assigned)
