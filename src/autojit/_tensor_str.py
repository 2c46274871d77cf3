"""autojit._tensor_str: torch._tensor_str's names for printing tensors, which libraries use to
print their tensor subclasses as tensors print (torch_geometric's Index and EdgeIndex):
PRINT_OPTS, `_tensor_str(tensor, indent)` (the bracketed values), `_add_suffixes`,
`_str_intern(tensor, tensor_contents=...)` and `_str`. tensor/printing.py does the printing."""

from __future__ import annotations

from .tensor.printing import OPTIONS as PRINT_OPTS
from .tensor.printing import _add_suffixes as _join_suffixes
from .tensor.printing import (
    format_values,
    get_printoptions,
    printoptions,
    set_printoptions,
    tensor_repr,
)

__all__ = ["PRINT_OPTS", "get_printoptions", "printoptions", "set_printoptions"]


def _tensor_str(self, indent: int) -> str:
    """The tensor's values as its repr shows them ("[0., 1., 2.]"), lines indented by
    `indent`; "[]" for an empty tensor."""
    data = self.detach()._host("print")
    return "[]" if data.size == 0 else format_values(data, indent)


def _add_suffixes(tensor_str: str, suffixes, indent: int, force_newline: bool) -> str:
    """`tensor_str` with ", suffix" for each suffix and the closing bracket, a suffix that
    would pass the line width (or every one, with force_newline) on a line of its own."""
    if not force_newline:
        return _join_suffixes(tensor_str, list(suffixes), indent)
    return tensor_str + "".join(",\n" + " " * indent + suffix for suffix in suffixes) + ")"


def _str_intern(inp, *, tensor_contents: str | None = None) -> str:
    """The tensor's repr, with `tensor_contents` in place of its values when given."""
    return tensor_repr(inp, contents=tensor_contents)


def _str(self, *, tensor_contents: str | None = None) -> str:
    return _str_intern(self, tensor_contents=tensor_contents)
