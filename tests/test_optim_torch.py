"""autojit.optim against torch.optim: every optimizer's update over 5 steps for each of its
options (float64, and float32 for a subset), the state and the parameter groups with torch's
keys, state dicts moved from torch to autojit and back (the run continues identically),
torch's construction errors, and the new optimizers' steps compiled against eager."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(0)
START = [_rng.standard_normal((2, 3)), _rng.standard_normal(3)]
# Gradients with zero entries: SparseAdam reads those as absent, Rprop's sign rule meets 0.
GRADS = [[_rng.standard_normal(a.shape) * (_rng.random(a.shape) > 0.25) for a in START]
         for _ in range(5)]

TENSOR_LR = "tensor lr"  # an option value: the learning rate as a one-element tensor

CASES = {
    "SGD": [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, dampening=0.3),
            dict(lr=0.1, momentum=0.9, nesterov=True), dict(lr=0.1, weight_decay=0.05),
            dict(lr=0.1, momentum=0.5, maximize=True), dict(lr=0.1, foreach=True),
            dict(lr=0.1, momentum=0.9, fused=True), dict(lr=TENSOR_LR, momentum=0.9)],
    "Adam": [dict(lr=0.01), dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3),
             dict(lr=0.01, weight_decay=0.1), dict(lr=0.01, amsgrad=True),
             dict(lr=0.01, maximize=True), dict(lr=0.01, weight_decay=0.1,
                                                decoupled_weight_decay=True),
             dict(lr=0.01, foreach=True), dict(lr=0.01, fused=True), dict(lr=TENSOR_LR)],
    "AdamW": [dict(lr=0.01), dict(lr=0.01, weight_decay=0.3, amsgrad=True),
              dict(lr=0.01, maximize=True, foreach=False), dict(lr=0.01, fused=True)],
    "RMSprop": [dict(lr=0.01), dict(lr=0.01, alpha=0.9, centered=True),
                dict(lr=0.01, momentum=0.8), dict(lr=0.01, weight_decay=0.1, maximize=True),
                dict(lr=0.01, centered=True, momentum=0.5, foreach=True)],
    "Adagrad": [dict(lr=0.1), dict(lr=0.1, lr_decay=0.5), dict(lr=0.1, weight_decay=0.2,
                                                               initial_accumulator_value=0.3),
                dict(lr=0.1, eps=0.5, maximize=True), dict(lr=0.1, fused=True)],
    "NAdam": [dict(), dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3),
              dict(lr=0.01, weight_decay=0.1), dict(lr=0.01, momentum_decay=0.05),
              dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
              dict(lr=0.01, maximize=True, foreach=True)],
    "RAdam": [dict(), dict(lr=0.01, betas=(0.5, 0.6)), dict(lr=0.01, betas=(0.8, 0.9)),
              dict(lr=0.01, weight_decay=0.1),
              dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
              dict(lr=0.01, maximize=True, foreach=True)],
    "Adamax": [dict(), dict(lr=0.01, betas=(0.5, 0.7), eps=1e-3), dict(lr=0.01, weight_decay=0.1),
               dict(lr=0.01, maximize=True, foreach=True)],
    "Adadelta": [dict(), dict(lr=0.5, rho=0.5, eps=1e-3), dict(weight_decay=0.1),
                 dict(maximize=True, foreach=True)],
    "ASGD": [dict(), dict(lr=0.05, lambd=0.01, alpha=0.5, t0=2), dict(lr=0.05, weight_decay=0.1),
             dict(lr=0.05, t0=1, maximize=True, foreach=True)],
    "Rprop": [dict(), dict(lr=0.05, etas=(0.3, 1.5)), dict(lr=0.05, step_sizes=(0.01, 0.07)),
              dict(lr=0.05, maximize=True, foreach=True)],
    "SparseAdam": [dict(), dict(lr=0.01, betas=(0.5, 0.7), eps=1e-3), dict(lr=0.1, maximize=True)],
}
FLOAT32_CASES = [("SGD", 2), ("Adam", 3), ("RMSprop", 1), ("Adagrad", 1), ("NAdam", 0),
                 ("RAdam", 2), ("Adamax", 1), ("Adadelta", 1), ("ASGD", 1), ("Rprop", 1),
                 ("SparseAdam", 0)]


def _options(lib, options: dict) -> dict:
    return {key: lib.tensor(0.01, dtype=lib.float64) if value == TENSOR_LR else value
            for key, value in options.items()}


def _params(lib, dtype: str, arrays=START) -> list:
    return [lib.tensor(array, dtype=getattr(lib, dtype), requires_grad=True) for array in arrays]


def _set_grads(lib, params, grads, sparse: bool) -> None:
    for param, grad in zip(params, grads, strict=True):
        param.grad = lib.tensor(grad, dtype=param.dtype)
        if sparse and lib is torch:  # torch's SparseAdam takes sparse gradients only
            param.grad = param.grad.to_sparse()


def _run(lib, name, options, dtype="float64", grads=GRADS):
    params = _params(lib, dtype)
    optimizer = getattr(lib.optim, name)(params, **_options(lib, options))
    for step_grads in grads:
        _set_grads(lib, params, step_grads, name == "SparseAdam")
        optimizer.step()
    return params, optimizer


def _numbers(value):
    """A state value as NumPy (tensors), or as it is."""
    if isinstance(value, (autojit.Tensor, torch.Tensor)):
        return value.detach().numpy()
    if isinstance(value, (list, tuple)):
        return [_numbers(item) for item in value]
    return value


def _assert_state_equal(mine: dict, reference: dict, rtol: float) -> None:
    assert sorted(mine) == sorted(reference)
    for key, value in reference.items():
        expected, got = _numbers(value), _numbers(mine[key])
        if getattr(expected, "dtype", None) == np.float32:
            # torch keeps NAdam's mu_product, ASGD's eta and mu in float32 whatever the
            # parameters' dtype; autojit in the step count's dtype (float64 here).
            rtol = max(rtol, 1e-6)
        if isinstance(expected, list):
            assert len(got) == len(expected), key
            for got_item, expected_item in zip(got, expected, strict=True):
                if expected_item is None:
                    assert got_item is None
                else:
                    np.testing.assert_allclose(got_item, expected_item, rtol=rtol, atol=1e-12)
        else:
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-12, err_msg=key)


ALL_CASES = [(name, index) for name, cases in CASES.items() for index in range(len(cases))]


@pytest.mark.parametrize("name, index", ALL_CASES,
                         ids=[f"{name}-{'-'.join(CASES[name][index]) or 'defaults'}"
                              for name, index in ALL_CASES])
def test_five_steps_match_torch_float64(name, index):
    options = CASES[name][index]
    params, optimizer = _run(autojit, name, options)
    reference_params, reference = _run(torch, name, options)
    # torch's foreach ASGD computes its float32 eta with float32 arithmetic (the single-tensor
    # path, which autojit follows, rounds a float64 result once): a few float32 ulps apart.
    rtol = 1e-7 if name == "ASGD" and options.get("foreach") else 1e-8
    for param, expected in zip(params, reference_params, strict=True):
        np.testing.assert_allclose(param.detach().numpy(), expected.detach().numpy(),
                                   rtol=rtol, atol=1e-12)
    # The groups have torch's keys in torch's order, and the state torch's entries.
    assert list(optimizer.param_groups[0]) == list(reference.param_groups[0])
    for param, expected in zip(params, reference_params, strict=True):
        _assert_state_equal(optimizer.state[param], reference.state[expected], rtol=rtol)


@pytest.mark.parametrize("name, index", FLOAT32_CASES)
def test_five_steps_match_torch_float32(name, index):
    options = CASES[name][index]
    params, optimizer = _run(autojit, name, options, "float32")
    reference_params, _ = _run(torch, name, options, "float32")
    for param, expected in zip(params, reference_params, strict=True):
        assert param.dtype is autojit.float32
        np.testing.assert_allclose(param.detach().numpy(), expected.detach().numpy(),
                                   rtol=2e-5, atol=1e-6)
    assert all(value.dtype is autojit.float32 for value in optimizer.state[params[0]].values()
               if isinstance(value, autojit.Tensor) and value.ndim)


# ---- state dicts between torch and autojit ----------------------------------------------------

def _convert(value, lib):
    """A state dict's value in the other library: tensors copied with their dtype."""
    if isinstance(value, (autojit.Tensor, torch.Tensor)):
        array = value.detach().numpy().copy()
        return lib.tensor(array, dtype=getattr(lib, str(value.dtype).split(".")[-1]))
    if isinstance(value, dict):
        return {key: _convert(item, lib) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_convert(item, lib) for item in value)
    return value


