"""Containers: Sequential (a chain of modules), ModuleList and ModuleDict (and Container,
torch's deprecated module of named children).

They hold child modules under the keys "0", "1", ... (or the given names), so the modules'
parameters are registered and found by parameters(), state_dict(), train() and to().
"""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain, islice

from .module import Module, add_indent

__all__ = ["Sequential", "ModuleList", "ModuleDict", "Container"]


class Container(Module):
    """torch.nn.Container: a module holding the children given as keywords; deprecated in
    torch, with its FutureWarning when made."""

    def __init__(self, **kwargs) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Modules applied in order: the output of each is the input of the next.

        >>> import autojit
        >>> from autojit import nn
        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> model
        Sequential(
          (0): Linear(in_features=4, out_features=8, bias=True)
          (1): ReLU()
          (2): Linear(in_features=8, out_features=2, bias=True)
        )
        >>> model(autojit.ones(3, 4)).shape
        autojit.Size([3, 2])

    An OrderedDict gives the children names: ``nn.Sequential(OrderedDict(fc=nn.Linear(4, 2)))``.
    """

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def _get_item_by_idx(self, iterator, idx):
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return next(islice(iterator, idx % size, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_item_by_idx(self._modules.keys(), idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        # Renumber, so that the keys stay "0".."n-1".
        self._modules = dict(zip((str(i) for i in range(len(self._modules))),
                                 self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        combined = Sequential()
        for layer in chain(self, other):
            combined.append(layer)
        return combined

    def __iadd__(self, other) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        offset = len(self)
        for index, module in enumerate(other):
            self.add_module(str(index + offset), module)
        return self

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        for _ in range(other):
            for module in self:
                combined.append(module)
        return combined

    __rmul__ = __mul__

    def __imul__(self, other: int) -> Sequential:
        """Repeat the modules in place (the same module objects, new indices)."""
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        original = list(self)
        for _ in range(other - 1):
            for module in original:
                self.add_module(str(len(self._modules)), module)
        return self

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def pop(self, key) -> Module:
        """Remove and return the module at index key."""
        module = self[key]
        del self[key]
        return module

    def append(self, module: Module) -> Sequential:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert a module before position index; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        count = len(self._modules)
        if not -count <= index <= count:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += count
        for position in range(count, index, -1):
            self._modules[str(position)] = self._modules[str(position - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of an iterable; returns self."""
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):  # noqa: A002
        for module in self:
            input = module(input)  # noqa: A001
        return input


class ModuleList(Module):
    """A list of modules, registered as children (indexing, slicing, append, extend, insert).

        >>> from autojit import nn
        >>> nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])
        ModuleList(
          (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
          (3): ReLU()
        )
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx % len(self))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for position in range(len(self._modules))[idx]:
                delattr(self, str(position))
        else:
            delattr(self, self._get_abs_string_index(idx))
        self._modules = dict(zip((str(i) for i in range(len(self._modules))),
                                 self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for index, module in enumerate(chain(self, other)):
            combined.add_module(str(index), module)
        return combined

    def __repr__(self) -> str:
        # Runs of equal reprs print once, as "(first-last): count x repr".
        reprs = [repr(module) for module in self]
        if not reprs:
            return self._get_name() + "()"
        runs = [[0, 0, reprs[0]]]
        for index, text in enumerate(reprs[1:], 1):
            if text == runs[-1][2]:
                runs[-1][1] = index
            else:
                runs.append([index, index, text])
        lines = []
        for start, end, text in runs:
            line = (f"({start}): {text}" if start == end
                    else f"({start}-{end}): {end - start + 1} x {text}")
            lines.append(add_indent(line, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Insert a module before position index."""
        for position in range(len(self._modules), index, -1):
            self._modules[str(position)] = self._modules[str(position - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key) -> Module:
        """Remove and return the module at index key."""
        module = self[key]
        del self[key]
        return module

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of an iterable; returns self."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for index, module in enumerate(modules):
            self.add_module(str(offset + index), module)
        return self


class ModuleDict(Module):
    """An ordered dict of modules, registered as children under their keys.

        >>> from autojit import nn
        >>> heads = nn.ModuleDict({"classify": nn.Linear(8, 3), "act": nn.ReLU()})
        >>> list(heads.keys())
        ['classify', 'act']
    """

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module under key."""
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        """Add modules from a mapping or an iterable of (key, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for position, pair in enumerate(modules):
            if not isinstance(pair, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{position} should be "
                                f"Iterable; is{type(pair).__name__}")
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{position} has length "
                                 f"{len(pair)}; 2 is required")
            self[pair[0]] = pair[1]
