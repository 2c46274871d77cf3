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
Python tracing, guard building and the guard check happen once for all sizes. A binding's
first plan has generic kernels, which read their sizes at run time and share compiled code
across sizes, so a new size compiles no LLVM code; a binding called `STATIC_AFTER` times in a
row is compiled again as a static plan (constant loop extents, the native convolutions and
program of a static executable), so that a training loop's full batches run at a static
executable's speed while its ragged last batch keeps the generic plan.
"""

from __future__ import annotations

from collections import OrderedDict

from ..ir.instantiate import instantiate
from ..tensor.tensor import Tensor

# Bindings whose compiled executable is kept; the least recently used beyond this is rebuilt
# (from the disk kernel cache, usually) when its sizes come back.
MAX_BINDINGS = 32
# Calls of one binding in a row after which its plan is compiled again with static kernels:
# the compiled CNN step of bench/end_to_end.py took 3.1-3.7 ms in its generic plan against
# 1.7-1.9 ms in a static one (a static compile of that step: about 0.1 s). In a row, so that an
# epoch's ragged last batch, one call among many, is not compiled again for the 1-2 ms each
# of its calls would save.
STATIC_AFTER = 3


def argument_shapes(args: tuple) -> tuple:
    """The shapes of a call's tensor arguments (None for other arguments)."""
    return tuple(tuple(argument._payload.shape) if isinstance(argument, Tensor) and
                 argument._payload is not None else None for argument in args)


# The attributes torch._dynamo's marks set on a tensor, by torch's names.
_DYNAMIC, _WEAK_DYNAMIC, _STATIC = ("_dynamo_dynamic_indices", "_dynamo_weak_dynamic_indices",
                                    "_dynamo_static_indices")


def _mark(t, field: str, index) -> None:
    indices = {index} if isinstance(index, int) else set(index)
    setattr(t, field, getattr(t, field, set()) | indices)


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None,  # noqa: A002
                 specialize_on=None) -> None:
    """torch._dynamo.mark_dynamic: trace dimension(s) `index` of `t` with a symbol from the
    first call that takes it (sizes 0 and 1 stay constants; `min` and `max` are not kept as
    constraints)."""
    _mark(t, _DYNAMIC, index)


def maybe_mark_dynamic(t, index) -> None:
    """torch._dynamo.maybe_mark_dynamic: as mark_dynamic, where torch may still specialize."""
    _mark(t, _WEAK_DYNAMIC, index)


def mark_static(t, index=None) -> None:
    """torch._dynamo.mark_static: dimension(s) `index` of `t` stay constants even when their
    size changes (each size traces again); a module (`index` None) is marked as torch marks
    it."""
    if index is None:
        t._dynamo_marked_static = True
        return
    _mark(t, _STATIC, index)


def mark_static_address(t, guard: bool = False) -> None:
    """torch._dynamo.mark_static_address: a hint for CUDA graphs, which autojit does not
    capture; recorded as torch records it, with no effect."""
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"


class DynamicSizes:
    def __init__(self, mode: bool | None):
        self.mode = mode
        self.dims: dict = {}  # argument position -> dimensions made symbolic
        self._seen: dict = {}  # argument position -> the shape it had when last traced

    def observe(self, args: tuple) -> None:
        """Before a trace: with automatic dynamic shapes, a dimension whose size differs from
        the last trace's becomes symbolic, and so does one the program marked dynamic
        (`mark_dynamic`), unless it marked it static."""
        if self.mode is not None:
            return
        for position, argument in enumerate(args):
            if not isinstance(argument, Tensor) or argument._payload is None:
                continue
            shape = tuple(argument._payload.shape)
            fields = argument.__dict__
            marked = fields.get(_DYNAMIC, set()) | fields.get(_WEAK_DYNAMIC, set())
            if marked:
                self.dims.setdefault(position, set()).update(
                    dim for dim in marked if 0 <= dim < len(shape))
            before = self._seen.get(position)
            if before is not None and len(before) == len(shape):
                changed = {dim for dim, (old, new) in enumerate(zip(before, shape)) if old != new}
                changed -= fields.get(_STATIC, set())
                if changed:
                    self.dims.setdefault(position, set()).update(changed)
            self._seen[position] = shape

    def shape(self, position: int, argument: Tensor, env) -> tuple:
        """The traced shape of a tensor argument: symbols for its dynamic dimensions."""
        shape = tuple(argument._payload.shape)
        if self.mode is False:
            return shape
        dims = range(len(shape)) if self.mode else self.dims.get(position, ())
        return tuple(env.create_symbol(extent, (position, dim)) if dim in dims and extent >= 2
                     else extent for dim, extent in enumerate(shape))


class DynamicExecutable:
    """One symbolic trace run for any sizes its guards admit, compiled once per binding."""

    def __init__(self, traced, env, guards, build, build_static=None, clock=None):
        self.traced = traced
        self.env = env
        self.guards = guards
        self._build = build  # concrete Graph -> Executable (generic kernels)
        self._build_static = build_static  # the same with static kernels, or None
        # The compiled function's calls so far (those other executables served break a
        # streak), and (this executable's last call, its binding, its calls in a row).
        self._clock = clock
        self._streak: tuple = (None, None, 0)
        self.symbols = list(env.hints)
        self._sources = [env.sources[name] for name in self.symbols]
        self.specialized: OrderedDict = OrderedDict()  # binding tuple -> Executable
        self.calls = 0
        self._latest = None

    def run(self, args: tuple):
        self.calls += 1
        key = tuple(args[position]._payload.shape[dim] for position, dim in self._sources)
        now = self._clock() if self._clock is not None else self.calls
        last, last_key, streak = self._streak
        streak = streak + 1 if last_key == key and last == now - 1 else 1
        self._streak = (now, key, streak)
        executable = self.specialized.get(key)
        if executable is None:
            executable = self.specialize(key)
        else:
            self.specialized.move_to_end(key)
            if self._build_static is not None and not executable.static and \
                    streak >= STATIC_AFTER:  # the binding's STATIC_AFTER-th call in a row
                executable = self.specialize(key, static=True)
        self._latest = executable
        return executable.run(args)

    def specialize(self, key: tuple, static: bool = False):
        """The Executable for one binding of the symbols (built on first use, with generic
        kernels unless `static`)."""
        binding = dict(zip(self.symbols, key, strict=True))
        build = self._build_static if static else self._build
        executable = build(instantiate(self.traced, binding))
        executable.binding = binding
        executable.static = static
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
