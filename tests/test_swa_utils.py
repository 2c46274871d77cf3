"""autojit.optim.swa_utils against torch.optim.swa_utils: AveragedModel's parameters, buffers
and n_averaged after several updates with each averaging function, buffers averaged or copied;
update_bn's running statistics, momenta and mode; SWALR's rates for both anneal strategies, no
annealing, and taking over from another scheduler; the errors for bad arguments; state dicts."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import autojit
import autojit.optim.swa_utils

torch = pytest.importorskip("torch")

LIBRARIES = (autojit, torch)


def _numpy(value) -> np.ndarray:
    return value.detach().numpy().copy()


def _state(module) -> dict:
    return {name: _numpy(value) for name, value in module.state_dict().items()}


def _load(module, arrays: dict, library) -> None:
    module.load_state_dict({name: library.tensor(array) for name, array in arrays.items()})


def _assert_states_equal(got: dict, expected: dict, rtol=1e-6, atol=1e-7) -> None:
    assert list(got) == list(expected)
    for name in expected:
        assert got[name].dtype == expected[name].dtype, name
        assert got[name].shape == expected[name].shape, name
        np.testing.assert_allclose(got[name], expected[name], rtol=rtol, atol=atol, err_msg=name)


# ---- AveragedModel --------------------------------------------------------------------------


def _network(library, dtype=None):
    model = library.nn.Sequential(
        library.nn.Linear(3, 4),
        library.nn.BatchNorm1d(4),
        library.nn.ReLU(),
        library.nn.Linear(4, 2),
    )
    return model if dtype is None else model.to(getattr(library, dtype))


def _random_state(template: dict, generator: np.random.Generator, step: int) -> dict:
    """New values for every entry: floats at random, the batch count an odd integer (so that
    an average of counts has a fraction to truncate)."""
    state = {}
    for name, array in template.items():
        if array.dtype.kind == "f":
            state[name] = generator.standard_normal(array.shape).astype(array.dtype)
            if "running_var" in name:
                state[name] = np.abs(state[name]) + 0.5
        else:
            state[name] = np.array(7 * step + 3, dtype=array.dtype)
    return state


def _halfway(averaged, current, num_averaged):
    return 0.5 * averaged + 0.5 * current


AVERAGING = {
    "default": lambda library: {},
    "ema_multi": lambda library: {
        "multi_avg_fn": library.optim.swa_utils.get_ema_multi_avg_fn(0.9)
    },
    "ema_multi_default_decay": lambda library: {
        "multi_avg_fn": library.optim.swa_utils.get_ema_multi_avg_fn()
    },
    "swa_multi": lambda library: {"multi_avg_fn": library.optim.swa_utils.get_swa_multi_avg_fn()},
    "ema": lambda library: {"avg_fn": library.optim.swa_utils.get_ema_avg_fn(0.8)},
    "swa": lambda library: {"avg_fn": library.optim.swa_utils.get_swa_avg_fn()},
    "custom": lambda library: {"avg_fn": _halfway},
}


def _averaging_run(library, averaging: str, use_buffers: bool, dtype=None, updates: int = 4):
    """The averaged model's state after each update, from the same model states in both
    libraries."""
    model = _network(library, dtype)
    generator = np.random.default_rng(0)
    template = _state(model)
    _load(model, _random_state(template, generator, 0), library)
    averaged = library.optim.swa_utils.AveragedModel(
        model, use_buffers=use_buffers, **AVERAGING[averaging](library)
    )
    states = [_state(averaged)]
    for step in range(1, updates + 1):
        _load(model, _random_state(template, generator, step), library)
        averaged.update_parameters(model)
        states.append(_state(averaged))
    return states


@pytest.mark.parametrize("use_buffers", [False, True], ids=["buffers_copied", "buffers_averaged"])
@pytest.mark.parametrize("averaging", list(AVERAGING))
def test_averaged_model_matches_torch(averaging, use_buffers):
    if averaging == "swa_multi" and use_buffers:
        # The integer batch count meets torch's integer addcdiv, which raises: so must this.
        got = _error(lambda: _averaging_run(autojit, averaging, use_buffers))
        assert got == _error(lambda: _averaging_run(torch, averaging, use_buffers))
        assert got[0] is RuntimeError and "Integer division with addcdiv" in got[1]
        return
    got = _averaging_run(autojit, averaging, use_buffers)
    expected = _averaging_run(torch, averaging, use_buffers)
    for got_state, expected_state in zip(got, expected, strict=True):
        _assert_states_equal(got_state, expected_state)
    assert [int(state["n_averaged"]) for state in got] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("averaging", ["default", "swa", "custom", "swa_multi", "ema_multi"])
def test_averaged_model_in_float64_matches_torch(averaging):
    """In float64, to the last bit where torch's arithmetic is autojit's; the multi functions
    lerp, whose kernel in torch fuses the multiply-add (one rounding step apart at most)."""
    got = _averaging_run(autojit, averaging, False, dtype="float64")
    expected = _averaging_run(torch, averaging, False, dtype="float64")
    tolerance = 1e-15 if averaging.endswith("multi") else 0.0
    for got_state, expected_state in zip(got, expected, strict=True):
        _assert_states_equal(got_state, expected_state, rtol=tolerance, atol=tolerance)


def test_averages_are_what_each_function_says():
    """By hand: the equal-weight mean of 2, 4 and 9, and an EMA with decay 0.5."""
    model = autojit.nn.Linear(1, 1)
    swa = autojit.optim.swa_utils.AveragedModel(model)
    ema = autojit.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=autojit.optim.swa_utils.get_ema_multi_avg_fn(0.5)
    )
    for value in (2.0, 4.0, 9.0):
        with autojit.no_grad():
            model.weight.fill_(value)
        swa.update_parameters(model)
        ema.update_parameters(model)
    assert swa.module.weight.item() == pytest.approx(5.0)
    assert ema.module.weight.item() == pytest.approx(6.0)  # 2, then 3, then 6
    assert swa.n_averaged.dtype == autojit.int64 and swa.n_averaged.item() == 3


def test_buffers_follow_the_model_unless_averaged():
    model = _network(autojit)
    copied = autojit.optim.swa_utils.AveragedModel(model)
    averaged = autojit.optim.swa_utils.AveragedModel(model, use_buffers=True)
    for mean in (1.0, 3.0):
        model[1].running_mean.fill_(mean)
        copied.update_parameters(model)
        averaged.update_parameters(model)
    assert copied.module[1].running_mean.tolist() == [3.0] * 4
    assert averaged.module[1].running_mean.tolist() == [2.0] * 4


def test_averaged_model_is_a_module_calling_its_copy():
    model = _network(autojit)
    averaged = autojit.optim.swa_utils.AveragedModel(model, device="cpu")
    assert isinstance(averaged, autojit.nn.Module)
    assert averaged.module is not model and averaged.module[0].weight is not model[0].weight
    model.eval()
    averaged.eval()
    inputs = autojit.tensor(np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32))
    np.testing.assert_array_equal(_numpy(averaged(inputs)), _numpy(model(inputs)))
    assert list(averaged.state_dict()) == list(
        torch.optim.swa_utils.AveragedModel(_network(torch)).state_dict()
    )
    assert type(averaged).__name__ == "AveragedModel"
    assert type(averaged).__module__ == "autojit.optim.swa_utils"


def test_state_dict_round_trip_from_torch():
    torch_averaged = _averaging_run_model(torch)
    averaged = autojit.optim.swa_utils.AveragedModel(_network(autojit))
    _load(averaged, _state(torch_averaged), autojit)
    _assert_states_equal(_state(averaged), _state(torch_averaged))
    assert averaged.n_averaged.item() == 2
    # and the next update is the third average, as torch's
    model_state = _random_state(_state(_network(autojit)), np.random.default_rng(5), 9)
    for library, target in ((autojit, averaged), (torch, torch_averaged)):
        model = _network(library)
        _load(model, model_state, library)
        target.update_parameters(model)
    _assert_states_equal(_state(averaged), _state(torch_averaged))


def _averaging_run_model(library):
    model = _network(library)
    averaged = library.optim.swa_utils.AveragedModel(model)
    for step in range(2):
        _load(model, _random_state(_state(model), np.random.default_rng(step), step), library)
        averaged.update_parameters(model)
    return averaged


def _error(call) -> tuple[type, str]:
    with pytest.raises(Exception) as raised:
        call()
    return type(raised.value), str(raised.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda library: library.optim.swa_utils.AveragedModel(
            library.nn.Linear(1, 1),
            avg_fn=library.optim.swa_utils.get_swa_avg_fn(),
            multi_avg_fn=library.optim.swa_utils.get_swa_multi_avg_fn(),
        ),
        lambda library: library.optim.swa_utils.get_ema_avg_fn(1.5),
        lambda library: library.optim.swa_utils.get_ema_multi_avg_fn(-0.1),
    ],
    ids=["both_functions", "ema_decay_above_one", "ema_multi_decay_below_zero"],
)
def test_averaging_errors_match_torch(call):
    assert _error(lambda: call(autojit)) == _error(lambda: call(torch))


def test_the_module_is_reachable_as_torch_s_is():
    assert autojit.optim.swa_utils is sys.modules["autojit.optim.swa_utils"]
    assert set(autojit.optim.swa_utils.__all__) == set(torch.optim.swa_utils.__all__)
    assert "AveragedModel" in dir(autojit.optim.swa_utils)
    from autojit.optim.swa_utils import AveragedModel

    assert AveragedModel is autojit.optim.swa_utils.AveragedModel
    with pytest.raises(AttributeError):
        autojit.optim.swa_utils.NoSuchName  # noqa: B018


# ---- update_bn ------------------------------------------------------------------------------


def _batch_norm_network(library):
    return library.nn.Sequential(
        library.nn.BatchNorm2d(2),
        library.nn.Flatten(),
        library.nn.Linear(18, 4),
        library.nn.BatchNorm1d(4, momentum=0.3),
        library.nn.ReLU(),
    )


def _loader(library, kind: str) -> list:
    generator = np.random.default_rng(2)
    batches = [generator.standard_normal((size, 2, 3, 3)).astype(np.float32) for size in (4, 6, 3)]
    inputs = [library.tensor(batch) for batch in batches]
    if kind == "tensors":
        return inputs
    targets = [library.zeros(len(batch)) for batch in batches]
    if kind == "tuples":
        return list(zip(inputs, targets))
    return [[batch, target] for batch, target in zip(inputs, targets)]


def _update_bn_run(library, kind: str, training: bool, device):
    model = _batch_norm_network(library)
    generator = np.random.default_rng(3)
    _load(model, _random_state(_state(model), generator, 1), library)
    model.train(training)
    library.optim.swa_utils.update_bn(_loader(library, kind), model, device=device)
    return model


@pytest.mark.parametrize("device", [None, "cpu"])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("kind", ["tensors", "tuples", "lists"])
def test_update_bn_matches_torch(kind, training, device):
    model = _update_bn_run(autojit, kind, training, device)
    expected = _update_bn_run(torch, kind, training, device)
    # Batch statistics are float32 sums, added in another order than torch's.
    _assert_states_equal(_state(model), _state(expected), rtol=1e-5, atol=1e-6)
    assert [module.training for module in model.modules()] == [training] * 6
    assert (model[0].momentum, model[3].momentum) == (0.1, 0.3)
    assert model[0].num_batches_tracked.item() == 3


def test_update_bn_on_an_averaged_model():
    """The usual end of SWA training: update_bn on the AveragedModel, through its forward."""
    results = []
    weights = _random_state(_state(_batch_norm_network(torch)), np.random.default_rng(4), 1)
    for library in LIBRARIES:
        model = _batch_norm_network(library)
        _load(model, weights, library)
        averaged = library.optim.swa_utils.AveragedModel(model)
        averaged.update_parameters(model)
        averaged.eval()
        library.optim.swa_utils.update_bn(_loader(library, "tuples"), averaged)
        results.append((_state(averaged), averaged.training))
    _assert_states_equal(results[0][0], results[1][0], rtol=1e-5, atol=1e-6)
    assert results[0][1] is results[1][1] is False


def test_update_bn_without_batch_norm_leaves_the_model_alone():
    model = autojit.nn.Sequential(autojit.nn.Linear(2, 2))
    model.eval()
    read = []

    def loader():
        read.append(True)
        yield autojit.zeros(1, 2)

    autojit.optim.swa_utils.update_bn(loader(), model)
    assert not model.training and read == []


# ---- SWALR ----------------------------------------------------------------------------------


def _optimizer(library, tensor_lr=False):
    groups = [
        {"params": [library.zeros(2, requires_grad=True)], "lr": 0.1},
        {"params": [library.zeros(2, requires_grad=True)], "lr": 0.4},
    ]
    if tensor_lr:
        for group in groups:
            group["lr"] = library.tensor(group["lr"], dtype=library.float64)
    return library.optim.SGD(groups, lr=0.1, momentum=0.9)


def _rates(scheduler, optimizer) -> list:
    return [float(rate) for rate in scheduler.get_last_lr()] + [
        float(group["lr"]) for group in optimizer.param_groups
    ]


def _swalr_run(library, kwargs: dict, steps: int = 20, tensor_lr=False) -> list:
    optimizer = _optimizer(library, tensor_lr)
    scheduler = library.optim.swa_utils.SWALR(optimizer, **kwargs)
    result = [_rates(scheduler, optimizer)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            optimizer.step()
            scheduler.step()
            result.append(_rates(scheduler, optimizer))
    return result


SWALR_CASES = [
    {"swa_lr": 0.05},
    {"swa_lr": 0.05, "anneal_strategy": "linear"},
    {"swa_lr": [0.05, 0.01], "anneal_epochs": 5},
    {"swa_lr": (0.05, 0.2), "anneal_epochs": 3, "anneal_strategy": "linear"},
    {"swa_lr": 0.05, "anneal_epochs": 0},
    {"swa_lr": 0.05, "anneal_epochs": 0, "anneal_strategy": "linear"},
    {"swa_lr": 0.05, "anneal_epochs": 1},
]


@pytest.mark.parametrize(
    "kwargs", SWALR_CASES, ids=lambda kwargs: "-".join(map(str, kwargs.values()))
)
def test_swalr_rates_match_torch(kwargs):
    got = _swalr_run(autojit, kwargs)
    assert got == _swalr_run(torch, kwargs)
    swa_lrs = kwargs["swa_lr"] if isinstance(kwargs["swa_lr"], (list, tuple)) else [0.05] * 2
    assert got[-1][:2] == pytest.approx(list(swa_lrs))
    assert got[0][:2] == (list(swa_lrs) if kwargs.get("anneal_epochs") == 0 else [0.1, 0.4])


def test_swalr_tensor_rates_match_torch():
    kwargs = {"swa_lr": 0.05, "anneal_epochs": 4}
    got = _swalr_run(autojit, kwargs, steps=8, tensor_lr=True)
    assert got == _swalr_run(torch, kwargs, steps=8, tensor_lr=True)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swalr_takes_over_from_another_scheduler(strategy):
    def run(library):
        optimizer = _optimizer(library)
        base = library.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=30)
        swa = library.optim.swa_utils.SWALR(
            optimizer, swa_lr=0.02, anneal_epochs=4, anneal_strategy=strategy
        )
        rates = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in range(20):
                optimizer.step()
                (swa if epoch > 8 else base).step()
                rates.append([float(group["lr"]) for group in optimizer.param_groups])
        return rates

    got = run(autojit)
    assert got == run(torch)
    assert got[9] != pytest.approx(got[8]) and got[-1] == pytest.approx([0.02, 0.02])


SWALR_ERRORS = [
    {"swa_lr": 0.05, "anneal_strategy": "exp"},
    {"swa_lr": 0.05, "anneal_epochs": -1},
    {"swa_lr": 0.05, "anneal_epochs": 2.5},
    {"swa_lr": [0.05, 0.01, 0.1]},
]


@pytest.mark.parametrize("kwargs", SWALR_ERRORS, ids=["strategy", "negative", "float", "length"])
def test_swalr_errors_match_torch(kwargs):
    def build(library):
        return lambda: library.optim.swa_utils.SWALR(_optimizer(library), **kwargs)

    got = _error(build(autojit))
    assert got == _error(build(torch))
    assert got[0] is ValueError


def test_swalr_get_lr_outside_step_warns():
    optimizer = _optimizer(autojit)
    scheduler = autojit.optim.swa_utils.SWALR(optimizer, swa_lr=0.05)
    with pytest.warns(UserWarning, match="get_last_lr"):
        scheduler.get_lr()
    assert isinstance(scheduler, autojit.optim.lr_scheduler.LRScheduler)


def test_swalr_state_dict_round_trip():
    def run(library, steps):
        optimizer = _optimizer(library)
        scheduler = library.optim.swa_utils.SWALR(
            optimizer, swa_lr=0.05, anneal_epochs=6, anneal_strategy="linear"
        )
        for _ in range(steps):
            optimizer.step()
            scheduler.step()
        return optimizer, scheduler

    optimizer, scheduler = run(autojit, 3)
    torch_optimizer, torch_scheduler = run(torch, 3)
    state = scheduler.state_dict()
    torch_state = torch_scheduler.state_dict()
    assert state == torch_state
    assert state["_anneal_strategy"] == "linear" and state["_step_count"] == 4
    assert "optimizer" not in state and "anneal_func" not in state

    # torch's state dict loads, and the run goes on as torch's does.
    from_torch_optimizer = _optimizer(autojit)
    from_torch = autojit.optim.swa_utils.SWALR(from_torch_optimizer, swa_lr=0.05)
    for group, torch_group in zip(from_torch_optimizer.param_groups, torch_optimizer.param_groups):
        group["lr"] = torch_group["lr"]
    from_torch.load_state_dict(torch_state)
    for pair in ((from_torch_optimizer, from_torch), (torch_optimizer, torch_scheduler)):
        for _ in range(2):
            pair[0].step()
            pair[1].step()
    assert from_torch.get_last_lr() == torch_scheduler.get_last_lr()

    # A scheduler built with the other strategy continues as the saved one does.
    restored_optimizer = _optimizer(autojit)
    restored_optimizer.load_state_dict(optimizer.state_dict())
    restored = autojit.optim.swa_utils.SWALR(restored_optimizer, swa_lr=0.05)
    restored.load_state_dict(state)
    assert restored.anneal_func(0.25) == 0.25
    for _ in range(5):
        for each_optimizer, each_scheduler in (
            (optimizer, scheduler),
            (restored_optimizer, restored),
        ):
            each_optimizer.step()
            each_scheduler.step()
        assert restored.get_last_lr() == scheduler.get_last_lr()
    assert restored.get_last_lr() == pytest.approx([0.05, 0.05])
