"""Machine code from relocatable object files, loaded without LLVM, and the processor's cpuid.

jit.py keeps every kernel's code as the object file LLVM generated for it (disk_cache.py stores
that file). Loading it back through llvmlite's engine means importing llvmlite.binding first,
which costs more than everything else a warm start does (docs/notes/compile-latency.md). This
module loads such a file itself, on Linux x86-64, in the form LLVM generates for a JIT target:

- ELF64, little-endian, x86-64, relocatable (`ET_REL`);
- its allocated sections (code, constants, data) are copied into fresh anonymous pages, each
  kind on pages of its own; the pages of code become read-execute and those of constants
  read-only once the relocations are applied;
- relocations: `R_X86_64_64` (an absolute address: the only kind the large code model of a
  JIT target makes), `R_X86_64_PC32`/`PLT32`/`PC64` (a relative one, checked to fit), and
  `R_X86_64_NONE`;
- a symbol is a defined one (section address plus value), an absolute one, or an undefined
  one found in the process (`dlsym`, as LLVM's engine finds `memset` or `fmod`).

Anything else (another format or machine, another relocation kind, thread-local or common
symbols, a symbol the process lacks) raises `Unsupported` with the reason, and jit.py loads
the file through llvmlite's engine instead. Unwinding tables (`.eh_frame`) are not loaded:
generated code never unwinds. Loaded code is never unmapped (as with LLVM's engine, code
handed out as a function pointer may be called at any time).

`cpuid(leaf, subleaf)` and `xgetbv()` run the processor's identification instructions from a
few bytes of machine code mapped the same way; jit.py keys what LLVM detects about the host
by them (`host_signature`).
"""

from __future__ import annotations

import ctypes
import platform
import struct
import sys
import threading

from ...tensor.host_memory import libc

_PROT_READ, _PROT_WRITE, _PROT_EXEC = 1, 2, 4
_MAP_PRIVATE, _MAP_ANONYMOUS = 0x02, 0x20
_PAGE = 4096

_SHT_PROGBITS, _SHT_SYMTAB, _SHT_STRTAB, _SHT_RELA, _SHT_NOBITS, _SHT_REL = 1, 2, 3, 4, 8, 9
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR, _SHF_TLS = 0x1, 0x2, 0x4, 0x400
_SHN_UNDEF, _SHN_ABS, _SHN_COMMON, _SHN_LORESERVE = 0, 0xFFF1, 0xFFF2, 0xFF00
_STT_SECTION, _STT_TLS, _STT_GNU_IFUNC = 3, 6, 10
_R_NONE, _R_64, _R_PC32, _R_PLT32, _R_PC64 = 0, 1, 2, 4, 24

_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
_RELOCATION = struct.Struct("<QQq")
_SKIPPED = (".eh_frame",)  # unwinding tables: generated code never unwinds

_lock = threading.Lock()


class Unsupported(Exception):
    """The object file is not one this loader handles (the message says why)."""


