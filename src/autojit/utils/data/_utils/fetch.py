"""Fetchers, at torch.utils.data._utils.fetch's path: one step of a DataLoader, from the
sampler's indices to a collated batch, the same in the main process and in a worker.

A map-style fetcher reads the samples at the indices (through the dataset's `__getitems__`
when it has one, or a TensorDataset's rows as one gather per tensor); an iterable fetcher
takes the next samples of the dataset's iterator and ignores the indices, which only count.
"""

from __future__ import annotations

from ....tensor import dtypes
from ....tensor.creation import tensor
from ..dataset import TensorDataset
from .collate import default_collate


class MapDatasetFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        # A TensorDataset batch is one gather per tensor, the same result as stacking rows.
        self.whole_rows = isinstance(dataset, TensorDataset) and collate_fn is default_collate

    def fetch(self, indices):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[indices])
        if self.whole_rows:
            rows = tensor(list(indices), dtype=dtypes.int64)
            return [item[rows] for item in self.dataset.tensors]
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            samples = getitems(indices)
        else:
            samples = [self.dataset[index] for index in indices]
        return self.collate_fn(samples)


class IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.iterator = iter(dataset)
        self.ended = False

    def fetch(self, indices):
        """The next batch (or sample); StopIteration when the dataset has no more."""
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        samples = []
        for _ in indices:
            try:
                samples.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not samples or (self.drop_last and len(samples) < len(indices)):
            raise StopIteration
        return self.collate_fn(samples)


def create_fetcher(iterable: bool, dataset, auto_collation: bool, collate_fn, drop_last: bool):
    kind = IterableDatasetFetcher if iterable else MapDatasetFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)
