"""nn.CTCLoss and F.ctc_loss (nn/functional/ctc.py) against torch: the loss and the gradient
with respect to the logits (through log_softmax) and to log_probs themselves, for padded and
concatenated targets, every reduction, another blank, unbatched input, an impossible alignment
with and without zero_infinity, in float64 and float32; errors as torch's; a compiled training
step equals eager.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import autojit
from autojit import nn

sys.path.insert(0, str(Path(__file__).parent))

from torch_pairs import compare_with_gradients, leaves  # noqa: E402

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((6, 3, 5))
PADDED = np.array([[1, 2, 2], [3, 1, 0], [4, 0, 0]])
CONCATENATED = np.array([1, 2, 2, 3, 1, 4])
INPUT_LENGTHS, TARGET_LENGTHS = [6, 5, 4], [3, 2, 1]
CASES = [
    ({}, PADDED, INPUT_LENGTHS, TARGET_LENGTHS, True),
    ({"reduction": "sum"}, CONCATENATED, INPUT_LENGTHS, TARGET_LENGTHS, True),
    ({"reduction": "none", "blank": 4}, np.array([[1, 2, 2], [3, 1, 0], [0, 0, 0]]),
     INPUT_LENGTHS, TARGET_LENGTHS, True),
    ({"reduction": "none"}, PADDED, INPUT_LENGTHS, TARGET_LENGTHS, False),  # raw log_probs
    # The first sample cannot align (3 labels with a repeat need 4 frames): inf, or 0. (Its
    # gradient is NaN in torch, 0 in autojit: compared only with zero_infinity.)
    ({"reduction": "none"}, PADDED, [3, 5, 4], TARGET_LENGTHS, None),
    ({"zero_infinity": True}, PADDED, [3, 5, 4], TARGET_LENGTHS, True),
    ({"reduction": "none"}, PADDED, INPUT_LENGTHS, [0, 2, 1], True),  # an empty target
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options, targets, input_lengths, target_lengths, softmax", CASES,
                         ids=[f"case{i}" for i in range(len(CASES))])
def test_ctc_matches_torch(options, targets, input_lengths, target_lengths, softmax, dtype):
    mine_loss, their_loss = nn.CTCLoss(**options), torch.nn.CTCLoss(**options)
    assert repr(mine_loss) == repr(their_loss)
    values = LOGITS.astype(dtype)
    if softmax is None:  # the value only
        out_mine = mine_loss(nn.functional.log_softmax(autojit.tensor(values), 2),
                             autojit.tensor(targets), input_lengths, target_lengths)
        out_theirs = their_loss(torch.tensor(values).log_softmax(2), torch.tensor(targets),
                                input_lengths, target_lengths)
        np.testing.assert_allclose(out_mine.numpy(), out_theirs.numpy(), rtol=1e-5)
        assert np.isinf(out_mine.numpy()[0])
        return
    if not softmax:
        values = np.log(np.full_like(values, 0.2)) + values * 0.1
    (x_mine,), (x_theirs,) = leaves(torch, values)
    if softmax:
        lp_mine, lp_theirs = nn.functional.log_softmax(x_mine, 2), x_theirs.log_softmax(2)
    else:
        lp_mine, lp_theirs = x_mine, x_theirs
    out_mine = mine_loss(lp_mine, autojit.tensor(targets), input_lengths, target_lengths)
    out_theirs = their_loss(lp_theirs, torch.tensor(targets), input_lengths, target_lengths)
    compare_with_gradients(torch, out_mine, out_theirs, [x_mine], [x_theirs], dtype)


def test_unbatched_input_and_tensor_lengths():
    (x_mine,), (x_theirs,) = leaves(torch, LOGITS[:, 0])
    out_mine = nn.functional.ctc_loss(nn.functional.log_softmax(x_mine, 1), autojit.tensor([1, 2]),
                                      autojit.tensor(6), autojit.tensor(2), reduction="sum")
    out_theirs = torch.nn.functional.ctc_loss(x_theirs.log_softmax(1), torch.tensor([1, 2]),
                                              torch.tensor(6), torch.tensor(2), reduction="sum")
    compare_with_gradients(torch, out_mine, out_theirs, [x_mine], [x_theirs])


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]),
                                           [5, 4], [2, 3]),
    lambda lib: lib.nn.functional.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]),
                                           [6, 4], [2, 2]),
], ids=["targets-short", "input-length"])
def test_errors_match_torch(call):
    messages = []
    for lib in (autojit, torch):
        with pytest.raises(RuntimeError) as error:
            call(lib)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_a_compiled_training_step_equals_eager():
    def run(compiled: bool):
        autojit.manual_seed(0)
        model = nn.Linear(4, 5)
        loss_function = nn.CTCLoss()
        optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
        x = autojit.tensor(LOGITS[:, :, :4],
                           dtype=autojit.float32)

        def step(x):
            # The targets are constants of the graph: their layout is read from their data.
            targets = autojit.tensor(PADDED)
            optimizer.zero_grad()
            loss = loss_function(nn.functional.log_softmax(model(x), 2), targets, [6, 6, 6],
                                 TARGET_LENGTHS)
            loss.backward()
            optimizer.step()
            return loss.detach()

        function = autojit.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error", autojit.CompileWarning)
            losses = [float(function(x)) for _ in range(3)]
        return losses, [p.detach().numpy().copy() for p in model.parameters()]

    compiled_losses, compiled_weights = run(True)
    eager_losses, eager_weights = run(False)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5)
    for a, b in zip(compiled_weights, eager_weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("input_lengths", [INPUT_LENGTHS, [3, 5, 4]])
@pytest.mark.parametrize("raw", [False, True])
def test_compiled_with_input_lengths_that_differ_equals_eager(input_lengths, raw):
    """Compiled, with no graph break, loss and gradient equal eager's for every sample. A
    kernel once stored the alpha recursion's output over an input that a select still read,
    which made the gradient of the samples shorter than the longest wrong."""
    def loss_and_gradient(x):
        log_probs = x if raw else nn.functional.log_softmax(x, 2)
        loss = nn.functional.ctc_loss(log_probs, autojit.tensor(PADDED), input_lengths,
                                      TARGET_LENGTHS, reduction="sum")
        (gradient,) = autojit.autograd.grad(loss, x)
        return loss.detach(), gradient

    x = autojit.tensor(LOGITS, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        compiled_loss, compiled_gradient = autojit.compile(loss_and_gradient)(x)
    eager_loss, eager_gradient = loss_and_gradient(x)
    np.testing.assert_allclose(compiled_loss.numpy(), eager_loss.numpy(), rtol=1e-12)
    np.testing.assert_allclose(compiled_gradient.numpy(), eager_gradient.numpy(), rtol=1e-10,
                               atol=1e-12)
