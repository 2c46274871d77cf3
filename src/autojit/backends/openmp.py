"""autojit.backends.openmp: whether OpenMP is used. autojit's CPU kernels run on its own worker
threads (autojit.set_num_threads), not OpenMP: `is_available()` is False."""

from __future__ import annotations


def is_available() -> bool:
    """Whether OpenMP is used: never, autojit runs its kernels on its own threads."""
    return False
