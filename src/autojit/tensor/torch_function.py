"""torch's `__torch_function__` protocol: a Tensor subclass (or any type) defining
`__torch_function__` sees every public function, method, operator and property access its
instances reach, as under torch; Tensor's own default runs the op and converts Tensor results
to the subclass. It sits in the tensor layer, beside Tensor; the layers above register their
public namespaces here (`expose`) and the drop-in's torch.overrides and torch._C answer from it.

Nothing of it runs until an instance of a type that overrides the protocol is made (a user's
subclass: as_subclass, its constructor, _make_subclass): only then are the registered
namespaces' functions and Tensor's methods and properties replaced by checking wrappers
(`activate`), so the eager path pays nothing while no such subclass is in use. See
docs/notes/eager-dispatch.md ("Tensor subclasses").
"""

from __future__ import annotations

import functools
import sys
import types

import numpy as np

from . import dtypes, torch_dispatch
from .device import device as _device_type
from .state import state
from .tensor import Size, Tensor

# The values of state.torch_function.
ENABLED = 0
SUBCLASSES_DISABLED = 1  # DisableTorchFunctionSubclass: subclasses' handlers are skipped
ALL_DISABLED = 2  # DisableTorchFunction

# Whether the wrappers are installed (once, for the rest of the process).
ACTIVE = False
# How many TorchFunctionModes are entered, in all threads, and profilers running (one count
# each): while none is, a wrapper with no overloaded argument reads no thread-local state.
MODES = 0
# Profilers running (autograd/profiler.py), in all threads: each public call is an event then.
PROFILERS = 0
# Whether the protocol was switched on for the profilers alone (then it is off again after
# them), and whether something else has needed it since (a subclass, a mode).
_FOR_PROFILERS = False
_NEEDED = False


class _DisabledImpl:
    """torch._C._disabled_torch_function_impl: the `__torch_function__` of types that opt out
    (nn.Parameter, autojit's own subclasses). An object, not a function, so that it does not
    bind when read from an instance, like torch's builtin."""

    __name__ = __qualname__ = "_disabled_torch_function_impl"

    def __call__(self, func, types, args=(), kwargs=None):
        with DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self):
        return "<built-in function _disabled_torch_function_impl>"


disabled_torch_function_impl = _DisabledImpl()


class DisableTorchFunctionSubclass:
    """Within it, subclasses' `__torch_function__` handlers are not called (torch's
    torch._C.DisableTorchFunctionSubclass)."""

    _level = SUBCLASSES_DISABLED

    def __enter__(self):
        self._saved = state.torch_function
        if self._saved < self._level:
            state.torch_function = self._level
        return self

    def __exit__(self, *exc):
        state.torch_function = self._saved
        return False


class DisableTorchFunction(DisableTorchFunctionSubclass):
    """Within it, no `__torch_function__` handler is called (torch._C.DisableTorchFunction)."""

    _level = ALL_DISABLED


def is_torch_function_enabled() -> bool:
    return state.torch_function == ENABLED


def overrides(kind: type) -> bool:
    """Whether instances of `kind` dispatch: it has a `__torch_function__` that is not the
    disabled one, and is not Tensor itself (torch's check_has_torch_function)."""
    if kind is Tensor:
        return False
    method = getattr(kind, "__torch_function__", disabled_torch_function_impl)
    return method is not disabled_torch_function_impl


# Argument types that never override the protocol, passed over without a lookup.
_PLAIN = frozenset((int, float, bool, complex, str, type(None), slice, type(Ellipsis), range,
                    dtypes.DType, Size, _device_type, np.ndarray, Tensor))


def insert_overloaded(found, value):
    """`found` with `value` added, one per type, a subclass before its bases (torch's
    order)."""
    kind = value.__class__
    if found is None:
        return [value]
    position = len(found)
    for index, other in enumerate(found):
        other_kind = other.__class__
        if other_kind is kind:
            return found
        if position == len(found) and issubclass(kind, other_kind):
            position = index
    found.insert(position, value)
    return found


