"""The value stack of a running Python frame, for the read recorder (recorder.py).

The recorder sees each instruction of the user's code before it runs (sys.settrace's opcode
events up to Python 3.11, sys.monitoring's INSTRUCTION events from 3.12), and needs the
objects the instruction is about to use: the object an attribute is read from, the container
and key of a subscript, the callable and arguments of a call. Python exposes no frame's value
stack, so this module reads it from the interpreter's frame structure with ctypes:

- 3.10: the PyFrameObject holds `f_valuestack` and `f_stackdepth`, which the interpreter sets
  before it calls a trace function;
- 3.11: the frame object points to an `_PyInterpreterFrame` whose `localsplus` array holds the
  fast locals, cells and then the stack, `stacktop` items in all, also set before tracing;
- 3.12 and 3.13: the same layout (fields in another order), but `stacktop` is not kept up to
  date for monitoring callbacks, so the depth comes from a static analysis of the bytecode
  (`stack_depths`: CPython's own compiler computes the same depths to size the frame).

`reader()` returns None on any other version, or when the check on a known function
(`_self_check`) does not find the values it must: the recorder then does not run, and the
guards fall back to the complete walk (docs/notes/guards.md).
"""

from __future__ import annotations

import ctypes
import dis
import functools
import sys

_PTR = ctypes.sizeof(ctypes.c_void_p)
VERSION = sys.version_info[:2]


class _Null:
    """A NULL stack slot (the interpreter pushes one before a callable that is not a method)."""

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()


_OBJECTS = ctypes.POINTER(ctypes.py_object)
_LOCALSPLUS = 8 * _PTR + 8  # the offset of `localsplus` in an _PyInterpreterFrame (3.11-3.13)


def _object_at(address: int):
    pointer = ctypes.c_void_p.from_address(address).value
    if not pointer:
        return NULL
    return ctypes.cast(pointer, ctypes.py_object).value


@functools.lru_cache(maxsize=8192)
def _n_localsplus(code) -> int:
    """How many slots precede the stack in `localsplus`: locals, cells, free variables (a
    cell that is also an argument has one slot)."""
    return len(set(code.co_varnames) | set(code.co_cellvars)) + len(code.co_freevars)


class StackReader:
    """Reads a frame's value stack before the instruction at `offset` runs: `stack` gives
    (an array of object pointers, the index of the top item in it, the index of the bottom
    item), `item` one item (0 is the top)."""

    def stack(self, frame, offset: int) -> tuple:
        raise NotImplementedError

    def item(self, frame, offset: int, index: int):
        slots, top, bottom = self.stack(frame, offset)
        return read_slot(slots, top, bottom, index)

    def locate(self, frame):
        """`frame`'s stack for the instructions it runs from now on: an object whose
        `stack(offset)` is `self.stack(frame, offset)`, with what stays the same while the
        frame runs found once."""
        return _Located(self, frame)

    def cell(self, frame, slot: int):
        """The cell object in `localsplus[slot]` (LOAD_DEREF's operand, 3.11 and later)."""
        base = ctypes.c_void_p.from_address(id(frame) + 3 * _PTR).value
        return _object_at(base + _LOCALSPLUS + slot * _PTR)


def read_slot(slots, top: int, bottom: int, index: int):
    """Item `index` from the top of a stack read by StackReader.stack (NULL for a NULL slot)."""
    position = top - index
    if position < bottom:
        raise IndexError(index)
    try:
        return slots[position]
    except ValueError:  # "PyObject is NULL"
        return NULL


class _Reader310(StackReader):
    def stack(self, frame, offset: int) -> tuple:
        base = id(frame)
        stack = ctypes.c_void_p.from_address(base + 8 * _PTR).value
        depth = ctypes.c_int.from_address(base + 10 * _PTR).value
        return ctypes.cast(stack, _OBJECTS), depth - 1, 0

    def cell(self, frame, slot: int):
        # LOAD_DEREF's operand counts cells and free variables after the fast locals.
        base = id(frame)
        stack = ctypes.c_void_p.from_address(base + 8 * _PTR).value
        code = frame.f_code
        cells = len(code.co_cellvars) + len(code.co_freevars)
        return _object_at(stack - (cells - slot) * _PTR)


