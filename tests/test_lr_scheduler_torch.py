"""autojit.optim.lr_scheduler against torch.optim.lr_scheduler: each scheduler's rate sequence
(and momentum, where it cycles) over enough steps to cover its phases, state dicts saved midway
and loaded into a fresh scheduler (the run continues identically), torch's errors, and compiled
training steps whose rate (and momentum, and betas) change every step without retracing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def _optimizer(lib, name="SGD", groups=2, tensor_lr=False):
    params = [{"params": [lib.zeros(2, requires_grad=True)], "lr": 0.1 * (index + 1)}
              for index in range(groups)]
    if tensor_lr:
        for group in params:
            group["lr"] = lib.tensor(group["lr"], dtype=lib.float64)
    options = dict(momentum=0.9) if name == "SGD" else {}
    return getattr(lib.optim, name)(params, lr=0.1, **options)


def _halve(epoch):
    return 0.5 if epoch % 2 else 0.9


# name, keyword arguments (built per library), steps, optimizer
CASES = [
    ("MultiplicativeLR", dict(lr_lambda=_halve), 6, "SGD"),
    ("ConstantLR", dict(), 8, "SGD"),
    ("ConstantLR", dict(factor=0.5, total_iters=3), 6, "SGD"),
    ("LinearLR", dict(), 8, "SGD"),
    ("LinearLR", dict(start_factor=0.2, end_factor=0.8, total_iters=4), 7, "SGD"),
    ("PolynomialLR", dict(), 8, "SGD"),
    ("PolynomialLR", dict(total_iters=4, power=2.0), 6, "SGD"),
    ("StepLR", dict(step_size=2, gamma=0.5), 6, "SGD"),
    ("MultiStepLR", dict(milestones=[1, 3, 3], gamma=0.5), 6, "SGD"),
    ("ExponentialLR", dict(gamma=0.8), 5, "SGD"),
    ("LambdaLR", dict(lr_lambda=[_halve, lambda epoch: 1 / (1 + epoch)]), 5, "SGD"),
    ("CosineAnnealingLR", dict(T_max=3, eta_min=0.01), 10, "SGD"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3), 14, "SGD"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=2, step_size_down=3,
                      mode="triangular2"), 16, "SGD"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9),
     12, "SGD"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, cycle_momentum=True,
                      base_momentum=0.7, max_momentum=0.95), 9, "Adam"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, cycle_momentum=False), 6,
     "Adagrad"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2,
                      scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations"), 8, "SGD"),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=12), 12, "SGD"),
    ("OneCycleLR", dict(max_lr=[1.0, 0.5], epochs=2, steps_per_epoch=5, pct_start=0.4,
                        anneal_strategy="linear", div_factor=10.0, final_div_factor=100.0),
     10, "Adam"),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=15, three_phase=True, base_momentum=0.8), 15,
     "SGD"),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=6, cycle_momentum=False), 6, "Adagrad"),
    ("CosineAnnealingWarmRestarts", dict(T_0=3), 10, "SGD"),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=2, eta_min=0.01), 16, "SGD"),
]


def _momenta(optimizer) -> list:
    return [group["betas"][0] if "betas" in group else group.get("momentum")
            for group in optimizer.param_groups]


def _make(lib, name, kwargs, optimizer_name, tensor_lr=False):
    optimizer = _optimizer(lib, optimizer_name, tensor_lr=tensor_lr)
    return optimizer, getattr(lib.optim.lr_scheduler, name)(optimizer, **kwargs)


def _floats(values) -> list:
    return [float(value) for value in values]


def _trajectory(lib, name, kwargs, steps, optimizer_name, tensor_lr=False):
    optimizer, scheduler = _make(lib, name, kwargs, optimizer_name, tensor_lr)
    result = [(_floats(scheduler.get_last_lr()), _momenta(optimizer))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "step the optimizer first" reminder
        for _ in range(steps - 1):
            optimizer.step()
            scheduler.step()
            result.append((_floats(scheduler.get_last_lr()), _momenta(optimizer)))
    return result


CASE_IDS = [f"{name}-{'-'.join(kwargs) or 'defaults'}-{optimizer}"
            for name, kwargs, _, optimizer in CASES]


@pytest.mark.parametrize("name, kwargs, steps, optimizer_name", CASES, ids=CASE_IDS)
def test_rates_and_momenta_match_torch(name, kwargs, steps, optimizer_name):
    assert _trajectory(autojit, name, kwargs, steps, optimizer_name) == \
        _trajectory(torch, name, kwargs, steps, optimizer_name)


@pytest.mark.parametrize("name, kwargs, steps, optimizer_name",
                         [CASES[3], CASES[12], CASES[18], CASES[23]],
                         ids=[CASE_IDS[3], CASE_IDS[12], CASE_IDS[18], CASE_IDS[23]])
def test_tensor_rates_are_filled_in_place(name, kwargs, steps, optimizer_name):
    """A group whose lr is a tensor keeps that tensor, filled with torch's values."""
    optimizer, _ = _make(autojit, name, kwargs, optimizer_name, tensor_lr=True)
    lr_tensor = optimizer.param_groups[0]["lr"]
    got = _trajectory(autojit, name, kwargs, steps, optimizer_name, tensor_lr=True)
    expected = _trajectory(torch, name, kwargs, steps, optimizer_name, tensor_lr=True)
    assert got == expected
    assert isinstance(lr_tensor, autojit.Tensor)


