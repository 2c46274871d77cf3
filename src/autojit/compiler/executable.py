"""The executable: one traced, optimized graph ready to run, and its side effects.

api.py builds an Executable per guard set. `run(args)` binds the call's tensors to the graph's
inputs, runs the graph (through the fused kernel plan when a backend compiled one, else the
reference interpreter), then applies the side effects the trace recorded, in eager's order: in-place
updates of captured tensors are written into their storage (bumping version counters; a kernel that
already stored an update there leaves only the bump, see codegen/schedule/in_place.py), `.grad`
outputs are accumulated into the existing .grad tensor in place (so its identity, which guards
check, stays the same) or assigned, and `.grad = None` is repeated. The results are rebuilt into the
structure the function returned.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph
from ..ir.interpreter import interpret
from ..ir.printing import replay_prints
from ..tensor import generator as generators
from ..tensor.device import runtime
from ..tensor.memory_format import new_grad_array
from ..tensor.symbolic import evaluate_poly
from ..tensor.tensor import Tensor
from .result_recipe import Recipe
from .run_binding import LeafBinding, RunBinding
from .segments import Rebind, SegmentedPlan, ValueCheckFailed


class _Skipped:
    """What a direct call returns when it did nothing: the call takes the layered path (and
    makes the direct call again first when it was made for other workers)."""


_SKIPPED, _REMAKE = _Skipped(), _Skipped()


class Executable:
    def __init__(self, graph: Graph, traced: Graph, template, cleared_grads: list, guards,
                 arg_positions: list, plan=None):
        self.graph = graph  # optimized
        self.traced = traced  # as traced, before the passes
        self.template = template  # the result structure, leaves are output indices
        self.cleared_grads = cleared_grads  # tensors whose .grad the function set to None
        self.guards = guards
        self.arg_positions = arg_positions  # graph arg input k <- call argument position
        self.plan = plan  # a backend's kernel plan, or None for the interpreter
        self.calls = 0
        # Results that required grad when traced get a compiled backward
        # (compiled_backward.py): output name -> output number of their shared grad_fn.
        self.backward = None
        self.requiring: dict = {}
        self.joint = None  # the optimized forward+backward graph the two halves come from
        # (error, requiring results) when eager could not differentiate the results either.
        self.failing_backward = None
        self._result_meta = None  # (shape, dtype) of each result that requires grad
        # Anomaly mode: (output index, backward node, output position) checked for nan.
        self.nan_checks: list = []
        self._recipe: Recipe | None = None  # made on the first call
        # The plan's one-function call (_direct_call): None until decided, False for none.
        self._direct = None
        # Names of "grad" outputs whose tensor's .grad the function assigned: each call leaves
        # a new tensor there, as eager does, instead of writing into the one already there.
        self.fresh_grads: set = set()
        # ids of the tensors whose first .grad access was an assignment (or a deletion).
        self.overwritten_grads: frozenset = frozenset()
        # Output name -> ir/eager_layout.OutputLayout of each result eager lays out other
        # than row-major: each run's array is laid out so (result_template.py).
        self.output_layouts: dict = {}
        self.host_outputs: frozenset = frozenset()  # results eager makes on the CPU
        # Output names of leaves the traced call made with requires_grad=True: each run's is
        # a new leaf that requires grad.
        self.output_leaves: frozenset = frozenset()
        # Output names of results eager gives the conjugate bit (`z.conj()`).
        self.conj_outputs: frozenset = frozenset()
        # (captured tensor, or None and an argument position, count): how far each written
        # tensor's version counter moves per call, as eager's in-place ops move it; api.py
        # counts them while tracing. None (a graph built by hand): once per update output.
        self.version_bumps: list | None = None
        # Scalars of Python state the traced call wrote (`model.eval()` inside the function):
        # written again after each run (reachability.replay_function), or None.
        self.python_writes = None
        # (print effects, formatted tensors) of ir/printing.py, or None: printed by each run.
        self.prints = None
        # Symbolic scalars (tensor/symbolic.py): the trace's ShapeEnv when results, prints or
        # writes read them (their graph values and runtime scalars, see RunBinding), and the
        # decisions on graph values checked after each run, before anything is written back.
        self.env = None
        self.value_checks: list = []
        # Sizes the graph computes (unbacked_sizes.py): boundary number -> (symbol, its
        # polynomial over graph values, its value in this executable's binding) of each size
        # bound there; a run that computes another value raises segments.Rebind.
        self.bound_at: dict | None = None

    def run(self, args: tuple, resume=None):
        recipe = self._recipe or self._prepare()
        if recipe.plain:
            direct = self._direct
            if direct is None:
                direct = self._direct = self._direct_call(recipe)
            if direct:
                result = direct(args)
                if result.__class__ is not _Skipped:
                    self.calls += 1
                    return result
                if result is _REMAKE:  # made for other workers (a forked child): made again
                    self._direct = None
            # _run without the effects this executable does not have.
            self.calls += 1
            if recipe.released:
                _release_grads(*recipe.released)
            arrays, owned = self.plan.run_owning([args[position]._payload
                                                  for position in self.arg_positions])
            self._write_back(arrays, args, owned)
            if self.backward is None:
                return recipe.rebuild(self.template, arrays, None, args)
            return self._with_backward(arrays, args, recipe, {}, None)
        if self.value_checks:
            return self._run_checked(args, recipe, resume)
        self.calls += 1
        return self._run(args, recipe)

    def _direct_call(self, recipe):
        """The plan's call of this executable as one function (codegen/schedule/direct_calls.py),
        where its only effects are new .grad tensors and cleared ones: None until the plan has
        its native program, False where there is none or the function cannot take the call."""
        make = getattr(self.plan, "direct_call", None)
        if make is None or self.backward is not None or recipe.updates or self.version_bumps \
                or not all(fresh for *_, fresh in recipe.grads):
            return False
        if self.plan.program is None:
            return None
        template = self.template
        result = recipe.result or (lambda outputs, node, args: recipe.rebuild(
            template, outputs, None, args))
        grads = [(index, tensor, position, dtype)
                 for index, tensor, position, dtype, _ in recipe.grads]
        return make(self.arg_positions, grads, list(self.cleared_grads), result, _SKIPPED,
                    _REMAKE) or False

    def _run_checked(self, args: tuple, recipe, resume=None):
        """A run whose graph computed values the trace decided on: each decision is checked
        before anything is written back; a failed one leaves no effect (the random generators
        are put back where they were) and raises ValueCheckFailed, for api.py to run the call
        another way."""
        states = [(generator, generators.position(generator))
                  for generator in recipe.generators]
        try:
            result = self._run(args, recipe, resume)
        except ValueCheckFailed:  # a Rebind too
            for generator, before in states:
                generators.set_position(generator, before)
            raise
        self.calls += 1
        return result

    def _run(self, args: tuple, recipe, resume=None):
        # The graph's non-captured inputs in order: the call's tensor arguments, and fresh
        # random numbers for each "random" input (drawn in the order the function drew them).
        draws = {}
        if recipe.arguments_only:
            supplied = [args[position]._payload for position in self.arg_positions]
        else:
            supplied, positions = [], iter(self.arg_positions)
            for index, entry in enumerate(self.graph.inputs):
                if entry.kind == "arg":
                    supplied.append(args[next(positions)]._payload)
                elif entry.kind == "random":
                    draws[index] = entry.tensor.draw()
                    supplied.append(draws[index])
                elif entry.kind == "scalar":  # a float read afresh (compiler/tracing.py)
                    draws[index] = entry.tensor.read(args)
                    supplied.append(draws[index])
        if isinstance(self.plan, SegmentedPlan):
            # Checked between segments: what a segment computes is on a checked branch.
            arrays, owned = self.plan.run_owning(supplied, lambda number, leaves: self._check(
                number, leaves, recipe, args), resume)
            binding = RunBinding(recipe, arrays, args) if self.env is not None else None
        else:
            try:
                if self.plan is None:
                    try:
                        arrays, owned = interpret(self.graph, *supplied), frozenset()
                    except Exception as error:
                        # An op's own eager error, before anything is written back: the
                        # compiled function runs the call eagerly to raise it (api.py).
                        error.autojit_rerun_eagerly = True
                        raise
                else:
                    if recipe.released:
                        _release_grads(*recipe.released)
                    arrays, owned = self.plan.run_owning(supplied)
            except Exception as error:
                if not self.value_checks:
                    raise
                # Computed on a branch this call may not take: its error is not eager's to
                # raise unless eager raises it too.
                raise ValueCheckFailed(None, f"the run raised {type(error).__name__}") \
                    from error
            binding = RunBinding(recipe, arrays, args) if self.env is not None else None
            for check in self.value_checks:
                if not check.holds(binding):
                    raise ValueCheckFailed(check)
        if self.nan_checks:
            self._check_nan(arrays)
        if recipe.copied:  # before the write-back can write into what they share
            arrays = list(arrays)
            for index in recipe.copied:
                array = arrays[index]
                arrays[index] = np.array(array, copy=True) if array.__class__ is np.ndarray \
                    else array.copy()
            if binding is not None:
                binding.arrays = arrays
        if recipe.layouts or recipe.host_outputs:
            arrays = recipe.lay_out(arrays, owned)
        self._write_back(arrays, args, owned)
        stored = None  # the tensors made for Python state, which the result shares
        if self.python_writes is not None:
            made = stored = {}
            self.python_writes(args, lambda template: recipe.build(template, arrays, args,
                                                                   binding, made))
        if self.prints is not None:
            made = {}
            self._print(arrays, binding, lambda templates: tuple(
                recipe.build(template, arrays, args, binding, made) for template in templates))
        if self.failing_backward is not None:
            return self._failing_result(arrays, args, binding, stored)
        if self.backward is None:
            return recipe.rebuild(self.template, arrays, None, args, binding, stored)
        return self._with_backward(arrays, args, recipe, draws, binding, stored)

    def _with_backward(self, arrays, args: tuple, recipe, draws: dict, binding, stored=None):
        """The result, its tensors that require grad given the compiled backward's node."""
        if self._result_meta is None:
            self._result_meta = [None] * len(self.requiring)
            for output in self.graph.outputs:
                number = self.requiring.get(output.name)
                if number is not None:
                    self._result_meta[number] = (output.value.shape, output.value.dtype)
        bumped = {id(tensor if tensor is not None else args[position]): count
                  for tensor, position, count in (self.version_bumps or ())}
        node = self.backward.node_for_call(args, arrays, self._result_meta, draws, bumped)
        result = recipe.rebuild(self.template, arrays, node, args, binding, stored)
        node.watch_results(result)
        return result

    def _check(self, number: int, leaves: dict, recipe, args: tuple) -> None:
        """The checks after segment `number` (compiler/segments.py): `leaves` maps the output
        names of the graph values they read to this run's arrays."""
        binding = LeafBinding(recipe, leaves, args)
        for check in self.plan.checks[number]:
            if not check.holds(binding):
                raise ValueCheckFailed(check)
        bound = self.bound_at.get(number) if self.bound_at else None
        if bound:  # sizes the graph computed: this executable's, or the run goes on in another
            values = {name: evaluate_poly(poly, binding) for name, poly, _ in bound}
            if any(values[name] != expected for name, _, expected in bound):
                # Later checks on values read by now first: no executable is compiled for
                # sizes a decision of the trace rules out (`if n > 64: raise ...`).
                leaves = self.env.leaves
                for later in self.plan.checks[number + 1:]:
                    for check in later:
                        if all(name not in leaves or leaves[name].output in binding.arrays
                               for name in check.names) and not check.holds(binding):
                            raise ValueCheckFailed(check)
                raise Rebind(values)

    def _print(self, arrays: tuple, binding, build) -> None:
        """What the function printed and logged, with this run's values (ir/printing.py)."""
        effects, formatted = self.prints
        wanted = {entry.output for entry in formatted}
        values = {output.name: Tensor._make(arrays[index], output.value.dtype)
                  for index, output in enumerate(self.graph.outputs) if output.name in wanted}
        replay_prints(effects, formatted, values, binding, build)

    def _prepare(self) -> Recipe:
        """What every call does with the outputs, worked out on the first call (api.py
        has set `requiring` by then)."""
        self._recipe = Recipe(self)
        return self._recipe

    def _check_nan(self, arrays: tuple) -> None:
        """Anomaly mode: the first backward node (in the order eager ran them) whose gradient
        holds nan raises eager's error, before any side effect is written back."""
        from ..autograd.anomaly import warn_forward_trace

        for index, node, position in self.nan_checks:
            if np.isnan(arrays[index]).any():
                error = RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                     f"{position}th output.")
                # Nothing is written back yet; where no kernel stores in place either, the
                # compiled function runs the call eagerly, which warns and raises from the
                # user's own lines (api.py).
                error.autojit_rerun_eagerly = self.plan is None or getattr(
                    self.plan, "in_place", None) is None
                if not error.autojit_rerun_eagerly:
                    warn_forward_trace(node)
                raise error

    def _failing_result(self, arrays: tuple, args: tuple, binding, stored=None):
        from .compiled_backward import FailingBackward

        error, requiring = self.failing_backward
        requiring = {name: number for number, (name, _) in enumerate(requiring)}
        if requiring != self.requiring:
            self.requiring = requiring
            self._prepare()
        positions = iter(self.arg_positions)
        inputs = [args[next(positions)] if entry.kind == "arg" else entry.tensor
                  for entry in self.graph.inputs if entry.kind in ("arg", "captured")]
        inputs = [tensor for tensor in inputs
                  if isinstance(tensor, Tensor) and tensor._requires_grad]
        return self._recipe.rebuild(self.template, arrays,
                                    FailingBackward(error, len(requiring), inputs), args,
                                    binding, stored)

    def _write_back(self, arrays: tuple, args: tuple, owned: frozenset) -> None:
        """Captured tensors' updates and .grad outputs, after a call; `owned`: the outputs
        whose arrays (or the buffers they view) the plan allocated for this call and for that
        output alone."""
        recipe = self._recipe
        targets = None
        for index, tensor, position in recipe.updates:
            if tensor is None:
                tensor = args[position]
            array = arrays[index]
            # A kernel that stored the new value into the tensor's own storage hands back
            # that very array (codegen/schedule/in_place.py): nothing is left to copy.
            if array is not tensor._payload:
                if array.__class__ is not tensor._payload.__class__:
                    array = _to_device_of(array, tensor._payload)
                # A small array is copied at once: asking each target whether it overlaps
                # cost more (a batch norm's 0-d counters: 46 targets in a small CNN's step).
                if array.size <= 64:
                    array = array.copy()
                else:
                    if targets is None:
                        targets = [(target if target is not None else args[position])._payload
                                   for _, target, position in recipe.updates]
                    if any(np.may_share_memory(array, target) for target in targets):
                        array = array.copy()
                tensor._payload[...] = array
        bumps = self.version_bumps
        if bumps is None:
            bumps = [(tensor, position, 1) for _, tensor, position in recipe.updates]
        for tensor, position, count in bumps:
            (tensor if tensor is not None else args[position])._version_counter.value += count
        for index, tensor, position, dtype, fresh in recipe.grads:
            tensor = tensor if position is None else args[position]
            array = arrays[index]
            # A view of a buffer the call made is not the .grad's alone: a new .grad copies it.
            keep = index in owned and array.base is None
            if fresh:
                if index in recipe.assigned_grads and array.__class__ is np.ndarray and \
                        tensor._payload.__class__ is np.ndarray:
                    # recipe.lay_out laid it out as the tensor the function assigned, in an
                    # array of its own.
                    tensor._grad = Tensor._make(array, dtype)
                    continue
                if keep and array.__class__ is tensor._payload.__class__:
                    # _assign_grad's own case: laid out as eager's AccumulateGrad lays it out.
                    tensor._grad = Tensor._make(new_grad_array(array, tensor._payload, True),
                                                dtype)
                    continue
                tensor._grad = None
            if tensor._payload is not None and array.__class__ is not tensor._payload.__class__:
                array = _to_device_of(array, tensor._payload)  # a 0-d CPU leaf's gradient
            _assign_grad(tensor, array, dtype, keep)
        for tensor in self.cleared_grads:
            tensor._grad = None


