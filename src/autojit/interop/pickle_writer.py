"""A pickle writer for data only: the pickler behind autojit.save's torch-format files.

It writes the opcodes of pickle protocol 2 (the protocol torch.save uses) for None, bools,
ints, floats, complex numbers, str, bytes, tuples, lists, dicts, OrderedDicts (with their
attributes, such as a state dict's `_metadata`) and sets, and hands every other object to the
caller's `reduce(obj)`, which returns a Global and its arguments (a tensor becomes a call of
torch's rebuild function) or raises TypeError for what cannot be saved. Globals are written by
name, so writing needs none of the modules they name (torch need not be installed), and the
file holds only the names torch.load(weights_only=True) allows. An object met twice is written
once and read back as one object (the pickle memo).
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from collections.abc import Callable

__all__ = ["Global", "PersistentId", "write_pickle"]


class Global:
    """A global the file names, `module.name` (written as pickle's GLOBAL)."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name


class Call:
    """`function(*args)` on load (written as pickle's REDUCE)."""

    def __init__(self, function: Global, args: tuple):
        self.function, self.args = function, args


class PersistentId:
    """A value the reader resolves itself (torch's storages), written as BINPERSID."""

    def __init__(self, value: tuple):
        self.value = value


_ORDERED_DICT = Global("collections", "OrderedDict")


class _Writer:
    def __init__(self, protocol: int, reduce: Callable):
        self.out = bytearray()
        self.protocol = protocol
        self.reduce = reduce
        self.memo: dict[int, int] = {}  # id(obj) -> memo index
        self.keep: list = []  # objects whose ids are in memo, kept alive while writing

    def put(self, obj) -> None:
        index = self.memo[id(obj)] = len(self.memo)
        self.keep.append(obj)
        self.out += b"q" + bytes([index]) if index < 256 else b"r" + struct.pack("<I", index)

    def get(self, obj) -> bool:
        index = self.memo.get(id(obj))
        if index is None:
            return False
        self.out += b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)
        return True

    def save(self, obj, where: str) -> None:
        if obj is None:
            self.out += b"N"
        elif obj is True or obj is False:
            self.out += b"\x88" if obj else b"\x89"
        elif type(obj) is int:
            self.save_int(obj)
        elif type(obj) is float:
            self.out += b"G" + struct.pack(">d", obj)
        elif isinstance(obj, Global):
            self.out += b"c" + f"{obj.module}\n{obj.name}\n".encode()
        elif self.get(obj):
            pass
        elif type(obj) is str:
            encoded = obj.encode("utf-8", "surrogatepass")
            self.out += b"X" + struct.pack("<I", len(encoded)) + encoded
            self.put(obj)
        elif type(obj) is bytes:
            # As protocol 2 writes bytes, _codecs.encode(text, "latin1"), whatever the protocol:
            # torch's weights-only reader has no opcode for bytes.
            self.save(Call(Global("_codecs", "encode"), (obj.decode("latin1"), "latin1")), where)
        elif type(obj) is complex:
            self.save(Call(Global("builtins", "complex"), (obj.real, obj.imag)), where)
        elif type(obj) is tuple:
            self.save_tuple(obj, where)
        elif type(obj) is list:
            self.out += b"]"
            self.put(obj)
            self.save_batch(obj, b"e", where)
        elif type(obj) in (dict, OrderedDict):
            self.save_dict(obj, where)
        elif type(obj) is set:
            self.save(Call(Global("builtins", "set"), (list(obj),)), where)
        elif isinstance(obj, Call):
            self.save(obj.function, where)
            self.save_tuple(obj.args, where)
            self.out += b"R"
        elif isinstance(obj, PersistentId):
            self.save_tuple(obj.value, where)
            self.out += b"Q"
        else:
            self.save(self.reduce(obj, where), where)
            self.put(obj)

    def save_int(self, value: int) -> None:
        if 0 <= value < 256:
            self.out += b"K" + bytes([value])
        elif 0 <= value < 65536:
            self.out += b"M" + struct.pack("<H", value)
        elif -(2 ** 31) <= value < 2 ** 31:
            self.out += b"J" + struct.pack("<i", value)
        else:
            encoded = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
            self.out += b"\x8a" + bytes([len(encoded)]) + encoded

    def save_tuple(self, items: tuple, where: str) -> None:
        if not items:
            self.out += b")"
            return
        if len(items) <= 3:
            for position, item in enumerate(items):
                self.save(item, f"{where}[{position}]")
            self.out += bytes([0x84 + len(items)])
        else:
            self.out += b"("
            for position, item in enumerate(items):
                self.save(item, f"{where}[{position}]")
            self.out += b"t"
        self.put(items)

    def save_batch(self, items: list, opcode: bytes, where: str) -> None:
        for start in range(0, len(items), 1000):
            self.out += b"("
            for position, item in enumerate(items[start:start + 1000], start):
                self.save(item, f"{where}[{position}]")
            self.out += opcode

    def save_dict(self, obj: dict, where: str) -> None:
        if type(obj) is OrderedDict:
            self.save(_ORDERED_DICT, where)
            self.out += b")R"
        else:
            self.out += b"}"
        self.put(obj)
        items = list(obj.items())
        for start in range(0, len(items), 1000):
            self.out += b"("
            for key, value in items[start:start + 1000]:
                self.save(key, f"{where} (a key)")
                self.save(value, f"{where}[{key!r}]")
            self.out += b"u"
        attributes = getattr(obj, "__dict__", None)
        if attributes:  # an OrderedDict's own attributes: a state dict's _metadata
            self.save(dict(attributes), f"{where}.__dict__")
            self.out += b"b"


def write_pickle(obj, protocol: int, reduce: Callable) -> bytes:
    """The pickle of obj (see the module docstring); `reduce(obj, where)` returns a Call for an
    object of another type, `where` naming the object's place for error messages."""
    writer = _Writer(protocol, reduce)
    writer.out += b"\x80" + bytes([protocol])
    writer.save(obj, "the root")
    writer.out += b"."
    return bytes(writer.out)
