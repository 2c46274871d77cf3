"""autojit.nn.modules.utils: torch.nn.modules.utils' helpers that layers and libraries import
(kornia, timm): `_single`, `_pair`, `_triple`, `_quadruple` and `_ntuple(n)` turn a number
into a tuple of n of it (an iterable is kept as a tuple), `_reverse_repeat_tuple` makes F.pad's
padding from a layer's, `_list_with_default` fills an adaptive pooling's None sizes, and
`consume_prefix_in_state_dict_if_present` strips a DataParallel `module.` prefix from a state
dict."""

from __future__ import annotations

import collections.abc
import itertools

from ...tensor.symbolic import SymInt

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse"):
    def parse(value):
        if isinstance(value, collections.abc.Iterable):
            return tuple(value)
        return tuple(itertools.repeat(value, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(values, n: int) -> tuple:
    """The items of `values` in reverse order, each repeated n times: a Conv layer's padding
    (per dim, first dim first) as F.pad takes it (per side, last dim first)."""
    return tuple(value for value in reversed(values) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pooling's output size with each None taken from the input's size at that
    place (`defaults`, the input's trailing sizes); an int is returned as it is."""
    if isinstance(out_size, (int, SymInt)):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [size if size is not None else default
            for size, default in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix: str) -> None:
    """Strip `prefix` (a DataParallel's "module.") from the keys of `state_dict` that have it,
    in place, and from its `_metadata` keys (where "module" itself becomes "")."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)
