"""Module-level boolean flags that check what is assigned to them, as torch.backends' do
(`cudnn.benchmark = 1` raises torch's RuntimeError): the module's class is replaced by one with
a property per flag."""

from __future__ import annotations

import sys
import types


def checked_flags(module_name: str, flags: dict, setter_names: dict) -> None:
    """Give the module `module_name` a boolean attribute per entry of `flags` (name -> initial
    value); assigning a non-bool raises torch's error naming `setter_names[name]`."""
    values = dict(flags)

    def flag(name: str) -> property:
        def get(module):
            return values[name]

        def set_(module, value):
            if not isinstance(value, bool):
                raise RuntimeError(f"{setter_names[name]} expects a bool, but got "
                                   f"{type(value).__name__}")
            values[name] = value

        return property(get, set_)

    module = sys.modules[module_name]
    module.__class__ = type(f"{module_name}.module", (types.ModuleType,),
                            {name: flag(name) for name in flags})
