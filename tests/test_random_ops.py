"""The random ops against torch: bernoulli, normal (its four forms), poisson, multinomial and the
in-place fills (normal_, uniform_, exponential_, random_, bernoulli_, geometric_, log_normal_,
cauchy_): their errors (type and message), dtypes, shapes and gradients, which must be torch's,
and their distributions, which are checked by their moments (the numbers differ from torch's).
tests/opinfo/random.py holds their op table rows (exact values against NumPy, compiled, CUDA).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from test_random_generators import assert_same_error

import autojit

N = 20000  # samples for the moment checks: a mean is within 4 standard errors
# torch's message for a probability outside [0, 1], whose second sentence asks for reports
# to PyTorch, is kept to its first.
TRIMMED = ("  (Could this error message be improved?  If so, please report an enhancement "
           "request to PyTorch.)")


def close_in_mean(values, mean: float, std: float) -> bool:
    values = np.asarray(values, dtype=np.float64)
    return abs(values.mean() - mean) < 4 * std / math.sqrt(values.size)


# ---- errors and dtypes, against torch ----------------------------------------------------------

ERROR_CASES = {
    "bernoulli of integers": lambda m: m.bernoulli(m.tensor([1, 0])),
    "bernoulli outside [0, 1]": lambda m: m.bernoulli(m.tensor([0.5, 1.5])),
    "bernoulli of nan": lambda m: m.bernoulli(m.tensor([0.5, float("nan")])),
    "bernoulli p > 1": lambda m: m.bernoulli(m.zeros(2), 1.5),
    "bernoulli_ p < 0": lambda m: m.zeros(3).bernoulli_(-0.5),
    "bernoulli_ integer p": lambda m: m.zeros(3).bernoulli_(m.tensor([1, 0, 1])),
    "bernoulli_ p tensor outside": lambda m: m.zeros(3).bernoulli_(m.tensor([0.5, 2.0, 0.1])),
    "normal negative std": lambda m: m.normal(m.zeros(2), -1.0),
    "normal negative float std": lambda m: m.normal(0.0, -1.5, (2,)),
    "normal negative std element": lambda m: m.normal(m.zeros(2), m.tensor([-1.0, 1.0])),
    "normal of integers": lambda m: m.normal(m.zeros(2, dtype=m.int64), 1.0),
    "normal integer std": lambda m: m.normal(1.0, m.ones(2, dtype=m.int64)),
    "normal shapes": lambda m: m.normal(m.zeros(2, 3), m.ones(4)),
    "poisson of integers": lambda m: m.poisson(m.tensor([1, 2])),
    "poisson negative": lambda m: m.poisson(m.tensor([-1.0, 2.0])),
    "multinomial 3-d": lambda m: m.multinomial(m.ones(2, 2, 2), 1),
    "multinomial 0-d": lambda m: m.multinomial(m.tensor(0.5), 1),
    "multinomial integers": lambda m: m.multinomial(m.tensor([1, 2]), 1),
    "multinomial no samples": lambda m: m.multinomial(m.tensor([0.5, 0.5]), 0),
    "multinomial too many": lambda m: m.multinomial(m.tensor([0.1, 0.9]), 3),
    "multinomial negative": lambda m: m.multinomial(m.tensor([-0.1, 0.9]), 1),
    "multinomial inf": lambda m: m.multinomial(m.tensor([float("inf"), 1.0]), 1),
    "multinomial zero sum": lambda m: m.multinomial(m.tensor([[0.1, 0.9], [0.0, 0.0]]), 1),
    "normal_ negative std": lambda m: m.zeros(3).normal_(0, -1),
    "normal_ of integers": lambda m: m.zeros(3, dtype=m.int64).normal_(),
    "uniform_ from > to": lambda m: m.zeros(3).uniform_(2.5, 1),
    "uniform_ of integers": lambda m: m.zeros(3, dtype=m.int64).uniform_(),
    "exponential_ rate": lambda m: m.zeros(3).exponential_(-0.5),
    "exponential_ zero rate": lambda m: m.zeros(3).exponential_(0),
    "exponential_ of integers": lambda m: m.zeros(3, dtype=m.int64).exponential_(),
    "geometric_ p": lambda m: m.zeros(3).geometric_(1.5),
    "geometric_ p = 0": lambda m: m.zeros(3).geometric_(0),
    "log_normal_ std": lambda m: m.zeros(3).log_normal_(1, 0),
    "log_normal_ of integers": lambda m: m.zeros(3, dtype=m.int64).log_normal_(),
    "cauchy_ sigma": lambda m: m.zeros(3).cauchy_(0, -1),
    "cauchy_ of integers": lambda m: m.zeros(3, dtype=m.int64).cauchy_(),
    "random_ from >= to": lambda m: m.zeros(3, dtype=m.int64).random_(5, 3),
    "random_ bool range": lambda m: m.zeros(3, dtype=m.bool).random_(0, 3),
    "random_ int range": lambda m: m.zeros(3, dtype=m.int32).random_(0, 2 ** 40),
    "a fill on a leaf requiring grad": lambda m: m.zeros(3, requires_grad=True).normal_(),
}


@pytest.mark.parametrize("name", ERROR_CASES)
def test_errors_are_torchs(name):
    case = ERROR_CASES[name]
    assert_same_error(lambda: case(autojit), lambda: case(torch), TRIMMED)


def test_result_dtypes_and_shapes_are_torchs():
    cases = [
        lambda m: m.bernoulli(m.full((2, 3), 0.5, dtype=m.float64)),
        lambda m: m.bernoulli(m.zeros(4, dtype=m.int64), 0.5),
        lambda m: m.normal(m.zeros(2, dtype=m.float64), m.ones(2)),
        lambda m: m.normal(m.zeros(2), m.ones(2, dtype=m.float64)),
        lambda m: m.normal(1.0, m.ones(2, 1, dtype=m.float64)),
        lambda m: m.normal(m.zeros(3, 1), m.ones(4)),
        lambda m: m.normal(2, 3, (2, 5)),
        lambda m: m.normal(0.0, 1.0, size=(3,), dtype=m.float64),
        lambda m: m.normal(mean=m.zeros(2)),
        lambda m: m.poisson(m.ones(2, 2, dtype=m.float64)),
        lambda m: m.poisson(m.tensor(3.0)),  # 0-d: NumPy draws a Python int
        lambda m: m.multinomial(m.ones(3, 4), 2),
        lambda m: m.multinomial(m.ones(4), 6, replacement=True),
        lambda m: m.zeros(2, 2, dtype=m.int32).random_(),
        lambda m: m.zeros(3, dtype=m.bool).random_(),
        lambda m: m.zeros(3, dtype=m.int64).bernoulli_(0.5),
        lambda m: m.zeros(2, 3).bernoulli_(m.full((3,), 0.5, dtype=m.float64)),
        lambda m: m.ones(3).bernoulli(),
        lambda m: m.ones(2, 3).multinomial(2),
    ]
    names = {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64",
             torch.int32: "int32", torch.bool: "bool"}
    for case in cases:
        mine, theirs = case(autojit), case(torch)
        assert mine.dtype.name == names[theirs.dtype] and tuple(mine.shape) == tuple(
            theirs.shape), (mine, theirs)


def test_normal_with_floats_takes_a_size_and_factory_arguments():
    sample = autojit.normal(2.0, 0.5, (4, 3), generator=autojit.Generator().manual_seed(1),
                            requires_grad=True)
    assert sample.shape == (4, 3) and sample.is_leaf and sample.requires_grad
    with pytest.raises(TypeError):
        autojit.normal(0.0, 1.0)


# ---- gradients, as torch's: zero -------------------------------------------------------------

@pytest.mark.parametrize("case", ["normal", "normal_float_std", "bernoulli", "poisson",
                                  "fill"])
def test_gradients_are_torchs_zeros(case):
    def run(m):
        mean = m.tensor([0.2, 0.7], dtype=m.float64, requires_grad=True)
        std = m.tensor([0.5, 1.0], dtype=m.float64, requires_grad=True)
        result = {"normal": lambda: m.normal(mean, std),
                  "normal_float_std": lambda: m.normal(mean, 2.0),
                  "bernoulli": lambda: m.bernoulli(mean),
                  "poisson": lambda: m.poisson(std),
                  "fill": lambda: (mean * 3).uniform_()}[case]()
        assert result.requires_grad
        result.sum().backward()
        return [None if t.grad is None else t.grad.tolist() for t in (mean, std)]

    assert run(autojit) == run(torch)


def test_no_grad_and_inputs_without_grad_give_results_without_grad():
    x = autojit.tensor([0.2, 0.7], requires_grad=True)
    assert not autojit.multinomial(x, 1).requires_grad
    with autojit.no_grad():
        assert not autojit.normal(x, 1.0).requires_grad
        assert x.normal_() is x and x.is_leaf  # a leaf that requires grad, filled
    assert not autojit.normal(autojit.zeros(2), 1.0).requires_grad


# ---- distributions ---------------------------------------------------------------------------

def test_the_samples_have_the_right_moments():
    autojit.manual_seed(0)
    p = autojit.full((N,), 0.3)
    assert close_in_mean(autojit.bernoulli(p), 0.3, math.sqrt(0.21))
    assert close_in_mean(autojit.bernoulli(autojit.zeros(N), 0.8), 0.8, 0.4)
    assert close_in_mean(autojit.zeros(N).bernoulli_(0.1), 0.1, 0.3)
    normal = autojit.normal(autojit.full((N,), 2.0), autojit.full((N,), 3.0))
    assert close_in_mean(normal, 2.0, 3.0) and abs(float(normal.std()) - 3) < 0.1
    assert close_in_mean(autojit.normal(-1.0, 0.5, (N,)), -1.0, 0.5)
    assert close_in_mean(autojit.poisson(autojit.full((N,), 4.0)), 4.0, 2.0)
    x = autojit.empty(N, dtype=autojit.float64)
    assert close_in_mean(x.normal_(1.0, 2.0), 1.0, 2.0)
    uniform = x.uniform_(-1.0, 3.0)
    assert float(uniform.min()) >= -1 and float(uniform.max()) < 3
    assert close_in_mean(uniform, 1.0, 4 / math.sqrt(12))
    assert close_in_mean(x.exponential_(2.0), 0.5, 0.5)
    geometric = x.geometric_(0.25)
    assert float(geometric.min()) >= 1 and close_in_mean(geometric, 4.0, math.sqrt(12))
    log_normal = x.log_normal_(0.0, 0.5)
    assert close_in_mean(log_normal.log(), 0.0, 0.5) and float(log_normal.min()) > 0
    cauchy = x.cauchy_(1.0, 2.0)
    assert abs(np.median(cauchy.numpy()) - 1.0) < 0.1
    integers = autojit.zeros(N, dtype=autojit.int64).random_(-3, 4)
    assert set(integers.tolist()) == set(range(-3, 4))
    assert set(autojit.zeros(N, dtype=autojit.int32).random_(5).tolist()) == set(range(5))
    default = autojit.zeros(N).random_()
    assert 0 <= float(default.min()) and float(default.max()) <= 2 ** 24


def test_multinomial_draws_in_proportion_and_never_a_zero_probability_with_replacement():
    autojit.manual_seed(1)
    weights = autojit.tensor([[1.0, 0.0, 3.0], [0.0, 2.0, 2.0]])
    samples = autojit.multinomial(weights, N, replacement=True).numpy()
    assert not (samples[0] == 1).any() and not (samples[1] == 0).any()
    assert abs((samples[0] == 2).mean() - 0.75) < 4 * math.sqrt(0.75 * 0.25 / N)
    assert abs((samples[1] == 1).mean() - 0.5) < 4 * math.sqrt(0.25 / N)


def test_multinomial_without_replacement_draws_distinct_categories_zeros_last():
    autojit.manual_seed(2)
    for _ in range(20):
        drawn = autojit.multinomial(autojit.tensor([0.1, 0.0, 0.9, 0.0]), 4).tolist()
        assert sorted(drawn) == [0, 1, 2, 3] and drawn[2:] == [1, 3]
    # The heavier category comes first more often, in proportion: P(first = 2) = 0.9.
    firsts = [autojit.multinomial(autojit.tensor([0.1, 0.9]), 1).item() for _ in range(400)]
    assert abs(np.mean(np.array(firsts) == 1) - 0.9) < 4 * math.sqrt(0.09 / 400)


# ---- compiled: the same numbers, the same errors ---------------------------------------------

def test_compiled_random_ops_draw_as_eager_and_update_captured_tensors():
    generator = autojit.Generator()
    noise = autojit.zeros(3)

    def step(p, mean):
        noise.normal_(generator=generator)  # a captured tensor, filled in place
        return (autojit.bernoulli(p, generator=generator) + autojit.normal(mean, 0.5,
                                                                          generator=generator),
                autojit.multinomial(p, 2, generator=generator),
                autojit.poisson(p * 4, generator=generator), noise * 1)

    compiled = autojit.compile(step)
    p, mean = autojit.tensor([0.2, 0.5, 0.9]), autojit.zeros(3)
    generator.manual_seed(8)
    compiled_results = [compiled(p, mean) for _ in range(3)]
    generator.manual_seed(8)
    eager_results = [step(p, mean) for _ in range(3)]
    for mine, eager in zip(compiled_results, eager_results, strict=True):
        assert all(bool((a == b).all()) for a, b in zip(mine, eager, strict=True))
    assert len(compiled.executables) == 1
    with pytest.raises(RuntimeError, match=r"Expected p_in >= 0 && p_in <= 1"):
        compiled(autojit.tensor([0.2, 1.5, 0.3]), mean)
    with pytest.raises(RuntimeError, match="probability tensor contains either"):
        compiled(autojit.tensor([0.2, -1.0, 0.3]), mean)
