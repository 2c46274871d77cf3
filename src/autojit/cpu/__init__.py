"""autojit.cpu: the CPU device's module, as torch.cpu names it: the questions programs ask of a
device (is_available, device_count, current_device, synchronize), answered for the CPU, and the
deprecated autocast and GradScaler of cpu.amp.
"""

from __future__ import annotations

from . import amp

__all__ = ["amp", "current_device", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    """The CPU is always there."""
    return True


def device_count() -> int:
    """One CPU device."""
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU ops have finished when they return."""
