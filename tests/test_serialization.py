"""autojit.save / autojit.load: round trips of tensors, state dicts and nested containers, in
torch's format (the default) and the .npz format autojit wrote before (test_serialization_torch.py
has the exchange with torch itself and the refusal of pickles that would run code)."""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import autojit
from autojit import nn


def _round_trip(obj, format="torch"):
    buffer = io.BytesIO()
    autojit.save(obj, buffer, format=format)
    buffer.seek(0)
    return autojit.load(buffer)


@pytest.mark.parametrize("format", ["torch", "npz"])
@pytest.mark.parametrize("dtype", [autojit.float16, autojit.float32, autojit.float64,
                                   autojit.int32, autojit.int64, autojit.bool])
def test_tensor_round_trip_keeps_dtype_and_values(dtype, format):
    data = np.arange(-3, 3).reshape(2, 3)
    tensor = autojit.tensor(data).to(dtype)
    loaded = _round_trip(tensor, format)
    assert isinstance(loaded, autojit.Tensor) and loaded.dtype is dtype
    assert loaded.shape == (2, 3) and not loaded.requires_grad
    np.testing.assert_array_equal(loaded.numpy(), tensor.numpy())


@pytest.mark.parametrize("format", ["torch", "npz"])
def test_requires_grad_parameter_and_zero_dim(format):
    weight = nn.Parameter(autojit.randn(3))
    frozen = nn.Parameter(autojit.randn(2), requires_grad=False)
    leaf = autojit.tensor(2.5, requires_grad=True)
    loaded = _round_trip([weight, frozen, leaf], format)
    assert isinstance(loaded[0], nn.Parameter) and loaded[0].requires_grad
    assert isinstance(loaded[1], nn.Parameter) and not loaded[1].requires_grad
    assert type(loaded[2]) is autojit.Tensor and loaded[2].requires_grad
    assert loaded[2].shape == () and loaded[2].item() == 2.5
    assert loaded[0].is_leaf and loaded[0].grad is None


@pytest.mark.parametrize("format", ["torch", "npz"])
def test_nested_structure_with_scalars_and_strings(format):
    obj = {"model": OrderedDict(w=autojit.ones(2)), "step": 7, "lr": 0.1, "name": "run-1",
           "flags": (True, None), "history": [1.5, float("inf"), float("nan")], 3: "int key",
           "numpy": np.int64(4)}
    loaded = _round_trip(obj, format)
    assert type(loaded) is dict and type(loaded["model"]) is OrderedDict
    assert list(loaded) == ["model", "step", "lr", "name", "flags", "history", 3, "numpy"]
    assert loaded["step"] == 7 and loaded["lr"] == 0.1 and loaded["name"] == "run-1"
    assert loaded["flags"] == (True, None) and loaded[3] == "int key"
    assert loaded["history"][:2] == [1.5, math.inf] and math.isnan(loaded["history"][2])
    assert loaded["numpy"] == 4 and type(loaded["numpy"]) is int


@pytest.mark.parametrize("format", ["torch", "npz"])
def test_shared_tensor_is_stored_once_and_stays_shared(format):
    shared = autojit.ones(4)
    loaded = _round_trip({"a": shared, "b": shared, "c": autojit.ones(4)}, format)
    assert loaded["a"] is loaded["b"] and loaded["a"] is not loaded["c"]


def test_state_dict_round_trip_through_a_path(tmp_path):
    autojit.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    path = tmp_path / "model.ckpt"
    autojit.save(model.state_dict(), path)
    assert path.exists()  # the name is kept as given (no ".npz" appended)
    autojit.manual_seed(1)
    restored = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    state = autojit.load(str(path))
    assert list(state) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    restored.load_state_dict(state)
    x = autojit.randn(5, 3)
    np.testing.assert_array_equal(restored(x).detach().numpy(), model(x).detach().numpy())


def test_file_is_an_npz_with_a_json_manifest(tmp_path):
    path = tmp_path / "t.npz"
    autojit.save({"w": autojit.zeros(2, dtype=autojit.float64)}, path, format="npz")
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["__manifest__.npy", "tensor0.npy"]
    with np.load(path, allow_pickle=False) as archive:
        manifest = json.loads(bytes(archive["__manifest__"]).decode())
        assert archive["tensor0"].dtype == np.float64
    assert manifest == {"format": "autojit", "version": 1, "root": {
        "type": "dict", "ordered": False, "items": [[
            {"type": "str", "value": "w"},
            {"type": "tensor", "array": "tensor0", "dtype": "float64", "requires_grad": False,
             "parameter": False}]]}}


def test_unsupported_objects_get_a_clear_error():
    # The npz format holds data only; torch's pickles any object (tests/test_save_objects.py).
    with pytest.raises(TypeError, match="dict key"):
        autojit.save({(1, 2): autojit.ones(1)}, io.BytesIO(), format="npz")
    with pytest.raises(TypeError, match="cannot save an object of type set"):
        autojit.save([{1, 2}], io.BytesIO(), format="npz")
    with pytest.raises(TypeError, match=r"cannot save an object of type Linear \(at the "
                                        r"root\[0\]\[1\]\)"):
        autojit.save([(1, nn.Linear(2, 2))], io.BytesIO(), format="npz")
    with pytest.raises(ValueError, match="format must be 'torch' or 'npz'"):
        autojit.save(1, io.BytesIO(), format="zip")


def test_loading_a_foreign_file_fails_clearly(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, x=np.zeros(2))
    with pytest.raises(RuntimeError, match="has no __manifest__ entry"):
        autojit.load(path)
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"not an archive")
    with pytest.raises(RuntimeError, match="not a file written by autojit.save or torch.save"):
        autojit.load(garbage)


# ---- the public functions, pickled by name ---------------------------------------------------

def _public_functions():
    import types

    import autojit.fft
    import autojit.linalg

    import autojit.nn.functional
    import autojit.special

    for namespace in (autojit, autojit.nn.functional, autojit.linalg, autojit.special,
                      autojit.fft):
        for name in dir(namespace):
            value = getattr(namespace, name, None) if not name.startswith("_") else None
            if isinstance(value, types.FunctionType):
                yield f"{namespace.__name__}.{name}", value
    for name, value in vars(autojit.Tensor).items():  # its methods, as torch.Tensor.add
        if isinstance(value, types.FunctionType) and not name.startswith("_"):
            yield f"Tensor.{name}", value


def test_every_public_function_pickles_by_name():
    """As torch's builtins and Tensor's method descriptors do: `pickle.dumps(torch.sigmoid)`
    stores a name, which loads as the same function (functions a factory made, or keyword
    forms, were not found by theirs)."""
    import pickle

    failed = []
    functions = list(_public_functions())
    for public, function in functions:
        try:
            if pickle.loads(pickle.dumps(function)) is not function:
                failed.append(public)
        except pickle.PicklingError:
            failed.append(public)
    assert len(functions) > 1200 and not failed


def test_a_whole_model_holding_functions_saves_and_loads():
    model = nn.Sequential(nn.Linear(2, 2))
    model.act, model.gate = autojit.tanh, autojit.nn.functional.gelu
    buffer = io.BytesIO()
    autojit.save(model, buffer)
    buffer.seek(0)
    loaded = autojit.load(buffer, weights_only=False)
    assert loaded.act is autojit.tanh and loaded.gate is autojit.nn.functional.gelu
