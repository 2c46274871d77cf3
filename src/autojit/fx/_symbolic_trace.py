"""autojit.fx._symbolic_trace: torch.fx's symbolic tracer. `symbolic_trace(module)` runs the
module's forward on Proxies (proxy.py) and returns a GraphModule of what it did.

While a trace runs, autojit.nn.Module's `__call__` and `__getattr__` are patched (and put back
after): a call of a leaf module (autojit.nn's own modules other than Sequential, as torch's rule
on torch.nn; `is_leaf_module` decides) records one `call_module` node, any other module is
traced through; reading a parameter records a `get_attr` node. Functions registered with
`wrap()` and the functions of the `autowrap_modules` (math) are patched in the globals that
name them, so that their calls on Proxies become `call_function` nodes instead of being traced
through. `concrete_args` fixes arguments to values (with a check in the graph that they keep
them).
"""

from __future__ import annotations

import builtins
import collections
import functools
import inspect
import math
import warnings
from itertools import chain
from types import FunctionType, ModuleType
from typing import Any, NamedTuple

from ..nn import Module, Parameter, Sequential
from ..tensor import torch_function
from ..tensor.tensor import Tensor
from ._compatibility import compatibility  # noqa: F401 - torch's module has it (libraries' tracers)
from .graph import Graph
from .graph_module import GraphModule
from .node import Argument, base_types, has_side_effect, map_aggregate
from .proxy import ParameterProxy, Proxy, Scope, ScopeContextManager, TracerBase

__all__ = ["PH", "PHBase", "PHWithMeta", "ProxyableClassMeta", "Tracer", "is_fx_tracing",
           "is_fx_symbolic_tracing", "symbolic_trace", "wrap"]

HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

_is_fx_tracing_flag = False


def is_fx_tracing() -> bool:
    """Whether a symbolic trace is running."""
    return _is_fx_tracing_flag


def is_fx_symbolic_tracing() -> bool:
    """Whether a symbolic trace is running (autojit.compile's tracing is not one)."""
    return _is_fx_tracing_flag


@has_side_effect
def _assert(condition, message: str):
    """torch._assert: `assert condition, message`, as a function a graph can call; given a
    Proxy (a GraphModule's own code traced again, or unpickled) it records itself instead, as
    torch's dispatches to __torch_function__."""
    if isinstance(condition, Proxy):
        return condition.tracer.create_proxy("call_function", _assert, (condition, message), {})
    assert condition, message
    return None


@has_side_effect
def _assert_is_none(value, msg: str):
    if isinstance(value, Proxy):
        return value.tracer.create_proxy("call_function", _assert_is_none, (value, msg), {})
    assert value is None, msg
    return None


class ProxyableClassMeta(type):
    """A metaclass whose classes' construction from Proxies is recorded as a call_function
    node, instead of running the constructor on them."""

    def __call__(cls, *args, **kwargs):
        found = _find_proxy(args, kwargs)
        if found is not None:
            return found.tracer.create_proxy("call_function", cls, args, kwargs)
        instance = cls.__new__(cls)
        cls.__init__(instance, *args, **kwargs)
        return instance


def _patch_function(fn: FunctionType, nargs: int) -> FunctionType:
    """`fn` with its *args and **kwargs made plain parameters, so that the tracer can pass one
    Proxy for each."""
    co = fn.__code__
    code = co.replace(co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0,
                      co_flags=co.co_flags & ~HAS_VARSTUFF)
    return FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


