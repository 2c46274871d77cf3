"""Dynamic shapes in api.py: which dimensions trace symbolically, and the executable that
serves every size of them.

`DynamicSizes` decides, per call that traces, which dimensions of the tensor arguments get a
symbol (tensor/symbolic.py): all of them with `dynamic=True`; with the default `dynamic=None`, a
dimension once it has been seen with a second size (so a function called with one batch size
stays fully static, and the first new size makes the batch dimension symbolic); none with
`dynamic=False`. Extents 0 and 1 are never symbolic: broadcasting and empty tensors behave
differently at those sizes, so they are traced as constants.

`DynamicExecutable` holds one symbolic trace and its guards. Each call binds the symbols to the
call's sizes; the first call with a binding instantiates the graph for it (ir/instantiate.py)
and compiles it through the ordinary pipeline, later calls with that binding reuse the result.
Python tracing, guard building and the guard check happen once for all sizes; the generated
kernels are specialized per binding (their loop extents are constants) and cached, in memory
and in the disk kernel cache, like any other kernel.
"""

from __future__ import annotations

from collections import OrderedDict

from ..ir.instantiate import instantiate
from ..tensor.tensor import Tensor

# Bindings whose compiled executable is kept; the least recently used beyond this is rebuilt
# (from the disk kernel cache, usually) when its sizes come back.
MAX_BINDINGS = 32


class DynamicSizes:
    def __init__(self, mode: bool | None):
        self.mode = mode
        self.dims: dict = {}  # argument position -> dimensions made symbolic
        self._seen: dict = {}  # argument position -> the shape it had when last traced

    def observe(self, args: tuple) -> None:
        """Before a trace: with automatic dynamic shapes, a dimension whose size differs from
        the last trace's becomes symbolic."""
        if self.mode is not None:
            return
        for position, argument in enumerate(args):
            if not isinstance(argument, Tensor) or argument._data is None:
                continue
            shape = tuple(argument._data.shape)
            before = self._seen.get(position)
            if before is not None and len(before) == len(shape):
                changed = {dim for dim, (old, new) in enumerate(zip(before, shape)) if old != new}
                if changed:
                    self.dims.setdefault(position, set()).update(changed)
            self._seen[position] = shape

    def shape(self, position: int, argument: Tensor, env) -> tuple:
        """The traced shape of a tensor argument: symbols for its dynamic dimensions."""
        shape = tuple(argument._data.shape)
        if self.mode is False:
            return shape
        dims = range(len(shape)) if self.mode else self.dims.get(position, ())
        return tuple(env.create_symbol(extent, (position, dim)) if dim in dims and extent >= 2
                     else extent for dim, extent in enumerate(shape))


class DynamicExecutable:
    """One symbolic trace run for any sizes its guards admit, compiled once per binding."""

    def __init__(self, traced, env, guards, build):
        self.traced = traced
        self.env = env
        self.guards = guards
        self._build = build  # concrete Graph -> Executable
        self.symbols = list(env.hints)
        self._sources = [env.sources[name] for name in self.symbols]
        self.specialized: OrderedDict = OrderedDict()  # binding tuple -> Executable
        self.calls = 0
        self._latest = None

    def run(self, args: tuple):
        self.calls += 1
        key = tuple(args[position]._data.shape[dim] for position, dim in self._sources)
        executable = self.specialized.get(key)
        if executable is None:
            executable = self.specialize(key)
        else:
            self.specialized.move_to_end(key)
        self._latest = executable
        return executable.run(args)

    def specialize(self, key: tuple):
        """The Executable for one binding of the symbols (built on first use)."""
        binding = dict(zip(self.symbols, key, strict=True))
        executable = self._build(instantiate(self.traced, binding))
        executable.binding = binding
        self.specialized[key] = executable
        while len(self.specialized) > MAX_BINDINGS:
            self.specialized.popitem(last=False)
        return executable

    def _current(self):
        if self._latest is None:
            self._latest = self.specialize(tuple(self.env.hints[name] for name in self.symbols))
        return self._latest

    # What inspection reads (api.py): the latest binding's compiled pieces.
    @property
    def graph(self):
        return self._current().graph

    @property
    def plan(self):
        return self._current().plan

    @property
    def joint(self):
        return self._current().joint

    @property
    def backward(self):
        return self._current().backward
