"""autojit.compile from front to back: the decorator and its inspection (api.py), the ordered
compile stages (stages.py), guards and the reachability walk behind them, symbolic sizes and
dynamic shapes, the compiled backward, and the executable a guarded call runs; and
autojit.compiler, the public module torch.compiler is (explain, from explain.py; disable,
is_compiling, reset and the rest from control.py), with torch._dynamo.config's settings
(dynamo_config.py).

The compiler sits above ir/ and below the code generators: the stages hand a scheduled graph to
a backend that registered itself (backends.py), so nothing here imports codegen/ or cuda/.
"""

from .api import compile  # noqa: A004 - torch.compiler.compile is torch.compile
from .control import (
    allow_in_graph,
    assume_constant_result,
    disable,
    is_compiling,
    is_dynamo_compiling,
    is_exporting,
    list_backends,
    reset,
)
from .explain import ExplainOutput, explain
from .stats import CompileStats

__all__ = ["CompileStats", "ExplainOutput", "allow_in_graph", "assume_constant_result",
           "compile", "disable", "explain", "is_compiling", "is_dynamo_compiling",
           "is_exporting", "list_backends", "reset"]
