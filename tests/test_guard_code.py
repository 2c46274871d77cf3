"""compiler/guard_code.py: guard predicates compiled once per canonical source, in this process
and across processes through the disk cache."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
from fresh_processes import twice_with_one_cache

import autojit
from autojit.compiler import guard_code


def test_canonical_renames_the_walks_root_names_in_order_and_nothing_else():
    constants = {"W98765": "model", "W12345": "optimizer", "C0": 1.0}
    source = "v0 = W98765._modules\nv1 = W12345.state\nv2 = W98765.x\nv3 = 'W55555' + W777"
    text, roots = guard_code.canonical(source, constants)
    assert text == "v0 = W_0._modules\nv1 = W_1.state\nv2 = W_0.x\nv3 = 'W55555' + W777"
    assert roots == {"W_0": "model", "W_1": "optimizer"}


def _program():
    autojit.manual_seed(0)
    model = autojit.nn.Sequential(autojit.nn.Linear(3, 4), autojit.nn.Tanh(),
                                  autojit.nn.Linear(4, 1))
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x):
        optimizer.zero_grad()
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        return loss.detach()

    return autojit.compile(step)


def test_the_same_program_compiled_again_reuses_its_guard_code(monkeypatch):
    """Two compiled functions over equal programs (new objects, so other ids) give one
    canonical source: the second's guards are not compiled again, and they still check."""
    compiles = []

    def counting(source, filename, mode):
        compiles.append(filename)
        return compile(source, filename, mode)

    monkeypatch.setattr(guard_code, "_CODES", {})
    monkeypatch.setattr(guard_code, "compile", counting, raising=False)
    monkeypatch.setattr(guard_code.config, "CODE_STORE", {})  # this process's cache alone
    x = autojit.ones(8, 3)
    losses = []
    for _ in range(2):
        step = _program()
        losses.append([step(x).item() for _ in range(3)])
    assert compiles == ["<autojit guards>"]
    assert losses[0] == losses[1]


def test_guard_code_comes_back_from_the_disk_cache_in_another_process(tmp_path):
    """A fresh process finds the code another one stored (AUTOJIT_CACHE_DIR): it compiles no
    guard source, and its steps compute what the first process's did."""
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, {tests!r})
        import autojit
        from autojit.compiler import guard_code
        from test_guard_code import _program
        compiles = []
        def counting(source, filename, mode):
            compiles.append(filename)
            return compile(source, filename, mode)
        guard_code.compile = counting
        step = _program()
        x = autojit.ones(8, 3)
        losses = [step(x).item() for _ in range(3)]
        print(len(compiles), *losses)
    """).format(tests=str(Path(__file__).resolve().parent))
    first, second = twice_with_one_cache(script, tmp_path)
    assert first[0] >= 1 and second[0] == 0
    np.testing.assert_equal(first[1:], second[1:])
