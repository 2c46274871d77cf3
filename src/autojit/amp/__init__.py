"""autojit.amp: automatic mixed precision, as torch.amp: `autocast` (ops torch's autocast lists
run in bfloat16 or float16, the precision-sensitive ones in float32) and `GradScaler` (loss
scaling, so that float16 gradients neither underflow nor corrupt a step with infs).

The autocast settings and the cast policies live in the ops layer (ops/autocast.py), which every
listed op consults; this package holds what programs call. It sits above autograd and below
the compiler (the layer contract in pyproject.toml): GradScaler uses no_grad, and
autojit.cuda.amp and autojit.cpu.amp re-export it. See docs/amp.md.
"""

from ..ops.autocast import is_autocast_available
from . import autocast_mode, grad_scaler  # noqa: F401 - torch.amp's submodules
from .autocast_mode import autocast, custom_bwd, custom_fwd
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
