"""torch._C under the drop-in: the few names of torch's C extension that libraries reach for
from Python, each autojit's counterpart. The rest of torch._C (TorchScript's graphs, the
dispatcher, device internals) has none; asking for it raises the drop-in's AttributeError.
"""

from __future__ import annotations

import weakref

from ..autograd import is_grad_enabled as _is_grad_enabled  # noqa: F401
from ..autograd import set_grad_enabled as _set_grad_enabled_mode
from ..library import (  # noqa: F401
    DispatchKey,
    DispatchKeySet,
    _dispatch_tls_local_exclude_set,
    _ExcludeDispatchKeyGuard,
)
from ..ops.linalg.common import LinAlgError as _LinAlgError  # noqa: F401
from ..tensor.device import device  # noqa: F401
from ..tensor.dtypes import DType as dtype  # noqa: F401
from ..tensor.generator import Generator  # noqa: F401
from ..tensor.tensor import Size  # noqa: F401
from ..tensor.tensor import Tensor as TensorBase
from ..tensor.tensor import Tensor as _TensorBase  # noqa: F401
from ..tensor.torch_function import (
    DisableTorchFunction,  # noqa: F401
    DisableTorchFunctionSubclass,  # noqa: F401
)
from ..tensor.torch_function import disabled_torch_function_impl as _disabled_torch_function_impl  # noqa: F401, E501
from ..tensor.torch_function import is_torch_function_enabled as _is_torch_function_enabled  # noqa: F401, E501
from . import _C_functorch as _functorch  # noqa: F401 - torch._C._functorch (TransformType)
from . import _C_nn as _nn  # noqa: F401 - torch._C._nn (linear, gelu, pad, ...)


class _TorchScriptIR:
    """TorchScript's IR types, `torch._C.Graph`, `Value` and `Node`: names that ONNX symbolic
    functions annotate their arguments with, evaluated when the class holding one is defined
    (transformers' SEW-D model at import). autojit has no TorchScript graphs to make one of."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            f"torch._C.{type(self).__name__}: autojit has no TorchScript graphs "
            "(autojit.compile traces into its own; see docs/drop-in.md)")


class Graph(_TorchScriptIR):
    pass


class Value(_TorchScriptIR):
    pass


class Node(_TorchScriptIR):
    pass


def _log_api_usage_once(event: str) -> None:
    """torch logs a library's first use of an API to its telemetry hooks; autojit has none."""


def _get_accelerator(check: bool = False):
    """The accelerator's device type, or the CPU's where there is none (torch's answer, which
    transformers' distributed helpers read)."""
    from ..accelerator import current_accelerator

    return current_accelerator() or device("cpu")


def _get_default_device() -> str:
    """The default device's type, "cpu" unless set_default_device chose another (torch's
    string, which torch_geometric's printing compares with a tensor's device type)."""
    from ..tensor.device import get_default_device

    return get_default_device().type


def _get_tracing_state():
    """None: no torch.jit.trace is recording (autojit has no TorchScript tracer; code under
    autojit.compile runs as Python, so libraries take their eager paths)."""
    return None


def _are_functorch_transforms_active() -> bool:
    """Whether a torch.func transform (grad, vjp, jvp, vmap, ...) is running its function."""
    from ..tensor.state import state

    return state.func_transforms > 0


def _has_torch_function(relevant_args) -> bool:
    """Whether an argument's type overrides __torch_function__ (torch.overrides' function)."""
    from .overrides import has_torch_function

    return has_torch_function(relevant_args)


def _has_torch_function_unary(value) -> bool:
    return _has_torch_function((value,))


def _has_torch_function_variadic(*args) -> bool:
    return _has_torch_function(args)


def _is_torch_function_mode_enabled() -> bool:
    """Whether a TorchFunctionMode is on in this thread."""
    from ..tensor.state import state

    return bool(state.function_modes)


