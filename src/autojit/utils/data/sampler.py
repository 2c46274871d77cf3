"""Samplers, at torch.utils.data.sampler's path: the order in which a DataLoader reads indices.

A sampler yields dataset indices (SequentialSampler, RandomSampler, SubsetRandomSampler,
WeightedRandomSampler); a BatchSampler groups another sampler's indices into lists, one per
batch. The random ones draw from `generator` when given (a numpy.random.Generator, as every
autojit random function takes) and otherwise, as torch's RandomSampler does, from a generator
of their own seeded by one draw of autojit's global generator when a pass starts, so
`autojit.manual_seed(seed)` makes every epoch's order reproducible and the global stream does
not depend on how far a pass has gone. The draws are torch's (randperm and randint of
tensor/torch_stream.py, and multinomial's), so the same seed gives torch's orders.

RandomSampler and SubsetRandomSampler draw as they are read, as torch's do: a chunk of indices
with replacement, one permutation of the dataset at a time without, so that a sampler of
`num_samples=int(1e10)` (an endless stream of draws) costs no memory up front.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

import numpy as np

from ...ops.random import multinomial
from ...tensor import torch_stream as stream
from ...tensor.creation import as_tensor
from ...tensor.dtypes import float64
from ...tensor.generator import Generator
from ._utils import draw_seed, permutation, resolve_generator

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

_CHUNK = 4096  # indices drawn at a time with replacement


def pass_generator(generator) -> np.random.Generator:
    """The generator one pass draws from: `generator`, or one of the pass's own seeded from
    autojit's global generator (one draw, as torch seeds its sampler's)."""
    if generator is not None:
        return resolve_generator(generator)
    return Generator().manual_seed(draw_seed(None))


T_co = TypeVar("T_co", covariant=True)  # the type of the indices a sampler yields


class Sampler(Generic[T_co]):
    """Yields dataset indices; subclasses define `__iter__` and usually `__len__`."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The indices 0, 1, ..., len(data_source) - 1, in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh permutation of the indices on each pass, or `num_samples` draws with
    `replacement=True`; without replacement, `num_samples` beyond the dataset's length
    continue with further permutations.

    >>> import numpy as np
    >>> from autojit.utils.data import RandomSampler
    >>> sorted(RandomSampler(range(5), generator=np.random.default_rng(0)))
    [0, 1, 2, 3, 4]
    >>> len(list(RandomSampler(range(3), replacement=True, num_samples=7)))
    7
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got replacement="
                            f"{replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")
        if generator is not None:
            resolve_generator(generator)  # reject a wrong generator now, not on the first pass

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        size = len(self.data_source)
        rng = pass_generator(self.generator)
        remaining = self.num_samples
        if self.replacement:
            while remaining > 0:
                count = min(remaining, _CHUNK)
                yield from stream.integers(rng, count, 0, size).tolist()
                remaining -= count
            return
        for _ in range(remaining // size):
            yield from permutation(rng, size)
        yield from permutation(rng, size)[:remaining % size]  # drawn even for none, as torch's

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a fresh random order on each pass.

    >>> import numpy as np
    >>> from autojit.utils.data import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([7, 3, 5], generator=np.random.default_rng(0)))
    [3, 5, 7]
    """

    def __init__(self, indices: Sequence[int], generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        # torch's draws from `generator` itself, the global one for None.
        for position in permutation(self.generator, len(self.indices)):
            yield self.indices[position]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices of `range(len(weights))` drawn with probabilities proportional to
    `weights` (which need not sum to one), with replacement or, if `replacement=False`, each
    index at most once.

    >>> import numpy as np
    >>> from autojit.utils.data import WeightedRandomSampler
    >>> drawn = list(WeightedRandomSampler([0.0, 1.0, 0.0], 4, generator=np.random.default_rng(0)))
    >>> drawn
    [1, 1, 1, 1]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or \
                num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got replacement="
                             f"{replacement}")
        values = np.asarray(weights, dtype=np.float64)
        if values.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(values.shape)}")
        self.weights = values
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        # torch's: multinomial of the float64 weights (its checks, its draws).
        drawn = multinomial(as_tensor(self.weights, dtype=float64), self.num_samples,
                            self.replacement, generator=self.generator)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size (the last may be shorter).

    >>> from autojit.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False))
    [[0, 1, 2], [3, 4, 5], [6]]
    """

    def __init__(self, sampler: Sampler | Iterable, batch_size: int, drop_last: bool):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return -(-len(self.sampler) // self.batch_size)
