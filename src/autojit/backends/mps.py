"""autojit.backends.mps: Apple's Metal backend, which autojit does not have."""

from __future__ import annotations


def is_available() -> bool:
    """Whether tensors can live on an MPS device: never in autojit."""
    return False


def is_built() -> bool:
    """Whether autojit was built with MPS: it was not."""
    return False
