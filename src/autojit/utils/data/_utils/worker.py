"""Worker processes, at torch.utils.data._utils.worker's path: the loop a DataLoader worker
runs, and `get_worker_info()`, which tells dataset code which worker it runs in.

A worker seeds Python's, NumPy's and autojit's generators from the loader's base seed as torch
does (Python's and autojit's with `base_seed + id`; NumPy's legacy global generator with the
four words torch derives from (id, base_seed), which are NumPy's own SeedSequence hash), runs
`worker_init_fn(id)`, then answers the main process's requests: `(task, indices)` gets the
collated batch back, pickled here (by multiprocessing's ForkingPickler, which sends CPU tensors
by their shared memory, as torch's workers do: tensor/sharing.py) so that a batch that cannot
be pickled becomes an error the main process raises instead of a reply that never comes. A
worker whose parent has died exits.
"""

from __future__ import annotations

import os
import pickle
import queue
import random
import signal
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ....tensor.creation import manual_seed
from . import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper
from .fetch import create_fetcher

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """What `get_worker_info()` returns inside a worker: its `id` (0 to num_workers - 1),
    `num_workers`, the `seed` its generators were seeded with, and its copy of the `dataset`."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The WorkerInfo of the DataLoader worker process this runs in; None in the main process.

    >>> from autojit.utils.data import get_worker_info
    >>> print(get_worker_info())
    None
    """
    return _worker_info


class ResumeIteration:
    """Sent to a persistent worker at the start of a new epoch: make a fresh fetcher."""


@dataclass(frozen=True)
class IterableDatasetStopIteration:
    """A worker's reply when its copy of an iterable dataset has no more samples."""

    worker_id: int


def numpy_seed_words(base_seed: int, worker_id: int) -> list[int]:
    """The seed of a worker's NumPy global generator, as torch computes it: NumPy's SeedSequence
    pool hash of the words (worker_id, low and high halves of base_seed, 0), four words out."""
    mask = 0xFFFFFFFF
    words = [worker_id, base_seed & mask, (base_seed >> 32) & mask, 0]
    return np.random.SeedSequence(words).generate_state(4).tolist()


def seed_worker(base_seed: int, worker_id: int) -> int:
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(numpy_seed_words(base_seed, worker_id))
    return seed


def worker_loop(iterable: bool, dataset, index_queue, data_queue, done_event,
                auto_collation: bool, collate_fn, drop_last: bool, base_seed: int, init_fn,
                worker_id: int, num_workers: int, parent_pid: int) -> None:
    """The body of worker `worker_id`'s process (see the module docstring)."""
    global _worker_info
    # Ctrl-C is the main process's to handle: it shuts the workers down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    where = f"in DataLoader worker process {worker_id}"
    seed = seed_worker(base_seed, worker_id)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    init_error = fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_error = ExceptionWrapper(where=where)  # the answer to the first request
    iteration_ended = False
    while os.getppid() == parent_pid:
        try:
            request = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
        except queue.Empty:
            continue
        if request is None:  # shut down
            break
        if isinstance(request, ResumeIteration):
            iteration_ended = False
            try:
                fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn,
                                         drop_last)
                reply = None
            except Exception:
                reply = ExceptionWrapper(where=where)
            data_queue.put(pickle.dumps((request, reply), protocol=pickle.HIGHEST_PROTOCOL))
            continue
        if done_event.is_set() or iteration_ended:
            continue
        task, indices = request
        if init_error is not None:
            reply, init_error = init_error, None
        else:
            try:
                reply = fetcher.fetch(indices)
            except StopIteration:
                if not iterable:
                    reply = ExceptionWrapper(where=where)
                else:
                    reply = IterableDatasetStopIteration(worker_id)
                    iteration_ended = True
            except Exception:
                reply = ExceptionWrapper(where=where)
        try:
            message = bytes(ForkingPickler.dumps((task, reply), pickle.HIGHEST_PROTOCOL))
        except Exception:
            message = pickle.dumps((task, ExceptionWrapper(where=f"{where} (pickling the batch "
                                                                 "to send it back)")))
        data_queue.put(message)
        del reply, request, indices
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
