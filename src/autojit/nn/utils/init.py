"""skip_init: a module made without running its parameters' initialization (torch.nn.utils's),
on the meta device first and then given empty storage where it is wanted."""

from __future__ import annotations

import inspect

from ..module import Module


def skip_init(module_cls, *args, **kwargs):
    """`module_cls(*args, **kwargs)` with its parameters and buffers left uninitialized (as
    from `empty`): made on the meta device, then `to_empty` on `device` (default the CPU). The
    class must take a `device` argument, as torch requires.

        >>> import autojit
        >>> layer = autojit.nn.utils.skip_init(autojit.nn.Linear, 5, 1)
        >>> layer.weight.shape, layer.weight.device.type
        (autojit.Size([1, 5]), 'cpu')
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
