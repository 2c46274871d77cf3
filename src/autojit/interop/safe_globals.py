"""The globals a weights-only load may name beyond tensors and plain containers, as
torch.serialization keeps them: `add_safe_globals`, the `safe_globals` context manager,
`get_safe_globals` and `clear_safe_globals`.

A program that saved an object of its own class (an argparse.Namespace of hyperparameters, an
enum) beside its weights declares the class safe, and autojit.load(weights_only=True) then
rebuilds it: the class may be called (REDUCE), instantiated (NEWOBJ) and given its state
(BUILD, through __setstate__ where it has one), and nothing else the file names is run
(torch_format.py's reader; pickle_reader.py).
"""

from __future__ import annotations

import threading

_local = threading.local()
_process: list = []


def _entries() -> list:
    return [*_process, *getattr(_local, "scoped", [])]


def _check(safe_globals) -> list:
    if not isinstance(safe_globals, list):
        raise TypeError(f"safe_globals must be a list of globals, got "
                        f"{type(safe_globals).__name__}")
    for entry in safe_globals:
        if isinstance(entry, tuple) and (len(entry) != 2 or not isinstance(entry[1], str)):
            raise ValueError("A tuple in safe_globals must be (global, 'module.name'), got "
                             f"{entry!r}")
    return list(safe_globals)


def add_safe_globals(safe_globals: list) -> None:
    """Mark these globals (classes or functions, or (global, "module.name") pairs for one
    saved under another name) safe for weights-only loading, for the rest of the process."""
    _process.extend(_check(safe_globals))


def get_safe_globals() -> list:
    """The globals add_safe_globals has marked safe."""
    return list(_process)


def clear_safe_globals() -> None:
    """Forget the globals add_safe_globals marked safe."""
    _process.clear()


class safe_globals:  # noqa: N801 - torch's name
    """`with safe_globals([...]):` marks the globals safe for weights-only loading inside the
    block only (in this thread)."""

    def __init__(self, safe_globals: list):
        self.safe_globals = _check(safe_globals)

    def __enter__(self):
        self._before = getattr(_local, "scoped", [])
        _local.scoped = [*self._before, *self.safe_globals]

    def __exit__(self, *exc_info):
        _local.scoped = self._before


def allowed() -> dict:
    """"module.name" -> object, for each safe global now."""
    found = {}
    for entry in _entries():
        if isinstance(entry, tuple):
            found[entry[1]] = entry[0]
        else:
            module = getattr(entry, "__module__", None)
            name = getattr(entry, "__qualname__", getattr(entry, "__name__", None))
            if module is not None and name is not None:
                found[f"{module}.{name}"] = entry
    return found
