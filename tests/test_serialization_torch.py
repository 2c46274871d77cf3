"""Checkpoints between autojit and torch: files of torch.save read by autojit.load and files of
autojit.save read by torch.load(weights_only=True), with dtypes, shapes, views sharing storage,
Parameters, requires_grad and state dicts of models and optimizers; torch's older format; and
pickles that would run code, which autojit.load refuses without running them."""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import autojit
from autojit import nn

torch = pytest.importorskip("torch")


def _torch_saved(obj, **kwargs) -> io.BytesIO:
    buffer = io.BytesIO()
    torch.save(obj, buffer, **kwargs)
    buffer.seek(0)
    return buffer


def _autojit_saved(obj, **kwargs) -> io.BytesIO:
    buffer = io.BytesIO()
    autojit.save(obj, buffer, **kwargs)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "int32", "int64", "int16",
                                  "int8", "uint8", "bool"])
def test_dtypes_both_ways(name):
    values = np.array([[-2, 0, 3], [1, 5, -7]]).astype(name)
    ours = autojit.load(_torch_saved(torch.from_numpy(values)))
    assert ours.dtype is getattr(autojit, name) and ours.shape == (2, 3)
    np.testing.assert_array_equal(ours.numpy(), values)
    theirs = torch.load(_autojit_saved(autojit.tensor(values)), weights_only=True)
    assert theirs.dtype is getattr(torch, name)
    np.testing.assert_array_equal(theirs.numpy(), values)


def test_unsigned_bfloat16_and_complex_dtypes_cross_both_ways():
    saved = {"u16": torch.tensor([0, 65535], dtype=torch.uint16),
             "u32": torch.tensor([7, 2 ** 32 - 1], dtype=torch.uint32),
             "u64": torch.tensor([[1, 2 ** 64 - 1]], dtype=torch.uint64).t(),
             "bf16": torch.tensor([1.5, -2.25], dtype=torch.bfloat16)}
    loaded = autojit.load(_torch_saved(saved))  # uint16 to uint64: torch's untyped storages
    assert loaded["u16"].dtype is autojit.uint16 and loaded["u16"].tolist() == [0, 65535]
    assert loaded["u32"].dtype is autojit.uint32 and loaded["u32"].tolist() == [7, 2 ** 32 - 1]
    assert loaded["u64"].dtype is autojit.uint64 and loaded["u64"].tolist() == [[1],
                                                                              [2 ** 64 - 1]]
    assert loaded["bf16"].dtype is autojit.bfloat16 and loaded["bf16"].tolist() == [1.5, -2.25]
    written = io.BytesIO()
    autojit.save({name: loaded[name] for name in ("u16", "u32", "u64")}, written)
    written.seek(0)
    read = torch.load(written)  # weights_only: autojit writes what torch's loader allows
    for name in ("u16", "u32", "u64"):
        assert read[name].dtype is saved[name].dtype and torch.equal(read[name], saved[name])
    complex_tensors = autojit.load(_torch_saved(
        {"c64": torch.tensor([1 + 2j, -3j]), "c128": torch.tensor([0.5 - 1j],
                                                                  dtype=torch.complex128)}))
    assert complex_tensors["c64"].dtype is autojit.complex64
    assert complex_tensors["c64"].tolist() == [1 + 2j, -3j]
    assert complex_tensors["c128"].dtype is autojit.complex128
    written = io.BytesIO()
    autojit.save({"z": autojit.tensor([[1 + 2j, 3 - 1j]]), "w": autojit.tensor([0.5j],
                                                                             dtype=autojit.cdouble)},
                 written)
    written.seek(0)
    read = torch.load(written)
    assert read["z"].dtype is torch.complex64 and read["z"].tolist() == [[1 + 2j, 3 - 1j]]
    assert read["w"].dtype is torch.complex128