ROUND_TRIPS = {"SGD": dict(lr=0.1, momentum=0.9, dampening=0.2),
               "Adam": dict(lr=0.01, amsgrad=True), "AdamW": dict(lr=0.01),
               "RMSprop": dict(centered=True, momentum=0.5), "Adagrad": dict(lr_decay=0.1),
               "NAdam": dict(lr=0.01), "RAdam": dict(lr=0.01), "Adamax": dict(lr=0.01),
               "Adadelta": dict(), "ASGD": dict(lr=0.05, t0=2), "Rprop": dict(lr=0.05),
               "SparseAdam": dict(lr=0.01)}


@pytest.mark.parametrize("direction", ["torch-to-autojit", "autojit-to-torch"])
@pytest.mark.parametrize("name", list(ROUND_TRIPS))
def test_a_state_dict_moves_between_torch_and_autojit(name, direction):
    source_lib, target_lib = (torch, autojit) if direction == "torch-to-autojit" \
        else (autojit, torch)
    options = ROUND_TRIPS[name]
    source_params, source = _run(source_lib, name, options, grads=GRADS[:3])
    saved = source.state_dict()
    target_params = _params(target_lib, "float64",
                            [param.detach().numpy() for param in source_params])
    target = getattr(target_lib.optim, name)(target_params, lr=0.5)
    target.load_state_dict(_convert(saved, target_lib))
    assert target.param_groups[0]["lr"] == options.get("lr", source.defaults["lr"])
    for step_grads in GRADS[3:]:
        for lib, params, optimizer in ((source_lib, source_params, source),
                                       (target_lib, target_params, target)):
            _set_grads(lib, params, step_grads, name == "SparseAdam")
            optimizer.step()
    # torch keeps some scalar state in float32 and casts it to the parameters' dtype on
    # loading (so does autojit): the source and the target round it differently afterwards.
    rtol = 1e-7 if name in ("NAdam", "ASGD") else 1e-8
    for param, expected in zip(target_params, source_params, strict=True):
        np.testing.assert_allclose(param.detach().numpy(), expected.detach().numpy(),
                                   rtol=rtol, atol=1e-12)
    mine = target.state_dict() if target_lib is autojit else source.state_dict()
    theirs = source.state_dict() if target_lib is autojit else target.state_dict()
    assert list(mine["param_groups"][0]) == list(theirs["param_groups"][0])
    assert sorted(mine["state"]) == sorted(theirs["state"])
    for key, state in theirs["state"].items():
        _assert_state_equal(mine["state"][key], state, rtol=rtol)


