"""Printing inside a compiled function: the values of each call, printed when the call runs.

While a function is traced its tensors have no values, so `print(loss)` or
`print(f"loss {loss:.4f}")` cannot print them then. Instead (as `jax.debug.print` does):

- formatting a symbolic tensor (`str`, `repr`, f-strings, `format`) gives a *token*, a short
  string standing for "this value, formatted so", and makes the value a "print" output of the
  graph;
- `print` itself is intercepted while tracing (on the tracing thread only): each call, tokens
  or not, becomes a print effect of the executable and prints nothing now;
- a logging call (`Logger._log`, which `log.info(...)` reaches once the level lets it
  through) is intercepted the same way: a LogEffect, whose record each run emits with that
  run's message and arguments;
- `warnings.warn` is intercepted the same way: a WarningEffect, which each run warns again
  through the warning filters and the calling module's registry, as eager's call does (so a
  "default" filter shows it once, an "always" filter on every call); the compiler's own
  warnings about the trace are not effects of the function and pass through;
- a call of one of autojit's own functions that only write outside the program (the
  SummaryWriter's `add_scalar` and the other `add_*` methods) is deferred the same way
  (`defer`): a CallEffect, which each run makes with that run's values; so are a progress
  bar's updates (tqdm's `update`, `set_postfix`, ...: ir/deferred_calls.py);
- every run of the executable replays its print, log, call and warning effects in order,
  after its other side effects, with each token replaced by that run's value formatted as
  eager does.

So a compiled function prints and logs on every call what eager does, once per call. Tokens
are given only where the formatted text reaches nothing but such places, a return or a store
into Python state (ir/source_uses.py reads the source to tell); text that Python may decide
on is made from the traced call's value instead (ir/trace.py), or for a tensor is a graph
break naming the line. A print to a stream other than stdout and stderr, which the function
could read back, is a graph break too. See docs/notes/symbolic-scalars.md.
"""

from __future__ import annotations

import builtins
import logging
import os
import re
import sys
import threading
import warnings

from ..tensor import once
from ..tensor.graph_break import graph_break, user_frame
from ..tensor.symbolic import PRINTING, is_symbolic, user_text
from .deferred_calls import Deferral

# The compiler's frames stand between a traced function and its caller (not eager's).
_COMPILER_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "compiler") + os.sep

# The format spec of a formatted `.tolist()`: printed as the Python list.
LIST_SPEC = "\0tolist"
_TOKEN = "\u27e8autojit tensor {}\u27e9"
TOKEN_MARK = "\u27e8autojit tensor "  # in text made by formatting a traced value
_TOKEN_PATTERN = re.compile("\u27e8autojit tensor (\\d+)\u27e9")


class Formatted:
    """How one token's value is formatted: for a tensor, its output name, format spec (None:
    the repr; a string: `format(value.item(), spec)`, as a one-element tensor formats) and the
    autograd suffix eager's repr shows (`grad_fn=<MulBackward0>`, or ""); for a symbolic
    scalar (tensor/symbolic.py), the scalar itself (`output` is None), formatted with `spec`
    from the value it has on each run; and where the user's code formatted it."""

    __slots__ = ("output", "spec", "history", "location", "scalar")

    def __init__(self, output: str | None, spec: str, history: str | None, location,
                 scalar=None):
        self.output, self.spec, self.history, self.location = output, spec, history, location
        self.scalar = scalar

class LogEffect:
    """A logging call made while tracing (`log.info("loss %.3f", loss.item())`), emitted by
    each run with that run's values: the logger, level, message and arguments (which may hold
    symbolic scalars, traced tensors and tokens; compiler/tracing.py gives `templates`, their
    result templates), `extra`, and the user's (file, line, function) the record names."""

    __slots__ = ("logger", "level", "msg", "args", "extra", "where", "templates")

    def __init__(self, logger, level: int, msg, args, extra, where):
        self.logger, self.level, self.msg, self.args = logger, level, msg, args
        self.extra, self.where, self.templates = extra, where, None

    def emit(self, msg, args) -> None:
        filename, line, function = self.where
        logger = self.logger
        record = logger.makeRecord(logger.name, self.level, filename, line, msg, args, None,
                                   function, self.extra, None)
        logger.handle(record)


class CallEffect:
    """A call of a function whose only effect is outside the program (a SummaryWriter's
    `add_scalar("loss", loss.item(), step)`) made while tracing (`defer`), made again by each
    run with that run's values: the function, its arguments (which may hold symbolic scalars
    and traced tensors; compiler/tracing.py gives `templates`, their result templates)."""

    __slots__ = ("function", "args", "kwargs", "templates")

    def __init__(self, function, args: tuple, kwargs: dict):
        self.function, self.args, self.kwargs, self.templates = function, args, kwargs, None

    def emit(self, args, kwargs) -> None:
        self.function(*args, **kwargs)


