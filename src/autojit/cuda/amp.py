"""autojit.cuda.amp: the deprecated CUDA forms of autocast, GradScaler, custom_fwd and custom_bwd,
as torch.cuda.amp keeps them: each warns (FutureWarning, torch's text) and is autojit.amp's with
device "cuda". See docs/amp.md.
"""

from __future__ import annotations

import functools
import warnings

from ..amp import autocast_mode as _autocast_mode
from ..amp import grad_scaler as _grad_scaler
from ..tensor import dtypes

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd",
           "GradScaler"]


def amp_definitely_not_available() -> bool:
    """True when CUDA cannot be used here (no GPU)."""
    return not _autocast_mode.cuda_available()


class autocast(_autocast_mode.autocast):  # noqa: N801 - torch's name
    """`autojit.amp.autocast("cuda", ...)`, deprecated (a FutureWarning)."""

    def __init__(self, enabled: bool = True, dtype=dtypes.float16, cache_enabled: bool = True):
        warnings.warn("`autojit.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`autojit.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """`autojit.amp.GradScaler("cuda", ...)`, deprecated (a FutureWarning)."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`autojit.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`autojit.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """`autojit.amp.custom_fwd(..., device_type="cuda")`, deprecated (a FutureWarning)."""
    warnings.warn("`autojit.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`autojit.amp.custom_fwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return functools.partial(_autocast_mode.custom_fwd, device_type="cuda")(
        fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """`autojit.amp.custom_bwd(..., device_type="cuda")`, deprecated (a FutureWarning)."""
    warnings.warn("`autojit.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`autojit.amp.custom_bwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return functools.partial(_autocast_mode.custom_bwd, device_type="cuda")(bwd)
