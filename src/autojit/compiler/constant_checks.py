"""Decisions on values computed from constant tensors alone, guarded by those tensors' values
instead of being checked in the graph; a part of the trace stage (tracing.py).

A decision a trace makes on a graph value (tensor/shape_env.py's value checks: `if t1 >= t[j]`,
`torch.arange(0, n.item())`) is normally checked on every run once the graph has computed the
value, and one Python needs as a number splits the graph into segments (segments.py). Where
that value is computed from nothing but tensors the function captures that need no gradient
and that the call does not write (an ODE solver's time points, a mask, a lookup table), plus
tensors a factory made in the call (`arange`), the decision is the same on every call whose
captured tensors hold the same values: the trace takes it as eager would, and the guards
compare those tensors' values (guard_conditions.data_read_conditions, as for `bool(t)` on a
real tensor). The graph then has no check, so no segment, and `fullgraph=True` accepts it. A
captured tensor the call writes later, one over the byte budget, or a value reading an
argument, a parameter, a random draw or a runtime scalar keeps its check. See
docs/notes/symbolic-scalars.md.
"""

from __future__ import annotations

import numpy as np

# At most this many bytes of captured tensors are compared by the guards of one trace for
# folded decisions: a comparison of the bytes runs on every call.
MAX_FOLDED_BYTES = 1 << 14


class ConstantChecks:
    """The value checks of one trace that are decided by constant captured tensors."""

    def __init__(self, graph, tracer, reachable: dict):
        self._graph, self._tracer, self._reachable = graph, tracer, reachable
        self._inputs: dict | None = None  # id(Value) -> Input, as the graph has them
        self.folded: list = []  # (check, [captured tensors it reads])

    def fold(self, check) -> bool:
        """Whether `check` is decided by constant tensors; if so it is kept to be folded."""
        tensors = self._sources(check)
        if tensors is None:
            return False
        held = {id(tensor): tensor for _, found in self.folded for tensor in found
                if id(tensor) not in self._tracer.fresh}
        held.update((id(tensor), tensor) for tensor in tensors
                    if id(tensor) not in self._tracer.fresh)
        if sum(tensor._payload.nbytes for tensor in held.values()) > MAX_FOLDED_BYTES:
            return False
        self.folded.append((check, tensors))
        return True

    def finish(self, env) -> list:
        """Drop the folded checks from `env` and have the guards compare their tensors' values;
        returns the checks that a later write in the call made unfoldable (kept as checks)."""
        tracer = self._tracer
        kept, dropped = [], set()
        for check, tensors in self.folded:
            if any(tracer.written_or_aliased(tensor) for tensor in tensors):
                kept.append(check)
                continue
            dropped.add(id(check))
            for tensor in tensors:
                if id(tensor) not in tracer.fresh:
                    tracer.note_data_read(tensor, check.what or "a decision on its values")
        env.value_checks[:] = [check for check in env.value_checks if id(check) not in dropped]
        return kept

    def _sources(self, check) -> list | None:
        """The captured tensors the values `check` reads are computed from, or None when they
        read anything else."""
        tracer, env = self._tracer, self._tracer.env
        if any(name not in env.leaves or name not in tracer.scalars.leaf_values
               for name in check.names):
            return None  # a runtime scalar (read afresh by every call)
        if self._inputs is None or len(self._inputs) != len(self._graph.inputs):
            self._inputs = {id(entry.value): entry for entry in self._graph.inputs}
        stack = [tracer.scalars.leaf_values[name] for name in check.names]
        seen, tensors = set(), {}
        while stack:
            value = stack.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            if value.producer is not None:
                stack.extend(item for item in value.producer.inputs
                             if hasattr(item, "producer"))
                continue
            entry = self._inputs.get(id(value))
            if entry is None or entry.kind != "captured" or entry.tensor is None:
                return None
            tensor = entry.tensor
            if tensor._requires_grad or tensor._payload.__class__ is not np.ndarray or \
                    tracer.written_or_aliased(tensor) or \
                    (id(tensor) not in tracer.fresh and id(tensor) not in self._reachable):
                return None
            tensors[id(tensor)] = tensor
        return list(tensors.values())
