"""Recurrent layers: RNN, LSTM and GRU, and their single-step cells, with torch's constructor
arguments, parameter names and shapes (`weight_ih_l0`, `bias_hh_l1_reverse`, `weight_hr_l0`),
initialization, gate order and numerics.

Every layer is a composite of autojit ops, so autograd (to any order), tracing, fusion and CUDA
come from the primitives. Eager on the CPU in float32 and float64, a step's gate arithmetic is
one or two fused primitives (ops/nn/rnn_cells.py: lstm_cell_state and lstm_cell_output, gru_cell),
each one node, where the composite is a dozen ops. The input projection of a whole sequence is
one matrix product per layer and direction (x @ W_ih^T for all time steps at once); each step
then adds the hidden projection and applies the gates, which fuse into one kernel under
autojit.compile. A compiled step unrolls the time loop: the graph holds one copy of the step
per time step (docs/nn.md has the compile time and step time this gives at sequence length 64).

Gates, as torch orders them in the weight rows:
    RNN:   h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)          (or relu)
    LSTM:  i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh)
           c' = sigmoid(f) c + sigmoid(i) tanh(g);  h' = sigmoid(o) tanh(c')  (then h' W_hr^T
           with proj_size)
    GRU:   r = sigmoid(x_r + h_r);  z = sigmoid(x_z + h_z);  n = tanh(x_n + r h_n)
           h' = (1 - z) n + z h      (x_* and h_* include their biases)
"""

from __future__ import annotations

import math

import numpy as np

from ..ops.elementwise import sigmoid, tanh
from ..ops.indexing import index_select
from ..ops.layout import cat, chunk, narrow, stack
from ..ops.nn.rnn_cells import gru_cell, lstm_cell_output, lstm_cell_state
from ..tensor import dtypes
from ..tensor.creation import empty, zeros
from ..tensor.state import state as thread_state
from ..tensor.tensor import Tensor
from . import init
from .layer_functions import dropout, linear
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

# The dtypes whose eager cells bind ops/nn/rnn_cells.py's fused ops (the rest keep the composites:
# bfloat16 and float16 round after every op of them, as torch's do).
_FUSED_DTYPES = (dtypes.float32, dtypes.float64)
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _relu(x: Tensor) -> Tensor:
    return x.relu()


def _activation(mode: str):
    return _relu if mode == "RNN_RELU" else tanh


def _fused(gates: Tensor) -> bool:
    """Whether a step binds ops/nn/rnn_cells.py's fused gates: eager, on the CPU, in float32 or
    float64."""
    return thread_state.tracer is None and gates._dtype in _FUSED_DTYPES and \
        gates._payload.__class__ is np.ndarray


def _rnn_step(mode: str, projected_input: Tensor, hidden, weight_hh: Tensor, bias_hh,
              weight_hr=None):
    """One time step: (new hidden state, what the step outputs). `projected_input` is
    x W_ih^T + b_ih; `hidden` is h, or (h, c) for the LSTM."""
    if mode == "LSTM":
        h, c = hidden
        gates = projected_input + linear(h, weight_hh, bias_hh)
        if _fused(gates):
            # Eager on the CPU, the gates' arithmetic is two ops, each one node
            # (ops/nn/rnn_cells.py): a dozen ops' dispatch and backward nodes fewer a step.
            c = lstm_cell_state(gates, c)
            h = lstm_cell_output(gates, c)
        else:
            # Traced, each gate keeps its own sigmoid: the slice pass (ir/passes/slices.py)
            # joins the four zero-padded pieces of the gradient into one cat.
            i, f, g, o = gates.chunk(4, -1)
            c = sigmoid(f) * c + sigmoid(i) * tanh(g)
            h = sigmoid(o) * tanh(c)
        if weight_hr is not None:
            h = linear(h, weight_hr)
        return (h, c), h
    if mode == "GRU":
        gates_h = linear(hidden, weight_hh, bias_hh)
        if _fused(gates_h):
            # Eager on the CPU: one op and one node for the gates (ops/nn/rnn_cells.py).
            h = gru_cell(projected_input, gates_h, hidden)
            return h, h
        size = hidden.shape[-1]
        # r and z from one add over all three thirds (x_n + h_n unused) and one sigmoid over
        # the first two: elementwise, the per-gate form's values, with fewer nodes.
        r, z = chunk(sigmoid(narrow(projected_input + gates_h, -1, 0, 2 * size)), 2, -1)
        n = tanh(narrow(projected_input, -1, 2 * size, size) +
                 r * narrow(gates_h, -1, 2 * size, size))
        h = (hidden - n) * z + n  # torch's GRU cell's form: three ops, torch's roundings
        return h, h
    h = _activation(mode)(projected_input + linear(hidden, weight_hh, bias_hh))
    return h, h


