"""The native entry point: a CPU plan's steps run as one call into native code.

A plan (codegen/schedule/plan.py) runs its steps from Python: each kernel, product and view costs
1-10 us of Python around its native call, about 150 us of the 1.1 ms gradient-penalty step. Once a
plan runs in its steady state (every kept buffer allocated, plan.Plan.run_arrays), one call is
*recorded*: each step reports the native calls it made (`Recording`): a kernel on its pointer table,
a kernel split over the cores, BLAS gemm records, a copy, the combine of a split reduction's partial
blocks. A step that did anything else in Python (an eager node, a contiguous copy of an input, a
product off BLAS) refuses, and the plan keeps its Python loop.

`Program.assemble` lays the calls out in one int64 array: a table of operations (function,
argument, parts) and each operation's argument words. Every pointer the calls used must lie in
memory the assembler can name:

- a buffer the plan keeps across calls (stable: the word is left as it is);
- an input array (the word becomes the input's data pointer plus an offset, written anew on
  each call);
- an array the recorded call allocated (a result returned to the caller, a value saved for a
  backward): the program allocates its like on each call and writes its pointer the same way.

A pointer into anything else refuses the program. On each call `Program.run` calls the runner, which
checks that the inputs have the recorded shapes, strides and dtypes and that the same captured
tensors may be written in place (input_checks.py; where it cannot tell, Python checks, as
codegen/schedule/in_place.py does), patches the per-call pointers, and calls each operation, a split
one through the workers (workers.py), stopping at the first nonzero status. When the inputs differ
it returns None and the plan runs its Python loop, which is always correct. See
docs/notes/cpu-codegen.md.
"""

from __future__ import annotations

import bisect
import ctypes

import numpy as np
from numpy.lib.array_utils import byte_bounds

from . import input_checks, workers
from .gemm import kernel as gemm_kernel
from .gemm import prepacked as prepacked_gemm
from .program_ir import combine_text, runner_text

# Words of a gemm record (workers.GEMM_RECORD) that hold pointers: a, b and c.
_GEMM_POINTERS = tuple(index for index, (name, _) in enumerate(workers.GEMM_RECORD)
                       if name in ("a", "b", "c"))
_OPERATION_WORDS = 3  # function, argument, parts
# The dtypes whose partial results the program combines natively (signed integers only: the
# integer folds compare signed); others are combined by NumPy.
_LLVM_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
               np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.int16): "i16",
               np.dtype(np.int8): "i8"}

_RUNNER_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
_native: dict = {}  # the runner module, its functions, and the combines made so far
_RUN = None  # _native["run"], once made: read on every call


def _runner() -> dict:
    if "run" not in _native:
        from . import jit as cpu
        from .helper_modules import add_module

        prefix = "autojit_program"  # one text: compiled once, kept in the disk cache
        item_offset, data_offset = cpu.layout()
        text = runner_text(prefix, item_offset, data_offset)
        text += input_checks.check_ir(prefix, data_offset,
                                      input_checks.array_fields(data_offset))
        module, (run, copy, check) = add_module(
            text, [f"{prefix}_run", f"{prefix}_copy", f"{prefix}_check_inputs"])
        _native.update(module=module, run=_RUNNER_TYPE(run), copy=copy, check_inputs=check)
        global _RUN
        _RUN = _native["run"]
    return _native


def _combine_function(kind: str, dtype: np.dtype) -> int | None:
    """The address of the native combine for a reduction kind and dtype, or None."""
    type_name = _LLVM_TYPES.get(np.dtype(dtype))
    if type_name is None or kind not in ("sum", "prod", "max", "min"):
        return None
    key = ("combine", kind, type_name)
    if key not in _native:
        from .helper_modules import add_module

        name = f"autojit_program_combine_{kind}_{type_name}"
        text = combine_text(name, kind, type_name)
        module, (address,) = add_module(text, [name])
        _native[key] = (module, address)
    return _native[key][1]


def available() -> bool:
    """Whether programs can run here: the native workers exist (Linux on x86-64, any number of
    cores) and the ndarray layout was found (cpu.object_layout)."""
    if workers.shared() is None:
        return False
    from . import jit as cpu

    return cpu.layout() is not None


class Refused(Exception):
    """The recorded call did something a program cannot repeat (the message says what)."""


