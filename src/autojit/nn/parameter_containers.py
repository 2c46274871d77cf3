"""Parameter containers: ParameterList and ParameterDict.

They hold parameters the way ModuleList and ModuleDict (container.py) hold modules: each entry
is an attribute of the container, registered through Module.__setattr__ (module.py) under
"0", "1", ... or under its key, so parameters(), named_parameters(), state_dict(), to() and
optimizers see it. A plain Tensor stored in one is made a Parameter first; other objects
(modules, Python values) are kept as they are.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ..tensor.tensor import Tensor
from .container import ModuleList
from .module import Module, typename
from .parameter import Parameter

__all__ = ["ParameterList", "ParameterDict"]


def _as_parameter(value):
    """A plain Tensor becomes a Parameter (sharing its storage); anything else is kept."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _entry_line(key, value, type_name: str) -> str:
    """One line of the containers' repr: the kind, type name, shape and (on a GPU) device."""
    if not isinstance(value, Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    size = "x".join(str(extent) for extent in value.shape)
    device = f" ({value.device})" if value.is_cuda else ""
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    return f"  ({key}): {kind} containing: [{type_name} of size {size}{device}]"


class ParameterList(Module):
    """A list of parameters, registered under "0", "1", ... (indexing, slicing, append, extend).

    A plain Tensor given to the constructor, to append/extend or assigned by index is made an
    ``nn.Parameter``; modules and other objects are stored as they are.

        >>> import autojit
        >>> from autojit import nn
        >>> weights = nn.ParameterList([autojit.zeros(2, 3), nn.Parameter(autojit.ones(3))])
        >>> weights.append(autojit.ones(1))
        ParameterList(
            (0): Parameter containing: [autojit.float32 of size 2x3]
            (1): Parameter containing: [autojit.float32 of size 3]
            (2): Parameter containing: [autojit.float32 of size 1]
        )
        >>> [(name, tuple(p.shape)) for name, p in weights.named_parameters()]
        [('0', (2, 3)), ('1', (3,)), ('2', (1,))]
    """

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    _get_abs_string_index = ModuleList._get_abs_string_index  # "0", "1", ... from an index

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            selected = self.__class__()
            for position in range(*idx.indices(len(self))):
                selected.append(self[position])
            return selected
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param) -> None:
        # Every way of adding an entry ends here, so this is where tensors become Parameters.
        setattr(self, self._get_abs_string_index(idx), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[position] for position in range(len(self)))

    def __iadd__(self, parameters: Iterable) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value) -> ParameterList:
        """Add a value at the end; returns self."""
        position = len(self)
        self._size += 1
        self[position] = value
        return self

    def extend(self, values: Iterable) -> ParameterList:
        """Append every value of an iterable (not a Tensor); returns self."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_line(position, value, str(value.dtype)
                                     if isinstance(value, Tensor) else "")
                         for position, value in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters, registered under their (string) keys.

    A plain Tensor stored in it is made an ``nn.Parameter``. As for a dict, ``update`` with a
    plain dict adds its entries in sorted key order, while an OrderedDict, a ParameterDict or
    a sequence of pairs keeps its order.

        >>> import autojit
        >>> from autojit import nn
        >>> heads = nn.ParameterDict({"scale": autojit.ones(3), "shift": autojit.zeros(3)})
        >>> heads
        ParameterDict(
            (scale): Parameter containing: [autojit.FloatTensor of size 3]
            (shift): Parameter containing: [autojit.FloatTensor of size 3]
        )
        >>> list(heads.state_dict())
        ['scale', 'shift']
    """

    def __init__(self, parameters=None) -> None:
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a "
                            f"string (type is '{type(key).__name__}'). Open an issue on github "
                            "if you need non-string keys.")
        return key

    def __getitem__(self, key: str):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value) -> None:
        # Every way of adding an entry ends here, so this is where tensors become Parameters.
        attribute = self._key_to_attr(key)
        self._keys[key] = None
        setattr(self, attribute, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        attribute = self._key_to_attr(key)
        del self._keys[key]
        delattr(self, attribute)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same entries (the same Parameter objects)."""
        return ParameterDict(OrderedDict((key, self[key]) for key in self._keys))

    def setdefault(self, key: str, default=None):
        """The value under key, after storing `default` there if the key was absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry."""
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str):
        """Remove and return the value under key."""
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple:
        """Remove and return the last inserted (key, value) pair."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def get(self, key: str, default=None):
        """The value under key, or default when the key is absent."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default=None) -> ParameterDict:
        """A new ParameterDict with the given keys, each holding `default`."""
        return ParameterDict((key, default) for key in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((key, self[key]) for key in self._keys)

    def values(self):
        return (self[key] for key in self._keys)

    def update(self, parameters) -> None:
        """Add (or overwrite) entries from a mapping or an iterable of (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, value in parameters.items():
                self[key] = value
        elif isinstance(parameters, Mapping):
            for key, value in sorted(parameters.items()):
                self[key] = value
        else:
            for position, pair in enumerate(parameters):
                if not isinstance(pair, Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{position} should "
                                    f"be Iterable; is{type(pair).__name__}")
                if len(pair) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{position} has "
                                     f"length {len(pair)}; 2 is required")
                self[pair[0]] = pair[1]

    def extra_repr(self) -> str:
        return "\n".join(_entry_line(key, value, typename(value)
                                     if isinstance(value, Tensor) else "")
                         for key, value in self.items())

    def __call__(self, input):  # noqa: A002
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        combined = self.copy()
        combined.update(other)
        return combined

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        combined = other.copy()
        combined.update(self)
        return combined

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
