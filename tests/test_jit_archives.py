"""jit.save and jit.load against torch's: a scripted module, function, frozen module and
ScriptModule subclass saved and loaded give the values torch's saved and loaded ones give, with
the same state_dict, training mode and extra files; a loaded scripted module still runs as
scripted (is_scripting() True); what cannot be loaded raises as torch does, and a TorchScript
archive of torch's raises NotImplementedError naming what to do instead.
"""

from __future__ import annotations

import functools
import io
import warnings
from typing import NamedTuple

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _quiet_torch_jit():
    with warnings.catch_warnings():  # torch.jit warns that TorchScript is deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


class Outputs(NamedTuple):
    logits: torch.Tensor  # (autojit's tensors in autojit's module: TorchScript reads the type)
    aux: torch.Tensor


# The same module in each framework: its scripted call returns a NamedTuple (GoogLeNet's way);
# it has a buffer, a plain attribute and an exported method. Module-level classes, since saved
# modules pickle their classes by name.

class AutojitModel(autojit.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = autojit.nn.Linear(3, 4)
        self.second = autojit.nn.Linear(4, 2)
        self.register_buffer("shift", autojit.arange(2.0))
        self.scale: float = 0.5

    def forward(self, x):
        hidden = autojit.relu(self.first(x))
        logits = self.second(hidden) * self.scale + self.shift
        if autojit.jit.is_scripting():
            return Outputs(logits, hidden.sum(dim=1))
        return logits

    @autojit.jit.export
    def hidden(self, x):
        return self.first(x)


class TorchModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(3, 4)
        self.second = torch.nn.Linear(4, 2)
        self.register_buffer("shift", torch.arange(2.0))
        self.scale: float = 0.5

    def forward(self, x):
        hidden = torch.relu(self.first(x))
        logits = self.second(hidden) * self.scale + self.shift
        if torch.jit.is_scripting():
            return Outputs(logits, hidden.sum(dim=1))
        return logits

    @torch.jit.export
    def hidden(self, x):
        return self.first(x)


def _models():
    torch.manual_seed(0)
    theirs = TorchModel()
    mine = AutojitModel()
    mine.load_state_dict({name: autojit.tensor(value.detach().numpy())
                          for name, value in theirs.state_dict().items()})
    return mine, theirs


def _inputs():
    value = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    return autojit.tensor(value), torch.tensor(value)


def _round_trip(framework, module, **save_options):
    buffer = io.BytesIO()
    framework.jit.save(module, buffer, **save_options)
    buffer.seek(0)
    return buffer


def _assert_outputs_close(mine, theirs):
    assert type(mine).__name__ == type(theirs).__name__
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_a_saved_scripted_module_loads_with_torchs_values_state_and_mode(tmp_path):
    mine, theirs = _models()
    x, torch_x = _inputs()
    scripted, torch_scripted = autojit.jit.script(mine), torch.jit.script(theirs)
    torch_scripted.eval()
    scripted.eval()
    path = tmp_path / "model.pt"
    scripted.save(str(path))
    torch_path = tmp_path / "torch_model.pt"
    torch_scripted.save(str(torch_path))
    loaded, torch_loaded = autojit.jit.load(path), torch.jit.load(torch_path)
    assert type(loaded).__name__ == type(torch_loaded).__name__ == "RecursiveScriptModule"
    assert list(loaded.state_dict()) == list(torch_loaded.state_dict())
    assert loaded.training == torch_loaded.training is False
    assert loaded.scale == torch_loaded.scale
    _assert_outputs_close(loaded(x), torch_loaded(torch_x))  # the scripting branch's tuple
    np.testing.assert_allclose(loaded.hidden(x).detach().numpy(),
                               torch_loaded.hidden(torch_x).detach().numpy(), rtol=1e-6)
    # A copy: training the loaded module leaves the saved one alone.
    with autojit.no_grad():
        loaded.first.weight.add_(1.0)
    assert not autojit.equal(loaded.first.weight, mine.first.weight)


def test_a_loaded_module_trains():
    mine, _ = _models()
    loaded = autojit.jit.load(_round_trip(autojit, autojit.jit.script(mine)))
    assert loaded.training
    x, _ = _inputs()
    optimizer = autojit.optim.SGD(loaded.parameters(), lr=0.1)
    before = loaded.second.weight.detach().clone()
    loaded(x).logits.square().sum().backward()
    optimizer.step()
    assert not autojit.equal(before, loaded.second.weight)


def test_extra_files_are_given_back_as_torch_gives_them():
    extra = {"config.json": '{"layers": 2}', "raw.bin": b"\x00\xff\x01"}
    found = []
    for framework, model in ((autojit, _models()[0]), (torch, _models()[1])):
        buffer = _round_trip(framework, framework.jit.script(model), _extra_files=extra)
        wanted = {"config.json": "", "raw.bin": "", "absent.txt": b""}
        framework.jit.load(buffer, _extra_files=wanted)
        found.append(wanted)
    assert found[0] == found[1] == {"config.json": b'{"layers": 2}', "raw.bin": b"\x00\xff\x01",
                                    "absent.txt": b""}


def doubled_sine(x):
    return (x * 2).sin()


def test_a_scripted_function_and_a_frozen_module_round_trip():
    x, torch_x = _inputs()
    function = autojit.jit.load(_round_trip(autojit, autojit.jit.script(doubled_sine)))
    np.testing.assert_allclose(function(x).numpy(), torch.sin(torch_x * 2).numpy(), rtol=1e-6)
    mine, theirs = _models()
    frozen = autojit.jit.freeze(autojit.jit.script(mine).eval())
    torch_frozen = torch.jit.freeze(torch.jit.script(theirs).eval())
    loaded = autojit.jit.load(_round_trip(autojit, frozen))
    torch_loaded = torch.jit.load(_round_trip(torch, torch_frozen))
    assert loaded._frozen and not loaded.training
    _assert_outputs_close(loaded(x), torch_loaded(torch_x))
    assert not loaded(x).logits.requires_grad


def test_a_traced_module_round_trips_and_stays_traced():
    mine, theirs = _models()
    x, torch_x = _inputs()
    traced = autojit.jit.trace(mine, x)
    torch_traced = torch.jit.trace(theirs, torch_x)
    loaded = autojit.jit.load(_round_trip(autojit, traced))
    torch_loaded = torch.jit.load(_round_trip(torch, torch_traced))
    np.testing.assert_allclose(loaded(x).detach().numpy(), torch_loaded(torch_x).detach().numpy(),
                               rtol=1e-6)


class Counter(autojit.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.weight = autojit.nn.Parameter(autojit.ones(2))

    def forward(self, x):
        return x * self.weight if autojit.jit.is_scripting() else x


def test_a_script_module_subclass_round_trips_compiled_and_scripted():
    module = Counter()
    with autojit.no_grad():
        module.weight.fill_(3.0)
    loaded = autojit.jit.load(_round_trip(autojit, module))
    assert type(loaded) is Counter
    assert loaded(autojit.ones(2)).tolist() == [3.0, 3.0]
    assert loaded._compiled_call_impl is not module._compiled_call_impl


def _error(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the error is the result
        return error
    raise AssertionError("did not raise")


def test_what_cannot_be_saved_or_loaded_raises_as_in_torch(tmp_path):
    assert type(_error(lambda: autojit.jit.save(autojit.nn.Linear(2, 2), io.BytesIO()))) is \
        type(_error(lambda: torch.jit.save(torch.nn.Linear(2, 2), io.BytesIO()))) is \
        AttributeError
    missing = str(tmp_path / "missing.pt")
    mine, theirs = (_error(functools.partial(framework.jit.load, missing))
                    for framework in (autojit, torch))
    assert type(mine) is type(theirs) is ValueError and str(mine) == str(theirs)
    assert isinstance(_error(lambda: autojit.jit.load(io.BytesIO(b"not a zip"))), RuntimeError)
    state = io.BytesIO()
    autojit.save({"w": autojit.ones(2)}, state)
    state.seek(0)
    assert "not written by jit.save" in str(_error(lambda: autojit.jit.load(state)))


def test_a_torchscript_archive_of_torch_raises_not_implemented():
    buffer = _round_trip(torch, torch.jit.script(_models()[1]))
    error = _error(lambda: autojit.jit.load(buffer))
    assert isinstance(error, NotImplementedError)
    assert "TorchScript" in str(error) and "state_dict" in str(error)