def _epoch_jumps(lib):
    optimizer = _optimizer(lib)
    scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=3)
    rates = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in (0.5, 1.25, 2.0, 3.7, 9.0, 7.5, 1.0, 20.3):
            scheduler.step(epoch)
            rates.append((_floats(scheduler.get_last_lr()), scheduler.T_i,
                          float(scheduler.T_cur), scheduler.last_epoch))
    return rates


def test_warm_restarts_take_fractional_epochs_as_torch():
    assert _epoch_jumps(autojit) == _epoch_jumps(torch)


def _closed_forms(lib):
    rates = []
    for name, kwargs in [("ConstantLR", dict(factor=0.5, total_iters=3)),
                         ("LinearLR", dict(total_iters=4)), ("PolynomialLR", dict(power=2.0))]:
        optimizer = _optimizer(lib)
        scheduler = getattr(lib.optim.lr_scheduler, name)(optimizer, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (3, 1, 6, 2):
                scheduler.step(epoch)
                rates.append(_floats(scheduler.get_last_lr()))
    return rates


def test_step_with_an_epoch_uses_torchs_closed_forms():
    assert _closed_forms(autojit) == _closed_forms(torch)


# ---- combining schedulers ---------------------------------------------------------------------

def _combined(lib, kind, steps=10):
    optimizer = _optimizer(lib)
    schedulers = lib.optim.lr_scheduler
    if kind == "sequential":
        scheduler = schedulers.SequentialLR(optimizer, [
            schedulers.LinearLR(optimizer, start_factor=0.25, total_iters=3),
            schedulers.ExponentialLR(optimizer, gamma=0.7),
            schedulers.ConstantLR(optimizer, factor=0.5, total_iters=2)], milestones=[3, 6])
    else:
        scheduler = schedulers.ChainedScheduler([
            schedulers.ConstantLR(optimizer, factor=0.1, total_iters=2),
            schedulers.ExponentialLR(optimizer, gamma=0.9)])
    rates = [_floats(scheduler.get_last_lr())]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            optimizer.step()
            scheduler.step()
            rates.append(_floats(scheduler.get_last_lr()))
    return rates, scheduler, optimizer


@pytest.mark.parametrize("kind", ["sequential", "chained"])
def test_combined_schedulers_match_torch(kind):
    assert _combined(autojit, kind)[0] == _combined(torch, kind)[0]


def _plateau(lib, options, metrics, min_lr=0.0):
    optimizer = _optimizer(lib)
    scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer, min_lr=min_lr, **options)
    rates = []
    for metric in metrics:
        scheduler.step(metric)
        rates.append((_floats(scheduler.get_last_lr()), scheduler.num_bad_epochs,
                      scheduler.cooldown_counter, scheduler.best))
    return rates


PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.9, 0.91, 0.92, 0.899, 0.95, 0.96, 0.97, 0.98, 0.99, 1.0,
                   0.5, 0.6, 0.7, 0.8]


@pytest.mark.parametrize("options", [
    dict(patience=1), dict(mode="max", patience=2, factor=0.5),
    dict(patience=1, threshold=0.05, threshold_mode="abs", cooldown=2),
    dict(mode="max", patience=0, threshold=0.1, threshold_mode="abs"),
    dict(patience=0, factor=0.2, eps=0.01),
], ids=lambda options: "-".join(f"{key}={value}" for key, value in options.items()))
def test_reduce_on_plateau_matches_torch(options):
    assert _plateau(autojit, options, PLATEAU_METRICS) == \
        _plateau(torch, options, PLATEAU_METRICS)


def test_reduce_on_plateau_min_lr_per_group_and_tensor_metric():
    metrics = [autojit.tensor(value) for value in PLATEAU_METRICS]
    got = _plateau(autojit, dict(patience=0, factor=0.5), metrics, min_lr=[0.03, 0.05])
    expected = _plateau(torch, dict(patience=0, factor=0.5), PLATEAU_METRICS,
                        min_lr=[0.03, 0.05])
    assert [rates for rates, *_ in got] == [rates for rates, *_ in expected]


# ---- state dicts ---------------------------------------------------------------------------

def _resumed(lib, name, kwargs, steps, optimizer_name):
    """Rates of a scheduler stepped half way, saved, loaded into a fresh one (of an optimizer
    that carries the groups' entries, as a checkpoint would), and stepped to the end."""
    optimizer, scheduler = _make(lib, name, kwargs, optimizer_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps // 2):
            optimizer.step()
            scheduler.step()
        saved = scheduler.state_dict()
        keys = sorted(saved)  # before loading: torch's CyclicLR pops an entry as it loads
        optimizer_saved = optimizer.state_dict()
        fresh_optimizer, fresh = _make(lib, name, kwargs, optimizer_name)
        fresh_optimizer.load_state_dict(optimizer_saved)
        fresh.load_state_dict(saved)
        rates = []
        for _ in range(steps - steps // 2):
            fresh_optimizer.step()
            fresh.step()
            rates.append((_floats(fresh.get_last_lr()), _momenta(fresh_optimizer)))
    return rates, keys


STATE_CASES = [CASES[0], CASES[4], CASES[6], CASES[13], CASES[15], CASES[19], CASES[20],
               CASES[23]]


@pytest.mark.parametrize("name, kwargs, steps, optimizer_name", STATE_CASES,
                         ids=[CASE_IDS[CASES.index(case)] for case in STATE_CASES])
def test_state_dict_round_trip_continues_as_torch(name, kwargs, steps, optimizer_name):
    rates, keys = _resumed(autojit, name, kwargs, steps, optimizer_name)
    expected_rates, expected_keys = _resumed(torch, name, kwargs, steps, optimizer_name)
    assert rates == expected_rates
    assert keys == expected_keys


@pytest.mark.parametrize("kind", ["sequential", "chained"])
def test_combined_state_dict_holds_the_inner_ones(kind):
    _, scheduler, _ = _combined(autojit, kind, steps=4)
    _, reference, _ = _combined(torch, kind, steps=4)
    saved, expected = scheduler.state_dict(), reference.state_dict()
    assert sorted(saved) == sorted(expected)
    assert [sorted(inner) for inner in saved["_schedulers"]] == \
        [sorted(inner) for inner in expected["_schedulers"]]
    rates = []
    for lib, state in ((autojit, saved), (torch, expected)):
        _, fresh, _ = _combined(lib, kind, steps=0)
        fresh.load_state_dict(state)
        fresh.step()
        rates.append(_floats(fresh.get_last_lr()))
    assert rates[0] == rates[1]


def test_plateau_state_dict_round_trip():
    optimizer = _optimizer(autojit)
    scheduler = autojit.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", patience=1)
    for metric in PLATEAU_METRICS[:6]:
        scheduler.step(metric)
    fresh = autojit.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(autojit))
    fresh.load_state_dict(scheduler.state_dict())
    assert (fresh.mode, fresh.best, fresh.num_bad_epochs, fresh.mode_worse) == \
        (scheduler.mode, scheduler.best, scheduler.num_bad_epochs, -float("inf"))
    reference = torch.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(torch))
    assert sorted(scheduler.state_dict()) == sorted(reference.state_dict())


