"""The kernel cache on disk: compiled kernels' machine code kept across processes.

jit.py asks here before compiling a kernel with LLVM and stores what it compiled. An entry is
the relocatable object file LLVM generated for the kernel's module (loaded back by
native_loader.py, or llvmlite's engine: no optimization or code generation) and the LLVM IR
the module was rendered from (for inspection). The native helpers of workers.py and
program.py are kept the same way, and so is a small record (`store_record`): what LLVM
detected about a processor (jit.cache_target), so that a warm start need not start LLVM.

The key (`entry_key`) is a sha256 over everything that decides the machine code: the kernel's
structural key (its ops, shapes, strides, dtypes, literals), the target (triple, CPU name and
features, the CPython/NumPy object layout baked into the `.objects` entry, the LLVM version),
the llvmlite version, the autojit version and a fingerprint of the source files that generate
code (so an edited renderer never meets its old kernels).

Safety, since loaded code runs unchecked:

- the directory (config.cache_dir(), AUTOJIT_CACHE_DIR) is created with mode 0o700; one that
  exists with permissions open to others, or owned by another user, is not used (one
  DiskCacheWarning; compiling goes on without the disk cache);
- an entry is `MAGIC | sha256 | header length | JSON header | object code | IR`, the checksum
  covering everything after it; a missing magic, a checksum mismatch, a truncated file or a
  header naming another key (a foreign entry) is a miss: the kernel is compiled again and the
  entry replaced, never loaded;
- entries are written to a temporary file in the same directory and renamed over the final
  name (os.replace, atomic), so a reader sees a whole entry or none, and two processes storing
  the same kernel at once both succeed (the last rename wins; both wrote the same bytes).

AUTOJIT_DISK_CACHE=0 turns the cache off; `clear()` empties it. See docs/compiler.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import sys
import tempfile
import warnings
from dataclasses import dataclass

from ... import config

MAGIC = b"AUTOJIT-KERNEL-1"  # the trailing digit is the entry format's version
PREFIX = "kernel-"
MODULE_PREFIX = "module-"  # the native helpers of workers.py and program.py (jit.add_module)
RECORD_PREFIX = "record-"  # store_record's
CODE_PREFIX = "code-"  # store_code's: compiled guard predicates (compiler/guard_code.py)
SUFFIX = ".bin"
_LENGTH = struct.Struct("<I")
_DIGEST_SIZE = 32
# Sources whose change changes the generated code: every CPU code generator (the renderers, the
# math library, the JIT), the op lowerings, dtypes (the schedule is not here: it decides
# kernels, and each kernel is its own key). The patterns were once read from codegen/, where
# none matched: every kernel kept its key whatever changed, and a cache served kernels of an
# older math library. tests/test_disk_cache.py checks each module of codegen/cpu is hashed.
_CODE_SOURCES = ("codegen/kernel.py", "codegen/expression.py", "codegen/cpu/**/*.py",
                 "ops/**/*.py", "tensor/dtypes.py")


def fingerprinted_sources() -> list:
    """The files `source_fingerprint` hashes, relative to the package, in its order."""
    return config.package_files(_CODE_SOURCES)


_checked: dict = {}  # directory path -> usable (bool); each refused path warns once


class DiskCacheWarning(UserWarning):
    """The kernel cache directory cannot be used safely; kernels are compiled every time."""


@dataclass
class Entry:
    """What one cached kernel holds: the exported symbol, its object file and its LLVM IR."""
    symbol: str
    object_code: bytes
    llvm_ir: str


def source_fingerprint() -> str:
    """sha256 over the files that generate kernel code, computed once per process."""
    return config.source_fingerprint(_CODE_SOURCES)


def entry_key(structural_key: tuple, target: tuple) -> str:
    """The entry's name: a hex sha256 over the kernel and everything else its code depends on.

    `target` describes the machine code's target (jit.cache_target: triple, CPU, features,
    object layout, LLVM version)."""
    import llvmlite

    described = repr((MAGIC, structural_key, target, llvmlite.__version__, config.VERSION,
                      source_fingerprint(), sys.implementation.cache_tag))
    return hashlib.sha256(described.encode()).hexdigest()


def directory() -> str | None:
    """The cache directory, created if needed, or None when the disk cache is off or unsafe."""
    if not config.disk_cache_enabled():
        return None
    path = os.path.abspath(config.cache_dir())
    usable = _checked.get(path)
    if usable is None:
        problem = _prepare(path)
        usable = problem is None
        _checked[path] = usable
        if problem is not None:
            warnings.warn(f"autojit: not using the kernel cache directory {path}: {problem}; "
                          f"kernels are compiled in every process (set AUTOJIT_CACHE_DIR to "
                          f"another directory, or AUTOJIT_DISK_CACHE=0 to silence this)",
                          DiskCacheWarning, stacklevel=2)
    return path if usable else None


def _prepare(path: str) -> str | None:
    """Create `path` owner-only if missing; the reason it is unsafe to use, or None."""
    created = False
    try:
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        os.mkdir(path, 0o700)
        created = True
    except FileExistsError:
        pass
    except OSError as error:
        return f"it cannot be created ({error.strerror})"
    try:
        if created:
            os.chmod(path, 0o700)  # the umask may have removed owner bits
        info = os.stat(path)
    except OSError as error:
        return f"it cannot be read ({error.strerror})"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"it is owned by another user (uid {info.st_uid})"
    if os.name == "posix" and info.st_mode & 0o077:
        return (f"its permissions {stat.S_IMODE(info.st_mode):#o} let other users write or "
                f"read it (it must be 0o700: chmod 700 it)")
    return None


def _entry_path(directory_path: str, key: str, prefix: str = PREFIX) -> str:
    return os.path.join(directory_path, f"{prefix}{key}{SUFFIX}")


def encode(key: str, entry: Entry) -> bytes:
    """The bytes of an entry file."""
    ir_bytes = entry.llvm_ir.encode()
    header = json.dumps({"key": key, "symbol": entry.symbol,
                         "object_size": len(entry.object_code),
                         "ir_size": len(ir_bytes)}).encode()
    body = _LENGTH.pack(len(header)) + header + entry.object_code + ir_bytes
    return MAGIC + hashlib.sha256(body).digest() + body


def decode(key: str, data: bytes) -> tuple[Entry | None, str]:
    """The entry in `data` if it is whole, intact and for `key`; else (None, why not)."""
    if not data.startswith(MAGIC):
        return None, "no autojit kernel magic"
    start = len(MAGIC) + _DIGEST_SIZE
    body = data[start:]
    if len(body) < _LENGTH.size:
        return None, "truncated"
    if hashlib.sha256(body).digest() != data[len(MAGIC):start]:
        return None, "checksum mismatch (corrupt or truncated)"
    (length,) = _LENGTH.unpack_from(body)
    try:
        header = json.loads(body[_LENGTH.size:_LENGTH.size + length])
        symbol, object_size, ir_size = header["symbol"], header["object_size"], header["ir_size"]
        found_key = header["key"]
    except (ValueError, KeyError, TypeError):
        return None, "unreadable header"
    if found_key != key:
        return None, f"written for another key ({str(found_key)[:16]}...)"
    payload = body[_LENGTH.size + length:]
    if not isinstance(symbol, str) or not isinstance(object_size, int) or \
            not isinstance(ir_size, int) or \
            object_size < 0 or ir_size < 0 or len(payload) != object_size + ir_size:
        return None, "sizes do not match the header"
    return Entry(symbol, payload[:object_size], payload[object_size:].decode()), ""


def load(key: str, prefix: str = PREFIX) -> Entry | None:
    """The intact entry stored under `key`, or None (missing, corrupt, foreign, cache off).
    `prefix` names the kind of entry (PREFIX for kernels, MODULE_PREFIX, RECORD_PREFIX)."""
    path = directory()
    if path is None:
        return None
    file = _entry_path(path, key, prefix)
    try:
        with open(file, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        config.log("kernels", f"disk cache: cannot read {file}: {error}")
        return None
    entry, problem = decode(key, data)
    if entry is None:
        config.log("kernels", f"disk cache: ignoring {file}: {problem}; compiling again")
    return entry


def store(key: str, entry: Entry, prefix: str = PREFIX) -> bool:
    """Write the entry atomically; False (and nothing left behind) when it cannot be written."""
    path = directory()
    if path is None:
        return False
    data = encode(key, entry)
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX, dir=path)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, _entry_path(path, key, prefix))
    except OSError as error:
        config.log("kernels", f"disk cache: cannot write to {path}: {error}")
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass
        return False
    return True


_RECORD_SYMBOL = "(record)"


def store_record(key: str, record: dict) -> bool:
    """Keep a small JSON-able dict under `key` (a hex sha256), as an entry is kept."""
    return store(key, Entry(_RECORD_SYMBOL, json.dumps(record, sort_keys=True).encode(), ""),
                 RECORD_PREFIX)


def load_record(key: str) -> dict | None:
    """The dict store_record kept under `key`, or None (missing, damaged, not a record)."""
    entry = load(key, RECORD_PREFIX)
    if entry is None or entry.symbol != _RECORD_SYMBOL:
        return None
    try:
        record = json.loads(entry.object_code)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


_CODE_SYMBOL = "(code)"


def store_code(key: str, data: bytes) -> bool:
    """Keep serialized Python code (config.CODE_STORE's store) under `key`, a hex sha256."""
    return store(key, Entry(_CODE_SYMBOL, data, ""), CODE_PREFIX)


def load_code(key: str) -> bytes | None:
    """The bytes store_code kept under `key`, or None (missing, damaged, not code)."""
    entry = load(key, CODE_PREFIX)
    return None if entry is None or entry.symbol != _CODE_SYMBOL else entry.object_code


def clear() -> int:
    """Remove every cached kernel, module, record and code entry (and leftover temporary
    files); returns how many files."""
    path = os.path.abspath(config.cache_dir())
    removed = 0
    try:
        names = os.listdir(path)
    except OSError:
        return 0
    for name in names:
        if name.endswith(SUFFIX) and name.startswith((PREFIX, MODULE_PREFIX, RECORD_PREFIX,
                                                      CODE_PREFIX, ".tmp-")):
            try:
                os.unlink(os.path.join(path, name))
                removed += 1
            except OSError:
                pass
    return removed


if __name__ == "__main__":  # python -m autojit.codegen.cpu.disk_cache [--clear]
    if sys.argv[1:] == ["--clear"]:
        print(f"removed {clear()} cached kernels from {os.path.abspath(config.cache_dir())}")
    else:
        print(os.path.abspath(config.cache_dir()))