class Recording:
    """The native calls of one run of a plan, step by step, with the arrays they touched (kept
    alive until the program is assembled, so that no address is reused meanwhile)."""

    def __init__(self):
        self.operations: list = []  # (function, words, pointer positions, parts, step index)
        self.arrays: list = []
        self.step = -1
        self.recorded = False  # whether the current step reported what it did
        self.refusal: str | None = None

    def begin(self, step_index: int) -> None:
        self.step, self.recorded = step_index, False

    def refuse(self, reason: str) -> None:
        if self.refusal is None:
            self.refusal = reason

    def view(self, *arrays) -> None:
        """The step made views and ran nothing."""
        self.arrays.extend(arrays)
        self.recorded = True

    def kernel(self, entry: int, table: np.ndarray, *arrays) -> None:
        """A compiled kernel called on each row of `table` (its entry's pointers, one row per
        part; workers.kernel_part)."""
        self.arrays.extend(arrays)
        rows, arity = table.shape
        words = [entry, ("table", 3), arity, *table.reshape(-1).tolist()]
        self._add(workers.shared().kernel_part, words, range(3, 3 + rows * arity), rows)

    def gemm(self, records: list, *arrays) -> None:
        """BLAS gemm calls (blas.gemm_records), one per core at a time as blas.run_records."""
        if not records:  # an empty product: Python cleared or scaled its result
            self.refuse("an empty product")
            return
        self.arrays.extend(arrays)
        native = workers.shared()
        for start in range(0, len(records), native.parts):
            group = records[start:start + native.parts]
            words = [word for record in group for word in record]
            positions = [part * workers.GEMM_RECORD_WORDS + word
                         for part in range(len(group)) for word in _GEMM_POINTERS]
            self._add(native.gemm_part, words, positions, len(group))

    def call(self, function: int, words: list, pointers: tuple, *arrays,
             parts: int = 1) -> None:
        """A call of a native function reading `words` (the words at `pointers` are
        addresses into `arrays`), as rows.py's gathers and scatters take them; with `parts`,
        `function(words, part)` for each part, on the workers (convolution/__init__.py's
        routines)."""
        self.arrays.extend(arrays)
        self._add(function, list(words), pointers, parts)

    def copy(self, destination: np.ndarray, source: np.ndarray) -> None:
        if not (destination.flags.c_contiguous and source.flags.c_contiguous and
                destination.dtype == source.dtype and destination.shape == source.shape):
            self.refuse("a copy between arrays of different layouts")
            return
        self.arrays.extend((destination, source))
        address = workers.data_address
        self._add(_runner()["copy"], [address(destination), address(source), source.nbytes],
                  (0, 1), 1)

    def combine(self, kind: str, blocks: np.ndarray, out: np.ndarray) -> None:
        """`out` = the reduction `kind` of the blocks along their first axis."""
        if kind == "sum" and blocks.dtype.kind == "c" and out.dtype == blocks.dtype and \
                blocks[0].flags.c_contiguous and out.flags.c_contiguous:
            # A complex sum adds each part: the float sum of the pairs.
            part = blocks.real.dtype
            blocks, out = blocks.view(part), out.view(part)
        function = _combine_function(kind, blocks.dtype)
        if function is None or out.dtype != blocks.dtype or not out.flags.c_contiguous or \
                not blocks[0].flags.c_contiguous or out.size != blocks[0].size:
            self.refuse(f"a {kind} combine of {blocks.dtype} blocks")
            return
        self.arrays.extend((blocks, out))
        address = workers.data_address
        self._add(function, [address(blocks), len(blocks), blocks.strides[0],
                             blocks[0].size, address(out)], (0, 4), 1)

    def _add(self, function: int, words: list, positions, parts: int) -> None:
        self.operations.append((function, words, list(positions), parts, self.step))
        self.recorded = True


