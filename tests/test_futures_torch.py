"""autojit.futures against torch.futures: values, errors and their messages, then-chains,
callbacks, collect_all and wait_all, and a value set from another thread."""

from __future__ import annotations

import threading

import pytest

import autojit

torch = pytest.importorskip("torch")


def _outcomes(top) -> list:
    Future = top.futures.Future
    seen = []

    def attempt(function):
        try:
            return function()
        except Exception as error:  # noqa: BLE001 - the outcome compared
            return type(error).__name__, str(error).split("\n")[0]

    first = Future()
    seen.append(first.done())
    first.set_result(3)
    seen += [first.wait(), first.value(), first.done(), attempt(lambda: first.set_result(4))]
    failed = Future()
    failed.set_exception(ValueError("bad"))
    seen += [attempt(failed.wait), attempt(failed.value),
             attempt(lambda: failed.set_exception(3))]
    source = Future()
    doubled = source.then(lambda future: future.wait() * 2)
    broken = source.then(lambda future: 1 / 0)
    source.set_result(5)
    seen += [doubled.wait(), attempt(broken.wait)]
    a, b = Future(), Future()
    collected = top.futures.collect_all([a, b])
    seen.append(collected.done())
    a.set_result(1)
    b.set_result(2)
    seen += [[future.wait() for future in collected.wait()], top.futures.wait_all([a, b])]
    called = []
    later = Future()
    later.add_done_callback(lambda future: called.append(future.value()))
    later.set_result(9)
    later.add_done_callback(lambda future: called.append(future.value() + 1))
    seen.append(called)
    threaded = Future()
    threading.Timer(0.02, lambda: threaded.set_result("late")).start()
    seen.append(threaded.wait())
    return seen


def test_futures_behave_as_torchs():
    assert _outcomes(autojit) == _outcomes(torch)


def test_future_is_generic():
    assert autojit.futures.Future[int] is not None
    assert autojit.futures.__all__ == torch.futures.__all__
