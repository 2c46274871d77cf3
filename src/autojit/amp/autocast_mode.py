"""autojit.amp.autocast_mode: the autocast context manager and decorator, and custom_fwd and
custom_bwd for custom autograd functions, at torch.amp.autocast_mode's path.

Entering `autocast(device_type, dtype)` sets the thread's autocast settings (ops/autocast.py);
the ops torch's autocast lists read them and cast their arguments. Exiting restores the
settings, and the outermost exit drops the casts of weights that autocast reused.
docs/amp.md is the guide; docs/notes/autocast.md says how ops apply the policies.
"""

from __future__ import annotations

import collections.abc
import functools
import warnings

import numpy as np

from ..ops.autocast import (
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from ..tensor import dtypes
from ..tensor.device import runtime
from ..tensor.tensor import Tensor

__all__ = ["autocast_decorator", "autocast", "is_autocast_available", "custom_fwd",
           "custom_bwd"]

_SUPPORTED = (dtypes.bfloat16, dtypes.float16)


def cuda_available() -> bool:
    """Whether a GPU (or Numba's CUDA simulator) is there, asked of the registered CUDA
    runtime (autojit/cuda registers it, loaded here if it has not been; this layer does not
    import it)."""
    try:
        cuda = runtime("cuda")
    except RuntimeError:
        return False
    return cuda.device_count() > 0


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)

    decorate_autocast.__script_unsupported = "@autocast() decorator is not supported in " \
        "script mode"
    return decorate_autocast


class autocast:  # noqa: N801 - torch's name
    """A region of a program where ops run in an op-specific dtype: matrix products and
    convolutions in `dtype` (bfloat16 on the CPU and float16 on CUDA unless given), losses and
    other precision-sensitive ops in float32, as torch's autocast op lists say. A context
    manager or a decorator; `enabled=False` turns autocast off inside an autocast region.

    >>> import autojit
    >>> a, b = autojit.ones(2, 2), autojit.ones(2, 2)
    >>> with autojit.autocast("cpu"):
    ...     print((a @ b).dtype)
    autojit.bfloat16
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{self.device}'")
        if self.device == "privateuseone":  # no backend registers a module for it here
            raise AssertionError(
                "Tried to use AMP with the `privateuseone` backend, but the backend has not "
                "registered a module or  the module miss some necessary funcs. The backend should "
                "register a module by `autojit._register_device_module`, and the module must have "
                "these funcs: \n`get_amp_supported_dtype() -> List[autojit.dtype]`. \n")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else cache_enabled
        if enabled:
            if self.device == "cuda":
                if not cuda_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                    enabled = False
                elif self.fast_dtype is dtypes.bfloat16:
                    # autojit's CUDA runtime does not run bfloat16 (cuda.is_bf16_supported()).
                    raise RuntimeError("Current CUDA Device does not support bfloat16. Please "
                                       "switch dtype to float16.")
            elif self.fast_dtype not in _SUPPORTED:
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              "autojit.bfloat16, autojit.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)
        # What __enter__ saves, made here so that entering changes no attribute's presence
        # (a compiled function reaching this object sees the same structure every call).
        self.prev = self.prev_fastdtype = self.prev_cache_enabled = None

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # Drop the cache when we exit to a nesting level that's outside any autocast region.
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with autojit.autocast(device_type=...):\n"
                "        output = model(input)")
        return autocast_decorator(self, func)

    def __repr__(self) -> str:
        return (f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, "
                f"enabled={self._enabled})")


def _cast(value, device_type: str, dtype):
    """Tensors and containers of tensors with their floating tensors on `device_type`
    (float64 aside) converted to `dtype`; strings and NumPy arrays pass through."""
    if isinstance(value, Tensor):
        is_eligible = (value.is_floating_point() and value.device.type == device_type
                       and value.dtype is not dtypes.float64)
        return value.to(dtype) if is_eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(key, device_type, dtype): _cast(item, device_type, dtype)
                for key, item in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(item, device_type, dtype) for item in value)
        if isinstance(value, (list, tuple)):
            return type(value)(iterable)
        return iterable
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """A decorator for the `forward` of a custom autograd.Function: with `cast_inputs`, in an
    autocast region its floating tensor arguments are converted to that dtype and forward
    runs with autocast off; without, forward runs in the current autocast state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """A decorator for the `backward` of a custom autograd.Function: it runs in the autocast
    state its forward ran in (custom_fwd)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
