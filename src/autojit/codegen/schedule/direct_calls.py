"""A plain executable's steady-state call, written as one Python function around the runner.

Once a plan's run is a native program (cpu/program.py), a call of a small compiled function
spends most of its time in Python: the executable binds the arguments, the plan gathers its
inputs, the program allocates the fresh arrays, calls the runner and picks the outputs, the
executable writes .grad and rebuilds the result, each a layer of calls and checks for effects
the function may not have (about 5 us of a 10 us call of a 100-op chain). For an executable
whose only effects are fresh .grad tensors and cleared .grads (compiler/executable.py's plain
recipe, no backward), `direct_call` writes the whole call as the source of one function, the
way guards.py writes its checks: the inputs read straight from the arguments and the captured
tensors, the runner called with the program's words, each .grad made from its array, the
result built by the executable's builder. What it cannot take, it leaves to the layered path:
the function returns `skipped` before doing anything when the plan is running already or a
profiler is on, or when the runner finds the inputs differ from the recorded call
(input_checks.CHANGED), and `remake` when the workers changed (a forked child's); a kernel's
error is raised as the plan raises it (steps.reference_error). The function's `source`
attribute shows its code.
"""

from __future__ import annotations

import operator

import numpy as np

from ...tensor.memory_format import new_grad_array
from ...tensor.state import state
from ...tensor.tensor import Tensor
from ..cpu import input_checks, workers
from ..cpu import program as programs
from ..cpu.gemm import blas
from ..kernel import KernelError
from .steps import mark_repeatable, reference_error


def direct_call(plan, arg_positions: list, grads: list, cleared: list, result, skipped,
                remake):
    """The call as one function `call(args)`, or None when this plan's program cannot take it.

    `arg_positions[k]`: the call position of the graph's k-th argument input; `grads`: per
    fresh .grad output, (graph output index, captured tensor or None, argument position or
    None, dtype); `cleared`: tensors whose .grad the call sets to None; `result(outputs, node,
    args)` builds the result from the graph's output arrays; `skipped`: what `call` returns
    when it did nothing, for the caller to take the layered path; `remake`: the same, when the
    process's workers are no longer those it was made for (a forked child's), so that the
    caller makes it again once the layered path has run."""
    program = plan.program
    if not program:
        return None
    native = workers.shared()
    if program._call_workers is not native:
        program._make_call_words(native)
    run = programs._runner()["run"]
    inputs = len(plan._input_slots)
    lines, names = [], {}

    def constant(value, prefix: str) -> str:
        name = f"{prefix}{len(names)}"
        names[name] = value
        return name

    arguments = iter(arg_positions)
    reads = [f"args[{next(arguments)}]._payload" if tensor is None else
             f"{constant(tensor, 'C')}._payload" for _, tensor in plan._input_slots]
    fresh = [f"empty({constant(shape, 'S')}, {constant(dtype, 'D')})"
             for shape, dtype in program._fresh]
    if program._checks is None:  # the runner cannot check these inputs: Python does
        lines += [f"    inputs = [{', '.join(reads)}]",
                  "    if not program._inputs_match(plan, inputs):",
                  "        return SKIPPED",
                  f"    arrays = inputs + [{', '.join(fresh)}]"]
    else:
        lines.append(f"    arrays = [{', '.join(reads + fresh)}]")
    native_call = ["with LOCK:", "    status = RUN(CALL, id(arrays))"]
    if plan.calls_blas:  # its products run with OpenBLAS on one thread, as the plan's do
        native_call = ["with ONE_THREAD:", *(f"    {line}" for line in native_call)]
    lines += ["    plan._running = True", "    try:",
              *(f"        {line}" for line in native_call),
              "    finally:", "        plan._running = False", "    if status:",
              "        return failed(status, args)"]
    for index, tensor, position, dtype in grads:
        kind, array = program._outputs[index][:2]
        if kind != "array" or array < inputs or index not in program.owned_outputs:
            return None  # not an array the call made for this .grad alone
        owner = f"args[{position}]" if tensor is None else constant(tensor, "G")
        # The fresh array is row-major: a parameter laid out otherwise (dense) gets its
        # .grad in its own layout, as eager's AccumulateGrad gives it.
        lines += [f"    grad = arrays[{array}]",
                  f"    if not {owner}._payload.flags.c_contiguous:",
                  f"        grad = new_grad(grad, {owner}._payload, True)",
                  f"    {owner}._grad = make(grad, {constant(dtype, 'T')})"]
    lines += [f"    {constant(tensor, 'E')}._grad = None" for tensor in cleared]
    lines.append("    return result(OUTPUTS(arrays), None, args)")
    source = "def call(args):\n" \
        "    if plan._running or state.profiler is not None:\n        return SKIPPED\n" \
        "    if shared() is not WORKERS:\n        return REMAKE\n" + "\n".join(lines) + "\n"

    def failed(status: int, args: tuple):
        if status == input_checks.CHANGED:
            return skipped
        supplied = [args[position]._payload for position in arg_positions]
        try:
            program._fail(plan, status)
        except KernelError as failure:
            raise mark_repeatable(reference_error(plan.graph, supplied, failure),
                                  plan.in_place is None) from None

    names.update(plan=plan, program=program, state=state,
                 shared=workers.shared, WORKERS=native, LOCK=native.lock, RUN=run,
                 CALL=program._checked_call, empty=np.empty, make=Tensor._make, result=result,
                 new_grad=new_grad_array,
                 OUTPUTS=_picker(program, program._array_outputs), failed=failed, SKIPPED=skipped,
                 REMAKE=remake, ONE_THREAD=blas.one_thread())
    exec(compile(source, "<autojit direct call>", "exec"), names)  # noqa: S102
    call = names["call"]
    call.source = source
    return call


def _picker(program, positions: tuple | None):
    """A function giving the graph's outputs as a tuple, from the call's arrays: those at
    `positions`, or (None) each made as the program makes it (a view of one of them)."""
    if positions is None:
        recipes, output = program._outputs, program._output
        return lambda arrays: tuple([output(recipe, arrays) for recipe in recipes])
    if len(positions) > 1:
        return operator.itemgetter(*positions)
    if len(positions) == 1:
        (position,) = positions
        return lambda arrays: (arrays[position],)
    return lambda arrays: ()