# ---- the multi-layer layers ---------------------------------------------------------------------

class RNNBase(Module):
    """The layers' shared machinery: parameters per layer and direction, the time loop over a
    padded or packed sequence, dropout between layers, bidirectional concatenation."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + suffix,
                            Parameter(empty(*shape, dtype=dtype, device=device)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every weight and bias."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for parameter in self.parameters():
            init.uniform_(parameter, -bound, bound)

    def flatten_parameters(self) -> None:
        """Does nothing, as torch's does everywhere but on cuDNN: torch packs the weights into
        one contiguous buffer for cuDNN's kernels; autojit's recurrent layers read each
        parameter where it is (eagerly and in compiled code), with no cuDNN to feed."""

    @property
    def all_weights(self) -> list:
        """Per layer and direction, its parameters in torch's order."""
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional
                                                                   else 1))
        names = self._flat_weights_names
        return [[getattr(self, name) for name in names[start:start + per]]
                for start in range(0, len(names), per)]

    def _weights(self, layer: int, direction: int) -> tuple:
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")

        def get(name):
            return getattr(self, name + suffix, None)

        return (get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"),
                get("weight_hr"))

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text

    # ---- forward ---------------------------------------------------------------------------------

    def forward(self, input, hx=None):  # noqa: A002
        packed = isinstance(input, PackedSequence)
        directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if packed:
            data, batch_sizes = input.data, input.batch_sizes.tolist()
            batch, unbatched = batch_sizes[0], False
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                                 f"{input.ndim}D instead")
            unbatched = input.ndim == 2
            if unbatched:
                input = input.unsqueeze(1)  # noqa: A001
            elif self.batch_first:
                input = input.transpose(0, 1)  # noqa: A001
            if input.shape[-1] != self.input_size:
                raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                                   f"{self.input_size}, got {input.shape[-1]}")
            batch = input.shape[1]
            batch_sizes = [batch] * input.shape[0]
            data = input
        states = self._initial_states(hx, batch, unbatched, directions, real_hidden, data,
                                      input.sorted_indices if packed else None)
        final_h, final_c = [], []
        layer_input = data
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                state = (states[0][index], states[1][index]) if self.mode == "LSTM" else \
                    states[index]
                output, last = self._run_direction(layer_input, batch_sizes, packed, layer,
                                                   direction, state)
                outputs.append(output)
                if self.mode == "LSTM":
                    final_h.append(last[0])
                    final_c.append(last[1])
                else:
                    final_h.append(last)
            layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = dropout(layer_input, self.dropout, True)
        h_n = stack(final_h, 0)
        c_n = stack(final_c, 0) if self.mode == "LSTM" else None
        if packed:
            if input.unsorted_indices is not None:
                h_n = index_select(h_n, 1, input.unsorted_indices)
                if c_n is not None:
                    c_n = index_select(c_n, 1, input.unsorted_indices)
            output = PackedSequence(layer_input, input.batch_sizes, input.sorted_indices,
                                    input.unsorted_indices)
        else:
            output = layer_input
            if unbatched:
                output, h_n = output.squeeze(1), h_n.squeeze(1)
                c_n = c_n.squeeze(1) if c_n is not None else None
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, ((h_n, c_n) if self.mode == "LSTM" else h_n)

    def _initial_states(self, hx, batch, unbatched, directions, real_hidden, like,
                        sorted_indices):
        """h0 (and c0 for the LSTM) per layer and direction, each (batch, size)."""
        count = self.num_layers * directions
        if hx is None:
            h = zeros(count, batch, real_hidden, dtype=like.dtype, device=like.device)
            c = zeros(count, batch, self.hidden_size, dtype=like.dtype, device=like.device)
            return (h, c) if self.mode == "LSTM" else h
        states = list(hx) if self.mode == "LSTM" else [hx]
        if self.mode == "LSTM" and len(states) != 2:
            raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0)")
        sizes = [real_hidden, self.hidden_size]
        checked = []
        for state, size in zip(states, sizes):
            if unbatched:
                if state.ndim != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but "
                                       f"got {state.ndim}-D tensor")
                state = state.unsqueeze(1)
            elif state.ndim != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                   f"{state.ndim}-D tensor")
            expected = (count, batch, size)
            if tuple(state.shape) != expected:
                raise RuntimeError(f"Expected hidden size {expected}, got {list(state.shape)}")
            if sorted_indices is not None:
                state = index_select(state, 1, sorted_indices)
            checked.append(state)
        return tuple(checked) if self.mode == "LSTM" else checked[0]

    def _run_direction(self, data, batch_sizes: list, packed: bool, layer: int, direction: int,
                       state):
        """(output for every step, final state) of one layer in one direction. `data` is
        (T, B, in) padded, or (sum of batch sizes, in) packed."""
        weight_ih, weight_hh, bias_ih, bias_hh, weight_hr = self._weights(layer, direction)
        projected = linear(data, weight_ih, bias_ih)  # every step's input projection at once
        steps = len(batch_sizes)
        if not packed:
            order = range(steps - 1, -1, -1) if direction == 1 else range(steps)
            outputs = [None] * steps
            for step in order:
                state, outputs[step] = _rnn_step(self.mode, projected[step], state, weight_hh,
                                                 bias_hh, weight_hr)
            return stack(outputs, 0), state
        offsets = [0]
        for size in batch_sizes:
            offsets.append(offsets[-1] + size)
        lstm = self.mode == "LSTM"
        outputs = [None] * steps
        if direction == 0:
            # Sequences end in decreasing length order: when the batch shrinks, the rows that
            # leave keep their state as their final one.
            finished = []
            for step in range(steps):
                size = batch_sizes[step]
                current = _rows(state, size, lstm)
                if step and size < batch_sizes[step - 1]:
                    finished.append(_rows_from(state, size, lstm))
                state, outputs[step] = _rnn_step(self.mode,
                                                 projected[offsets[step]:offsets[step + 1]],
                                                 current, weight_hh, bias_hh, weight_hr)
            finished.append(state)
            final = _join_states(finished[::-1], lstm)
            return cat(outputs, 0), final
        # Backwards: a sequence starts at its last step, from the initial state; the batch
        # grows as longer sequences join.
        initial, running = state, None
        for step in range(steps - 1, -1, -1):
            size = batch_sizes[step]
            if running is None:
                running = _rows(initial, size, lstm)
            elif size > _batch(running, lstm):
                running = _join_states([running, _rows_between(initial, _batch(running, lstm),
                                                               size, lstm)], lstm)
            running, outputs[step] = _rnn_step(self.mode,
                                               projected[offsets[step]:offsets[step + 1]],
                                               running, weight_hh, bias_hh, weight_hr)
        return cat(outputs, 0), running


