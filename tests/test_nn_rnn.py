"""Recurrent layers (nn/rnn.py) and sequence packing (nn/utils/rnn.py) against torch: with
torch's state_dict loaded, outputs, final states and every gradient (input, initial states,
parameters) match in float64 and float32, for every layer option, padded and packed; compiled
training steps equal eager."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning, nn
from autojit.nn.utils import rnn as rnn_utils

torch = pytest.importorskip("torch")

TOLERANCE = {"float64": 1e-10, "float32": 2e-5}


def _copy_parameters(mine, theirs):
    state = {name: autojit.tensor(value.detach().numpy()) for name, value in
             theirs.state_dict().items()}
    mine.load_state_dict(state)


def _pair(kind, dtype, *args, **kwargs):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(*args, **kwargs).to(getattr(torch, dtype))
    mine = getattr(nn, kind)(*args, **kwargs).to(getattr(autojit, dtype))
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for (name, a), (_, b) in zip(mine.state_dict().items(), theirs.state_dict().items()):
        assert tuple(a.shape) == tuple(b.shape), name
    _copy_parameters(mine, theirs)
    return mine, theirs


def _leaf(lib, array):
    return lib.tensor(array, requires_grad=True)


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [item for part in value for item in _flat(part)]
    if hasattr(value, "data") and hasattr(value, "batch_sizes"):  # a PackedSequence
        return [value.data]
    return [value]


def _compare(mine, theirs, dtype, inputs_mine, inputs_theirs):
    tolerance = TOLERANCE[dtype]
    for a, b in zip(_flat(mine), _flat(theirs)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tolerance,
                                   atol=tolerance)
    weights = np.random.default_rng(3)
    loss_mine = sum((value * autojit.tensor(weights.standard_normal(tuple(value.shape)))
                     .to(value.dtype)).sum() for value in _flat(mine))
    weights = np.random.default_rng(3)
    loss_theirs = sum((value * torch.tensor(weights.standard_normal(tuple(value.shape)))
                       .to(value.dtype)).sum() for value in _flat(theirs))
    loss_mine.backward()
    loss_theirs.backward()
    for a, b in zip(inputs_mine, inputs_theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tolerance,
                                   atol=tolerance)


LAYER_CASES = [
    ("RNN", dict()),
    ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bias=False, batch_first=True)),
    ("LSTM", dict()),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=3, batch_first=True)),
    ("LSTM", dict(proj_size=2, num_layers=2, bidirectional=True)),
    ("GRU", dict()),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("GRU", dict(bias=False)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind, options", LAYER_CASES,
                         ids=[f"{kind}-{i}" for i, (kind, _) in enumerate(LAYER_CASES)])
def test_layer_matches_torch(kind, options, dtype):
    mine, theirs = _pair(kind, dtype, 4, 6, **options)
    batch_first = options.get("batch_first", False)
    rng = np.random.default_rng(1)
    shape = (2, 5, 4) if batch_first else (5, 2, 4)
    x = rng.standard_normal(shape).astype(dtype)
    directions = 2 if options.get("bidirectional") else 1
    layers = options.get("num_layers", 1)
    real = options.get("proj_size") or 6
    h0 = rng.standard_normal((layers * directions, 2, real)).astype(dtype)
    c0 = rng.standard_normal((layers * directions, 2, 6)).astype(dtype)
    inputs_mine = [_leaf(autojit, x), _leaf(autojit, h0)]
    inputs_theirs = [_leaf(torch, x), _leaf(torch, h0)]
    if kind == "LSTM":
        inputs_mine.append(_leaf(autojit, c0))
        inputs_theirs.append(_leaf(torch, c0))
        state_mine, state_theirs = tuple(inputs_mine[1:]), tuple(inputs_theirs[1:])
    else:
        state_mine, state_theirs = inputs_mine[1], inputs_theirs[1]
    out_mine = mine(inputs_mine[0], state_mine)
    out_theirs = theirs(inputs_theirs[0], state_theirs)
    _compare(out_mine, out_theirs, dtype, inputs_mine + list(mine.parameters()),
             inputs_theirs + list(theirs.parameters()))


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_packed_sequences_match_torch(kind):
    mine, theirs = _pair(kind, "float64", 3, 4, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(2)
    lengths = [3, 5, 1, 4]
    padded = rng.standard_normal((5, 4, 3))
    x_mine, x_theirs = _leaf(autojit, padded), _leaf(torch, padded)
    packed_mine = rnn_utils.pack_padded_sequence(x_mine, lengths, enforce_sorted=False)
    packed_theirs = torch.nn.utils.rnn.pack_padded_sequence(x_theirs, lengths,
                                                            enforce_sorted=False)
    np.testing.assert_array_equal(packed_mine.batch_sizes.numpy(),
                                  packed_theirs.batch_sizes.numpy())
    np.testing.assert_allclose(packed_mine.data.detach().numpy(),
                               packed_theirs.data.detach().numpy())
    out_mine, state_mine = mine(packed_mine)
    out_theirs, state_theirs = theirs(packed_theirs)
    padded_mine, lengths_mine = rnn_utils.pad_packed_sequence(out_mine, batch_first=True)
    padded_theirs, lengths_theirs = torch.nn.utils.rnn.pad_packed_sequence(out_theirs,
                                                                           batch_first=True)
    assert lengths_mine.tolist() == lengths_theirs.tolist() == lengths
    _compare((padded_mine, state_mine), (padded_theirs, state_theirs), "float64",
             [x_mine, *mine.parameters()], [x_theirs, *theirs.parameters()])


def test_packing_utilities_match_torch():
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((n, 2)) for n in (4, 2, 3)]
    for batch_first in (False, True):
        for side in ("right", "left"):
            mine = rnn_utils.pad_sequence([autojit.tensor(a) for a in arrays], batch_first,
                                          -1.0, side)
            theirs = torch.nn.utils.rnn.pad_sequence([torch.tensor(a) for a in arrays],
                                                     batch_first, -1.0, side)
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    packed = rnn_utils.pack_sequence([autojit.tensor(a) for a in arrays], enforce_sorted=False)
    reference = torch.nn.utils.rnn.pack_sequence([torch.tensor(a) for a in arrays],
                                                 enforce_sorted=False)
    np.testing.assert_array_equal(packed.data.numpy(), reference.data.numpy())
    assert packed.sorted_indices.tolist() == reference.sorted_indices.tolist()
    assert packed.unsorted_indices.tolist() == reference.unsorted_indices.tolist()
    for mine, theirs in zip(rnn_utils.unpack_sequence(packed), arrays):
        np.testing.assert_array_equal(mine.numpy(), theirs)
    padded, lengths = rnn_utils.pad_packed_sequence(packed, total_length=6)
    assert tuple(padded.shape) == (6, 3, 2) and lengths.tolist() == [4, 2, 3]
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        rnn_utils.pack_padded_sequence(autojit.zeros(4, 3, 2), [2, 4, 1])


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(kind):
    mine, theirs = _pair(kind, "float64", 3, 5)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3))
    h = rng.standard_normal((4, 5))
    c = rng.standard_normal((4, 5))
    inputs_mine = [_leaf(autojit, x), _leaf(autojit, h)]
    inputs_theirs = [_leaf(torch, x), _leaf(torch, h)]
    if kind == "LSTMCell":
        inputs_mine.append(_leaf(autojit, c))
        inputs_theirs.append(_leaf(torch, c))
        state_mine, state_theirs = tuple(inputs_mine[1:]), tuple(inputs_theirs[1:])
    else:
        state_mine, state_theirs = inputs_mine[1], inputs_theirs[1]
    _compare(mine(inputs_mine[0], state_mine), theirs(inputs_theirs[0], state_theirs),
             "float64", inputs_mine + list(mine.parameters()),
             inputs_theirs + list(theirs.parameters()))
    # Unbatched input, no state.
    single_mine = mine(autojit.tensor(x[0]))
    single_theirs = theirs(torch.tensor(x[0]))
    for a, b in zip(_flat(single_mine), _flat(single_theirs)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_unbatched_input_and_errors_match_torch():
    mine, theirs = _pair("GRU", "float64", 3, 4, num_layers=2)
    x = np.random.default_rng(6).standard_normal((5, 3))
    out_mine, h_mine = mine(autojit.tensor(x))
    out_theirs, h_theirs = theirs(torch.tensor(x))
    np.testing.assert_allclose(out_mine.detach().numpy(), out_theirs.detach().numpy(),
                               rtol=1e-12)
    assert tuple(h_mine.shape) == tuple(h_theirs.shape) == (2, 4)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        mine(autojit.zeros(5, 2, 7))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        mine(autojit.zeros(5, 2, 3), autojit.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    assert repr(nn.LSTM(3, 4, num_layers=2, batch_first=True, proj_size=2)) == \
        repr(torch.nn.LSTM(3, 4, num_layers=2, batch_first=True, proj_size=2))


def test_dropout_between_layers_only_in_training():
    layer = nn.LSTM(3, 4, num_layers=3, dropout=0.5)
    x = autojit.randn(6, 2, 3)
    layer.eval()
    first, _ = layer(x)
    second, _ = layer(x)
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())
    layer.train()
    autojit.manual_seed(1)
    third, _ = layer(x)
    assert not np.allclose(first.detach().numpy(), third.detach().numpy())


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_a_compiled_training_step_equals_eager(kind):
    def run(compiled: bool):
        autojit.manual_seed(0)
        model = getattr(nn, kind)(3, 4, num_layers=2, batch_first=True)
        head = nn.Linear(4, 1)
        optimizer = autojit.optim.SGD([*model.parameters(), *head.parameters()], lr=0.05)
        rng = np.random.default_rng(0)
        x = autojit.tensor(rng.standard_normal((4, 5, 3)), dtype=autojit.float32)
        y = autojit.tensor(rng.standard_normal((4, 1)), dtype=autojit.float32)

        def step(x, y):
            optimizer.zero_grad()
            output, _ = model(x)
            loss = ((head(output[:, -1]) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()

        function = autojit.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileWarning)
            losses = [float(function(x, y)) for _ in range(10)]
        if compiled:
            assert len(function.executables) <= 2
        return losses, [p.detach().numpy().copy() for p in model.parameters()]

    compiled_losses, compiled_weights = run(True)
    eager_losses, eager_weights = run(False)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5)
    for a, b in zip(compiled_weights, eager_weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
