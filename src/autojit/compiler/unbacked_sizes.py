"""Sizes the graph computes: one trace for every count `nonzero` or a boolean mask finds.

A trace that needs a size from data (the count `nonzero`, `x[mask]`, `masked_select` or
`torch.where(cond)` finds) binds a size symbol for it, `u0` (tensor/shape_env.py's
`size_from_value`), and later ops trace with that symbolic extent, as with a dynamic dimension
of an argument. The graph is split where the count is read (segments.py): the segment that
computes it runs, the value is checked to be at least 2 (sizes 0 and 1 broadcast and empty
apart, and were specialized on when traced), and the rest of the graph runs for that value.

`UnbackedExecutable` holds the trace. Like dynamic_shapes.DynamicExecutable it has an
executable per binding of its symbols (the argument sizes and the computed sizes), with
generic kernels that read their sizes at run time, so a new count compiles no LLVM code, and
keeps the last MAX_BINDINGS of them; binding_plans.py makes each from the plans made before,
rebound to the binding's sizes, so a new count schedules nothing either. A call cannot know
the computed sizes before its graph runs, so it starts with the executable of the last call at
the same argument sizes; at the boundary that binds the sizes, a run that computed others
raises segments.Rebind, and the call goes on in the executable for the values found (built
then, for a new count): from the next segment on, with the results so far, where the segments
up to that boundary are the same graphs in both (a random draw whose size is a computed one
shifts the draws after it, so a graph with one starts again instead: nothing was written
back, the generators are put back).
Sizes bound at later boundaries take the first executable's values until they are computed.
See docs/notes/segments.md.
"""

from __future__ import annotations

from ..ir.instantiate import instantiate
from ..ir.passes import optimize
from ..tensor.symbolic import symbols_in
from .binding_plans import BindingPlans
from .dynamic_shapes import MAX_BINDINGS, DynamicExecutable
from .segments import Rebind, SegmentedPlan, ValueCheckFailed

__all__ = ["MAX_BINDINGS", "UnbackedExecutable", "bind_boundaries", "once",
           "optimize_symbolic", "split_reason", "unbacked_executable"]


class UnbackedExecutable(DynamicExecutable):
    """A trace with sizes its graph computes, run for any of them, compiled once per binding."""

    def __init__(self, traced, env, guards, build, clock=None, optimized=None, plans=None):
        super().__init__(traced, env, guards, build, None, clock)
        # The traced graph through the passes with its symbols (optimize_symbolic), which
        # each binding instantiates instead of optimizing its own; None where it could not be.
        self.optimized = optimized
        # binding_plans.BindingPlans, which makes each binding's executable from the segments
        # of `optimized` split once and plans made before; None: each is compiled whole.
        self.plans = plans
        self.unbacked = list(env.unbacked)
        self.symbols = self.symbols + self.unbacked
        checked = {check.condition for check in env.value_checks}
        # A size whose range check was folded into the guards (computed from constant
        # tensors, compiler/constant_checks.py) is the traced one on every call.
        self.fixed = {name for name, size in env.unbacked.items()
                      if size.condition not in checked}
        self._recent: dict = {}  # argument sizes -> the executable the last such call ran
        # A random draw whose size is a computed one: the draws after it follow its size.
        self.resumable = not any(
            entry.kind == "random" and symbols_in(entry.value.shape) & set(self.unbacked)
            for entry in traced.inputs)
        self.rebinds = 0  # runs that went on in another binding's executable

    def run(self, args: tuple):
        self.calls += 1
        sizes = tuple(args[position]._payload.shape[dim] for position, dim in self._sources)
        executable = self._recent.get(sizes)
        if executable is None:
            executable = self._executable(sizes + tuple(self.env.unbacked[name].hint
                                                        for name in self.unbacked))
        resume = None
        # Each start binds at least the first size it found different: at most one per size.
        for _ in range(len(self.unbacked) + 1):
            try:
                result = executable.run(args, resume)
            except Rebind as rebind:
                self.rebinds += 1
                key = sizes + tuple(rebind.values.get(name, executable.binding[name])
                                    for name in self.unbacked)
                try:
                    following = self._executable(key)
                except Exception as error:  # noqa: BLE001 - sizes the trace could not take
                    raise ValueCheckFailed(None, f"the graph cannot be compiled for the sizes "
                                           f"it computed ({type(error).__name__}: "
                                           f"{error})") from error
                number = rebind.state[0]
                resume = rebind.state if self.resumable and \
                    following.plan.same_until(executable.plan, number) else None
                executable = following
                continue
            self._recent[sizes] = self._latest = executable
            if len(self._recent) > MAX_BINDINGS:
                del self._recent[next(iter(self._recent))]
            return result
        raise ValueCheckFailed(None, "the sizes the graph computes did not settle")

    def _executable(self, key: tuple):
        executable = self.specialized.get(key)
        if executable is None:
            return self.specialize(key)
        self.specialized.move_to_end(key)
        return executable

    def specialize(self, key: tuple, static: bool = False):
        """The Executable for one binding of the symbols, with generic kernels, told which
        computed sizes each segment boundary binds."""
        if self.optimized is None:
            executable = super().specialize(key)
        else:
            binding = dict(zip(self.symbols, key, strict=True))
            if self.plans is not None:
                executable = self.plans.executable(binding)
            else:
                executable = self._build(instantiate(self.optimized, binding), optimized=True)
            executable.binding, executable.static = binding, False
            self.specialized[key] = executable
            while len(self.specialized) > MAX_BINDINGS:
                self.specialized.popitem(last=False)
        bind_boundaries(executable, self.env, self.fixed)
        return executable

    def _current(self):
        if self._latest is None:
            self._latest = self._executable(tuple(self.env.size_hints()[name]
                                                  for name in self.symbols))
        return self._latest


