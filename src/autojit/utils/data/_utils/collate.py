"""Collation, at torch.utils.data._utils.collate's path: a list of samples becomes one batch.

`default_collate` is what a batching DataLoader applies: tensors and NumPy arrays are stacked
along a new first dimension, numbers become a 1-d tensor, and containers are collated field by
field. `collate(batch, collate_fn_map=...)` is the same walk with the per-type functions given
by the caller (`default_collate_fn_map` holds the default ones), so that a custom collate_fn can
handle one more type and fall back to the defaults for the rest. `default_convert` is what a
non-batching DataLoader (batch_size=None) applies to each sample.
"""

from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ....ops.layout import stack
from ....tensor import dtypes
from ....tensor.creation import as_tensor, tensor
from ....tensor.tensor import Tensor

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn"]

# NumPy dtypes of strings and objects, which do not become tensors.
_STRING_OR_OBJECT = re.compile(r"[SaUO]")
_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
          "found {}")


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return stack(list(batch))


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    if _STRING_OR_OBJECT.search(batch[0].dtype.str) is not None:
        raise TypeError(_ERROR.format(batch[0].dtype))
    return collate([as_tensor(item) for item in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return tensor(list(batch), dtype=dtypes.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return tensor(list(batch))  # bools give a bool tensor, other ints int64


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map: dict = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def _rebuilt(template, items: dict | list):
    """A container of template's type holding items, or a plain dict or list when the type
    cannot be made or copied that way."""
    try:
        if isinstance(template, (collections.abc.MutableMapping,
                                 collections.abc.MutableSequence)):
            clone = copy.copy(template)  # keeps a subclass's own attributes
            if isinstance(items, dict):
                clone.update(items)
            else:
                for index, item in enumerate(items):
                    clone[index] = item
            return clone
        return type(template)(items)
    except TypeError:
        return items


def collate(batch, *, collate_fn_map: dict | None = None):
    """Collate `batch` (a list of samples) with the functions of `collate_fn_map` (type ->
    `fn(batch, *, collate_fn_map)`), looked up by the first sample's exact type and then by
    isinstance; mappings, named tuples and sequences are walked field by field.
    """
    first = batch[0]
    kind = type(first)
    if collate_fn_map is not None:
        if kind in collate_fn_map:
            return collate_fn_map[kind](batch, collate_fn_map=collate_fn_map)
        for types, function in collate_fn_map.items():
            if isinstance(first, types):
                return function(batch, collate_fn_map=collate_fn_map)
    if isinstance(first, collections.abc.Mapping):
        fields = {key: collate([sample[key] for sample in batch], collate_fn_map=collate_fn_map)
                  for key in first}
        return _rebuilt(first, fields)
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple keeps its type
        return kind(*(collate(list(samples), collate_fn_map=collate_fn_map)
                      for samples in zip(*batch, strict=False)))
    if isinstance(first, collections.abc.Sequence):
        if any(len(sample) != len(first) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [collate(list(samples), collate_fn_map=collate_fn_map)
                  for samples in zip(*batch, strict=False)]
        if isinstance(first, tuple):
            return fields  # a tuple gives a list, as torch's does
        return _rebuilt(first, fields)
    raise TypeError(_ERROR.format(kind))


def default_collate(batch):
    """Stack a list of samples into a batch: tensors and NumPy arrays are stacked along a new
    first dimension, Python floats become float64, ints int64 and bools a bool tensor, NumPy
    scalars keep their dtype, strings and bytes stay a list, and mappings, named tuples and
    sequences are collated field by field (a tuple gives a list).

    >>> import autojit
    >>> from autojit.utils.data import default_collate
    >>> default_collate([(autojit.ones(2), 1), (autojit.zeros(2), 2)])
    [tensor([[1., 1.],
            [0., 0.]]), tensor([1, 2])]
    >>> default_collate([{"x": 0.5, "name": "a"}, {"x": 1.5, "name": "b"}])
    {'x': tensor([0.5000, 1.5000], dtype=autojit.float64), 'name': ['a', 'b']}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data):
    """What a DataLoader with batch_size=None yields for a sample: NumPy arrays and scalars
    become tensors, inside mappings, named tuples and sequences too (a tuple gives a list).

    >>> import numpy as np
    >>> from autojit.utils.data import default_convert
    >>> default_convert((np.array([1, 2]), "label"))
    [tensor([1, 2]), 'label']
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if _STRING_OR_OBJECT.search(data.dtype.str) else as_tensor(data)
    if isinstance(data, (np.bool_, np.number)):
        return as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(item) for item in data))
    if isinstance(data, tuple):
        return [default_convert(item) for item in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt(data, [default_convert(item) for item in data])
    return data
