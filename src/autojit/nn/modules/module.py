"""autojit.nn.modules.module: the layers torch.nn.modules.module holds, at torch's module path (the
classes are autojit.nn's)."""

from __future__ import annotations

from .. import (  # noqa: F401 - re-exported names
    Module,
)
from ..module_global_hooks import (  # noqa: F401 - torch's global module hooks
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from ..module_state import EXTRA_STATE_KEY_SUFFIX as _EXTRA_STATE_KEY_SUFFIX  # noqa: F401
from ..module_state import _IncompatibleKeys  # noqa: F401 - load_state_dict's result type

__all__ = [
    "Module", "register_module_buffer_registration_hook", "register_module_forward_hook",
    "register_module_forward_pre_hook", "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook", "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]
