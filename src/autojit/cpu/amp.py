"""autojit.cpu.amp: the deprecated CPU forms of autocast and GradScaler, as torch.cpu.amp keeps
them: each warns (FutureWarning, torch's text) and is autojit.amp's with device "cpu". See
docs/amp.md.
"""

from __future__ import annotations

import warnings

from ..amp import autocast_mode as _autocast_mode
from ..amp import grad_scaler as _grad_scaler
from ..tensor import dtypes

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast_mode.autocast):  # noqa: N801 - torch's name
    """`autojit.amp.autocast("cpu", ...)`, deprecated (a FutureWarning)."""

    def __init__(self, enabled: bool = True, dtype=dtypes.bfloat16, cache_enabled: bool = True):
        warnings.warn("`autojit.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`autojit.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """`autojit.amp.GradScaler("cpu", ...)`, deprecated (a FutureWarning)."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`autojit.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`autojit.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
