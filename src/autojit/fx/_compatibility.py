"""autojit.fx._compatibility: torch.fx's `compatibility(is_backward_compatible=...)` decorator,
which libraries put on their own fx passes and tracers. It marks an object (a note in its
docstring and a registry entry, as torch's does) and returns it unchanged.
"""

from __future__ import annotations

import textwrap

__all__ = ["compatibility"]

_BACK_COMPAT_OBJECTS: dict = {}
_MARKED_WITH_COMPATIBILITY: dict = {}

_NOTES = {
    True: "\n\n.. note::\n    Backwards-compatibility for this API is guaranteed.\n",
    False: "\n\n.. warning::\n    This API is experimental and is *NOT* backward-compatible.\n",
}


def compatibility(is_backward_compatible: bool):
    """A decorator recording whether the object's API is kept backward compatible."""

    def mark(fn):
        fn.__doc__ = textwrap.dedent(getattr(fn, "__doc__", None) or "") + _NOTES[
            bool(is_backward_compatible)]
        if is_backward_compatible:
            _BACK_COMPAT_OBJECTS.setdefault(fn)
        _MARKED_WITH_COMPATIBILITY.setdefault(fn)
        return fn

    return mark