def test_views_keep_sharing_one_storage_both_ways():
    base = torch.arange(12.0).reshape(3, 4)
    loaded = autojit.load(_torch_saved({"base": base, "column": base[:, 1],
                                        "transposed": base.t(), "tail": base.reshape(-1)[5:]}))
    loaded["base"][0, 1] = 100.0  # a write through one is seen by the others
    assert loaded["column"].tolist() == [100.0, 5.0, 9.0]
    assert loaded["transposed"][1, 0].item() == 100.0 and loaded["tail"][0].item() == 5.0

    ours = autojit.arange(12.0).reshape(3, 4)
    saved = _autojit_saved({"base": ours, "column": ours[:, 1], "transposed": ours.t()})
    with zipfile.ZipFile(saved) as archive:
        assert [name for name in archive.namelist() if "/data/" in name] == ["archive/data/0"]
    saved.seek(0)
    theirs = torch.load(saved, weights_only=True)
    assert theirs["column"].stride() == (4,) and theirs["transposed"].stride() == (1, 4)
    theirs["base"][0, 1] = 100.0
    assert theirs["column"].tolist() == [100.0, 5.0, 9.0]
    assert theirs["transposed"][1, 0].item() == 100.0


def test_parameters_requires_grad_and_containers_both_ways():
    metadata_holder = OrderedDict(w=torch.ones(2))
    metadata_holder._metadata = {"": {"version": 1}}
    theirs = {"param": torch.nn.Parameter(torch.ones(2)),
              "frozen": torch.nn.Parameter(torch.zeros(1), requires_grad=False),
              "leaf": torch.ones(3, requires_grad=True), "state": metadata_holder,
              "misc": [1, 2.5, "s", b"raw", None, True, (3, 4), {5, 6}, 2 ** 70, 1 + 2j],
              "size": torch.Size([2, 3]), "dtype": torch.float16, "scalar": torch.tensor(4.0)}
    loaded = autojit.load(_torch_saved(theirs))
    assert isinstance(loaded["param"], nn.Parameter) and loaded["param"].requires_grad
    assert isinstance(loaded["frozen"], nn.Parameter) and not loaded["frozen"].requires_grad
    assert type(loaded["leaf"]) is autojit.Tensor and loaded["leaf"].requires_grad
    assert type(loaded["state"]) is OrderedDict and loaded["state"]._metadata == {
        "": {"version": 1}}
    assert loaded["misc"] == [1, 2.5, "s", b"raw", None, True, (3, 4), {5, 6}, 2 ** 70, 1 + 2j]
    assert loaded["size"] == (2, 3) and loaded["dtype"] is autojit.float16
    assert loaded["scalar"].shape == () and loaded["scalar"].item() == 4.0

    back = torch.load(_autojit_saved(loaded), weights_only=True)
    assert isinstance(back["param"], torch.nn.Parameter) and back["param"].requires_grad
    assert isinstance(back["frozen"], torch.nn.Parameter) and not back["frozen"].requires_grad
    assert type(back["leaf"]) is torch.Tensor and back["leaf"].requires_grad
    assert back["state"]._metadata == {"": {"version": 1}} and back["misc"] == theirs["misc"]
    assert back["size"] == torch.Size([2, 3]) and back["dtype"] is torch.float16


def _torch_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


def _autojit_model():
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def _train(model, optimizer, module, steps):
    inputs = module.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))
    for _ in range(steps):
        optimizer.zero_grad()
        loss = (model(inputs) ** 2).mean()
        loss.backward()
        optimizer.step()


