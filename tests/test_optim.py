"""autojit.optim: each optimizer against its update rule written out in NumPy, state dicts,
parameter groups, errors, the learning-rate schedulers, and compiled training steps."""

import math
from copy import deepcopy

import numpy as np
import pytest

import autojit
from autojit.optim import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop, lr_scheduler

START = np.array([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]])
GRADS = [np.random.default_rng(seed).standard_normal(START.shape) for seed in range(3)]


# ---- the update rules, in NumPy ---------------------------------------------------------------

def sgd_reference(p, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                  maximize=False):
    buffer = None
    for g in GRADS:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buffer = g.copy() if buffer is None else momentum * buffer + (1 - dampening) * g
            g = g + momentum * buffer if nesterov else buffer
        p = p - lr * g
    return p, {} if buffer is None else {"momentum_buffer": buffer}


def adam_reference(p, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
                   maximize=False, decoupled=False):
    beta1, beta2 = betas
    m = v = v_max = np.zeros_like(p)
    for t, g in enumerate(GRADS, 1):
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = np.maximum(v_max, v)
        second = v_max if amsgrad else v
        denominator = np.sqrt(second) / math.sqrt(1 - beta2 ** t) + eps
        p = p - lr / (1 - beta1 ** t) * m / denominator
    state = {"step": len(GRADS), "exp_avg": m, "exp_avg_sq": v}
    if amsgrad:
        state["max_exp_avg_sq"] = v_max
    return p, state


def rmsprop_reference(p, lr, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                      maximize=False):
    s = a = b = np.zeros_like(p)
    for g in GRADS:
        g = -g if maximize else g
        g = g + weight_decay * p
        s = alpha * s + (1 - alpha) * g * g
        if centered:
            a = alpha * a + (1 - alpha) * g
            d = np.sqrt(s - a * a) + eps
        else:
            d = np.sqrt(s) + eps
        if momentum:
            b = momentum * b + g / d
            p = p - lr * b
        else:
            p = p - lr * g / d
    state = {"step": len(GRADS), "square_avg": s}
    if momentum:
        state["momentum_buffer"] = b
    if centered:
        state["grad_avg"] = a
    return p, state


def adagrad_reference(p, lr, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                      eps=1e-10, maximize=False):
    s = np.full_like(p, initial_accumulator_value)
    for t, g in enumerate(GRADS, 1):
        g = -g if maximize else g
        g = g + weight_decay * p
        rate = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - rate * g / (np.sqrt(s) + eps)
    return p, {"step": len(GRADS), "sum": s}


CASES = [
    (SGD, sgd_reference, dict(lr=0.1)),
    (SGD, sgd_reference, dict(lr=0.1, momentum=0.9)),
    (SGD, sgd_reference, dict(lr=0.1, momentum=0.9, dampening=0.3)),
    (SGD, sgd_reference, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (SGD, sgd_reference, dict(lr=0.1, weight_decay=0.05)),
    (SGD, sgd_reference, dict(lr=0.1, momentum=0.5, weight_decay=0.05, maximize=True)),
    (Adam, adam_reference, dict(lr=0.01)),
    (Adam, adam_reference, dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3)),
    (Adam, adam_reference, dict(lr=0.01, weight_decay=0.1)),
    (Adam, adam_reference, dict(lr=0.01, amsgrad=True)),
    (Adam, adam_reference, dict(lr=0.01, maximize=True)),
    (RMSprop, rmsprop_reference, dict(lr=0.01)),
    (RMSprop, rmsprop_reference, dict(lr=0.01, alpha=0.9, centered=True)),
    (RMSprop, rmsprop_reference, dict(lr=0.01, momentum=0.8)),
    (RMSprop, rmsprop_reference, dict(lr=0.01, centered=True, momentum=0.8,
                                      weight_decay=0.1, maximize=True)),
    (Adagrad, adagrad_reference, dict(lr=0.1)),
    (Adagrad, adagrad_reference, dict(lr=0.1, lr_decay=0.5)),
    (Adagrad, adagrad_reference, dict(lr=0.1, weight_decay=0.2, initial_accumulator_value=0.3)),
    (Adagrad, adagrad_reference, dict(lr=0.1, eps=0.5, maximize=True)),
]


