"""torch.cuda's streams and events on autojit's CUDA runtime.

autojit launches every kernel (and cuBLAS product) on the legacy default stream
(kernels.py, matmul.py), so work on the device runs in launch order whatever stream a program
names. A `Stream` is a numba.cuda stream a program may hand to other libraries (DLPack,
CuPy) and synchronize; `stream(s)` makes it the current stream for `current_stream()`; waiting
on a stream or an event is then always satisfied in order, and `synchronize()` waits for the
device. An `Event` is a numba.cuda event: `record`, `query`, `synchronize`, `wait` and
`elapsed_time` between two timed events, in milliseconds, as torch's.

Without a GPU (nor Numba's CUDA simulator) making a Stream or an Event raises torch's
RuntimeError, and current_stream() torch's AssertionError; the classes exist, as in torch's CPU
builds, for the annotations and isinstance checks of libraries.
"""

from __future__ import annotations

import threading

from .availability import driver, is_available

__all__ = ["Event", "Stream", "StreamContext", "current_stream", "default_stream",
           "set_stream", "stream"]


class Stream:
    """A CUDA stream (`torch.cuda.Stream(device=None, priority=0)`)."""

    def __init__(self, device=None, priority: int = 0, *, _stream=None):
        if not is_available():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        self.device = device
        self.priority = priority
        self._stream = _stream if _stream is not None else driver().stream()

    @property
    def cuda_stream(self) -> int:
        """The stream's handle (0 for the legacy default stream)."""
        handle = getattr(self._stream, "handle", None)
        value = getattr(handle, "value", handle)
        return int(value or 0)

    def query(self) -> bool:
        """Whether all the work on the device is done (autojit's runs on one stream)."""
        self.synchronize()
        return True

    def synchronize(self) -> None:
        """Wait until the device has done all work submitted so far."""
        self._stream.synchronize()
        driver().synchronize()

    def wait_stream(self, stream: Stream) -> None:
        """Make later work wait for `stream`'s: already so, everything runs in launch order."""

    def wait_event(self, event: Event) -> None:
        """Make later work wait for `event`: already so, in launch order."""

    def record_event(self, event: Event | None = None) -> Event:
        """Record an event on this stream (a new one if none is given) and return it."""
        event = event if event is not None else Event()
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self) -> int:
        return hash(("stream", self.cuda_stream))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event (`torch.cuda.Event(enable_timing=False, blocking=False,
    interprocess=False)`): a point in the device's work to wait for or time."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        if not is_available():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self.enable_timing = enable_timing
        try:
            self._event = driver().event(timing=enable_timing)
        except TypeError:  # Numba's CUDA simulator: its events take no option
            self._event = driver().event()
        self._recorded = False

    def record(self, stream: Stream | None = None) -> None:
        """Mark the current point of the device's work."""
        self._event.record()
        self._recorded = True

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work wait for this point: already so, in launch order."""

    def query(self) -> bool:
        """Whether the work before the recorded point is done."""
        query = getattr(self._event, "query", None)  # the simulator's events have none
        return not self._recorded or query is None or bool(query())

    def synchronize(self) -> None:
        """Wait until the work before the recorded point is done."""
        if self._recorded:
            self._event.synchronize()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to `end_event`, both recorded with timing."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        end_event.synchronize()
        return float(self._event.elapsed_time(end_event._event))

    def __repr__(self) -> str:
        return f"<torch.cuda.Event recorded={self._recorded}>"


_current = threading.local()


def default_stream(device=None) -> Stream:
    """The legacy default stream, where autojit launches its kernels."""
    if not is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    found = driver()
    # Numba's CUDA simulator has no default stream object: one of its streams stands in.
    made = getattr(found, "default_stream", found.stream)
    return Stream(device, _stream=made())


def current_stream(device=None) -> Stream:
    """The stream `stream()` set in this thread, else the default stream."""
    found = getattr(_current, "stream", None)
    return found if found is not None else default_stream(device)


def set_stream(stream: Stream) -> None:
    """Make `stream` the current stream of this thread."""
    _current.stream = stream


class StreamContext:
    """`with torch.cuda.stream(s):` `s` is the current stream inside (None: unchanged)."""

    def __init__(self, stream: Stream | None):
        self.stream = stream

    def __enter__(self):
        self._saved = getattr(_current, "stream", None)
        if self.stream is not None:
            _current.stream = self.stream
        return self.stream

    def __exit__(self, *exc) -> bool:
        _current.stream = self._saved
        return False


def stream(stream: Stream | None) -> StreamContext:
    """The context in which `stream` is the current stream."""
    return StreamContext(stream)
