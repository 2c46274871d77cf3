"""autojit.compile from front to back: the decorator and its inspection (api.py), the ordered
compile stages (stages.py), guards and the reachability walk behind them, symbolic sizes and
dynamic shapes, the compiled backward, and the executable a guarded call runs; and
autojit.compiler, the public module torch.compiler is (explain, from explain_report.py; disable,
is_compiling, reset and the rest from control.py), with torch._dynamo.config's settings
(dynamo_config.py).

The compiler sits above ir/ and below the code generators: the stages hand a scheduled graph to
a backend that registered itself (backends.py), so nothing here imports codegen/ or cuda/.
"""

# The public names, each loaded with its first use (name -> module of this package): not at
# `import autojit`, which reaches this package for backends.py alone.
_PUBLIC = {
    "compile": "api", "CompileStats": "stats", "ExplainOutput": "explain_report",
    "explain": "explain_report",
    "allow_in_graph": "control", "assume_constant_result": "control", "disable": "control",
    "is_compiling": "control", "is_dynamo_compiling": "control", "is_exporting": "control",
    "list_backends": "control", "reset": "control", "set_stance": "control",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        import importlib

        module = importlib.import_module(f"{__name__}.{_PUBLIC[name]}")
        # explain's module has a name of its own: a module named explain would replace the
        # function as this package's attribute whenever something imported it first.
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
