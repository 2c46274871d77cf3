"""autojit.fx.graph_module: torch.fx's GraphModule, an autojit.nn.Module whose forward is
generated from a Graph.

It holds the submodules, parameters and buffers its graph's get_attr and call_module nodes name
(copied from the root module at the same dotted paths, or taken from a dict), and `recompile()`
writes the graph as Python (codegen.py) and executes it as the class's `forward`; each instance
gets a class of its own so that its forward is its own. The source is registered with linecache,
so a traceback through a generated forward shows its lines. Deep copies rebuild the graph; a
pickle keeps the generated code and re-traces it on load, as torch's does.
"""

from __future__ import annotations

import copy
import itertools
import linecache
from typing import Any

from ..nn import Module
from ..tensor.tensor import Tensor
from .graph import Graph, PythonCode

__all__ = ["GraphModule", "reduce_graph_module"]

_counter = itertools.count()


# meta's key of the attributes a deepcopy sets again on the copy (torch's name).
_USER_PRESERVED_ATTRIBUTES_KEY = "_user_preserved_attributes"


def _exec_with_source(src: str, globals_: dict[str, Any]) -> None:
    key = f"<eval_with_key>.{next(_counter)}"
    # mtime None: linecache.checkcache leaves the entry alone.
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec", dont_inherit=True), globals_)  # noqa: S102 - generated code


def _forward_from_src(src: str, globals_: dict[str, Any], co_fields=None):
    scope = dict(globals_)
    _exec_with_source(src, scope)
    return scope.pop("forward")


def _format_import_statement(name: str, obj: Any) -> str:
    if name == "torch":
        return "import autojit as torch"
    builtin = {"inf": "from math import inf", "nan": "from math import nan",
               "NoneType": "NoneType = type(None)", "device": "from autojit import device"}
    if name in builtin:
        return builtin[name]
    module, qualname = obj.__module__, obj.__qualname__
    if module == "builtins":
        return f"{name} = __import__('builtins').{qualname}"
    if "." not in qualname:
        return f"from {module} import {qualname} as {name}"
    return f"{name} = __import__('importlib').import_module({module!r}).{qualname}"


def _format_import_block(globals_: dict[str, Any]) -> str:
    return "\n".join(sorted({_format_import_statement(n, o) for n, o in globals_.items()}))


def reduce_graph_module(body: dict[str, Any], import_block: str) -> Module:
    """Rebuild a pickled GraphModule: its code is run and re-traced."""
    forward = _forward_from_src(import_block + body["_code"], {})
    return _deserialize_graph_module(forward, body)


