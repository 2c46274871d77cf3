"""A pickle reader that builds data only: the unpickler behind autojit.load of torch's files.

Python's pickle runs whatever a file names: a `__reduce__` that returns `(os.system, (cmd,))`
executes on load. This module reads pickles with its own interpreter of the pickle opcodes
instead, and resolves a global name only through an allow-list the caller gives (the tensor
rebuild functions, storage types and plain containers, as torch.load(weights_only=True)
allows), mapping each name to autojit's own function; anything else is refused with
UnpicklingError naming it, before anything is called. Objects are made only by those functions
and by the opcodes that build containers (list, tuple, dict, set), so reading a file can never
run code from it. BUILD (setting an object's state) is accepted only where the caller allows it
through `build`. Persistent ids (torch's storages) go to the caller's `persistent_load`.

Protocols 0 to 5 are read; the opcodes of class instances (INST, OBJ, NEWOBJ_EX), extension
registries (EXT1/2/4) and out-of-band buffers are refused.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import io
import struct
from collections.abc import Callable
from pickle import UnpicklingError

__all__ = ["RestrictedUnpickler", "UnpicklingError"]

_REFUSED = "autojit.load never runs code from a file (torch.load's weights_only=True)"


class _Mark:
    """The marker MARK pushes on the stack."""


_MARK = _Mark()


def _unicode(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


class RestrictedUnpickler:
    """`RestrictedUnpickler(file, allowed, persistent_load, build).load()`.

    `allowed` maps "module.name" to the object a global of that name becomes; `persistent_load`
    receives each persistent id; `build(obj, state)` performs a BUILD (and raises when it is
    not allowed on obj); `new_object(cls, args)` performs a NEWOBJ.
    """

    def __init__(self, file, allowed: dict, persistent_load: Callable | None = None,
                 build: Callable | None = None, new_object: Callable | None = None):
        self.file = file
        self.allowed = allowed
        self.persistent_load = persistent_load
        self.build = build
        self.new_object = new_object

    # ---- reading the byte stream ----------------------------------------------------------

    def _read(self, size: int) -> bytes:
        data = self.file.read(size)
        if len(data) != size:
            raise UnpicklingError("pickle data was truncated")
        return data

    def _unpack(self, fmt: str):
        return struct.unpack(fmt, self._read(struct.calcsize(fmt)))[0]

    def _line(self) -> bytes:
        line = self.file.readline()
        if not line.endswith(b"\n"):
            raise UnpicklingError("pickle data was truncated")
        return line[:-1]

    def _global(self, module: str, name: str):
        # Protocols 0 to 2 name Python 2's modules (__builtin__.set); read them as Python 3's.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        key = f"{module}.{name}"
        if key not in self.allowed:
            raise UnpicklingError(f"autojit.load: the file refers to the global {key}, which is "
                                  "not a tensor, storage or plain container; " + _REFUSED)
        return self.allowed[key]

    # ---- the interpreter ------------------------------------------------------------------

    def load(self):
        stack: list = []
        marks: list[int] = []
        memo: dict = {}

        def pop_mark() -> list:
            if not marks:
                raise UnpicklingError("could not find MARK")
            start = marks.pop()
            items = stack[start:]
            del stack[start:]
            return items

        def top():
            if not stack:
                raise UnpicklingError("unpickling stack underflow")
            return stack[-1]

        def pop():
            if not stack:
                raise UnpicklingError("unpickling stack underflow")
            return stack.pop()

        def memo_get(index):
            if index not in memo:
                raise UnpicklingError(f"Memo value not found at index {index}")
            return memo[index]

        def set_items(target, items: list) -> None:
            if not isinstance(target, dict):
                raise UnpicklingError(f"SETITEMS on a {type(target).__name__}; " + _REFUSED)
            for position in range(0, len(items) - 1, 2):
                target[items[position]] = items[position + 1]

        def extend(target, items: list) -> None:
            if not isinstance(target, list):
                raise UnpicklingError(f"APPENDS on a {type(target).__name__}; " + _REFUSED)
            target.extend(items)

        callables = {id(value) for value in self.allowed.values() if callable(value)}

        def call(function, args):
            if id(function) not in callables:  # only what a global of the allow-list named
                raise UnpicklingError(f"REDUCE of a {type(function).__name__}; " + _REFUSED)
            if not isinstance(args, tuple):
                raise UnpicklingError("REDUCE arguments must be a tuple")
            return function(*args)

        while True:
            code = self.file.read(1)
            if not code:
                raise UnpicklingError("pickle data was truncated")
            op = code[0]
            if op == 0x80:  # PROTO
                protocol = self._read(1)[0]
                if protocol > 5:
                    raise UnpicklingError(f"unsupported pickle protocol: {protocol}")
            elif op == 0x95:  # FRAME: a length prefix only
                self._read(8)
            elif op == 0x2E:  # STOP
                return pop()
            elif op == 0x28:  # MARK
                marks.append(len(stack))
            elif op == 0x30:  # POP
                if marks and marks[-1] == len(stack):
                    marks.pop()
                else:
                    pop()
            elif op == 0x31:  # POP_MARK
                pop_mark()
            elif op == 0x32:  # DUP
                stack.append(top())
            elif op == 0x4E:  # NONE
                stack.append(None)
            elif op == 0x88:  # NEWTRUE
                stack.append(True)
            elif op == 0x89:  # NEWFALSE
                stack.append(False)
            elif op == 0x49:  # INT (text; 00 and 01 are the booleans)
                line = self._line()
                stack.append({b"00": False, b"01": True}.get(line) if line in (b"00", b"01")
                             else int(line))
            elif op == 0x4A:  # BININT
                stack.append(self._unpack("<i"))
            elif op == 0x4B:  # BININT1
                stack.append(self._read(1)[0])
            elif op == 0x4D:  # BININT2
                stack.append(self._unpack("<H"))
            elif op == 0x4C:  # LONG (text)
                stack.append(int(self._line().rstrip(b"L")))
            elif op == 0x8A:  # LONG1
                stack.append(int.from_bytes(self._read(self._read(1)[0]), "little", signed=True))
            elif op == 0x8B:  # LONG4
                size = self._unpack("<i")
                if size < 0:
                    raise UnpicklingError("LONG pickle has negative byte count")
                stack.append(int.from_bytes(self._read(size), "little", signed=True))
            elif op == 0x46:  # FLOAT (text)
                stack.append(float(self._line()))
            elif op == 0x47:  # BINFLOAT
                stack.append(self._unpack(">d"))
            elif op == 0x56:  # UNICODE (raw-unicode-escape text)
                stack.append(codecs.decode(self._line(), "raw-unicode-escape"))
            elif op == 0x58:  # BINUNICODE
                stack.append(_unicode(self._read(self._unpack("<I"))))
            elif op == 0x8C:  # SHORT_BINUNICODE
                stack.append(_unicode(self._read(self._read(1)[0])))
            elif op == 0x8D:  # BINUNICODE8
                stack.append(_unicode(self._read(self._unpack("<Q"))))
            elif op == 0x54:  # BINSTRING (Python 2 str), read as text
                stack.append(self._read(self._unpack("<i")).decode("latin-1"))
            elif op == 0x55:  # SHORT_BINSTRING
                stack.append(self._read(self._read(1)[0]).decode("latin-1"))
            elif op == 0x42:  # BINBYTES
                stack.append(self._read(self._unpack("<I")))
            elif op == 0x43:  # SHORT_BINBYTES
                stack.append(self._read(self._read(1)[0]))
            elif op == 0x8E:  # BINBYTES8
                stack.append(self._read(self._unpack("<Q")))
            elif op == 0x96:  # BYTEARRAY8
                stack.append(bytearray(self._read(self._unpack("<Q"))))
            elif op == 0x29:  # EMPTY_TUPLE
                stack.append(())
            elif op == 0x74:  # TUPLE
                stack.append(tuple(pop_mark()))
            elif op in (0x85, 0x86, 0x87):  # TUPLE1, TUPLE2, TUPLE3
                size = op - 0x84
                if len(stack) < size:
                    raise UnpicklingError("unpickling stack underflow")
                items = tuple(stack[-size:])
                del stack[-size:]
                stack.append(items)
            elif op == 0x5D:  # EMPTY_LIST
                stack.append([])
            elif op == 0x6C:  # LIST
                stack.append(pop_mark())
            elif op == 0x61:  # APPEND
                item = pop()
                extend(top(), [item])
            elif op == 0x65:  # APPENDS
                items = pop_mark()
                extend(top(), items)
            elif op == 0x7D:  # EMPTY_DICT
                stack.append({})
            elif op == 0x64:  # DICT
                items = pop_mark()
                made: dict = {}
                set_items(made, items)
                stack.append(made)
            elif op == 0x73:  # SETITEM
                value = pop()
                key = pop()
                set_items(top(), [key, value])
            elif op == 0x75:  # SETITEMS
                items = pop_mark()
                set_items(top(), items)
            elif op == 0x8F:  # EMPTY_SET
                stack.append(set())
            elif op == 0x90:  # ADDITEMS
                items = pop_mark()
                target = top()
                if not isinstance(target, set):
                    raise UnpicklingError("ADDITEMS on a non-set; " + _REFUSED)
                target.update(items)
            elif op == 0x91:  # FROZENSET
                stack.append(frozenset(pop_mark()))
            elif op == 0x63:  # GLOBAL
                module = self._line().decode("utf-8")
                name = self._line().decode("utf-8")
                stack.append(self._global(module, name))
            elif op == 0x93:  # STACK_GLOBAL
                name = pop()
                module = pop()
                if not isinstance(module, str) or not isinstance(name, str):
                    raise UnpicklingError("STACK_GLOBAL requires str")
                stack.append(self._global(module, name))
            elif op == 0x52:  # REDUCE: only an allowed global is ever on the stack to call
                args = pop()
                function = pop()
                stack.append(call(function, args))
            elif op == 0x81:  # NEWOBJ
                args = pop()
                cls = pop()
                if self.new_object is None:
                    raise UnpicklingError("NEWOBJ; " + _REFUSED)
                stack.append(self.new_object(cls, args))
            elif op == 0x62:  # BUILD
                state = pop()
                if self.build is None:
                    raise UnpicklingError("BUILD; " + _REFUSED)
                self.build(top(), state)
            elif op == 0x50:  # PERSID (text)
                stack.append(self._persistent(self._line().decode("ascii")))
            elif op == 0x51:  # BINPERSID
                stack.append(self._persistent(pop()))
            elif op == 0x70:  # PUT (text)
                memo[int(self._line())] = top()
            elif op == 0x71:  # BINPUT
                memo[self._read(1)[0]] = top()
            elif op == 0x72:  # LONG_BINPUT
                memo[self._unpack("<I")] = top()
            elif op == 0x94:  # MEMOIZE
                memo[len(memo)] = top()
            elif op == 0x67:  # GET (text)
                stack.append(memo_get(int(self._line())))
            elif op == 0x68:  # BINGET
                stack.append(memo_get(self._read(1)[0]))
            elif op == 0x6A:  # LONG_BINGET
                stack.append(memo_get(self._unpack("<I")))
            else:
                raise UnpicklingError(f"autojit.load: the pickle opcode {code!r} (which makes "
                                      "class instances or reads outside the file) is refused; "
                                      + _REFUSED)

    def _persistent(self, pid):
        if self.persistent_load is None:
            raise UnpicklingError("A load persistent id instruction was encountered, but no "
                                  "persistent_load function was specified.")
        return self.persistent_load(pid)


def loads(data: bytes, allowed: dict, **kwargs):
    """Read one pickle from bytes (see RestrictedUnpickler)."""
    return RestrictedUnpickler(io.BytesIO(data), allowed, **kwargs).load()
