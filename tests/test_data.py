"""autojit.utils.data: datasets, samplers, default_collate, DataLoader batching and shuffling
in the calling process (test_data_workers.py has the worker processes, test_data_torch.py the
comparisons with torch.utils.data)."""

import collections

import numpy as np
import pytest

import autojit
from autojit.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)


def _dataset(size=10):
    features = autojit.arange(size * 2, dtype=autojit.float32).reshape(size, 2)
    return TensorDataset(features, autojit.arange(size))


# ---- datasets ---------------------------------------------------------------------------------

def test_tensor_dataset():
    dataset = _dataset()
    assert len(dataset) == 10
    features, label = dataset[3]
    assert features.tolist() == [6.0, 7.0] and label.item() == 3 and label.dtype is autojit.int64
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(autojit.ones(3), autojit.ones(4))


def test_subset_concat_and_random_split():
    dataset = _dataset()
    subset = Subset(dataset, [7, 2])
    assert len(subset) == 2 and subset[0][1].item() == 7
    both = dataset + subset
    assert isinstance(both, ConcatDataset) and len(both) == 12
    assert both[11][1].item() == 2 and both[-1][1].item() == 2 and both[9][1].item() == 9

    first, second = random_split(dataset, [7, 3], generator=np.random.default_rng(0))
    assert (len(first), len(second)) == (7, 3)
    assert sorted(first.indices + second.indices) == list(range(10))
    again, _ = random_split(dataset, [7, 3], generator=np.random.default_rng(0))
    assert again.indices == first.indices
    parts = random_split(dataset, [0.5, 0.3, 0.2])
    assert [len(part) for part in parts] == [5, 3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the "
                                         "input dataset!"):
        random_split(dataset, [3, 3])


def test_a_dataset_subclass_with_dict_samples():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, index):
            return {"x": float(index), "y": autojit.tensor([index ** 2])}

    batches = list(DataLoader(Squares(), batch_size=2))
    assert len(batches) == 3
    assert batches[0]["x"].dtype is autojit.float64 and batches[0]["x"].tolist() == [0.0, 1.0]
    assert batches[1]["y"].tolist() == [[4], [9]]
    assert batches[2]["y"].shape == (1, 1)
    with pytest.raises(NotImplementedError):
        Dataset()[0]


# ---- collation --------------------------------------------------------------------------------

def test_default_collate():
    batch = default_collate([(autojit.ones(2), 1), (autojit.zeros(2), 2)])
    assert isinstance(batch, list) and batch[0].shape == (2, 2) and batch[1].tolist() == [1, 2]
    assert default_collate([1.5, 2.5]).dtype is autojit.float64
    assert default_collate([1, 2]).dtype is autojit.int64
    assert default_collate([True, False]).dtype is autojit.bool
    assert default_collate([np.zeros(3), np.ones(3)]).shape == (2, 3)
    assert default_collate([[1, 2], [3, 4]])[0].tolist() == [1, 3]
    assert default_collate(["a", "b"]) == ["a", "b"]
    nested = default_collate([{"pair": (1, 2.0)}, {"pair": (3, 4.0)}])
    assert nested["pair"][0].tolist() == [1, 3] and nested["pair"][1].tolist() == [2.0, 4.0]
    Point = collections.namedtuple("Point", "x y")
    point = default_collate([Point(1, 2), Point(3, 4)])
    assert isinstance(point, Point) and point.y.tolist() == [2, 4]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal "
                                           "size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        default_collate([object()])


# ---- the loader -------------------------------------------------------------------------------

def test_batches_in_order():
    loader = DataLoader(_dataset(), batch_size=4)
    assert len(loader) == 3
    batches = list(loader)
    assert [labels.tolist() for _, labels in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].shape == (4, 2) and batches[0][0].dtype is autojit.float32
    assert batches[0][0].requires_grad is False


def test_drop_last():
    loader = DataLoader(_dataset(), batch_size=4, drop_last=True)
    assert len(loader) == 2
    assert [labels.shape[0] for _, labels in loader] == [4, 4]


