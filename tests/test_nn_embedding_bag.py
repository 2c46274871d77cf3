"""nn.EmbeddingBag and F.embedding_bag (nn/embedding_bag.py) against torch with torch's weight
loaded: every mode, offsets with and without include_last_offset, 2-D inputs, empty bags,
per_sample_weights, padding_idx, max_norm and scale_grad_by_freq give torch's output and weight
gradient in float64 and float32 (and nn.Embedding's max_norm and scale_grad_by_freq too); repr,
init and errors as torch's; a compiled training step equals eager.

torch 2.13's CPU embedding_bag divides a row's gradient by the count of another id when ids
occur with different counts (docs/differences.md): the comparisons with torch use ids that
occur equally often, and the mixed case is checked against torch's Embedding, whose scaling
divides each row by its own id's count.
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

from torch_pairs import compare_with_gradients  # noqa: E402

torch = pytest.importorskip("torch")

IDS = np.array([1, 4, 2, 2, 0, 7, 3, 9, 4])
OFFSETS = np.array([0, 3, 3, 6])  # the second bag is empty
EVEN_IDS = np.array([1, 6, 3, 3, 6, 1])  # each id twice
EVEN_OFFSETS = np.array([0, 2, 2, 5])
CASES = [
    ({"mode": "sum"}, IDS, OFFSETS, None),
    ({"mode": "mean"}, IDS, OFFSETS, None),
    ({"mode": "max"}, IDS, OFFSETS, None),
    ({"mode": "sum", "include_last_offset": True}, IDS, np.array([0, 2, 5, 9]), None),
    ({"mode": "mean", "padding_idx": 2}, IDS, OFFSETS, None),
    ({"mode": "max", "padding_idx": 4}, IDS, OFFSETS, None),
    ({"mode": "sum"}, IDS, OFFSETS, np.linspace(-1, 2, 9)),
    ({"mode": "mean"}, IDS[:8].reshape(2, 4), None, None),
    ({"mode": "max"}, IDS[:8].reshape(4, 2), None, None),
    ({"mode": "mean", "max_norm": 1.0}, IDS, OFFSETS, None),
    ({"mode": "max", "max_norm": 0.5, "norm_type": 1.0}, IDS, OFFSETS, None),
    ({"mode": "sum", "scale_grad_by_freq": True, "max_norm": 2.0}, EVEN_IDS, EVEN_OFFSETS,
     None),
    ({"mode": "mean", "scale_grad_by_freq": True}, EVEN_IDS.reshape(3, 2), None, None),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options, ids, offsets, weights", CASES,
                         ids=[f"case{i}" for i in range(len(CASES))])
def test_embedding_bag_matches_torch(options, ids, offsets, weights, dtype):
    torch.manual_seed(0)
    theirs = torch.nn.EmbeddingBag(10, 3, **options).to(getattr(torch, dtype))
    mine = nn.EmbeddingBag(10, 3, **options).to(getattr(autojit, dtype))
    assert repr(mine) == repr(theirs) and list(mine.state_dict()) == ["weight"]
    mine.load_state_dict({"weight": autojit.tensor(theirs.weight.detach().numpy())})
    extra_mine, extra_theirs = {}, {}
    if offsets is not None:
        extra_mine["offsets"], extra_theirs["offsets"] = (autojit.tensor(offsets),
                                                          torch.tensor(offsets))
    inputs_mine, inputs_theirs = [mine.weight], [theirs.weight]
    if weights is not None:
        w_mine = autojit.tensor(weights.astype(dtype), requires_grad=True)
        w_theirs = torch.tensor(weights.astype(dtype), requires_grad=True)
        extra_mine["per_sample_weights"], extra_theirs["per_sample_weights"] = w_mine, w_theirs
        inputs_mine.append(w_mine), inputs_theirs.append(w_theirs)
    out_mine = mine(autojit.tensor(ids), **extra_mine)
    out_theirs = theirs(torch.tensor(ids), **extra_theirs)
    compare_with_gradients(torch, out_mine, out_theirs, inputs_mine, inputs_theirs, dtype)
    # max_norm renormalized the rows the ids name, in place
    np.testing.assert_allclose(mine.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options", [{"max_norm": 1.0}, {"max_norm": 2.0, "norm_type": 3.0},
                                     {"scale_grad_by_freq": True, "padding_idx": 4},
                                     {"scale_grad_by_freq": True, "max_norm": 1.5}])
def test_embedding_options_match_torch(options, dtype):
    torch.manual_seed(0)
    theirs = torch.nn.Embedding(10, 3, **options).to(getattr(torch, dtype))
    mine = nn.Embedding(10, 3, **options).to(getattr(autojit, dtype))
    assert repr(mine) == repr(theirs)
    mine.load_state_dict({"weight": autojit.tensor(theirs.weight.detach().numpy())})
    ids = IDS.reshape(3, 3)
    compare_with_gradients(torch, mine(autojit.tensor(ids)), theirs(torch.tensor(ids)),
                           [mine.weight], [theirs.weight], dtype)
    np.testing.assert_allclose(mine.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq_divides_by_each_ids_own_count(mode):
    """A bag's gradient at each id, divided by the number of times the id occurs in the
    whole input: torch's Embedding's gradient, reduced as the bag reduces."""
    weight = torch.randn(10, 3, dtype=torch.float64, requires_grad=True)
    bags = [IDS[:3], IDS[3:6], IDS[6:]]
    looked_up = torch.nn.functional.embedding(torch.tensor(IDS), weight,
                                              scale_grad_by_freq=True)
    reduce = torch.sum if mode == "sum" else torch.mean
    expected = torch.stack([reduce(part, 0) for part in looked_up.split(3)])
    (expected ** 2).sum().backward()
    mine = autojit.tensor(weight.detach().numpy(), requires_grad=True)
    out = nn.functional.embedding_bag(autojit.tensor(np.concatenate(bags)), mine,
                                      autojit.tensor([0, 3, 6]), mode=mode,
                                      scale_grad_by_freq=True)
    (out ** 2).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())
    np.testing.assert_allclose(mine.grad.numpy(), weight.grad.numpy(), rtol=1e-12)


def test_init_zeroes_the_padding_row():
    table = nn.EmbeddingBag(20, 4, padding_idx=-1)
    assert table.padding_idx == 19 and not table.weight[19].detach().numpy().any()
    values = table.weight.detach().numpy()[:19]
    assert abs(values.mean()) < 0.5 and 0.6 < values.std() < 1.4  # N(0, 1)


def _error(function, lib):
    try:
        function(lib)
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error), str(error)
    return None, None


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), lib.zeros(3, 2),
                                                lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.zeros(3, 2)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.zeros(3, 2),
                                                lib.tensor([0]), mode="max",
                                                per_sample_weights=lib.ones(2)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.zeros(3, 2),
                                                lib.tensor([0]), mode="max",
                                                scale_grad_by_freq=True),
], ids=["2d-offsets", "1d-no-offsets", "weights-not-sum", "max-scaled"])
def test_errors_match_torch(call):
    mine, theirs = _error(call, autojit), _error(call, torch)
    assert theirs[0] is not None and mine[0] is theirs[0]
    assert mine[1].split("<class")[0] == theirs[1].split("<class")[0]  # up to the class name


def test_a_compiled_training_step_equals_eager():
    def run(compiled: bool):
        autojit.manual_seed(0)
        table = nn.EmbeddingBag(10, 3, mode="mean", padding_idx=0)
        head = nn.Linear(3, 1)
        optimizer = autojit.optim.SGD([*table.parameters(), *head.parameters()], lr=0.1)
        ids, offsets = autojit.tensor(IDS), autojit.tensor(OFFSETS)

        def step(ids, offsets):
            optimizer.zero_grad()
            loss = (head(table(ids, offsets)) ** 2).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()

        function = autojit.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error", autojit.CompileWarning)
            losses = [float(function(ids, offsets)) for _ in range(3)]
        return losses, table.weight.detach().numpy().copy()

    compiled_losses, compiled_weight = run(True)
    eager_losses, eager_weight = run(False)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(compiled_weight, eager_weight, rtol=1e-4, atol=1e-6)
