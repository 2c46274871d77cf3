"""The same seed gives torch's random numbers (tensor/torch_stream.py): every random factory, fill
and layer initialization against torch's CPU generator, eagerly and compiled, and the generator
state read and written in torch's layout both ways.

Uniform, integer, permutation, Bernoulli, exponential and multinomial draws (dropout's among
them) and the float32 normal draws (up to 2^21 elements) are bit for bit torch's. Larger
float32 normal draws and float64 normal draws of 16 or more elements use NumPy's logarithm,
sine and cosine where torch's kernel has its own or the C library's, and an orthogonal
initialization goes through LAPACK's QR: those agree to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autojit

EXACT = {
    "rand": lambda m: m.rand(3, 5),
    "rand float64": lambda m: m.rand(30, dtype=m.float64),
    "rand float16": lambda m: m.rand(1000, dtype=m.float16),
    "rand bfloat16": lambda m: m.rand(1000, dtype=m.bfloat16),
    "randn float16": lambda m: m.randn(1000, dtype=m.float16),
    "randn bfloat16": lambda m: m.randn(40, dtype=m.bfloat16),
    "normal_ float16": lambda m: m.empty(37, dtype=m.float16).normal_(1, 2),
    "uniform_ bfloat16": lambda m: m.empty(300, dtype=m.bfloat16).uniform_(-1, 1),
    "rand complex64": lambda m: m.view_as_real(m.rand(5, dtype=m.complex64)),
    "rand_like": lambda m: m.rand_like(m.zeros(4, 4)),
    "rand_like float16": lambda m: m.rand_like(m.zeros(1000, dtype=m.float16)),
    "randn_like float16": lambda m: m.randn_like(m.zeros(1000, dtype=m.float16)),
    "uniform_": lambda m: m.empty(40).uniform_(-1, 3),
    "uniform_ float64": lambda m: m.empty(40, dtype=m.float64).uniform_(-2, 5),
    "randint": lambda m: m.randint(0, 7, (40,)),
    "randint wide": lambda m: m.randint(-5, 2 ** 40, (20,)),
    "randint int32": lambda m: m.randint(3, 9, (4, 5), dtype=m.int32),
    "randint float": lambda m: m.randint(0, 100, (10,), dtype=m.float32),
    "random_": lambda m: m.empty(10, dtype=m.int32).random_(),
    "random_ float": lambda m: m.empty(10).random_(),
    "random_ range": lambda m: m.empty(10, dtype=m.int64).random_(-4, 4),
    "randperm": lambda m: m.randperm(100),
    "randperm 1": lambda m: m.randperm(1),
    "bernoulli_": lambda m: m.empty(40).bernoulli_(0.3),
    "bernoulli probabilities": lambda m: m.bernoulli(m.full((40,), 0.4)),
    "bernoulli float64": lambda m: m.bernoulli(m.linspace(0, 1, 40, dtype=m.float64)),
    "exponential_": lambda m: m.empty(40).exponential_(2.0),
    "cauchy_": lambda m: m.empty(40).cauchy_(1.0, 0.5),
    "geometric_": lambda m: m.empty(40).geometric_(0.3),
    "geometric_ int64": lambda m: m.empty(40, dtype=m.int64).geometric_(0.6),
    "log_normal_": lambda m: m.empty(40).log_normal_(0.0, 0.5),
    "dropout": lambda m: m.nn.functional.dropout(m.ones(50), 0.2),
    "dropout2d": lambda m: m.nn.functional.dropout2d(m.ones(2, 6, 3, 3), 0.5),
    "Dropout module": lambda m: m.nn.Dropout(0.3)(m.arange(30.0)),
    "randn of few": lambda m: m.randn(5),
    "randn float64 of few, twice": lambda m: m.cat([m.randn(3, dtype=m.float64),
                                                      m.randn(3, dtype=m.float64)]),
    "normal_ of few": lambda m: m.empty(7).normal_(2, 3),
    "randn": lambda m: m.randn(7, 9),
    "randn of 100003": lambda m: m.randn(100003),
    "randn complex64": lambda m: m.view_as_real(m.randn(20, dtype=m.complex64)),
    "randn_like": lambda m: m.randn_like(m.zeros(37)),
    "normal": lambda m: m.normal(2.0, 3.0, (40,)),
    "normal_": lambda m: m.empty(40).normal_(1, 2),
    "normal of tensors": lambda m: m.normal(m.zeros(20), m.full((20,), 0.5)),
    "kaiming_normal_": lambda m: m.nn.init.kaiming_normal_(m.empty(20, 30)),
    "trunc_normal_": lambda m: m.nn.init.trunc_normal_(m.empty(20, 30), std=0.02),
    "Embedding": lambda m: m.nn.Embedding(10, 4).weight,
    "Linear": lambda m: m.nn.Linear(20, 30).weight,
    "Conv2d": lambda m: m.nn.Conv2d(3, 8, 3).bias,
    "LSTM": lambda m: m.nn.LSTM(4, 5).weight_hh_l0,
    "MultiheadAttention": lambda m: m.nn.MultiheadAttention(8, 2).in_proj_weight,
    "xavier_uniform_": lambda m: m.nn.init.xavier_uniform_(m.empty(5, 8)),
    "kaiming_uniform_ float16": lambda m: m.nn.init.kaiming_uniform_(
        m.empty(30, 40, dtype=m.float16)),
    "init.normal_ bfloat16": lambda m: m.nn.init.normal_(m.empty(300, dtype=m.bfloat16)),
    "trunc_normal_ narrow": lambda m: m.nn.init.trunc_normal_(m.empty(200), std=1, a=-0.1,
                                                               b=0.3),
}

CLOSE = {
    # Above torch_stream.EXACT_NORMALS elements, NumPy's float32 logarithm, sine and cosine.
    "randn of 3 million": lambda m: m.randn(3 * 10 ** 6),
    "randn float64": lambda m: m.randn(100, dtype=m.float64),
    "exponential_ float64": lambda m: m.empty(40, dtype=m.float64).exponential_(0.5),
    "log_normal_ float64": lambda m: m.empty(40, dtype=m.float64).log_normal_(1.0, 0.5),
    "cauchy_ float64": lambda m: m.empty(40, dtype=m.float64).cauchy_(),
    "orthogonal_": lambda m: m.nn.init.orthogonal_(m.empty(5, 8)),
}


def _values(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach()
        return x.float().numpy() if x.dtype in (torch.float16, torch.bfloat16) else x.numpy()
    x = x.detach()
    reduced = x.dtype in (autojit.float16, autojit.bfloat16)
    return np.asarray(x.float().tolist() if reduced else x.tolist())


def _both(make, seed: int = 42):
    torch.manual_seed(seed)
    theirs = _values(make(torch))
    autojit.manual_seed(seed)
    return _values(make(autojit)), theirs


@pytest.mark.parametrize("name", sorted(EXACT))
def test_draws_are_torchs_bit_for_bit(name):
    mine, theirs = _both(EXACT[name])
    assert mine.shape == theirs.shape
    np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("name", sorted(CLOSE))
def test_draws_are_torchs_to_rounding(name):
    mine, theirs = _both(CLOSE[name])
    np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-6)


def test_the_stream_runs_on_as_torchs():
    """After draws of every kind, the generators stand at the same place: the next draw and
    the whole state agree."""
    def draws(m):
        m.rand(10), m.randn(3), m.randn(17), m.randperm(9), m.randint(0, 5, (4,))
        m.empty(5).bernoulli_(0.5), m.randn(1, dtype=m.float64)
        return m.rand(4)

    mine, theirs = _both(draws, seed=7)
    np.testing.assert_array_equal(mine, theirs)
    assert np.array_equal(_values(autojit.get_rng_state()), _values(torch.get_rng_state()))


def test_a_state_crosses_between_torch_and_autojit():
    torch.manual_seed(3)
    torch.rand(700)
    torch.randn(3, dtype=torch.float64)  # leaves a normal for the next small draw
    autojit.set_rng_state(autojit.tensor(torch.get_rng_state().numpy()))
    np.testing.assert_array_equal(_values(autojit.randn(5, dtype=autojit.float64)),
                                  _values(torch.randn(5, dtype=torch.float64)))
    autojit.manual_seed(5)
    autojit.rand(30)
    torch.set_rng_state(torch.from_numpy(np.asarray(autojit.get_rng_state().tolist(),
                                                    np.uint8)))
    np.testing.assert_array_equal(_values(autojit.rand(6)), _values(torch.rand(6)))
    assert torch.initial_seed() == autojit.initial_seed() == 5


def test_generators_made_by_the_user_draw_torchs_numbers():
    mine = autojit.Generator().manual_seed(123)
    theirs = torch.Generator().manual_seed(123)
    np.testing.assert_array_equal(_values(autojit.rand(8, generator=mine)),
                                  _values(torch.rand(8, generator=theirs)))
    np.testing.assert_array_equal(_values(autojit.randperm(12, generator=mine)),
                                  _values(torch.randperm(12, generator=theirs)))
    # A new generator starts from torch's default seed.
    np.testing.assert_array_equal(_values(autojit.rand(3, generator=autojit.Generator())),
                                  _values(torch.rand(3, generator=torch.Generator())))


def test_a_compiled_step_draws_torchs_numbers():
    def step(m, x):
        noise = m.randn(x.shape[0], 3)
        kept = m.nn.functional.dropout(x, 0.25)
        return kept * 2 + noise.sum() + m.rand(()) + m.randint(0, 4, (5,)).sum()

    compiled = autojit.compile(lambda x: step(autojit, x))
    x_mine, x_theirs = autojit.ones(6, 4), torch.ones(6, 4)
    for seed in (1, 2):
        torch.manual_seed(seed)
        theirs = _values(step(torch, x_theirs))
        autojit.manual_seed(seed)
        np.testing.assert_array_equal(_values(compiled(x_mine)), theirs)


LOADING = {
    "DataLoader shuffle, two epochs": lambda m, d: [
        b.tolist() for _ in range(2)
        for b in d.DataLoader(list(range(10)), batch_size=3, shuffle=True)],
    "RandomSampler with replacement": lambda m, d: list(
        d.RandomSampler(range(10), replacement=True, num_samples=40)),
    "RandomSampler num_samples": lambda m, d: list(d.RandomSampler(range(10), num_samples=25)),
    "SubsetRandomSampler": lambda m, d: list(d.SubsetRandomSampler([5, 7, 9, 11])),
    "random_split": lambda m, d: [list(s.indices) for s in d.random_split(range(10), [3, 7])],
    "random_split with a generator": lambda m, d: [
        list(s.indices) for s in d.random_split(range(10), [0.3, 0.7],
                                                generator=m.Generator().manual_seed(1))],
    "the stream after a pass": lambda m, d: (
        list(d.DataLoader(range(5), shuffle=True)), m.rand(3).tolist())[1],
}


@pytest.mark.parametrize("name", sorted(LOADING))
def test_data_orders_are_torchs(name):
    from torch.utils import data as torch_data

    from autojit.utils import data as autojit_data

    torch.manual_seed(42)
    theirs = LOADING[name](torch, torch_data)
    autojit.manual_seed(42)
    assert LOADING[name](autojit, autojit_data) == theirs


def test_distributed_sampler_orders_are_torchs():
    from torch.utils.data import DistributedSampler as TorchSampler

    from autojit.utils.data import DistributedSampler

    orders = []
    for make in (TorchSampler, DistributedSampler):
        sampler = make(list(range(10)), num_replicas=2, rank=1, seed=3)
        sampler.set_epoch(1)
        orders.append(list(sampler))
    assert orders[0] == orders[1]


MULTINOMIAL = {
    "one sample": lambda m: m.multinomial(m.tensor([0.2, 0.3, 0.5]), 1),
    "with replacement": lambda m: m.multinomial(m.tensor([[0.2, 0.3, 0.5], [1.0, 0.0, 3.0]]),
                                                20, replacement=True),
    "without replacement": lambda m: m.multinomial(m.rand(6, 10), 5),
    "float64 with replacement": lambda m: m.multinomial(m.rand(3, 10, dtype=m.float64), 30,
                                                        True),
    "Categorical.sample": lambda m: m.distributions.Categorical(
        probs=m.tensor([0.1, 0.6, 0.3])).sample((40,)),
    "WeightedRandomSampler": lambda m: m.tensor(list(
        m.utils.data.WeightedRandomSampler([0.1, 0.5, 0.4], 30))),
}


@pytest.mark.parametrize("name", sorted(MULTINOMIAL))
def test_multinomial_draws_are_torchs(name):
    mine, theirs = _both(MULTINOMIAL[name], seed=3)
    np.testing.assert_array_equal(mine, theirs)


def _training_run(m, compiled: bool = False) -> np.ndarray:
    """Three epochs of a small classifier with dropout, shuffled batches and Adam, seeded once:
    every random number in it (data, weights, order, dropout masks) comes from the stream."""
    from importlib import import_module

    data = import_module(m.__name__ + ".utils.data")
    m.manual_seed(0)
    x, y = m.randn(64, 8), m.randint(0, 3, (64,))
    model = m.nn.Sequential(m.nn.Linear(8, 32), m.nn.ReLU(), m.nn.Dropout(0.2),
                            m.nn.Linear(32, 3))
    optimizer = m.optim.Adam(model.parameters(), lr=1e-2)

    def step(xb, yb):
        optimizer.zero_grad()
        loss = m.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        return loss.detach()

    step = autojit.compile(step) if compiled else step
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=16, shuffle=True)
    return np.array([step(xb, yb).item() for _ in range(3) for xb, yb in loader])


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_a_seeded_training_run_is_torchs(compiled):
    np.testing.assert_allclose(_training_run(autojit, compiled), _training_run(torch),
                               rtol=1e-5)
