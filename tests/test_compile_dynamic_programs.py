"""Differential tests for dynamic shapes: random batch-polymorphic programs (hypothesis), each
compiled once with `dynamic=True` and run at several batch sizes against eager.

A program maps a [batch, features] input through a chain of steps that keep the batch
dimension: unary and binary elementwise ops (the partner broadcast over the batch, or another
batch-sized input), reductions over the feature axis, matmul with a weight, softmax over
features, feature slicing and index_select, concatenation with itself, a mean over the batch,
and optionally a backward to the input and the weights. One trace must serve every batch size
(the sizes stay symbolic: no specialization), and each size must give eager's values; the
generic kernels (read their extents at run time) are shared across the sizes.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autojit
import autojit.nn.functional as F

SETTINGS = settings(max_examples=40, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
BATCH_SIZES = (3, 7, 16)

UNARY = {
    "tanh": lambda x: x.tanh(),
    "exp": lambda x: (x * 0.5).exp(),
    "relu": lambda x: x.relu(),
    "sigmoid": lambda x: x.sigmoid(),
    "square": lambda x: x * x,
    "gelu": lambda x: F.gelu(x),
}
BINARY = {
    "add": lambda x, y: x + y,
    "mul": lambda x, y: x * y,
    "sub": lambda x, y: x - y,
    "maximum": lambda x, y: autojit.maximum(x, y),
}


@st.composite
def programs(draw):
    """(features, steps, backward): steps over a [batch, features] value."""
    features = draw(st.sampled_from([2, 3, 5, 8]))
    width, steps = features, []
    for _ in range(draw(st.integers(2, 6))):
        kind = draw(st.sampled_from(["unary", "bias", "other", "reduce", "matmul", "softmax",
                                     "slice", "index", "concat", "batch_mean"]))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY)))))
        elif kind in ("bias", "other"):
            steps.append((kind, draw(st.sampled_from(sorted(BINARY))), width))
        elif kind == "reduce":
            steps.append(("reduce", draw(st.sampled_from(["sum", "mean", "amax"]))))
            width = 1
        elif kind == "matmul":
            columns = draw(st.sampled_from([2, 4, 6]))
            steps.append(("matmul", width, columns))
            width = columns
        elif kind == "softmax":
            steps.append(("softmax",))
        elif kind == "slice" and width >= 2:
            start = draw(st.integers(0, width - 2))
            steps.append(("slice", start, width))
            width -= start
        elif kind == "index":
            chosen = draw(st.lists(st.integers(0, width - 1), min_size=1, max_size=4))
            steps.append(("index", tuple(chosen)))
            width = len(chosen)
        elif kind == "concat":
            steps.append(("concat",))
            width *= 2
        elif kind == "batch_mean":
            steps.append(("batch_mean",))
    backward = draw(st.booleans())
    return features, steps, backward


def build(features, steps, backward, seed):
    """The program as f(x, other): parameters are fixed arrays drawn from `seed`."""
    rng = np.random.default_rng(seed)
    parameters = []
    for step in steps:
        if step[0] == "bias":
            parameters.append(rng.uniform(-1, 1, step[2]))
        elif step[0] == "matmul":
            parameters.append(rng.uniform(-1, 1, (step[1], step[2])))
        else:
            parameters.append(None)
    weights = [autojit.tensor(p, requires_grad=backward) if p is not None else None
               for p in parameters]

    def program(x, other):
        value = x
        for step, weight in zip(steps, weights, strict=True):
            kind = step[0]
            if kind == "unary":
                value = UNARY[step[1]](value)
            elif kind == "bias":
                value = BINARY[step[1]](value, weight)
            elif kind == "other":
                value = BINARY[step[1]](value, other[:, :1] * 0.5)
            elif kind == "reduce":
                value = getattr(value, step[1])(dim=1, keepdim=True)
            elif kind == "matmul":
                value = value @ weight
            elif kind == "softmax":
                value = F.softmax(value, dim=1)
            elif kind == "slice":
                value = value[:, step[1]:]
            elif kind == "index":
                value = value.index_select(1, autojit.tensor(list(step[1])))
            elif kind == "concat":
                value = autojit.cat([value, value * 2], dim=1)
            else:
                value = value - value.mean(dim=0, keepdim=True)
        if not backward:
            return value
        loss = (value * value).sum() / x.shape[0]
        used = [w for w in weights if w is not None]
        gradients = autojit.autograd.grad(loss, [x, *used], allow_unused=True)
        return value.detach(), gradients

    return program


def _compare(actual, expected, where):
    if isinstance(expected, (tuple, list)):
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _compare(a, e, f"{where}[{index}]")
        return
    if expected is None:
        assert actual is None, where
        return
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12,
                               err_msg=where)


class Counted:
    """A function wrapper counting its runs; the guards' walk looks only at `fn`."""

    _reachable_attributes = ("fn",)
    __slots__ = ("fn", "runs")

    def __init__(self, fn):
        self.fn, self.runs = fn, 0

    def __call__(self, *args):
        self.runs += 1
        return self.fn(*args)


@SETTINGS
@given(programs(), st.integers(0, 2**32 - 1))
def test_batch_polymorphic_program_runs_every_size_from_one_trace(program, seed):
    features, steps, backward = program
    function = build(features, steps, backward, seed)
    counted = Counted(function)
    compiled = autojit.compile(counted, dynamic=True)
    rng = np.random.default_rng(seed)
    for batch in BATCH_SIZES:
        x = autojit.tensor(rng.uniform(-1.5, 1.5, (batch, features)), requires_grad=backward)
        other = autojit.tensor(rng.uniform(-1.5, 1.5, (batch, 3)))
        expected = function(x, other)
        _compare(compiled(x, other), expected, f"batch {batch}, steps {steps}")
    assert counted.runs == 1, f"steps {steps}: traced {counted.runs} times"
