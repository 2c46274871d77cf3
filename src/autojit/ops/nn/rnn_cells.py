"""The recurrent cells' gate arithmetic as primitives: the LSTM cell's new state and output, and
the GRU cell's new hidden state, each one op where the composite is eight to a dozen.

An eager loop over time steps (nn.LSTMCell, nn.GRUCell, and nn.LSTM and nn.GRU step by step)
pays autojit's dispatch and autograd record per op, and the backward pass a node per op: the
gates are where an eager LSTM step spent most of its time beside torch's. As torch's own fused
cells do (`_thnn_fused_lstm_cell`, `_thnn_fused_gru_cell`), each op here runs its gates as one
NumPy routine and records one node; its VJP recomputes the gates from its inputs, in autojit
ops, so double backward and forward mode come from the primitives below it.

- lstm_cell_state(gates, c) = sigmoid(f) c + sigmoid(i) tanh(g), with i, f, g, o the four
  quarters of gates' last dim (torch's gate order);
- lstm_cell_output(gates, c') = sigmoid(o) tanh(c');
- gru_cell(gi, gh, h) = (h - n) z + n, with r, z = sigmoid(gi_rz + gh_rz) and
  n = tanh(gi_n + r gh_n), where gi and gh are the input's and the hidden state's projections
  (thirds r, z, n of the last dim).

The routines compute in the composites' order, with the same sigmoid and tanh routines, so the
values are the composites' bits. Leading dims broadcast (vmap's rule). Traced, each op is its
composite (Decomposition), which fuses into the step's kernels. nn/rnn.py binds them eagerly
for float32 and float64 on the CPU; elsewhere it keeps the composites.
"""

from __future__ import annotations

import numpy as np

from .. import batching
from .. import elementwise as ew
from ..dtype_rules import rule_float
from ..elementwise.derivatives import tanh_backward
from ..layout import cat, embed_slice, narrow
from ..lowering import Decomposition
from ..registry import bind, define_op
from ..shape_rules import broadcast_shapes

__all__ = ["LSTM_CELL_OUTPUT", "LSTM_CELL_STATE", "GRU_CELL", "gru_cell", "lstm_cell_output",
           "lstm_cell_state"]

_sigmoid, _tanh = ew.SIGMOID.impl, ew.TANH.impl


def _quarter(x, index: int, size: int):
    return narrow(x, -1, index * size, size)


def _within_gates(piece, start: int, size: int):
    """The gradient of `size` gate columns from `start`, as a gradient of all four gates (zeros
    elsewhere): embed_slice, one op a backward chain can copy (autograd/vjp_chain.py)."""
    shape = tuple(piece.shape)
    slices = [(0, n, 1) for n in shape[:-1]] + [(start, start + shape[-1], 1)]
    return embed_slice(piece, shape[:-1] + (4 * size,), slices)


def _sigmoid_slope(s):
    """sigmoid's derivative from its value, as the sigmoid VJP forms it."""
    return s * (1 - s)


# ---- lstm_cell_state ---------------------------------------------------------------------------

def _state_shape(gates: tuple, c: tuple) -> tuple:
    if not gates or not c or gates[-1] != 4 * c[-1]:
        raise ValueError(f"the gates' last dim ({gates[-1] if gates else None}) must be four "
                         f"times the cell state's ({c[-1] if c else None})")
    return broadcast_shapes(gates[:-1], c[:-1]) + (c[-1],)


def _state_impl(gates: np.ndarray, c: np.ndarray) -> np.ndarray:
    size = c.shape[-1]
    i, f, g = (gates[..., k * size:(k + 1) * size] for k in range(3))
    kept = np.multiply(_sigmoid(f), c)
    return np.add(kept, np.multiply(_sigmoid(i), _tanh(g)), out=kept)


def _state_composite(gates, c):
    size = c.shape[-1]
    i, f, g = (_quarter(gates, k, size) for k in range(3))
    return ew.sigmoid(f) * c + ew.sigmoid(i) * ew.tanh(g)


