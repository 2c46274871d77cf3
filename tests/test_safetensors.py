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


# ---- safetensors.torch itself through the drop-in: the storages its loader maps ---------------

def test_safetensors_torch_loads_through_the_drop_in(tmp_path):
    """`safe_open(framework="pt")` (safetensors.torch.load_file, transformers' from_pretrained)
    maps the file as `torch.UntypedStorage.from_file`, slices the storage and reads each
    tensor as `torch.asarray(slice, dtype=uint8).view(dtype=...)`: under the drop-in those are
    autojit's, and the tensors torch saved load with their values, bfloat16 among them."""
    import json
    import os
    import subprocess
    import sys

    path = tmp_path / "torch.safetensors"
    tensors = {"w": torch.randn(3, 4), "ids": torch.arange(5), "half": torch.randn(2).half(),
               "brain": torch.randn(2, 2).to(torch.bfloat16), "empty": torch.zeros(0, 3),
               "flag": torch.tensor([True, False])}
    safetensors_torch.save_file(tensors, path)
    program = f"""
import json, warnings
warnings.simplefilter("ignore")
import torch
from safetensors.torch import load_file
from safetensors import safe_open
found = load_file({str(path)!r})
with safe_open({str(path)!r}, framework="pt") as f:
    part = f.get_slice("w")[1:, :2].tolist()
print(json.dumps({{"tensors": {{k: [str(v.dtype), list(v.shape), v.float().tolist()]
                                for k, v in found.items()}}, "part": part}}))
"""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "autojit.drop_in", "-c", program],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for name, value in tensors.items():
        dtype, shape, values = found["tensors"][name]
        assert dtype == str(value.dtype) and shape == list(value.shape)
        assert values == value.float().tolist()
    assert found["part"] == tensors["w"][1:, :2].tolist()


def test_untyped_storage_from_file_slices_and_asarray(tmp_path):
    path = tmp_path / "bytes"
    path.write_bytes(bytes(range(16)))
    kinds = (torch.UntypedStorage, autojit.UntypedStorage)
    results = []
    for module, kind in zip((torch, autojit), kinds):
        storage = kind.from_file(str(path), shared=False, nbytes=16)
        part = storage[4:8]
        viewed = module.asarray(part, dtype=module.uint8)
        viewed[0] = 100  # private: the file keeps its byte
        results.append((type(part).__name__, part.nbytes(), list(part), storage[5],
                        module.is_storage(storage), storage.untyped() is storage,
                        module.asarray(storage[0:8], dtype=module.int32).tolist(),
                        list(storage[4:6]), list(kind(3)) if kind is autojit.UntypedStorage
                        else [0, 0, 0]))
    assert results[0] == results[1]
    assert path.read_bytes()[4] == 4
    x = autojit.arange(4, dtype=autojit.int16)
    autojit.asarray(x.untyped_storage()[2:4], dtype=autojit.uint8)[0] = 9  # shared with x
    assert x.tolist() == [0, 9, 2, 3]
