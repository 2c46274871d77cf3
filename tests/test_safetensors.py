"""autojit.utils.safetensors against safetensors.torch: files written by one read by the other,
with dtypes, shapes and metadata, and the same refusals of shared and non-contiguous tensors.
Skipped when the optional safetensors package is not installed."""

from __future__ import annotations

import numpy as np
import pytest

import autojit

pytest.importorskip("safetensors")
torch = pytest.importorskip("torch")
from safetensors import safe_open  # noqa: E402
from safetensors import torch as safetensors_torch  # noqa: E402

from autojit.utils import safetensors  # noqa: E402

DTYPES = ["float32", "float64", "float16", "int32", "int64", "bool"]


def test_files_both_ways(tmp_path):
    values = {name: np.arange(-3, 3).reshape(2, 3).astype(name) for name in DTYPES}
    ours = tmp_path / "ours.safetensors"
    safetensors.save_file({name: autojit.tensor(array) for name, array in values.items()}, ours,
                          metadata={"epoch": "3"})
    theirs = safetensors_torch.load_file(ours)
    for name, array in values.items():
        assert theirs[name].dtype is getattr(torch, name)
        np.testing.assert_array_equal(theirs[name].numpy(), array)
    with safe_open(ours, framework="numpy") as opened:
        assert opened.metadata() == {"epoch": "3"}

    path = tmp_path / "theirs.safetensors"
    safetensors_torch.save_file({name: torch.from_numpy(array) for name, array in
                                 values.items()}, path)
    loaded = safetensors.load_file(path)
    for name, array in values.items():
        assert loaded[name].dtype is getattr(autojit, name)
        np.testing.assert_array_equal(loaded[name].numpy(), array)
    loaded["float32"][0, 0] = 5.0  # the loaded tensors are writable and independent
    assert loaded["float32"][0, 0].item() == 5.0


def test_bytes_both_ways():
    data = safetensors.save({"w": autojit.ones(2, 2), "step": autojit.tensor([7])})
    theirs = safetensors_torch.load(data)
    assert theirs["w"].tolist() == [[1.0, 1.0], [1.0, 1.0]] and theirs["step"].tolist() == [7]
    back = safetensors.load(safetensors_torch.save({"x": torch.arange(4.0)}))
    assert back["x"].tolist() == [0.0, 1.0, 2.0, 3.0] and back["x"].dtype is autojit.float32
    assert safetensors.load(data)["step"].dtype is autojit.int64


def test_the_same_refusals_as_safetensors_torch():
    base = autojit.arange(6.0).reshape(2, 3)
    torch_base = torch.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        safetensors.save({"a": base, "b": base[0]})
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        safetensors_torch.save({"a": torch_base, "b": torch_base[0]})
    for module, tensor in ((safetensors, base.t()), (safetensors_torch, torch_base.t())):
        with pytest.raises(ValueError, match="You are trying to save a non contiguous tensor: "
                                             "`t`"):
            module.save({"t": tensor})
    for module in (safetensors, safetensors_torch):
        with pytest.raises(ValueError, match="Expected a dict of"):
            module.save([1])
        with pytest.raises(ValueError, match="Key `x` is invalid"):
            module.save({"x": 1})
