"""Differential tests: random programs of table ops, compiled against eager (hypothesis).

Each example draws a few input tensors and a short program over them: unary and binary
elementwise ops (broadcasting, Python scalars), reductions over random dims with and without
keepdim, the softmax family, matmul, reshape/permute/expand/transpose, slicing and integer-array
indexing, where. The program runs eagerly and through `autojit.compile` (which must compile
it, not fall back), and the results must agree; with a backward, the gradients of a weighted
sum of the result with respect to every input, computed inside the function, must agree too.
Eager is checked against NumPy by tests/test_op_table.py, so this tests the passes, the fusion
schedule and the generated kernels on combinations no hand-written test lists.

The examples are derandomized (the same programs on every run, no example database) and have
no deadline, so the test is deterministic and not timing-sensitive.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autojit
import autojit.nn.functional as F
from autojit import CompileWarning, autograd

SETTINGS = settings(max_examples=150, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TOLERANCES = {"float32": (1e-5, 1e-4), "float64": (1e-10, 1e-7)}

UNARY = {
    "neg": lambda x: -x,
    "exp": lambda x: x.exp(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "sin": lambda x: x.sin(),
    "cos": lambda x: x.cos(),
    "erf": lambda x: x.erf(),
    "abs": lambda x: x.abs(),
    "relu": lambda x: x.relu(),
    "square": lambda x: x * x,
    "log": lambda x: (x * x + 1).log(),         # kept inside the domain
    "sqrt": lambda x: (x * x + 0.5).sqrt(),
    "log1p": lambda x: x.abs().log1p(),
    "expm1": lambda x: x.tanh().expm1(),
    "floor": lambda x: x.floor(),
    "clamp": lambda x: x.clamp(-0.5, 0.75),
    "gelu": lambda x: F.gelu(x),
    "to_float32_and_back": lambda x: x.to(autojit.float32).to(x.dtype),
}
BINARY = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / (y * y + 1),
    "maximum": lambda x, y: autojit.maximum(x, y),
    "minimum": lambda x, y: autojit.minimum(x, y),
    "pow": lambda x, y: (x.abs() + 0.5) ** y,
    "where": lambda x, y: autojit.where(x > y, x, y * 2),
    "remainder": lambda x, y: autojit.remainder(x, y.abs() + 0.5),
}
SCALAR = {
    "add": lambda x, c: x + c,
    "rsub": lambda x, c: c - x,
    "mul": lambda x, c: x * c,
    "rdiv": lambda x, c: c / (x * x + 1),
    "pow": lambda x, c: x ** 2 if c > 0 else (x * x + 1) ** c,
    "gt": lambda x, c: autojit.where(x > c, x, 0.0),
}
REDUCE = {
    "sum": lambda x, dims, keepdim: x.sum(dim=dims, keepdim=keepdim),
    "mean": lambda x, dims, keepdim: x.mean(dim=dims, keepdim=keepdim),
    "amax": lambda x, dims, keepdim: x.amax(dim=dims, keepdim=keepdim),
    "amin": lambda x, dims, keepdim: x.amin(dim=dims, keepdim=keepdim),
    "prod": lambda x, dims, keepdim: x.prod(dim=dims[0], keepdim=keepdim),
    "logsumexp": lambda x, dims, keepdim: x.logsumexp(dim=dims, keepdim=keepdim),
    "var": lambda x, dims, keepdim: x.var(dim=dims, keepdim=keepdim),
}
ALONG = {
    "softmax": lambda x, dim: F.softmax(x, dim=dim),
    "log_softmax": lambda x, dim: F.log_softmax(x, dim=dim),
}


# ---- drawing a program ------------------------------------------------------------------------

# Mostly tiny; sometimes long enough that the vectorized loop bodies run, not only the
# scalar remainder loops.
extents = st.integers(1, 4) | st.sampled_from([7, 16])
shapes = st.lists(extents, min_size=0, max_size=3).map(tuple)


def broadcast_partner(draw, shape: tuple) -> tuple:
    """A shape that broadcasts with `shape` to `shape`: leading dims dropped, some set to 1."""
    dropped = draw(st.integers(0, len(shape)))
    kept = shape[dropped:]
    return tuple(1 if draw(st.booleans()) else extent for extent in kept)


@st.composite
def programs(draw):
    """(dtype, input shapes, steps, backward, result shapes). Steps name their operands as
    ("input", k) or ("step", j); the program's results are the values of the steps that no
    later step reads."""
    dtype = draw(st.sampled_from(["float64", "float64", "float32"]))
    inputs = [draw(shapes)]
    pool = [(("input", 0), inputs[0])]  # (reference, shape) of every value so far

    def new_input(shape):
        inputs.append(shape)
        pool.append((("input", len(inputs) - 1), shape))
        return pool[-1][0]

    def partner_for(shape):
        """A value broadcasting with `shape` to it, or a new input that does."""
        fitting = [reference for reference, other in pool if _broadcasts_to(other, shape)]
        if fitting and draw(st.booleans()):
            return draw(st.sampled_from(fitting))
        return new_input(broadcast_partner(draw, shape))

    steps = []
    for _ in range(draw(st.integers(2, 7))):
        # Mostly the latest value, so that programs are chains more than scattered steps.
        latest = draw(st.booleans()) or draw(st.booleans())
        source, shape = pool[-1] if latest else pool[draw(st.integers(0, len(pool) - 1))]
        rank = len(shape)
        kinds = ["unary", "binary", "scalar", "expand"]
        if rank:
            kinds += ["reduce", "along", "matmul", "reshape", "permute", "slice", "index"]
        kind = draw(st.sampled_from(kinds))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY))), source))
        elif kind == "binary":
            other = partner_for(shape)
            name = draw(st.sampled_from(sorted(BINARY)))
            if draw(st.booleans()):
                steps.append(("binary", name, other, source))  # the broadcast operand first
            else:
                steps.append(("binary", name, source, other))
        elif kind == "scalar":
            number = draw(st.sampled_from([-1.5, -1, 0.5, 2, 3.0]))
            steps.append(("scalar", draw(st.sampled_from(sorted(SCALAR))), source, number))
        elif kind == "reduce":
            dims = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
            keepdim = draw(st.booleans())
            name = draw(st.sampled_from(sorted(REDUCE)))
            if name == "prod":
                dims = dims[:1]
            steps.append(("reduce", name, source, dims, keepdim))
            shape = tuple(1 if axis in dims else extent for axis, extent in enumerate(shape)
                          if keepdim or axis not in dims)
        elif kind == "along":
            dim = draw(st.integers(-rank, rank - 1))
            steps.append(("along", draw(st.sampled_from(sorted(ALONG))), source, dim))
        elif kind == "matmul":
            columns = draw(extents)
            other = new_input((shape[-1], columns))
            steps.append(("matmul", source, other))
            shape = shape[:-1] + (columns,)
        elif kind == "reshape":
            target = draw(st.sampled_from([(-1,), tuple(reversed(shape)), (1,) + shape,
                                           shape + (1,)]))
            steps.append(("reshape", source, target))
            shape = (int(np.prod(shape)),) if target == (-1,) else target
        elif kind == "permute":
            order = tuple(draw(st.permutations(range(rank))))
            steps.append(("permute", source, order))
            shape = tuple(shape[axis] for axis in order)
        elif kind == "expand":
            copies = draw(st.integers(1, 3))
            steps.append(("expand", source, copies))
            shape = (copies,) + shape
        elif kind == "slice":
            dim = draw(st.integers(0, rank - 1))
            start = draw(st.integers(0, shape[dim] - 1))
            stop = draw(st.integers(start + 1, shape[dim]))
            step = draw(st.integers(1, 2))
            steps.append(("slice", source, dim, start, stop, step))
            shape = shape[:dim] + (len(range(start, stop, step)),) + shape[dim + 1:]
        else:  # index
            dim = draw(st.integers(0, rank - 1))
            chosen = tuple(draw(st.lists(st.integers(0, shape[dim] - 1), min_size=1,
                                         max_size=4)))
            steps.append(("index", source, dim, chosen))
            shape = shape[:dim] + (len(chosen),) + shape[dim + 1:]
        if kind == "binary":
            shape = np.broadcast_shapes(*(dict(pool)[reference] for reference in steps[-1][2:]))
        pool.append((("step", len(steps) - 1), tuple(int(extent) for extent in shape)))
    backward = draw(st.sampled_from(["none", "grad", "grad", "second"]))
    read = {reference for step in steps for reference in references(step)}
    results = [shape for reference, shape in pool if reference[0] == "step" and
               reference not in read]
    return dtype, inputs, steps, backward, results


def references(step) -> list:
    """The ("input", k) and ("step", j) operands of a step."""
    return [part for part in step[1:] if isinstance(part, tuple) and len(part) == 2
            and part[0] in ("input", "step")]


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    if len(shape) > len(target):
        return False
    return all(extent in (1, wanted) for extent, wanted in zip(reversed(shape), reversed(target)))


# ---- running a program ------------------------------------------------------------------------

def run_steps(steps, inputs: list) -> list:
    """The values of the steps no later step reads."""
    values: list = []

    def value_of(reference):
        kind, index = reference
        return (inputs if kind == "input" else values)[index]

    for step in steps:
        kind = step[0]
        if kind == "unary":
            value = UNARY[step[1]](value_of(step[2]))
        elif kind == "binary":
            value = BINARY[step[1]](value_of(step[2]), value_of(step[3]))
        elif kind == "scalar":
            value = SCALAR[step[1]](value_of(step[2]), step[3])
        elif kind == "reduce":
            value = REDUCE[step[1]](value_of(step[2]), list(step[3]), step[4])
        elif kind == "along":
            value = ALONG[step[1]](value_of(step[2]), step[3])
        elif kind == "matmul":
            value = value_of(step[1]) @ value_of(step[2])
        elif kind == "reshape":
            value = value_of(step[1]).reshape(step[2])
        elif kind == "permute":
            value = value_of(step[1]).permute(*step[2])
        elif kind == "expand":
            source = value_of(step[1])
            value = source.unsqueeze(0).expand(step[2], *source.shape)
        elif kind == "slice":
            _, source, dim, start, stop, stride = step
            value = value_of(source)[(slice(None),) * dim + (slice(start, stop, stride),)]
        else:
            _, source, dim, chosen = step
            index = autojit.tensor(list(chosen), dtype=autojit.int64)
            source = value_of(source)
            value = source[index] if dim == 0 else source.index_select(dim, index)
        values.append(value)
    read = {reference for step in steps for reference in references(step)}
    return [value for index, value in enumerate(values) if ("step", index) not in read]


def program_function(steps, count: int, backward: str):
    """f(*inputs, *weights, *directions): the results, and the gradients of the weighted sum
    of the results (and with backward == "second", of the gradients) computed inside."""
    def program(*tensors):
        inputs = list(tensors[:count])
        results = run_steps(steps, inputs)
        if backward == "none":
            return results
        weights = tensors[count:count + len(results)]
        loss = sum(((result * weight).sum() for result, weight in zip(results[1:], weights[1:],
                                                                       strict=True)),
                   (results[0] * weights[0]).sum())
        first = autograd.grad(loss, inputs, create_graph=backward == "second",
                              allow_unused=True)
        detached = [result.detach() for result in results]
        if backward == "grad":
            return detached, first
        directions = tensors[count + len(results):]
        total = None
        for gradient, direction in zip(first, directions, strict=True):
            if gradient is not None and gradient.requires_grad:
                term = (gradient * direction).sum()
                total = term if total is None else total + term
        second = (None,) * count
        if total is not None:
            second = autograd.grad(total, inputs, allow_unused=True)
        return detached, tuple(g.detach() if g is not None else None for g in first), second

    return program


def assert_same(actual, expected, dtype: str, where: str) -> None:
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), where
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, dtype, f"{where}[{index}]")
        return
    if expected is None:
        assert actual is None, f"{where}: compiled gave a tensor where eager gave None"
        return
    assert isinstance(actual, autojit.Tensor), f"{where}: got {actual!r}"
    assert actual.dtype == expected.dtype, f"{where}: {actual.dtype} vs {expected.dtype}"
    atol, rtol = TOLERANCES[dtype]
    got, want = actual.numpy(), expected.numpy()
    # A tolerance relative to the result's scale: sums and products of random values may be
    # large, and each element's rounding depends on the order of summation.
    finite = np.abs(want[np.isfinite(want)])
    scale = max(float(finite.max()), 1.0) if finite.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale, equal_nan=True,
                               err_msg=where)


@SETTINGS
@given(programs(), st.integers(0, 2**32 - 1))
def test_random_program_compiled_equals_eager(program, seed):
    check_program(program, seed, dynamic=None)


@settings(SETTINGS, max_examples=60)
@given(programs(), st.integers(0, 2**32 - 1))
def test_random_program_traced_with_symbolic_sizes_equals_eager(program, seed):
    """The same programs traced with every size symbolic (dynamic=True): the shape rules,
    the size arithmetic and the instantiation of the symbolic graph."""
    check_program(program, seed, dynamic=True)


def check_program(program, seed: int, dynamic) -> None:
    dtype, input_shapes, steps, backward, result_shapes = program
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1.5, 1.5, shape).astype(dtype) for shape in input_shapes]
    extra = []
    if backward != "none":
        extra += [rng.uniform(0.5, 1.5, shape).astype(dtype) for shape in result_shapes]
    if backward == "second":
        extra += [rng.uniform(0.5, 1.5, array.shape).astype(dtype) for array in arrays]

    def make_tensors():
        grad = backward != "none"
        return [autojit.tensor(array, requires_grad=grad) for array in arrays] + [
            autojit.tensor(array) for array in extra]

    function = program_function(steps, len(arrays), backward)
    where = f"{dtype} inputs {input_shapes}, steps {steps}, backward {backward}"
    expected = function(*make_tensors())
    compiled = autojit.compile(function, dynamic=dynamic)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        actual = compiled(*make_tensors())
    assert len(compiled.executables) == 1, f"{where}: not compiled"
    assert "unfused" not in compiled.fusion_groups(), f"{where}: {compiled.fusion_groups()}"
    assert_same(actual, expected, dtype, where)


def test_the_program_strategy_covers_every_kind_of_step():
    """The drawn programs use every step kind and op family (so none silently drops out)."""
    seen = set()

    @settings(SETTINGS, max_examples=200)
    @given(programs())
    def collect(program):
        for step in program[2]:
            seen.add(step[0])
            if isinstance(step[1], str):
                seen.add((step[0], step[1]))
        seen.add(("backward", program[3]))

    collect()
    kinds = {"unary", "binary", "scalar", "reduce", "along", "matmul", "reshape", "permute",
             "expand", "slice", "index"}
    assert kinds <= seen, sorted(kinds - seen, key=str)
    assert {("backward", "none"), ("backward", "grad"), ("backward", "second")} <= seen
