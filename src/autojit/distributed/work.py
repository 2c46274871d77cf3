"""Work: what a collective begun with `async_op=True` returns, as torch.distributed's Work; and
the wait behind every blocking collective, which gives up after the process group's timeout.

MPI's own waits never time out: a rank that died or stopped calling collectives would leave
the others blocked for ever. So a wait here polls the requests (MPI_Test, which also moves a
non-blocking collective along) and raises DistBackendError once the group's timeout has
passed; the error is uncaught in a training script, and process_group.py's exception hook
then aborts the whole MPI job (docs/notes/distributed.md).
"""

from __future__ import annotations

import time
from datetime import timedelta


class DistError(RuntimeError):
    """An error of autojit.distributed (torch.distributed.DistError)."""


class DistBackendError(DistError):
    """An error of the transport: a collective timed out or failed
    (torch.distributed.DistBackendError)."""


class DistNetworkError(DistError):
    """A network error (torch.distributed.DistNetworkError)."""


class DistStoreError(DistError):
    """A store error (torch.distributed.DistStoreError); autojit's MPI groups have no store."""


# Spin on MPI_Test this long before sleeping between polls: collectives of a training step
# finish within it, and a rank that waits longer is waiting on a straggler or a failure.
_SPIN_SECONDS = 0.02
_SLEEP_SECONDS = 0.0002


def wait_requests(requests: list, timeout: float, what: str) -> None:
    """Wait until every request completed, polling; DistBackendError after `timeout` s."""
    pending = [request for request in requests if not request.Test()]
    if not pending:
        return
    start = time.monotonic()
    polls = 0
    while pending:
        pending = [request for request in pending if not request.Test()]
        polls += 1
        if pending and polls % 64 == 0:
            waited = time.monotonic() - start
            if waited > timeout:
                raise DistBackendError(
                    f"{what} timed out after {timeout:g} s: the other processes of the group "
                    "did not take part (a rank failed, is stuck, or runs different "
                    "collectives); set init_process_group(timeout=...) to wait longer")
            if waited > _SPIN_SECONDS:
                time.sleep(_SLEEP_SECONDS)


def seconds(timeout) -> float:
    """A timeout given as a timedelta or a number of seconds, in seconds."""
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    return float(timeout)


class Work:
    """A collective under way: `wait()` blocks until it has completed (and its results are
    in the tensors), `is_completed()` asks without blocking."""

    def __init__(self, requests: list, timeout: float, what: str, on_complete=None,
                 result=None, keep=()):
        self._requests = requests
        # The arrays MPI reads or writes until the requests complete: mpi4py's requests do not
        # hold them, and a temporary (a contiguous copy, a staging array) would be freed.
        self._keep = keep
        self._timeout = timeout
        self._what = what
        self._on_complete = on_complete  # the copies, divisions and roundings done after
        self._result = result if result is not None else []
        self._done = False
        self._exception = None

    def _complete(self) -> None:
        self._done = True
        self._requests = []
        self._keep = ()
        if self._on_complete is not None:
            finish, self._on_complete = self._on_complete, None
            finish()

    def is_completed(self) -> bool:
        """Whether the collective has completed (a poll, which also moves it along)."""
        if not self._done and all(request.Test() for request in self._requests):
            self._complete()
        return self._done

    def wait(self, timeout: timedelta | float | None = None) -> bool:
        """Block until the collective has completed; DistBackendError after `timeout` (the
        process group's when None)."""
        if not self._done:
            limit = self._timeout if timeout is None else seconds(timeout)
            try:
                wait_requests(self._requests, limit, self._what)
            except DistBackendError as error:
                self._exception = error
                raise
            self._complete()
        return True

    def synchronize(self) -> None:
        self.wait()

    def is_success(self) -> bool:
        return self._done and self._exception is None

    def exception(self):
        return self._exception

    def result(self) -> list:
        """The tensors the collective wrote (torch's Work.result)."""
        self.wait()
        return list(self._result)

    def source_rank(self) -> int:
        """For a recv from any source: the rank the data came from."""
        self.wait()
        return self._source

    _source = -1

    def __repr__(self) -> str:
        return f"<Work {self._what}, {'completed' if self._done else 'in progress'}>"


def completed_work(what: str, result=None) -> Work:
    """A Work that has completed: a traced collective's (the graph holds the exchange) or one
    that moved nothing."""
    work = Work([], 0.0, what, result=result)
    work._done = True
    return work