def defer(function, args: tuple, kwargs: dict) -> bool:
    """While a function is traced on this thread: make `function(*args, **kwargs)` an effect
    of the executable, which each run calls after its other side effects with its own values
    (a tensor, a `.item()`), and return True; else False (the caller runs it now). For the
    functions of autojit's own libraries that only write outside the program (the
    SummaryWriter's methods), as print and logging are."""
    from ..tensor.state import state

    tracer = state.tracer
    capture = getattr(tracer, "prints", None) if tracer is not None else None
    if capture is None or threading.get_ident() != capture._thread:
        return False
    capture.effects.append(CallEffect(function, args, kwargs))
    return True


def _install() -> None:
    """autograd's record_function defers its ranges here while a function is traced."""
    from ..autograd import profiler

    profiler.DEFER = defer


_install()


class WarningEffect:
    """A `warnings.warn` call made while tracing, warned again by each run: its message (a
    text, which may hold tokens, or a Warning instance), category, and the place eager's call
    attributes it to: (file, line, globals) in the traced code, or, for a stacklevel that
    reaches past the compiled function, the user's frame that calls it on each run and `above`
    levels up."""

    __slots__ = ("message", "category", "frame", "above", "once")

    def __init__(self, message, category, frame, above: int | None, once=None):
        self.message, self.category, self.frame, self.above = message, category, frame, above
        self.once = once  # the key of a once-per-process warning (tensor/once.py), or None

    def emit(self, message) -> None:
        if self.once is not None:
            if self.once in once.given:
                return
            once.given.add(self.once)
        place = self.frame
        if self.above is not None:
            frame = user_frame()
            for _ in range(self.above):
                if frame is None or frame.f_back is None:
                    break
                frame = frame.f_back
            if frame is None:
                warnings.warn(message, self.category, stacklevel=2)
                return
            place = _place(frame)
        filename, line, globals_ = place
        warnings.warn_explicit(message, self.category, filename, line,
                               globals_.get("__name__", "<string>"),
                               globals_.setdefault("__warningregistry__", {}), globals_)


def _place(frame) -> tuple:
    """(file, line, globals) of a frame as it stands now."""
    return frame.f_code.co_filename, frame.f_lineno, frame.f_globals


def _warning_place(stacklevel: int, depth: int = 2) -> tuple:
    """(place, above) for `warnings.warn(..., stacklevel=stacklevel)` called `depth` frames
    below this function: the frames of the compiler between the traced function and its caller
    are not eager's, so a level that reaches them is counted from the caller of each run."""
    frame = sys._getframe(depth)
    for level in range(max(stacklevel, 1) - 1):
        parent = frame.f_back
        if parent is None:
            break
        if os.path.abspath(parent.f_code.co_filename).startswith(_COMPILER_DIR):
            return None, max(stacklevel, 1) - 2 - level
        frame = parent
    return _place(frame), None


def _caller_of_logging():
    """The frame that called the logging module (as a LogRecord names it): the innermost
    outside autojit and logging."""
    frame = user_frame()
    logging_file = os.path.normcase(logging.__file__)
    while frame is not None and os.path.normcase(frame.f_code.co_filename) == logging_file:
        frame = frame.f_back
    return frame


