"""autojit.utils.deterministic: torch.utils.deterministic's one setting,
`fill_uninitialized_memory` (True by default): whether `empty` and its kin fill their memory
while `autojit.use_deterministic_algorithms(True)` is on (tensor/determinism.py)."""

from __future__ import annotations

import sys
import types

from ..tensor.determinism import SETTINGS


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self) -> bool:
        """Whether to fill uninitialized memory with a known value when
        `autojit.use_deterministic_algorithms()` is set to True."""
        return SETTINGS.fill_uninitialized_memory

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode) -> None:
        if mode.__class__ is not bool:
            raise TypeError(f"_set_deterministic_fill_uninitialized_memory(): argument 'arg0' "
                            f"(position 1) must be bool, not {type(mode).__name__}")
        SETTINGS.fill_uninitialized_memory = mode


sys.modules[__name__].__class__ = _Deterministic
