"""torch.multiprocessing under the drop-in: Python's multiprocessing, whose queues and pipes
carry autojit's CPU tensors by their shared memory (the reduction tensor/sharing.py registers
with multiprocessing's ForkingPickler, torch's "file_descriptor" strategy), and torch's own
names: spawn and start_processes (with ProcessContext, from spawn.py, which is
torch.multiprocessing.spawn too), and the sharing strategies programs set.

Processes started by spawn or forkserver run the drop-in too (install() in __init__.py has
their preparation data install it before the main module is imported).
"""

from __future__ import annotations

from multiprocessing import *  # noqa: F403 - torch.multiprocessing re-exports all of it

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = ["file_descriptor"]


def get_all_sharing_strategies() -> set:
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    """Accepted for torch's programs; autojit's tensors cross processes by file descriptor
    either way."""
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy[0] = new_strategy


from .spawn import (  # noqa: E402, F401 - torch.multiprocessing's names of its spawn module
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)