class PHBase:
    """The marker of a concrete argument that stays an input (a placeholder)."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


class PHWithMeta(PHBase):
    """A placeholder marker whose attributes are copied onto its placeholder node."""

    def __init__(self, ph_key: str | None = None) -> None:
        super().__init__()
        self.ph_key = ph_key


def _transfer_attrs(fr, to) -> None:
    for name in dir(fr):
        if not name.startswith("__"):
            setattr(to, name, getattr(fr, name))


class ScriptObject:
    """torch._C.ScriptObject's name, which tracers test values against: a TorchScript object,
    of which autojit (without TorchScript) makes none."""


_orig_module_call = Module.__call__
_orig_module_getattr = Module.__getattr__


class Tracer(TracerBase):
    """torch.fx.Tracer: `trace(root, concrete_args)` returns the Graph of root's forward (or of
    a function). Override is_leaf_module, call_module, create_arg or getattr to change what is
    recorded."""

    _qualname_counter: dict[str, int] = collections.defaultdict(int)

    def __init__(self, autowrap_modules: tuple[ModuleType, ...] = (math,),
                 autowrap_functions: tuple = (), param_shapes_constant: bool = False) -> None:
        super().__init__()
        # Calls of autojit's functions on Proxies reach Proxy.__torch_function__ once the
        # protocol is on: a subclass's own trace (torch_geometric's) may not call trace's arm.
        torch_function.arm(Proxy)
        # Functions wrapped wherever a traced scope names them (math.sqrt, `from math import`).
        self._autowrap_function_ids: set[int] = {
            id(value) for name, value in chain.from_iterable(
                m.__dict__.items() for m in autowrap_modules)
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search: list[ModuleType] = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict[Module, str] | None = None
        self.root_module_name = ""
        self.scope = Scope("", None)
        self.module_stack: collections.OrderedDict = collections.OrderedDict()
        self.num_calls: dict[str, int] = {}
        self.node_name_to_scope: dict[str, tuple[str, type]] = {}

    def get_fresh_qualname(self, prefix: str) -> str:
        """An attribute name `prefix<i>` the root does not have yet."""
        index = self._qualname_counter[prefix]
        while hasattr(self.root, f"{prefix}{index}"):
            index += 1
        self._qualname_counter[prefix] = index + 1
        return f"{prefix}{index}"

    def create_arg(self, a: Any) -> Argument:
        """As TracerBase's, and a parameter, buffer or submodule of the root becomes a get_attr
        node; any other tensor is stored on the root (`_tensor_constant0`) and read back."""
        if isinstance(a, Parameter):
            for name, parameter in self.root.named_parameters():
                if a is parameter:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for name, buffer in self.root.named_buffers():
                if a is buffer:
                    return self.create_node("get_attr", name, (), {})
        elif isinstance(a, Module):
            for name, module in self.root.named_modules():
                if a is module:
                    return self.create_node("get_attr", name, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            items = tuple(self.create_arg(item) for item in a)
            return self.create_node("call_function", a.__class__, items, {})
        if isinstance(a, Tensor):
            qualname = self.tensor_attrs.get(a)
            if not qualname:
                qualname = self.get_fresh_qualname("_tensor_constant")
                self.tensor_attrs[a] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """Whether a call of `m` is one call_module node (autojit.nn's modules but Sequential)
        rather than traced through."""
        module = type(m).__module__
        return (module.startswith(("autojit.nn.", "torch.nn.", "torch.ao.nn."))
                and not isinstance(m, Sequential))

    def path_of_module(self, mod: Module) -> str:
        """The dotted path of `mod` in the root."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for name, module in self.root.named_modules():
            if module is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: Module, forward, args: tuple, kwargs: dict) -> Any:
        """A call of module `m`: a call_module node for a leaf, else its forward traced."""
        path = self.path_of_module(m)
        with ScopeContextManager(self.scope, Scope(path, type(m))) as scope:
            calls = self.num_calls.get(path, 0)
            key = f"{scope.module_path}@{calls}" if calls > 0 else scope.module_path
            self.module_stack[key] = (path, scope.module_type)
            self.num_calls[path] = calls + 1
            if not self.is_leaf_module(m, path):
                result = forward(*args, **kwargs)
            else:
                result = self.create_proxy("call_module", path, args, kwargs)
            self.module_stack.popitem(last=True)
        return result

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
        """A module attribute read while tracing: a parameter (or, with
        proxy_buffer_attributes, a buffer) of the root as a get_attr Proxy, else the value."""

        def proxy_for(collection):
            for name, value in collection:
                if attr_val is value:
                    if name not in parameter_proxy_cache:
                        factory = None
                        if self.param_shapes_constant:
                            def factory(node, name=name):
                                return ParameterProxy(self, node, name, attr_val)
                        # As torch's: a subclass's create_proxy may not take the factory
                        # (torchvision's feature extraction tracer).
                        keywords = {"proxy_factory_fn": factory} if "proxy_factory_fn" in \
                            inspect.signature(self.create_proxy).parameters else {}
                        parameter_proxy_cache[name] = self.create_proxy(
                            "get_attr", name, (), {}, **keywords)
                    return parameter_proxy_cache[name]
            return None

        if isinstance(attr_val, Parameter):
            found = proxy_for(self.root.named_parameters())
            if found is not None:
                return found
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            found = proxy_for(self.root.named_buffers())
            if found is not None:
                return found
        return attr_val

    def create_args_for_root(self, root_fn, is_module: bool, concrete_args=None):
        """The placeholders (or concrete values) for the traced function's parameters, and the
        function to call with them."""
        fn_for_analysis = inspect.unwrap(root_fn)
        co = fn_for_analysis.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        names_iter = iter(co.co_varnames)
        args: list[Any] = []
        skip = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            next(names_iter)
            args.append(self.root)
        sig = inspect.signature(fn_for_analysis)
        if (isinstance(concrete_args, tuple) and concrete_args and co.co_flags & HAS_VARSTUFF
                and total_args == 1):
            for index, concrete in enumerate(concrete_args):
                out = self.create_proxy("placeholder", f"input_{index}", (), {})
                if isinstance(concrete, PHBase) and concrete is not PH:
                    _transfer_attrs(concrete, out.node)
                args.append(out)
            return root_fn, args
        arg_names = [next(names_iter) for _ in range(skip, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args, strict=True))
        args.extend(self._proxy_placeholder(name, concrete_args, sig, fn_for_analysis)
                    for name in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder("*" + next(names_iter), concrete_args,
                                                    sig, fn_for_analysis))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder("**" + next(names_iter), concrete_args,
                                                    sig, fn_for_analysis))
            root_fn = _patch_function(root_fn, len(args))
        return root_fn, args

    def _proxy_placeholder(self, name: str, concrete_args, sig, fn_for_analysis):
        if concrete_args is not None and name in concrete_args:
            value = concrete_args[name]
            if isinstance(value, (list, tuple, dict)) and _find_ph(value):
                raise NotImplementedError(
                    f"concrete_args[{name!r}] holds placeholders inside a container: autojit's "
                    "fx traces concrete arguments that are single values or PH only")
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
            out = self.create_proxy("placeholder", f"{name}_1", default, {})
            if isinstance(value, PHBase):
                if value is not PH:
                    _transfer_attrs(value, out.node)
                return out
            if type(value) is bool or type(value) in base_types and type(value) is not Tensor:
                self.create_proxy("call_function", _assert, (
                    out == value,
                    f"{name} has been specialized to have value {value} but got another value"),
                    {})
            elif value is None:
                self.create_proxy("call_function", _assert_is_none, (
                    out, f"{name} has been specialized to have value None but got another "
                    "value"), {})
            else:
                warnings.warn(f"Was not able to add assertion to guarantee correct input {name} "
                              "to specialized function. It is up to the user to make sure that "
                              "your inputs match the inputs you specialized the function with.",
                              stacklevel=4)
            return value
        if name[0] == "*":
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=fn_for_analysis.__annotations__.get(name, None))

    def trace(self, root, concrete_args: dict[str, Any] | tuple | None = None) -> Graph:
        """The Graph of `root` (a Module's forward, or a function) run on Proxies."""
        global _is_fx_tracing_flag
        saved_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        # Calls of autojit's functions on Proxies reach Proxy.__torch_function__ only once the
        # protocol's wrappers are installed.
        torch_function.arm(Proxy)
        try:
            if isinstance(root, Module):
                self.root = root
                if not hasattr(type(root), self.traced_func_name):
                    raise AssertionError(f"traced_func_name={self.traced_func_name} doesn't "
                                         f"exist in {type(root).__name__}")
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = root._get_name()
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = Module()
                fn = root
            self.graph = Graph(tracer_cls=getattr(self, "__class__", None))
            if hasattr(fn, "__code__"):
                code = fn.__code__
                self.graph._co_fields = {"co_name": code.co_name,
                                         "co_filename": code.co_filename,
                                         "co_firstlineno": code.co_firstlineno}
            self.tensor_attrs: dict[Tensor, str] = {}
            self._collect_tensor_attrs(self.root, [])
            if not isinstance(fn, FunctionType):
                raise AssertionError(f"Expected FunctionType, got {type(fn)}")
            fn_globals = fn.__globals__  # before it is patched
            fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
            parameter_proxy_cache: dict[str, Proxy] = {}

            @functools.wraps(_orig_module_getattr)
            def module_getattr_wrapper(mod, attr):
                return self.getattr(attr, _orig_module_getattr(mod, attr),
                                    parameter_proxy_cache)

            @functools.wraps(_orig_module_call)
            def module_call_wrapper(mod, *args, **kwargs):
                def forward(*args, **kwargs):
                    return _orig_module_call(mod, *args, **kwargs)

                _autowrap_check(patcher, getattr(getattr(mod, "forward", mod), "__globals__",
                                                 {}), self._autowrap_function_ids)
                return self.call_module(mod, forward, args, kwargs)

            with _Patcher() as patcher:
                patcher.patch_method(Module, "__getattr__", module_getattr_wrapper,
                                     deduplicate=False)
                patcher.patch_method(Module, "__call__", module_call_wrapper, deduplicate=False)
                _patch_wrapped_functions(patcher)
                _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_search:
                    _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                annotations = getattr(inspect.unwrap(fn), "__annotations__", {})
                self.create_node("output", "output", (self.create_arg(fn(*args)),), {},
                                 type_expr=annotations.get("return", None))
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag = saved_flag
        return self.graph

    def _collect_tensor_attrs(self, module: Module, prefix: list[str]) -> None:
        # Tensors held as plain attributes are read back by path, not copied as constants.
        for key, value in module.__dict__.items():
            if isinstance(value, Tensor):
                self.tensor_attrs[value] = ".".join([*prefix, key])
        for key, child in module.named_children():
            self._collect_tensor_attrs(child, [*prefix, key])


