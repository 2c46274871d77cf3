"""The backends that turn an optimized graph into a runnable plan, registered by their packages.

The compiler sits below codegen/ and cuda/ and never imports them (docs/notes/layers.md). Each
registers, by name, the module that builds its plans when its package is imported
(codegen/__init__.py registers "cpu", cuda/__init__.py "cuda"); the build stage imports that
module the first time a graph needs it, so that `import autojit` loads neither llvmlite nor
numba. A backend module provides

    build(graph, arguments, generic, fresh_grads) -> a plan: run_arrays(arrays) runs the
        graph on its non-captured inputs' arrays (codegen/schedule/fusion.py's Plan);

optionally

    prepare(graph) -> None: start, off the calling thread, what building the graph's plan
        will need (the CPU backend's native gemm), before the passes run;
    rebind(plan, graph) -> a plan, or None: the plan of `graph`, the graph `plan` runs with
        other sizes, made from `plan`'s decisions without a schedule (the bindings of a
        trace's computed sizes, compiler/binding_plans.py);

and a device backend also

    claims(graph, arguments) -> bool: whether the call's tensors live on its device, so that
        backend="cpu" (the default, "wherever the tensors are") runs the graph there.
"""

from __future__ import annotations

import importlib

_MODULES: dict[str, str] = {}


def register(name: str, module: str) -> None:
    """Build plans for backend `name` with the module named `module` (imported on first use)."""
    _MODULES[name] = module


def load(name: str):
    """The module of backend `name`; an ImportError of its libraries propagates."""
    module = _MODULES.get(name)
    if module is None:
        raise RuntimeError(f"autojit.compile: no backend named {name!r} is registered "
                           f"(registered: {', '.join(sorted(_MODULES))})")
    return importlib.import_module(module)
