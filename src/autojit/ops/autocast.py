"""Automatic mixed precision: the per-thread autocast settings, the cast policies of torch's
autocast op lists, and the one routine that applies a policy to an op's arguments; and
`float32_inside`, which declares the ops torch computes in float32 for bfloat16 and float16
inputs.

An op that torch's autocast lists declares its policy where it is defined, with
`autocast_op(cpu=..., cuda=...)` (LOWER: run in the autocast dtype; FP32: run in float32;
FP32_SET_OPT_DTYPE: float32 unless a dtype is given; PROMOTE: the widest floating input;
BANNED: refused). The wrapper reads `state.autocast`, which is None whenever autocast is off,
so an op costs one attribute read more than it would without the wrapper; otherwise `run`
casts the tensor arguments (reusing the cast of a weight within an autocast region, as torch's
cache does) and runs the op with autocast off inside it, as torch's autocast kernels exclude
the autocast keys from the ops they call. The context managers (`autojit.autocast`) live in
autojit/amp/; docs/notes/autocast.md says why the policy is a property of the op function
rather than of the registry's primitives, and what `round_once` and `float32_inside`
emulate.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
import weakref

from ..tensor import dtypes
from ..tensor.device import device as _parse_device
from ..tensor.state import state
from ..tensor.tensor import Tensor

LOWER = "lower_precision_fp"
FP32 = "fp32"
FP32_SET_OPT_DTYPE = "fp32_set_opt_dtype"
PROMOTE = "promote"
BANNED = "banned"
POLICIES = (LOWER, FP32, FP32_SET_OPT_DTYPE, PROMOTE, BANNED)

DEVICE_TYPES = ("cpu", "cuda")  # the devices autocast casts tensors on
DEFAULT_DTYPES = {"cpu": dtypes.bfloat16, "cuda": dtypes.float16}
# The other device types torch keeps autocast settings for: they can be set, read and entered
# as torch's can, and no tensor lives there to be cast.
OTHER_DEFAULT_DTYPES = {"mps": dtypes.float16, "xpu": dtypes.float16, "hpu": dtypes.bfloat16,
                        "ipu": dtypes.float16, "xla": dtypes.bfloat16, "mtia": dtypes.float16,
                        "maia": dtypes.bfloat16, "privateuseone": dtypes.float16}

_BANNED_MESSAGE = (
    "autojit.nn.functional.binary_cross_entropy and autojit.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using autojit.nn.functional."
    "binary_cross_entropy_with_logits\n"
    "or autojit.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")


class _Settings(threading.local):
    """What the autocast functions set, per thread (torch's autocast state is thread-local)."""

    def __init__(self):
        self.enabled = dict.fromkeys((*DEVICE_TYPES, *OTHER_DEFAULT_DTYPES), False)
        self.dtype = {**DEFAULT_DTYPES, **OTHER_DEFAULT_DTYPES}
        self.cache_enabled = True
        self.nesting = 0
        # id(source) -> (weakref to the source, its cast): lower-precision casts of float32
        # leaves that require grad (weights), kept until the outermost autocast region exits.
        self.cache: dict = {}


_settings = _Settings()


class Mode:
    """The autocast settings ops read (`state.autocast`): the lower-precision dtype of each
    device type with autocast on (None where off), and whether weights' casts are cached.
    Interned: equal settings are the same object, which a compiled function's guard tests."""

    __slots__ = ("cpu", "cuda", "cache_enabled")

    def __init__(self, cpu, cuda, cache_enabled: bool):
        self.cpu, self.cuda, self.cache_enabled = cpu, cuda, cache_enabled

    def __repr__(self) -> str:
        on = [f"{device}={getattr(self, device).name}" for device in DEVICE_TYPES
              if getattr(self, device) is not None]
        return f"autocast({', '.join(on)})"


_MODES: dict = {}


def _refresh() -> None:
    """Recompute state.autocast from the settings."""
    lower = tuple(_settings.dtype[device] if _settings.enabled[device] else None
                  for device in DEVICE_TYPES)
    if lower == (None, None):
        state.autocast = None
        return
    key = (*lower, _settings.cache_enabled)
    mode = _MODES.get(key)
    if mode is None:
        mode = _MODES[key] = Mode(*key)
    state.autocast = mode


# ---- the settings, with torch's names -------------------------------------------------------

def check_device_type(device_type) -> str:
    """A device type string autocast knows, with torch's errors for others."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    parsed = _parse_device(device_type).type  # torch's error for a string naming no device
    if parsed not in _settings.enabled or device_type != parsed:
        raise RuntimeError(f"User specified an unsupported autocast device_type "
                           f"'{device_type}'")
    return parsed


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can be used on `device_type` (torch's list: "cpu", "cuda", "mps", ...)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return _parse_device(device_type).type in _settings.enabled and ":" not in device_type


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for `device_type` (CUDA when none is given, as torch)."""
    return _settings.enabled[check_device_type("cuda" if device_type is None
                                               else device_type)]


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Turn autocast on or off for `device_type`; `set_autocast_enabled(enabled)` means CUDA."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _settings.enabled[check_device_type(device_type)] = bool(enabled)
    _refresh()


def get_autocast_dtype(device_type: str):
    """The dtype autocast runs lower-precision ops in on `device_type` (bfloat16 on the CPU and
    float16 on CUDA unless set)."""
    return _settings.dtype[check_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype) -> None:
    if not isinstance(dtype, dtypes.DType):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' must be autojit.dtype, not "
                        f"{type(dtype).__name__}")
    _settings.dtype[check_device_type(device_type)] = dtype
    _refresh()