class _CodeOnlyModule(Module):
    """A module made of a saved __dict__, whose class gets the forward to re-trace."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__()
        object.__setattr__(self, "__dict__", body)


def _deserialize_graph_module(forward, body: dict[str, Any]) -> Module:
    from ._symbolic_trace import Tracer  # here: it builds GraphModules itself

    tracer_cls = body.get("_tracer_cls") or Tracer

    class KeepModules(tracer_cls):
        # The submodules were not traced through when the graph was made: keep them calls.
        def is_leaf_module(self, _, __) -> bool:
            return True

    code_only = type("_CodeOnlyModule", (_CodeOnlyModule,), {"forward": forward})(body)
    graph = KeepModules().trace(code_only, **body.get("_tracer_extras", {}))
    graph._tracer_cls = tracer_cls
    made = GraphModule(code_only, graph, class_name=body.get("_graphmodule_cls_name",
                                                             "GraphModule"))
    for key, value in body.items():
        if not hasattr(made, key):
            setattr(made, key, value)
    return made


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """Copy what `target` names in `from_module` to the same path in `to_module`, making
    empty Modules for the missing levels; a plain tensor becomes a buffer."""
    *prefix, field = target.split(".")
    for item in prefix:
        source = getattr(from_module, item)
        made = getattr(to_module, item, None)
        if source is made:
            return  # a level above is installed already, with everything under it
        if made is None:
            made = Module()
            setattr(to_module, item, made)
        from_module, to_module = source, made
    value = getattr(from_module, field)
    if isinstance(value, Tensor) and not _is_parameter(value):
        to_module.register_buffer(field, value)
    else:
        setattr(to_module, field, value)


def _is_parameter(value) -> bool:
    from ..nn import Parameter

    return isinstance(value, Parameter)


def _assign_attr(from_obj: Any, to_module: Module, target: str) -> None:
    """Put `from_obj` at dotted path `target` of `to_module`, making missing levels."""
    *prefix, field = target.split(".")
    for item in prefix:
        made = getattr(to_module, item, None)
        if made is None:
            made = Module()
            setattr(to_module, item, made)
        to_module = made
    if isinstance(from_obj, Tensor) and not _is_parameter(from_obj):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _callable(f):
    if not callable(f):
        raise AssertionError("hook must be a callable.")
    return f


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    # blank lines stay empty, as torch's
    return lines[0] + "\n" + "\n".join(" " * spaces + line if line.strip() else ""
                                        for line in lines[1:])


class GraphModule(Module):
    """torch.fx.GraphModule(root, graph, class_name): a Module running `graph`."""

    def __new__(cls, *args, **kwargs):
        # One class per instance, so that recompile() can set this instance's forward.
        for kind in cls.__mro__:
            if kind.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = kind
                break

        class GraphModuleImpl(cls):
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root: Module | dict[str, Any], graph: Graph,
                 class_name: str = "GraphModule") -> None:
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    targets.append(node.target)
            for target in sorted(targets, key=lambda t: t.count(".")):
                _assign_attr(root[target], self, target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        tracer_cls = graph._tracer_cls
        self._tracer_cls = (tracer_cls if tracer_cls and "<locals>" not in
                            tracer_cls.__qualname__ else None)
        self._tracer_extras = graph._tracer_extras or {}
        self.meta: dict[str, Any] = {}
        self._replace_hooks: list = []
        self._create_node_hooks: list = []
        self._erase_node_hooks: list = []
        self._deepcopy_hooks: list = []

    @property
    def graph(self) -> Graph:
        """The Graph this module runs; assigning one recompiles."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of the generated forward."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate forward from the graph; call it after editing the graph in place."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        type(self).forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install `m` at dotted path `target`, making empty Modules for missing levels;
        False where a level exists and is not a Module."""
        *prefix, field = target.split(".")
        module = self
        for item in prefix:
            child = getattr(module, item, None)
            if child is None:
                child = Module()
                setattr(module, item, child)
            if not isinstance(child, Module):
                return False
            module = child
        module.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at `target`; False where nothing is there to remove."""
        *path, name = target.split(".")
        module = self
        for item in path:
            if not hasattr(module, item):
                return False
            module = getattr(module, item)
            if not isinstance(module, Module):
                return False
        if not isinstance(getattr(module, name, None), Module):
            return False
        delattr(module, name)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove every submodule no call_module or get_attr node reaches."""
        used: set[str] = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr") and isinstance(node.target, str):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                if node.op == "call_module":
                    try:
                        module = self.get_submodule(node.target)
                    except AttributeError:
                        continue
                    used.update(f"{node.target}.{name}" for name, _ in module.named_modules()
                                if name)
        for name in [name for name, _ in self.named_modules() if name and name not in used]:
            self.delete_submodule(name)

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False) -> str:
        """The generated code as a class (submodules that are GraphModules nested), with the
        tensor metadata nodes carry; printed unless print_output is False, and returned.
        `colored` is accepted for torch's signature: the text has no terminal colours."""
        return _print_readable(self, self._get_name(), print_output, include_stride,
                               include_device)

    # Hooks passes register to follow edits: replace (old node, new name, user), create and
    # erase (the node), deepcopy (the copy).
    def _register_replace_node_hook(self, f) -> None:
        self._replace_hooks.append(_callable(f))

    def _unregister_replace_node_hook(self, f) -> None:
        self._replace_hooks.remove(f)

    def _register_create_node_hook(self, f) -> None:
        self._create_node_hooks.append(_callable(f))

    def _unregister_create_node_hook(self, f) -> None:
        self._create_node_hooks.remove(f)

    def _register_erase_node_hook(self, f) -> None:
        self._erase_node_hooks.append(_callable(f))

    def _unregister_erase_node_hook(self, f) -> None:
        self._erase_node_hooks.remove(f)

    def _register_deepcopy_hook(self, f) -> None:
        self._deepcopy_hooks.append(_callable(f))

    def _unregister_deepcopy_hook(self, f) -> None:
        self._deepcopy_hooks.remove(f)

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code, "# To see more debug info, please use "
                          "`graph_module.print_readable()`"])

    def __deepcopy__(self, memo: dict) -> GraphModule:
        made = type(self).__new__(type(self))
        memo[id(self)] = made
        fake = _CodeOnlyModule(copy.deepcopy(self.__dict__, memo))
        GraphModule.__init__(made, fake, fake.__dict__["_graph"])
        for attr in ("_replace_hooks", "_create_node_hooks", "_erase_node_hooks",
                     "_deepcopy_hooks"):
            if attr in self.__dict__:
                setattr(made, attr, copy.deepcopy(self.__dict__[attr], memo))
        made.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        for name, value in made.meta.get(_USER_PRESERVED_ATTRIBUTES_KEY, {}).items():
            setattr(made, name, value)
        for hook in getattr(self, "_deepcopy_hooks", ()):
            hook(made)
        return made

    def __copy__(self) -> GraphModule:
        made = GraphModule(self, self.graph)
        made.meta = getattr(self, "meta", {})
        return made

    def __reduce__(self):
        body = self.__dict__.copy()
        python_code = self.recompile()
        body["_graphmodule_cls_name"] = type(self).__name__
        del body["_graph"]
        return (reduce_graph_module, (body, _format_import_block(python_code.globals)))


def _print_readable(module: GraphModule, module_name: str, print_output: bool,
                    include_stride: bool = False, include_device: bool = False) -> str:
    code = module.graph.python_code(root_module="self", verbose=True,
                                    include_stride=include_stride,
                                    include_device=include_device).src.lstrip("\n")
    text = _addindent(f"class {module_name}(torch.nn.Module):\n" + code, 4)
    nested = [""]
    for name, child in module.named_children():
        if isinstance(child, GraphModule):
            nested.append(_print_readable(child, name, False, include_stride,
                                          include_device))
    text += _addindent("\n".join(nested), 4)
    if print_output:
        print(text)
    return text
