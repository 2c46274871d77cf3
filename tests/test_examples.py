"""The examples in examples/ run to completion and print the values they promise.

Each example is run in a fresh interpreter, the way a user runs it, so that it cannot lean on
state another test left behind.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_example(name: str) -> str:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert completed.returncode == 0, (
        f"{name} exited with {completed.returncode}\nstdout:\n{completed.stdout}\n"
        f"stderr:\n{completed.stderr}")
    return completed.stdout


def test_autograd_basics_runs_and_prints_its_results():
    output = run_example("autograd_basics.py")
    expected_lines = [
        "x.grad after one backward: tensor([2., 4., 6.])",
        "x.grad after a second backward: tensor([ 4.,  8., 12.])",
        "d/dx   x^4 = 32  (4x^3  = 32)",
        "d2/dx2 x^4 = 48  (12x^2 = 48)",
        "d3/dx3 x^4 = 48  (24x   = 48)",
        "under no_grad: y.requires_grad = False , y.grad_fn = None",
        "y._version after y.mul_(2): 1",
        "all checks passed",
    ]
    for line in expected_lines:
        assert line in output, f"missing line {line!r} in:\n{output}"
    assert "Hv = tensor([  6.,   0., -18.], dtype=autojit.float64)" in output
    assert "RuntimeError: one of the variables needed for gradient computation has been " \
           "modified by an inplace operation" in output
