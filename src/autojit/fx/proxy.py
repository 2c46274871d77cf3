"""autojit.fx.proxy: torch.fx's Proxy, the stand-in for a value while a function is traced
symbolically, and TracerBase, which turns what a Proxy meets into graph nodes.

Python operators on a Proxy record `call_function` nodes on `operator.add` and the like; an
attribute read records a `getattr` node, or a `call_method` node when it is called; autojit's
functions and Tensor methods reach Proxy.__torch_function__ through autojit's protocol
(tensor/torch_function.py), which a Proxy switches on when the first is made (`arm`), and
record `call_function` nodes on the public function (`torch.relu`, `torch.nn.functional.gelu`)
or `call_method` nodes for Tensor methods. What needs a concrete value (`if proxy:`, iteration,
len) raises torch's errors. _symbolic_trace.py's Tracer drives it; graph.py holds the nodes.
"""

from __future__ import annotations

import bisect
import collections
import copy
import dataclasses
import dis
import enum
import inspect
import operator
import sys
import traceback
from typing import Any

from ..tensor import torch_function
from .codegen import magic_methods, reflectable_magic_methods
from .graph import Graph
from .node import Argument, Node, Target, base_types, map_aggregate, map_arg

__all__ = ["Attribute", "GraphAppendingTracer", "ParameterProxy", "Proxy", "Scope",
           "ScopeContextManager", "TraceError", "TracerBase"]

class TraceError(ValueError):
    """A traced program needed a value a Proxy does not have (control flow on it)."""


class Scope:
    """The module path and type of the module being traced through."""

    def __init__(self, module_path: str, module_type: Any) -> None:
        self.module_path = module_path
        self.module_type = module_type


class ScopeContextManager:
    """Sets a tracer's scope to the module being traced through, and back after it."""

    def __init__(self, scope: Scope, current_scope: Scope) -> None:
        self._prev_scope = copy.copy(scope)
        scope.module_path = current_scope.module_path
        scope.module_type = current_scope.module_type
        self._scope = scope

    def __enter__(self) -> Scope:
        return self._scope

    def __exit__(self, *args) -> None:
        self._scope.module_path = self._prev_scope.module_path
        self._scope.module_type = self._prev_scope.module_type


