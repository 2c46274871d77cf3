"""Slice simplification (ir/passes/slices.py) and the layouts a plan writes in parts (cat and
embed_slice as an allocation and kernels storing into it, group_steps.part_steps).

The pass takes the zero padding out of the adjoints of slices: a sum of embed_slices of
disjoint parts is a cat, a slice of an embed reads the embedded value (or zeros). Each case is
checked on the graph, against the reference interpreter (equal but for the sign of zeros), and
compiled against eager, with the plan running natively.
"""

from __future__ import annotations

import numpy as np

import autojit
from autojit.ir import interpret, make_graph
from autojit.ir.passes.pipeline import optimize
from autojit.ir.passes.slices import slice_simplification


def ops(graph) -> list:
    return [node.op.name for node in graph.nodes]


def check_graph(fn, *shapes):
    inputs = [autojit.ones(*shape) for shape in shapes]
    graph = make_graph(fn, *inputs)
    simplified = slice_simplification(graph)
    generator = np.random.default_rng(0)
    arrays = [generator.standard_normal(shape).astype(np.float32) for shape in shapes]
    for want, got in zip(interpret(graph, *arrays), interpret(simplified, *arrays),
                         strict=True):
        np.testing.assert_array_equal(got, want)
    return graph, optimize(graph)


def compile_and_compare(fn, *shapes, calls=4):
    compiled = autojit.compile(fn)
    generator = np.random.default_rng(1)
    for _ in range(calls):
        arrays = [generator.standard_normal(shape).astype(np.float32) for shape in shapes]
        want = fn(*[autojit.tensor(array) for array in arrays])
        got = compiled(*[autojit.tensor(array) for array in arrays])
        for expected, actual in zip(want, got, strict=True):
            np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    return compiled.executables[-1].plan


def gate_gradient(gates):
    gates = gates.detach().requires_grad_()
    i, f, g, o = gates.chunk(4, -1)
    out = (i.sigmoid() * g.tanh() + f.sigmoid() * 2) * o.sigmoid()
    (grad,) = autojit.autograd.grad(out.sum(), gates)
    return grad, out


def test_the_gradient_of_chunks_is_one_cat_of_the_parts():
    graph, optimized = check_graph(gate_gradient, (3, 8))
    assert ops(graph).count("embed_slice") == 4
    assert "embed_slice" not in ops(optimized) and ops(optimized).count("cat") == 1


def test_the_gradient_of_time_steps_is_a_cat_along_time():
    def fn(x):
        x = x.detach().requires_grad_()
        steps = [x[t] * (t + 1) for t in range(x.shape[0])]
        (grad,) = autojit.autograd.grad(sum(step.sum() for step in steps), x)
        return (grad,)

    graph, optimized = check_graph(fn, (4, 2, 3))
    assert ops(graph).count("embed_slice") == 4
    assert "embed_slice" not in ops(optimized)


def test_parts_that_leave_gaps_are_joined_with_zeros_between_them():
    def fn(x):
        x = x.detach().requires_grad_()
        total = x[:, :2].exp().sum() + (x[:, 5:] * 3).sum()
        (grad,) = autojit.autograd.grad(total, x)
        return (grad,)

    graph, optimized = check_graph(fn, (3, 7))
    assert "embed_slice" not in ops(optimized) and "cat" in ops(optimized)
    plan = compile_and_compare(fn, (3, 7))
    assert plan.program, plan.program_refusal


def test_a_slice_of_an_embed_reads_the_embedded_value_or_zeros():
    def fn(x):
        x = x.detach().requires_grad_()
        last = x[:, -1]  # the last step of a batch-first sequence
        (grad,) = autojit.autograd.grad((last * last).sum(), x)
        time_major = grad.transpose(0, 1)
        return time_major[2] + 1, time_major[0] * 2, time_major[1:]

    graph, optimized = check_graph(fn, (2, 3, 4))
    assert "embed_slice" in ops(graph)
    # The embed is permuted, then read at its own part (the value), outside it (zeros) and
    # across it (still an embed).
    assert ops(optimized).count("embed_slice") == 1


def test_overlapping_parts_and_a_single_embed_stay_embeds():
    def fn(x):
        x = x.detach().requires_grad_()
        total = x[:, :4].sum() + x[:, 2:].exp().sum()
        (grad,) = autojit.autograd.grad(total, x)
        return (grad,)

    graph, optimized = check_graph(fn, (3, 6))
    assert ops(optimized).count("embed_slice") == 2 and "cat" not in ops(optimized)
    plan = compile_and_compare(fn, (3, 6))
    # Each embed is zeros and a copy, written by kernels: the plan still runs natively.
    assert "node embed_slice" not in plan.describe()
    assert plan.program, plan.program_refusal


def test_a_cat_is_written_in_place_by_kernels():
    def fn(x, y):
        joined = autojit.cat([x.t(), y[1:3] * 2, y[:1].to(autojit.float64)], 0)
        return joined + 1, autojit.cat([x, x], 1).exp()

    plan = compile_and_compare(fn, (4, 3), (5, 4))
    assert "node cat" not in plan.describe(), plan.describe()
    assert plan.program, plan.program_refusal


def test_a_compiled_lstm_step_runs_natively_and_equals_eager():
    def build():
        autojit.manual_seed(0)
        lstm = autojit.nn.LSTM(4, 6, num_layers=2, batch_first=True)
        head = autojit.nn.Linear(6, 1)
        return lstm, head, autojit.optim.Adam([*lstm.parameters(), *head.parameters()],
                                              lr=1e-2)

    def make(parts):
        lstm, head, optimizer = parts

        def step(x, y):
            output, _ = lstm(x)
            loss = autojit.nn.functional.mse_loss(head(output[:, -1]), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            return loss.detach()
        return step

    eager_parts, compiled_parts = build(), build()
    eager, compiled = make(eager_parts), autojit.compile(make(compiled_parts))
    generator = np.random.default_rng(2)
    x = autojit.tensor(generator.standard_normal((3, 5, 4)).astype(np.float32))
    y = autojit.tensor(generator.standard_normal((3, 1)).astype(np.float32))
    for _ in range(4):
        np.testing.assert_allclose(compiled(x, y).item(), eager(x, y).item(), rtol=1e-5)
    for want, got in zip(eager_parts[0].parameters(), compiled_parts[0].parameters()):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4,
                                   atol=1e-6)
    graph = compiled.executables[-1].joint if compiled.executables[-1].joint is not None \
        else compiled.executables[-1].graph
    assert "embed_slice" not in ops(graph)


def test_pieces_of_a_cat_are_computed_in_place_where_nothing_else_reads_them():
    def fn(x, y):
        # Four pieces only the cat reads: the kernel stores them into the cat's array.
        joined = autojit.cat([x.exp(), x * 2, y.tanh(), y + 1], 1)
        # A cat of rows whose pieces are cats: each inner cat is a block of the outer one.
        rows = autojit.cat([autojit.cat([x, y], 1).reshape(1, 3, 8) * 1,
                            autojit.cat([y, x], 1).reshape(1, 3, 8)], 0)
        return joined.sum(0), rows + 0

    plan = compile_and_compare(fn, (3, 4), (3, 4))
    text = plan.describe()
    assert "stored into" in text and " in %" in text, text
    assert plan.program, plan.program_refusal


def test_a_piece_read_elsewhere_or_returned_is_copied():
    def fn(x):
        piece = x.exp()
        return autojit.cat([piece, x], 1), piece  # the piece is returned: it keeps its array

    plan = compile_and_compare(fn, (3, 4))
    assert "stored into" not in plan.describe(), plan.describe()
