"""torch._jit_internal under the drop-in: the TorchScript helpers libraries import for their
containers and overloads (`_copy_to_script_wrapper`, `_overload`, `_overload_method`,
`boolean_dispatch`, `is_scripting`, autojit.jit's). autojit has no TorchScript (autojit.jit says
how its names map), so the decorators leave the function as it is.
"""

from __future__ import annotations

import functools

from ..jit.annotations import (  # noqa: F401 - torch._jit_internal's names too
    BroadcastingList1,
    BroadcastingList2,
    BroadcastingList3,
    BroadcastingListCls,
)
from ..jit.scripting import is_scripting  # noqa: F401 - torch._jit_internal's too


def _copy_to_script_wrapper(fn):
    """fn itself: TorchScript would copy it onto a scripted container."""
    return fn


def _overload(func):
    """func itself: an overload declaration for TorchScript."""
    return func


def _overload_method(func):
    """func itself: a method's overload declaration for TorchScript."""
    return func


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name=None,
                     func_name=None):
    """A function that calls if_true or if_false by the bool argument `arg_name` (at position
    `arg_index`, `default` when not given), as torch.nn.functional's max_pool2d picks by
    return_indices."""
    @functools.wraps(if_false)
    def dispatched(*args, **kwargs):
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        else:
            flag = default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if module_name is not None:
        dispatched.__module__ = module_name
    if func_name is not None:
        dispatched.__name__ = dispatched.__qualname__ = func_name
    return dispatched


__all__ = ["boolean_dispatch", "is_scripting"]
