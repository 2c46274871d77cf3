"""DataLoader worker processes: order, worker info and seeding, iterable sharding, persistent
workers, errors and crashes raised in the main process (never a hang), timeouts, pickling.

Each test starts a few processes (forked, Python's default here; one test spawns), so the
datasets are tiny and every test has a timeout.
"""

from __future__ import annotations

import os
import pickle
import random
import time

import numpy as np
import pytest

import autojit
from autojit.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    TensorDataset,
    get_worker_info,
)
from autojit.utils.data._utils.worker import numpy_seed_words

# Three workers on a 2-core machine warn as torch does; that warning is not what these test.
pytestmark = [pytest.mark.timeout(60),
              pytest.mark.filterwarnings("ignore:This DataLoader will create")]


class Slow(Dataset):
    """Samples that take longer for some indices, so that workers answer out of order."""

    def __len__(self):
        return 13

    def __getitem__(self, index):
        time.sleep(0.004 * (index % 3 == 0))
        return index


class Seeds(Dataset):
    """Each sample reports where it was made and what the worker's generators give."""

    def __len__(self):
        return 4

    def __getitem__(self, index):
        info = get_worker_info()
        return {"index": index, "worker": info.id, "num_workers": info.num_workers,
                "seed": info.seed, "numpy": np.random.randint(0, 2 ** 31),
                "python": random.randrange(2 ** 31), "autojit": autojit.rand(1).item(),
                "pid": os.getpid(), "same_object": info.dataset is self}


