"""Buffer planning: which memory a plan's kernels and products write their results into.

A compiled plan (fusion.py) runs the same steps on the same shapes every call, so the
buffers its intermediate values need are known when it is built. Here each kernel or product
output that never leaves the plan gets a BufferSlot, and values whose lifetimes do not overlap
share one: a slot is handed back once the last step that reads its value (directly, or through
a view a single-node step made of it) has run, and the next output that fits takes it over.
Slots are allocated on first use and kept from one call to the next.

Sharing keeps the plan's working set small: the gradient-penalty step's forty-odd values of
128 KB each fit the 2 MB of a core's L2 cache as a handful of slots, where one buffer per value
(about 5 MB) left each product reading its operands from further away.

An elementwise kernel may store an output over an input it reads for the last time, point for
point (StepBuffers.donors, chosen by fusion.py): it then writes into lines it has just read.

The steps describe themselves to the planner as StepBuffers (fusion.py builds them):
what they write, what they read, and which values they make that may be views of others.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

ALIGNMENT = 64  # bytes: a cache line, and an AVX-512 vector


class BufferSlot:
    """A block of memory that values of one plan use in turn; allocated at its planned size
    the first time a step asks for it."""

    def __init__(self):
        self.nbytes = 0
        self.values = 0  # how many planned values use it (for describe and tests)
        self._base: np.ndarray | None = None

    def take(self, shape: tuple, dtype) -> np.ndarray:
        """A C-contiguous array of `shape` and `dtype` over the start of the slot."""
        dtype = np.dtype(dtype)
        count = math.prod(shape)
        if count * dtype.itemsize > self.nbytes:  # not what was planned: an array of its own
            return np.empty(shape, dtype)
        if self._base is None:
            raw = np.empty(self.nbytes + ALIGNMENT, np.uint8)
            start = -raw.ctypes.data % ALIGNMENT
            self._base = raw[start:start + self.nbytes]
        return self._base[:count * dtype.itemsize].view(dtype).reshape(shape)


@dataclass
class StepBuffers:
    """What one plan step means for buffers."""
    # (holder, position, value): the holder's `slots[position]` and `reusable[position]`
    # are set for the value it writes.
    outputs: list = field(default_factory=list)
    reads: list = field(default_factory=list)  # the Values it reads
    views: list = field(default_factory=list)  # (value made, the Values it may be a view of)
    # (index into `outputs`, a Value read): the output may be stored over that value's memory
    # when this step is its last reader (a kernel reading it element for element, each
    # stored point after its own loads).
    donors: list = field(default_factory=list)


def _nbytes(value) -> int:
    return math.prod(value.shape) * value.dtype.numpy.itemsize


def plan_buffers(steps: list, escaping: set, returned: set) -> list:
    """Give every planned output not in `escaping` (ids of values that outlive the call) a
    slot, sharing slots between values that are never alive at once; values in `returned`
    (ids) live to the end of the plan. Returns the slots."""
    end = len(steps)
    last_read: dict = {id_: end for id_ in returned}
    # Backwards, so that a view's last read is known before the values it may view.
    for index in range(end - 1, -1, -1):
        step = steps[index]
        for made, sources in step.views:
            reach = max(last_read.get(id(made), index), index)
            for source in sources:
                last_read[id(source)] = max(last_read.get(id(source), index), reach)
        for value in step.reads:
            last_read[id(value)] = max(last_read.get(id(value), index), index)
    slots: list = []
    free: list = []
    held: dict = {}  # step index after which a slot is free again -> slots
    slot_of: dict = {}  # id(value) -> its slot
    roots: dict = {}  # id(value made by a single-node step) -> ids of the values it may view
    for index, step in enumerate(steps):
        donated = _donations(step, index, last_read, slot_of, roots)
        for number, (holder, position, value) in enumerate(step.outputs):
            if id(value) in escaping:
                holder.reusable[position] = False
                continue
            nbytes = _nbytes(value)
            slot = donated.get(number)
            if slot is not None:
                held[index].remove(slot)
            else:
                slot = _fitting(free, nbytes)
            if slot is None:
                slot = BufferSlot()
                slots.append(slot)
            slot.nbytes = max(slot.nbytes, nbytes)
            slot.values += 1
            holder.reusable[position] = True
            holder.slots[position] = slot
            slot_of[id(value)] = slot
            held.setdefault(last_read.get(id(value), index), []).append(slot)
        for made, sources in step.views:
            roots[id(made)] = set().union(*(roots.get(id(source), {id(source)})
                                            for source in sources))
        free.extend(held.pop(index, ()))
    return slots


def _donations(step: StepBuffers, index: int, last_read: dict, slot_of: dict,
               roots: dict) -> dict:
    """{index into step.outputs: the slot of a value this step reads for the last time} for
    the outputs that may be stored over it (StepBuffers.donors): an elementwise kernel then
    writes into lines it has just read, not into another buffer's, likely gone from the
    core's caches. The value must be read by nothing else of the step, views included."""
    donated: dict = {}
    taken: set = set()
    for number, value in step.donors:
        slot = slot_of.get(id(value))
        if number in donated or slot is None or id(slot) in taken or \
                last_read.get(id(value)) != index:
            continue
        if any(read is not value and id(value) in roots.get(id(read), ())
               for read in step.reads):
            continue
        donated[number] = slot
        taken.add(id(slot))
    return donated


def _fitting(free: list, nbytes: int) -> BufferSlot | None:
    """Take from `free` the smallest slot that holds `nbytes`, else the largest (it grows:
    no slot is allocated before planning ends); None when none is free."""
    if not free:
        return None
    large_enough = [slot for slot in free if slot.nbytes >= nbytes]
    slot = min(large_enough, key=lambda slot: slot.nbytes) if large_enough else \
        max(free, key=lambda slot: slot.nbytes)
    free.remove(slot)
    return slot
