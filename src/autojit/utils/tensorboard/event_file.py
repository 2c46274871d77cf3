"""The event files SummaryWriter writes: tensorboardX's FileWriter and SummaryWriter with a
synchronous event writer underneath.

tensorboardX hands events to a background thread through a multiprocessing queue, and its
flush() flushes the file without waiting for that queue: an event added just before flush() may
not be on disk after it, where torch's flush() guarantees it is. Here each event is written into
the file's buffer by the call that adds it, and the buffer goes to disk on flush() and close(),
once `max_queue` events are pending, or once `flush_secs` have passed since the last flush, as
torch's writer documents its queue. Event files are named as TensorBoard's own writer names
them (`events.out.tfevents.TIME.HOST.PID.N`), so that two files made in one second in one
folder never share a name; N has six digits, so that files made in one second sort (as
TensorBoard reads them, by name) in the order they were made past the tenth writer too.
"""

from __future__ import annotations

import itertools
import os
import time

_FILES = itertools.count()


class EventFile:
    """One event file: add_event, flush, close and reopen (a new file), as tensorboardX's
    EventFileWriter offers them, written synchronously."""

    def __init__(self, logdir: str, max_queue: int, flush_secs: float, filename_suffix: str):
        self._logdir = str(logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._suffix = filename_suffix
        os.makedirs(self._logdir, exist_ok=True)
        self._open()

    def _open(self) -> None:
        from tensorboardX.event_file_writer import EventsWriter

        self._events = EventsWriter(os.path.join(self._logdir, "events"),
                                    f".{os.getpid()}.{next(_FILES):06d}{self._suffix}")
        self._pending = 0
        self._flushed_at = time.monotonic()
        self._closed = False

    def get_logdir(self) -> str:
        return self._logdir

    def add_event(self, event) -> None:
        if self._closed:
            return
        self._events.write_event(event)
        self._pending += 1
        if (self._pending >= self._max_queue
                or time.monotonic() - self._flushed_at >= self._flush_secs):
            self.flush()

    def flush(self) -> None:
        if not self._closed:
            self._events.flush()
            self._pending = 0
            self._flushed_at = time.monotonic()

    def close(self) -> None:
        if not self._closed:
            self._events.close()
            self._closed = True

    def reopen(self) -> None:
        if self._closed:
            self._open()


def writer_classes():
    """(FileWriter, SummaryWriter): tensorboardX's classes, writing through EventFile."""
    import tensorboardX

    class FileWriter(tensorboardX.FileWriter):
        def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=""):
            # tensorboardX's __init__ would start its queue and thread: only its state is kept.
            self.event_writer = EventFile(logdir, max_queue, flush_secs, filename_suffix)
            self._default_metadata = {}

    class SummaryWriter(tensorboardX.SummaryWriter):
        def _get_file_writer(self):
            if self.all_writers is None or self.file_writer is None:
                self.file_writer = FileWriter(self.logdir, self._max_queue, self._flush_secs,
                                              self._filename_suffix)
                if self.purge_step is not None:
                    from tensorboardX.proto.event_pb2 import Event, SessionLog

                    self.file_writer.add_event(Event(step=self.purge_step,
                                                     file_version="brain.Event:2"))
                    self.file_writer.add_event(Event(
                        step=self.purge_step, session_log=SessionLog(status=SessionLog.START)))
                self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            return self.file_writer

    return FileWriter, SummaryWriter
