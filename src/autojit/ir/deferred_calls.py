"""Progress bars inside a traced function: their calls made by each run, their state never traced.

A tqdm bar updated inside a compiled step (`bar.set_postfix(loss=loss.item())`,
`bar.update(1)`) ran tqdm's own code while the step was traced: its timers, its adaptive
`miniters` and the text of the postfix were decisions and state of the trace, so the next call
found them changed and traced again, until the function gave up and ran eagerly. Such a call
only shows something outside the program, as a print does (ir/printing.py). While a function
is traced (PrintCapture, on the tracing thread), `install` makes these methods of the classes
below effects of the executable (CallEffects, made again by each run with that run's values,
after its other side effects), and the bar's state is then no part of the trace:

- reading anything else of such an object while tracing (`bar.n`, iterating over it, making
  one) is a graph break naming it: a deferred update has not happened yet when the trace
  reads it, so what the trace saw would not be what eager sees;
- the guards' walk over Python state sees such an object only by identity
  (compiler/reachability.py, `opaque`): a new bar (a new epoch's) is a new trace, whose
  effects update that bar; its counters and timers are no guards.

A class is found by its module only where the program imported that module already.
"""

from __future__ import annotations

import sys
import threading

from ..tensor.graph_break import graph_break

# (module, class) -> the methods whose calls are deferred. Subclasses that override one of them
# (tqdm.notebook's, tqdm.rich's) have their own method deferred too.
DEFERRED = {
    ("tqdm.std", "tqdm"): ("update", "set_postfix", "set_postfix_str", "set_description",
                           "set_description_str", "refresh", "write"),
}


# Every deferred method's name: text formatted from a traced value and handed to one of them
# (`bar.set_description(f"loss {loss.item():.3f}")`) takes each run's value, as a print's does,
# where the receiver is such an object (ir/source_uses.py, ir/bytecode_uses.py).
METHOD_NAMES = frozenset(name for methods in DEFERRED.values() for name in methods)


def takes_each_runs_text(receiver, method: str) -> bool:
    """Whether `receiver.method(text)` is a deferred call: the receiver an instance (or, for a
    class method, a subclass) of a DEFERRED class that defers `method`."""
    for base, methods in _bases():
        if method in methods and (isinstance(receiver, base) or (
                isinstance(receiver, type) and issubclass(receiver, base))):
            return True
    return False


def _bases() -> list:
    """(class, method names) of each DEFERRED class whose module is imported."""
    found = []
    for (module_name, class_name), methods in DEFERRED.items():
        module = sys.modules.get(module_name)
        base = getattr(module, class_name, None) if module is not None else None
        if isinstance(base, type):
            found.append((base, methods))
    return found


def _classes() -> list:
    """_bases with the subclasses of each class too."""
    found, seen = [], set()
    for base, methods in _bases():
        pending = [base]
        while pending:
            kind = pending.pop()
            if kind not in seen:  # a class reached twice (two bases) is replaced once
                seen.add(kind)
                found.append((kind, methods))
                pending.extend(kind.__subclasses__())
    return found


def opaque_classes() -> tuple:
    """The DEFERRED classes whose modules are imported: the guards' walk sees their instances
    by identity only."""
    return tuple(base for base, _ in _bases())


class Deferral:
    """The DEFERRED classes' methods replaced while a trace runs (`install`, then `remove`):
    on the tracing thread each call is appended to `effects` as `make_effect(method, args,
    kwargs)`; on other threads, and outside the trace, the methods run as they are."""

    def __init__(self, effects: list, make_effect, thread: int):
        self._effects, self._make_effect, self._thread = effects, make_effect, thread
        self._saved: list = []  # (class, name, the class's own entry or None)
        # While installed: a replacement that outlives its trace (the method an inner trace
        # found replaced by an outer one, kept by the inner's effects) calls through after.
        self.active = False

    def _defers(self) -> bool:
        return self.active and threading.get_ident() == self._thread

    def install(self) -> None:
        self.active = True
        for kind, methods in _classes():
            for name in methods:
                if name in kind.__dict__:
                    self._replace(kind, name, self._deferring(kind, name))
        for kind, methods in _bases():
            self._replace(kind, "__getattribute__", _guard(kind, methods, self._thread))

    def remove(self) -> None:
        self.active = False
        for kind, name, entry in reversed(self._saved):
            if entry is None:
                delattr(kind, name)
            else:
                setattr(kind, name, entry)
        self._saved.clear()

    def _replace(self, kind, name: str, replacement) -> None:
        self._saved.append((kind, name, kind.__dict__.get(name)))
        setattr(kind, name, replacement)

    def _deferring(self, kind, name: str):
        entry = kind.__dict__[name]
        deferral = self
        if isinstance(entry, classmethod):  # tqdm.write(text): a print of its own
            function = entry.__func__

            def deferred_class_call(cls, *args, **kwargs):
                if not deferral._defers():
                    return function(cls, *args, **kwargs)
                if kwargs.get("file") not in (None, sys.stdout, sys.stderr):
                    # as print's: a stream the function could read back within the call
                    graph_break(f"{cls.__name__}.{name}(file=...) to a stream other than "
                                "sys.stdout or sys.stderr", needs_data=False)
                deferral._effects.append(deferral._make_effect(function, (cls, *args), kwargs))
                return None

            return classmethod(deferred_class_call)
        def deferred_call(self, *args, **kwargs):
            if not deferral._defers():
                return entry(self, *args, **kwargs)
            deferral._effects.append(deferral._make_effect(entry, (self, *args), kwargs))
            return None

        deferred_call.__name__ = deferred_call.__qualname__ = name
        return deferred_call


def _guard(kind, methods: tuple, thread: int):
    """A DEFERRED class's `__getattribute__` while tracing: its deferred methods and dunder
    names read as usual; anything else, read on the tracing thread, is a graph break."""
    inner = kind.__getattribute__
    allowed = frozenset(methods)

    def __getattribute__(self, name):
        if name in allowed or name.startswith("__") or threading.get_ident() != thread:
            return inner(self, name)
        graph_break(f"reading {kind.__name__}.{name} of a progress bar inside a compiled "
                    "function: its updates there are made after each run, so only its "
                    f"methods {', '.join(sorted(allowed))} can be called there",
                    needs_data=False)

    return __getattribute__