class _Ranges:
    """Named arrays' byte ranges, to find which one a pointer lies in.

    A program's recording holds thousands of pointers and the ranges hundreds of arrays (a
    4-layer GPT step: 5,097 lookups, 78 ms when each scanned the list), so the ranges are also
    kept sorted by their low end, with the highest end reached so far at each place: a lookup
    bisects to the last range starting at or below the pointer and walks back only while an
    earlier range could still reach it. Where ranges overlap, the one added first wins, as in
    a scan in order."""

    def __init__(self):
        self._entries: list = []  # (low, high, name, data address), in the order added
        self._lows: list = []  # the entries' low ends, sorted
        self._order: list = []  # the entry at each sorted place
        self._reach: list = []  # the highest high end of the sorted places up to each

    def add(self, name, array: np.ndarray) -> None:
        low, high = byte_bounds(array)
        # An empty array (a generic kernel's sizes when it has none) still owns its pointer.
        high = max(high, low + 1)
        self._entries.append((low, high, name, workers.data_address(array)))
        place = bisect.bisect_right(self._lows, low)
        self._lows.insert(place, low)
        self._order.insert(place, len(self._entries) - 1)
        reach = self._reach
        reach.insert(place, max(reach[place - 1], high) if place else high)
        for later in range(place + 1, len(reach)):
            if reach[later] >= high:
                break
            reach[later] = high

    def find(self, pointer: int):
        """(name, offset from its data pointer) of the array holding the byte at `pointer`."""
        place = bisect.bisect_right(self._lows, pointer) - 1
        first = None
        while place >= 0 and self._reach[place] > pointer:
            entry = self._order[place]
            if pointer < self._entries[entry][1] and (first is None or entry < first):
                first = entry
            place -= 1
        if first is None:
            return None
        _, _, name, base = self._entries[first]
        return name, pointer - base


def _pack_shared_operands(recording: Recording, ranges: _Ranges, plan, inputs: int,
                          cumulative: list) -> list:
    """Rewrite the recording's gemm records that share an input's b to read it packed once
    (gemm/prepacked.py); returns the packed copies, which the program keeps and the ranges
    now name as kept buffers."""
    if not gemm_kernel.enabled():
        return []

    def functions(kind, transpose_a, transpose_b, function):
        dtype = np.float32 if kind == 0 else np.float64
        return gemm_kernel.prepacked_functions(dtype, transpose_a == _TRANSPOSE,
                                               transpose_b == _TRANSPOSE, function)

    def input_of(address):
        found = ranges.find(address)
        return found[0] if found is not None and found[0].__class__ is int and \
            found[0] < inputs else None

    def unwritten(index, step):
        return plan._input_keys[index] not in cumulative[step]

    recording.operations, copies = prepacked_gemm.rewrite(
        recording.operations, workers.shared().gemm_part, functions, input_of, unwritten)
    for copy in copies:
        ranges.add(None, copy)
    return copies


_TRANSPOSE = 112  # CBLAS's CblasTrans, as gemm records hold it (gemm/blas.py)


def _owner(array: np.ndarray):
    """The array that owns `array`'s memory (the end of its chain of bases), or None."""
    while array.base is not None:
        array = array.base
        if array.__class__ is not np.ndarray:
            return None
    return array


def _layout(array) -> tuple:
    return array.shape, array.strides, array.dtype


