"""autojit.fx.interpreter: torch.fx's Interpreter, which runs a GraphModule's graph node by
node (one method per opcode, to override for analyses and rewrites), and Transformer, an
Interpreter over Proxies that writes a new graph and returns it as a new GraphModule.

`Interpreter(gm).run(*args)` gives what `gm(*args)` gives; each value is dropped after its
last use. A Transformer subclass changes what a node becomes by overriding `call_function`,
`call_method` or `call_module` (swap relu for gelu, say) and calling the base method with the
new target.
"""

from __future__ import annotations

import inspect
from typing import Any

from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule
from .node import Argument, Node, Target, map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs the graph of `module` (or `graph`, over `module`'s attributes) node by node."""

    def __init__(self, module, garbage_collect_values: bool = True,
                 graph: Graph | None = None) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            # The first use met walking backwards is the last one run: the value goes after it.
            last_use: dict[Node, Node] = {}
            self.user_to_last_uses: dict[Node, list[Node]] = {}
            for node in reversed(self.graph.nodes):
                for used in node._input_nodes:
                    if used not in last_use:
                        last_use[used] = node
                        self.user_to_last_uses.setdefault(node, []).append(used)

    def run(self, *args, initial_env: dict[Node, Any] | None = None,
            enable_io_processing: bool = True) -> Any:
        """Run the graph on `args` and return what its output node returns; `initial_env`
        gives values for nodes that are then not run."""
        self.env = initial_env if initial_env is not None else {}
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as error:
                if self.extra_traceback:
                    message = f"While executing {node.format_node()}"
                    message = f"{error.args[0]}\n\n{message}" if error.args else message
                    message += f"\nOriginal traceback:\n{node.stack_trace}"
                    error.args = (message, *error.args[1:])
                    if isinstance(error, KeyError):
                        raise RuntimeError(*error.args) from error
                raise
            if self.garbage_collect_values:
                for done in self.user_to_last_uses.get(node, []):
                    del self.env[done]
            if node.op == "output":
                value = self.env[node]
                return (self.graph.process_outputs(value) if enable_io_processing
                        else value)
        return None

    def boxed_run(self, args_list: list) -> Any:
        """run() on a list of arguments, which is emptied so that they can be freed."""
        args_iter = iter(args_list)
        env = {}
        for node in self.graph.nodes:
            if node.op == "placeholder":
                env[node] = next(args_iter)
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n: Node) -> Any:
        """Run one node: the method named after its opcode, on its fetched arguments."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """The next positional argument (all the rest for `*args`), or the default."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as stop:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               "was not passed in!") from stop

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        if isinstance(target, str):
            raise AssertionError("target should not be a string for call_function")
        return target(*args, **kwargs)

    def call_method(self, target: Target, args: tuple, kwargs: dict) -> Any:
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return args[0]

    def fetch_attr(self, target: str) -> Any:
        """The attribute at dotted path `target` of the module."""
        atoms = target.split(".")
        value = self.module
        for index, atom in enumerate(atoms):
            if not hasattr(value, atom):
                raise RuntimeError("Node referenced nonexistent target "
                                   f"{'.'.join(atoms[:index + 1])}")
            value = getattr(value, atom)
        return value

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple, dict]:
        """`n`'s args and kwargs with each node replaced by its computed value."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args: Argument, n: Node) -> Argument:
        def load(node: Node) -> Any:
            if node not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {node}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[node]

        return map_arg(args, load)


class Transformer(Interpreter):
    """An Interpreter whose values are Proxies of a new graph: `transform()` returns the
    GraphModule of what the overridden methods recorded."""

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph.set_codegen(module.graph._codegen)

        class TransformerTracer(Tracer):
            def __init__(self, graph: Graph) -> None:
                super().__init__()
                self.graph = graph
                self.tensor_attrs = {}

            def is_leaf_module(self, _, __) -> bool:
                return True

        self.tracer = TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        module = self.fetch_attr(target)
        return self.tracer.call_module(module, module.forward, args, kwargs)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """The new GraphModule: the module's attributes with the recorded graph."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            output = self.new_graph.output(map_aggregate(
                result, lambda a: a.node if isinstance(a, Proxy) else a))
            old_output = next(iter(reversed(self.graph.nodes)))
            output.meta.update(old_output.meta)
        return GraphModule(self.module, self.new_graph)
