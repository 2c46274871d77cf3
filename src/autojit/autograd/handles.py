"""What a hook registration returns: RemovableHandle, whose `remove()` unregisters the hook.

A handle refers weakly to the HookDict the hook sits in (torch.utils.hooks.RemovableHandle).

hooks.py registers the hooks of tensors and nodes with these, nn/ those of modules, and
graph_api.py's register_multi_grad_hook returns a handle over several.
"""

from __future__ import annotations

import itertools
import weakref

_handle_ids = itertools.count()


class RemovableHandle:
    """What a hook registration returns: `remove()` unregisters the hook (idempotent)."""

    __slots__ = ("_hooks", "id")

    def __init__(self, hooks: dict):
        self._hooks = weakref.ref(hooks)
        self.id = next(_handle_ids)

    def remove(self) -> None:
        hooks = self._hooks()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info) -> None:
        self.remove()


class HookDict(dict):
    """An ordered id -> hook mapping that a handle can refer to weakly (plain dicts cannot)."""

    __slots__ = ("__weakref__",)