class _Located:
    __slots__ = ("reader", "frame")

    def __init__(self, reader: StackReader, frame):
        self.reader, self.frame = reader, frame

    def stack(self, offset: int) -> tuple:
        return self.reader.stack(self.frame, offset)


class _Reader311(StackReader):
    def stack(self, frame, offset: int) -> tuple:
        base = ctypes.c_void_p.from_address(id(frame) + 3 * _PTR).value
        top = ctypes.c_int.from_address(base + 8 * _PTR).value
        return ctypes.cast(base + _LOCALSPLUS, _OBJECTS), top - 1, _n_localsplus(frame.f_code)

    def locate(self, frame):
        return _Located311(frame)


class _Located311:
    """A running frame's stack (3.11): its interpreter frame stays where it is while the frame
    runs, so the slots' address and the count of locals are found once, and only `stacktop`
    is read at each instruction (a few microseconds less each: the recorder reads the stack
    at thousands of instructions per trace)."""

    __slots__ = ("slots", "top", "bottom")

    def __init__(self, frame):
        base = ctypes.c_void_p.from_address(id(frame) + 3 * _PTR).value
        self.slots = ctypes.cast(base + _LOCALSPLUS, _OBJECTS)
        self.top = ctypes.c_int.from_address(base + 8 * _PTR)  # reads the field when asked
        self.bottom = _n_localsplus(frame.f_code)

    def stack(self, offset: int) -> tuple:
        return self.slots, self.top.value - 1, self.bottom


class _Reader312(StackReader):
    def stack(self, frame, offset: int) -> tuple:
        code = frame.f_code
        depth = stack_depths(code).get(offset)
        if depth is None:
            raise IndexError(offset)
        base = ctypes.c_void_p.from_address(id(frame) + 3 * _PTR).value
        first = _n_localsplus(code)
        return ctypes.cast(base + _LOCALSPLUS, _OBJECTS), first + depth - 1, first


_UNCONDITIONAL = frozenset({
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE", "JUMP",
    "JUMP_NO_INTERRUPT", "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE",
    "INSTRUMENTED_RETURN_VALUE", "INSTRUMENTED_RETURN_CONST"})
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


@functools.lru_cache(maxsize=4096)
def stack_depths(code) -> dict:
    """offset -> the stack depth before the instruction there runs, for every reachable
    instruction of `code` (the exception handlers' depths from its exception table)."""
    instructions = list(dis.get_instructions(code))
    by_offset = {instruction.offset: position
                 for position, instruction in enumerate(instructions)}
    depths: dict = {}
    work = [(0, 0)]
    for entry in _exception_entries(code):
        work.append((entry.target, entry.depth + int(entry.lasti) + 1))
    while work:
        offset, depth = work.pop()
        while True:
            known = depths.get(offset)
            if known is not None:
                if known != depth:  # an inconsistent analysis: no depth is trusted
                    return {}
                break
            position = by_offset.get(offset)
            if position is None:
                break
            depths[offset] = depth
            instruction = instructions[position]
            opcode, arg = instruction.opcode, instruction.arg
            if opcode in _JUMPS:
                target = instruction.argval
                jumped = depth + dis.stack_effect(opcode, arg, jump=True)
                work.append((target, jumped))
            if instruction.opname in _UNCONDITIONAL:
                break
            if position + 1 >= len(instructions):
                break
            depth += _effect(instruction)
            offset = instructions[position + 1].offset
    return depths