def test_shuffle_with_a_generator_is_reproducible_and_reorders_each_epoch():
    def orders(seed, epochs=2):
        loader = DataLoader(_dataset(), batch_size=3, shuffle=True,
                            generator=np.random.default_rng(seed))
        return [[label for _, labels in loader for label in labels.tolist()]
                for _ in range(epochs)]

    first = orders(0)
    assert first == orders(0)
    assert first != orders(1)
    assert first[0] != first[1]  # a new permutation each epoch
    assert all(sorted(order) == list(range(10)) for order in first)


def test_shuffle_follows_autojit_manual_seed():
    def order():
        loader = DataLoader(_dataset(), batch_size=10, shuffle=True)
        return next(iter(loader))[1].tolist()

    autojit.manual_seed(3)
    first = order()
    autojit.manual_seed(3)
    assert order() == first and first != list(range(10))


def test_rows_of_a_tensor_dataset_match_per_sample_collation():
    dataset = _dataset()
    sampler = RandomSampler(dataset, generator=np.random.default_rng(2))
    fast = DataLoader(dataset, batch_size=4, sampler=sampler)
    slow = DataLoader(dataset, batch_size=4, sampler=sampler,
                      collate_fn=lambda batch: default_collate(batch))
    rng_state = sampler.generator.bit_generator.state
    fast_batches = list(fast)
    sampler.generator.bit_generator.state = rng_state
    for (x_fast, y_fast), (x_slow, y_slow) in zip(fast_batches, slow, strict=True):
        assert x_fast.tolist() == x_slow.tolist() and y_fast.tolist() == y_slow.tolist()


def test_no_batching_and_custom_samplers():
    dataset = _dataset(3)
    samples = list(DataLoader(dataset, batch_size=None))
    assert len(samples) == 3 and samples[1][1].item() == 1 and isinstance(samples[1], list)
    loader = DataLoader(dataset, batch_sampler=[[2, 0], [1]])
    assert [labels.tolist() for _, labels in loader] == [[2, 0], [1]]
    assert len(loader) == 2
    batches = BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False)
    assert list(batches) == [[0, 1], [2, 3], [4]] and len(batches) == 3
    drawn = list(RandomSampler(range(4), replacement=True, num_samples=6,
                               generator=np.random.default_rng(0)))
    assert len(drawn) == 6 and all(0 <= index < 4 for index in drawn)
    assert len(list(RandomSampler(range(4), num_samples=6))) == 6


def test_loader_errors():
    dataset = _dataset()
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got "
                                         "batch_size=0"):
        DataLoader(dataset, batch_size=0)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(dataset, shuffle=True, sampler=[1, 2])
    with pytest.raises(ValueError, match="batch_size=None option disables auto-batching and is "
                                         "mutually exclusive with drop_last"):
        DataLoader(dataset, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(dataset, batch_size=2, batch_sampler=[[0]])
    with pytest.raises(TypeError, match="generator must be a numpy.random.Generator"):
        DataLoader(dataset, shuffle=True, generator=42)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(dataset, num_workers=-1)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader(dataset, timeout=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in "
                                         "multiprocessing"):
        DataLoader(dataset, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(dataset, persistent_workers=True)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used with "
                                         "multi-process loading"):
        DataLoader(dataset, multiprocessing_context="spawn")
    with pytest.raises(ValueError, match="should specify a valid start method"):
        DataLoader(dataset, num_workers=1, multiprocessing_context="teleport")
    with pytest.raises(TypeError, match="should be a valid context object"):
        DataLoader(dataset, num_workers=1, multiprocessing_context=3)
    loader = DataLoader(dataset)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        loader.batch_size = 3


# ---- module paths, and the datasets and samplers beyond the basic ones ------------------------

def test_torch_module_paths():
    from autojit.utils.data._utils.collate import collate, default_collate_fn_map
    from autojit.utils.data._utils.worker import get_worker_info
    from autojit.utils.data.dataloader import DataLoader as Loader
    from autojit.utils.data.dataset import ChainDataset, StackDataset
    from autojit.utils.data.distributed import DistributedSampler
    from autojit.utils.data.sampler import WeightedRandomSampler

    assert Loader is DataLoader and get_worker_info() is None
    assert autojit.utils.data.default_collate([1, 2]).tolist() == [1, 2]
    assert callable(collate) and autojit.Tensor in default_collate_fn_map
    assert all(callable(item) for item in (ChainDataset, StackDataset, DistributedSampler,
                                            WeightedRandomSampler))


def test_stack_chain_and_iterable_datasets():
    from autojit.utils.data import ChainDataset, IterableDataset, StackDataset

    class Count(IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chained = Count(2) + Count(3)
    assert isinstance(chained, ChainDataset) and list(chained) == [0, 1, 0, 1, 2]
    assert len(chained) == 5
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([[1, 2]]))
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Count(2)])
    loader = DataLoader(Count(5), batch_size=2, drop_last=True)
    assert [batch.tolist() for batch in loader] == [[0, 1], [2, 3]] and len(loader) == 2
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Count(2), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Count(2), sampler=[0])

    stacked = StackDataset(_dataset(3), [10, 20, 30])
    assert stacked[2][1] == 30 and stacked[2][0][1].item() == 2 and len(stacked) == 3
    by_name = StackDataset(x=[1, 2], y=Subset([5, 6, 7], [2, 0]))
    assert by_name.__getitems__([1, 0]) == [{"x": 2, "y": 5}, {"x": 1, "y": 7}]
    assert [batch["y"].tolist() for batch in DataLoader(by_name, batch_size=2)] == [[7, 5]]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset([1], [1, 2])
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        StackDataset()


