"""autojit.compile from front to back: the decorator and its inspection (api.py), the ordered
compile stages (stages.py), guards and the reachability walk behind them, symbolic sizes and
dynamic shapes, the compiled backward, and the executable a guarded call runs; and
autojit.compiler, the public module torch.compiler is (explain, from explain.py).

The compiler sits above ir/ and below the code generators: the stages hand a scheduled graph to
a backend that registered itself (backends.py), so nothing here imports codegen/ or cuda/.
"""

from .explain import ExplainOutput, explain
from .stats import CompileStats

__all__ = ["CompileStats", "ExplainOutput", "explain"]