# ---- LBFGS --------------------------------------------------------------------------------

_A = _rng.standard_normal((4, 3))
_B = _rng.standard_normal(4)


def _lbfgs_problem(lib, options):
    weight = lib.tensor(np.array([1.5, -0.5, 2.0]), dtype=lib.float64, requires_grad=True)
    a, b = lib.tensor(_A, dtype=lib.float64), lib.tensor(_B, dtype=lib.float64)
    optimizer = lib.optim.LBFGS([weight], **options)

    def closure():
        optimizer.zero_grad()
        loss = ((a @ weight - b) ** 2).sum() + (weight ** 4).sum() * 0.1
        loss.backward()
        return loss

    return weight, optimizer, closure


LBFGS_CASES = [dict(), dict(line_search_fn="strong_wolfe"),
               dict(lr=0.5, max_iter=4, history_size=2),
               dict(line_search_fn="strong_wolfe", max_iter=7, max_eval=9, history_size=2,
                    tolerance_change=1e-5),
               dict(tolerance_grad=1.0)]


@pytest.mark.parametrize("options", LBFGS_CASES, ids=lambda o: "-".join(o) or "defaults")
def test_lbfgs_matches_torch(options):
    weight, optimizer, closure = _lbfgs_problem(autojit, options)
    reference_weight, reference, reference_closure = _lbfgs_problem(torch, options)
    for _ in range(3):
        loss = optimizer.step(closure)
        expected = reference.step(reference_closure)
        assert loss.item() == pytest.approx(expected.item(), rel=1e-12)
    np.testing.assert_allclose(weight.detach().numpy(), reference_weight.detach().numpy(),
                               rtol=1e-10)
    _assert_state_equal(optimizer.state[weight], reference.state[reference_weight], rtol=1e-8)


