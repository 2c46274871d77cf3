"""Every layer family of autojit.nn trains as torch's does, compiled and eagerly: each row of
tests/nn_training_rows.py takes 10 training steps (SGD with momentum) under autojit.compile,
with CompileWarning an error (no graph break, no fallback to eager) and one executable for the
10 calls; its losses, parameters and buffers match the same steps run eagerly, and those match
torch's model trained from the same state (the state_dict loads into torch's model with
strict=True, so the names of the parameters and buffers are torch's too).

SGD rather than Adam: Adam divides by the root of a second moment, so a parameter whose
gradient is zero up to float noise moves by a whole step in a direction the noise picks.
Random layers (dropout, RReLU, gumbel_softmax) draw the same stream compiled and eagerly from
the same seed; torch's stream is another, so those rows (nn_training_rows.DRAWING) are compared
with torch in eval mode.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from nn_training_rows import DRAWING, rows, total_loss

import autojit

torch = pytest.importorskip("torch")

ROWS = rows(autojit)
TORCH_ROWS = rows(torch)
STEPS = 10


def _state(model) -> dict:
    return {name: value.detach().cpu().numpy().copy()
            for name, value in model.state_dict().items()}


def train(lib, name: str, compiled: bool = False, training: bool = True, initial=None):
    """(losses, final state, executables, initial state) of STEPS training steps of row `name`
    in `lib`, from `initial` (a state_dict of NumPy arrays) when given."""
    build, make_inputs = (ROWS if lib is autojit else TORCH_ROWS)[name]
    lib.manual_seed(0)
    model = build()
    if initial is not None:
        model.load_state_dict({key: lib.tensor(value) for key, value in initial.items()})
    model.train(training)
    start = _state(model)
    inputs = make_inputs(np.random.default_rng(0))
    optimizer = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def step(*inputs):
        optimizer.zero_grad()
        loss = total_loss(model(*inputs))
        loss.backward()
        optimizer.step()
        return loss.detach()

    function = autojit.compile(step) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        losses = [function(*inputs).item() for _ in range(STEPS)]
    return losses, _state(model), len(function.executables) if compiled else 0, start


def assert_same_training(mine, theirs, rtol=1e-5, atol=1e-6) -> None:
    np.testing.assert_allclose(mine[0], theirs[0], rtol=rtol, atol=atol)
    assert mine[1].keys() == theirs[1].keys()
    for key, value in theirs[1].items():
        assert mine[1][key].dtype == value.dtype, key
        np.testing.assert_allclose(mine[1][key], value, rtol=10 * rtol, atol=atol, err_msg=key)


@pytest.mark.parametrize("name", list(ROWS))
def test_compiled_eager_and_torch_training_agree(name):
    compiled = train(autojit, name, compiled=True)
    assert compiled[2] == 1  # no retrace, no split on a value that changes every step
    eager = train(autojit, name)
    assert_same_training(compiled, eager)
    if name in DRAWING:
        eager = train(autojit, name, training=False)
    theirs = train(torch, name, training=name not in DRAWING, initial=eager[3])
    assert_same_training(eager, theirs, rtol=1e-4, atol=1e-5)