def _batch(state, lstm: bool) -> int:
    return int((state[0] if lstm else state).shape[0])


def _rows(state, size: int, lstm: bool):
    return (state[0][:size], state[1][:size]) if lstm else state[:size]


def _rows_from(state, start: int, lstm: bool):
    return (state[0][start:], state[1][start:]) if lstm else state[start:]


def _rows_between(state, start: int, stop: int, lstm: bool):
    return (state[0][start:stop], state[1][start:stop]) if lstm else state[start:stop]


def _join_states(parts: list, lstm: bool):
    if lstm:
        return cat([part[0] for part in parts], 0), cat([part[1] for part in parts], 0)
    return cat(parts, 0)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu), over
    num_layers layers (torch.nn.RNN).

        >>> import autojit
        >>> rnn = autojit.nn.RNN(4, 8, num_layers=2, batch_first=True)
        >>> output, h_n = rnn(autojit.randn(3, 5, 4))
        >>> output.shape, h_n.shape
        (autojit.Size([3, 5, 8]), autojit.Size([2, 3, 8]))
    """

    def __init__(self, *args, nonlinearity: str = "tanh", **kwargs) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory over num_layers layers, optionally projected (torch.nn.LSTM);
    returns (output, (h_n, c_n)).

        >>> import autojit
        >>> lstm = autojit.nn.LSTM(4, 8, proj_size=3)
        >>> output, (h_n, c_n) = lstm(autojit.randn(5, 2, 4))
        >>> output.shape, h_n.shape, c_n.shape
        (autojit.Size([5, 2, 3]), autojit.Size([1, 2, 3]), autojit.Size([1, 2, 8]))
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit over num_layers layers (torch.nn.GRU).

        >>> import autojit
        >>> gru = autojit.nn.GRU(4, 8, bidirectional=True)
        >>> output, h_n = gru(autojit.randn(5, 2, 4))
        >>> output.shape, h_n.shape
        (autojit.Size([5, 2, 16]), autojit.Size([2, 2, 8]))
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("GRU", *args, **kwargs)


# ---- the cells ----------------------------------------------------------------------------------

class RNNCellBase(Module):
    """One step of a recurrent layer: weight_ih, weight_hh, bias_ih, bias_hh."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, gates: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty(gates * hidden_size, input_size, dtype=dtype,
                                         device=device))
        self.weight_hh = Parameter(empty(gates * hidden_size, hidden_size, dtype=dtype,
                                         device=device))
        if bias:
            self.bias_ih = Parameter(empty(gates * hidden_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(empty(gates * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) for every weight and bias."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for parameter in self.parameters():
            init.uniform_(parameter, -bound, bound)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text

    def _batched(self, input, hx, count: int):  # noqa: A002
        """(input as a batch, the states as batches or zeros, whether the input was 1-D)."""
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.ndim}D instead")
        unbatched = input.ndim == 1
        if unbatched:
            input = input.unsqueeze(0)  # noqa: A001
        if hx is None:
            zero = zeros(input.shape[0], self.hidden_size, dtype=input.dtype,
                         device=input.device)
            states = [zero] * count
        else:
            states = list(hx) if count > 1 else [hx]
            if unbatched:
                states = [state.unsqueeze(0) for state in states]
        return input, states, unbatched


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu) (torch.nn.RNNCell).

        >>> import autojit
        >>> cell = autojit.nn.RNNCell(4, 8)
        >>> cell(autojit.randn(3, 4)).shape
        autojit.Size([3, 8])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002
        input, (h,), unbatched = self._batched(input, hx, 1)  # noqa: A001
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        h, _ = _rnn_step(mode, linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh,
                         self.bias_hh)
        return h.squeeze(0) if unbatched else h


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c') (torch.nn.LSTMCell).

        >>> import autojit
        >>> cell = autojit.nn.LSTMCell(4, 8)
        >>> h, c = cell(autojit.randn(3, 4))
        >>> h.shape, c.shape
        (autojit.Size([3, 8]), autojit.Size([3, 8]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002
        input, (h, c), unbatched = self._batched(input, hx, 2)  # noqa: A001
        (h, c), _ = _rnn_step("LSTM", linear(input, self.weight_ih, self.bias_ih), (h, c),
                              self.weight_hh, self.bias_hh)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    """One GRU step (torch.nn.GRUCell).

        >>> import autojit
        >>> cell = autojit.nn.GRUCell(4, 8)
        >>> cell(autojit.randn(3, 4)).shape
        autojit.Size([3, 8])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002
        input, (h,), unbatched = self._batched(input, hx, 1)  # noqa: A001
        h, _ = _rnn_step("GRU", linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh,
                         self.bias_hh)
        return h.squeeze(0) if unbatched else h