def _to_device_of(array, target):
    """`array` copied to where `target` lives: a CPU 0-d tensor (a counter) that a graph run
    on the GPU updated, or a 0-d CPU leaf's gradient, gets its value back on the host (a
    synchronization)."""
    if target.__class__ is np.ndarray:
        return array.to_host()
    return runtime("cuda").from_host(array, target.device_index)


def _release_grads(tensors: tuple, read: frozenset) -> None:
    """Set the .grad of `tensors` to None before a plain run, as the function does first
    (result_recipe._released_before_run), unless the graph reads it."""
    for tensor in tensors:
        grad = tensor._grad
        if grad is not None and id(grad) not in read:
            tensor._grad = None


def _assign_grad(tensor: Tensor, array: np.ndarray, dtype, owned: bool = False) -> None:
    current = tensor._grad
    if current is not None and current._payload is not None and not current._requires_grad and \
            current._payload.shape == array.shape and current._dtype is dtype:
        if not np.shares_memory(current._payload, array):
            current._payload[...] = array
        current._bump_version()
        return
    # A new .grad, laid out as eager's AccumulateGrad lays it out (the parameter's strides
    # when it is dense, else contiguous); a device array copies itself on the device.
    tensor._grad = Tensor._make(new_grad_array(array, tensor._payload, owned), dtype)
