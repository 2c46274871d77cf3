"""The generated API reference pages are current, complete, and everything on them is documented.

tools/api_reference.py writes docs/api/tensor.md (every public member of autojit.Tensor and the
operators it supports) and docs/api/ops.md (every op function of the top-level namespace, by
family) from the imported package, because mkdocstrings' static analysis does not see the
methods attached at import. These tests keep the committed pages equal to what the script
writes, so a method or op added without rerunning it fails here, and require a docstring on
every public member and op.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import autojit
from autojit.ops import functional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import api_reference  # noqa: E402

RERUN = "run `python tools/api_reference.py` and commit the pages"


def test_committed_pages_are_what_the_generator_writes():
    for path, text in api_reference.pages().items():
        assert path.is_file(), f"{path.name} is missing: {RERUN}"
        assert path.read_text() == text, f"{path.name} is out of date: {RERUN}"


def test_every_public_member_and_op_has_a_docstring():
    assert api_reference.missing_docstrings() == [], "add a one-line docstring to each"


def test_the_families_hold_each_op_once():
    names = [name for members in functional.FAMILIES.values() for name in members]
    assert len(names) == len(set(names)), "an op is in two families"
    assert sorted(names) == sorted(functional.__all__), (
        "functional.FAMILIES and functional.__all__ differ")


def test_the_tensor_page_lists_every_public_member():
    text = api_reference.TENSOR_PAGE.read_text()
    public = [name for name in dir(autojit.Tensor) if not name.startswith("_")]
    assert len(public) > 150
    missing = [name for name in public
               if f"| `{name}` |" not in text and f"| `{name}(" not in text]
    assert missing == []
    kinds = api_reference.tensor_members()
    assert sorted(name for names in kinds.values() for name in names) == sorted(public)
    # The attributes, written in the class body or attached at import, are listed as such.
    assert {"shape", "dtype", "device", "grad", "requires_grad", "is_leaf", "grad_fn", "data",
            "T", "ndim"} <= set(kinds["attributes"])


def test_the_ops_page_lists_every_op_once():
    text = api_reference.OPS_PAGE.read_text()
    for name in functional.__all__:
        assert text.count(f"| `{name}(") == 1, name
    # Every name of the top-level namespace that is an op is one of these.
    assert set(functional.__all__) <= set(autojit.__all__)


def test_a_method_added_without_regenerating_fails(monkeypatch):
    def undocumented(self):
        return self

    monkeypatch.setattr(autojit.Tensor, "an_undocumented_method", undocumented, raising=False)
    assert "Tensor.an_undocumented_method (methods)" in api_reference.missing_docstrings()
    written = api_reference.pages()[api_reference.TENSOR_PAGE]
    assert written != api_reference.TENSOR_PAGE.read_text()
    assert "`an_undocumented_method()`" in written


def test_an_operator_the_page_cannot_spell_is_an_error(monkeypatch):
    monkeypatch.setattr(autojit.Tensor, "__divmod__", lambda self, other: self, raising=False)
    with pytest.raises(SystemExit, match="__divmod__"):
        api_reference.tensor_page()


def test_check_mode_reports_and_write_mode_fixes_a_stale_page(tmp_path, monkeypatch, capsys):
    tensor_page, ops_page = tmp_path / "tensor.md", tmp_path / "ops.md"
    monkeypatch.setattr(api_reference, "ROOT", tmp_path)
    monkeypatch.setattr(api_reference, "TENSOR_PAGE", tensor_page)
    monkeypatch.setattr(api_reference, "OPS_PAGE", ops_page)
    tensor_page.write_text("stale\n")
    assert api_reference.main(["--check"]) == 1
    assert "tensor.md, ops.md" in capsys.readouterr().err
    assert tensor_page.read_text() == "stale\n" and not ops_page.exists()
    assert api_reference.main([]) == 0
    assert api_reference.main(["--check"]) == 0
    assert tensor_page.read_text() == api_reference.tensor_page()
