"""The direct eager paths of the small ops in recurrent loops (bench/eager_loops.py), against
torch and against the general dispatch they stand in for: the pieces of split, chunk and
narrow (ops/layout/eager_views.py `slice_piece`, called by ops/layout/__init__.py `_pieces`), an
embedding's rows (ops/indexing/__init__.py `_eager_rows`), and the recurrent cells that use them
(nn/rnn.py `_rnn_step`).

Each piece must be what bind(SLICE) makes (a view of the same base sharing its version counter,
the same `_view_source` for in-place writes and grad_fn regeneration, a SliceBackward0 node)
and what torch gives (values, errors, gradients to second order); likewise the rows, whose
saved index must still notice a write to the ids. Eager on the CPU, the cells' gates are the
fused primitives of ops/nn/rnn_cells.py (one node each: lstm_cell_state and lstm_cell_output,
gru_cell): values and first-order gradients must be those of the per-gate form bit for bit,
and torch's within rounding, to second order; traced, and in bfloat16, the cells stay
composites.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from torch_compare import same_as_torch

import autojit
from autojit.ops import indexing, registry
from autojit.ops.layout import primitives as layout

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)

PIECES = [
    ("chunk 3 last", lambda L, x: x.chunk(3, -1)),
    ("chunk 4 dim 1", lambda L, x: L.chunk(x, 4, 1)),
    ("chunk 2 dim 0", lambda L, x: x.chunk(2, 0)),
    ("chunk more than the extent", lambda L, x: x.chunk(8, 0)),
    ("chunk uneven", lambda L, x: x.chunk(5, -1)),
    ("chunk 1", lambda L, x: x.chunk(1, -1)),
    ("split size", lambda L, x: x.split(5, -1)),
    ("split sizes", lambda L, x: L.split(x, [3, 0, 7, 2], dim=1)),
    ("split sizes dim 0", lambda L, x: x.split([1, 3], 0)),
    ("narrow", lambda L, x: x.narrow(1, 2, 5)),
    ("narrow from the end", lambda L, x: x.narrow(-1, -4, 3)),
    ("narrow all", lambda L, x: x.narrow(0, 0, 4)),
    ("narrow empty", lambda L, x: x.narrow(1, 3, 0)),
    ("pieces of a transpose", lambda L, x: x.t().chunk(3, 0)),
    ("pieces of a piece", lambda L, x: x.chunk(2, 1)[1].chunk(3, 1)),
]
ERRORS = [
    ("chunk 0", lambda L, x: x.chunk(0, 1)),
    ("chunk dim", lambda L, x: x.chunk(2, 2)),
    ("split sizes", lambda L, x: x.split([3, 4], 1)),
    ("split negative", lambda L, x: x.split(-1, 1)),
    ("narrow past the end", lambda L, x: x.narrow(1, 10, 3)),
    ("narrow start", lambda L, x: x.narrow(1, -13, 3)),
    ("narrow length", lambda L, x: x.narrow(1, 0, -1)),
    ("narrow dim", lambda L, x: x.narrow(-3, 0, 1)),
]


@pytest.mark.parametrize("name, pieces", PIECES + ERRORS, ids=[n for n, _ in PIECES + ERRORS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pieces_match_torch(name, pieces, dtype):
    array = rng.standard_normal((4, 12)).astype(dtype)
    same_as_torch(pieces, array, rtol=0, atol=0)
    same_as_torch(pieces, array, grad=False, rtol=0, atol=0)
    same_as_torch(lambda L, x: pieces(L, x.to(L.int64)), array, grad=False, rtol=0, atol=0)


def _second_order(L, array, pieces):
    x = L.tensor(array, requires_grad=True)
    parts = pieces(L, x * 1.5)
    total = sum(((part * part).sin() * (position + 1)).sum()
                for position, part in enumerate(parts))
    (grad,) = L.autograd.grad(total, x, create_graph=True)
    (second,) = L.autograd.grad((grad * grad).sum(), x)
    return grad.detach().numpy(), second.numpy()


@pytest.mark.parametrize("name, pieces", PIECES, ids=[n for n, _ in PIECES])
def test_gradients_of_pieces_match_torch_to_second_order(name, pieces):
    array = rng.standard_normal((4, 12))
    for mine, theirs in zip(_second_order(autojit, array, pieces),
                            _second_order(torch, array, pieces), strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def _general(monkeypatch):
    """Make every piece take bind (the general dispatch)."""
    monkeypatch.setattr(layout, "slice_piece", lambda *args: None)


def _described(pieces) -> list:
    return [(piece.grad_fn.name() if piece.grad_fn is not None else None,
             piece.requires_grad, piece._base is not None, piece._view_source[1].name,
             piece._view_source[2], piece.detach().numpy().tolist()) for piece in pieces]


@pytest.mark.parametrize("requires_grad", [True, False])
def test_direct_pieces_are_the_general_paths(requires_grad, monkeypatch):
    array = rng.standard_normal((3, 10)).astype(np.float32)
    x = autojit.tensor(array, requires_grad=requires_grad)
    direct = x.chunk(3, 1) + x.split([2, 8], 1) + (x.narrow(0, 1, 2),)
    with autojit.no_grad():
        unrecorded = x.chunk(3, 1)
    _general(monkeypatch)
    y = autojit.tensor(array, requires_grad=requires_grad)
    general = y.chunk(3, 1) + y.split([2, 8], 1) + (y.narrow(0, 1, 2),)
    assert _described(direct) == _described(general)
    assert all(piece._view_source[0] is x for piece in direct)
    assert all(piece.grad_fn is None and not piece.requires_grad for piece in unrecorded)
    # A view shares its base's version counter: a write through one piece is seen by all.
    base = autojit.tensor(array)
    first, second = base.chunk(2, 1)
    first.add_(1)
    assert base._version == first._version == second._version == 1
    np.testing.assert_array_equal(base.numpy()[:, :5], array[:, :5] + 1)


def test_equal_pieces_share_their_attrs():
    # Each step of a loop slices the same places: the nodes keep one dict between them, not
    # one each for the cyclic collector to track while the graph lives.
    x, y = (autojit.randn(3, 8, requires_grad=True) for _ in range(2))

    def slice_node(piece):  # chunk's pieces share one SplitBackward0 over their own slices
        return piece.grad_fn._roots[piece._output_nr][0]

    first, second = slice_node(x.chunk(2, 1)[1]), y.narrow(1, 4, 4).grad_fn
    assert first.attrs is second.attrs
    assert first.attrs == {"slices": ((0, 3, 1), (4, 8, 1))}
    assert slice_node(x.chunk(2, 0)[0]).attrs is not first.attrs


def _overlapping(L, array, dtype):
    """Pieces that overlap, leave gaps, are used twice or not at all, beside other uses of
    their source: the backward writes their gradients into one buffer (engine.py
    `_embed_into_buffer`) where it can."""
    x = L.tensor(array).to(getattr(L, dtype)).requires_grad_()
    y = x * 1.5
    a, b, c = y.chunk(3, 1)
    wide, late = y.narrow(1, 1, 6), y[:, 7:]
    total = (a * a).sum() + c.exp().sum() + (wide.sin() * 2).sum() + (late * 3).sum() + \
        (a * 4).sum() + (y * y).sum() * 0.25 + x.narrow(0, 1, 2).cos().sum()
    seen = []
    x.register_hook(lambda grad: seen.append(grad.detach().clone()))
    total.backward(retain_graph=True)
    first = x.grad.detach().clone()
    total.backward()
    (of_piece,) = L.autograd.grad((b * b).sum() + (y * 2).sum(), b)
    return [first, x.grad, seen[0], of_piece]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_gradients_written_into_one_buffer_match_torch(dtype):
    array = rng.standard_normal((3, 9))
    mine, theirs = _overlapping(autojit, array, dtype), _overlapping(torch, array, dtype)
    tolerance = {"float32": 1e-6, "float64": 1e-12, "bfloat16": 1e-2}[dtype]
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(a.float().numpy(), b.float().numpy(), rtol=tolerance,
                                   atol=tolerance)


def test_a_written_buffer_is_not_written_after_it_is_handed_on():
    # y's gradient is a buffer its pieces wrote; y's add hands it on as it is to x2's node and
    # to w's, and w's own pieces must not write into it then: x2's node may read it later.
    # Which node runs first follows the order of the loss's terms: every order is tried.
    x, z = (autojit.randn(2, 6, requires_grad=True) for _ in range(2))
    x2, w = x * 1, z * 1
    y = x2 + w
    p, q = y.chunk(2, 1)
    r, s = w.chunk(2, 1)
    terms = {"p": p * 2, "q": q * 3, "r": r * 5, "s": s * 7, "x": x2 * 11}
    for order in itertools.permutations(terms):
        x.grad = z.grad = None
        sum(terms[name].sum() for name in order).backward(retain_graph=True)
        np.testing.assert_array_equal(x.grad.numpy(), [[13.0] * 3 + [14.0] * 3] * 2)
        np.testing.assert_array_equal(z.grad.numpy(), [[7.0] * 3 + [10.0] * 3] * 2)


def _written(L, array):
    """Pieces of a tensor that is then written in place: their grad_fn regenerated. (narrow:
    torch refuses a write to the base of split's and chunk's pieces, which autojit allows.)"""
    x = L.tensor(array, requires_grad=True)
    y = x * 2
    a, b = y.narrow(1, 0, 3), y.narrow(1, 3, 3)
    y.mul_(3)
    c = a.narrow(1, 1, 2)
    total = (a * a).sum() + (b.exp() * 2).sum() + c.sum()
    (grad,) = L.autograd.grad(total, x)
    return a.detach().numpy(), b.detach().numpy(), grad.numpy()


def test_pieces_of_a_tensor_written_in_place_match_torch():
    array = rng.standard_normal((3, 6))
    for mine, theirs in zip(_written(autojit, array), _written(torch, array), strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_no_direct_piece_while_a_vjp_chain_is_recorded(monkeypatch):
    x = autojit.zeros(3, 4, requires_grad=True)
    made = []
    monkeypatch.setattr(layout, "slice_piece",
                        lambda *args: made.append(args) or None)
    monkeypatch.setattr(registry, "STEP", lambda *args: None)
    pieces = x.chunk(2, 1)
    assert not made and all(piece.grad_fn is not None for piece in pieces)


def test_a_compiled_chunk_equals_eager():
    def fn(x):
        x = x.detach().requires_grad_()
        a, b, c = x.chunk(3, -1)
        out = (a.sigmoid() * b.tanh() + c).sum()
        (grad,) = autojit.autograd.grad(out, x)
        return out.detach(), grad

    compiled = autojit.compile(fn)
    for _ in range(3):
        x = autojit.tensor(rng.standard_normal((4, 9)).astype(np.float32))
        for want, got in zip(fn(x), compiled(x), strict=True):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


# ---- an embedding's rows --------------------------------------------------------------------

ROWS = [
    ("ids", lambda L, w: L.nn.functional.embedding(L.tensor([3, 0, 3, 5]), w)),
    ("int32 ids", lambda L, w: L.nn.functional.embedding(L.tensor([1, 5], dtype=L.int32), w)),
    ("2-D ids", lambda L, w: L.nn.functional.embedding(L.tensor([[2, 2], [0, 4]]), w)),
    ("no ids", lambda L, w: L.nn.functional.embedding(L.tensor([], dtype=L.int64), w)),
    ("index_select", lambda L, w: L.index_select(w, 0, L.tensor([4, 4, 1]))),
    ("index_select dim 1", lambda L, w: w.index_select(1, L.tensor([2, 0]))),
    ("out of range", lambda L, w: L.nn.functional.embedding(L.tensor([0, 6]), w)),
    ("negative", lambda L, w: L.nn.functional.embedding(L.tensor([-1]), w)),
    ("select out of range", lambda L, w: L.index_select(w, 0, L.tensor([7]))),
    ("select negative", lambda L, w: w.index_select(0, L.tensor([2, -2]))),
]


@pytest.mark.parametrize("name, rows", ROWS, ids=[n for n, _ in ROWS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_match_torch(name, rows, dtype):
    weight = rng.standard_normal((6, 3)).astype(dtype)
    same_as_torch(rows, weight, rtol=0, atol=0)
    same_as_torch(rows, weight, grad=False, rtol=0, atol=0)


def _rows_second_order(L, array):
    weight = L.tensor(array, requires_grad=True)
    rows = L.nn.functional.embedding(L.tensor([1, 4, 1, 0]), weight * 1.5)
    (grad,) = L.autograd.grad((rows.sin() * rows).sum(), weight, create_graph=True)
    (second,) = L.autograd.grad((grad * grad).sum(), weight)
    return grad.detach().numpy(), second.numpy()


def test_gradients_of_rows_match_torch_to_second_order():
    array = rng.standard_normal((5, 3))
    for mine, theirs in zip(_rows_second_order(autojit, array), _rows_second_order(torch, array),
                            strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def _rows_with_ids_written(L, array):
    weight = L.tensor(array, requires_grad=True)
    ids = L.tensor([1, 2])
    rows = L.nn.functional.embedding(ids, weight)
    ids.add_(1)
    try:
        rows.sum().backward()
    except RuntimeError as error:
        return type(error).__name__
    return weight.grad.numpy().tolist()


def test_a_write_to_the_ids_is_noticed_as_in_torch():
    array = rng.standard_normal((5, 3))
    assert _rows_with_ids_written(autojit, array) == _rows_with_ids_written(torch, array)


def test_direct_rows_are_the_general_paths(monkeypatch):
    array = rng.standard_normal((5, 3)).astype(np.float32)
    ids = autojit.tensor([4, 0, 4])

    def rows():
        weight = autojit.tensor(array, requires_grad=True)
        out = autojit.nn.functional.embedding(ids, weight)
        saved = out.grad_fn._saved[1].tensor
        assert saved._version_counter is ids._version_counter
        described = (out.grad_fn.name(), out.detach().numpy().tolist(), tuple(saved.shape))
        (out * autojit.tensor([[1.0], [2.0], [3.0]])).sum().backward()
        return described, weight.grad.numpy().tolist()

    direct = rows()
    monkeypatch.setattr(indexing, "_eager_rows", lambda *args: None)
    assert rows() == direct


# ---- the recurrent cells ----------------------------------------------------------------------

def _gru_per_gate(x, h, cell):
    """torch's GRU cell written with a sigmoid per gate (nn/rnn.py's form before)."""
    F = autojit.nn.functional
    x_r, x_z, x_n = F.linear(x, cell.weight_ih, cell.bias_ih).chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, cell.weight_hh, cell.bias_hh).chunk(3, -1)
    r = (x_r + h_r).sigmoid()
    z = (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return ((h - n) * z + n,)


def _lstm_per_gate(x, h, c, cell):
    F = autojit.nn.functional
    gates = F.linear(x, cell.weight_ih, cell.bias_ih) + F.linear(h, cell.weight_hh, cell.bias_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _cell_gradients(run, inputs, parameters):
    """The outputs, and the first and second order gradients of a weighted sum of them."""
    outputs = run(*inputs)
    weights = np.random.default_rng(1)
    total = sum((out * autojit.tensor(weights.standard_normal(tuple(out.shape)))
                 .to(out.dtype)).sum() for out in outputs)
    first = autojit.autograd.grad(total, inputs + parameters, create_graph=True)
    second = autojit.autograd.grad(sum((g * g).sum() for g in first), inputs + parameters)
    return [t.detach().numpy() for t in (*outputs, *first, *second)]


@pytest.mark.parametrize("kind", ["GRUCell", "LSTMCell"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_equal_their_per_gate_form_bit_for_bit(kind, dtype, bias):
    autojit.manual_seed(0)
    cell = getattr(autojit.nn, kind)(5, 7, bias=bias).to(getattr(autojit, dtype))
    states = 2 if kind == "LSTMCell" else 1
    arrays = [rng.standard_normal((3, 5))] + [rng.standard_normal((3, 7))] * states
    inputs = [autojit.tensor(a).to(getattr(autojit, dtype)).requires_grad_() for a in arrays]
    parameters = list(cell.parameters())
    if kind == "GRUCell":
        mine = _cell_gradients(lambda x, h: (cell(x, h),), inputs, parameters)
        per_gate = _cell_gradients(lambda x, h: _gru_per_gate(x, h, cell), inputs, parameters)
    else:
        mine = _cell_gradients(lambda x, h, c: cell(x, (h, c)), inputs, parameters)
        per_gate = _cell_gradients(lambda x, h, c: _lstm_per_gate(x, h, c, cell), inputs,
                                   parameters)
    # The outputs and first-order gradients are the per-gate form's bits; the second-order
    # ones are sums of the same terms in another order (the double-backward graphs differ).
    first_order = len(mine) - len(inputs) - len(parameters)
    for a, b in zip(mine[:first_order], per_gate[:first_order], strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(mine[first_order:], per_gate[first_order:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5 if dtype == "float32" else 1e-13,
                                   atol=1e-6 if dtype == "float32" else 1e-14)


def _torch_cell_second_order(lib, kind, arrays, state_dict):
    cell = getattr(lib.nn, kind)(5, 7).double()
    cell.load_state_dict({k: lib.tensor(v) for k, v in state_dict.items()})
    x, *state = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = cell(x, tuple(state) if kind == "LSTMCell" else state[0])
    outputs = out if isinstance(out, tuple) else (out,)
    total = sum((o * o.cos()).sum() for o in outputs)
    leaves = [x, *state, *cell.parameters()]
    first = lib.autograd.grad(total, leaves, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in first), leaves)
    return [t.detach().numpy() for t in (*outputs, *first, *second)]


@pytest.mark.parametrize("kind", ["GRUCell", "LSTMCell"])
def test_cells_match_torch_to_second_order(kind):
    torch.manual_seed(0)
    reference = getattr(torch.nn, kind)(5, 7).double()
    state_dict = {k: v.detach().numpy() for k, v in reference.state_dict().items()}
    arrays = [rng.standard_normal((3, 5))] + [rng.standard_normal((3, 7))] * (
        2 if kind == "LSTMCell" else 1)
    for mine, theirs in zip(_torch_cell_second_order(autojit, kind, arrays, state_dict),
                            _torch_cell_second_order(torch, kind, arrays, state_dict),
                            strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["GRUCell", "LSTMCell"])
def test_wide_cells_match_torch(kind):
    # 64 x 512 gates: the LSTM's sigmoid over all four is 2^15 contiguous floats, which the
    # native loop computes (ops/elementwise/native_math.py), the per-gate sigmoids SciPy's expit.
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(32, 128)
    mine = getattr(autojit.nn, kind)(32, 128)
    mine.load_state_dict({k: autojit.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((64, 32)).astype(np.float32) * 3
    h = rng.standard_normal((64, 128)).astype(np.float32)
    state_mine = (autojit.tensor(h), autojit.tensor(h)) if kind == "LSTMCell" else \
        autojit.tensor(h)
    state_theirs = (torch.tensor(h), torch.tensor(h)) if kind == "LSTMCell" else torch.tensor(h)
    out_mine, out_theirs = mine(autojit.tensor(x), state_mine), theirs(torch.tensor(x),
                                                                      state_theirs)
    for a, b in zip(out_mine if kind == "LSTMCell" else (out_mine,),
                    out_theirs if kind == "LSTMCell" else (out_theirs,), strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=2e-5,
                                   atol=2e-6)


@pytest.mark.parametrize("kind", ["GRUCell", "LSTMCell"])
def test_eager_cells_bind_the_fused_gates(kind):
    cell = getattr(autojit.nn, kind)(5, 7)
    x = autojit.randn(3, 5)
    out = cell(x)
    if kind == "LSTMCell":
        assert out[0].grad_fn.name() == "LstmCellOutputBackward0"
        assert out[1].grad_fn.name() == "LstmCellStateBackward0"
    else:
        assert out.grad_fn.name() == "GruCellBackward0"
    # bfloat16 rounds after each op of the composite, as torch's cells do: no fused node.
    low = cell.to(autojit.bfloat16)(x.to(autojit.bfloat16))
    for tensor in low if kind == "LSTMCell" else (low,):
        assert "Cell" not in tensor.grad_fn.name()


@pytest.mark.parametrize("kind", ["GRUCell", "LSTMCell"])
def test_a_compiled_cell_loop_equals_eager(kind):
    autojit.manual_seed(0)
    cell = getattr(autojit.nn, kind)(4, 6)
    xs = autojit.randn(5, 3, 4)

    def run(xs):
        state = None
        total = 0.0
        for x in xs:
            state = cell(x, state)
            total = total + (state[0] if kind == "LSTMCell" else state).square().sum()
        return autojit.autograd.grad(total, list(cell.parameters()))

    eager = run(xs)
    compiled = autojit.compile(run)(xs)
    for a, b in zip(eager, compiled, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["GRUCell", "LSTMCell"])
def test_cells_under_function_transforms_match_torch(kind):
    """Per-sample gradients (vmap of grad of functional_call: the fused gates' batch rule and
    VJP) and jacfwd (their JVP) of a cell, against torch.func."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(3, 5).double()
    mine = getattr(autojit.nn, kind)(3, 5).double()
    mine.load_state_dict({k: autojit.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    x, h = rng.standard_normal((4, 3)), rng.standard_normal((4, 5))

    def state_of(lib, hidden):
        return (hidden, hidden) if kind == "LSTMCell" else hidden

    def first(out):
        return out[0] if kind == "LSTMCell" else out

    def per_sample(lib, cell):
        def loss(params, xi, hi):
            out = lib.func.functional_call(cell, params, (xi[None], state_of(lib, hi[None])))
            return (first(out) ** 2).sum()

        params = {k: v.detach() for k, v in cell.named_parameters()}
        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, lib.tensor(x), lib.tensor(h))
        return {k: v.detach().numpy() for k, v in grads.items()}

    def jacobian(lib, cell):
        def out(xi):
            return cell(xi, state_of(lib, lib.tensor(h[:1])))[-1] if kind == "LSTMCell" \
                else cell(xi, lib.tensor(h[:1]))
        return lib.func.jacfwd(out)(lib.tensor(x[:1])).detach().numpy()

    expected, got = per_sample(torch, theirs), per_sample(autojit, mine)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(jacobian(autojit, mine), jacobian(torch, theirs), rtol=1e-10,
                               atol=1e-12)