def _state_vjp(ctx, grad):
    gates, c = ctx.inputs
    size = c.shape[-1]
    i, f, g = (_quarter(gates, k, size) for k in range(3))
    forget, written, candidate = ew.sigmoid(f), ew.sigmoid(i), ew.tanh(g)
    needs = ctx.needs_input_grad
    gates_grad = None
    if needs[0]:
        # The gradient of each gate as the per-gate composite's VJPs form it; o's quarter is 0.
        pieces = [(grad * candidate) * _sigmoid_slope(written),
                  (grad * c) * _sigmoid_slope(forget),
                  tanh_backward(grad * written, candidate)]
        gates_grad = _within_gates(cat(pieces, -1), 0, size)
    return gates_grad, grad * forget if needs[1] else None


def _state_jvp(inputs, tangents, out, attrs):
    (gates, c), (gates_tangent, c_tangent) = inputs, tangents
    size = c.shape[-1]
    written, forget = ew.sigmoid(_quarter(gates, 0, size)), ew.sigmoid(_quarter(gates, 1, size))
    candidate = ew.tanh(_quarter(gates, 2, size))
    result = None if c_tangent is None else forget * c_tangent
    if gates_tangent is not None:
        i, f, g = (_quarter(gates_tangent, k, size) for k in range(3))
        moved = (f * _sigmoid_slope(forget)) * c + (i * _sigmoid_slope(written)) * candidate + \
            written * (g * (1 - candidate * candidate))
        result = moved if result is None else result + moved
    return result


LSTM_CELL_STATE = define_op(
    name="lstm_cell_state", arity=2, shape=_state_shape, dtype=rule_float, impl=_state_impl,
    vjp=_state_vjp, saves=(0, 1), lowering=Decomposition(_state_composite), jvp=_state_jvp,
    batch=batching.broadcasting_rule, grad_name="LstmCellStateBackward0")


def lstm_cell_state(gates, c):
    """sigmoid(f) c + sigmoid(i) tanh(g) of an LSTM's gates (i, f, g, o) and cell state."""
    return bind(LSTM_CELL_STATE, (gates, c), {})


# ---- lstm_cell_output --------------------------------------------------------------------------

def _output_impl(gates: np.ndarray, c: np.ndarray) -> np.ndarray:
    size = c.shape[-1]
    result = _sigmoid(gates[..., 3 * size:])
    return np.multiply(result, _tanh(c), out=result if result.shape == c.shape else None)


def _output_composite(gates, c):
    return ew.sigmoid(_quarter(gates, 3, c.shape[-1])) * ew.tanh(c)


def _output_vjp(ctx, grad):
    gates, c = ctx.inputs
    size = c.shape[-1]
    gate, squashed = ew.sigmoid(_quarter(gates, 3, size)), ew.tanh(c)
    needs = ctx.needs_input_grad
    gates_grad = None
    if needs[0]:
        gates_grad = _within_gates((grad * squashed) * _sigmoid_slope(gate), 3 * size, size)
    return gates_grad, tanh_backward(grad * gate, squashed) if needs[1] else None


def _output_jvp(inputs, tangents, out, attrs):
    (gates, c), (gates_tangent, c_tangent) = inputs, tangents
    gate, squashed = ew.sigmoid(_quarter(gates, 3, c.shape[-1])), ew.tanh(c)
    result = None if c_tangent is None else gate * (c_tangent * (1 - squashed * squashed))
    if gates_tangent is not None:
        moved = (_quarter(gates_tangent, 3, c.shape[-1]) * _sigmoid_slope(gate)) * squashed
        result = moved if result is None else result + moved
    return result


LSTM_CELL_OUTPUT = define_op(
    name="lstm_cell_output", arity=2, shape=_state_shape, dtype=rule_float, impl=_output_impl,
    vjp=_output_vjp, saves=(0, 1), lowering=Decomposition(_output_composite), jvp=_output_jvp,
    batch=batching.broadcasting_rule, grad_name="LstmCellOutputBackward0")


def lstm_cell_output(gates, c):
    """sigmoid(o) tanh(c) of an LSTM's gates (i, f, g, o) and new cell state."""
    return bind(LSTM_CELL_OUTPUT, (gates, c), {})


# ---- gru_cell ----------------------------------------------------------------------------------

