"""Differential tests with effects: random programs writing through views, compiled vs eager.

Each example draws a program over two argument tensors `a` and `b` of one 2-D shape (float64
or float32, contiguous or stored transposed), a local `z` (a clone of `a`, `a.clone() * w` so
that its writes are recorded for autograd, or a tensor a factory makes on every call, filled
or `zeros_like(a)` with `a` added in place), a captured tensor `cap` and a captured Python
scalar `k`. Its steps write in place through chains of views (a column, a row, a row of the
transpose, narrow, a slice with a step, a slice of the transpose, an element of the
flattened tensor, views of views) into the local, the captured tensor or the arguments
themselves (mul_, add_, sub_, div_, clamp_, zero_, fill_, setitem, copy_ and add_ of a tensor
read through the same views); keep views to write or read after their base was written;
rebind the local; read values back (copied, or the view itself, which must show the later
writes); read the captured state, or return the captured tensor itself. Some programs end
with a backward into a leaf `w`.

The program runs compiled and eagerly, each on fresh state, four times: twice, then a change
between calls (the captured tensor written in place or rebound, the scalar changed, a hook
registered on `w` or removed), then twice again. After each call, the results, the
arguments (values and `_version`), the captured tensor and `w.grad` must agree, and the
second call must have run an executable the first made. The examples are derandomized (no
database, no deadline), as in test_compile_hypothesis.py.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autojit
from autojit import CompileWarning

SETTINGS = settings(max_examples=800, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NUMBERS = [-1.5, 0.5, 2.0, 3.0]
CHANGES = ["none", "cap_in_place", "cap_rebound", "k_changed", "hook_registered",
           "hook_removed"]
ORIGINS = ["clone", "clone", "full", "zeros_like"]  # how the local z is made


# ---- drawing a program --------------------------------------------------------------------------

def draw_view(draw, shape: tuple, first: bool) -> tuple[tuple, tuple]:
    """One view of a tensor of `shape`: (spec, its shape)."""
    rank = len(shape)
    kinds = ["narrow", "step"] + (["col", "row", "t_row", "transpose_slice"] if rank == 2
                                  else ["item"])
    if first and rank == 2:
        kinds.append("flat_item")
    kind = draw(st.sampled_from(kinds))
    if kind == "col":
        return ("col", draw(st.integers(0, shape[1] - 1))), (shape[0],)
    if kind in ("row", "item"):
        return (kind, draw(st.integers(-shape[0], shape[0] - 1))), shape[1:]
    if kind == "t_row":
        return ("t_row", draw(st.integers(0, shape[1] - 1))), (shape[0],)
    if kind == "flat_item":
        return ("flat_item", draw(st.integers(0, shape[0] * shape[1] - 1))), ()
    if kind == "transpose_slice":
        start = draw(st.integers(0, shape[1] - 1))
        stop = draw(st.integers(start + 1, shape[1]))
        return ("transpose_slice", start, stop), (stop - start, shape[0])
    dim = draw(st.integers(0, rank - 1))
    if kind == "narrow":
        start = draw(st.integers(0, shape[dim] - 1))
        length = draw(st.integers(1, shape[dim] - start))
        return ("narrow", dim, start, length), shape[:dim] + (length,) + shape[dim + 1:]
    start, step = draw(st.integers(0, shape[dim] - 1)), draw(st.integers(1, 3))
    extent = len(range(start, shape[dim], step))
    return ("step", dim, start, step), shape[:dim] + (extent,) + shape[dim + 1:]


def draw_chain(draw, shape: tuple) -> tuple:
    chain = []
    for position in range(draw(st.integers(0, 2))):
        if not shape:
            break
        spec, shape = draw_view(draw, shape, position == 0)
        chain.append(spec)
    return tuple(chain)


@st.composite
def programs(draw):
    """(dtype, shape, steps, backward, change, reuse, layout, origin). reuse passes the same
    argument tensors to every call (their writes accumulate), else fresh ones each call;
    layout "transposed" passes arguments that are transposed views of their own storage;
    origin says how the local z is made (ORIGINS)."""
    shape = (draw(st.integers(2, 4)), draw(st.integers(2, 4)))
    shapes = {"a": shape, "b": shape, "z": shape, "cap": shape}  # every name a step may use
    steps = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["write", "write", "write", "read", "read", "keep", "keep",
                                     "captured", "rebind"]))
        kept = sorted(name for name in shapes if name.startswith("v"))
        if kept and kind in ("write", "read") and draw(st.booleans()):
            target = draw(st.sampled_from(kept))  # a view made before later writes
        elif kind == "read" and draw(st.integers(0, 2)) == 0:
            target = "cap"  # returned as it is, when read itself
        else:
            target = draw(st.sampled_from(sorted(shapes)))
        chain = draw_chain(draw, shapes[target])
        written_shape = chain_shape(shapes[target], chain)
        if kind == "write":
            op = draw(st.sampled_from(["mul_", "add_", "sub_", "div_", "zero_", "fill_",
                                       "clamp_", "copy_", "add_tensor", "setitem"]))
            if op in ("copy_", "add_tensor"):
                # Another name through the same views when it has the target's shape, else
                # a 0-d value of it (broadcast).
                same = [name for name in sorted(shapes) if shapes[name] == shapes[target]]
                operand = (draw(st.sampled_from(same)), True) if draw(st.booleans()) else (
                    draw(st.sampled_from(sorted(shapes))), False)
            elif op == "setitem" and not (chain and chain[-1][0] in SETTABLE):
                if written_shape:  # x[...][0:1] = c
                    chain, operand = chain + (("narrow", 0, 0, 1),), draw(st.sampled_from(
                        NUMBERS))
                else:
                    op, operand = "fill_", draw(st.sampled_from(NUMBERS))
            else:
                operand = draw(st.sampled_from(NUMBERS))
            steps.append(("write", target, chain, op, operand))
        elif kind == "read":
            steps.append(("read", target, chain, draw(st.booleans())))
        elif kind == "keep":  # a view made now, written or read by later steps
            name = f"v{len(steps)}"
            steps.append(("keep", name, target, chain))
            shapes[name] = written_shape
            if draw(st.booleans()):  # and its base written before the view is used again
                steps.append(("write", target, (), draw(st.sampled_from(["mul_", "add_"])),
                              draw(st.sampled_from(NUMBERS))))
        elif kind == "captured":  # the captured tensor read, or returned as it is
            steps.append(("captured", target, draw(st.booleans())))
        else:  # z becomes a new tensor: views kept of the old one stay views of the old one
            steps.append(("rebind", draw(st.sampled_from(NUMBERS))))
    # With a backward, z is sometimes a.clone() * w: the writes into it are then recorded
    # for autograd, and the backward goes through them.
    backward = draw(st.sampled_from(["none", "w", "through_z"]))
    changes = CHANGES if backward != "none" else CHANGES[:4]
    return (draw(st.sampled_from(["float64", "float64", "float32"])), shape, tuple(steps),
            backward, draw(st.sampled_from(changes)), draw(st.booleans()),
            draw(st.sampled_from(["contiguous", "contiguous", "transposed"])),
            draw(st.sampled_from(ORIGINS)))


def chain_shape(shape: tuple, chain: tuple) -> tuple:
    """The shape `chain` leaves (draw_view's shape rules, replayed)."""
    for spec in chain:
        shape = VIEW_SHAPES[spec[0]](shape, spec)
    return shape


VIEW_SHAPES = {
    "col": lambda shape, spec: (shape[0],),
    "row": lambda shape, spec: shape[1:],
    "item": lambda shape, spec: shape[1:],
    "t_row": lambda shape, spec: (shape[0],),
    "flat_item": lambda shape, spec: (),
    "transpose_slice": lambda shape, spec: (spec[2] - spec[1], shape[0]),
    "narrow": lambda shape, spec: shape[:spec[1]] + (spec[3],) + shape[spec[1] + 1:],
    "step": lambda shape, spec: shape[:spec[1]] + (len(range(spec[2], shape[spec[1]],
                                                             spec[3])),) + shape[spec[1] + 1:],
}
# The last view of a chain that `parent[key] = value` can stand for.
SETTABLE = ("col", "row", "item", "narrow", "step")


# ---- running a program --------------------------------------------------------------------------

def view(tensor, spec: tuple):
    kind = spec[0]
    if kind == "col":
        return tensor[:, spec[1]]
    if kind in ("row", "item"):
        return tensor[spec[1]]
    if kind == "t_row":
        return tensor.t()[spec[1]]
    if kind == "flat_item":  # a view of a contiguous tensor, else of a copy (as eager)
        return tensor.reshape(-1)[spec[1]]
    if kind == "transpose_slice":
        return tensor.transpose(0, 1)[spec[1]:spec[2]]
    if kind == "narrow":
        return tensor.narrow(spec[1], spec[2], spec[3])
    _, dim, start, step = spec
    return tensor[(slice(None),) * dim + (slice(start, None, step),)]


def through(tensor, chain: tuple):
    for spec in chain:
        tensor = view(tensor, spec)
    return tensor


def key(spec: tuple):
    """The index `parent[key]` that is the view `spec` of parent."""
    kind = spec[0]
    if kind == "col":
        return (slice(None), spec[1])
    if kind in ("row", "item"):
        return spec[1]
    if kind == "narrow":
        return (slice(None),) * spec[1] + (slice(spec[2], spec[2] + spec[3]),)
    return (slice(None),) * spec[1] + (slice(spec[2], None, spec[3]),)


def write(env: dict, step: tuple) -> None:
    _, target, chain, op, operand = step
    if op == "setitem":
        through(env[target], chain[:-1])[key(chain[-1])] = operand
        return
    written = through(env[target], chain)
    if op in ("copy_", "add_tensor"):
        name, same_views = operand
        value = through(env[name], chain) * 0.5 if same_views else env[name].sum() * 0.25
        if not written.requires_grad:  # no history into a tensor from outside (eager's too)
            value = value.detach()
        (written.copy_ if op == "copy_" else written.add_)(value)
    elif op == "zero_":
        written.zero_()
    elif op == "clamp_":
        written.clamp_(-abs(operand), abs(operand))
    else:
        getattr(written, op)(operand)


def make_local(a, backward: str, origin: str, state: dict):
    if backward == "through_z":
        return a.clone() * state["w"]
    if origin == "full":  # made anew by each call: writes never carry over to the next
        return autojit.full(tuple(a.shape), 0.5, dtype=a.dtype)
    if origin == "zeros_like":
        return autojit.zeros_like(a).add_(a)
    return a.clone()


def make_program(steps: tuple, backward: str, state: dict, origin: str = "clone"):
    def program(a, b):
        z = make_local(a, backward, origin, state)
        env = {"a": a, "b": b, "z": z, "cap": state["cap"]}
        results = []
        for step in steps:
            if step[0] == "write":
                write(env, step)
            elif step[0] == "read":
                _, source, chain, itself = step
                read = through(env[source], chain)
                results.append(read if itself else read * 1)
            elif step[0] == "keep":
                env[step[1]] = through(env[step[2]], step[3])
            elif step[0] == "captured":
                results.append(state["cap"] if step[2] else
                               (state["cap"] * env[step[1]].sum()).sum(0) * state["k"])
            else:
                env["z"] = env["z"] * step[1] + env["a"]
        results.append(env["z"])
        if backward != "none":
            w = state["w"]
            w.grad = None
            (env["z"].sum(0) * w * state["k"]).sum().backward()
            results.append(w.grad * 1)
        return results

    return program


def fresh_state(dtype: str, shape: tuple, seed: int) -> dict:
    generator = np.random.default_rng(seed)
    return {"cap": autojit.tensor(generator.uniform(-1, 1, shape).astype(dtype)), "k": 1.5,
            "w": autojit.tensor(generator.uniform(-1, 1, shape[1]).astype(dtype),
                                requires_grad=True)}


def arguments(arrays, layout: str) -> list:
    if layout == "transposed":  # the same values, stored transposed
        return [autojit.tensor(np.ascontiguousarray(array.T)).t() for array in arrays]
    return [autojit.tensor(array) for array in arrays]


def change_state(state: dict, handles: dict, change: str) -> None:
    """Between calls. Hook handles are kept where the function cannot reach them: the hook
    alone must make the next call trace again."""
    if change == "cap_in_place":
        state["cap"].mul_(-2)
    elif change == "cap_rebound":
        state["cap"] = state["cap"] * 0.5 + 1
    elif change == "k_changed":
        state["k"] = -0.25
    elif change == "hook_registered":
        handles["hook"] = state["w"].register_hook(lambda grad: grad * 3)
    elif change == "hook_removed":
        handles["hook"].remove()


def snapshot(results: list, arguments: list, state: dict) -> list:
    """Copies of everything the call left (the next call may write into it)."""
    grad = state["w"].grad
    return ([np.array(result.detach().numpy()) for result in results] +
            [np.array(argument.numpy()) for argument in arguments] +
            [argument._version for argument in arguments] +
            [np.array(state["cap"].numpy()), None if grad is None else np.array(grad.numpy())])


def run(program_spec, seed: int, compiled: bool):
    dtype, shape, steps, backward, change, reuse, layout, origin = program_spec
    state, handles = fresh_state(dtype, shape, seed), {}
    if change == "hook_removed":
        handles["hook"] = state["w"].register_hook(lambda grad: grad * -2)
    function = make_program(steps, backward, state, origin)
    if compiled:
        function = autojit.compile(function)
    arrays = np.random.default_rng(seed + 1).uniform(-2, 2, (2,) + shape).astype(dtype)
    tensors = arguments(arrays, layout)
    outcomes = []
    for call in range(4):
        if call == 2:
            change_state(state, handles, change)
        if not reuse:
            tensors = arguments(arrays, layout)
        outcomes.append(snapshot(function(*tensors), tensors, state))
    return outcomes, function


@SETTINGS
@given(programs(), st.integers(0, 2**16))
def test_random_program_with_effects_compiled_equals_eager(program_spec, seed):
    expected, _ = run(program_spec, seed, compiled=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)  # compiled, never a graph break
        actual, compiled = run(program_spec, seed, compiled=True)
    where = f"program {program_spec}, seed {seed}"
    for call, (got, want) in enumerate(zip(actual, expected, strict=True)):
        assert len(got) == len(want), f"{where}: call {call}"
        for index, (mine, theirs) in enumerate(zip(got, want, strict=True)):
            message = f"{where}: call {call}, item {index}"
            if isinstance(theirs, np.ndarray):
                assert isinstance(mine, np.ndarray), message
                assert mine.dtype == theirs.dtype, message
                tolerance = 1e-12 if theirs.dtype == np.float64 else 1e-5
                np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance,
                                           err_msg=message)
            else:
                assert mine == theirs, f"{message}: {mine} != {theirs}"
    assert compiled.executables, where
    # The second call (the same state as the first) ran an executable the first had made.
    assert max(executable.calls for executable in compiled.executables) >= 2, where