def test_lbfgs_state_dict_from_torch_continues_identically():
    options = dict(line_search_fn="strong_wolfe", max_iter=3, history_size=3)
    reference_weight, reference, reference_closure = _lbfgs_problem(torch, options)
    reference.step(reference_closure)
    weight, optimizer, closure = _lbfgs_problem(autojit, options)
    with autojit.no_grad():
        weight.copy_(autojit.tensor(reference_weight.detach().numpy()))
    optimizer.load_state_dict(_convert(reference.state_dict(), autojit))
    optimizer.step(closure)
    reference.step(reference_closure)
    np.testing.assert_allclose(weight.detach().numpy(), reference_weight.detach().numpy(),
                               rtol=1e-10)


def test_lbfgs_errors_as_torch():
    weight = autojit.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options "
                                         r"\(parameter groups\)"):
        autojit.optim.LBFGS([{"params": [weight]}, {"params": [autojit.ones(1,
                                                                             requires_grad=True)]}])
    optimizer = autojit.optim.LBFGS([weight], line_search_fn="backtracking")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        optimizer.step(lambda: (weight.grad is None and (weight * weight).sum().backward())
                       or (weight * weight).sum())


def test_lbfgs_in_a_compiled_function_runs_eagerly_with_a_warning():
    """LBFGS decides from the loss's values: compiled, the call breaks the graph at the first
    such decision and runs eagerly, with eager's results."""
    results = []
    for compiled in (False, True):
        weight, optimizer, closure = _lbfgs_problem(autojit, dict(max_iter=4))

        def train_step(optimizer=optimizer, closure=closure):
            return optimizer.step(closure).detach()

        function = autojit.compile(train_step) if compiled else train_step
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            losses = [function().item() for _ in range(2)]
        results.append((losses, weight.detach().numpy().copy()))
        if compiled:
            assert any(issubclass(w.category, CompileWarning) and "graph break" in str(w.message)
                       for w in caught)
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])


# ---- options, errors -----------------------------------------------------------------------

@pytest.mark.parametrize("name, kwargs", [
    ("NAdam", dict(momentum_decay=-1)), ("NAdam", dict(betas=(1.0, 0.9))),
    ("RAdam", dict(eps=-1)), ("RAdam", dict(weight_decay=-0.5)),
    ("Adamax", dict(betas=(0.9, 1.5))), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(lr=-1)),
    ("ASGD", dict(weight_decay=-1)), ("Rprop", dict(etas=(1.5, 2.0))),
    ("Rprop", dict(etas=(0.5, 0.9))), ("SparseAdam", dict(lr=0.0)), ("SparseAdam", dict(eps=0.0)),
    ("SGD", dict(fused=True, foreach=True)), ("Adam", dict(fused=True, differentiable=True)),
    ("Adagrad", dict(fused=True, foreach=True)), ("LBFGS", dict(lr=-0.5)),
])
def test_construction_errors_are_torchs(name, kwargs):
    with pytest.raises(Exception) as expected:  # noqa: PT011 - torch's own type, compared below
        getattr(torch.optim, name)([torch.ones(2, requires_grad=True)], **kwargs)
    with pytest.raises(type(expected.value)) as got:
        getattr(autojit.optim, name)([autojit.ones(2, requires_grad=True)], **kwargs)
    assert str(got.value) == str(expected.value)


