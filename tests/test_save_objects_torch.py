"""autojit.save and autojit.load of objects beyond data, against torch: a whole nn.Module, NumPy
arrays, objects of the program's classes and dicts mixing them with tensors, in torch.save's
format both ways, read with weights_only=False; and the weights-only default refusing them with
torch's message.
"""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
from torch_compare import torch

import autojit
from autojit import nn


class Record:
    """An object of the program's own class, saved inside a checkpoint."""

    def __init__(self, name, weights):
        self.name, self.weights = name, weights


def _saved(framework, obj, **options) -> io.BytesIO:
    buffer = io.BytesIO()
    framework.save(obj, buffer, **options)
    buffer.seek(0)
    return buffer


def test_a_whole_module_round_trips():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    loaded = autojit.load(_saved(autojit, model), weights_only=False)
    assert type(loaded) is nn.Sequential and type(loaded[0]) is nn.Linear
    x = autojit.randn(5, 3)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in loaded.parameters())
    loaded(x).sum().backward()
    assert loaded[0].weight.grad.shape == (4, 3)


def test_shared_parameters_and_views_stay_shared():
    layer = nn.Linear(2, 2)
    model = nn.ModuleDict({"first": layer, "second": layer})
    base = autojit.arange(6.0)
    loaded = autojit.load(_saved(autojit, {"model": model, "base": base, "view": base[2:4],
                                           "record": Record("r", base)}), weights_only=False)
    assert loaded["model"]["first"] is loaded["model"]["second"]
    assert loaded["record"].weights is loaded["base"]
    loaded["base"][2] = 100.0
    assert loaded["view"].tolist() == [100.0, 3.0]


def test_objects_saved_by_autojit_load_in_torch():
    values = np.arange(6.0).reshape(2, 3)
    obj = {"tensor": autojit.tensor(values), "parameter": nn.Parameter(autojit.ones(2)),
           "array": values, "record": Record("run", autojit.zeros(3, dtype=autojit.int64)),
           "dtype": autojit.float16, "device": autojit.device("cpu"),
           "size": autojit.ones(2, 3).shape, "step": 7}
    theirs = torch.load(_saved(autojit, obj), weights_only=False)
    assert isinstance(theirs["tensor"], torch.Tensor)
    assert torch.equal(theirs["tensor"], torch.tensor(values))
    assert isinstance(theirs["parameter"], torch.nn.Parameter)
    np.testing.assert_array_equal(theirs["array"], values)
    assert isinstance(theirs["record"], Record) and theirs["record"].name == "run"
    assert theirs["record"].weights.dtype is torch.int64
    assert theirs["dtype"] is torch.float16 and theirs["device"] == torch.device("cpu")
    assert theirs["size"] == torch.Size([2, 3]) and theirs["step"] == 7
    assert np.array_equal(torch.load(_saved(autojit, values), weights_only=False), values)


def test_objects_saved_by_torch_load_in_autojit():
    values = np.arange(4, dtype=np.float32)
    obj = {"tensor": torch.tensor(values), "parameter": torch.nn.Parameter(torch.ones(2)),
           "array": values, "record": Record("run", torch.zeros(2)), "dtype": torch.int8,
           "size": torch.Size([1, 2]), "view": torch.arange(5)[1:3]}
    ours = autojit.load(_saved(torch, obj), weights_only=False)
    assert isinstance(ours["tensor"], autojit.Tensor)
    np.testing.assert_array_equal(ours["tensor"].numpy(), values)
    assert isinstance(ours["parameter"], nn.Parameter) and ours["parameter"].requires_grad
    np.testing.assert_array_equal(ours["array"], values)
    assert isinstance(ours["record"].weights, autojit.Tensor)
    assert ours["dtype"] is autojit.int8 and ours["size"] == (1, 2)
    assert ours["view"].tolist() == [1, 2]


def test_weights_only_refuses_objects_as_torch():
    saved = {framework: _saved(framework, {"array": np.arange(3)})
             for framework in (torch, autojit)}
    for loader in (torch, autojit):
        for buffer in saved.values():
            buffer.seek(0)
            with pytest.raises(pickle.UnpicklingError, match="Weights only load failed") as info:
                loader.load(buffer)
            assert "_reconstruct" in str(info.value)
            buffer.seek(0)
            assert list(loader.load(buffer, weights_only=False)["array"]) == [0, 1, 2]
    # Data stays readable by the weights-only reader of each.
    data = {"w": autojit.ones(2), "names": ["a", "b"]}
    assert torch.load(_saved(autojit, data))["names"] == ["a", "b"]


def test_pickle_module_chooses_the_unpickler_as_torch():
    for framework in (torch, autojit):
        buffer = _saved(framework, {"array": np.arange(2)})
        assert list(framework.load(buffer, pickle_module=pickle)["array"]) == [0, 1]
        buffer.seek(0)
        with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                               "pickle_module is specified"):
            framework.load(buffer, pickle_module=pickle, weights_only=True)


def test_what_cannot_be_pickled_raises_as_torch():
    for framework in (torch, autojit):
        with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
            framework.save({"f": lambda: 1}, io.BytesIO())


def test_a_pickle_naming_a_module_before_its_move_loads():
    """Classes moved into subpackages (issue 73: nn/activation_extra.py is
    nn/activation/extra.py) still load from a pickle that names their old module."""
    from autojit.interop.object_pickle import FullUnpickler

    data = pickle.dumps(nn.Hardswish(), protocol=2)
    assert b"autojit.nn.activation.extra\n" in data
    old = data.replace(b"autojit.nn.activation.extra\n", b"autojit.nn.activation_extra\n")
    loaded = FullUnpickler(io.BytesIO(old), {}, None).load()
    assert type(loaded) is nn.Hardswish