def test_the_program_strategy_covers_every_view_write_and_change():
    seen = set()

    @settings(SETTINGS, max_examples=300)
    @given(programs())
    def collect(program_spec):
        dtype, _, steps, backward, change, reuse, layout, origin = program_spec
        seen.update({("change", change), ("backward", backward), ("reuse", reuse),
                     ("layout", layout), ("dtype", dtype), ("origin", origin)})
        for step in steps:
            seen.add(step[0])
            if step[0] in ("write", "read"):
                seen.add(("target", step[1][0]))
                seen.update(spec[0] for spec in step[2])
                seen.add(("chain", len(step[2])))
            if step[0] == "write":
                seen.add(step[3])

    collect()
    wanted = {"write", "read", "keep", "captured", "rebind", "col", "row", "t_row",
              "flat_item", "transpose_slice", "narrow", "step", "item", "mul_", "add_",
              "sub_", "div_", "zero_", "fill_", "clamp_", "copy_", "add_tensor", "setitem",
              ("target", "z"), ("target", "a"), ("target", "b"), ("target", "c"),
              ("target", "v"), ("chain", 0), ("chain", 1), ("chain", 2), ("reuse", True),
              ("reuse", False), ("backward", "w"), ("backward", "through_z"),
              ("layout", "transposed"), ("origin", "full"), ("origin", "zeros_like"),
              ("dtype", "float32")} | {("change", name) for name in CHANGES}
    assert wanted <= seen, sorted(wanted - seen, key=str)
