"""What a program tells autojit.compile from inside, with torch.compiler's names: `disable` (a
function that runs eagerly), `is_compiling` (True while a function is traced), `reset` (forget
every compiled function's executables), `set_stance` (compile, run eagerly, or refuse to
recompile), `allow_in_graph`, `assume_constant_result` and `list_backends`. autojit.compiler
and autojit._dynamo export them.

autojit's compiler is a tracer, not a bytecode analyzer (docs/compiler.md): a function torch
would leave out of its graph, a disabled one, cannot be cut out of a trace. Called while a
function is traced, it breaks the graph, so that call runs eagerly, the disabled function with
it; compiled itself, it runs eagerly, as torch's does.
"""

from __future__ import annotations

import functools
import gc

from ..tensor.graph_break import graph_break
from ..tensor.state import state
from . import api
from .dynamo_config import TORCH_BACKENDS


class _Disabled:
    """A function that autojit.compile does not compile: it runs as it is, and a trace that
    reaches it breaks (the compiled call runs eagerly). Anything else (a module's parameters,
    say) is the wrapped object's."""

    def __init__(self, fn, reason: str | None):
        self.__dict__["_fn"], self.__dict__["_reason"] = fn, reason
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args, **kwargs):
        if state.tracer is not None:
            name = getattr(self._fn, "__qualname__", type(self._fn).__name__)
            why = f": {self._reason}" if self._reason else ""
            graph_break(f"{name} is disabled for compilation (autojit.compiler.disable{why})",
                        needs_data=False)
        return self._fn(*args, **kwargs)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self.__call__, instance)

    def __getattr__(self, name):
        return getattr(self.__dict__["_fn"], name)

    def __repr__(self) -> str:
        return f"disabled({self._fn!r})"


def disable(fn=None, recursive: bool = True, *, reason: str | None = None):
    """Leave `fn` out of compilation: it runs as it is. Called from a function being compiled,
    it breaks the graph (that call runs eagerly); `autojit.compile(disable(fn))` runs fn
    eagerly. Usable as `@disable` and `@disable(reason=...)`. recursive=False, which in torch
    still compiles the functions fn calls, is the same here: the call around it runs eagerly."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    if not callable(fn):
        raise TypeError(f"disable expects a callable, got {type(fn).__name__}")
    return _Disabled(fn, reason)


def _compile_disabled(fn, options: dict):
    """autojit.compile of a disabled function: it runs eagerly (api.MODULE_WRAPPERS hook)."""
    if isinstance(fn, _Disabled):
        return api.CompiledFunction(fn, **{**options, "backend": "eager"})
    return None


api.MODULE_WRAPPERS.insert(0, _compile_disabled)


def is_compiling() -> bool:
    """True while autojit traces a function (autojit.compile, make_graph): code that should
    not be part of a compiled graph can test it, as with torch.compiler.is_compiling()."""
    return state.tracer is not None


def is_dynamo_compiling() -> bool:
    """The same as is_compiling: autojit's tracer is the one front end."""
    return state.tracer is not None


def is_exporting() -> bool:
    """False: autojit has no torch.export."""
    return False


def reset() -> None:
    """Forget what every compiled function compiled: its executables, graph breaks, recompile
    counts and statistics, as if it had just been made; the next call traces again. The kernel
    cache on disk is kept, as torch.compiler.reset keeps Inductor's."""
    # Compiled functions keep no registry of themselves; reset is rare, and a walk of the
    # objects the garbage collector tracks finds them all (those inside compiled modules too).
    for found in gc.get_objects():
        if issubclass(type(found), api.CompiledFunction):  # (a dead weakproxy raises on isinstance)
            found.__init__(found.fn, **found._options())


def allow_in_graph(fn):
    """`fn` unchanged: autojit's tracer already puts the ops of any function a compiled
    function calls into the graph (torch's allow_in_graph asks its bytecode analyzer to)."""
    return fn


def assume_constant_result(fn):
    """A function whose result a trace takes as a constant: while a function is traced, `fn`
    runs on real data (outside the trace) and what it returns is baked into the graph without
    a guard, as torch's assume_constant_result does; otherwise it is called as it is."""

    @functools.wraps(fn)
    def constant_result(*args, **kwargs):
        tracer = state.tracer
        if tracer is None:
            return fn(*args, **kwargs)
        state.tracer = None
        try:
            return fn(*args, **kwargs)
        finally:
            state.tracer = tracer

    return constant_result


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """The backend names autojit.compile takes; torch's debugging ones ("eager",
    "aot_eager") and autojit's "interpreter" only when `exclude_tags` does not exclude
    "debug"."""
    names = {"cpu", "cuda", "inductor"}
    if "debug" not in (exclude_tags or ()):
        names |= set(TORCH_BACKENDS) | {"interpreter"}
    return sorted(names)


_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
            "eager_then_compile")


class set_stance:  # noqa: N801 - torch's name
    """torch.compiler.set_stance: how compiled functions run from now on, as a function call,
    a context manager or a decorator (each restores the stance it found on exit):
    "default" compiles; "force_eager" runs them eagerly; "eager_on_recompile" runs a call
    eagerly where it would compile again (a function's first compile is not a recompile), and
    "fail_on_recompile" raises there instead; "eager_then_compile" runs a function's first
    call eagerly and compiles from its second on. Refused while a function is traced."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend=None) -> None:
        if state.tracer is not None:
            raise RuntimeError("Attempt to trace forbidden callable set_stance: it may not be "
                               "called inside a compiled function")
        if stance not in _STANCES:
            raise RuntimeError(f"invalid torch.compile stance '{stance}'; expected one of "
                               f"{', '.join(_STANCES)}")
        if force_backend is not None:
            raise RuntimeError("set_stance(force_backend=...): autojit has one backend per "
                               "device and does not switch them")
        self.stance = stance
        self.prior = api.STANCE[0]
        api.STANCE[0] = stance  # from the call on, as torch's

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        api.STANCE[0] = self.prior
        return False

    def __call__(self, fn):
        stance = self.stance
        api.STANCE[0] = self.prior  # as a decorator: the stance holds only inside its calls

        @functools.wraps(fn)
        def with_stance(*args, **kwargs):
            with set_stance(stance):
                return fn(*args, **kwargs)

        return with_stance