def _len_torch_function_stack() -> int:
    """How many TorchFunctionModes are on in this thread."""
    from ..tensor.state import state

    return len(state.function_modes)


from ..autograd.c_functions import WeakTensorRef as _WeakTensorRef  # noqa: E402, F401
from ..autograd.c_functions import autograd as _autograd  # noqa: E402, F401
from ..autograd.c_functions import functions as _functions  # noqa: E402, F401
from ..autograd.graph_tasks import (  # noqa: E402, F401
    current_graph_task_execution_order as _current_graph_task_execution_order,
)
from ..autograd.graph_tasks import current_graph_task_id as _current_graph_task_id  # noqa: E402, F401, E501
from ..autograd.graph_tasks import will_engine_execute_node as _will_engine_execute_node  # noqa: E402, F401, E501

is_grad_enabled = _is_grad_enabled
# torch's build flag for its LAPACK routines: autojit's linear algebra runs LAPACK (NumPy's).
has_lapack = True


def _set_grad_enabled(mode: bool) -> None:
    """Turn grad mode on or off for the thread, as torch.set_grad_enabled(mode) does."""
    _set_grad_enabled_mode(mode)


def _is_fwd_grad_enabled() -> bool:
    from ..autograd.forward_ad import _is_fwd_grad_enabled as enabled

    return enabled()


def _set_fwd_grad_enabled(mode: bool) -> None:
    """Turn forward-mode AD on or off for the thread (torch._C's switch, which
    forward_ad._set_fwd_grad_enabled wraps)."""
    from ..tensor.state import state

    state.fwd_grad_enabled = bool(mode)


# ---- cached tensors ---------------------------------------------------------------------------
# torch keeps a set of tensors (CUDA graph trees' static inputs) whose one reference the cache
# holds is not counted where torch reads a tensor's reference count (AccumulateGrad's reuse of
# a gradient's buffer); autojit never reuses one (docs/differences.md), so the set is all there
# is. Entries go with their tensors; turning the set off keeps them but answers False.

_cached_tensors: dict = {}  # id(tensor) -> weak reference to it
_cached_tensors_enabled = [False]


def _set_cached_tensors_enabled(enabled: bool) -> None:
    """Turn the set of cached tensors on or off (its entries are kept while it is off)."""
    _cached_tensors_enabled[0] = bool(enabled)


def _cached_tensor_argument(name: str, tensor, result: str) -> None:
    if not isinstance(tensor, TensorBase):
        raise TypeError(f"{name}(): incompatible function arguments. The following argument "
                        f"types are supported:\n    1. (arg0: torch.Tensor) -> {result}\n\n"
                        f"Invoked with: {tensor!r}")
    if result == "None" and not _cached_tensors_enabled[0]:
        raise RuntimeError("cached_tensorimpls_enabled INTERNAL ASSERT FAILED: the set of "
                           "cached tensors is off (torch._C._set_cached_tensors_enabled)")


def _add_cached_tensor(tensor) -> None:
    """Put a tensor in the set of cached tensors, which must be on."""
    _cached_tensor_argument("_add_cached_tensor", tensor, "None")
    key = id(tensor)
    _cached_tensors[key] = weakref.ref(tensor, lambda _, key=key: _cached_tensors.pop(key, None))


def _remove_cached_tensor(tensor) -> None:
    """Take a tensor out of the set of cached tensors, which must be on."""
    _cached_tensor_argument("_remove_cached_tensor", tensor, "None")
    _cached_tensors.pop(id(tensor), None)


def _is_cached_tensor(tensor) -> bool:
    """Whether the set of cached tensors is on and holds this tensor (not another tensor of its
    storage: a view or a detached alias is not in it)."""
    _cached_tensor_argument("_is_cached_tensor", tensor, "bool")
    found = _cached_tensors.get(id(tensor)) if _cached_tensors_enabled[0] else None
    return found is not None and found() is tensor


__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "Generator", "Size",
           "TensorBase", "device", "dtype"]
