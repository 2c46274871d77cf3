"""The DataPipe base classes: IterDataPipe (an IterableDataset) and MapDataPipe (a Dataset),
each with its table of the operations registered by name, which its instances have as
methods; `functional_datapipe(name)`, the class decorator that registers one; DataChunk, the
list a batch is.
"""

from __future__ import annotations

import functools

from ..dataset import Dataset, IterableDataset

__all__ = ["DataChunk", "IterDataPipe", "MapDataPipe", "functional_datapipe"]


class DataChunk(list):
    """A batch of items: a list (Batcher's default wrapper class)."""

    def as_str(self, indent: str = "") -> str:
        return indent + "[" + ", ".join(str(item) for item in iter(self)) + "]"

    def raw_iterator(self):
        yield from self


class _Registry:
    """The registration and lookup a DataPipe class's `functions` table serves."""

    functions: dict = {}

    @classmethod
    def register_datapipe_as_function(cls, function_name: str, cls_to_register,
                                      enable_df_api_tracing: bool = False) -> None:
        """Make `dp.<function_name>(*args, **kwargs)` build cls_to_register(dp, *args,
        **kwargs)."""
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is "  # noqa: TRY002
                            "already taken")

        def class_function(pipe_class, source_dp, *args, **kwargs):
            return pipe_class(source_dp, *args, **kwargs)

        function = functools.partial(class_function, cls_to_register)
        functools.update_wrapper(wrapper=function, wrapped=cls_to_register,
                                 assigned=("__doc__",))
        cls.functions[function_name] = function

    def __getattr__(self, attribute_name: str):
        table = type(self)._table()
        if attribute_name in table:
            function = functools.partial(table[attribute_name], self)
            functools.update_wrapper(wrapper=function, wrapped=table[attribute_name],
                                     assigned=("__doc__",))
            return function
        raise AttributeError(f"'{self.__class__.__name__}' object has no attribute "
                             f"'{attribute_name}")

    @classmethod
    def _table(cls) -> dict:
        return cls.functions

    def __dir__(self):
        return [*super().__dir__(), *type(self)._table()]


class IterDataPipe(_Registry, IterableDataset):
    """An iterable-style DataPipe: iterating yields its items; the registered operations
    (`batch`, `map`, `filter`, `sharding_filter`, and those libraries add) are its methods."""

    functions: dict = {}

    @classmethod
    def _table(cls) -> dict:
        return IterDataPipe.functions

    def __repr__(self) -> str:
        return self.__class__.__qualname__


class MapDataPipe(_Registry, Dataset):
    """A map-style DataPipe: indexed by keys, with its own table of registered operations."""

    functions: dict = {}

    @classmethod
    def _table(cls) -> dict:
        return MapDataPipe.functions

    def __repr__(self) -> str:
        return self.__class__.__qualname__


def functional_datapipe(name: str, enable_df_api_tracing: bool = False):
    """Class decorator: register a DataPipe class under `name`, a method of every pipe of its
    kind (`dp.name(*args)` builds the class on dp)."""

    def register(cls):
        if issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(name, cls, enable_df_api_tracing)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(name, cls)
        else:
            raise TypeError("`functional_datapipe` can only decorate IterDataPipe or "
                            "MapDataPipe")
        return cls

    return register
