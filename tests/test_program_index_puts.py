"""Index writes in a compiled plan that used to keep it in its Python loop, now run natively
(schedule/row_steps.py's IndexedRowsStep) so that the plan stays one native program.

T5 shifts its decoder inputs right with `shifted[..., 1:] = ids[..., :-1]` and
`shifted[..., 0] = start`: the second write is an index_put of a Python number at positions
the plan makes as a strided view (a basic slice of the flat positions), and ran through its
NumPy impl ("Python loop: index_put ran through its NumPy impl"). Its relative position
bias, looked up from a (buckets, heads) table and permuted to (heads, query, key), sends the
table a gradient whose values are that permute's transposed view, which the routines do not
read either. Compiled equals eager over calls with new inputs, and eager equals torch.
"""

from __future__ import annotations

import numpy as np
import pytest
from native_program_cases import NEEDS_WORKERS

import autojit

pytestmark = NEEDS_WORKERS


def shifted(lib, ids, table, fill):
    """T5's `_shift_right` (with a float write of `fill` beside it) then an embedding."""
    out = ids.new_zeros(ids.shape)
    out[..., 1:] = ids[..., :-1].clone()
    out[..., 0] = 3
    out.masked_fill_(out == -100, 0)
    rows = lib.nn.functional.embedding(out, table)          # (batch, length, width)
    rows = rows.clone()
    rows[:, 0] = fill
    return (rows.tanh() * 1.5).sum().reshape(())


def biased(lib, buckets, table, scores):
    """T5's relative position bias: a (buckets, heads) table looked up at each (query, key)
    pair's bucket, permuted to (heads, query, key) and added to the attention scores."""
    bias = lib.nn.functional.embedding(buckets, table).permute(2, 0, 1)
    return (scores + bias).softmax(-1).square().sum().reshape(())


def shift_inputs(lib, seed: int):
    rng = np.random.default_rng(seed)
    ids = lib.tensor(rng.integers(0, 20, (4, 16)))
    table = lib.tensor(rng.standard_normal((20, 8)).astype(np.float32))
    return ids, table


def bias_inputs(lib, seed: int):
    rng = np.random.default_rng(seed)
    buckets = lib.tensor(rng.integers(0, 32, (24, 24)))
    table = lib.tensor(rng.standard_normal((32, 4)).astype(np.float32), requires_grad=True)
    scores = lib.tensor(rng.standard_normal((4, 24, 24)).astype(np.float32))
    return buckets, table, scores


def test_a_number_written_at_a_basic_slice_runs_in_the_native_program_and_equals_eager():
    compiled = autojit.compile(lambda ids, table: shifted(autojit, ids, table, 0.25))
    for index in range(6):
        values = shift_inputs(autojit, index)
        got = compiled(*values).item()
        assert got == pytest.approx(shifted(autojit, *values, 0.25).item(), rel=1e-6)
        if index == 2:
            plan = compiled.fusion_groups()
            assert plan.splitlines()[-1].startswith("native program:"), plan.splitlines()[-1]
            assert "copied in C order" in plan, plan


def test_a_transposed_gradient_of_a_lookup_runs_in_the_native_program_and_equals_eager():
    def step(buckets, table, scores):
        table.grad = None
        loss = biased(autojit, buckets, table, scores)
        loss.backward()
        return loss.detach(), table.grad

    compiled = autojit.compile(step)
    for index in range(6):
        values = bias_inputs(autojit, index)
        got = [value.numpy().copy() for value in compiled(*values)]
        expected = [value.numpy() for value in step(*values)]
        for mine, theirs in zip(got, expected):
            np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-7)
        if index == 2:
            plan = compiled.fusion_groups()
            assert plan.splitlines()[-1].startswith("native program:"), plan.splitlines()[-1]


def test_a_number_that_does_not_fit_raises_eagers_error():
    def write(x):
        out = x.clone()
        out[..., 0] = 300
        return out

    x = autojit.zeros(3, 4, dtype=autojit.int8)
    with pytest.raises(RuntimeError) as eager:
        write(x)
    with pytest.raises(RuntimeError) as raised:
        autojit.compile(write)(x)
    assert str(raised.value) == str(eager.value)


def test_eager_equals_torch():
    torch = pytest.importorskip("torch")
    mine = shifted(autojit, *shift_inputs(autojit, 3), 0.25).item()
    theirs = shifted(torch, *shift_inputs(torch, 3), 0.25).item()
    assert mine == pytest.approx(theirs, rel=1e-5)
    mine_values, theirs_values = bias_inputs(autojit, 4), bias_inputs(torch, 4)
    biased(autojit, *mine_values).backward()
    biased(torch, *theirs_values).backward()
    np.testing.assert_allclose(mine_values[1].grad.numpy(), theirs_values[1].grad.numpy(),
                               rtol=1e-4, atol=1e-6)


def test_a_run_beside_another_copies_into_an_array_of_its_own():
    """The step's kept copy serves one run at a time (plan.py's REUSE): a run that starts
    while another is under way copies its strided operand elsewhere."""
    from autojit.codegen.schedule.environment_keys import REUSE
    from autojit.codegen.schedule.row_steps import IndexedRowsStep

    compiled = autojit.compile(lambda ids, table: shifted(autojit, ids, table, 0.25))
    for index in range(3):
        compiled(*shift_inputs(autojit, index))
    plan = compiled._latest().plan
    step = next(step for step in plan.steps
                if isinstance(step, IndexedRowsStep) and step.copy_sources)
    position = next(place for place, copy in enumerate(step._copies) if copy is not None)
    key, shape, _, kept = step._copies[position]
    source = np.arange(np.prod(shape), dtype=kept.dtype).reshape(shape)
    strided = np.empty(kept.shape + (2,), kept.dtype)[..., 0]  # any array not C-contiguous
    alone = step._contiguous(position, strided, {key: source, REUSE: True})
    beside = step._contiguous(position, strided, {key: source, REUSE: False})
    assert alone is kept
    assert not np.shares_memory(beside, kept)
    np.testing.assert_array_equal(beside, alone)


def test_calls_on_two_threads_at_once_equal_eager():
    """Two threads calling the compiled function at once: the run that starts while the
    other is under way copies its strided operands into arrays of its own (the kept ones
    serve one run at a time), so each call equals eager."""
    import threading

    compiled = autojit.compile(lambda ids, table: shifted(autojit, ids, table, 0.25))
    for index in range(3):
        compiled(*shift_inputs(autojit, index))
    failures = []

    def worker(offset: int) -> None:
        for index in range(offset, offset + 40):
            values = shift_inputs(autojit, index)
            got = compiled(*values).item()
            expected = shifted(autojit, *values, 0.25).item()
            # (a run beside another takes the Python loop, whose float32 sums may be in
            # another order than the program's: a stale or shared copy would be far off)
            if got != pytest.approx(expected, rel=1e-4, abs=1e-5):
                failures.append((index, got, expected))

    threads = [threading.Thread(target=worker, args=(offset,)) for offset in (100, 200)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:3]