# ---- errors ------------------------------------------------------------------------------------

def _adagrad(lib):
    return lib.optim.Adagrad([lib.zeros(2, requires_grad=True)])


ERRORS = [
    ("ConstantLR", lambda lib, o: dict(factor=1.5)),
    ("LinearLR", lambda lib, o: dict(start_factor=0.0)),
    ("LinearLR", lambda lib, o: dict(end_factor=1.5)),
    ("MultiplicativeLR", lambda lib, o: dict(lr_lambda=0.5)),
    ("MultiplicativeLR", lambda lib, o: dict(lr_lambda=[_halve])),
    ("SequentialLR", lambda lib, o: dict(schedulers=[], milestones=[])),
    ("SequentialLR", lambda lib, o: dict(
        schedulers=[lib.optim.lr_scheduler.ExponentialLR(o, 0.9)], milestones=[2])),
    ("SequentialLR", lambda lib, o: dict(
        schedulers=[lib.optim.lr_scheduler.ReduceLROnPlateau(o)], milestones=[])),
    ("ReduceLROnPlateau", lambda lib, o: dict(factor=1.0)),
    ("ReduceLROnPlateau", lambda lib, o: dict(mode="average")),
    ("ReduceLROnPlateau", lambda lib, o: dict(threshold_mode="ratio")),
    ("ReduceLROnPlateau", lambda lib, o: dict(min_lr=[0.1])),
    ("CyclicLR", lambda lib, o: dict(base_lr=0.1, max_lr=1.0, mode="square")),
    ("CyclicLR", lambda lib, o: dict(base_lr=[0.1], max_lr=1.0)),
    ("CosineAnnealingWarmRestarts", lambda lib, o: dict(T_0=0)),
    ("CosineAnnealingWarmRestarts", lambda lib, o: dict(T_0=2, T_mult=1.5)),
    ("CosineAnnealingWarmRestarts", lambda lib, o: dict(T_0=2, eta_min="0")),
    ("OneCycleLR", lambda lib, o: dict(max_lr=1.0)),
    ("OneCycleLR", lambda lib, o: dict(max_lr=1.0, total_steps=0)),
    ("OneCycleLR", lambda lib, o: dict(max_lr=1.0, epochs=2, steps_per_epoch=0)),
    ("OneCycleLR", lambda lib, o: dict(max_lr=1.0, total_steps=5, pct_start=1)),
    ("OneCycleLR", lambda lib, o: dict(max_lr=1.0, total_steps=5, anneal_strategy="exp")),
]


@pytest.mark.parametrize("index", range(len(ERRORS)),
                         ids=[f"{name}-{index}" for index, (name, _) in enumerate(ERRORS)])
def test_construction_errors_are_torchs(index):
    name, make_kwargs = ERRORS[index]
    failures = []
    for lib in (torch, autojit):
        optimizer = _optimizer(lib)
        with pytest.raises((ValueError, TypeError, RuntimeError)) as caught:
            getattr(lib.optim.lr_scheduler, name)(optimizer, **make_kwargs(lib, optimizer))
        failures.append((type(caught.value), str(caught.value).split(" has <")[0]))
    assert failures[0] == failures[1]


