"""OptimizedModule: what `autojit.compile(model)` returns for an nn.Module, as torch's
OptimizedModule: calling it runs the compiled call of the module, and everything else
(parameters, state_dict, train/eval, to, attributes) is the module's, reached through it.

The compiler layer cannot import nn, so this module installs a hook in
`compiler.api.MODULE_WRAPPERS` when nn is imported (docs/notes/layers.md): compile hands it
each callable and uses the proxy it returns for a Module. As torch's, the proxy is a Module
with the original as its one child, `_orig_mod`, so its state_dict and named_parameters keys
start with `_orig_mod.` and it loads such a state_dict; the original module's own keys are
`proxy._orig_mod.state_dict()`'s. A name the module does not have is looked up on the compiled
function, so its inspection (`stats()`, `guards()`, `ir()`) works on the proxy too.
"""

from __future__ import annotations

import warnings

from ..compiler import api
from ..ops.complex_rules import user_stacklevel
from . import module_global_hooks
from .module import Module

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """A compiled module: `autojit.compile(model)`. `_orig_mod` is the module it wraps."""

    # Attributes of the proxy itself; any other is the wrapped module's.
    _own_attributes = frozenset({"_orig_mod", "_compiled_function"})

    def __init__(self, module: Module, options: dict):
        if module_global_hooks.any_call_hooks():
            # The proxy is a Module: the global hooks fire for it too, as for torch's.
            warnings.warn(
                "Using `torch.compile(module)` when there are global hooks on modules (e.g., "
                "from `register_module_forward_hook`); this will cause the hooks to fire an "
                "extra time for the `OptimizedModule` created by `torch.compile(module)`. If "
                "this causes undesired behavior, please try using `module.compile()`, or use "
                "the per-module hooks instead", UserWarning, stacklevel=user_stacklevel())
        # The original first: reading or writing any attribute of the proxy reaches it.
        object.__setattr__(self, "_orig_mod", module)
        training = module.training
        super().__init__()  # sets training through the property below: put it back
        module.training = training
        self._orig_mod = module  # registered as the child module `_orig_mod`
        object.__setattr__(self, "_compiled_function", api.CompiledFunction(module, **options))

    @property
    def training(self) -> bool:
        return self._orig_mod.training

    @training.setter
    def training(self, mode: bool) -> None:
        self._orig_mod.training = mode

    def forward(self, *args, **kwargs):
        return self._compiled_function(*args, **kwargs)

    def __getattr__(self, name: str):
        modules = self.__dict__.get("_modules")
        if modules is None:  # not set up yet (being unpickled or copied): nothing to reach
            raise AttributeError(f"'OptimizedModule' object has no attribute '{name}'")
        if name == "_orig_mod":
            return modules["_orig_mod"]
        try:
            return getattr(self._orig_mod, name)
        except AttributeError:
            # What the module does not have, the compiled function may: its inspection
            # (`stats()`, `guards()`, `executables`, `ir()`).
            compiled = self.__dict__["_compiled_function"]
            if name.startswith("_") or not hasattr(compiled, name):
                raise
            return getattr(compiled, name)

    def __setattr__(self, name: str, value) -> None:
        if name in self._own_attributes or hasattr(type(self), name):
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._own_attributes:
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)


def _wrap_module(fn, options: dict):
    """compile's hook: the proxy for a Module, None for any other callable."""
    return OptimizedModule(fn, options) if isinstance(fn, Module) else None


api.MODULE_WRAPPERS.append(_wrap_module)
