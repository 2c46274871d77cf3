"""autojit.compile from front to back: the decorator and its inspection (api.py), the ordered
compile stages (stages.py), guards and the reachability walk behind them, symbolic sizes and
dynamic shapes, the compiled backward, and the executable a guarded call runs; and
autojit.compiler, the public module torch.compiler is (explain, from explain.py).

The compiler sits above ir/ and below the code generators: the stages hand a scheduled graph to
a backend that registered itself (backends.py), so nothing here imports codegen/ or cuda/.
"""

__all__ = ["CompileStats", "ExplainOutput", "explain"]


def __getattr__(name: str):
    # explain and CompileStats load the whole compiler: not at `import autojit`, which
    # reaches this package for backends.py alone.
    if name in __all__:
        import importlib

        explain = importlib.import_module(f"{__name__}.explain")
        stats = importlib.import_module(f"{__name__}.stats")
        # The function explain, not its module (which the import set as this attribute).
        globals().update(explain=explain.explain, ExplainOutput=explain.ExplainOutput,
                         CompileStats=stats.CompileStats)
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
