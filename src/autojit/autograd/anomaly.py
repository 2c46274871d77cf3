"""Anomaly detection: detect_anomaly, set_detect_anomaly, and the checks the engine runs.

While anomaly mode is on (the thread-local `state.anomaly`), graph.record (and custom Function
creation) calls `capture_forward_trace`, which keeps the Python stack of the forward call on the
new node. The engine then runs every node through `apply_with_anomaly_checks`: when a backward
function raises, or returns nan (with check_nan), a warning prints the forward traceback of the
node that failed, as torch does, and the error propagates unchanged.

Capture is cheap: it keeps (code object, line number) pairs and formats them only when an error
is reported. With anomaly mode off nothing here runs. See docs/anomaly.md.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import threading
import traceback
import warnings

import numpy as np

from ..tensor.state import state

ENABLED_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and "
                   "should only be enabled for debugging.")

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Frames in these parts of the package stand for the user's own code in a traceback (they play
# the role of torch.nn's Python modules); the rest of the package is op dispatch and autograd
# machinery, whose frames are dropped from the end of a forward trace.
_USER_FACING = tuple(_PACKAGE + part + os.sep for part in ("nn", "optim"))


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on in this thread."""
    return state.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode also checks backward results for nan."""
    return state.anomaly_check_nan


class _NumpyErrors(threading.local):
    saved = None  # NumPy's error settings from before anomaly mode was turned on


_numpy_errors = _NumpyErrors()


def set_anomaly_enabled(mode: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off in this thread (torch.set_anomaly_enabled).

    While it is on, NumPy's floating-point warnings are off in this thread: the nan and inf an
    op computes are values, which torch computes without a warning, and autojit's module filter
    (ops/registry.py) stops silencing NumPy's warnings as soon as a program records warnings
    with `simplefilter("always")`, as programs checking anomaly mode's own warnings do.
    """
    mode = bool(mode)
    if mode and _numpy_errors.saved is None:
        _numpy_errors.saved = np.seterr(all="ignore")
    elif not mode and _numpy_errors.saved is not None:
        np.seterr(**_numpy_errors.saved)
        _numpy_errors.saved = None
    state.anomaly = mode
    state.anomaly_check_nan = bool(check_nan)


class detect_anomaly:  # noqa: N801 - torch's name
    """Context manager (and decorator) that enables anomaly detection for the autograd engine.

    Inside it, every autograd node keeps the traceback of the forward call that created it; a
    backward function that fails prints that traceback in a warning before the error goes on,
    and, when check_nan is True, a backward function returning nan raises a RuntimeError naming
    it. Leaving it restores the previous mode.
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self._previous: list = []
        warnings.warn(ENABLED_WARNING, UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        self._previous.append((state.anomaly, state.anomaly_check_nan))
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc) -> bool:
        set_anomaly_enabled(*self._previous.pop())
        return False

    def __call__(self, function):
        # Used as a decorator: the mode is on during each call; the warning was given once, at
        # decoration. The stack of previous modes makes recursive calls restore correctly.
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self:
                return function(*args, **kwargs)

        return wrapper


class set_detect_anomaly:  # noqa: N801 - torch's name
    """Set anomaly detection on or off: at once when called, restored on leaving a with-block."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._previous = (state.anomaly, state.anomaly_check_nan)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        set_anomaly_enabled(*self._previous)
        return False


# ---- forward traces -----------------------------------------------------------------------------

class ForwardTrace:
    """The Python stack of the forward call that created a node, formatted on demand.

    `parent_name` and `parent` are set for nodes created while another node's backward ran
    (create_graph=True): the name and trace of that node, so that an error in double backward
    can say which forward operation induced the computation that failed. The parent's trace is
    kept rather than the parent node, so its saved tensors are not kept alive.
    """

    __slots__ = ("frames", "parent_name", "parent")

    def __init__(self, frames: list, parent_name: str | None, parent: ForwardTrace | None):
        self.frames = frames  # (code, line number) pairs, outermost first
        self.parent_name = parent_name
        self.parent = parent

    def format(self) -> str:
        """The trace as traceback.format_stack writes it: '  File "f", line N, in fn\\n  ...'."""
        summaries = []
        for code, line_number in self.frames:
            filename = code.co_filename
            linecache.checkcache(filename)
            summaries.append(traceback.FrameSummary(filename, line_number, code.co_name))
        return "".join(traceback.StackSummary.from_list(summaries).format())

    def __str__(self) -> str:
        return self.format()