def _find_ph(value) -> bool:
    found = []
    map_aggregate(value, lambda x: found.append(x) if isinstance(x, PHBase) else None)
    return bool(found)


def _find_proxy(*objects):
    """A Proxy among the (nested) objects, or None."""
    found = []
    map_aggregate(objects, lambda x: found.append(x) if isinstance(x, Proxy) else None)
    return found[-1] if found else None


def _create_wrapped_func(orig_fn):
    """`orig_fn` recording a call_function node (marked `is_wrapped`) when given a Proxy, and
    running as itself otherwise."""

    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            result = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            result.node.meta["is_wrapped"] = True
            return result
        return orig_fn(*args, **kwargs)

    return wrapped


class _PatchedFn(NamedTuple):
    frame_dict: Any
    fn_name: str
    orig_fn: Any
    new_fn: Any

    def revert(self) -> None:
        if isinstance(self.frame_dict, dict):
            if self.orig_fn is _MISSING:
                del self.frame_dict[self.fn_name]
            else:
                self.frame_dict[self.fn_name] = self.orig_fn
        else:
            setattr(self.frame_dict, self.fn_name, self.orig_fn)


_MISSING = object()


class _Patcher:
    """Replaces globals and class attributes for the length of a trace, then puts every one
    back, last first."""

    def __init__(self) -> None:
        self.patches_made: list[_PatchedFn] = []
        self.visited: set[int] = set()

    def patch(self, frame_dict: dict, name: str, new_fn, deduplicate: bool = True) -> None:
        new_fn._fx_already_patched = deduplicate
        if name not in frame_dict and hasattr(builtins, name):
            orig = _MISSING
        elif getattr(frame_dict[name], "_fx_already_patched", False):
            return
        else:
            orig = frame_dict[name]
        self.patches_made.append(_PatchedFn(frame_dict, name, orig, new_fn))
        frame_dict[name] = new_fn

    def patch_method(self, cls: type, name: str, new_fn, deduplicate: bool = True) -> None:
        new_fn._fx_already_patched = deduplicate
        orig = getattr(cls, name)
        if getattr(orig, "_fx_already_patched", False):
            return
        self.patches_made.append(_PatchedFn(cls, name, orig, new_fn))
        setattr(cls, name, new_fn)

    def visit_once(self, thing) -> bool:
        if id(thing) in self.visited:
            return False
        self.visited.add(id(thing))
        return True

    def __enter__(self) -> _Patcher:
        return self

    def __exit__(self, *exc) -> None:
        while self.patches_made:
            self.patches_made.pop().revert()
        self.visited.clear()


# (id of a module's globals, function name) -> those globals: the functions wrap() registered.
_wrapped_fns_to_patch: dict[tuple[int, str], dict[str, Any]] = {}


def _patch_wrapped_functions(patcher: _Patcher) -> None:
    for (_, name), frame_dict in _wrapped_fns_to_patch.copy().items():
        if name not in frame_dict and hasattr(builtins, name):
            orig = getattr(builtins, name)
        else:
            orig = frame_dict[name]
        patcher.patch(frame_dict, name, _create_wrapped_func(orig))


def _autowrap_check(patcher: _Patcher, frame_dict: dict, function_ids: set[int]) -> None:
    """Wrap, in one scope's globals, the functions the tracer wraps automatically."""
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, _create_wrapped_func(value))


def wrap(fn_or_name):
    """Make a global function of the calling module a leaf of symbolic tracing: its calls on
    Proxies become call_function nodes. Called at module level with the function or its name
    (which may be defined later); returns its argument, so it also serves as a decorator."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or "
                           "string name")
    fn_name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(frame.f_globals), fn_name)] = frame.f_globals
    return fn_or_name


def symbolic_trace(root, concrete_args: dict[str, Any] | None = None):
    """The GraphModule of `root` (a Module or a function), traced with a default Tracer."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
