"""autojit.optim.Adafactor and autojit.optim.Muon against torch.optim's: the updates over five
steps for each option (float64 and float32; Muon's bfloat16 Newton-Schulz iterations rounded
where torch's round), the state and groups with torch's keys and dtypes, a state dict moved
from torch that continues identically, torch's construction and step errors, and a compiled
training step against eager."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(3)
# Adafactor factors the last two dims of a matrix or more, keeps a variance of a vector or a
# scalar; Muon takes matrices only (a wide one and a tall one, which it transposes).
SHAPES = {"Adafactor": [(4, 6), (6,), (2, 3, 4), ()], "Muon": [(4, 6), (7, 3)]}
CASES = {
    "Adafactor": [dict(), dict(lr=0.05, weight_decay=0.1), dict(maximize=True),
                  dict(eps=(1e-3, 1e-2), d=2.0, beta2_decay=-0.5), dict(lr="tensor")],
    "Muon": [dict(), dict(lr=0.02, nesterov=False), dict(lr=0.05, momentum=0.0, ns_steps=3),
             dict(adjust_lr_fn="match_rms_adamw", weight_decay=0.0),
             dict(adjust_lr_fn="original", ns_coefficients=(3.0, -3.2, 1.2), eps=1e-4),
             dict(lr="tensor", weight_decay=0.2)],
}
STARTS = {name: [_rng.standard_normal(shape) for shape in shapes]
          for name, shapes in SHAPES.items()}
GRADS = {name: [[_rng.standard_normal(shape) for shape in shapes] for _ in range(5)]
         for name, shapes in SHAPES.items()}
ALL = [(name, index) for name, cases in CASES.items() for index in range(len(cases))]
IDS = [f"{name}-{'-'.join(CASES[name][index]) or 'defaults'}" for name, index in ALL]


def _options(lib, options: dict) -> dict:
    return {key: lib.tensor(0.01) if value == "tensor" else value
            for key, value in options.items()}


def _run(lib, name: str, options: dict, dtype: str, steps: int = 5):
    params = [lib.tensor(array, dtype=getattr(lib, dtype), requires_grad=True)
              for array in STARTS[name]]
    optimizer = getattr(lib.optim, name)(params, **_options(lib, options))
    for grads in GRADS[name][:steps]:
        for param, grad in zip(params, grads, strict=True):
            param.grad = lib.tensor(grad, dtype=param.dtype)
        optimizer.step()
    return params, optimizer


def _state(optimizer, params) -> list:
    return [{key: (str(value.dtype).split(".")[-1], value.detach().numpy())
             if hasattr(value, "detach") else value
             for key, value in optimizer.state[param].items()} for param in params]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, index", ALL, ids=IDS)
def test_five_steps_match_torch(name, index, dtype):
    options = CASES[name][index]
    params, optimizer = _run(autojit, name, options, dtype)
    reference_params, reference = _run(torch, name, options, dtype)
    tolerance = 1e-12 if dtype == "float64" else 2e-6
    for param, expected in zip(params, reference_params, strict=True):
        assert str(param.dtype).split(".")[-1] == dtype
        np.testing.assert_allclose(param.detach().numpy(), expected.detach().numpy(),
                                   rtol=tolerance, atol=tolerance)
    assert list(optimizer.param_groups[0]) == list(reference.param_groups[0])
    for mine, theirs in zip(_state(optimizer, params), _state(reference, reference_params),
                            strict=True):
        assert list(mine) == list(theirs)
        for key, (dtype_name, value) in theirs.items():
            assert mine[key][0] == dtype_name, key
            np.testing.assert_allclose(mine[key][1], value, rtol=tolerance, atol=tolerance,
                                       err_msg=key)


@pytest.mark.parametrize("name", list(CASES))
def test_a_state_dict_from_torch_continues_identically(name):
    options = CASES[name][1]
    _, reference = _run(torch, name, options, "float64", steps=2)
    state = reference.state_dict()
    params, optimizer = _run(autojit, name, options, "float64", steps=0)
    converted = {"param_groups": state["param_groups"], "state": {
        index: {key: autojit.tensor(value.numpy(), dtype=getattr(
            autojit, str(value.dtype).split(".")[-1])) if hasattr(value, "numpy") else value
            for key, value in entry.items()} for index, entry in state["state"].items()}}
    optimizer.load_state_dict(converted)
    reference_params = reference.param_groups[0]["params"]
    with torch.no_grad():
        for param, expected in zip(params, reference_params, strict=True):
            param.data = autojit.tensor(expected.detach().numpy())
    for grads in GRADS[name][2:]:
        for lib_params in (params, reference_params):
            lib = autojit if lib_params is params else torch
            for param, grad in zip(lib_params, grads, strict=True):
                param.grad = lib.tensor(grad)
        optimizer.step()
        reference.step()
    for param, expected in zip(params, reference_params, strict=True):
        np.testing.assert_allclose(param.detach().numpy(), expected.detach().numpy(),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, kwargs", [
    ("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1.0, 1e-3))), ("Adafactor", dict(eps=(None, -1.0))),
    ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-0.1)),
    ("Muon", dict(lr=-1.0)), ("Muon", dict(momentum=-0.5)), ("Muon", dict(weight_decay=-1.0)),
    ("Muon", dict(adjust_lr_fn="other")),
])
def test_construction_errors_are_torchs(name, kwargs):
    messages = []
    for lib in (torch, autojit):
        with pytest.raises(ValueError) as caught:
            getattr(lib.optim, name)([lib.zeros(2, 2, requires_grad=True)], **kwargs)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("case", ["muon-vector", "muon-steps", "muon-complex",
                                  "adafactor-complex"])
def test_step_errors_are_torchs(case):
    seen = []
    for lib in (torch, autojit):
        try:
            if case == "muon-vector":
                lib.optim.Muon([lib.zeros(3, requires_grad=True)])
            else:
                dtype = lib.complex64 if case.endswith("complex") else lib.float32
                param = lib.zeros(2, 2, dtype=dtype, requires_grad=True)
                param.grad = lib.ones(2, 2, dtype=dtype)
                optimizer = (lib.optim.Muon([param], ns_steps=100) if case == "muon-steps" else
                             getattr(lib.optim, "Muon" if "muon" in case else "Adafactor")(
                                 [param]))
                optimizer.step()
            seen.append(None)
        except (ValueError, RuntimeError) as error:
            seen.append((type(error), str(error).replace("torch.Size", "Size")))
    assert seen[1] is not None and seen[0] == (seen[1][0], seen[1][1].replace(
        "autojit.Size", "Size"))


def _training(lib, name, wrap):
    rng = np.random.default_rng(7)
    model = lib.nn.Linear(6, 4, bias=False, dtype=lib.float64)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(rng.standard_normal((4, 6))))
    optimizer = getattr(lib.optim, name)(model.parameters(), lr=0.02)

    def step(x, y):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss.detach()

    step = wrap(step)
    losses = [step(lib.tensor(rng.standard_normal((5, 6))), lib.tensor(rng.standard_normal(
        (5, 4)))).item() for _ in range(4)]
    return losses, model.weight.detach().numpy()


@pytest.mark.parametrize("name", list(CASES))
def test_a_compiled_step_matches_eager_and_torch(name):
    """Muon's step compiles; Adafactor's reads the step count and two norms as numbers each
    step, as torch's does, and runs eagerly (with a CompileWarning) where it cannot."""
    expected = _training(torch, name, lambda fn: fn)
    eager = _training(autojit, name, lambda fn: fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        compiled = _training(autojit, name, autojit.compile)
    for got in (eager, compiled):
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-10)
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-10, atol=1e-12)
