"""Generators and the global random state: autojit.Generator, manual_seed/seed/initial_seed,
get_rng_state/set_rng_state, autojit.random.fork_rng, and `generator=` on the random factories,
eagerly and compiled (a compiled function advances a generator exactly as eager does).

Errors are checked against torch's (type and message, with "torch" read as "autojit"); the
numbers themselves are torch's (tests/test_random_stream_torch.py), and here their stream is
checked.
"""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import autojit
from autojit import CompileWarning


def raised(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the error is the result
        return type(error), str(error).split("\n")[0]
    return None


def assert_same_error(mine, theirs, trimmed: str = ""):
    """Both calls raise the same exception type with the same message (torch -> autojit),
    torch's ending `trimmed` aside."""
    expected, got = raised(theirs), raised(mine)
    assert expected is not None, "torch did not raise"
    assert got is not None, f"autojit did not raise; torch raised {expected}"
    assert got[0] is expected[0], (got, expected)
    message = expected[1].replace("torch.", "autojit.")
    if trimmed and message.endswith(trimmed):
        message = message[:-len(trimmed)]
    assert got[1] == message, (got, expected)


def same(a, b) -> bool:
    return bool((a == b).all())


# ---- Generator ---------------------------------------------------------------------------------

def test_a_new_generator_starts_from_torchs_default_seed_on_the_cpu():
    generator = autojit.Generator()
    assert generator.initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert generator.device == autojit.device("cpu")
    assert repr(generator.device) == repr(torch.Generator().device)
    assert same(autojit.rand(4, generator=autojit.Generator()),
                autojit.rand(4, generator=autojit.Generator()))


def test_manual_seed_restarts_the_stream_and_returns_the_generator():
    generator = autojit.Generator()
    assert generator.manual_seed(5) is generator and generator.initial_seed() == 5
    first = autojit.randn(3, 2, generator=generator)
    second = autojit.randn(3, 2, generator=generator)
    assert not same(first, second)
    generator.manual_seed(5)
    assert same(autojit.randn(3, 2, generator=generator), first)
    assert generator.manual_seed(-1).initial_seed() == torch.Generator().manual_seed(
        -1).initial_seed() == 2 ** 64 - 1


def test_manual_seed_rejects_what_torch_rejects():
    for seed in (2 ** 64, 1.5, "3"):
        assert_same_error(lambda seed=seed: autojit.Generator().manual_seed(seed),
                          lambda seed=seed: torch.Generator().manual_seed(seed))


def test_seed_picks_a_fresh_seed_and_reports_it():
    generator = autojit.Generator()
    chosen = generator.seed()
    assert chosen == generator.initial_seed() and 0 <= chosen < 2 ** 64
    assert chosen != autojit.Generator().seed()  # 2**-64 to fail by chance


def test_get_state_and_set_state_resume_the_stream():
    generator = autojit.Generator().manual_seed(11)
    autojit.rand(3, generator=generator)
    state = generator.get_state()
    assert state.dtype is autojit.uint8 and state.shape == (5056,)
    assert int(state.min()) >= 0 and int(state.max()) <= 255
    ahead = autojit.rand(5, generator=generator)
    other = autojit.Generator().set_state(state)
    assert same(autojit.rand(5, generator=other), ahead)
    assert other.initial_seed() == 11


def test_set_state_checks_the_state():
    with pytest.raises(TypeError, match="RNG state must be an autojit.ByteTensor"):
        autojit.Generator().set_state(autojit.zeros(48))
    for size in (3, 5056):  # the wrong size, then a state never seeded
        mine = raised(lambda: autojit.Generator().set_state(
            autojit.zeros(size, dtype=autojit.uint8)))  # noqa: B023 - called at once
        theirs = raised(lambda: torch.Generator().set_state(
            torch.zeros(size, dtype=torch.uint8)))  # noqa: B023
        assert mine == theirs


def test_a_generator_pickles_and_copies_with_its_state():
    generator = autojit.Generator().manual_seed(3)
    autojit.rand(2, generator=generator)
    for make_copy in (lambda g: pickle.loads(pickle.dumps(g)), copy.deepcopy):
        clone = make_copy(generator)
        assert isinstance(clone, autojit.Generator) and clone.initial_seed() == 3
        assert same(autojit.rand(4, generator=clone), autojit.rand(4, generator=generator))


# ---- the global state --------------------------------------------------------------------------

def test_manual_seed_seeds_the_default_generator_and_returns_it():
    assert autojit.manual_seed(7) is autojit.default_generator is autojit.random.default_generator
    assert autojit.initial_seed() == 7
    first = autojit.rand(3)
    autojit.manual_seed("7")  # torch's int(seed)
    assert same(autojit.rand(3), first)
    assert same(autojit.rand(3, generator=autojit.Generator().manual_seed(7)),
                autojit.rand(3, generator=autojit.Generator().manual_seed(7)))


def test_seed_and_initial_seed():
    chosen = autojit.seed()
    assert autojit.initial_seed() == chosen
    assert autojit.random.seed is autojit.seed and autojit.random.initial_seed() == chosen


def test_get_rng_state_and_set_rng_state():
    autojit.manual_seed(1)
    state = autojit.get_rng_state()
    first = autojit.randn(4)
    autojit.set_rng_state(state)
    assert same(autojit.randn(4), first)
    autojit.random.set_rng_state(state)
    assert same(autojit.random.get_rng_state(), state)


def test_fork_rng_puts_the_state_back():
    autojit.manual_seed(2)
    with autojit.random.fork_rng():
        inside = autojit.rand(3)
    assert same(autojit.rand(3), inside)
    with autojit.random.fork_rng(enabled=False):
        autojit.rand(3)
    autojit.manual_seed(2)
    autojit.rand(3)
    assert not same(autojit.rand(3), inside)


# ---- generator= on the factories -----------------------------------------------------------

def test_every_random_factory_takes_a_generator():
    x = autojit.zeros(2, 3)
    calls = [
        lambda g: autojit.rand(2, 3, generator=g),
        lambda g: autojit.randn(4, generator=g),
        lambda g: autojit.randint(0, 9, (5,), generator=g),
        lambda g: autojit.randperm(6, generator=g),
        lambda g: autojit.rand_like(x, generator=g),
        lambda g: autojit.randn_like(x, generator=g),
        lambda g: autojit.randint_like(x, 4, generator=g),
        lambda g: autojit.randint_like(x, 2, 8, generator=g),
    ]
    for call in calls:
        assert same(call(autojit.Generator().manual_seed(9)),
                    call(autojit.Generator().manual_seed(9)))
    # A NumPy generator is accepted too, as before.
    assert same(autojit.rand(3, generator=np.random.default_rng(4)),
                autojit.rand(3, generator=np.random.default_rng(4)))


def test_a_generator_of_another_type_or_device_is_refused():
    with pytest.raises(TypeError, match=r"rand\(\): argument 'generator' must be "
                                        "autojit.Generator, not int"):
        autojit.rand(2, generator=5)


def test_randperm():
    autojit.manual_seed(0)
    permutation = autojit.randperm(7)
    assert permutation.dtype is autojit.int64 and sorted(permutation.tolist()) == list(range(7))
    assert autojit.randperm(4, dtype=autojit.float32).dtype is autojit.float32
    assert autojit.randperm(0).shape == (0,)
    assert autojit.randperm(3, dtype=autojit.float64, requires_grad=True).requires_grad
    assert_same_error(lambda: autojit.randperm(-1), lambda: torch.randperm(-1))


def test_the_random_factories_raise_torchs_errors():
    cases = [
        (lambda m: m.rand(3, dtype=m.int64)),
        (lambda m: m.rand(3, dtype=m.bool)),
        (lambda m: m.randn(3, dtype=m.int32)),
        (lambda m: m.randint(3, 5)),
        (lambda m: m.randint(5, 3, (2,))),
        (lambda m: m.randint(3, (2,), dtype=m.bool)),
        (lambda m: m.randint(0, 2 ** 40, (2,), dtype=m.int32)),
        (lambda m: m.randint(0, 2 ** 20, (2,), dtype=m.float16)),
    ]
    for case in cases:
        assert_same_error(lambda case=case: case(autojit), lambda case=case: case(torch))
    assert autojit.randint(0, 2, (3,), dtype=autojit.bool).dtype is autojit.bool
    assert autojit.randint(3, (2,), dtype=autojit.float32).dtype is autojit.float32


def test_a_dtype_given_as_a_string_raises_torchs_type_error():
    for name, call in [("zeros", lambda m: m.zeros(2, dtype="float")),
                       ("ones", lambda m: m.ones(2, dtype="float32")),
                       ("tensor", lambda m: m.tensor([1.0], dtype="float")),
                       ("full", lambda m: m.full((2,), 1.0, dtype="float")),
                       ("empty", lambda m: m.empty(2, dtype="float"))]:
        assert_same_error(lambda call=call: call(autojit), lambda call=call: call(torch))
        assert f"{name}(): argument 'dtype' must be" in raised(lambda c=call: c(autojit))[1]
    for call in (lambda m: m.rand(2, dtype="float"), lambda m: m.arange(3, dtype="float")):
        assert raised(lambda c=call: c(autojit))[0] is raised(lambda c=call: c(torch))[0] \
            is TypeError
    # Python's types are dtypes, as in torch: float is float64.
    assert autojit.zeros(2, dtype=float).dtype is autojit.float64 is \
        {torch.float64: autojit.float64}[torch.zeros(2, dtype=float).dtype]
    assert autojit.zeros(2, dtype=int).dtype is autojit.int64


# ---- compiled ----------------------------------------------------------------------------------

def test_compiled_draws_advance_a_generator_exactly_as_eager():
    generator = autojit.Generator()

    def step(x):
        noise = autojit.randn(3, generator=generator)
        order = autojit.randperm(3, generator=generator)
        return x + noise + autojit.rand(3, generator=generator) * order

    compiled = autojit.compile(step)
    generator.manual_seed(21)
    compiled_results = [compiled(autojit.ones(3)) for _ in range(3)]
    compiled_state = generator.get_state()
    generator.manual_seed(21)
    eager_results = [step(autojit.ones(3)) for _ in range(3)]
    assert all(same(a, b) for a, b in zip(compiled_results, eager_results, strict=True))
    assert same(generator.get_state(), compiled_state)
    assert len(compiled.executables) == 1


def test_the_default_generator_is_one_stream_eagerly_and_compiled():
    compiled = autojit.compile(lambda x: x * autojit.rand_like(x))
    autojit.manual_seed(4)
    first = [compiled(autojit.ones(2, 2)) for _ in range(2)]
    autojit.manual_seed(4)
    assert all(same(a, autojit.ones(2, 2) * autojit.rand(2, 2)) for a in first)


def test_a_generator_made_inside_a_compiled_function_starts_anew_each_call_as_eagerly():
    def step(x):
        return x + autojit.rand(2, generator=autojit.Generator())

    compiled = autojit.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        results = [compiled(autojit.zeros(2)) for _ in range(2)]
    assert same(results[0], results[1]) and same(results[0], step(autojit.zeros(2)))


def test_reseeding_a_generator_inside_a_compiled_function_runs_it_eagerly():
    generator = autojit.Generator()

    def step(x):
        generator.manual_seed(3)
        return x + autojit.rand(2, generator=generator)

    compiled = autojit.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [compiled(autojit.zeros(2)) for _ in range(2)]
    assert any(issubclass(w.category, CompileWarning) and "Generator.manual_seed" in
               str(w.message) for w in caught)
    assert same(results[0], results[1])
    assert same(results[0], autojit.rand(2, generator=autojit.Generator().manual_seed(3)))


def test_data_loading_takes_a_generator():
    from autojit.utils.data import DataLoader, RandomSampler, TensorDataset, random_split

    dataset = TensorDataset(autojit.arange(10))

    def orders(generator):
        split = [list(subset.indices) for subset in random_split(dataset, [6, 4],
                                                                 generator=generator)]
        sampled = list(RandomSampler(dataset, generator=generator))
        loaded = [batch[0].tolist() for batch in DataLoader(dataset, batch_size=5,
                                                            shuffle=True, generator=generator)]
        return split, sampled, loaded

    assert orders(autojit.Generator().manual_seed(5)) == orders(
        autojit.Generator().manual_seed(5))
    assert orders(autojit.Generator().manual_seed(5)) != orders(
        autojit.Generator().manual_seed(6))


def test_nn_init_takes_a_generator():
    from autojit.nn import init

    def weights(generator):
        return [init.uniform_(autojit.empty(3, 4), -1.0, 1.0, generator=generator),
                init.normal_(autojit.empty(5), generator=generator),
                init.kaiming_uniform_(autojit.empty(4, 6), generator=generator)]

    first = weights(autojit.Generator().manual_seed(2))
    again = weights(autojit.Generator().manual_seed(2))
    assert all(same(a, b) for a, b in zip(first, again, strict=True))
