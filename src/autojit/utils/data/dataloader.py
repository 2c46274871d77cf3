"""The DataLoader, at torch.utils.data.dataloader's path: it feeds a training loop batches.

A sampler (or, for an IterableDataset, the dataset itself) orders the samples, a fetcher
(_utils/fetch.py) reads and collates each batch, and the loader's iterator yields them, which
the training step then consumes eagerly or as the arguments of a compiled function. With
`num_workers=0` the iterator fetches in the calling process; with `num_workers > 0` it starts
that many worker processes (_utils/worker.py) and hands them the batches' indices round-robin,
`prefetch_factor` batches ahead per worker, and yields the results in the sampler's order
whatever order they arrive in. An error in a worker is raised in the main process with the
worker's traceback; a worker that dies makes the iterator raise instead of waiting forever.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import pickle
import queue
import signal
import time
import warnings
import weakref
from typing import Generic, TypeVar

from ... import cuda
from ._utils import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, draw_seed, resolve_generator
from ._utils.collate import default_collate, default_convert
from ._utils.fetch import create_fetcher
from ._utils.worker import (
    IterableDatasetStopIteration,
    ResumeIteration,
    get_worker_info,
    worker_loop,
)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

# torch's dataloader module exports the collate functions and get_worker_info as well.
__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


T_co = TypeVar("T_co", covariant=True)  # the type of the batches a loader yields


class _InfiniteConstantSampler:
    """The sampler of an IterableDataset: the fetcher reads the dataset, the indices only count."""

    def __iter__(self):
        while True:
            yield None


class DataLoader(Generic[T_co]):
    """Iterates over a dataset in batches, in the calling process or in worker processes.

    `DataLoader(dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
    num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
    worker_init_fn=None, multiprocessing_context=None, generator=None, *,
    prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True)`,
    with torch's meanings. `generator` is a numpy.random.Generator: shuffling and the workers'
    base seed draw from it, or from autojit's global generator when it is None.
    `num_workers > 0` loads in that many processes, started by `multiprocessing_context` (a
    start method's name or a context; Python's default when None), each `prefetch_factor`
    (default 2) batches ahead; `persistent_workers=True` keeps them between epochs; `timeout`
    bounds the wait for one batch. `pin_memory` is accepted and does nothing (batches are in
    host memory); `in_order=False` yields batches as they arrive.

    >>> import autojit
    >>> from autojit.utils.data import DataLoader, TensorDataset
    >>> dataset = TensorDataset(autojit.arange(5.0), autojit.arange(5))
    >>> loader = DataLoader(dataset, batch_size=2)
    >>> len(loader), [labels.tolist() for _, labels in loader]
    (3, [[0, 1], [2, 3], [4]])
    """

    _initialized = False
    _iterable_length = None  # an IterableDataset's len(), once len(loader) asked for it

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if generator is not None:
            resolve_generator(generator)  # reject a wrong generator now
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._initialized = True
        self._check_worker_number()

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got num_workers="
                                 f"{self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __setattr__(self, name, value) -> None:
        if self._initialized and name in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0 or not self.persistent_workers:
            return self._get_iterator()
        if self._iterator is None:
            self._iterator = self._get_iterator()
        else:
            self._iterator._reset(self)
        return self._iterator

    def _get_iterator(self):
        """A new iterator over one pass (torch's hook, which libraries' loaders override to
        wrap the iterator: torch_geometric's)."""
        if self.num_workers == 0:
            return _SingleProcessIterator(self)
        return _MultiProcessIterator(self)

    def __len__(self) -> int:
        if self._iterable:
            length = self._iterable_length = len(self.dataset)  # checked by the iterators
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else \
                    math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def _check_worker_number(self) -> None:
        if self.num_workers == 0:
            return
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
            os.cpu_count()
        if cores is not None and self.num_workers <= cores:
            return
        suggestion = ("DataLoader is not able to compute a suggested max number of worker in "
                      "current system." if cores is None else
                      f"Our suggested max number of worker in current system is {cores}, which "
                      "is smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                      f"total. {suggestion} Please be aware that excessive worker creation "
                      "might get DataLoader running slow or even freeze, lower the worker "
                      "number to avoid potential slowness/freeze if necessary.", stacklevel=3)


class _WorkerPool:
    """A loader's worker processes and queues, shut down once: by the iterator when a pass
    ends or fails, or by a finalizer when the iterator is dropped. It is kept apart from the
    iterator so that the finalizer does not hold the iterator alive, and so that the queues
    are still open then (a queue collected along with the iterator closes its feeder thread
    first, and the workers' stop request would never be sent)."""

    def __init__(self, context):
        self.result_queue = context.Queue()
        self.done_event = context.Event()
        self.index_queues: list = []
        self.workers: list = []
        self.closed = False
        self.owner = os.getpid()

    def shutdown(self) -> None:
        # A process forked later (another loader's worker) inherits the finalizer: only the
        # process that started the workers stops them.
        if self.closed or os.getpid() != self.owner:
            return
        self.closed = True
        self.done_event.set()
        for index_queue in self.index_queues:
            try:
                index_queue.put(None)
            except (OSError, ValueError):
                pass
        # A worker idles at most MP_STATUS_CHECK_INTERVAL before it reads the stop request; one
        # still busy after that (a sample that takes long) is stopped.
        deadline = time.monotonic() + 4 * MP_STATUS_CHECK_INTERVAL
        for worker in self.workers:
            worker.join(timeout=max(deadline - time.monotonic(), 0.0))
            if worker.is_alive():
                worker.terminate()
                worker.join(timeout=1)
        for index_queue in self.index_queues:
            index_queue.cancel_join_thread()
            index_queue.close()
        self.result_queue.cancel_join_thread()
        self.result_queue.close()


def _how_it_ended(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"was killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


class _BaseIterator:
    """What both iterators share: the sampler's pass, and the count checked against len()."""

    def __init__(self, loader: DataLoader):
        self._loader = loader
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._drop_last = loader.drop_last
        self._timeout = loader.timeout
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._num_workers = loader.num_workers
        self._iterable_length = loader._iterable_length
        # Drawn by every iterator, as torch's are, so that the same generator state gives the
        # same shuffled order whatever num_workers is; workers seed from it (_utils/worker.py).
        self._base_seed = draw_seed(loader.generator)
        if loader.pin_memory and not cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._iterable_length is not None and \
                self._num_yielded > self._iterable_length:
            message = (f"Length of IterableDataset {self._dataset} was reported to be "
                       f"{self._iterable_length}(when accessing len(dataloader)), but "
                       f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                message += ("For multiprocessing data-loading, this could be caused by not "
                            "properly configuring the IterableDataset replica at each worker.")
            warnings.warn(message, stacklevel=2)
        return data

    def _next_data(self):
        raise NotImplementedError

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        """Start another pass of the sampler (torch's name; persistent workers are kept)."""
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._iterable_length = loader._iterable_length

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessIterator(_BaseIterator):
    def __init__(self, loader: DataLoader):
        super().__init__(loader)
        self._fetcher = create_fetcher(self._iterable, self._dataset, self._auto_collation,
                                       self._collate_fn, self._drop_last)

    def _next_data(self):
        return self._fetcher.fetch(next(self._sampler_iter))  # StopIteration ends the pass


class _MultiProcessIterator(_BaseIterator):
    """Worker processes fed through one index queue each, answering on one shared queue.

    Tasks are numbered as they are sent; `_pending` maps a task not yet yielded to its worker
    (and to its batch once that arrived early), so batches are yielded in task order.
    """

    def __init__(self, loader: DataLoader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        self._in_order = loader.in_order
        context = loader.multiprocessing_context or multiprocessing.get_context()
        if context.get_start_method() != "fork":
            self._check_picklable(loader, context.get_start_method())
        self._pool = pool = _WorkerPool(context)
        self._result_queue, self._index_queues = pool.result_queue, pool.index_queues
        self._workers = pool.workers
        weakref.finalize(self, pool.shutdown)
        try:
            for worker_id in range(self._num_workers):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()  # never block exit on an unread request
                worker = context.Process(
                    target=worker_loop, daemon=True,
                    args=(self._iterable, self._dataset, index_queue, pool.result_queue,
                          pool.done_event, self._auto_collation, self._collate_fn,
                          self._drop_last, self._base_seed, loader.worker_init_fn, worker_id,
                          self._num_workers, os.getpid()))
                worker.start()
                pool.index_queues.append(index_queue)
                pool.workers.append(worker)
        except BaseException:
            pool.shutdown()
            raise
        self._start_pass(first=True)

    @staticmethod
    def _check_picklable(loader: DataLoader, method: str) -> None:
        # Under spawn and forkserver the workers receive these pickled; say which one fails.
        for what, value in (("dataset", loader.dataset), ("collate_fn", loader.collate_fn),
                            ("worker_init_fn", loader.worker_init_fn)):
            try:
                pickle.dumps(value)
            except Exception as error:
                raise RuntimeError(
                    f"DataLoader: the {what} {value!r} cannot be pickled, which worker "
                    f"processes started with {method!r} need ({type(error).__name__}: "
                    f"{error}); define it at the top level of a module, or use "
                    "multiprocessing_context='fork'") from error

    def _start_pass(self, first: bool) -> None:
        self._send_index = 0  # the next task's number
        self._receive_index = 0  # the next task to yield
        self._pending: dict[int, tuple] = {}
        self._worker_active = [True] * self._num_workers
        self._next_worker = itertools.cycle(range(self._num_workers))
        if not first:  # persistent workers: make each one's fetcher anew, wait for the answers
            for index_queue in self._index_queues:
                index_queue.put(ResumeIteration())
            remaining = self._num_workers
            while remaining:
                message, reply = self._get_message()
                if isinstance(message, ResumeIteration):
                    remaining -= 1
                    if isinstance(reply, ExceptionWrapper):
                        self._shutdown_workers()
                        reply.reraise()
        for _ in range(self._prefetch_factor * self._num_workers):
            self._send_task()

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        """A new pass of the sampler over the same (persistent) workers."""
        super()._reset(loader, first_iter)
        self._start_pass(first=False)

    def _send_task(self) -> None:
        if not any(self._worker_active):
            return
        try:
            indices = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._next_worker)
            if self._worker_active[worker_id]:
                break
        self._index_queues[worker_id].put((self._send_index, indices))
        self._pending[self._send_index] = (worker_id,)
        self._send_index += 1

    def _get_message(self):
        """The next reply from any worker; raises if the timeout passes or a worker has died."""
        waited = 0.0
        while True:
            interval = MP_STATUS_CHECK_INTERVAL if self._timeout <= 0 else \
                min(MP_STATUS_CHECK_INTERVAL, self._timeout - waited)
            try:
                return pickle.loads(self._result_queue.get(timeout=max(interval, 0.0)))
            except queue.Empty:
                waited += interval
            dead = [worker for worker, active in zip(self._workers, self._worker_active,
                                                     strict=True)
                    if active and not worker.is_alive()]
            if dead:
                self._shutdown_workers()
                details = "; ".join(f"worker {self._workers.index(worker)} "
                                    f"{_how_it_ended(worker.exitcode)}" for worker in dead)
                pids = ", ".join(str(worker.pid) for worker in dead)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly: "
                                   f"{details}")
            if self._timeout > 0 and waited >= self._timeout:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            # Skip the tasks already yielded (out of order) and those of workers whose iterable
            # dataset has ended, whose answers never come.
            while self._receive_index < self._send_index:
                entry = self._pending.get(self._receive_index)
                if entry is not None and (len(entry) == 2 or self._worker_active[entry[0]]):
                    break
                self._pending.pop(self._receive_index, None)
                self._receive_index += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            entry = self._pending[self._receive_index]
            if len(entry) == 2:  # it arrived earlier, out of order
                del self._pending[self._receive_index]
                self._receive_index += 1
                return self._process(entry[1])
            task, data = self._get_message()
            if isinstance(task, ResumeIteration):
                continue
            if isinstance(data, IterableDatasetStopIteration):
                self._worker_active[data.worker_id] = False
                if not self._persistent:
                    self._index_queues[data.worker_id].put(None)
                self._pending.pop(task, None)
                self._send_task()
                continue
            if task == self._receive_index or not self._in_order:
                del self._pending[task]
                return self._process(data)
            self._pending[task] += (data,)

    def _process(self, data):
        self._send_task()
        if isinstance(data, ExceptionWrapper):
            self._shutdown_workers()
            data.reraise()
        return data

    def _shutdown_workers(self) -> None:
        self._pool.shutdown()


# torch's names for the iterators, which libraries subclass or annotate with.
_BaseDataLoaderIter = _BaseIterator
_SingleProcessDataLoaderIter = _SingleProcessIterator
_MultiProcessingDataLoaderIter = _MultiProcessIterator