def is_autocast_cache_enabled() -> bool:
    return _settings.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _settings.cache_enabled = bool(enabled)
    _refresh()


def clear_autocast_cache() -> None:
    """Forget the casts of weights autocast reused."""
    _settings.cache.clear()


def autocast_increment_nesting() -> int:
    _settings.nesting += 1
    return _settings.nesting


def autocast_decrement_nesting() -> int:
    _settings.nesting -= 1
    return _settings.nesting


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"autojit.{old}() is deprecated. Please use autojit.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype) -> None:
    _deprecated("set_autocast_gpu_dtype", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


# ---- the policies ------------------------------------------------------------------------------

class Policy:
    """An op's autocast policy on each device type (None: the op runs as it is there).

    round_once: for LOWER, the op computes in float32 on its inputs rounded to the autocast
        dtype and rounds its result once, as torch's single lower-precision kernel does
        (autojit's composite would round after each primitive): docs/notes/autocast.md.
    dtype_keyword: for FP32_SET_OPT_DTYPE, the keyword that names the op's result dtype.
    """

    __slots__ = ("cpu", "cuda", "round_once", "dtype_keyword")

    def __init__(self, cpu, cuda, round_once: bool, dtype_keyword: str):
        for kind in (cpu, cuda):
            if kind is not None and kind not in POLICIES:
                raise ValueError(f"unknown autocast policy {kind!r}")
        self.cpu, self.cuda = cpu, cuda
        self.round_once, self.dtype_keyword = round_once, dtype_keyword

    def __repr__(self) -> str:
        return f"Policy(cpu={self.cpu}, cuda={self.cuda})"


def autocast_op(*, cpu: str | None = None, cuda: str | None = None, round_once: bool = False,
                dtype_keyword: str = "dtype"):
    """Declare an op's autocast policy on each device type. Without a policy for the tensors'
    device the op runs as it is, with autocast off inside it (an op torch runs as one kernel,
    whose inner ops autocast must not cast one by one)."""
    policy = Policy(cpu, cuda, round_once, dtype_keyword)

    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if state.autocast is None:
                # Without keywords, a plain call: passing an empty dict on costs more.
                return fn(*args, **kwargs) if kwargs else fn(*args)
            return run(policy, fn, args, kwargs)

        op.autocast_policy = policy
        return op

    return decorate


def run(policy: Policy, fn, args: tuple, kwargs: dict):
    """Call `fn` under autocast `state.autocast`, its arguments cast by `policy`."""
    mode = state.autocast
    device_type = _device_type(args, kwargs)
    lower = getattr(mode, device_type) if device_type in DEVICE_TYPES else None
    kind = getattr(policy, device_type) if lower is not None else None
    state.autocast = None  # the op's own ops are not autocast (torch excludes its keys)
    try:
        if kind is None:
            return fn(*args, **kwargs)
        if kind == LOWER:
            if policy.round_once:
                def to_float(x):
                    x = cached_cast(x, lower, device_type, mode)
                    return x.to(dtypes.float32) if x._dtype is lower else x

                args, kwargs = _map_tensors(to_float, args, kwargs)
                return _map_results(lambda y: y.to(lower) if y._dtype is dtypes.float32 else y,
                                    fn(*args, **kwargs))
            args, kwargs = _map_tensors(lambda x: cached_cast(x, lower, device_type, mode),
                                        args, kwargs)
        elif kind == FP32:
            args, kwargs = _map_tensors(lambda x: cached_cast(x, dtypes.float32, device_type,
                                                              mode), args, kwargs)
        elif kind == FP32_SET_OPT_DTYPE:
            first = next(_tensors(args), None)
            if (first is not None and _eligible(first, device_type)
                    and kwargs.get(policy.dtype_keyword) is None):
                # op(x, dtype=float32) converts x first: the same as converting it here
                args = tuple(x.to(dtypes.float32) if x is first else x for x in args)
        elif kind == PROMOTE:
            widest = lower
            for x in _tensors(args + tuple(kwargs.values())):
                widest = _prioritize(widest, x, device_type, lower)
            args, kwargs = _map_tensors(lambda x: cached_cast(x, widest, device_type, mode),
                                        args, kwargs)
        else:  # BANNED
            raise RuntimeError(_BANNED_MESSAGE)
        return fn(*args, **kwargs)
    finally:
        state.autocast = mode


def _eligible(x: Tensor, device_type: str) -> bool:
    """Whether autocast casts x: a floating tensor on the device, not float64."""
    dtype = x._dtype
    return dtype.is_floating_point and dtype is not dtypes.float64 and \
        x.device.type == device_type


def cached_cast(x, to, device_type: str, mode: Mode):
    """x converted to `to` where autocast converts it; the lower-precision cast of a weight
    (a float32 leaf that requires grad) is made once per autocast region and reused."""
    if not isinstance(x, Tensor) or x._dtype is to or not _eligible(x, device_type):
        return x
    if (mode.cache_enabled and to is getattr(mode, device_type) and x._dtype is dtypes.float32
            and x._requires_grad and x.grad_fn is None and x._base is None
            and state.grad_enabled and state.tracer is None):
        # Not while tracing: a cast kept past the trace would be a symbolic value.
        found = _settings.cache.get(id(x))
        if found is not None and found[0]() is x:
            return found[1]
        cast = x.to(to)
        _settings.cache[id(x)] = (weakref.ref(x), cast)
        return cast
    return x.to(to)


def _prioritize(current, x, device_type: str, lower):
    """torch's at::autocast::prioritize: float32 wins over the lower-precision dtype; float64
    tensors and tensors on other devices are left out."""
    if not isinstance(x, Tensor) or not _eligible(x, device_type):
        return current
    if current is dtypes.float32 or x._dtype is dtypes.float32:
        return dtypes.float32
    if current is lower and x._dtype is lower:
        return lower
    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")


def _tensors(values):
    """The tensors among `values`, one level into lists and tuples (TensorList arguments)."""
    for value in values:
        if isinstance(value, Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, Tensor):
                    yield item


def _device_type(args: tuple, kwargs: dict) -> str | None:
    """The device type of the op's first tensor argument, which selects the autocast key."""
    for x in _tensors(args):
        return x.device.type
    for x in _tensors(kwargs.values()):
        return x.device.type
    return None


def _map_tensors(convert, args: tuple, kwargs: dict):
    def one(value):
        if isinstance(value, Tensor):
            return convert(value)
        if isinstance(value, (list, tuple)) and any(isinstance(x, Tensor) for x in value):
            return type(value)(convert(x) if isinstance(x, Tensor) else x for x in value)
        return value

    return tuple(one(x) for x in args), {key: one(x) for key, x in kwargs.items()}


def _map_results(convert, result):
    if isinstance(result, Tensor):
        return convert(result)
    if isinstance(result, tuple) and any(isinstance(x, Tensor) for x in result):
        values = [convert(x) if isinstance(x, Tensor) else x for x in result]
        return type(result)(*values) if hasattr(result, "_fields") else tuple(values)
    return result


# ---- ops torch computes in float32 for lower-precision inputs ---------------------------------

_LOWER_DTYPES = (dtypes.bfloat16, dtypes.float16)


def float32_inside(*, keep: tuple = (), alike: bool = False):
    """Declare an op whose bfloat16 and float16 kernels in torch compute in float32 and round
    their result once, to the input's dtype, whatever the dtype of its parameters (softmax,
    gelu, mean, the normalizations): given a lower-precision first argument (and no `dtype`),
    its tensors of that dtype run as float32 and the float32 results are rounded back, where
    autojit's composite would round after each primitive, or promote to its float32
    parameters. `keep` names arguments left as they are (state updated in place). `alike`:
    an op whose result promotes its operands (addcmul, sinh's composite of several ops):
    only where every tensor operand with dims has the first's dtype (a float32 one makes a
    float32 result, which is not rounded back)."""

    def decorate(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def op(*args, **kwargs):
            first = args[0] if args else None
            if not isinstance(first, Tensor) or first._dtype not in _LOWER_DTYPES:
                return fn(*args, **kwargs)
            if alike and not _operands_alike(first._dtype, args, kwargs):
                return fn(*args, **kwargs)
            return _in_float32(fn, signature, keep, first._dtype, args, kwargs)

        return op

    return decorate


def _operands_alike(lower, args: tuple, kwargs: dict) -> bool:
    """Whether every tensor operand with dims has the dtype `lower` (0-d tensors and Python
    numbers do not decide the result's dtype against a tensor with dims)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, Tensor) and value._dtype is not lower and value.ndim:
            return False
    return True


def _in_float32(fn, signature, keep: tuple, lower, args: tuple, kwargs: dict):
    bound = signature.bind(*args, **kwargs)
    if bound.arguments.get("dtype") is not None:
        return fn(*args, **kwargs)  # the result's dtype is given

    def widen(value):
        if isinstance(value, Tensor) and value._dtype is lower:
            return value.to(dtypes.float32)
        return value

    for name, value in bound.arguments.items():
        if name not in keep:
            bound.arguments[name] = widen(value)
    return _map_results(lambda y: y.to(lower) if y._dtype is dtypes.float32 else y,
                        fn(*bound.args, **bound.kwargs))