class TracerBase:
    """What turns traced operations into nodes of `self.graph`."""

    graph: Graph
    record_stack_traces: bool = False
    check_mutable_operations: bool = False
    proxy_buffer_attributes: bool = False
    traced_func_name: str = "forward"
    scope: Scope
    module_stack: collections.OrderedDict
    node_name_to_scope: dict

    def create_node(self, kind: str, target: Target, args: tuple, kwargs: dict,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """Insert a node; override to check or annotate what is recorded."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        scope = getattr(self, "scope", None)
        if scope is not None and hasattr(self, "node_name_to_scope"):
            self.node_name_to_scope[node.name] = (scope.module_path, scope.module_type)
        if getattr(self, "module_stack", None):
            node.meta["nn_module_stack"] = copy.copy(self.module_stack)
        if self.record_stack_traces and not node.stack_trace:
            frames = [frame for frame in traceback.extract_stack()
                      if "/autojit/fx/" not in frame.filename.replace("\\", "/")]
            if frames:
                node.stack_trace = "".join(traceback.format_list(frames)).strip()
        return node

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Target, args: tuple, kwargs: dict,
                     name: str | None = None, type_expr: Any = None,
                     proxy_factory_fn=None) -> Proxy:
        """A node for the operation (its arguments lowered by create_arg), in a Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError("create_arg must keep args a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Argument:
        """Lower a traced value to what a node stores: a Proxy to its node, containers item by
        item, constants as they are."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            items = [self.create_arg(item) for item in a]
            return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
        if isinstance(a, list):
            return [self.create_arg(item) for item in a]
        if isinstance(a, dict):
            result = {}
            for key, value in a.items():
                if not isinstance(key, str):
                    key = self.create_arg(key)
                    map_arg(key, _no_nodes_error)
                result[key] = self.create_arg(value)
            return result
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if dataclasses.is_dataclass(a) and not isinstance(a, type):
            fields = {f.name: self.create_arg(getattr(a, f.name))
                      for f in dataclasses.fields(a)}
            return self.create_node("call_function", a.__class__, (), fields)
        if isinstance(a, (*base_types, enum.Enum)) or a is None or a is ...:
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """`bool(proxy)`: a traced value has no truth value, unless a tracer gives one."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj: Proxy):
        """`iter(proxy)`: a traced value cannot be iterated, unless a tracer says how."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs on pytorch.org for a more detailed explanation "
                         "of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj: Proxy) -> Proxy:
        """`proxy.keys()` (what `**proxy` calls) as a method call."""
        return Attribute(obj, "keys")()


def _no_nodes_error(arg):
    raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. "
                       f"Got key: {arg}")


class GraphAppendingTracer(TracerBase):
    """The tracer of a Proxy made around a node of an existing graph: operations on it append
    nodes to that graph."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.node_name_to_scope = {}


def assert_fn(x) -> None:
    assert x


class Proxy:
    """A value being traced: what it meets is recorded as nodes of its tracer's graph."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node
        # autojit's functions dispatch to __torch_function__ only once the protocol is on.
        if not torch_function.ACTIVE:
            torch_function.arm(type(self))

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        # Not recorded yet: a method call records call_method instead (Attribute.__call__).
        return Attribute(self, k)

    def __getstate__(self) -> dict:
        return self.__dict__

    def __setstate__(self, d: dict) -> None:
        self.__dict__ = d

    def __deepcopy__(self, memo: dict) -> Proxy:
        # Defined, or deepcopy would find an Attribute for `__deepcopy__`.
        state = {}
        for key, value in self.__dict__.items():
            try:
                state[key] = copy.deepcopy(value, memo)
            except Exception:  # noqa: BLE001 - torch falls back to a shallow copy too
                state[key] = copy.copy(value)
        made = Proxy.__new__(type(self))
        made.__dict__.update(state)
        return made

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self):
        # `a, b = proxy` unpacks a known number of items: index them.
        frame = inspect.currentframe().f_back
        instructions = list(dis.get_instructions(frame.f_code))
        if sys.version_info >= (3, 11):
            index = bisect.bisect_left(instructions, frame.f_lasti, key=lambda i: i.offset)
        else:  # f_lasti counts two-byte code units there
            index = frame.f_lasti // 2
        if index < len(instructions) and instructions[index].opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(instructions[index].argval))
        return self.tracer.iter(self)

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self) -> Proxy:
        return self.tracer.keys(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    @classmethod
    def __torch_function__(cls, orig_method, types, args=(), kwargs=None) -> Proxy:
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers: dict = {}

        def find_tracer(value):
            if isinstance(value, cls):
                tracers[value.tracer] = None
            return value

        map_aggregate((args, kwargs), find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers)} while trying "
                               f"to trace operations {orig_method}")
        tracer = next(iter(tracers))
        public = getattr(orig_method, "__torch_function_name__", "")
        if public.startswith("torch.Tensor."):
            # A Tensor method reached through a real tensor (`weight.add(proxy)`).
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method.__name__))


class Attribute(Proxy):
    """`proxy.name`: a getattr node, made only when the value is used other than by calling
    it."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


class ParameterProxy(Proxy):
    """A parameter's Proxy whose shape queries answer from the parameter itself (the tracer's
    `param_shapes_constant`), so that code branching on them traces."""

    def __init__(self, tracer: TracerBase, node: Node, name: str, param) -> None:
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self) -> int:
        return self.param.dim()

    @property
    def ndim(self) -> int:
        return self.param.ndim

    def numel(self) -> int:
        return self.param.numel()

    def nelement(self) -> int:
        return self.param.nelement()


def _define_magic(method: str) -> None:
    def impl(*args, **kwargs):
        return args[0].tracer.create_proxy("call_function", getattr(operator, method), args,
                                           kwargs)

    impl.__name__ = f"__{method.strip('_')}__"
    # Set after the class exists, so that defining __eq__ leaves Proxy hashable (by identity).
    setattr(Proxy, impl.__name__, impl)


def _define_reflectable(method: str) -> None:
    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", getattr(operator, method),
                                        (rhs, self), {})

    impl.__name__ = impl.__qualname__ = f"__r{method.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


for _method in magic_methods:
    _define_magic(_method)
for _method in reflectable_magic_methods:
    _define_reflectable(_method)
del _method