def test_training_resumes_across_the_two():
    """torch trains, saves; autojit loads and trains on; the same as torch training on."""
    reference = _torch_model()
    optimizer = torch.optim.Adam(reference.parameters(), lr=0.05)
    _train(reference, optimizer, torch, 2)
    checkpoint = _torch_saved({"model": reference.state_dict(),
                               "optimizer": optimizer.state_dict(), "epoch": 2})
    _train(reference, optimizer, torch, 2)

    state = autojit.load(checkpoint)
    model = _autojit_model()
    model.load_state_dict(state["model"])
    ours = autojit.optim.Adam(model.parameters(), lr=0.01)
    ours.load_state_dict(state["optimizer"])
    assert ours.param_groups[0]["lr"] == 0.05 and state["epoch"] == 2
    _train(model, ours, autojit, 2)
    for mine, theirs in zip(model.state_dict().values(), reference.state_dict().values(),
                            strict=True):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)

    # And back: autojit's checkpoint resumes in torch.
    resumed = _torch_model()
    resumed_optimizer = torch.optim.Adam(resumed.parameters(), lr=0.01)
    state = torch.load(_autojit_saved({"model": model.state_dict(),
                                       "optimizer": ours.state_dict()}), weights_only=True)
    resumed.load_state_dict(state["model"])
    resumed_optimizer.load_state_dict(state["optimizer"])
    _train(resumed, resumed_optimizer, torch, 1)
    _train(model, ours, autojit, 1)
    for mine, theirs in zip(model.state_dict().values(), resumed.state_dict().values(),
                            strict=True):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_torchs_older_format_both_ways(tmp_path):
    base = torch.arange(6.0).reshape(2, 3)
    saved = {"base": base, "row": base[1], "param": torch.nn.Parameter(torch.ones(2)), "n": 1}
    loaded = autojit.load(_torch_saved(saved, _use_new_zipfile_serialization=False))
    assert loaded["row"].tolist() == [3.0, 4.0, 5.0] and loaded["n"] == 1
    assert isinstance(loaded["param"], nn.Parameter)
    loaded["base"][1, 0] = -1.0
    assert loaded["row"][0].item() == -1.0
    path = tmp_path / "old.pt"
    autojit.save(loaded, path, _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(path)
    theirs = torch.load(path, weights_only=True)
    assert theirs["row"].tolist() == [-1.0, 4.0, 5.0]
    assert isinstance(theirs["param"], torch.nn.Parameter)
    assert autojit.load(path)["row"].tolist() == [-1.0, 4.0, 5.0]


def test_map_location(monkeypatch):
    from autojit.interop import torch_format

    for where in ("cpu", autojit.device("cpu"), {"cpu": "cpu"}, lambda storage, location:
                  storage):
        assert autojit.load(_torch_saved(torch.ones(2)), map_location=where).tolist() == [1, 1]
    # A file saved on a GPU, read where there is none: torch's error.
    original = torch_format._TensorWriter.new_storage
    monkeypatch.setattr(torch_format._TensorWriter, "new_storage",
                        lambda self, array, location, root=None:
                        original(self, array, "cuda:0", root))
    saved = _autojit_saved(autojit.ones(2))
    if not autojit.cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA "
                                               "device but autojit.cuda.is_available"):
            autojit.load(saved)
        saved.seek(0)
    assert autojit.load(saved, map_location="cpu").device == autojit.device("cpu")


class _RunsCode:
    def __reduce__(self):
        return (os.system, ("touch autojit-pwned",))


def _with_pickle(payload: bytes) -> io.BytesIO:
    """torch's zip archive of a tensor, with its data.pkl replaced by payload."""
    source = _torch_saved(torch.ones(2))
    out = io.BytesIO()
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(out, "w") as archive:
        for name in original.namelist():
            data = payload if name.endswith("data.pkl") else original.read(name)
            archive.writestr(name, data)
    out.seek(0)
    return out


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_a_pickle_that_would_run_code_is_refused(tmp_path, monkeypatch, protocol):
    monkeypatch.chdir(tmp_path)
    payload = pickle.dumps({"w": _RunsCode()}, protocol=protocol)
    with pytest.raises(pickle.UnpicklingError, match=r"refers to the global posix\.system, "
                                                     r"which is not a tensor"):
        autojit.load(_with_pickle(payload))
    with pytest.raises(pickle.UnpicklingError, match="posix.system"):
        autojit.load(io.BytesIO(payload))  # a bare pickle: torch's older format's path
    assert not (tmp_path / "autojit-pwned").exists()
    # Built-ins that would reach code are refused by name too.
    sneaky = pickle.dumps(getattr, protocol=protocol)
    with pytest.raises(pickle.UnpicklingError, match="builtins.getattr"):
        autojit.load(_with_pickle(sneaky))