def _gru_shape(gi: tuple, gh: tuple, h: tuple) -> tuple:
    if not gi or not gh or not h or gi[-1] != 3 * h[-1] or gh[-1] != 3 * h[-1]:
        raise ValueError(f"the projections' last dims ({gi[-1] if gi else None}, "
                         f"{gh[-1] if gh else None}) must be three times the hidden state's "
                         f"({h[-1] if h else None})")
    return broadcast_shapes(gi[:-1], gh[:-1], h[:-1]) + (h[-1],)


def _gru_impl(gi: np.ndarray, gh: np.ndarray, h: np.ndarray) -> np.ndarray:
    size = h.shape[-1]
    both = 2 * size
    rz = _sigmoid(np.add(gi[..., :both], gh[..., :both]))
    n = _tanh(np.add(gi[..., both:], np.multiply(rz[..., :size], gh[..., both:])))
    result = np.subtract(h, n)
    np.multiply(result, rz[..., size:], out=result)
    return np.add(result, n, out=result)


def _gates(gi, gh, size: int):
    """r, z, h_n and n of a GRU cell, in autojit ops."""
    rz = ew.sigmoid(narrow(gi, -1, 0, 2 * size) + narrow(gh, -1, 0, 2 * size))
    r, z = narrow(rz, -1, 0, size), narrow(rz, -1, size, size)
    hidden_n = narrow(gh, -1, 2 * size, size)
    return r, z, hidden_n, ew.tanh(narrow(gi, -1, 2 * size, size) + r * hidden_n)


def _gru_composite(gi, gh, h):
    r, z, _, n = _gates(gi, gh, h.shape[-1])
    return (h - n) * z + n


def _gru_vjp(ctx, grad):
    gi, gh, h = ctx.inputs
    r, z, hidden_n, n = _gates(gi, gh, h.shape[-1])
    needs = ctx.needs_input_grad
    gi_grad = gh_grad = None
    if needs[0] or needs[1]:
        n_grad = tanh_backward(grad - grad * z, n)
        rz_grad = cat([(n_grad * hidden_n) * _sigmoid_slope(r),
                       (grad * (h - n)) * _sigmoid_slope(z)], -1)
        gi_grad = cat([rz_grad, n_grad], -1) if needs[0] else None
        gh_grad = cat([rz_grad, n_grad * r], -1) if needs[1] else None
    return gi_grad, gh_grad, grad * z if needs[2] else None


def _gru_jvp(inputs, tangents, out, attrs):
    (gi, gh, h), (gi_tangent, gh_tangent, h_tangent) = inputs, tangents
    size = h.shape[-1]
    r, z, hidden_n, n = _gates(gi, gh, size)
    result = None if h_tangent is None else h_tangent * z
    if gi_tangent is None and gh_tangent is None:
        return result
    both = [t for t in (gi_tangent, gh_tangent) if t is not None]
    rz_tangent = narrow(both[0], -1, 0, 2 * size)
    if len(both) == 2:
        rz_tangent = rz_tangent + narrow(both[1], -1, 0, 2 * size)
    r_tangent = narrow(rz_tangent, -1, 0, size) * _sigmoid_slope(r)
    z_tangent = narrow(rz_tangent, -1, size, size) * _sigmoid_slope(z)
    inner = r_tangent * hidden_n
    if gi_tangent is not None:
        inner = inner + narrow(gi_tangent, -1, 2 * size, size)
    if gh_tangent is not None:
        inner = inner + r * narrow(gh_tangent, -1, 2 * size, size)
    n_tangent = inner * (1 - n * n)
    moved = n_tangent * (1 - z) + (h - n) * z_tangent
    return moved if result is None else result + moved


GRU_CELL = define_op(
    name="gru_cell", arity=3, shape=_gru_shape, dtype=rule_float, impl=_gru_impl,
    vjp=_gru_vjp, saves=(0, 1, 2), lowering=Decomposition(_gru_composite), jvp=_gru_jvp,
    batch=batching.broadcasting_rule, grad_name="GruCellBackward0")


def gru_cell(gi, gh, h):
    """(h - n) z + n of a GRU cell, from the input's and hidden state's projections gi and gh
    (thirds r, z, n) and the hidden state h."""
    return bind(GRU_CELL, (gi, gh, h), {})
