"""Bad indices and integer division by zero on CUDA tensors: torch's error, eager and compiled.

The cases of tests/test_index_errors.py (those that reach a kernel) run on CUDA tensors and
must give what torch gives on the CPU: eagerly, a kernel's failed check is read back at once
and the op's NumPy impl finds the message; compiled, the plan's kernels set one status word
that the plan reads after its last step (cuda/plan.py), and the graph's reference run
finds the message. Under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator
from test_index_errors import CASES, check_case

import autojit

pytestmark = MARKS

ON_CUDA = ("cross_entropy_target_7", "nll_loss_image_target", "embedding_minus_1",
           "index_select_dim1_negative", "gather_minus_1", "scatter_add_3",
           "getitem_two_rows_position_first", "setitem_5", "floor_divide_by_zero",
           "remainder_by_zero_int32", "softmax_empty_dim", "logsumexp_empty_dim")


@pytest.mark.parametrize("case", [case for case in CASES if case.name in ON_CUDA],
                         ids=lambda case: case.name)
def test_like_torch_eager_and_compiled_on_cuda(case):
    check_case(case, device="cuda")


def test_a_bad_index_in_a_compiled_cuda_plan_raises_after_the_run_and_writes_nothing():
    """The gather after the failed check skips the index rather than read outside x; the
    plan raises eager's error and the captured tensor's update is not written back."""
    weight = autojit.ones(4, 3, device="cuda")

    def step(index):
        rows = weight.gather(0, index)
        with autojit.no_grad():
            weight.add_(rows.sum())
        return rows

    compiled = autojit.compile(step)
    good, bad = autojit.tensor([[0, 3, 1]]).cuda(), autojit.tensor([[0, 4, 1]]).cuda()
    compiled(good)
    before = weight.cpu().numpy().copy()
    with pytest.raises(RuntimeError, match="^index 4 is out of bounds for dimension 0 with "
                                           "size 4$"):
        compiled(bad)
    np.testing.assert_array_equal(weight.cpu().numpy(), before)
    assert compiled.executables[0].plan.checks
    compiled(good)
    np.testing.assert_array_equal(weight.cpu().numpy(), before + 3 * before)  # equal rows