def available() -> bool:
    """Whether code can be loaded here: Linux on x86-64."""
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def _pages(size: int) -> int:
    """Anonymous read-write pages of at least `size` bytes (zeroed); their address."""
    address = libc().mmap(None, size, _PROT_READ | _PROT_WRITE, _MAP_PRIVATE | _MAP_ANONYMOUS,
                        -1, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        raise Unsupported(f"mmap of {size} bytes failed (errno {ctypes.get_errno()})")
    return address


def _protect(address: int, size: int, protection: int) -> None:
    if size and libc().mprotect(address, size, protection) != 0:
        raise Unsupported(f"mprotect failed (errno {ctypes.get_errno()})")


def _round(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment if alignment > 1 else value


def _external(name: str) -> int:
    """The address of a symbol the object needs from the process (libc, libm)."""
    try:
        function = getattr(libc(), name)
    except AttributeError:
        raise Unsupported(f"the symbol {name} is not in the process") from None
    return ctypes.cast(function, ctypes.c_void_p).value


class LoadedObject:
    """An object file's code and data in this process: `address(name)` of a defined symbol."""

    def __init__(self, symbols: dict, base: int, size: int):
        self._symbols = symbols
        self.base, self.size = base, size

    def address(self, name: str) -> int:
        found = self._symbols.get(name)
        if found is None:
            raise KeyError(f"no symbol {name} in the loaded object")
        return found


def load(data: bytes) -> LoadedObject:
    """Map the relocatable object file `data` and return its symbols' addresses (module
    docstring: what it accepts; Unsupported otherwise)."""
    if not available():
        raise Unsupported("loading object files needs Linux on x86-64")
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise Unsupported("not a 64-bit little-endian ELF file")
    file_type, machine = struct.unpack_from("<HH", data, 16)
    if file_type != 1 or machine != 62:
        raise Unsupported(f"ELF type {file_type}, machine {machine}: not x86-64 relocatable")
    (section_offset,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
    if entry_size != _SECTION.size or count == 0 or names_index >= count or \
            section_offset + count * entry_size > len(data):
        raise Unsupported("malformed section table")
    sections = [_SECTION.unpack_from(data, section_offset + index * entry_size)
                for index in range(count)]
    for _, kind, _, _, offset, size, *_ in sections:
        if kind != _SHT_NOBITS and offset + size > len(data):
            raise Unsupported("a section lies outside the file")
    section_names = sections[names_index]

    def name_at(table, offset: int) -> str:
        start = table[4] + offset
        end = data.index(b"\0", start, table[4] + table[5])
        return data[start:end].decode()

    names = [name_at(section_names, section[0]) for section in sections]

    # Lay the allocated sections out by kind: code, constants, writable data.
    groups: dict = {_PROT_READ | _PROT_EXEC: [], _PROT_READ: [], _PROT_READ | _PROT_WRITE: []}
    for index, (name, section) in enumerate(zip(names, sections)):
        flags = section[2]
        if not flags & _SHF_ALLOC or name in _SKIPPED:
            continue
        if flags & _SHF_TLS:
            raise Unsupported(f"thread-local section {name}")
        if section[1] not in (_SHT_PROGBITS, _SHT_NOBITS) and section[1] < 0x60000000:
            raise Unsupported(f"section {name} of type {section[1]}")
        protection = _PROT_READ | (_PROT_EXEC if flags & _SHF_EXECINSTR else 0) | \
            (_PROT_WRITE if flags & _SHF_WRITE else 0)
        if protection not in groups:
            raise Unsupported(f"section {name} is both writable and executable")
        groups[protection].append(index)
    offsets: dict = {}
    extents = []
    total = 0
    for protection, members in groups.items():
        start = total
        for index in members:
            total = _round(total, max(1, sections[index][8]))
            offsets[index] = total
            total += sections[index][5]
        total = _round(total, _PAGE)
        extents.append((start, total - start, protection))
    if total == 0:
        raise Unsupported("nothing to load")

    with _lock:
        base = _pages(total)
        for index, start in offsets.items():
            _, kind, _, _, offset, size, *_ = sections[index]
            if kind != _SHT_NOBITS and size:
                ctypes.memmove(base + start, data[offset:offset + size], size)
        symbols, values = _symbols(data, sections, names, offsets, base, name_at)
        for name, section in zip(names, sections):
            kind, target = section[1], section[7]
            if kind == _SHT_REL and target in offsets:
                raise Unsupported(f"REL relocations ({name})")
            if kind != _SHT_RELA or target not in offsets:
                continue  # relocations of a section not loaded (.eh_frame, debug info)
            _relocate(data, section, base + offsets[target], sections[target][5], values)
        for start, size, protection in extents:
            if protection != _PROT_READ | _PROT_WRITE:
                _protect(base + start, size, protection)
    return LoadedObject(symbols, base, total)


def _symbols(data, sections, names, offsets, base, name_at) -> tuple:
    """({defined global name: address}, [address of every symbol by index, None if unused])."""
    tables = [section for section in sections if section[1] == _SHT_SYMTAB]
    if len(tables) != 1:
        raise Unsupported(f"{len(tables)} symbol tables")
    table = tables[0]
    strings = sections[table[6]]
    if table[9] != _SYMBOL.size:
        raise Unsupported("malformed symbol table")
    defined: dict = {}
    values: list = []
    for index in range(table[5] // _SYMBOL.size):
        name_offset, info, _, section, value, _ = _SYMBOL.unpack_from(data,
                                                                      table[4] + index * 24)
        kind = info & 0xF
        name = name_at(strings, name_offset) if name_offset else ""
        if index == 0:
            values.append(0)
            continue
        if kind in (_STT_TLS, _STT_GNU_IFUNC):
            raise Unsupported(f"symbol {name} of type {kind}")
        if section == _SHN_UNDEF:
            values.append(_external(name) if name else None)
        elif section == _SHN_ABS:
            values.append(value)
        elif section >= _SHN_LORESERVE:
            raise Unsupported(f"symbol {name} in special section {section:#x}")
        elif section in offsets:
            values.append(base + offsets[section] + value)
            if name and kind != _STT_SECTION and info >> 4 != 0:  # global or weak
                defined[name] = values[-1]
        else:
            values.append(None)  # in a section not loaded: a relocation using it fails
    return defined, values


def _relocate(data, section, place_base: int, place_size: int, values: list) -> None:
    """Apply one RELA section to the loaded copy of its target section."""
    _, _, _, _, offset, size, _, _, _, entry_size = section
    if entry_size != _RELOCATION.size:
        raise Unsupported("malformed relocation table")
    for position in range(offset, offset + size, entry_size):
        where, info, addend = _RELOCATION.unpack_from(data, position)
        kind, symbol = info & 0xFFFFFFFF, info >> 32
        if kind == _R_NONE:
            continue
        if symbol >= len(values) or values[symbol] is None:
            raise Unsupported(f"relocation against symbol {symbol}, which is not loaded")
        place = place_base + where
        value = values[symbol] + addend
        if kind == _R_64:
            width, result = 8, value
        elif kind == _R_PC64:
            width, result = 8, value - place
        elif kind in (_R_PC32, _R_PLT32):
            width, result = 4, value - place
            if not -(1 << 31) <= result < 1 << 31:
                raise Unsupported("a 32-bit relative relocation out of range")
        else:
            raise Unsupported(f"relocation type {kind}")
        if where + width > place_size:
            raise Unsupported("a relocation outside its section")
        if width == 8:
            ctypes.c_uint64.from_address(place).value = result & 0xFFFFFFFFFFFFFFFF
        else:
            ctypes.c_uint32.from_address(place).value = result & 0xFFFFFFFF


# The identification instructions, as machine code (System V calling convention):
#   cpuid(i32 leaf, i32 subleaf, ptr out): out[0..3] = eax, ebx, ecx, edx
#     push rbx; mov r8, rdx; mov eax, edi; mov ecx, esi; cpuid;
#     mov [r8], eax; mov [r8+4], ebx; mov [r8+8], ecx; mov [r8+12], edx; pop rbx; ret
#   xgetbv0() -> i64: xor ecx, ecx; xgetbv; shl rdx, 32; or rax, rdx; ret
_CPUID_CODE = bytes.fromhex("53 49 89 d0 89 f8 89 f1 0f a2 41 89 00 41 89 58 04 41 89 48 08"
                            " 41 89 50 0c 5b c3")
_XGETBV_CODE = bytes.fromhex("31 c9 0f 01 d0 48 c1 e2 20 48 09 d0 c3")
_probes: dict = {}


def _probe(name: str, code: bytes, prototype):
    if name not in _probes:
        with _lock:
            address = _pages(_PAGE)
            ctypes.memmove(address, code, len(code))
            _protect(address, _PAGE, _PROT_READ | _PROT_EXEC)
            _probes[name] = prototype(address)
    return _probes[name]


def cpuid(leaf: int, subleaf: int = 0) -> tuple:
    """(eax, ebx, ecx, edx) of the cpuid instruction for this leaf and subleaf."""
    if not available():
        raise Unsupported("cpuid needs x86-64")
    function = _probe("cpuid", _CPUID_CODE, ctypes.CFUNCTYPE(None, ctypes.c_uint32,
                                                             ctypes.c_uint32, ctypes.c_void_p))
    out = (ctypes.c_uint32 * 4)()
    function(leaf, subleaf, ctypes.addressof(out))
    return tuple(out)


def xgetbv() -> int | None:
    """The extended control register XCR0 (the vector state the system saves), or None where
    the processor or system does not offer xgetbv."""
    if not cpuid(1)[2] >> 27 & 1:  # OSXSAVE
        return None
    return _probe("xgetbv", _XGETBV_CODE, ctypes.CFUNCTYPE(ctypes.c_uint64))()


# Leaves whose values differ from core to core (topology, APIC ids) and say nothing of the
# instruction set; leaf 1's ebx holds the APIC id in its top byte.
_PER_CORE_LEAVES = (0x4, 0xB, 0x1A, 0x1F, 0x8000001D, 0x8000001E)
# Leaves read with their subleaves: 7 (instruction-set extensions, subleaf 0's eax gives the
# last), 0xD (saved state), 0x14 (tracing), 0x24 (AVX10).
_SUBLEAVES = {0x7: None, 0xD: 2, 0x14: 2, 0x24: 2}


def host_signature() -> tuple:
    """Everything cpuid and xgetbv say about this processor's instruction set, the same on
    every core: the registers of every standard and extended leaf up to 0x24 and 0x80000021
    but the per-core ones, with leaf 1's APIC id masked. What LLVM detects as the host's CPU
    name and features is a function of these values (jit.host_target keys it by them)."""
    values = []
    for first in (0, 0x80000000):
        last = min(cpuid(first)[0], first + (0x24 if first == 0 else 0x21))
        for leaf in range(first, last + 1):
            if leaf in _PER_CORE_LEAVES:
                continue
            registers = cpuid(leaf)
            if leaf == 1:
                registers = (registers[0], registers[1] & 0x00FFFFFF, *registers[2:])
            values.append((leaf, 0, registers))
            subleaves = _SUBLEAVES.get(leaf, 1)
            if subleaves is None:
                subleaves = min(registers[0], 8) + 1
            values.extend((leaf, subleaf, cpuid(leaf, subleaf))
                          for subleaf in range(1, subleaves))
    return tuple(values), xgetbv()
