"""Buffer planning: which memory a plan's kernels and products write their results into.

A compiled plan (fusion.py) runs the same steps on the same shapes every call, so the
buffers its intermediate values need are known when it is built. Here each kernel or product
output that never leaves the plan gets a BufferSlot, and values whose lifetimes do not overlap
share one: a slot is handed back once the last step that reads its value (directly, or through
a view a single-node step made of it) has run, and the next output that fits takes it over.
Slots are allocated on first use and kept from one call to the next.

A plan whose slots would take PACKED_FROM bytes or more is packed instead (`_pack`): each
value's life gets an offset in one Arena, so that a slot grown for a large value does not sit
idle under small ones (docs/notes/cpu-codegen.md).

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
import threading
from dataclasses import dataclass, field

import numpy as np

ALIGNMENT = 64  # bytes: a cache line, and an AVX-512 vector
# Plans whose slots take at least this many bytes are packed into one arena where that takes
# at most PACKED_SHARE of the slots' bytes. Below, a plan's values fit the caches and the
# slots, each taken again by the next value that fits it as soon as it is free, keep the
# memory just written hot; above, they are DRAM-bound anyway and the bytes matter.
PACKED_FROM = 64 << 20
PACKED_SHARE = 0.9


class BufferSlot:
    """A block of memory that values of one plan use in turn; allocated at its planned size
    the first time a step asks for it, on its own or at `offset` in a plan's Arena."""

    def __init__(self, arena: Arena | None = None, offset: int = 0):
        self.nbytes = 0
        self.values = 0  # how many planned values use it (for describe and tests)
        self.arena = arena
        self.offset = offset
        self._base: np.ndarray | None = None

    def take(self, shape: tuple, dtype) -> np.ndarray:
        """A C-contiguous array of `shape` and `dtype` over the start of the slot."""
        dtype = np.dtype(dtype)
        count = math.prod(shape)
        if count * dtype.itemsize > self.nbytes:  # not what was planned: an array of its own
            return np.empty(shape, dtype)
        if self._base is None:
            if self.arena is not None:
                self._base = self.arena.block()[self.offset:self.offset + self.nbytes]
            else:
                self._base = _aligned(self.nbytes)
        return self._base[:count * dtype.itemsize].view(dtype).reshape(shape)


class Arena:
    """One block of memory holding the slots of a plan packed by `_pack` at their offsets."""

    def __init__(self, nbytes: int):
        self.nbytes = nbytes
        self._block: np.ndarray | None = None
        self._lock = threading.Lock()  # side-by-side products take their slots on two threads

    def block(self) -> np.ndarray:
        if self._block is None:
            with self._lock:
                if self._block is None:
                    self._block = _aligned(self.nbytes)
        return self._block


def _aligned(nbytes: int) -> np.ndarray:
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start:start + nbytes]


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
    # A value's memory from the step making it to its last read, with the values stored
    # over it (donations): [first step, last step, bytes, [(holder, position)]].
    lives: list = []
    life_of: dict = {}  # id(slot) -> the life its latest value belongs to
    for index, step in enumerate(steps):
        donated = _donations(step, index, last_read, slot_of, roots)
        for number, (holder, position, value) in enumerate(step.outputs):
            if id(value) in escaping:
                holder.reusable[position] = False
                continue
            nbytes = _nbytes(value)
            end = last_read.get(id(value), index)
            slot = donated.get(number)
            if slot is not None:
                held[index].remove(slot)
                life = life_of[id(slot)]
                life[1], life[2] = max(life[1], end), max(life[2], nbytes)
            else:
                slot = _fitting(free, nbytes)
                life = [index, end, nbytes, []]
                lives.append(life)
            if slot is None:
                slot = BufferSlot()
                slots.append(slot)
            life[3].append((holder, position))
            life_of[id(slot)] = life
            slot.nbytes = max(slot.nbytes, nbytes)
            slot.values += 1
            holder.reusable[position] = True
            holder.slots[position] = slot
            slot_of[id(value)] = slot
            held.setdefault(end, []).append(slot)
        for made, sources in step.views:
            roots[id(made)] = set().union(*(roots.get(id(source), {id(source)})
                                            for source in sources))
        free.extend(held.pop(index, ()))
    total = sum(slot.nbytes for slot in slots)
    if total >= PACKED_FROM:
        packed = _pack(lives, total)
        if packed is not None:
            return packed
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


def _pack(lives: list, total: int) -> list | None:
    """Slots at offsets in one Arena for `lives` ([first step, last step, bytes, holders]),
    where two lives alive at a common step never overlap in memory; None when that takes
    more than PACKED_SHARE of `total` (the slots' bytes).

    Greedy by size (the offset planning of TensorFlow Lite's and ONNX Runtime's arenas):
    the largest life first, each in the smallest gap that holds it between the lives already
    placed that overlap it in time, else above the highest of them. Slots shared in turn by
    values of every size grow to the largest they hold and leave the rest of their bytes idle
    while a small value is in them: on GPT-2's 124M-parameter training step, 2.73 GB of
    slots for 1.55 GB alive at once at most."""
    order = sorted(range(len(lives)), key=lambda number: (-lives[number][2], lives[number][0]))
    starts = np.empty(len(lives), np.int64)
    ends = np.empty(len(lives), np.int64)
    offsets = np.empty(len(lives), np.int64)
    sizes = np.empty(len(lives), np.int64)
    placed = np.zeros(len(lives), bool)
    for number, (first, last, nbytes, _) in enumerate(lives):
        starts[number], ends[number] = first, last
        sizes[number] = -(-nbytes // ALIGNMENT) * ALIGNMENT
    arena_bytes = 0
    for number in order:
        size = sizes[number]
        overlapping = placed & (starts <= ends[number]) & (ends >= starts[number])
        offset = 0
        taken = np.flatnonzero(overlapping)
        if len(taken):
            # The gaps below each placed life, in the order of their offsets: the smallest
            # that holds this one, else the end of the highest.
            taken = taken[np.argsort(offsets[taken], kind="stable")]
            reach = np.maximum.accumulate(offsets[taken] + sizes[taken])
            below = np.concatenate(([0], reach[:-1]))
            gaps = offsets[taken] - below
            fitting = np.flatnonzero(gaps >= size)
            offset = below[fitting[np.argmin(gaps[fitting])]] if len(fitting) else reach[-1]
        offsets[number] = offset
        placed[number] = True
        arena_bytes = max(arena_bytes, offset + size)
    if arena_bytes > PACKED_SHARE * total:
        return None
    arena = Arena(int(arena_bytes))
    slots = []
    for number, (_, _, nbytes, holders) in enumerate(lives):
        slot = BufferSlot(arena, int(offsets[number]))
        slot.nbytes = nbytes
        slot.values = len(holders)
        for holder, position in holders:
            holder.slots[position] = slot
        slots.append(slot)
    return slots
