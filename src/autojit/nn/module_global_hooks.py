"""Global module hooks: torch.nn.modules.module's register_module_forward_pre_hook,
register_module_forward_hook, register_module_full_backward_pre_hook,
register_module_full_backward_hook and the registration hooks of buffers, parameters and
submodules, which apply to every module.

Where they sit: the hooks live in the dicts below, one per kind, and the registration functions
return handles that remove them. Module.__call__ (module.py) runs the global forward pre-hooks
and forward hooks before the module's own, and backward_hook_for (module_hooks.py) puts the
global backward hooks before the module's; register_buffer, register_parameter, add_module and
attribute assignment (module.py) pass each new value through the registration hooks, which may
replace it. autojit.nn.modules.module re-exports the functions at torch's path.
"""

from __future__ import annotations

from ..autograd.hooks import HookDict, RemovableHandle
from ..compiler.guard_conditions import register_mode_snapshot
from ..compiler.walk_roots import register_root

__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "register_module_buffer_registration_hook",
           "register_module_parameter_registration_hook",
           "register_module_module_registration_hook"]

forward_pre_hooks = HookDict()
forward_hooks = HookDict()
forward_hooks_with_kwargs: set = set()  # ids of the forward hooks called with kwargs
forward_hooks_always_called: set = set()  # ids of those also called when forward raised
backward_pre_hooks = HookDict()
backward_hooks = HookDict()
buffer_registration_hooks = HookDict()
parameter_registration_hooks = HookDict()
module_registration_hooks = HookDict()


def any_call_hooks() -> bool:
    """Whether a global hook runs around module calls (Module.__call__'s fast path asks)."""
    return bool(forward_pre_hooks or forward_hooks or backward_pre_hooks or backward_hooks)


def _registered_hooks() -> tuple:
    """the global module hooks"""
    return (*forward_pre_hooks, *forward_hooks, *backward_pre_hooks, *backward_hooks,
            len(forward_hooks_with_kwargs), len(forward_hooks_always_called))


# A compiled call runs the hooks its trace ran: adding or removing one traces again. And the
# state the hooks keep (a counter in a closure) is Python state a compiled call reads and
# writes, as the function's own is.
register_mode_snapshot(_registered_hooks)
for _name in ("forward_pre_hooks", "forward_hooks", "backward_pre_hooks", "backward_hooks"):
    register_root(f"register_module_{_name[:-1]}s", globals()[_name])


def _add(hooks: HookDict, hook) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """Call ``hook(module, args)`` before the forward of every module, before the module's own
    pre-hooks; it may return replacement args. This is for debugging and profiling."""
    return _add(forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """Call ``hook(module, args, output)`` after the forward of every module, before the
    module's own forward hooks; it may return a new output. With with_kwargs=True it is
    ``hook(module, args, kwargs, output)``; with always_call=True it runs when forward raised
    too."""
    handle = _add(forward_hooks, hook)
    if with_kwargs:
        forward_hooks_with_kwargs.add(handle.id)
    if always_call:
        forward_hooks_always_called.add(handle.id)
    return handle


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """Call ``hook(module, grad_output)`` for every module when the gradients w.r.t. its
    outputs are computed, before the module's own backward pre-hooks."""
    return _add(backward_pre_hooks, hook)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """Call ``hook(module, grad_input, grad_output)`` for every module when the gradients
    w.r.t. its inputs are computed, before the module's own backward hooks."""
    return _add(backward_hooks, hook)


def register_module_buffer_registration_hook(hook) -> RemovableHandle:
    """Call ``hook(module, name, buffer)`` whenever a module registers a buffer; it may
    return a replacement buffer."""
    return _add(buffer_registration_hooks, hook)


def register_module_parameter_registration_hook(hook) -> RemovableHandle:
    """Call ``hook(module, name, param)`` whenever a module registers a parameter; it may
    return a replacement parameter."""
    return _add(parameter_registration_hooks, hook)


def register_module_module_registration_hook(hook) -> RemovableHandle:
    """Call ``hook(module, name, submodule)`` whenever a module registers a submodule; it may
    return a replacement submodule."""
    return _add(module_registration_hooks, hook)


def registered(hooks: HookDict, module, name: str, value):
    """`value` passed through the registration hooks, each of which may replace it."""
    for hook in list(hooks.values()):
        replaced = hook(module, name, value)
        if replaced is not None:
            value = replaced
    return value
