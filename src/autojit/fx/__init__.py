"""autojit.fx: torch.fx on autojit, symbolic tracing of nn Modules into editable graphs.

`symbolic_trace(module)` runs a module's forward on Proxies and returns a GraphModule, an
autojit.nn.Module whose forward is Python generated from a Graph of Nodes (placeholder,
get_attr, call_function, call_method, call_module, output). Passes edit the graph (insert,
erase, replace uses, eliminate dead code) and `recompile()`; Interpreter runs a graph node by
node and Transformer rewrites one. Graph listings, node names and the generated code follow
torch.fx's, with autojit's functions named by torch's public names (`torch.relu`), so that
libraries that build on torch.fx (timm, torchvision's feature extraction, kornia) run on
autojit through the drop-in, where `import torch.fx` gives this package.

Layout: node.py (Node, map_arg), graph.py (Graph) and codegen.py (the generated code),
graph_module.py (GraphModule), proxy.py (Proxy, TracerBase), _symbolic_trace.py (Tracer,
wrap, symbolic_trace), interpreter.py (Interpreter, Transformer), _names.py (torch's names of
autojit's objects), and torch.fx's helper modules libraries import (experimental,
passes, _pytree, immutable_collections, _compatibility). It sits above nn, beside func: it uses
autojit's public modules and the tensor layer's `__torch_function__` protocol.
"""

from __future__ import annotations

from . import immutable_collections
from ._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap
from .graph import CodeGen, Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy

__all__ = ["CodeGen", "Graph", "GraphModule", "Interpreter", "Node", "PH", "Proxy",
           "ProxyableClassMeta", "Tracer", "Transformer", "has_side_effect",
           "immutable_collections", "map_arg", "symbolic_trace", "wrap"]
