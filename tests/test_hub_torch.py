"""autojit.hub against torch.hub: a local hub repository's entrypoints, checkpoints loaded from
a URL into the hub directory with their sha256 prefix checked, and torch's errors."""

from __future__ import annotations

import hashlib
import os

import pytest

import autojit

torch = pytest.importorskip("torch")

HUBCONF = '''dependencies = ["numpy"]


def tiny(outputs=2):
    """A tiny model."""
    import {top}
    return {top}.nn.Linear(2, outputs)


def _private():
    pass
'''


def _outcomes(top, folder: str) -> list:
    top.hub.set_dir(folder)
    seen = [top.hub.get_dir() == folder]
    repo = os.path.join(folder, "repo")
    os.makedirs(repo)
    with open(os.path.join(repo, "hubconf.py"), "w") as handle:
        handle.write(HUBCONF.format(top=top.__name__))
    model = top.hub.load(repo, "tiny", 3, source="local")
    seen += [type(model).__name__, tuple(model.weight.shape)]
    saved = os.path.join(folder, "saved.pth")
    top.save({"w": top.ones(2)}, saved)
    with open(saved, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    named = os.path.join(folder, f"weights-{digest[:8]}.pth")
    os.rename(saved, named)
    loaded = top.hub.load_state_dict_from_url("file://" + named, check_hash=True,
                                              progress=False)
    seen.append(loaded["w"].tolist())
    seen.append(os.listdir(os.path.join(folder, "checkpoints")) == [os.path.basename(named)])
    wrong = os.path.join(folder, "weights-00000000.pth")
    os.rename(named, wrong)
    for attempt in (lambda: top.hub.load(repo, "nope", source="local"),
                    lambda: top.hub.load(repo, "tiny", source="gitlab"),
                    lambda: top.hub.load_state_dict_from_url(
                        "file://" + wrong, model_dir=os.path.join(folder, "other"),
                        check_hash=True, progress=False)):
        try:
            attempt()
        except (RuntimeError, ValueError) as error:
            seen.append((type(error).__name__, str(error).split(" (expected")[0]))
    return seen


def test_hub_behaves_as_torchs(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    try:
        assert _outcomes(autojit, str(tmp_path / "a")) == _outcomes(torch, str(tmp_path / "b"))
    finally:
        autojit.hub._hub_dir = None
        torch.hub._hub_dir = None