def test_subset_random_and_weighted_samplers():
    from autojit.utils.data import SubsetRandomSampler, WeightedRandomSampler

    rng = np.random.default_rng(0)
    drawn = list(SubsetRandomSampler([5, 7, 9], generator=rng))
    assert sorted(drawn) == [5, 7, 9]
    counts = np.bincount(list(WeightedRandomSampler([1.0, 3.0, 0.0], 4000, generator=rng)),
                         minlength=3)
    assert counts[2] == 0 and 0.7 < counts[1] / 4000 < 0.8
    # Without replacement each index once; zero weights come after the others.
    unique = list(WeightedRandomSampler([0.0, 1.0, 5.0], 3, replacement=False, generator=rng))
    assert sorted(unique) == [0, 1, 2] and unique[2] == 0
    sampler = WeightedRandomSampler(autojit.tensor([1.0, 2.0]), 5)
    assert len(sampler) == 5 and sampler.weights.dtype == np.float64


def test_distributed_sampler_epochs_and_errors():
    from autojit.utils.data import DistributedSampler

    parts = [DistributedSampler(range(10), num_replicas=3, rank=rank, seed=4) for rank in range(3)]
    first = [list(part) for part in parts]
    assert all(len(part) == 4 for part in first)  # padded to 12
    assert set(sum(first, [])) == set(range(10))
    assert [list(part) for part in parts] == first  # the same epoch, the same order
    for part in parts:
        part.set_epoch(1)
    assert [list(part) for part in parts] != first
    dropped = DistributedSampler(range(10), num_replicas=3, rank=0, drop_last=True)
    assert len(dropped) == 3 and len(list(dropped)) == 3
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                         r"\[0, 2\]"):
        DistributedSampler(range(4), num_replicas=3, rank=3)
    # Without num_replicas and rank, the default process group's (torch's error without one).
    from autojit import distributed as dist

    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))
    dist.init_process_group(backend="local")
    try:
        sampler = DistributedSampler(range(5), shuffle=False)
        assert (sampler.num_replicas, sampler.rank, list(sampler)) == (1, 0, [0, 1, 2, 3, 4])
    finally:
        dist.destroy_process_group()


def test_an_iterable_dataset_longer_than_its_len_warns():
    from autojit.utils.data import IterableDataset

    class Understated(IterableDataset):
        def __iter__(self):
            return iter(range(3))

        def __len__(self):
            return 2

    loader = DataLoader(Understated(), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2\\(when accessing len\\(dataloader"
                                         "\\)\\), but 3 samples have been fetched"):
        assert list(loader) == [0, 1, 2]