class _Running(threading.local):
    """The node whose backward is running in this thread (anomaly mode only)."""

    node = None


_running = _Running()


def _is_internal(filename: str) -> bool:
    return filename.startswith(_PACKAGE) and not filename.startswith(_USER_FACING)


def capture_forward_trace(node) -> None:
    """Keep the current Python stack on `node` (`node._forward_trace`), without formatting it.

    Called only in anomaly mode. The innermost frames inside autojit's dispatch and autograd
    machinery are dropped, so the trace ends at the user's line that ran the op.
    """
    frame = sys._getframe(1)
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    frames = []
    while frame is not None:
        frames.append((frame.f_code, frame.f_lineno))
        frame = frame.f_back
    frames.reverse()
    parent = _running.node
    if parent is None:
        node._forward_trace = ForwardTrace(frames, None, None)
    else:
        node._forward_trace = ForwardTrace(frames, parent.name(), parent._forward_trace)


# ---- the engine's checks ------------------------------------------------------------------------

def apply_with_anomaly_checks(node, grads: list) -> list:
    """Run `node.apply(grads)`, reporting the node's forward trace when it fails.

    The engine calls this in anomaly mode instead of node.apply. A failure (an exception from
    the backward function, or nan in its results when check_nan is on) warns with the forward
    traceback and the chain of nodes that induced it, then the exception goes on unchanged.
    """
    previous = _running.node
    _running.node = node
    try:
        results = node.apply(grads)
        if state.anomaly_check_nan:
            _check_nan(node, results)
    except Exception:
        warn_forward_trace(node)
        raise
    finally:
        _running.node = previous
    return results


def _check_nan(node, results) -> None:
    for position, gradient in enumerate(results):
        if gradient is None:
            continue
        data = gradient._payload
        if data is None:
            # Tracing: the compiled function checks this value each time it runs.
            if state.tracer is not None and gradient.dtype.is_floating_point:
                state.tracer.nan_checks.append((gradient, node, position))
            continue
        if data.dtype.kind not in "fc":
            continue
        if np.isnan(data).any():
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {position}th output.")


def _warn(message: str, level: int) -> None:
    """A warning of the failed backward; where warnings are errors, torch prints it to stderr
    instead, so that the backward's own error is the one raised."""
    try:
        warnings.warn(message, UserWarning, stacklevel=level + 1)
    except Warning as raised:
        print(f"{type(raised).__name__}: {raised}", file=sys.stderr)


def warn_forward_trace(node) -> None:
    """Warn with the traceback of the forward call that created `node`, as torch does."""
    level = _user_stacklevel()
    trace = node._forward_trace
    if trace is None:
        _warn(f"Error detected in {node.name()}. No forward pass information available. "
              "Enable detect anomaly during forward pass for more information.", level)
        return
    _warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
          f"error:\n{trace.format()}", level)
    while trace.parent_name is not None:
        parent = trace.parent
        if parent is None:
            _warn(f"Error detected in {trace.parent_name}. No forward pass information "
                  "available. Enable detect anomaly during forward pass for more "
                  "information.", level)
            break
        _warn(f"\n\nPrevious calculation was induced by {trace.parent_name}. Traceback "
              f"of forward call that induced the previous calculation:\n"
              f"{parent.format()}", level)
        trace = parent


def _user_stacklevel() -> int:
    """The warnings stacklevel of the innermost frame outside autojit's machinery."""
    frame = sys._getframe(2)  # warn_forward_trace's caller: stacklevel 2 from there
    level = 2
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level if frame is not None else 1
