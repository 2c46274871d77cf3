"""The compiled code of guard predicates, kept by their source: in this process, and across
processes in the kernel disk cache (config.CODE_STORE, which codegen installs).

A guard set (guards.py) is Python source compiled into one function when first checked. A
model's guards run to thousands of conditions (a 4-layer GPT step: 3,128 conditions, 239 KB of
source), and compiling them took 39 ms of the executable's first run. The same program traced
again (another process, another compiled function over the same code) writes the same source
except for the names of the walk's root objects, which carry their ids (`W139957516097600`,
reachability.py): `canonical` renames those in order of appearance (`W_0`, `W_1`, ...) and
returns the namespace entries for the new names, so the source, and its code, is the same
wherever the program runs.

The disk entry is marshal's serialization of the code object, keyed by a sha256 over the
canonical source and the interpreter's version (marshal's format is the interpreter's own); the
disk cache checks each entry's checksum, and only a directory no other user can write is used
(codegen/cpu/disk_cache.py). An entry that does not load is compiled again.
"""

from __future__ import annotations

import hashlib
import marshal
import re
import sys

from .. import config

_ROOT_NAME = re.compile(r"\bW\d+\b")
_TAG = f"{sys.version}|{sys.implementation.cache_tag}|"
_CODES: dict = {}  # key -> code object, for this process
_MOST = 64  # code objects kept in this process (one is a few hundred KB for a large model)


def canonical(source: str, constants: dict) -> tuple[str, dict]:
    """`source` with the walk's root names (those `constants` holds) renamed in order of
    appearance, and the namespace entries for the new names."""
    renamed: dict = {}

    def rename(match) -> str:
        name = match.group(0)
        if name not in constants:
            return name
        new = renamed.get(name)
        if new is None:
            new = renamed[name] = f"W_{len(renamed)}"
        return new

    text = _ROOT_NAME.sub(rename, source)
    return text, {new: constants[old] for old, new in renamed.items()}


def compiled(source: str, filename: str):
    """The code object of `source`: from this process's cache, the disk cache, or compiled
    now (and then kept in both)."""
    key = hashlib.sha256((_TAG + source).encode()).hexdigest()
    code = _CODES.get(key)
    if code is not None:
        return code
    store = config.CODE_STORE
    data = store["load"](key) if store else None
    if data is not None:
        try:
            code = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            code = None
    if code is None:
        code = compile(source, filename, "exec")
        if store:
            store["store"](key, marshal.dumps(code))
    if len(_CODES) >= _MOST:
        _CODES.clear()
    _CODES[key] = code
    return code
