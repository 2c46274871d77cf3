"""autojit.xpu: torch.xpu's names for Intel GPUs, which autojit does not drive: no device is
ever available (is_available() is False, device_count() 0), as under a torch built without
XPU support, whose torch.xpu libraries query unguarded."""

from __future__ import annotations

__all__ = ["device_count", "empty_cache", "is_available", "is_bf16_supported",
           "is_current_stream_capturing", "is_initialized", "manual_seed", "manual_seed_all",
           "synchronize"]


def is_available() -> bool:
    """False: autojit drives no XPU."""
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_current_stream_capturing() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def empty_cache() -> None:
    """Nothing to free: no XPU memory is ever allocated."""


def manual_seed(seed: int) -> None:
    """Nothing to seed without a device (torch's call is deferred until one is used)."""


manual_seed_all = manual_seed


def synchronize(device=None) -> None:
    raise RuntimeError("Torch not compiled with XPU enabled: autojit drives no XPU device")
