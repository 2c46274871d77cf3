"""autojit.nn.modules.container: Sequential, ModuleList, ModuleDict, ParameterList and
ParameterDict, at torch's module path (the classes are autojit.nn's)."""

from __future__ import annotations

from ..container import ModuleDict, ModuleList, Sequential
from ..parameter_containers import ParameterDict, ParameterList

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]
