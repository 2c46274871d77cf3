"""Argument errors against torch's: each call runs with torch and with autojit, which must
raise the same exception type with the same first line (or return the same values): a Python
number where torch's signature takes a Tensor (functions, methods, reflected operators called
unbound), an out= sharing memory with an input or broadcast, reductions over an empty dim, a
dim of a 0-d tensor, and the other argument checks torch's op database has error samples for.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def _outcome(library, case):
    try:
        result = case(library)
    except Exception as error:  # noqa: BLE001 - compared
        return type(error).__name__, str(error).splitlines()[0]
    return ("returned", np.asarray(result.tolist() if hasattr(result, "tolist") else result))


def _ints(L):
    return L.tensor([1, 2, 3])


CASES = {
    "eq_number_first": lambda L: L.eq(2, _ints(L)),
    "eq_number_second": lambda L: L.eq(_ints(L), 2),
    "maximum_number": lambda L: L.maximum(_ints(L), 2),
    "logical_and_number": lambda L: L.logical_and(_ints(L), 2),
    "method_maximum_number": lambda L: _ints(L).maximum(2),
    "method_logical_or_number": lambda L: _ints(L).logical_or(True),
    "max_number_first": lambda L: L.max(2, _ints(L)),
    "clamp_max_number": lambda L: L.clamp_max(_ints(L), 2),
    "radd_unbound": lambda L: L.Tensor.__radd__(2, _ints(L)),
    "gather_out_is_input": lambda L: (lambda x: L.gather(x, 0, L.tensor([1, 0]), out=x))(
        L.ones(3)),
    "take_out_broadcast": lambda L: L.take(L.ones(6), L.tensor([2, 1, 0]),
                                           out=L.ones(1).expand(3)),
    "cat_out_is_input": lambda L: (lambda x: L.cat([x, x], out=x))(L.ones(2, 2)),
    "cat_of_a_tensor": lambda L: L.cat(L.ones(2, 3)),
    "cat_of_nothing": lambda L: L.cat([]),
    "amax_empty": lambda L: L.amax(L.ones(5, 0, 5)),
    "amax_empty_dim": lambda L: L.amax(L.ones(5, 0, 5), 1),
    "argmax_empty": lambda L: L.argmax(L.ones(5, 0)),
    "max_empty_dim": lambda L: L.max(L.ones(5, 0, 5), 1),
    "unbind_0d": lambda L: L.unbind(L.tensor(1.0), 0),
    "fft2_0d": lambda L: L.fft.fftn(L.tensor(1.0), dim=(0,)),
    "reshape_ambiguous": lambda L: L.ones(0, 5).reshape(0, -1),
    "roll_no_shifts": lambda L: L.roll(L.ones(5), []),
    "narrow_copy_dim": lambda L: L.narrow_copy(L.ones(10, 5, 20), 3, 0, 0),
    "narrow_copy_length": lambda L: L.narrow_copy(L.ones(10), 0, 0, -1),
    "masked_fill_complex": lambda L: L.ones(2, dtype=L.int64).masked_fill(
        L.tensor(False), L.tensor(1j)),
    "gradient_repeated_dim": lambda L: L.gradient(L.ones(3, 3), spacing=0.1, dim=(1, 1)),
    "gelu_approximate": lambda L: L.nn.functional.gelu(L.ones(2), approximate="x"),
    "mean_integer_dtype": lambda L: L.mean(L.ones(3), dtype=L.int64),
    "arange_truncated_step": lambda L: L.arange(0, 64, 0.5, dtype=L.int64),
    "prelu_0d": lambda L: L.nn.functional.prelu(L.tensor(1.0), L.ones(2)),
    "rms_norm_empty_shape": lambda L: L.nn.functional.rms_norm(L.ones(1, 2, 3), []),
    "triplet_margin": lambda L: L.nn.functional.triplet_margin_loss(
        L.ones(3, 4), L.ones(3, 4), L.ones(3, 4), margin=-1.0),
    "multinomial_out_dtype": lambda L: L.multinomial(
        L.ones(1, 2, dtype=L.float64), 2, out=L.ones(1, 2, dtype=L.float64)),
    "multinomial_negative": lambda L: L.multinomial(L.tensor([1.0, -1.0, 1.0]), 2, True),
    "bernoulli_out_broadcast": lambda L: L.bernoulli(L.ones(6) / 2,
                                                     out=L.ones(1).expand(6)),
}


# Compared by type only: torch's message names its C++ base class (torch._C.TensorBase).
TYPE_ONLY = {"radd_unbound"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_like_torch(name):
    mine, theirs = _outcome(autojit, CASES[name]), _outcome(torch, CASES[name])
    assert mine[0] == theirs[0], f"autojit {mine}, torch {theirs}"
    if mine[0] == "returned":
        np.testing.assert_array_equal(mine[1], theirs[1])
    elif name not in TYPE_ONLY:
        assert mine[1] == theirs[1]