class Shards(IterableDataset):
    """Yields range(n), each worker its own strided share."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class Failing(Dataset):
    def __init__(self, error):
        self.error = error

    def __len__(self):
        return 6

    def __getitem__(self, index):
        if index == 3:
            raise self.error
        return index


class Crashing(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, index):
        if index == 3:
            os._exit(7)  # the worker dies without a word
        return index


def test_batches_come_in_sampler_order_with_any_number_of_workers():
    expected = [batch.tolist() for batch in DataLoader(Slow(), batch_size=2, shuffle=True,
                                                       generator=np.random.default_rng(5))]
    for workers in (1, 3):
        loader = DataLoader(Slow(), batch_size=2, shuffle=True, num_workers=workers,
                            generator=np.random.default_rng(5))
        assert [batch.tolist() for batch in loader] == expected
    unordered = DataLoader(Slow(), batch_size=2, num_workers=2, in_order=False)
    assert sorted(sum((batch.tolist() for batch in unordered), [])) == list(range(13))


def test_worker_info_seeds_and_init_fn():
    calls = []
    loader = DataLoader(Seeds(), batch_size=None, num_workers=2,
                        generator=np.random.default_rng(0),
                        worker_init_fn=lambda worker_id: calls.append(worker_id))
    samples = list(loader)
    assert [sample["index"] for sample in samples] == [0, 1, 2, 3]
    assert [sample["worker"] for sample in samples] == [0, 1, 0, 1]  # round-robin
    assert all(sample["num_workers"] == 2 and sample["same_object"] for sample in samples)
    assert len({sample["pid"] for sample in samples} | {os.getpid()}) == 3
    base_seed = samples[0]["seed"]
    assert samples[1]["seed"] == base_seed + 1
    # The first draw of each worker's generators, as seeded from the base seed.
    for sample in samples[:2]:
        seed, worker_id = sample["seed"], sample["worker"]
        np.random.seed(numpy_seed_words(base_seed, worker_id))
        assert sample["numpy"] == np.random.randint(0, 2 ** 31)
        assert sample["python"] == random.Random(seed).randrange(2 ** 31)
        autojit.manual_seed(seed)
        assert sample["autojit"] == autojit.rand(1).item()
    assert samples[0]["numpy"] != samples[1]["numpy"]
    assert calls == []  # worker_init_fn ran in the workers, not here
    # The same generator state gives the same base seed (drawn first by every iterator).
    again = list(DataLoader(Seeds(), batch_size=None, num_workers=2,
                            generator=np.random.default_rng(0)))
    assert [sample["seed"] for sample in again] == [sample["seed"] for sample in samples]


def test_worker_init_fn_sees_its_id_and_an_error_in_it_is_raised():
    class Tagged(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            return self.tag

    def tag(worker_id):
        get_worker_info().dataset.tag = worker_id * 10

    assert [item.item() for item in DataLoader(Tagged(), num_workers=2,
                                               worker_init_fn=tag)] == [0, 10]

    def broken(worker_id):
        raise OSError(f"no disk for worker {worker_id}")

    with pytest.raises(OSError, match="Caught OSError in DataLoader worker process 0"):
        list(DataLoader(Tagged(), num_workers=1, worker_init_fn=broken))


def test_iterable_dataset_sharded_through_worker_info():
    loader = DataLoader(Shards(10), batch_size=2, num_workers=3)
    batches = [batch.tolist() for batch in loader]
    assert sorted(sum(batches, [])) == list(range(10))
    # Round-robin over the workers while they have data: worker 0 has 0, 3, 6, 9.
    assert batches[:3] == [[0, 3], [1, 4], [2, 5]]

    class Everything(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    duplicated = sum((batch.tolist() for batch in DataLoader(Everything(), batch_size=3,
                                                             num_workers=2)), [])
    assert sorted(duplicated) == [0, 0, 1, 1, 2, 2]  # torch's behaviour: a copy per worker


def test_persistent_workers_live_across_epochs():
    loader = DataLoader(Seeds(), batch_size=2, num_workers=2, persistent_workers=True,
                        prefetch_factor=1)
    first = list(loader)
    second = list(loader)
    assert [batch["index"].tolist() for batch in second] == [[0, 1], [2, 3]]
    assert {pid for batch in first for pid in batch["pid"].tolist()} == \
        {pid for batch in second for pid in batch["pid"].tolist()}
    # An epoch left early: the next one starts over with the same workers.
    iterator = iter(loader)
    next(iterator)
    assert [batch["index"].tolist() for batch in loader] == [[0, 1], [2, 3]]
    iterable = DataLoader(Shards(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert sorted(sum((b.tolist() for b in iterable), [])) == list(range(5))
    assert sorted(sum((b.tolist() for b in iterable), [])) == list(range(5))


@pytest.mark.parametrize("error,kind", [(ValueError("bad sample 3"), ValueError),
                                        (KeyError("missing"), KeyError)])
def test_an_error_in_a_worker_is_raised_with_its_traceback(error, kind):
    with pytest.raises(kind) as raised:
        list(DataLoader(Failing(error), batch_size=2, num_workers=2))
    message = str(raised.value)
    assert "in DataLoader worker process 1" in message  # indices 2, 3 went to worker 1
    assert "Original Traceback (most recent call last)" in message
    assert "__getitem__" in message and str(error.args[0]) in message


def test_a_crashed_worker_is_reported_not_waited_for():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly: worker 1 exited with code 7"):
        list(DataLoader(Crashing(), batch_size=2, num_workers=2))
    assert time.monotonic() - start < 10


def test_timeout():
    class Stuck(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            time.sleep(5)
            return index

    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        list(DataLoader(Stuck(), num_workers=1, timeout=0.3))


def test_a_batch_that_cannot_be_pickled_is_an_error():
    class Unpicklable(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            return lambda: index

    with pytest.raises(AttributeError, match="pickling the batch to send it back"):
        list(DataLoader(Unpicklable(), batch_size=None, num_workers=1))


def test_spawned_workers_and_a_dataset_that_cannot_be_pickled():
    class Local(Dataset):  # a local class: pickle cannot find it by name
        def __len__(self):
            return 2

        def __getitem__(self, index):
            return index

    with pytest.raises(RuntimeError, match=r"DataLoader: the dataset <.*Local object at .*> "
                                           r"cannot be pickled, which worker processes started "
                                           r"with 'spawn' need"):
        iter(DataLoader(Local(), num_workers=1, multiprocessing_context="spawn"))
    dataset = TensorDataset(autojit.arange(6.0), autojit.arange(6))
    loader = DataLoader(dataset, batch_size=4, num_workers=1, multiprocessing_context="spawn")
    batches = list(loader)
    assert [labels.tolist() for _, labels in batches] == [[0, 1, 2, 3], [4, 5]]
    assert batches[0][0].dtype is autojit.float32


def test_pin_memory_is_accepted_and_the_iterator_is_not_picklable():
    loader = DataLoader(Slow(), batch_size=4, pin_memory=True)
    if autojit.cuda.is_available():  # a GPU, or Numba's simulator once the CUDA tests ran
        iterator = iter(loader)
    else:
        with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no "
                                             "accelerator is found"):
            iterator = iter(loader)
    assert next(iterator).tolist() == [0, 1, 2, 3]
    with pytest.raises(NotImplementedError, match="cannot be pickled"):
        pickle.dumps(iterator)
