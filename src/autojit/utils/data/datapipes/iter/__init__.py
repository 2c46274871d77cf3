"""torch's basic iterable DataPipes, registered by their functional names: Batcher (`batch`),
Mapper (`map`), Filter (`filter`), ShardingFilter (`sharding_filter`), and IterableWrapper,
which makes a pipe of any iterable.
"""

from __future__ import annotations

import copy
from collections.abc import Sized

from ..datapipe import DataChunk, IterDataPipe, functional_datapipe

__all__ = ["Batcher", "Filter", "IterableWrapper", "Mapper", "ShardingFilter",
           "BatcherIterDataPipe", "FilterIterDataPipe", "IterableWrapperIterDataPipe",
           "MapperIterDataPipe", "ShardingFilterIterDataPipe"]


class IterableWrapperIterDataPipe(IterDataPipe):
    """A pipe of an iterable's items (a deep copy of it unless deepcopy=False)."""

    def __init__(self, iterable, deepcopy: bool = True) -> None:
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self):
        source = self.iterable
        if self.deepcopy:
            try:
                source = copy.deepcopy(self.iterable)
            except TypeError:  # not deep-copyable: iterated as it is, as torch does
                pass
        yield from source

    def __len__(self) -> int:
        if isinstance(self.iterable, Sized):
            return len(self.iterable)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")


def _length(pipe, of) -> int:
    if isinstance(of, Sized):
        return len(of)
    raise TypeError(f"{type(pipe).__name__} instance doesn't have valid length")


@functional_datapipe("batch")
class BatcherIterDataPipe(IterDataPipe):
    """Mini-batches of `batch_size` items, each made by `wrapper_class` (a DataChunk, a
    list), the last one shorter unless drop_last."""

    def __init__(self, datapipe, batch_size: int, drop_last: bool = False,
                 wrapper_class=DataChunk) -> None:
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        super().__init__()
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __iter__(self):
        batch: list = []
        for item in self.datapipe:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self) -> int:
        count = _length(self, self.datapipe)
        return count // self.batch_size if self.drop_last else \
            (count + self.batch_size - 1) // self.batch_size


@functional_datapipe("map")
class MapperIterDataPipe(IterDataPipe):
    """Each item passed through `fn` (its `input_col` part, the result put at `output_col`
    or in its place)."""

    def __init__(self, datapipe, fn, input_col=None, output_col=None) -> None:
        super().__init__()
        if input_col is None and output_col is not None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        self.datapipe, self.fn = datapipe, fn
        self.input_col, self.output_col = input_col, output_col

    def _apply(self, item):
        columns = self.input_col
        if columns is None:
            result = self.fn(item)
            if self.output_col is None:
                return result
        elif isinstance(columns, (list, tuple)):
            result = self.fn(*(item[column] for column in columns))
        else:
            result = self.fn(item[columns])
        target = list(item) if isinstance(item, tuple) else item  # torch writes into item
        if self.output_col is None:
            if isinstance(columns, (list, tuple)):
                target[columns[0]] = result
                for column in sorted(columns[1:], reverse=True):
                    del target[column]
            else:
                target[columns] = result
        elif self.output_col == -1:
            target.append(result)
        else:
            target[self.output_col] = result
        return tuple(target) if isinstance(item, tuple) else target

    def __iter__(self):
        for item in self.datapipe:
            yield self._apply(item)

    def __len__(self) -> int:
        return _length(self, self.datapipe)


@functional_datapipe("filter")
class FilterIterDataPipe(IterDataPipe):
    """The items for which `filter_fn` is true."""

    def __init__(self, datapipe, filter_fn, input_col=None) -> None:
        super().__init__()
        self.datapipe, self.filter_fn, self.input_col = datapipe, filter_fn, input_col

    def __iter__(self):
        columns = self.input_col
        for item in self.datapipe:
            if columns is None:
                keep = self.filter_fn(item)
            elif isinstance(columns, (list, tuple)):
                keep = self.filter_fn(*(item[column] for column in columns))
            else:
                keep = self.filter_fn(item[columns])
            if keep:
                yield item


@functional_datapipe("sharding_filter")
class ShardingFilterIterDataPipe(IterDataPipe):
    """Every `num_of_instances`-th item from `instance_id` on, once apply_sharding set them
    (all items before)."""

    def __init__(self, source_datapipe, sharding_group_filter=None) -> None:
        super().__init__()
        self.source_datapipe = source_datapipe
        self.num_of_instances, self.instance_id = 1, 0

    def is_shardable(self) -> bool:
        return True

    def apply_sharding(self, num_of_instances: int, instance_id: int,
                       sharding_group=None) -> None:
        self.num_of_instances, self.instance_id = num_of_instances, instance_id

    def __iter__(self):
        for position, item in enumerate(self.source_datapipe):
            if position % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self) -> int:
        count = _length(self, self.source_datapipe)
        return count // self.num_of_instances + (
            1 if self.instance_id < count % self.num_of_instances else 0)


# torch's short names of its pipes
Batcher = BatcherIterDataPipe
Filter = FilterIterDataPipe
IterableWrapper = IterableWrapperIterDataPipe
Mapper = MapperIterDataPipe
ShardingFilter = ShardingFilterIterDataPipe