def overloaded_arguments(values, found=None, nested=True):
    """The values (and, with `nested`, the items of list and tuple values, as torch's parser
    sees a list of tensors) whose types override the protocol, in torch's order, or None."""
    for value in values:
        kind = value.__class__
        if kind in _PLAIN:
            continue
        if kind is list or kind is tuple:
            if nested:
                found = overloaded_arguments(value, found, False)
        elif overrides(kind) or torch_dispatch.ACTIVE and torch_dispatch.dispatches(kind):
            found = insert_overloaded(found, value)
    return found


def call_handlers(public, overloaded, args, kwargs, name):
    """The first result other than NotImplemented of the overloaded arguments' handlers, called
    in order, or NotImplemented when all decline."""
    if state.tracer is not None:
        # A compiled function's trace would run the handler once, at trace time.
        from .graph_break import graph_break

        graph_break(f"{name} on a Tensor subclass with __torch_function__")
    kinds = tuple(value.__class__ for value in overloaded)
    kwargs = {} if kwargs is None else kwargs
    for value in overloaded:
        result = value.__torch_function__(public, kinds, args, kwargs)
        if result is not NotImplemented:
            return result
    return NotImplemented


def handle(public, overloaded, args, kwargs, name, python=False):
    """Call the handlers of the overloaded arguments in order until one does not return
    NotImplemented, as torch's handle_torch_function; `name` is torch's name of `public` for
    the error, worded as torch's C++ dispatch words it, or, with `python`, as its Python one."""
    result = call_handlers(public, overloaded, args, kwargs, name)
    if result is not NotImplemented:
        return result
    kinds = [value.__class__ for value in overloaded]
    if python:
        raise TypeError(f"no implementation found for '{name}' on types that implement "
                        f"__torch_function__: {kinds}")
    listed = "".join(f"  - tensor subclass {kind!r}\n" for kind in kinds)
    raise TypeError(f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers "
                    f"returned NotImplemented:\n\n{listed}\nFor more information, try "
                    f"re-running with TORCH_LOGS=not_implemented")


# ---- modes --------------------------------------------------------------------------------

