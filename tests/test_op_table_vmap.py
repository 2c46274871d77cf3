"""The op table under vmap: every row's function mapped over a batch of two examples equals the
two examples run one at a time.

For each row's float64 samples (its first dtype otherwise), a second example is made from the
first by an affine change of its floating arrays (integer and bool arrays, indices and masks,
stay as they are, so they stay valid), and the row's function is vmapped over the floating
arrays (in_dims 0) with the other arguments unbatched, then over every array. Each primitive the
row runs either has a batching rule or runs once per index with a warning: the rows check the
values either way, and `test_primitives_have_batching_rules` lists which primitives still
lack a rule.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_op_table import ROWS, flat_tensors, reseed, rows_where, samples_for, to_autojit

import autojit
from autojit.func import vmap
from autojit.ops import REGISTRY
from autojit.ops.batching import rule_of
from autojit.ops.registry import Decomposition

# Primitives that run once per index under vmap until they get a rule of their own.
# LAPACK's symmetric-indefinite solve and cholesky_ex's info run once per index of the batch.
WITHOUT_RULES: set = {"linalg_ldl_solve", "linalg_cholesky_info"}


def _second_example(value):
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return np.asarray(value * 0.5 + 0.25, dtype=value.dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_second_example(v) for v in value)
    return value


def _mapped(value, everything: bool):
    """Whether an argument is batched: floating arrays, or with `everything` every array."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f" or everything
    if isinstance(value, (list, tuple)):
        return any(_mapped(v, everything) for v in value)
    return False


def _stack(first, second, batched: bool):
    if not batched:
        return to_autojit(first)
    if isinstance(first, (list, tuple)):
        return type(first)(_stack(a, b, _mapped(a, True)) for a, b in zip(first, second))
    return autojit.tensor(np.stack([first, second]))


def _in_dims(value, batched: bool):
    if isinstance(value, (list, tuple)) and batched:
        return type(value)(_in_dims(v, _mapped(v, True)) for v in value)
    return 0 if batched else None


def _check_row(row, everything: bool):
    dtype = "float64" if "float64" in row.dtypes else row.dtypes[0]
    for index, sample in enumerate(samples_for(row, dtype)):
        args, kwargs = sample.args, sample.kwargs
        flags = [_mapped(arg, everything) for arg in args]
        if not any(flags):
            continue
        second = tuple(_second_example(arg) for arg in args)
        expected = []
        for example in (args, second):
            reseed(row)
            expected.append(row.function(*to_autojit(example),
                                         **{k: to_autojit(v) for k, v in kwargs.items()}))
        stacked = tuple(_stack(a, b, flag) for a, b, flag in zip(args, second, flags))
        in_dims = tuple(_in_dims(arg, flag) for arg, flag in zip(args, flags))

        def call(*mapped_args, kwargs=kwargs):
            return row.function(*mapped_args, **{k: to_autojit(v) for k, v in kwargs.items()})

        reseed(row)
        actual = vmap(call, in_dims=in_dims)(*stacked)
        got = flat_tensors(actual)
        one, two = flat_tensors(expected[0]), flat_tensors(expected[1])
        assert len(got) == len(one), f"{row.name} sample {index}: {len(got)} outputs"
        for position, (batch, a, b) in enumerate(zip(got, one, two)):
            assert batch.dtype is a.dtype, f"{row.name} sample {index} output {position}"
            reference = np.stack([np.asarray(a), np.asarray(b)])
            np.testing.assert_allclose(np.asarray(batch), reference, rtol=1e-6, atol=1e-7,
                                       err_msg=f"{row.name} sample {index} output {position}")


# Ops whose result's shape or type depends on the values: torch's vmap refuses them too (with
# an unbatched mask, masked_select's shape is the same for every example and it runs here).
RAISE_UNDER_VMAP = {"nonzero", "unique", "masked_select", "bincount", "equal", "allclose",
                    "argwhere", "is_nonzero", "unique_consecutive"}
# Ops that read a value to choose their algorithm, which vmap cannot give them where torch's
# can (docs/differences.md): matrix_exp's number of squarings.
READ_VALUES = {"matrix_exp"}


def _runnable(row) -> bool:
    return row.seed is None and row.name not in RAISE_UNDER_VMAP | READ_VALUES


@pytest.mark.parametrize("name", sorted(RAISE_UNDER_VMAP))
def test_data_dependent_ops_raise_under_vmap(name):
    row = next(row for row in ROWS if row.name == name)
    with pytest.raises(RuntimeError, match="vmap"):
        _check_row(row, everything=True)


@pytest.mark.parametrize("name", sorted(READ_VALUES))
def test_ops_that_read_values_raise_under_vmap(name):
    row = next(row for row in ROWS if row.name == name)
    with pytest.raises(RuntimeError, match="vmap"):
        _check_row(row, everything=False)


@pytest.mark.parametrize("row", rows_where(_runnable, "vmap"))
def test_vmap_floating_arguments(row):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="vmap: there is no batching rule")
        _check_row(row, everything=False)


@pytest.mark.parametrize("row", rows_where(_runnable, "vmap"))
def test_vmap_every_argument(row):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="vmap: there is no batching rule")
        _check_row(row, everything=True)


def test_primitives_have_batching_rules():
    """Every primitive has a batching rule, or stands for a composite (a Decomposition) whose
    primitives vmap runs each by its rule, but those listed; a rule added makes this fail
    until the list shrinks, so the list stays true."""
    missing = {name for name, op in REGISTRY.items()
               if rule_of(op) is None and op.lowering.__class__ is not Decomposition}
    assert missing == WITHOUT_RULES