class Program:
    """A recorded run of a plan, laid out for the native runner (see the module docstring)."""

    def __init__(self, words: np.ndarray, count: int, patches: np.ndarray, inputs: list,
                 fresh: list, outputs: list, allowed: frozenset, written: list, steps: list,
                 stable: list, checks: np.ndarray | None = None,
                 unread: frozenset = frozenset()):
        self._words, self._patches = words, patches  # kept alive: the runner reads them
        # The runner's check of the inputs (input_checks.py), or None: Python checks them.
        self._checks = checks
        self._checks_address = None if checks is None else workers.data_address(checks)
        # The kept buffers the words point into, held here too: a step that replaced one (a
        # Python-loop call) must not free memory the program still writes.
        self._stable = stable
        # The runner's words (program_ir.CALL_WORDS) with the checks and without, made for
        # the process's workers (`_call_workers`; a forked child has others).
        self._call_workers = None
        self._call_words = None
        self._checked_call = self._unchecked_call = 0
        # The recorded (shape, strides, dtype) of each input; holding the dtypes keeps the
        # addresses the check table compares with theirs alone.
        self._inputs = inputs
        self._fresh = fresh  # (shape, dtype) of each array allocated anew per call
        self._outputs = outputs  # how each graph output is made after the call
        # Where every output is one of the call's arrays (the common case): their positions.
        self._array_outputs = tuple(recipe[1] for recipe in outputs) \
            if all(recipe[0] == "array" for recipe in outputs) else None
        # Outputs whose array is one the call allocates (or a view of one, a transposed
        # result) and no other output shares: the caller may keep it as it is (a fresh .grad,
        # a result already laid out as eager's) instead of copying it.
        # Outputs nothing reads after the run (`unread`, the plan's unread_outputs: a result
        # returned as the .grad it equals) do not share their array with the one that is read.
        references = [recipe[1] for position, recipe in enumerate(outputs)
                      if recipe[0] in ("array", "view") and position not in unread]
        self.owned_outputs = frozenset(
            position for position, recipe in enumerate(outputs)
            if recipe[0] in ("array", "view") and recipe[1] >= len(inputs) and
            position not in unread and references.count(recipe[1]) == 1)
        self._allowed = allowed  # the captured inputs written in place
        self._written = written  # per operation: input ids written in place up to its step
        self._steps = steps  # per operation: the plan step that made it
        self.operation_count = count
        self.packed_operands = 0  # the b operands packed once for their products (assemble)

    @classmethod
    def assemble(cls, recording: Recording, plan, inputs: list, environment: dict,
                 allowed: frozenset, written: list):
        """The program for a recorded run of `plan` with these input arrays (in input order);
        raises Refused when it cannot repeat the run. `written`: per step, the ids of captured
        inputs it wrote in place."""
        if recording.refusal is not None:
            raise Refused(recording.refusal)
        values = [value for key, value in environment.items() if key.__class__ is int]
        if any(array.__class__ is not np.ndarray or array.size == 0
               for array in (*inputs, *values)):
            raise Refused("an input or value that is not a non-empty NumPy array")
        bounds = sorted(byte_bounds(array) for array in inputs)
        if any(low < previous_high for (_, previous_high), (low, _) in zip(bounds, bounds[1:])):
            # Pointers are patched per input: two inputs sharing memory would be ambiguous.
            raise Refused("inputs that share memory")
        ranges = _Ranges()
        stable = _stable_arrays(plan.steps)
        for array in stable:
            ranges.add(None, array)
        # The call's arrays, numbered as the runner finds them: the inputs, then the arrays
        # the call allocates.
        arrays = list(inputs)
        for index, array in enumerate(inputs):
            ranges.add(index, array)
        fresh = []
        for array in values:
            if ranges.find(byte_bounds(array)[0]) is not None:
                continue
            owner = _owner(array)
            if owner is None or not owner.flags.c_contiguous:
                raise Refused("a value whose memory no array owns")
            ranges.add(len(arrays), owner)
            arrays.append(owner)
            fresh.append((owner.shape, owner.dtype))
        cumulative, seen = [], []
        for step_written in written:
            seen = seen + list(step_written)
            cumulative.append(seen)
        packed = _pack_shared_operands(recording, ranges, plan, len(inputs), cumulative)
        stable = stable + packed
        words, count, patches = cls._lay_out(recording, ranges)
        outputs = [cls._output_recipe(environment[key], arrays, ranges)
                   for key in plan._output_keys]
        steps = [operation[4] for operation in recording.operations]
        program = cls(words, count, patches, [_layout(array) for array in inputs], fresh,
                      outputs, allowed, [cumulative[step] for step in steps],
                      [plan.steps[step] for step in steps], stable,
                      cls._input_checks(plan, inputs, allowed), plan.unread_outputs)
        program.packed_operands = len(packed)
        return program

    @staticmethod
    def _input_checks(plan, inputs: list, allowed: frozenset) -> np.ndarray | None:
        """The runner's check table, where the recorded call wrote every target in place (so
        that passing the table means in_place.allowed would allow them all again)."""
        targets = frozenset(key for key, _, _ in plan.in_place.targets) \
            if plan.in_place is not None else frozenset()
        if allowed != targets:
            return None
        from . import jit as cpu

        fields = input_checks.array_fields(cpu.layout()[1])
        positions = [index for index, key in enumerate(plan._input_keys) if key in targets]
        return input_checks.table(inputs, positions, fields)

    @staticmethod
    def _lay_out(recording: Recording, ranges: _Ranges) -> tuple:
        """(the program's words, the operation count, the per-call patches)."""
        operations = recording.operations
        total = _OPERATION_WORDS * len(operations) + sum(len(op[1]) for op in operations)
        words = np.zeros(total, np.int64)
        base = workers.data_address(words)
        patches = []
        start = _OPERATION_WORDS * len(operations)
        for number, (function, blob, pointers, parts, _) in enumerate(operations):
            header = _OPERATION_WORDS * number
            words[header:header + 3] = (function, base + 8 * start, parts)
            for position, word in enumerate(blob):
                if word.__class__ is tuple:  # a pointer into this blob (a kernel's table)
                    word = base + 8 * (start + word[1])
                words[start + position] = word
            for position in pointers:
                found = ranges.find(int(blob[position]))
                if found is None:
                    raise Refused("a native call read memory the plan does not track")
                array, offset = found
                if array is not None:  # not a kept buffer: the word is written on each call
                    patches.append((start + position, array, offset))
            start += len(blob)
        return words, len(operations), np.array(patches, np.int64).reshape(-1, 3)

    @staticmethod
    def _output_recipe(array: np.ndarray, arrays: list, ranges: _Ranges) -> tuple:
        for index, candidate in enumerate(arrays):
            if array is candidate:
                return ("array", index)
        index, _ = ranges.find(byte_bounds(array)[0]) or (None, 0)
        if index is None:
            return ("stable", array)
        base = arrays[index]
        if not base.flags.c_contiguous:
            raise Refused("an output that is a view of memory the program cannot rebuild")
        offset = workers.data_address(array) - workers.data_address(base)
        return ("view", index, array.shape, array.dtype, offset, array.strides)

    def run(self, plan, inputs: list) -> tuple | None:
        """The graph's outputs for these input arrays, or None (nothing run) when the call
        differs from the recorded one."""
        if self._checks is None and not self._inputs_match(plan, inputs):
            return None
        arrays = inputs
        if self._fresh:
            arrays = [*inputs, *[np.empty(shape, dtype) for shape, dtype in self._fresh]]
        native = workers.shared()
        if native is not self._call_workers:
            self._make_call_words(native)
        runner = _RUN or _runner()["run"]
        with native.lock:
            status = runner(self._checked_call, id(arrays))
            if status == input_checks.CHANGED:
                # Python decides, as it does for a program without a table.
                if not self._inputs_match(plan, inputs):
                    return None
                status = runner(self._unchecked_call, id(arrays))
        if status:
            self._fail(plan, status)
        if self._array_outputs is not None:
            return tuple([arrays[index] for index in self._array_outputs])
        return tuple([self._output(recipe, arrays) for recipe in self._outputs])

    def _make_call_words(self, native) -> None:
        """The runner's words for these workers: two rows, with the check table (when there
        is one) and without."""
        checks = self._checks_address or 0
        words = np.array([[native.state_address, native.run_address,
                           workers.data_address(self._words), self.operation_count,
                           workers.data_address(self._patches), len(self._patches), table]
                          for table in (checks, 0)], np.int64)
        self._call_words = words  # kept alive: the runner reads them
        self._checked_call = workers.data_address(words)
        self._unchecked_call = self._checked_call + words.strides[0]
        self._call_workers = native

    def _inputs_match(self, plan, inputs: list) -> bool:
        """Whether the inputs have the recorded layouts and the same captured tensors may be
        written in place (the checks the runner's table makes, in Python)."""
        for array, layout in zip(inputs, self._inputs):
            if array.__class__ is not np.ndarray or _layout(array) != layout:
                return False
        if plan.in_place is not None:
            return plan.in_place.allowed(dict(zip(plan._input_keys, inputs))) == self._allowed
        return not self._allowed

    def _fail(self, plan, status: int) -> None:
        """Raise the failing kernel's error, after bumping the versions of the captured
        tensors written in place so far (as the Python loop does)."""
        number = (status >> 32) - 1
        for key in self._written[number]:
            plan.in_place.tensors[key]._bump_version()
        self._steps[number].compiled.check_status(status & 0xFFFFFFFF)
        raise RuntimeError(f"native program: operation {number} failed with status "
                           f"{status & 0xFFFFFFFF}")

    @staticmethod
    def _output(recipe: tuple, arrays: list):
        kind = recipe[0]
        if kind == "array":
            return arrays[recipe[1]]
        if kind == "stable":
            return recipe[1]
        _, index, shape, dtype, offset, strides = recipe
        return np.ndarray(shape, dtype, buffer=arrays[index], offset=offset, strides=strides)


def _stable_arrays(steps: list) -> list:
    """The arrays a plan's steps keep from one call to the next: kept output buffers, split
    kernels' partial blocks, the sizes a generic kernel reads."""
    return [array for step in steps for array in step.kept_arrays()]