def test_allowed_callables_only_and_tensor_bounds_checked():
    from autojit.interop.pickle_reader import loads

    # REDUCE of something that is not an allowed global (here a str on the stack) is refused.
    with pytest.raises(pickle.UnpicklingError, match="REDUCE of a str"):
        loads(b"\x80\x02X\x01\x00\x00\x00a)R.", {"builtins.set": set})
    with pytest.raises(pickle.UnpicklingError, match="opcode"):
        loads(b"\x80\x02(i__main__\nX\n.", {})  # INST
    # A tensor whose strides reach past its storage is refused before any view is made.
    source = _torch_saved(torch.ones(2))
    with zipfile.ZipFile(source) as archive:
        name = next(item for item in archive.namelist() if item.endswith("data.pkl"))
        pickled = archive.read(name)
    stretched = pickled.replace(b"K\x02\x85", b"K\x09\x85", 1)  # size (2,) -> (9,)
    assert stretched != pickled
    with pytest.raises(pickle.UnpicklingError, match="reaches past its storage of 2 elements"):
        autojit.load(_with_pickle(stretched))


def test_bfloat16_moves_both_ways_bit_for_bit():
    values = torch.tensor([0.1, -2.5, 3.0e38, 1.0e-40, float("inf")]).to(torch.bfloat16)
    ours = autojit.load(_torch_saved({"x": values, "view": values[1:3]}))
    assert ours["x"].dtype is autojit.bfloat16
    assert ours["x"].tolist() == values.tolist() and ours["view"].tolist() == values[1:3].tolist()
    theirs = torch.load(_autojit_saved(ours), weights_only=True)
    assert theirs["x"].dtype is torch.bfloat16
    assert torch.equal(theirs["x"].view(torch.int16), values.view(torch.int16))
    assert theirs["view"].tolist() == values[1:3].tolist()


def test_mmap_loads_torchs_file_in_place_as_torch(tmp_path):
    """load(mmap=True): the tensors lie over the file mapped into memory (privately: a write
    stays in this process), with torch's values; a file object, or torch's older format, is
    refused with torch's errors."""
    path = str(tmp_path / "weights.pt")
    torch.manual_seed(0)
    saved = {"w": torch.randn(3, 4), "ids": torch.arange(5), "half": torch.randn(2).half(),
             "brain": torch.randn(2).to(torch.bfloat16), "view": torch.arange(10.0)[2:6]}
    torch.save(saved, path)
    mine, theirs = autojit.load(path, mmap=True), torch.load(path, mmap=True)
    for name, value in theirs.items():
        assert mine[name].dtype.name == str(value.dtype).split(".")[-1]
        assert mine[name].float().tolist() == value.float().tolist()
    base = mine["w"]._payload
    while base is not None and not isinstance(base, np.memmap):
        base = base.base
    assert isinstance(base, np.memmap)  # mapped, not read into memory
    mine["w"].add_(1)
    assert autojit.load(path)["w"].tolist() == saved["w"].tolist()
    for framework in (torch, autojit):
        with open(path, "rb") as handle, pytest.raises(
                ValueError, match="f must be a file path in order to use the mmap argument"):
            framework.load(handle, mmap=True)
    legacy = str(tmp_path / "legacy.pt")
    torch.save(saved, legacy, _use_new_zipfile_serialization=False)
    for framework in (torch, autojit):
        with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
            framework.load(legacy, mmap=True)


def _sparse(top, layout: str):
    indices = top.tensor([[0, 1, 1], [2, 0, 2]])
    coo = top.sparse_coo_tensor(indices, top.tensor([1.0, 2.0, 3.0]), (2, 3))
    return {"coo": coo, "coalesced": coo.coalesce(), "csr": coo.to_sparse_csr(),
            "csc": coo.to_dense().to_sparse_csc()}[layout]


@pytest.mark.parametrize("layout", ["coo", "coalesced", "csr", "csc"])
def test_sparse_tensors_both_ways(layout):
    """torch._utils._rebuild_sparse_tensor over the dense parts, as torch writes them; loads
    weights-only under both."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's beta warning for CSR
        theirs = torch.load(_autojit_saved({"s": _sparse(autojit, layout)}))["s"]
        expected = _sparse(torch, layout)
    mine = autojit.load(_torch_saved({"s": expected}))["s"]
    for loaded in (theirs, mine):
        assert str(loaded.layout).split(".")[-1] == str(expected.layout).split(".")[-1]
        assert loaded.to_dense().tolist() == expected.to_dense().tolist()
        if layout in ("coo", "coalesced"):
            assert loaded.is_coalesced() == expected.is_coalesced()
