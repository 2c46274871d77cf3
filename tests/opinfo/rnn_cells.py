"""Op table rows for the recurrent cells' gate primitives (ops/nn/rnn_cells.py): the LSTM cell's
new state and output, and the GRU cell's new hidden state.

nn.LSTMCell and nn.GRUCell bind them in eager loops; their references here are the cells'
formulas in NumPy float64 (torch's gate order: i, f, g, o and r, z, n). Samples include leading
dims that broadcast (a state shared by a batch), which vmap's rule relies on.
"""

from __future__ import annotations

import numpy as np

from autojit.ops.nn import rnn_cells

from . import OpInfo, Sample, uniform
from .nn import _in_dtype


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _state(gates, c):
    i, f, g, _ = np.split(gates, 4, axis=-1)
    return _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)


def _output(gates, c):
    return _sigmoid(np.split(gates, 4, axis=-1)[3]) * np.tanh(c)


def _gru(gi, gh, h):
    x_r, x_z, x_n = np.split(gi, 3, axis=-1)
    h_r, h_z, h_n = np.split(gh, 3, axis=-1)
    r, z = _sigmoid(x_r + h_r), _sigmoid(x_z + h_z)
    n = np.tanh(x_n + r * h_n)
    return (h - n) * z + n


def _lstm_samples(rng, dtype):
    return [
        Sample((uniform(rng, (3, 8), dtype), uniform(rng, (3, 2), dtype))),
        Sample((uniform(rng, (2, 3, 12), dtype), uniform(rng, (3, 3), dtype))),
        Sample((uniform(rng, (4,), dtype), uniform(rng, (1,), dtype))),
    ]


def _gru_samples(rng, dtype):
    return [
        Sample((uniform(rng, (3, 6), dtype), uniform(rng, (3, 6), dtype),
                uniform(rng, (3, 2), dtype))),
        Sample((uniform(rng, (2, 3, 9), dtype), uniform(rng, (3, 9), dtype),
                uniform(rng, (2, 1, 3), dtype))),
        Sample((uniform(rng, (3,), dtype), uniform(rng, (3,), dtype),
                uniform(rng, (1,), dtype))),
    ]


ROWS = [
    OpInfo("ops.rnn_cells.lstm_cell_state", rnn_cells.lstm_cell_state, _in_dtype(_state),
           _lstm_samples, primitives=("lstm_cell_state",)),
    OpInfo("ops.rnn_cells.lstm_cell_output", rnn_cells.lstm_cell_output, _in_dtype(_output),
           _lstm_samples, primitives=("lstm_cell_output",)),
    OpInfo("ops.rnn_cells.gru_cell", rnn_cells.gru_cell, _in_dtype(_gru), _gru_samples,
           primitives=("gru_cell",)),
]