class TorchFunctionMode:
    """A handler for every public call made within it, plain tensors' too (torch's
    torch.overrides.TorchFunctionMode): subclass it, define `__torch_function__(self, func,
    types, args=(), kwargs=None)` and enter it with `with`. The innermost mode runs first,
    outside the stack while it runs, before any subclass's handler."""

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        push_mode(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        pop_mode()


def push_mode(mode) -> None:
    global MODES, _NEEDED
    _NEEDED = True
    activate()
    state.function_modes = (*state.function_modes, mode)
    MODES += 1


def pop_mode():
    global MODES
    modes = state.function_modes
    if not modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    state.function_modes = modes[:-1]
    MODES -= 1
    return modes[-1]


def current_modes() -> tuple:
    return state.function_modes


# ---- Tensor's default handler ---------------------------------------------------------------

def get_default_nowrap_functions() -> set:
    """The functions whose results Tensor's default handler returns unconverted (a tensor's
    .grad stays what it is)."""
    return {Tensor.grad.__get__}


def _convert(result, cls):
    if cls is Tensor:
        return result
    if isinstance(result, Tensor) and not isinstance(result, cls):
        result = result.as_subclass(cls)
    if isinstance(result, (tuple, list)):
        items = (_convert(item, cls) for item in result)
        result = result._make(items) if hasattr(result, "_fields") else type(result)(items)
    return result


def _default_torch_function(cls, func, types, args=(), kwargs=None):
    """Run `func` with subclasses' handlers off and return its Tensor results as instances of
    `cls` (torch's Tensor.__torch_function__); NotImplemented when another argument's type is
    not a base of `cls`."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, kind) for kind in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        result = func(*args, **kwargs)
        if func in get_default_nowrap_functions():
            return result
        return _convert(result, cls)


Tensor.__torch_function__ = classmethod(_default_torch_function)


def _make_subclass(cls, data, require_grad=False, *args, **kwargs):
    """`data` as an instance of `cls`, a Tensor subclass: the same storage and version counter,
    no autograd history, requires_grad as given (torch's Tensor._make_subclass, which
    subclasses' constructors call)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    arm(cls)
    made = object.__new__(cls)
    made._init(data._payload, data._dtype, data._value, data._version_counter)
    if require_grad:
        made.requires_grad_(True)
    return made


Tensor._make_subclass = staticmethod(_make_subclass)


# ---- switching it on ------------------------------------------------------------------------

# (namespace, prefix of torch's name for its functions, whether torch dispatches them from
# Python, names left alone) for each namespace registered; Tensor's methods are wrapped too.
_NAMESPACES: list = []
_WRAPPED = "__torch_function_wrapped__"
# id of a namespace function -> (the function, its dispatching wrapper, the public name):
# autojit's own modules that imported it by that name call the wrapper too once the protocol
# is in use, as torch's Python code calls torch's public functions (`_sweep`).
_ORIGINALS: dict = {}
# The packages whose counterparts in torch are Python code calling torch's public functions
# (an optimizer's zeros_like): their calls of the functions a namespace function wraps are
# dispatched too; the op layers' own calls stay below the protocol, as torch's C++ does.
_PYTHON_LEVEL = ("autojit.optim.", "autojit.nn.", "autojit.distributed.",
                 "autojit.distributions.", "autojit.utils.")
# id of a function a namespace function wraps -> (it, the namespace's wrapper, torch's name,
# whether torch dispatches it from Python), for `_sweep`.
_INNERS: dict = {}
# Binary operators: where every handler declines, the operator returns NotImplemented, so that
# Python raises its own TypeError (torch turns the dispatch's TypeError into NotImplemented).
_OPERATORS = frozenset(f"__{op}__" for base in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift", "div") for op in (base, "r" + base)) | frozenset(
    ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"))
# Tensor's attributes torch does not dispatch (or that autojit's own machinery reads).
_TENSOR_LEFT_ALONE = frozenset((
    "__new__", "__init__", "__init_subclass__", "__torch_function__", "__hash__", "__class__",
    "__slots__", "__dict__", "__weakref__", "__module__", "__doc__", "__array_priority__",
    "__getattribute__", "__setattr__", "__delattr__", "__subclasshook__", "__reduce__",
    "__sizeof__", "as_subclass", "_make_subclass", "grad_fn", "__array_ufunc__",
    "__array_function__", "__str__"))
# The name a handler sees as `func.__name__` for Tensor's operators where it is neither the
# op's (`x + y` is `add`) nor the attribute's: torch's Python-level operators and the C++ ones
# its parser names otherwise.
_TORCH_NAMES = {
    "__rtruediv__": "__rdiv__", "__rdiv__": "__rdiv__", "__iadd__": "add_", "__isub__": "sub_",
    "__imul__": "mul_", "__itruediv__": "div_", "__ipow__": "pow_", "__neg__": "neg",
    "__pos__": "positive", "__abs__": "abs", **{name: name for name in (
        "__rsub__", "__floordiv__", "__rfloordiv__", "__rmod__", "__rpow__", "__rmatmul__",
        "__eq__", "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__rlshift__",
        "__rrshift__")}}
# The operators whose handlers torch gives the method itself as `func` (its C++ operators call
# the method's function: `x + y` hands over Tensor.add, `x /= y` Tensor.div_), which libraries
# key their handler tables on (linear_operator's `{torch.Tensor.matmul: ...}`).
_METHOD_OF_OPERATOR = {
    "__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul", "__rmul__": "mul",
    "__matmul__": "matmul", "__truediv__": "div", "__div__": "div", "__mod__": "remainder",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
    "__ge__": "ge", "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_",
    "__itruediv__": "div_", "__rtruediv__": "__rdiv__"}
# Python-level methods of torch's Tensor: their failures are worded as Python dispatch's.
_TENSOR_PYTHON = frozenset(("__len__", "__iter__", "__repr__", "__format__", "__reversed__",
                            "__array__", "__contains__", "__deepcopy__", "__reduce_ex__",
                            "__setstate__", "backward", "register_hook", "split", "unique",
                            "norm", "stft", "istft", "lu", "__dir__"))


def expose(namespace, prefix: str, python: bool = False, left_alone=frozenset()) -> None:
    """Register a module of public functions (the top level, linalg, nn.functional, ...) whose
    functions dispatch once the protocol is in use; `prefix` makes torch's name of each."""
    _NAMESPACES.append((namespace, prefix, python, frozenset(left_alone)))
    _home_functions(namespace)
    _home_functions(Tensor, "Tensor.")  # with the methods the namespace's module put there
    if ACTIVE:
        _wrap_namespace(namespace, prefix, python, left_alone)
        _wrap_tensor()  # methods the namespace's module put on Tensor
        _sweep()


def _home_functions(namespace, qualifier: str = "") -> None:
    """Point each public function of `namespace` (a module, or Tensor with `qualifier`
    "Tensor.") that pickle could not find by its `__module__` and `__qualname__` (one a
    factory made, or a keyword form wrapping a function of another name) at the namespace,
    so that `pickle.dumps(torch.sigmoid)`, `pickle.dumps(torch.Tensor.add)` and a saved
    module holding `self.act = torch.tanh` store it by name, as torch's builtins are."""
    module_name = namespace.__module__ if qualifier else namespace.__name__
    for name, value in list(vars(namespace).items()):
        if value.__class__ is not types.FunctionType or \
                name.startswith("_") and not (qualifier and name.startswith("__")):
            continue
        if _found_by_name(value) or (getattr(value, "__module__", None) or "") not in sys.modules:
            continue  # found; or its module is not loaded yet (a later expose looks again)
        value.__module__ = module_name
        value.__qualname__ = qualifier + name


def _found_by_name(value) -> bool:
    """Whether pickle finds `value` by its `__module__` and `__qualname__`."""
    found = sys.modules.get(getattr(value, "__module__", None) or "")
    for part in (getattr(value, "__qualname__", None) or "<lambda>").split("."):
        # vars(), not getattr: a module's lazy __getattr__ would import what it names
        found = vars(found).get(part) if found is not None else None
    return found is value


def late(value, name: str, prefix: str, python: bool = False):
    """A function a namespace loads on first use (a module's __getattr__): wrapped when the
    protocol is already in use."""
    if not ACTIVE:
        return value
    if isinstance(value, types.ModuleType):
        _sweep()  # a package loaded now: its modules' references to the functions
        return value
    if not isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        return value
    return _function_wrapper(value, prefix + name, python, False)


def arm(kind: type, wrapper: bool = False) -> None:
    """Called where an instance of a Tensor subclass is made (`wrapper`: by
    _make_wrapper_subclass): the first whose type overrides the protocol switches it on."""
    global _NEEDED
    dispatching = torch_dispatch.dispatches(kind)
    if not _NEEDED and (dispatching or overrides(kind)):
        _NEEDED = True
        activate()
    if dispatching and not wrapper:
        torch_dispatch.warn_not_wrapped(kind)


Tensor._arm_subclass = staticmethod(arm)  # Tensor.__new__ of a subclass (tensor.py)


# (owner, name, the value before, the wrapper) of each attribute replaced, for `deactivate`.
_INSTALLED: list = []


def _install(owner, name: str, before, wrapper) -> None:
    _INSTALLED.append((owner, name, before, wrapper))
    setattr(owner, name, wrapper)


def start_profiling() -> None:
    """A profiler starts: every public function, method and operator call is an event named
    as torch's profiler names it (`aten::linear`, `aten::mul`), with the primitives it runs
    (`autojit::mul`) inside. The wrappers are switched on for it if nothing had yet."""
    global PROFILERS, MODES, _FOR_PROFILERS
    if not ACTIVE:
        activate()
        _FOR_PROFILERS = True
    PROFILERS += 1
    MODES += 1


def stop_profiling() -> None:
    """A profiler stops: the wrappers switched on for profilers alone are taken off with the
    last one, so that the calls after it pay nothing."""
    global PROFILERS, MODES, _FOR_PROFILERS
    PROFILERS -= 1
    MODES -= 1
    if PROFILERS == 0 and _FOR_PROFILERS:
        _FOR_PROFILERS = False
        if not _NEEDED:
            deactivate()


# Calls torch's profiler shows no event for: metadata and Python's protocols.
_NOT_PROFILED = frozenset((
    "size", "dim", "ndimension", "numel", "nelement", "stride", "storage_offset",
    "is_contiguous", "data_ptr", "element_size", "get_device", "is_floating_point",
    "is_complex", "is_signed", "type", "tolist", "untyped_storage", "storage", "requires_grad_",
    "retain_grad", "register_hook", "backward", "dim_order"))
# The events of Tensor's operators whose method is not named in _METHOD_OF_OPERATOR.
_OPERATOR_EVENTS = {
    "__rsub__": "rsub", "__pow__": "pow", "__rpow__": "pow", "__rmatmul__": "matmul",
    "__floordiv__": "floor_divide", "__rfloordiv__": "floor_divide", "__rmod__": "remainder",
    "__and__": "bitwise_and", "__or__": "bitwise_or", "__xor__": "bitwise_xor",
    "__invert__": "bitwise_not", "__getitem__": "index", "__setitem__": "index_put_"}


def _event_name(name: str) -> str | None:
    """The profiler event of the public call `name` (torch's name of it), or None for none."""
    short = name.rsplit(".", 1)[1]
    short = _METHOD_OF_OPERATOR.get(short) or _OPERATOR_EVENTS.get(short) or short
    if short in _NOT_PROFILED or (short.startswith("__") and short.endswith("__")):
        return None
    return "aten::" + short


def deactivate() -> None:
    """Put every replaced attribute back, as before the first subclass instance (the tests use
    it to keep one test's subclass from changing the next's warnings' frames); torch has no
    counterpart, its check being free."""
    global ACTIVE, _NEEDED, _FOR_PROFILERS
    _NEEDED = _FOR_PROFILERS = False
    while _INSTALLED:
        owner, name, before, wrapper = _INSTALLED.pop()
        if vars(owner).get(name) is wrapper:
            setattr(owner, name, before)
    _ORIGINALS.clear()
    _INNERS.clear()
    ACTIVE = False


def activate() -> None:
    global ACTIVE
    if ACTIVE:
        return
    ACTIVE = True
    _wrap_tensor()
    # The top level first: a function it shares with linalg or special keeps its top-level
    # name where other modules call it.
    for namespace, prefix, python, left_alone in sorted(
            _NAMESPACES, key=lambda entry: entry[1] != "torch."):
        _wrap_namespace(namespace, prefix, python, left_alone)
    _sweep()


def _dispatch(public, impl, found, args, kwargs, name, python=False, operator=False,
              plain_kinds=False):
    """A call that found overloaded arguments, or any call while a TorchFunctionMode is on:
    the innermost mode's handler first, then the arguments' handlers, unless switched off."""
    if kwargs is None:
        kwargs = {}
    if torch_dispatch.ACTIVE and found is not None:
        # __torch_dispatch__ subclasses among the arguments: below the __torch_function__
        # handlers, the call runs as the aten operators torch dispatches it to
        below = torch_dispatch.dispatching_arguments(args)
        below = torch_dispatch.dispatching_arguments(kwargs.values(), below)
        if below is not None:
            impl = functools.partial(torch_dispatch.TO_ATEN, name, impl)
            found = [value for value in found if overrides(value.__class__)] or None
    level = state.torch_function
    if level == ALL_DISABLED:
        return impl(*args, **kwargs)
    if MODES:
        modes = state.function_modes
        if modes:
            result = _call_mode(modes, public, found, args, kwargs, name,
                                python or plain_kinds)
            if result is not NotImplemented:
                return result
            if found is None:
                raise TypeError(f"Multiple dispatch failed for '{name}'; all "
                                f"__torch_function__ handlers returned NotImplemented:\n\n"
                                f"  - mode object {modes[-1]!r}\n\nFor more information, "
                                f"try re-running with TORCH_LOGS=not_implemented")
    if found is None or level:
        return impl(*args, **kwargs)
    if operator:
        return call_handlers(public, found, args, kwargs, name)
    return handle(public, found, args, kwargs, name, python)


def _call_mode(modes, public, found, args, kwargs, name, plain_kinds=False):
    """The innermost mode's handler, with the mode off the stack while it runs (its own calls
    reach the modes below it), as torch runs a mode. `plain_kinds`: Tensor itself among the
    types where a plain tensor is an argument, as torch's Python dispatch and its property
    getters give them."""
    if state.tracer is not None:
        from .graph_break import graph_break

        graph_break(f"{name} under a TorchFunctionMode")
    state.function_modes = modes[:-1]
    try:
        if plain_kinds:
            found = None
            for value in (*args, *kwargs.values()):
                if isinstance(value, Tensor):
                    found = insert_overloaded(found, value)
        kinds = tuple(value.__class__ for value in found or ())
        return modes[-1].__torch_function__(public, kinds, args, kwargs)
    finally:
        state.function_modes = modes


def _function_wrapper(impl, name: str, python: bool, operator: bool):
    public = []  # the function handlers are given, where it is not this one (_wrap_tensor)

    event = _event_name(name)

    def dispatching(*args, **kwargs):
        found = overloaded_arguments(args)
        if kwargs:
            found = overloaded_arguments(kwargs.values(), found)
        if found is None and not MODES:
            return impl(*args, **kwargs)
        chosen = dispatching
        if public and (len(public) == 1 or args[0].__class__ is Tensor):
            chosen = public[0]
        if PROFILERS and event is not None:
            profiler = state.profiler
            if profiler is not None:
                return profiler.forward_event(event, args, lambda: _dispatch(
                    chosen, impl, found, args, kwargs, name, python, operator))
        return _dispatch(chosen, impl, found, args, kwargs, name, python, operator)

    dispatching._public = public

    functools.update_wrapper(dispatching, impl)
    # torch's name (linalg_norm, special_expit, __rdiv__); an operator keeps its op's (add)
    if not operator or name.rsplit(".", 1)[1] in _TORCH_NAMES.values():
        dispatching.__name__ = name.rsplit(".", 1)[1]
    setattr(dispatching, _WRAPPED, impl)
    dispatching.__torch_function_name__ = name
    return dispatching


def _property_wrapper(prop: property, name: str) -> property:
    getter, setter = prop.fget, prop.fset
    wrapped = None

    def get(self):
        kind = self.__class__
        plain = kind is Tensor or not overrides(kind)
        if plain and not MODES:
            if kind is not Tensor and torch_dispatch.ACTIVE and torch_dispatch.dispatches(kind):
                return torch_dispatch.TO_ATEN(f"torch.Tensor.{name}.__get__", getter, self)
            return getter(self)
        return _dispatch(wrapped.__get__, getter, None if plain else [self], (self,), None,
                         f"torch.Tensor.{name}.__get__", plain_kinds=True)

    def set_(self, value):
        found = overloaded_arguments((self, value))
        if found is None and not MODES:
            return setter(self, value)
        return _dispatch(wrapped.__set__, setter, found, (self, value), None,
                         f"torch.Tensor.{name}.__set__")

    wrapped = property(get, None if setter is None else set_, prop.fdel, prop.__doc__)
    get.__name__ = set_.__name__ = name
    return wrapped


def _wrap_tensor() -> None:
    for name, value in list(vars(Tensor).items()):
        if name in _TENSOR_LEFT_ALONE or (name.startswith("_") and not name.endswith("__")):
            continue
        if isinstance(value, property):
            if getattr(value.fget, _WRAPPED, None) is None:
                wrapped = _property_wrapper(value, name)
                setattr(wrapped.fget, _WRAPPED, value)
                _install(Tensor, name, value, wrapped)
        elif isinstance(value, types.FunctionType) and getattr(value, _WRAPPED, None) is None:
            _install(Tensor, name, value, _function_wrapper(
                value, f"torch.Tensor.{_TORCH_NAMES.get(name, name)}", name in _TENSOR_PYTHON,
                name in _OPERATORS))
    for operator, method in _METHOD_OF_OPERATOR.items():
        wrapper, target = vars(Tensor).get(operator), vars(Tensor).get(method)
        if getattr(wrapper, "_public", None) is not None and target is not None:
            # [target, "plain"]: given only where self is a plain Tensor (the other operand
            # overrides), as torch's Python-level __eq__ gives itself to a subclass.
            wrapper._public[:] = [target] if operator != "__eq__" else [target, "plain"]


def wrapped_function(value):
    """The function a dispatching wrapper of this module wraps (what its namespace held before
    the wrappers were put on, and holds again once they are taken off), else None: a guard
    on a global function accepts either (compiler/guard_conditions.py)."""
    if value.__class__ is types.FunctionType:
        return getattr(value, _WRAPPED, None)
    return None


def _autojits(function) -> bool:
    module = getattr(function, "__module__", None) or ""
    return module == "autojit" or module.startswith("autojit.")


def _wrap_namespace(namespace, prefix: str, python: bool, left_alone) -> None:
    names = getattr(namespace, "__all__", None) or [name for name in vars(namespace)
                                                     if not name.startswith("_")]
    for name in names:
        value = vars(namespace).get(name)
        if name in left_alone:
            continue
        inner = getattr(value, _WRAPPED, None)
        if inner is not None:
            if value.__torch_function_name__ == prefix + name:
                continue  # wrapped already
            value = inner  # another namespace's wrapper, which this module imported
        if value.__class__ is types.FunctionType and not _autojits(value):
            # A library's own function put in the namespace in place of autojit's
            # (torch_geometric's `torch.index_select`): torch never wraps those, and the
            # function handles its arguments itself.
            continue
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
            wrapper = _function_wrapper(value, prefix + name, python, False)
            _install(namespace, name, vars(namespace)[name], wrapper)
            # Only the very object: a function it wraps may differ (a primitive taking numbers
            # where torch's public form refuses them).
            _ORIGINALS.setdefault(id(value), (value, wrapper, name))
            # The function a keyword form wraps, of the same name, which autojit's modules
            # import from where it is defined (optim's `zeros_like(param)`): reached through a
            # dispatching wrapper of its own that hands handlers the public function.
            wrapped = getattr(value, "__wrapped__", None)
            while wrapped.__class__ is types.FunctionType and wrapped.__name__ == name:
                _INNERS.setdefault(id(wrapped), (wrapped, wrapper, prefix + name, python))
                wrapped = getattr(wrapped, "__wrapped__", None)


def _sweep() -> None:
    """Point autojit's modules' global names for the namespaces' functions at their wrappers
    (`from ..ops.linalg_namespace import solve` made a name the wrapping does not reach)."""
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "autojit" or module_name.startswith("autojit.")):
            continue
        names = vars(module)
        for name, value in list(names.items()):
            if value.__class__ is type and value.__module__ == module_name:
                _sweep_class(value)
            elif value.__class__ is types.FunctionType:
                found = _ORIGINALS.get(id(value))
                if found is not None and found[0] is value and found[2] == name:
                    _install(module, name, value, found[1])
                    continue
                inner = _INNERS.get(id(value)) if module_name.startswith(_PYTHON_LEVEL) \
                    else None
                if inner is not None and inner[0] is value and value.__name__ == name:
                    own = _function_wrapper(value, inner[2], inner[3], False)
                    own._public.append(inner[1])
                    _install(module, name, value, own)


def _sweep_class(kind: type) -> None:
    """Point a class's staticmethods holding a namespace function (nn.Conv3d's `_function`,
    conv3d) at the function's wrapper: a Proxy or subclass handed to a layer that a subclass
    of it traces into (torchvision's Conv3DSimple under torch.fx) reaches its handler."""
    for name, value in list(vars(kind).items()):
        if value.__class__ is staticmethod:
            found = _ORIGINALS.get(id(value.__func__))
            if found is not None and found[0] is value.__func__:
                _install(kind, name, value, staticmethod(found[1]))


__all__ = ["ACTIVE", "MODES", "DisableTorchFunction", "DisableTorchFunctionSubclass",
           "TorchFunctionMode", "activate", "arm", "current_modes", "pop_mode", "push_mode",
           "call_handlers", "disabled_torch_function_impl", "expose",
           "get_default_nowrap_functions", "handle", "insert_overloaded",
           "is_torch_function_enabled", "late", "overloaded_arguments", "overrides",
           "start_profiling", "stop_profiling"]