class PrintCapture:
    """Installed around a trace: collects formatted tensors, print calls and logging calls
    (on the tracing thread; other threads print and log as usual)."""

    def __init__(self):
        self.formatted: list[Formatted] = []
        # (texts, sep, end, file, flush) for each print, and LogEffects, in the call's order
        self.effects: list = []
        self.consumed: set = set()
        self._thread = threading.get_ident()
        self._original = None
        self._original_log = None
        self._original_warn = None

    def token(self, output: str | None, spec: str | None, history: str, location,
              scalar=None) -> str:
        self.formatted.append(Formatted(output, spec, history, location, scalar))
        return _TOKEN.format(len(self.formatted) - 1)

    def __enter__(self):
        self._original = builtins.print
        self._original_log = logging.Logger._log
        original, original_log, capture = self._original, self._original_log, self

        def traced_print(*args, sep=" ", end="\n", file=None, flush=False):
            if threading.get_ident() != capture._thread:
                return original(*args, sep=sep, end=end, file=file, flush=flush)
            if file is not None and file is not sys.stdout and file is not sys.stderr:
                # Another stream (a StringIO, a file) can be read back within the call,
                # which a print made after the run would not have written yet.
                graph_break("print(file=...) to a stream other than sys.stdout or sys.stderr",
                            needs_data=False)
            PRINTING[0] += 1
            try:
                texts = [user_text(arg, sink=True) if is_symbolic(arg) else str(arg)
                         for arg in args]
            finally:
                PRINTING[0] -= 1
            for text in (*texts, str(sep), str(end)):
                capture.consumed.update(int(n) for n in _TOKEN_PATTERN.findall(text))
            capture.effects.append((texts, sep, end, file, flush))
            return None

        def traced_log(logger, level, msg, args, exc_info=None, extra=None, stack_info=False,
                       stacklevel=1):
            if threading.get_ident() != capture._thread:
                return original_log(logger, level, msg, args, exc_info, extra, stack_info,
                                    stacklevel)
            if exc_info or stack_info:
                graph_break("logging with exc_info or stack_info while tracing",
                            needs_data=False)
            frame = _caller_of_logging()
            where = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name) \
                if frame is not None else ("(unknown file)", 0, "(unknown function)")
            capture.effects.append(LogEffect(logger, level, msg, args, extra, where))
            return None

        original_warn = self._original_warn = warnings.warn

        def traced_warn(message, category=None, stacklevel=1, source=None, **options):
            kind = message.__class__ if isinstance(message, Warning) else \
                category if category is not None else UserWarning
            if threading.get_ident() != capture._thread or options or \
                    kind.__module__.startswith("autojit.compiler"):
                return original_warn(message, category, stacklevel + 1, source, **options)
            if isinstance(message, str):
                capture.consumed.update(int(n) for n in _TOKEN_PATTERN.findall(message))
            capture.effects.append(WarningEffect(message, kind, *_warning_place(stacklevel)))
            return None

        builtins.print = traced_print
        logging.Logger._log = traced_log
        warnings.warn = traced_warn
        # progress bars' updates (tqdm's): deferred calls, their state no part of the trace
        self._deferral = Deferral(self.effects, CallEffect, self._thread)
        self._deferral.install()
        return self

    def __exit__(self, *exc) -> None:
        builtins.print = self._original
        logging.Logger._log = self._original_log
        warnings.warn = self._original_warn
        self._deferral.remove()

    def capture_once(self, key, message, category, stacklevel: int) -> bool:
        """A once-per-process warning (tensor/once.py) given while tracing: an effect the first
        run gives, at most one per key; False on another thread (warned as usual)."""
        if threading.get_ident() != self._thread:
            return False
        if all(effect.once != key for effect in self.effects
               if isinstance(effect, WarningEffect)):
            self.effects.append(WarningEffect(message, category,
                                              *_warning_place(stacklevel, 3), once=key))
        return True

    def escaped(self):
        """The first formatted tensor whose token did not reach a print call, or None."""
        for number, formatted in enumerate(self.formatted):
            if number not in self.consumed:
                return formatted
        return None


def token_numbers(text: str) -> list:
    """The numbers of the tokens in `text`."""
    return [int(number) for number in _TOKEN_PATTERN.findall(text)] if "\u27e8" in text else []


def fill_tokens(text: str, formatted: list, values: dict, binding, cache: dict) -> str:
    """`text` with each token replaced by this run's value formatted as eager formats it:
    `values` maps a tensor's output name to this run's Tensor, `binding` gives the symbolic
    scalars' symbols their values (compiler/executable.py)."""
    if "\u27e8" not in text:
        return text

    def replace(match) -> str:
        number = int(match.group(1))
        found = cache.get(number)
        if found is None:
            entry = formatted[number]
            if entry.scalar is not None:
                value = entry.scalar.evaluate(binding)
                found = str(value) if entry.spec == LIST_SPEC else format(value, entry.spec)
            else:
                found = format_value(values[entry.output], entry.spec, entry.history)
            cache[number] = found
        return found

    return _TOKEN_PATTERN.sub(replace, text)


def replay_prints(effects: list, formatted: list, values: dict, binding=None,
                  build=None) -> None:
    """Print a run's print effects (see fill_tokens), and emit its log records: `build` gives
    a LogEffect's (message, arguments) in this run from its templates."""
    if not effects:
        return
    cache: dict = {}
    for effect in effects:
        if isinstance(effect, (LogEffect, CallEffect)):
            effect.emit(*build(effect.templates))
            continue
        if isinstance(effect, WarningEffect):
            message = effect.message
            effect.emit(fill_tokens(message, formatted, values, binding, cache)
                        if isinstance(message, str) else message)
            continue
        texts, sep, end, file, flush = effect
        print(*(fill_tokens(item, formatted, values, binding, cache) for item in texts),
              sep=sep, end=end, file=file, flush=flush)


def format_value(tensor, spec: str | None, history: str) -> str:
    """The tensor as eager formats it: its repr (with the autograd suffix it had while
    traced), or `format(tensor.item(), spec)` for a 0-d tensor in an f-string."""
    if spec == LIST_SPEC:
        return str(tensor.tolist())
    if spec is not None:
        return tensor.item().__format__(spec)
    from ..tensor.printing import tensor_repr

    return tensor_repr(tensor, history=history)