def run_steps(optimizer_class, options, steps=GRADS, dtype=autojit.float64):
    param = autojit.tensor(START, dtype=dtype, requires_grad=True)
    optimizer = optimizer_class([param], **options)
    for g in steps:
        param.grad = autojit.tensor(g, dtype=dtype)
        optimizer.step()
    return param, optimizer


@pytest.mark.parametrize("optimizer_class, reference, options", CASES,
                         ids=[f"{c.__name__}-{'-'.join(o)}" for c, _, o in CASES])
def test_update_matches_closed_form(optimizer_class, reference, options):
    param, optimizer = run_steps(optimizer_class, options)
    expected, expected_state = reference(START.copy(), **options)
    np.testing.assert_allclose(param.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    state = optimizer.state[param]
    assert set(state) == set(expected_state)
    for name, value in expected_state.items():
        np.testing.assert_allclose(state[name].numpy(), value, rtol=1e-10, atol=1e-12)
        assert state[name].dtype is autojit.float64


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adamw_is_decoupled_weight_decay(amsgrad):
    param, optimizer = run_steps(AdamW, dict(lr=0.01, weight_decay=0.3, amsgrad=amsgrad))
    expected, _ = adam_reference(START.copy(), lr=0.01, weight_decay=0.3, amsgrad=amsgrad,
                                 decoupled=True)
    np.testing.assert_allclose(param.detach().numpy(), expected, rtol=1e-10)
    assert optimizer.defaults["weight_decay"] == 0.3
    assert AdamW([autojit.zeros(1, requires_grad=True)]).defaults["weight_decay"] == 1e-2


@pytest.mark.parametrize("optimizer_class, reference, options",
                         [(SGD, sgd_reference, dict(lr=0.1, momentum=0.9)),
                          (Adam, adam_reference, dict(lr=0.01)),
                          (AdamW, adam_reference, dict(lr=0.01))])
def test_tensor_learning_rate(optimizer_class, reference, options):
    param, _ = run_steps(optimizer_class, {**options, "lr": autojit.tensor(options["lr"])})
    if optimizer_class is AdamW:
        expected, _ = reference(START.copy(), weight_decay=1e-2, decoupled=True, **options)
    else:
        expected, _ = reference(START.copy(), **options)
    np.testing.assert_allclose(param.detach().numpy(), expected, rtol=1e-6)


def test_float32_parameters_keep_their_dtype():
    param, optimizer = run_steps(Adam, dict(lr=0.01, amsgrad=True), dtype=autojit.float32)
    expected, _ = adam_reference(START.copy(), lr=0.01, amsgrad=True)
    assert param.dtype is autojit.float32
    np.testing.assert_allclose(param.detach().numpy(), expected, rtol=1e-5)
    state = optimizer.state[param]
    assert state["exp_avg"].dtype is autojit.float32 and state["step"].dtype is autojit.float32
    assert state["step"].shape == () and state["step"].item() == 3


def test_parameters_without_grad_are_skipped_and_step_records_no_history():
    used = autojit.ones(2, requires_grad=True)
    unused = autojit.ones(2, requires_grad=True)
    optimizer = Adam([used, unused], lr=0.1)
    (used * 3).sum().backward()
    optimizer.step()
    assert unused.tolist() == [1.0, 1.0] and len(optimizer.state[unused]) == 0
    assert used.grad_fn is None and used.is_leaf
    assert optimizer.state[used]["exp_avg"].grad_fn is None


def test_step_with_closure_returns_the_loss():
    w = autojit.tensor([2.0], requires_grad=True)
    optimizer = SGD([w], lr=0.25)

    def closure():
        optimizer.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss

    with autojit.no_grad():  # the closure runs with grad enabled regardless
        loss = optimizer.step(closure)
    assert loss.item() == 4.0
    assert w.tolist() == [1.0]


def test_zero_grad():
    w = autojit.ones(3, requires_grad=True)
    optimizer = SGD([w], lr=0.1)
    (w * 2).sum().backward()
    grad = w.grad
    optimizer.zero_grad(set_to_none=False)
    assert w.grad is grad and w.grad.tolist() == [0.0, 0.0, 0.0]
    optimizer.zero_grad()
    assert w.grad is None
    optimizer.zero_grad()  # nothing to reset: no error


# ---- parameter groups -------------------------------------------------------------------------

def test_param_groups_with_their_own_options():
    first = autojit.tensor([1.0], requires_grad=True)
    second = autojit.tensor([1.0], requires_grad=True)
    optimizer = SGD([{"params": [first]}, {"params": second, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [group["lr"] for group in optimizer.param_groups] == [0.1, 0.5]
    assert optimizer.param_groups[1]["momentum"] == 0.9
    assert optimizer.param_groups[1]["params"] == [second]
    (first + second).sum().backward()
    optimizer.step()
    assert first.tolist() == pytest.approx([0.9]) and second.tolist() == pytest.approx([0.5])
    third = autojit.tensor([1.0], requires_grad=True)
    optimizer.add_param_group({"params": [third], "lr": 1.0})
    assert optimizer.param_groups[2]["momentum"] == 0.9


def test_named_parameters_are_accepted():
    w = autojit.ones(2, requires_grad=True)
    optimizer = Adam([("weight", w)])
    assert optimizer.param_groups[0]["params"] == [w]
    assert optimizer.param_groups[0]["param_names"] == ["weight"]


def test_required_option():
    from autojit.optim.optimizer import required

    class Plain(Optimizer):
        def __init__(self, params, lr=required):
            super().__init__(params, dict(lr=lr))

    w = autojit.ones(1, requires_grad=True)
    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Plain([w])
    assert Plain([w], lr=0.5).param_groups[0]["lr"] == 0.5


def test_construction_errors():
    w = autojit.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got "
                                        "autojit.Tensor"):
        SGD(w)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        SGD([])
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        SGD([w * 2])
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        SGD([{"params": [w]}, {"params": [w]}])
    with pytest.raises(TypeError, match="ordered collections"):
        SGD([{"params": {w}}])
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the "
                                        "params is float"):
        SGD([1.0])
    with pytest.raises(TypeError, match="param_group must be a dict"):
        SGD([w]).add_param_group([w])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        SGD([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid momentum value: -0.5"):
        SGD([w], momentum=-0.5)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero "
                                         "dampening"):
        SGD([w], nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0: 1.0"):
        Adam([w], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: -0.1"):
        AdamW([w], betas=(0.9, -0.1))
    with pytest.raises(ValueError, match="Invalid epsilon value: -1"):
        Adam([w], eps=-1)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -0.1"):
        RMSprop([w], weight_decay=-0.1)
    with pytest.raises(ValueError, match="Invalid alpha value: -1"):
        RMSprop([w], alpha=-1)
    with pytest.raises(ValueError, match="Invalid lr_decay value: -1"):
        Adagrad([w], lr_decay=-1)
    with pytest.raises(ValueError, match="Invalid initial_accumulator_value value: -1"):
        Adagrad([w], initial_accumulator_value=-1)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        Adam([w], lr=autojit.tensor([0.1, 0.2]))
    with pytest.warns(UserWarning, match="duplicate parameters"):
        SGD([w, w])


def test_repr():
    w = autojit.ones(1, requires_grad=True)
    assert repr(SGD([w], lr=0.1)) == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n"
        "    foreach: None\n    fused: None\n    lr: 0.1\n    maximize: False\n"
        "    momentum: 0\n    nesterov: False\n    weight_decay: 0\n)")
    assert repr(Adam([w])).startswith("Adam (\nParameter Group 0\n    amsgrad: False\n"
                                      "    betas: (0.9, 0.999)\n")


# ---- state dicts ------------------------------------------------------------------------------

def _two_groups(optimizer_class, **options):
    first = autojit.tensor(START, dtype=autojit.float64, requires_grad=True)
    second = autojit.tensor([1.0, -1.0], dtype=autojit.float64, requires_grad=True)
    optimizer = optimizer_class([{"params": [first]}, {"params": [second], "lr": 0.05}],
                                **options)
    return (first, second), optimizer


def _step(params, optimizer, seed):
    rng = np.random.default_rng(seed)
    for param in params:
        param.grad = autojit.tensor(rng.standard_normal(tuple(param.shape)),
                                    dtype=autojit.float64)
    optimizer.step()


@pytest.mark.parametrize("optimizer_class, options", [
    (SGD, dict(lr=0.1, momentum=0.9)), (Adam, dict(lr=0.01, amsgrad=True)),
    (RMSprop, dict(centered=True, momentum=0.5)), (Adagrad, dict(lr_decay=0.1))])
def test_state_dict_round_trip(optimizer_class, options):
    params, optimizer = _two_groups(optimizer_class, **options)
    for seed in range(2):
        _step(params, optimizer, seed)
    saved = optimizer.state_dict()
    assert set(saved) == {"state", "param_groups"}
    assert [group["params"] for group in saved["param_groups"]] == [[0], [1]]
    assert saved["param_groups"][1]["lr"] == 0.05
    assert set(saved["state"]) == {0, 1}

    copies = tuple(autojit.tensor(p.detach().numpy().copy(), requires_grad=True)
                   for p in params)
    restored = optimizer_class([{"params": [copies[0]]}, {"params": [copies[1]]}], lr=0.5)
    # A copy, as torch users make one: a loaded dict's tensors become the optimizer's own.
    restored.load_state_dict(deepcopy(saved))
    assert restored.param_groups[1]["lr"] == 0.05
    assert restored.param_groups[0]["params"] == [copies[0]]
    for name, value in optimizer.state[params[0]].items():
        loaded = restored.state[copies[0]][name]
        assert loaded is not value and np.array_equal(loaded.numpy(), value.numpy())
    _step(params, optimizer, 7)
    _step(copies, restored, 7)
    for original, copy in zip(params, copies, strict=True):
        np.testing.assert_array_equal(original.detach().numpy(), copy.detach().numpy())


def test_load_state_dict_casts_state_to_the_parameter_dtype():
    source = autojit.ones(2, dtype=autojit.float64, requires_grad=True)
    optimizer = Adam([source])
    source.grad = autojit.ones(2, dtype=autojit.float64)
    optimizer.step()
    target = autojit.ones(2, requires_grad=True)
    other = Adam([target])
    other.load_state_dict(optimizer.state_dict())
    assert other.state[target]["exp_avg"].dtype is autojit.float32
    assert other.state[target]["step"].dtype is autojit.float64  # the step count keeps its own


def test_load_state_dict_errors():
    params, optimizer = _two_groups(SGD, lr=0.1)
    single = SGD([autojit.ones(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter "
                                         "groups"):
        single.load_state_dict(optimizer.state_dict())
    saved = optimizer.state_dict()
    saved["param_groups"][0]["params"] = [0, 5]
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group"):
        optimizer.load_state_dict(saved)


# ---- learning-rate schedulers -----------------------------------------------------------------

def _rates(scheduler, epochs):
    rates = [scheduler.get_last_lr()[0]]
    for _ in range(epochs):
        scheduler.optimizer.step()
        scheduler.step()
        rates.append(scheduler.get_last_lr()[0])
    return rates


def _optimizer(lr=1.0):
    return SGD([autojit.ones(1, requires_grad=True)], lr=lr)


def test_step_lr():
    rates = _rates(lr_scheduler.StepLR(_optimizer(), step_size=3, gamma=0.5), 8)
    assert rates == pytest.approx([0.5 ** (epoch // 3) for epoch in range(9)])


def test_multi_step_lr():
    rates = _rates(lr_scheduler.MultiStepLR(_optimizer(), milestones=[2, 5, 5], gamma=0.1), 6)
    assert rates == pytest.approx([1, 1, 0.1, 0.1, 0.1, 1e-3, 1e-3])


def test_exponential_lr():
    rates = _rates(lr_scheduler.ExponentialLR(_optimizer(2.0), gamma=0.9), 5)
    assert rates == pytest.approx([2.0 * 0.9 ** epoch for epoch in range(6)])


def test_lambda_lr_per_group():
    optimizer = SGD([{"params": [autojit.ones(1, requires_grad=True)]},
                     {"params": [autojit.ones(1, requires_grad=True)], "lr": 0.5}], lr=1.0)
    scheduler = lr_scheduler.LambdaLR(optimizer, [lambda e: 1 / (e + 1), lambda e: 0.5 ** e])
    for _ in range(3):
        scheduler.step()
    assert scheduler.get_last_lr() == pytest.approx([0.25, 0.5 * 0.125])
    assert [g["initial_lr"] for g in optimizer.param_groups] == [1.0, 0.5]
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        lr_scheduler.LambdaLR(optimizer, [lambda e: 1.0])


def test_cosine_annealing_follows_the_closed_form_over_two_periods():
    t_max, eta_min, base = 4, 0.1, 1.0
    rates = _rates(lr_scheduler.CosineAnnealingLR(_optimizer(base), T_max=t_max,
                                                  eta_min=eta_min), 3 * t_max)
    closed = [eta_min + (base - eta_min) * (1 + math.cos(math.pi * epoch / t_max)) / 2
              for epoch in range(3 * t_max + 1)]
    assert rates == pytest.approx(closed, abs=1e-12)


def test_cosine_annealing_is_recursive_in_the_current_rate():
    optimizer = _optimizer(1.0)
    scheduler = lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
    scheduler.step()
    optimizer.param_groups[0]["lr"] = 0.5  # changed by hand: the schedule carries on from it
    scheduler.step()
    expected = (1 + math.cos(math.pi * 2 / 10)) / (1 + math.cos(math.pi / 10)) * 0.5
    assert scheduler.get_last_lr()[0] == pytest.approx(expected)


def test_scheduler_fills_a_tensor_learning_rate_in_place():
    lr = autojit.tensor(1.0)
    optimizer = SGD([autojit.ones(1, requires_grad=True)], lr=lr)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    scheduler.step()
    assert optimizer.param_groups[0]["lr"] is lr and lr.item() == 0.5
    last = scheduler.get_last_lr()[0]
    assert last is not lr and last.item() == 0.5  # a copy, never an alias


def test_scheduler_state_dict_and_resume():
    optimizer = _optimizer()
    scheduler = lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    for _ in range(3):
        scheduler.step()
    saved = scheduler.state_dict()
    assert "optimizer" not in saved and saved["last_epoch"] == 3
    other = lr_scheduler.StepLR(_optimizer(), step_size=5, gamma=0.1)
    other.load_state_dict(saved)
    assert other.last_epoch == 3 and other.step_size == 2 and other.base_lrs == [1.0]
    resumed = lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5, last_epoch=3)
    assert resumed.last_epoch == 4
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(_optimizer(), step_size=2, last_epoch=3)
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.StepLR([], step_size=2)


def test_scheduler_step_with_an_epoch_uses_the_closed_form():
    scheduler = lr_scheduler.StepLR(_optimizer(), step_size=2, gamma=0.5)
    scheduler.step(5)
    assert scheduler.get_last_lr() == [0.25]


# ---- compiled training steps ------------------------------------------------------------------

def _training_run(make_optimizer, compiled, steps=5, parameter_class=None):
    """`steps` calls of forward, backward, optimizer.step(), optimizer.zero_grad()."""
    rng = np.random.default_rng(0)
    weight = autojit.tensor(rng.standard_normal((4, 3)), dtype=autojit.float32,
                            requires_grad=True)
    bias = autojit.zeros(3, requires_grad=True)
    if parameter_class is not None:
        weight, bias = parameter_class(weight.detach()), parameter_class(bias.detach())
    optimizer = make_optimizer([weight, bias])
    x = autojit.tensor(rng.standard_normal((8, 4)), dtype=autojit.float32)
    y = autojit.tensor(rng.standard_normal((8, 3)), dtype=autojit.float32)

    def train_step(x, y):
        loss = ((x @ weight + bias - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    function = autojit.compile(train_step, fullgraph=True) if compiled else train_step
    losses = [function(x, y).item() for _ in range(steps)]
    state = {name: value.numpy().copy() for name, value in optimizer.state[weight].items()}
    return losses, [weight.detach().numpy().copy(), bias.detach().numpy().copy()], state, \
        function


# name -> (make the optimizer, whether its first step creates state). A first step that creates
# state (adds entries to optimizer.state) serves that call alone; the second call is traced
# with the state in place and serves the rest. Adagrad creates its state in its constructor.
OPTIMIZERS = {
    "sgd-momentum": (lambda params: SGD(params, lr=0.1, momentum=0.9, nesterov=True,
                                        weight_decay=0.01), True),
    "sgd-dampening": (lambda params: SGD(params, lr=0.1, momentum=0.9, dampening=0.5), True),
    "adam": (lambda params: Adam(params, lr=0.01, weight_decay=0.1, amsgrad=True), True),
    "adamw": (lambda params: AdamW(params, lr=0.01), True),
    "rmsprop": (lambda params: RMSprop(params, lr=0.01, centered=True, momentum=0.5), True),
    "adagrad": (lambda params: Adagrad(params, lr=0.1, lr_decay=0.01), False),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_compiled_step_matches_eager(name):
    make_optimizer, creates_state = OPTIMIZERS[name]
    eager_losses, eager_params, eager_state, _ = _training_run(make_optimizer, compiled=False)
    losses, params, state, function = _training_run(make_optimizer, compiled=True)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for compiled_value, eager_value in zip(params, eager_params, strict=True):
        np.testing.assert_allclose(compiled_value, eager_value, rtol=1e-5, atol=1e-6)
    assert set(state) == set(eager_state)
    for key, value in eager_state.items():
        np.testing.assert_allclose(state[key], value, rtol=1e-5, atol=1e-7)
    # The step count is a tensor, so the trace reads no Python number that changes: one kept
    # executable serves every step after the one that created the state.
    assert len(function.executables) == 1
    assert function.executables[0].calls == (4 if creates_state else 5)


def test_compiled_step_with_parameters_traces_once():
    from autojit.nn import Parameter

    make_optimizer, _ = OPTIMIZERS["adam"]
    *_, function = _training_run(make_optimizer, compiled=True, parameter_class=Parameter)
    assert len(function.executables) == 1


def _scheduled_run(compiled):
    weight = autojit.tensor([[1.0, -2.0], [0.5, 0.25]], requires_grad=True)
    optimizer = SGD([weight], lr=autojit.tensor(0.1), momentum=0.5)
    scheduler = lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)

    def train_step(x):
        loss = (x @ weight).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    function = autojit.compile(train_step, fullgraph=True) if compiled else train_step
    for _ in range(4):
        function(autojit.ones(3, 2))
        scheduler.step()
    return weight.detach().numpy().copy(), function


def test_compiled_step_with_a_scheduled_tensor_learning_rate_traces_once():
    """A Tensor lr is filled in place by the scheduler: the compiled step reads it as data."""
    eager, _ = _scheduled_run(compiled=False)
    compiled, function = _scheduled_run(compiled=True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-6)
    # The first call created the momentum buffers (a trace for that call alone).
    assert len(function.executables) == 1 and function.executables[0].calls == 3


def test_compiled_step_retraces_after_load_state_dict():
    weight = autojit.tensor([1.0, 2.0], requires_grad=True)
    optimizer = Adam([weight], lr=0.1)

    def train_step():
        weight.square().sum().backward()
        optimizer.step()
        optimizer.zero_grad()

    function = autojit.compile(train_step, fullgraph=True)
    function()
    function()
    saved = {"state": {0: {name: value.clone() for name, value in
                           optimizer.state_dict()["state"][0].items()}},
             "param_groups": optimizer.state_dict()["param_groups"]}
    optimizer.load_state_dict(saved)  # new state tensors: the old executable must not run
    function()
    assert len(function.executables) == 2
    assert optimizer.state[weight]["step"].item() == 3


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_a_loaded_state_dicts_tensors_become_the_optimizers_own_as_in_torch(name):
    # torch's load_state_dict keeps a state tensor of the parameter's dtype and device itself:
    # the next steps update the dict's tensors in place (torch-optimizer's state-dict tests
    # see it), and an optimizer loaded from another's state_dict() shares its tensors.
    torch = pytest.importorskip("torch")
    options = {"SGD": dict(lr=0.1, momentum=0.9)}.get(name, dict(lr=0.01))
    results = []
    for lib in (torch, autojit):
        first = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        optimizer = getattr(lib.optim, name)([first], **options)
        first.grad = lib.tensor([0.3, -0.1, 0.2])
        optimizer.step()
        saved = optimizer.state_dict()
        second = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        restored = getattr(lib.optim, name)([second], **options)
        restored.load_state_dict(saved)
        shared = sorted(key for key, value in restored.state[second].items()
                        if isinstance(value, lib.Tensor) and key != "step"
                        and value is optimizer.state[first][key])
        loaded = {key: value.clone() for key, value in saved["state"][0].items()
                  if isinstance(value, lib.Tensor) and key != "step"}
        second.grad = lib.tensor([0.5, 0.5, -0.5])
        restored.step()
        changed = sorted(key for key, value in loaded.items()
                         if not lib.equal(value, saved["state"][0][key]))
        results.append((shared, changed, second.detach().numpy().tolist()))
    assert results[1][:2] == results[0][:2] and results[0][0]
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-6)
