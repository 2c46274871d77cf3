"""The settings of torch._dynamo.config that autojit.compile honours, and torch.compile's
`mode`, `options`, `disable` and backend names mapped to autojit's backends.

`autojit._dynamo.config` is this module (torch's programs set `torch._dynamo.config.X = ...`
before compiling): `recompile_limit` (alias `cache_size_limit`) is the recompile limit of the
functions compiled after it is set; `suppress_errors` makes a compile stage's failure give up
compiling (the function runs eagerly, with a warning; stages.py) instead of raising; and
`capture_scalar_outputs` is accepted, autojit tracing `.item()` into the graph whatever it
says; `verbose` (torch's full tracebacks of compile errors) is accepted too, autojit's errors
carrying their whole traceback either way. Setting a name torch's config does not have, or one
autojit does not honour, raises AttributeError, as torch's does for an unknown one.
docs/compiler.md has the table.
"""

from __future__ import annotations

import contextlib
import sys
import types

# torch.compile's backends and the autojit backend each one maps to: "inductor", torch's code
# generator, is autojit's ("cpu": native kernels wherever the tensors are, CUDA kernels for
# GPU tensors); "aot_eager" and "eager" run the function as it is.
TORCH_BACKENDS = {"inductor": "cpu", "aot_eager": "eager", "eager": "eager"}
# torch.compile's modes, in the order its error lists them; each compiles the same way here.
MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")

_DEFAULTS = {"recompile_limit": 8, "suppress_errors": False, "capture_scalar_outputs": False,
             "verbose": False}
_ALIASES = {"cache_size_limit": "recompile_limit"}
_values = dict(_DEFAULTS)


def compile_options(backend, mode, options, disable: bool, recompile_limit):
    """torch.compile's arguments as autojit.compile's: (backend, recompile_limit), with
    torch's errors for a mode it does not know, or a mode and options together."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if options is not None:
        options.items()  # torch reads it as a dict (an AttributeError otherwise)
    backend = TORCH_BACKENDS.get(backend, backend) if isinstance(backend, str) else backend
    if disable:
        backend = "eager"
    if recompile_limit is None:
        recompile_limit = _values["recompile_limit"]
    return backend, recompile_limit


def errors_suppressed() -> bool:
    """autojit._dynamo.config.suppress_errors, for the compile stages (stages.py)."""
    return _values["suppress_errors"]


@contextlib.contextmanager
def _patch(changes: dict | None = None, **more):
    """Set some of the settings for a `with` block (or a decorated function), as torch's
    config.patch does."""
    changes = {**(changes or {}), **more}
    module = sys.modules[__name__]
    before = {name: getattr(module, name) for name in changes}
    for name, value in changes.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(module, name, value)


def _setting(name: str) -> property:
    key = _ALIASES.get(name, name)

    def get(module):
        return _values[key]

    def set_(module, value):
        _values[key] = value

    return property(get, set_)


class _ConfigModule(types.ModuleType):
    def __setattr__(self, name, value):
        if name.startswith("_") or isinstance(getattr(type(self), name, None), property):
            super().__setattr__(name, value)
            return
        if name in self.__dict__ and callable(self.__dict__[name]):
            super().__setattr__(name, value)
            return
        raise AttributeError(f"autojit._dynamo.config.{name} does not exist")


for _name in (*_DEFAULTS, *_ALIASES):
    setattr(_ConfigModule, _name, _setting(_name))
_ConfigModule.patch = staticmethod(_patch)
sys.modules[__name__].__class__ = _ConfigModule
