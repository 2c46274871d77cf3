"""autojit.futures: torch.futures' Future, a value that another thread or a callback sets
later, with `wait`, `then` and `add_done_callback`, and `collect_all` and `wait_all` over
several. Libraries use it for asynchronous work (captum's attributions, torch.distributed's
work handles, RPC); here it is a plain thread-safe future on a condition variable, as torch's
is on the CPU.
"""

from __future__ import annotations

import threading
import traceback
from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
S = TypeVar("S")


class Future(Generic[T]):
    """A value set once, later (`set_result` or `set_exception`), that `wait()` waits for and
    the callbacks given to `then` and `add_done_callback` receive, as torch.futures.Future.
    `devices` is accepted for torch's signature: autojit's futures hold no CUDA events."""

    def __init__(self, *, devices=None):
        self._condition = threading.Condition()
        self._done = False
        self._value = None
        self._error: BaseException | None = None
        self._callbacks: list = []
        self._devices = list(devices) if devices is not None else []

    def done(self) -> bool:
        """Whether the value (or an error) is set."""
        return self._done

    def wait(self) -> T:
        """Block until the value is set; return it, or raise the error set instead."""
        with self._condition:
            while not self._done:
                self._condition.wait()
        return self.value()

    def value(self) -> T:
        """The value, without waiting (raises the error set instead); call it after wait() or
        in a callback."""
        if not self._done:
            raise RuntimeError("Future.value() was called before the Future completed: call "
                               "wait() first, or read it in a callback given to then()")
        if self._error is not None:
            raise self._error
        return self._value

    def then(self, callback) -> Future[S]:
        """A new Future set to `callback(self)` once this one completes (or to the error the
        callback raised, as a RuntimeError naming it, as torch's does)."""
        chained: Future = Future(devices=self._devices)

        def run(future: Future) -> None:
            try:
                result = callback(future)
            except Exception as error:  # noqa: BLE001 - handed to the chained future
                text = "".join(traceback.format_exception_only(type(error), error)).strip()
                failure = RuntimeError(f"Got the following error when running the callback: "
                                       f"{text}")
                failure.__cause__ = error
                chained.set_exception(failure)
            else:
                chained.set_result(result)

        self.add_done_callback(run)
        return chained

    def add_done_callback(self, callback) -> None:
        """Call `callback(self)` once this Future completes (now, if it has); its result is
        dropped. An error it raises is reported and not raised, as torch does."""
        with self._condition:
            if not self._done:
                self._callbacks.append(callback)
                return
        self._run(callback)

    def set_result(self, result: T) -> None:
        """Set the value, wake the waiters and run the callbacks; a second set raises."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete with an error that wait() and value() raise."""
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, value, error) -> None:
        with self._condition:
            if self._done:
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._condition.notify_all()
        for callback in callbacks:
            self._run(callback)

    def _run(self, callback) -> None:
        try:
            callback(self)
        except Exception:  # noqa: BLE001 - torch logs a callback's error and goes on
            traceback.print_exc()

    def __repr__(self) -> str:
        return f"<Future {'done' if self._done else 'pending'}>"


def collect_all(futures: list) -> Future[list]:
    """A Future set, once every one of `futures` completes, to the list of those futures."""
    futures = list(futures)
    collected: Future = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        collected.set_result([])
        return collected

    def one_done(_future: Future) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            collected.set_result(futures)

    for future in futures:
        future.add_done_callback(one_done)
    return collected


def wait_all(futures: list) -> list:
    """Wait for every future and return their values (the first error is raised)."""
    return [future.wait() for future in collect_all(futures).wait()]