@pytest.mark.parametrize("lib", [torch, autojit], ids=["torch", "autojit"])
def test_cycling_momentum_needs_a_momentum(lib):
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lib.optim.lr_scheduler.OneCycleLR(_adagrad(lib), max_lr=1.0, total_steps=4)


def test_one_cycle_past_its_end_is_torchs_error():
    optimizer, scheduler = _make(autojit, "OneCycleLR", dict(max_lr=1.0, total_steps=2), "SGD")
    optimizer.step()
    scheduler.step()
    scheduler.step()
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total "
                                         "steps is 2"):
        scheduler.step()


# ---- compiled training steps with scheduled hyperparameters -------------------------------------

def _scheduled_training(optimizer_name, make_scheduler, compiled, steps=30):
    rng = np.random.default_rng(0)
    weight = autojit.tensor(rng.standard_normal((3, 2)), dtype=autojit.float32,
                            requires_grad=True)
    x = autojit.tensor(rng.standard_normal((4, 3)), dtype=autojit.float32)
    options = dict(momentum=0.9) if optimizer_name == "SGD" else {}
    optimizer = getattr(autojit.optim, optimizer_name)([weight], lr=0.01, **options)
    scheduler = make_scheduler(optimizer)

    def train_step(x):
        loss = (x @ weight).tanh().square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    function = autojit.compile(train_step) if compiled else train_step
    losses = []
    for step in range(steps):
        losses.append(function(x).item())
        if isinstance(scheduler, autojit.optim.lr_scheduler.ReduceLROnPlateau):
            scheduler.step(1.0)  # no improvement: the rate drops every other step
        else:
            scheduler.step()
        assert step < steps - 1 or scheduler.get_last_lr()
    return losses, weight.detach().numpy(), function


SCHEDULED = {
    "OneCycleLR-SGD-momentum": ("SGD", lambda o: autojit.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.1, total_steps=31)),
    "OneCycleLR-Adam-betas": ("Adam", lambda o: autojit.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.1, total_steps=31, three_phase=True)),
    "CyclicLR-Adam-betas": ("Adam", lambda o: autojit.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.001, max_lr=0.05, step_size_up=4, mode="triangular2")),
    "LinearLR-then-warm-restarts": ("SGD", lambda o: autojit.optim.lr_scheduler.SequentialLR(
        o, [autojit.optim.lr_scheduler.LinearLR(o, total_iters=5),
            autojit.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2)],
        milestones=[5])),
    "chained-polynomial-multiplicative": ("RMSprop", lambda o: (
        autojit.optim.lr_scheduler.ChainedScheduler([
            autojit.optim.lr_scheduler.PolynomialLR(o, total_iters=40, power=2.0),
            autojit.optim.lr_scheduler.MultiplicativeLR(o, lambda epoch: 0.97)]))),
    "ReduceLROnPlateau": ("SGD", lambda o: autojit.optim.lr_scheduler.ReduceLROnPlateau(
        o, patience=1, factor=0.9)),
}


@pytest.mark.parametrize("name", list(SCHEDULED))
def test_a_compiled_step_with_a_schedule_keeps_two_executables(name):
    """Rates (and SGD's momentum, Adam's betas) that change every step are runtime floats of
    the compiled step: at most two executables (the first call creates the optimizer's state),
    and eager's results."""
    optimizer_name, make_scheduler = SCHEDULED[name]
    eager_losses, eager_weight, _ = _scheduled_training(optimizer_name, make_scheduler, False)
    losses, weight, function = _scheduled_training(optimizer_name, make_scheduler, True)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(weight, eager_weight, rtol=1e-5, atol=1e-6)
    assert len(function.executables) <= 2
    assert sum(executable.calls for executable in function.executables) >= 28
