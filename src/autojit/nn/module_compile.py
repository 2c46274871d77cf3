"""Module.compile: a module compiled in place, as torch's `model.compile()` does; calling the
module then runs the compiled call (module.py's `__call__` looks for it first).

This sits on the compiler (compiler/api.py): the compiled function wraps the module's own
call, hooks included (`Module._call_impl`), so a trace of it runs what an eager call runs.
`autojit.compile(model)`, which returns a proxy instead, is in optimized_module.py.
"""

from __future__ import annotations

from ..compiler.api import compile as compile_function

__all__ = ["CompileMixin"]


class CompileMixin:
    """Module.compile (mixed into Module)."""

    def compile(self, *args, **kwargs) -> None:
        """Compile this module's call in place with autojit.compile's options (`backend=`,
        `fullgraph=`, `dynamic=`, `recompile_limit=`): later calls of the module run compiled,
        its parameters and state_dict keys stay as they are. Returns None, as torch's does;
        the compiled function is `module._compiled_call_impl` (its `stats()`, `guards()`)."""
        self.__dict__["_compiled_call_impl"] = compile_function(self._call_impl, *args,
                                                                **kwargs)
