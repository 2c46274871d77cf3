"""autojit.export: torch.export's names. autojit traces programs into its own graphs
(`autojit.compile`, `autojit.make_graph`, printed with `f.ir()`), not into torch's aten
ExportedProgram, so `export`, `save` and `load` raise NotImplementedError saying so. What
programs name without exporting is here: `Dim` (dynamic-shape specifications: `Dim("batch",
min=1, max=64)`, `Dim.AUTO`, `Dim.STATIC`, `Dim.DYNAMIC`), `dims`, and `ExportedProgram` as a
type for annotations and isinstance checks (transformers' exporters import it with their
module, which its model tests import at collection).
"""

from __future__ import annotations

import enum


def _refuse(name: str):
    def function(*args, **kwargs):
        raise NotImplementedError(
            f"torch.export.{name}: autojit traces programs into its own graphs "
            "(autojit.compile; f.ir() prints them), not into torch's aten ExportedProgram")

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.export.{name}: raises NotImplementedError (no aten export)."
    return function


export = _refuse("export")
save = _refuse("save")
load = _refuse("load")
draft_export = _refuse("draft_export")


class ExportedProgram:
    """torch.export.ExportedProgram, as a type: no export makes one here."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch.export.ExportedProgram: autojit makes no aten "
                                  "ExportedProgram (autojit.compile traces its own graphs)")


class _DimHint(enum.Enum):
    """The hints torch's Dim carries as class attributes."""

    AUTO = "AUTO"
    STATIC = "STATIC"
    DYNAMIC = "DYNAMIC"


class Dim:
    """A dimension of a dynamic-shape specification: its name and its bounds."""

    AUTO, STATIC, DYNAMIC = _DimHint.AUTO, _DimHint.STATIC, _DimHint.DYNAMIC

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None):  # noqa: A002
        if min is not None and max is not None and min > max:
            raise ValueError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        self.__name__ = name
        self.min, self.max = (0 if min is None else min), max

    def __repr__(self) -> str:
        return f"Dim({self.__name__!r}, min={self.min}, max={self.max})"


def dims(*names: str, min: int | None = None, max: int | None = None) -> tuple:  # noqa: A002
    """One Dim per name, with the same bounds."""
    return tuple(Dim(name, min=min, max=max) for name in names)


__all__ = ["Dim", "ExportedProgram", "dims", "draft_export", "export", "load", "save"]
