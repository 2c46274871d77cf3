"""The PINN and MAML programs of bench/second_order_programs.py agree with torch in float64.

Both differentiate through gradients (the PINN's loss reads u'' through two autograd.grad
calls with create_graph=True; MAML differentiates the query loss through an inner SGD step),
train with Adam, and start from torch's initial weights. In float64, autojit eager and
compiled follow torch's trajectory to rounding: a bug in a second-derivative path would move
them apart at once. In float32 all three drift apart over hundreds of steps, as torch does
from initial weights one ulp away (docs/differences.md). A few steps each here, about 5 s.
"""

from __future__ import annotations

import importlib
import os
import sys

import numpy as np
import pytest
import torch

import autojit

_BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, _BENCH)
try:
    programs = importlib.import_module("second_order_programs")
finally:
    sys.path.remove(_BENCH)

CASES = {"PINN": (programs.run_pinn, 12), "MAML": (programs.run_maml, 6)}


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name", list(CASES))
def test_float64_training_follows_torch(name, compiled):
    run, steps = CASES[name]
    checkpoints = tuple(range(1, steps + 1))
    expected = run(torch, "float64", steps, checkpoints)
    mine = run(autojit, "float64", steps, checkpoints, compiled=compiled)
    for step in checkpoints:
        np.testing.assert_allclose(mine[step], expected[step], rtol=1e-11, atol=1e-13,
                                   err_msg=f"{name} step {step}")