def _effect(instruction) -> int:
    """The stack effect of an instruction that falls through to the next."""
    name, arg = instruction.opname, instruction.arg
    if name == "RETURN_GENERATOR":
        return 1  # a generator's frame resumes at the next instruction with the sent value
    if VERSION == (3, 11) and name == "PRECALL":
        return 0  # dis counts a call's arguments here, the interpreter pops them at CALL
    if VERSION == (3, 11) and name == "CALL":
        return -arg - 1
    if instruction.opcode < dis.HAVE_ARGUMENT:
        return dis.stack_effect(instruction.opcode)
    return dis.stack_effect(instruction.opcode, arg or 0, jump=False)


def _exception_entries(code) -> list:
    parse = getattr(dis, "_parse_exception_table", None)
    if parse is None:
        return []
    return parse(code)


def _probe(box, cells):
    return box.value + len(cells)


def _self_check(reader: StackReader) -> bool:
    """Read the stack of a known function at known instructions: the object an attribute is
    read from, and a call's argument."""
    found = {}
    code = _probe.__code__

    def local(frame, event, arg):
        if event == "opcode" and frame.f_code is code:
            instruction = _instruction_at(code, frame.f_lasti)
            if instruction is not None and instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") \
                    and instruction.argval == "value":
                found["owner"] = reader.item(frame, frame.f_lasti, 0)
            elif instruction is not None and instruction.opname in (
                    "CALL", "CALL_FUNCTION", "PRECALL"):
                found["argument"] = reader.item(frame, frame.f_lasti, 0)
        return local

    class Box:
        value = 1

    box, cells = Box(), [1, 2]
    if VERSION >= (3, 12):
        return _self_check_monitoring(reader, box, cells)
    previous = sys.gettrace()

    def start(frame, event, arg):
        if frame.f_code is code:
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            return local
        return None

    sys.settrace(start)
    try:
        _probe(box, cells)
    finally:
        sys.settrace(previous)
    return found.get("owner") is box and found.get("argument") is cells


def _self_check_monitoring(reader: StackReader, box, cells) -> bool:
    monitoring = sys.monitoring
    tool = free_tool_id()
    if tool is None:
        return False
    code = _probe.__code__
    found = {}

    def instruction(code_, offset):
        frame = sys._getframe(1)
        if frame.f_code is not code:
            return
        found_instruction = _instruction_at(code, offset)
        if found_instruction is None:
            return
        if found_instruction.opname == "LOAD_ATTR" and found_instruction.argval == "value":
            found["owner"] = reader.item(frame, offset, 0)
        elif found_instruction.opname == "CALL":
            found["argument"] = reader.item(frame, offset, 0)

    monitoring.use_tool_id(tool, "autojit guard check")
    try:
        monitoring.register_callback(tool, monitoring.events.INSTRUCTION, instruction)
        monitoring.set_local_events(tool, code, monitoring.events.INSTRUCTION)
        _probe(box, cells)
    finally:
        monitoring.set_local_events(tool, code, 0)
        monitoring.register_callback(tool, monitoring.events.INSTRUCTION, None)
        monitoring.free_tool_id(tool)
    return found.get("owner") is box and found.get("argument") is cells


def free_tool_id():
    """A sys.monitoring tool id no other tool uses (3 and 4 are not assigned to any kind of
    tool by CPython), or None."""
    for tool in (4, 3):
        if sys.monitoring.get_tool(tool) is None:
            return tool
    return None


@functools.lru_cache(maxsize=4096)
def _instructions(code) -> dict:
    return {instruction.offset: instruction for instruction in dis.get_instructions(code)}


def _instruction_at(code, offset: int):
    return _instructions(code).get(offset)


@functools.cache
def reader() -> StackReader | None:
    """The stack reader for this interpreter, or None where none is known to work."""
    if hasattr(sys, "getobjects") or sys.implementation.name != "cpython":
        return None  # a debug build's object header, or another implementation
    if VERSION == (3, 10):
        candidate = _Reader310()
    elif VERSION == (3, 11):
        candidate = _Reader311()
    elif VERSION in ((3, 12), (3, 13)):
        candidate = _Reader312()
    else:
        return None
    try:
        return candidate if _self_check(candidate) else None
    except Exception:  # noqa: BLE001 - a layout this module does not know: no recorder
        return None
