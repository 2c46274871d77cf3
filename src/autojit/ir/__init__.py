"""The IR: values, nodes and graphs, their text form, the verifier, the reference interpreter,
and the tracer that turns a Python function into a graph (`make_graph`).

See docs/ir.md for the text format and a worked example.
"""

from ..tensor.graph_break import GraphBreak
from .graph import Graph, Input, Node, Output, Value
from .interpreter import interpret
from .make_graph import make_graph
from .printer import format_graph
from .trace import Tracer
from .verifier import VerificationError, verify

__all__ = [
    "Graph", "Input", "Node", "Output", "Value", "interpret", "format_graph", "GraphBreak",
    "Tracer", "make_graph", "VerificationError", "verify",
]