def unbacked_executable(compiled, traced, guarded):
    """The executable of a trace with sizes its graph computes (api.py): one that serves its
    own call where the trace changed Python state's structure (stages.interpret_once), else
    an UnbackedExecutable, compiled now for the traced call's sizes."""
    from .stages import interpret_once, run_stage

    env = traced.env
    if traced.changes.structural:
        return once(traced.graph, env, lambda graph: interpret_once(compiled, guarded, graph))
    plans: dict = {}  # the segments that compute the sizes, the same for every binding
    optimized = run_stage(compiled, "optimize", optimize_symbolic, traced.graph, env)
    executable = UnbackedExecutable(
        traced.graph, env, guarded.guards,
        lambda concrete, optimized=False: compiled._compile_binding(
            guarded, concrete, optimized=optimized, plans=plans),
        clock=lambda: compiled._stats.calls, optimized=optimized,
        plans=BindingPlans(compiled, guarded, optimized)
        if BindingPlans.applies(guarded, optimized) else None)
    executable.specialize(tuple(env.size_hints()[name] for name in executable.symbols))
    return executable


def split_reason(check, env) -> str:
    """The break reason of a graph break compiled as a split (stats and explain())."""
    if check.kind == "value":
        return f"{check.what}: the trace specialized on {check.condition}"
    name = next((name for name, size in env.unbacked.items()
                 if size.condition == check.condition), "?")
    return f"{check.what}: the size {name}, computed by the graph, bound on each run once " \
        f"computed ({check.condition} checked)"


def optimize_symbolic(graph, env):
    """The pass pipeline over a graph with its symbols, or None where the passes decided
    anything on them (a comparison, a size made an int: recorded in `env`, then taken back
    here) or failed: every binding is then optimized on its own. A graph the passes take
    without a decision is optimized for every binding at once, and a new count costs only
    its instantiation and schedule."""
    before = (len(env.value_checks), len(env.guards), len(env.runtime_guards),
              len(env.specializations), set(env._guard_set))
    hook, env.on_value_check = env.on_value_check, None
    try:
        optimized = optimize(graph)
    except Exception:  # noqa: BLE001 - a pass that needs a number: each binding's own passes
        optimized = None
    finally:
        env.on_value_check = hook
    after = (len(env.value_checks), len(env.guards), len(env.runtime_guards),
             len(env.specializations))
    if after != before[:4]:
        del env.value_checks[before[0]:], env.guards[before[1]:]
        del env.runtime_guards[before[2]:], env.specializations[before[3]:]
        env._guard_set = before[4]
        return None
    return optimized


def bind_boundaries(executable, env, fixed=frozenset()) -> None:
    """Tell `executable` (compiled for `executable.binding`) which computed sizes each of its
    segment boundaries binds, so that a run that computes others raises segments.Rebind."""
    by_condition = {size.condition: name for name, size in env.unbacked.items()
                    if name not in fixed}
    plan = executable.plan
    if not isinstance(plan, SegmentedPlan):
        if by_condition:
            raise AssertionError("a graph that computes a size it binds is split there")
        return
    bound_at = {}
    for number, checks in enumerate(plan.checks):
        # (The range check, or a branch of the same text the trace made before it.)
        bound = [by_condition[check.condition] for check in checks
                 if check.condition in by_condition]
        if bound:
            bound_at[number] = [(name, env.unbacked[name].poly, executable.binding[name])
                                for name in bound]
    executable.bound_at = bound_at


def once(traced_graph, env, interpret):
    """The executable of a trace that serves its own call (api.py's interpret_once), with its
    computed sizes the traced call's: each checked to be those (after the run, or where a
    segment boundary binds it)."""
    from ..tensor.shape_env import ValueCheck
    from ..tensor.symbolic import poly_source

    binding = env.size_hints()
    executable = interpret(instantiate(traced_graph, binding))
    executable.binding = binding
    checked = {check.condition for check in env.value_checks}
    fixed = {name for name, size in env.unbacked.items() if size.condition not in checked}
    if isinstance(executable.plan, SegmentedPlan):
        bind_boundaries(executable, env, fixed)
        return executable
    for name, size in env.unbacked.items():
        if name not in fixed:
            executable.value_checks.append(ValueCheck(
                f"{poly_source(size.poly)} == {size.hint}", "value", None, size.what))
    return executable
