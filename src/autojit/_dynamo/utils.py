"""autojit._dynamo.utils: torch._dynamo.utils' question libraries ask before compiling a
function of theirs (torchvision's roi_align): can autojit.compile run code on this device?"""

from __future__ import annotations

from ..tensor.device import device as _device

__all__ = ["is_compile_supported"]


def is_compile_supported(device_type) -> bool:
    """Whether autojit.compile runs code on tensors of `device_type`: the CPU always, a CUDA
    device where one (or Numba's CUDA simulator) is available; no other device."""
    kind = _device(device_type).type
    if kind == "cpu":
        return True
    if kind == "cuda":
        from .. import cuda

        return cuda.is_available()
    return False
