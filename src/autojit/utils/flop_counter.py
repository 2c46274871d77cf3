"""torch.utils.flop_counter's FlopCounterMode is a __torch_dispatch__ mode counting aten
operators' FLOPs; autojit has no such modes (utils/_python_dispatch.py), so constructing one
raises NotImplementedError. docs/drop-in.md lists this."""

from __future__ import annotations

from ._python_dispatch import TorchDispatchMode


class FlopCounterMode(TorchDispatchMode):
    """torch's FLOP counter; raises NotImplementedError when made."""

    def __init__(self, mods=None, depth: int = 2, display: bool = True, custom_mapping=None):
        raise NotImplementedError(
            "FlopCounterMode counts aten operators through __torch_dispatch__, which autojit "
            "does not have")
