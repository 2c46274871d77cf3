"""The op table: one OpInfo row per public op, in the style of PyTorch's OpInfo.

Each family module (elementwise.py, reduction.py, ...) defines `ROWS`, a list of OpInfo. The
table drives tests/test_op_table.py: for every row and dtype, the forward against the NumPy
reference; in float64, gradcheck and gradgradcheck; for rows marked not differentiable, a check
that differentiating raises. tests/test_op_table.py also fails when a registered primitive or an
op of `autojit.__all__` has no row.

Factories (zeros, arange, rand, ...) are rows too: `OpInfo.factory` says the row makes a new
leaf tensor and takes `device=`, which the CUDA driver sets where the call has no tensor to
follow; random rows draw from the default generators or, where a sample passes
`generator=GENERATOR`, from `generator_for(device)`, all of which `reseed` restarts before
every call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import autojit

FLOATING = ("float32", "float64")
ALL_NUMERIC = ("float32", "float64", "int32", "int64")


@dataclass
class Sample:
    """One call: positional args (NumPy arrays become tensors; anything else passes as is)."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    # A documented graph break (docs/compiler.md): a fragment of the CompileWarning that
    # autojit.compile gives for this call, which then runs eagerly. The compiled drivers check
    # the warning and that the result is eager's.
    graph_break: str | None = None


@dataclass
class OpInfo:
    name: str                           # the public name, e.g. "exp" or "nn.functional.softmax"
    function: Callable                  # autojit callable: function(*tensors_and_values, **kw)
    reference: Callable                 # NumPy reference: reference(*arrays_and_values, **kw)
    samples: Callable                   # samples(rng, numpy_dtype) -> list[Sample]
    primitives: tuple = ()              # registry op names this row exercises
    dtypes: tuple = FLOATING            # dtypes the forward is checked in
    differentiable: bool = True         # gradcheck + gradgradcheck in float64
    gradgrad: bool = True               # False only where the second derivative is undefined
    atol: float = 1e-5
    rtol: float = 1e-4
    grad_inputs: tuple | None = None    # indices of args to differentiate (default: float arrays)
    # gradcheck's step and tolerances; a larger step only for ops that are linear (a cast through
    # float32, where a 1e-6 step would be lost in rounding).
    grad_eps: float = 1e-6
    grad_atol: float = 1e-5
    grad_rtol: float = 1e-3
    # Whether tests/test_cuda_op_table.py runs the row under the CUDA simulator (slow); False
    # for the rows of a large family that representative rows of it cover there.
    cuda: bool = True
    # Known op bugs, kept visible: check name ("forward", "gradcheck", "gradgradcheck") -> the
    # reason. The driver marks that check xfail(strict=True), so it fails again once fixed.
    expected_failures: dict = field(default_factory=dict)
    # Random ops: the default generators are seeded with this before every call of the row's
    # function (eager, compiled, on CUDA, and each call gradcheck makes), so that every run
    # draws the same numbers and the reference can draw them too (opinfo/random.py).
    seed: int | None = None
    # A factory: the result is a new leaf (no history; requires_grad as its requires_grad=
    # says) and the function takes device=. The drivers check the leaf, and the CUDA driver
    # passes device="cuda" where the call has no tensor argument whose device it follows.
    factory: bool = False
    # Device type -> a fragment of the CompileWarning of the row's documented graph break when
    # compiled on that device (random numbers drawn on a GPU, say); as Sample.graph_break.
    # "cpu forward" overrides "cpu" for the checks without gradients (None: no break there).
    graph_breaks: dict = field(default_factory=dict)


def uniform(rng, shape, dtype, low=-2.0, high=2.0):
    """Random values; integer dtypes get integers in [low, high)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    return rng.uniform(low, high, size=shape).astype(dtype)


def positive(rng, shape, dtype, low=0.5, high=2.0):
    return uniform(rng, shape, dtype, low, high)


# ---- generators -------------------------------------------------------------------------------

# What a sample passes as `generator=`: the row's function replaces it by generator_for(device).
GENERATOR = "generator=GENERATOR"
_GENERATORS: dict = {}


def generator_for(device) -> autojit.Generator:
    """The Generator of `device` that samples draw from with generator=GENERATOR; one per
    device type, kept, so that a compiled function draws from it as eager does."""
    kind = autojit.device("cpu" if device is None else device).type
    if kind not in _GENERATORS:
        _GENERATORS[kind] = autojit.Generator(kind)
    return _GENERATORS[kind]


def reseed(seed: int) -> None:
    """Restart the streams of a random row before a call: the default generators from `seed`,
    and generator_for's from seed + 1 (so that a call that ignored generator= would draw
    other numbers than its reference). The generators are made here, outside any trace (a
    Generator made while tracing is a graph break)."""
    autojit.manual_seed(seed)
    for kind in ("cpu", "cuda") if autojit.cuda.is_available() else ("cpu",):
        generator_for(kind).manual_seed(seed + 1)
