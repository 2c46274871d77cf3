"""autojit.utils.data against torch.utils.data: the samplers whose order torch's algorithm fixes
without its random generator, collation's structures and dtypes, random_split's lengths, and
the worker seed that NumPy's global generator gets."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import autojit
from autojit.utils import data

torch = pytest.importorskip("torch")
from torch.utils import data as torch_data  # noqa: E402

Point = collections.namedtuple("Point", "x y")


def _plain(value):
    """A structure with tensors replaced by (dtype name, values), for comparing the two."""
    if isinstance(value, (autojit.Tensor, torch.Tensor)):
        return (str(value.dtype).split(".")[-1], value.tolist())
    if isinstance(value, dict):
        return (type(value).__name__, {key: _plain(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_plain(item) for item in value])
    return value


def _samples(module):
    return [
        [{"a": 1.5, "b": (2, True), "c": [np.float32(0.5), np.int32(3)], "d": "x"},
         {"a": 2.5, "b": (3, False), "c": [np.float32(1.5), np.int32(4)], "d": "y"}],
        [Point(np.arange(3.0), np.ones((2, 2), dtype=np.float32)),
         Point(np.arange(3.0) + 1, np.zeros((2, 2), dtype=np.float32))],
        [(module.ones(2), 1), (module.zeros(2), 2)],
        [np.int64(5), np.int64(6)],
        [b"raw", b"bytes"],
        [[1, 2], [3, 4]],
    ]


@pytest.mark.parametrize("case", range(6))
def test_default_collate_matches_torch(case):
    ours = data.default_collate(_samples(autojit)[case])
    theirs = torch_data.default_collate(_samples(torch)[case])
    assert _plain(ours) == _plain(theirs)


def test_default_convert_matches_torch():
    sample = {"x": np.arange(3), "y": (np.float32(2.0), "label"), "z": Point(np.ones(2), 3)}
    assert _plain(data.default_convert(sample)) == _plain(torch_data.default_convert(sample))


def test_collate_errors_match_torch():
    for bad in ([object(), object()], [np.array(["a"]), np.array(["b"])]):
        with pytest.raises(TypeError) as theirs:
            torch_data.default_collate(bad)
        with pytest.raises(TypeError) as ours:
            data.default_collate(bad)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        data.default_collate([[1, 2], [3]])


@pytest.mark.parametrize("size,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 4, False),
                                                     (12, 4, False)])
def test_distributed_sampler_without_shuffle_matches_torch(size, replicas, drop_last):
    for rank in range(replicas):
        ours = data.DistributedSampler(range(size), replicas, rank, shuffle=False,
                                       drop_last=drop_last)
        theirs = torch_data.DistributedSampler(range(size), replicas, rank, shuffle=False,
                                               drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_sequential_and_batch_samplers_match_torch():
    for batch_size in (1, 3, 4):
        for drop_last in (False, True):
            ours = data.BatchSampler(data.SequentialSampler(range(10)), batch_size, drop_last)
            theirs = torch_data.BatchSampler(torch_data.SequentialSampler(range(10)), batch_size,
                                             drop_last)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_sampler_errors_match_torch():
    for make in (lambda m: m.RandomSampler(range(3), replacement=1),
                 lambda m: m.RandomSampler(range(3), num_samples=0),
                 lambda m: m.WeightedRandomSampler([1.0], 0),
                 lambda m: m.WeightedRandomSampler([1.0], 1, replacement=None),
                 lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 1),
                 lambda m: m.BatchSampler(range(3), 0, False),
                 lambda m: m.DistributedSampler(range(3), 2, 5)):
        with pytest.raises(Exception) as theirs:
            make(torch_data)
        with pytest.raises(Exception) as ours:
            make(data)
        assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)
    for weights, count, replacement in (([1.0, -1.0], 1, True), ([0.0, 0.0], 1, True),
                                        ([1.0, 1.0], 3, False)):
        with pytest.raises(RuntimeError) as theirs:
            list(torch_data.WeightedRandomSampler(weights, count, replacement))
        with pytest.raises(RuntimeError) as ours:
            list(data.WeightedRandomSampler(weights, count, replacement))
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("fractions", [[0.5, 0.3, 0.2], [0.33, 0.33, 0.34], [0.1, 0.9],
                                       [1 / 3] * 3, [0.0, 1.0]])
def test_random_split_lengths_match_torch(fractions):
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        theirs = torch_data.random_split(range(11), fractions)
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        ours = data.random_split(range(11), fractions)
    assert [len(part) for part in ours] == [len(part) for part in theirs]
    assert [str(w.message) for w in ours_warned] == [str(w.message) for w in theirs_warned]
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        data.random_split(range(4), [1.5, -0.5])


def test_worker_numpy_seed_is_torchs():
    from torch.utils.data._utils.worker import _generate_state

    from autojit.utils.data._utils.worker import numpy_seed_words

    for base_seed, worker_id in ((0, 0), (12345, 3), (2 ** 62 + 7, 1), (2 ** 63 - 1, 15)):
        assert numpy_seed_words(base_seed, worker_id) == _generate_state(base_seed, worker_id)


def test_loader_length_and_errors_match_torch():
    class Sized(torch_data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    class OurSized(data.IterableDataset):
        __iter__, __len__ = Sized.__iter__, Sized.__len__

    for batch_size, drop_last in ((2, False), (2, True), (None, False)):
        assert len(data.DataLoader(OurSized(), batch_size=batch_size, drop_last=drop_last)) == \
            len(torch_data.DataLoader(Sized(), batch_size=batch_size, drop_last=drop_last))
    for kwargs in ({"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2},
                   {"persistent_workers": True}, {"batch_size": None, "drop_last": True},
                   {"num_workers": 1, "prefetch_factor": -1}):
        with pytest.raises(ValueError) as theirs:
            torch_data.DataLoader(range(3), **kwargs)
        with pytest.raises(ValueError) as ours:
            data.DataLoader(range(3), **kwargs)
        assert str(ours.value) == str(theirs.value)