def test_implementation_options_are_accepted_and_kept():
    weight = autojit.ones(2, requires_grad=True)
    optimizer = autojit.optim.Adam([weight], capturable=True, foreach=False, fused=None)
    group = optimizer.param_groups[0]
    assert (group["capturable"], group["foreach"], group["fused"]) == (True, False, None)
    weight.grad = autojit.ones(2)
    optimizer.step()
    assert weight.tolist() == pytest.approx([0.999, 0.999])


@pytest.mark.parametrize("name, options, steps", [("SGD", dict(lr=0.1, momentum=0.9), 3),
                                                  ("SGD", dict(lr=0.1, nesterov=True,
                                                               momentum=0.5), 2),
                                                  ("Adam", dict(lr=0.1, amsgrad=True), 1)])
def test_differentiable_step_records_history_as_torchs(name, options, steps):
    """With differentiable=True the update is part of the autograd graph: the updated
    parameter differentiates back to the parameter before and to each step's gradient (but
    the first gradient SGD puts in its momentum buffer, which torch detaches). Adam writes its
    moments in place, so in torch as here a second step makes the first one's saved tensors
    stale: one step."""
    results = []
    for lib in (autojit, torch):
        leaf = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        param = leaf.clone()
        param.retain_grad()
        optimizer = getattr(lib.optim, name)([param], differentiable=True, **options)
        grads = [lib.tensor(g[1], dtype=lib.float64, requires_grad=True)
                 for g in GRADS[:steps]]
        for grad in grads:
            param.grad = grad
            optimizer.step()
        (param * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        results.append([leaf.grad] + [grad.grad for grad in grads])
    for got, expected in zip(*results, strict=True):
        assert (got is None) == (expected is None)
        if got is not None:
            # Adam's d(update)/d(grad) is lr*eps/(|g|+eps)**2, a difference of nearly equal
            # terms: an absolute tolerance.
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


# ---- compiled steps of the new optimizers -------------------------------------------------

def _training_run(name, options, compiled, steps=5):
    rng = np.random.default_rng(1)
    weight = autojit.tensor(rng.standard_normal((4, 3)), dtype=autojit.float32,
                            requires_grad=True)
    bias = autojit.zeros(3, requires_grad=True)
    optimizer = getattr(autojit.optim, name)([weight, bias], **options)
    x = autojit.tensor(rng.standard_normal((8, 4)), dtype=autojit.float32)
    y = autojit.tensor(rng.standard_normal((8, 3)), dtype=autojit.float32)

    def train_step(x, y):
        loss = (autojit.relu(x @ weight + bias) - y).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    function = autojit.compile(train_step, fullgraph=True) if compiled else train_step
    losses = [function(x, y).item() for _ in range(steps)]
    state = {key: value.numpy().copy() for key, value in optimizer.state[weight].items()}
    return losses, [weight.detach().numpy().copy(), bias.detach().numpy().copy()], state, \
        function


COMPILED = {"NAdam": dict(lr=0.01, weight_decay=0.1), "RAdam": dict(lr=0.01, betas=(0.5, 0.9)),
            "Adamax": dict(lr=0.01), "Adadelta": dict(weight_decay=0.1),
            "ASGD": dict(lr=0.05, t0=2), "Rprop": dict(lr=0.01),
            "SparseAdam": dict(lr=0.01, maximize=True)}


@pytest.mark.parametrize("name", list(COMPILED))
def test_compiled_step_matches_eager(name):
    eager_losses, eager_params, eager_state, _ = _training_run(name, COMPILED[name], False)
    losses, params, state, function = _training_run(name, COMPILED[name], True)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for got, expected in zip(params, eager_params, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert sorted(state) == sorted(eager_state)
    for key, value in eager_state.items():
        np.testing.assert_allclose(state[key], value, rtol=1e-5, atol=1e-7)
    # The first call creates the state and serves itself; one executable serves the rest.
    assert len(function.executables) == 1 and function.executables[0].calls == 4
