"""autojit.nn.modules.container: the layers torch.nn.modules.container holds, at torch's module
path (the classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)

__all__ = [
    "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential",
]
