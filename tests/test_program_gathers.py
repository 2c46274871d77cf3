"""torch.gather along the last dim in a compiled plan, run natively (schedule/row_steps.py's
GatherRowsStep) so that the plan stays one native program.

transformers' BERT embeddings take their token-type ids from a buffer with
`torch.gather(buffer.expand(batch, -1), 1, position_ids)` when none are given: the gather ran
through its NumPy impl and kept the whole plan in its Python loop ("Python loop: gather ran
through its NumPy impl"). Compiled equals eager over calls with new inputs, eager equals torch,
and an index out of range raises eager's error.
"""

from __future__ import annotations

import numpy as np
import pytest
from native_program_cases import NEEDS_WORKERS

import autojit

pytestmark = NEEDS_WORKERS


def embed(lib, table, buffer, positions, scale):
    """The token-type embedding of a BERT-like model: ids gathered from a buffer at the
    positions, looked up, then an elementwise tail; and a float gather of the result."""
    ids = lib.gather(buffer.expand(positions.shape[0], -1), 1, positions)
    rows = lib.nn.functional.embedding(ids, table)              # (batch, length, width)
    picked = lib.gather(rows * scale, 2, positions[:, :, None].remainder(rows.shape[2]))
    return (rows.tanh().sum() + picked.square().sum()).reshape(())


def tensors(lib, seed: int, batch: int = 3):
    rng = np.random.default_rng(seed)
    table = lib.tensor(rng.standard_normal((4, 8)).astype(np.float32))
    buffer = lib.tensor(rng.integers(0, 4, (1, 32)))
    positions = lib.tensor(rng.integers(0, 32, (batch, 10)))
    scale = lib.tensor(rng.standard_normal((batch, 10, 8)).astype(np.float32))
    return table, buffer, positions, scale


def test_gathers_along_the_last_dim_run_in_the_native_program_and_equal_eager():
    compiled = autojit.compile(lambda *values: embed(autojit, *values))
    for index in range(6):
        values = tensors(autojit, index)
        got = compiled(*values).item()
        assert got == pytest.approx(embed(autojit, *values).item(), rel=1e-6)
        if index == 2:
            plan = compiled.fusion_groups()
            assert plan.splitlines()[-1].startswith("native program:"), plan.splitlines()[-1]
            assert plan.count("along the last dim") == 2, plan


def test_a_gather_with_its_gradient_equals_eager_compiled():
    def step(x, positions):
        x.grad = None
        loss = (x.gather(-1, positions) ** 2).sum()
        loss.backward()
        return loss.detach(), x.grad

    compiled = autojit.compile(step)
    rng = np.random.default_rng(7)
    for _ in range(4):
        x = autojit.tensor(rng.standard_normal((5, 6)), requires_grad=True)
        positions = autojit.tensor(rng.integers(-6, 6, (5, 9)) % 6)
        got = [value.numpy().copy() for value in compiled(x, positions)]
        expected = [value.numpy() for value in step(x, positions)]
        for mine, theirs in zip(got, expected):
            np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_an_index_out_of_range_raises_eagers_error():
    values = list(tensors(autojit, 0))
    compiled = autojit.compile(lambda *values: embed(autojit, *values))
    for _ in range(3):
        compiled(*values)
    values[2] = values[2].clone()
    values[2][1, 4] = 40
    with pytest.raises(RuntimeError) as eager:
        embed(autojit, *values)
    with pytest.raises(RuntimeError) as raised:
        compiled(*values)
    assert str(raised.value) == str(eager.value)


def test_eager_equals_torch():
    torch = pytest.importorskip("torch")
    mine = embed(autojit, *tensors(autojit, 3)).item()
    theirs = embed(torch, *tensors(torch, 3)).item()
    assert mine == pytest.approx(theirs, rel=1e-5)
