"""The executables of a trace's bindings of computed sizes (unbacked_sizes.py), made without
scheduling each binding's graph again.

The trace's graph, through the passes with its symbols, is split into segments once, where
the sizes are bound (segments.py). An executable for a binding then needs, per segment, a plan
for that segment's graph at the binding:

- one made before for the same values of the symbols the segment holds: the segments that
  compute the counts hold none of them, and are the same graph and plan for every binding;
- else, where a plan was scheduled for the segment at other sizes, that plan rebound to these
  (the backend's `rebind`, codegen/schedule/rebinding.py: the same steps, with the shapes,
  strides and buffers of these sizes; a generic kernel's code is shared);
- else, and where the rebinding finds that a decision of that schedule does not hold at these
  sizes, a schedule of the segment, which is then the one later bindings rebind.

Instantiating the graph and its last segment checks again only the shape rules of nodes that
involve a symbol (ir/instantiate.Instantiation). `scheduled` and `rebound` count the plans made
each way. See docs/notes/segments.md, "Sizes the graph computes".
"""

from __future__ import annotations

from collections import OrderedDict

from ..ir.instantiate import Instantiation
from ..ir.segments import Segment
from ..ir.segments import split as split_segments
from .dynamic_shapes import MAX_BINDINGS
from .segments import SegmentedPlan, boundaries
from .stages import build, rebind, run_stage, schedule, without_cycle_collection


class BindingPlans:
    """A trace's graph optimized with its symbols, split once, and its segments' plans."""

    def __init__(self, compiled, guarded, optimized):
        traced = guarded.trace
        self.compiled, self.guarded = compiled, guarded
        self.optimized = optimized
        # The executable's own graph is the one with its symbols (its results, what they
        # share, their dtypes are the same at every binding; each segment is instantiated),
        # but where a random draw's shape holds a symbol: each run draws that binding's shape.
        whole = Instantiation(optimized)
        self.graph = whole if any(entry.kind == "random" and symbolic for entry, symbolic in
                                  zip(optimized.inputs, whole.inputs)) else None
        found = boundaries(traced.env, traced.graph)
        self.checks = [checks for _, checks in found]
        self.segments = run_stage(compiled, "split", split_segments, optimized,
                                  [names for names, _ in found])
        self._instantiations = [Instantiation(segment.graph) for segment in self.segments]
        self._symbols = [sorted(made.symbols) for made in self._instantiations]
        self._fresh_grads = set(traced.tracer.fresh_grads)
        # (segment number, values of its symbols) -> (its Segment at them, its plan)
        self._made: OrderedDict = OrderedDict()
        self._templates: dict = {}  # segment number -> the plan scheduled last for it
        self.scheduled = 0  # segment plans scheduled
        self.rebound = 0  # segment plans rebound from a schedule at other sizes

    @staticmethod
    def applies(guarded, optimized) -> bool:
        """Whether a trace's bindings can be made this way: its graph went through the passes
        with its symbols, is split where sizes are bound, and has no compiled backward."""
        return optimized is not None and not guarded.has_backward and \
            bool(boundaries(guarded.trace.env, guarded.trace.graph))

    @without_cycle_collection
    def executable(self, binding: dict):
        """The Executable of the trace at `binding` (symbol name -> value)."""
        compiled = self.compiled
        compiled.call_arguments = self.guarded.trace.args
        try:
            memo: dict = {}  # the shapes the graph and its segments share, at `binding`
            graph = self.optimized if self.graph is None else \
                self.graph.instantiate(binding, memo=memo)
            segments, plans = [], []
            for number, segment in enumerate(self.segments):
                key = (number, tuple(binding[name] for name in self._symbols[number]))
                made = self._made.get(key)
                if made is None:
                    concrete = Segment(self._instantiations[number].instantiate(
                        binding, memo=memo), segment.carried, segment.checks)
                    made = self._made[key] = (concrete, self._plan(number, concrete.graph))
                    while len(self._made) > MAX_BINDINGS * len(self.segments):
                        self._made.popitem(last=False)
                else:
                    self._made.move_to_end(key)
                segments.append(made[0])
                plans.append(made[1])
            plan = SegmentedPlan(segments, plans, self.checks)
            return run_stage(compiled, "build", build, compiled, self.guarded, graph, graph,
                             None, plan, None)
        finally:
            compiled.call_arguments = ()

    def _plan(self, number: int, graph):
        """Segment `number`'s plan for `graph`: rebound from its template, else scheduled."""
        compiled = self.compiled
        template = self._templates.get(number)
        if template is not None:
            plan = run_stage(compiled, "schedule", rebind, compiled, template, graph)
            if plan is not None:
                self.rebound += 1
                return plan
        plan = run_stage(compiled, "schedule", schedule, compiled, graph, True,
                         self._fresh_grads)
        self.scheduled += 1
        if plan is not None:
            self._templates[number] = plan
        return plan
