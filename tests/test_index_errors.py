"""Bad indices and integer division by zero raise torch's error, eagerly and compiled.

Each case runs the same function on torch tensors and on autojit tensors, eagerly and through
`autojit.compile(fullgraph=True)`, and compares torch's exception type and message (or its
values, where torch returns: a softmax over a dimension of no entries). A compiled case first
runs on good data three times, so the failing call meets the plan in its steady state (the
native program where the plan has one), then on bad data of the same shapes, then on good data
again: the error comes from the kernels' checks at run time, not from tracing. Written once
for the CPU here; tests/test_cuda_index_errors.py runs the cases on CUDA tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


@dataclass
class Case:
    name: str
    function: object  # function(framework, functional, *tensors)
    good: tuple  # NumPy arrays (or Python values, passed as they are)
    bad: tuple | None = None  # the failing arguments; None: `good` itself fails or returns


def _i(*values, dtype=np.int64):
    return np.array(values, dtype)


X23 = np.arange(6.0).reshape(2, 3)
X234 = np.arange(24.0).reshape(2, 3, 4)
LOGITS = np.linspace(-1, 1, 6).reshape(2, 3)


def _setitem(t, F, x, index):
    y = x.clone()
    y[index] = -1.0
    return y


def _accumulate(t, F, x, index):
    y = x.clone()
    y[index] += 1.0
    return y


CASES = [
    # class targets
    Case("cross_entropy_target_7", lambda t, F, z, y: F.cross_entropy(z, y),
         (LOGITS, _i(0, 2)), (LOGITS, _i(0, 7))),
    Case("cross_entropy_target_minus_1", lambda t, F, z, y: F.cross_entropy(z, y),
         (LOGITS, _i(-100, 2)), (LOGITS, _i(-1, 2))),
    Case("cross_entropy_smoothed_weighted", lambda t, F, z, y, w: F.cross_entropy(
        z, y, weight=w, label_smoothing=0.1, reduction="sum"),
        (LOGITS, _i(1, 2), np.array([1.0, 2.0, 0.5])),
        (LOGITS, _i(3, 2), np.array([1.0, 2.0, 0.5]))),
    Case("nll_loss_image_target", lambda t, F, z, y: F.nll_loss(z, y, reduction="none"),
         (X234, np.zeros((2, 4), np.int64)), (X234, np.array([[0, 1, 2, 0], [0, 5, 0, 0]]))),
    Case("nll_loss_ignore_index", lambda t, F, z, y: F.nll_loss(z, y, ignore_index=7),
         (LOGITS, _i(7, 1)), (LOGITS, _i(7, 8))),
    # embedding, index_select
    Case("embedding_minus_1", lambda t, F, i, w: F.embedding(i, w),
         (_i(0, 2), X23.T.copy()), (_i(0, -1), X23.T.copy())),
    Case("embedding_3", lambda t, F, i, w: F.embedding(i, w),
         (_i(0, 2), X23.T.copy()), (_i(3, 0), X23.T.copy())),
    Case("index_select_dim0", lambda t, F, x, i: t.index_select(x, 0, i),
         (X23, _i(1, 0)), (X23, _i(1, 5))),
    Case("index_select_dim1_negative", lambda t, F, x, i: t.index_select(x, 1, i),
         (X23, _i(0, 2)), (X23, _i(0, -1))),
    Case("index_select_last_dim_int32", lambda t, F, x, i: t.index_select(x, 2, i),
         (X234, _i(3, 0, dtype=np.int32)), (X234, _i(4, 0, dtype=np.int32))),
    Case("index_select_vector", lambda t, F, x, i: t.index_select(x, 0, i),
         (np.arange(3.0), _i(2)), (np.arange(3.0), _i(-3))),
    # gather, scatter_add, take_along_dim
    Case("gather_minus_1", lambda t, F, x, i: t.gather(x, 1, i),
         (X23, _i(0, 2, 1, 0).reshape(2, 2)), (X23, _i(0, -1, 1, 0).reshape(2, 2))),
    Case("gather_dim0", lambda t, F, x, i: t.gather(x, 0, i),
         (X23, _i(0, 1, 1).reshape(1, 3)), (X23, _i(0, 2, 1).reshape(1, 3))),
    Case("scatter_add_minus_1", lambda t, F, x, i, s: t.scatter_add(x, 1, i, s),
         (np.zeros((2, 3)), _i(0, 2).reshape(1, 2), np.ones((1, 2))),
         (np.zeros((2, 3)), _i(0, -1).reshape(1, 2), np.ones((1, 2)))),
    Case("scatter_add_3", lambda t, F, x, i, s: t.scatter_add(x, 1, i, s),
         (np.zeros((2, 3)), _i(0, 2).reshape(1, 2), np.ones((1, 2))),
         (np.zeros((2, 3)), _i(3, 0).reshape(1, 2), np.ones((1, 2)))),
    Case("take_along_dim_flat", lambda t, F, x, i: t.take_along_dim(x, i),
         (X23, _i(5, 0)), (X23, _i(0, 7))),
    Case("take_along_dim_wraps", lambda t, F, x, i: t.take_along_dim(x, i, 1),
         (X23, np.array([[3, -4, 7], [-1, 100, 0]])),),
    Case("take_along_dim_over_no_entries", lambda t, F, x, i: t.take_along_dim(x, i, 1),
         (np.ones((2, 0)), np.zeros((2, 1), np.int64))),
    # advanced indexing and setitem
    Case("getitem_5", lambda t, F, x, i: x[i], (np.arange(3.0), _i(2, -3)),
         (np.arange(3.0), _i(0, 5))),
    Case("getitem_minus_4", lambda t, F, x, i: x[i], (np.arange(3.0), _i(-1)),
         (np.arange(3.0), _i(-4))),
    Case("getitem_second_dim", lambda t, F, x, i: x[:, i], (X23, _i(2)), (X23, _i(3))),
    Case("getitem_two_rows_position_first", lambda t, F, x, i, j: x[i, j],
         (X234, _i(0, 1), _i(2, 0)), (X234, _i(0, 7), _i(9, 0))),
    Case("getitem_rows_apart", lambda t, F, x, i, j: x[i, :, j],
         (X234, _i(1), _i(3)), (X234, _i(1), _i(4))),
    Case("getitem_empty_dim", lambda t, F, x, i: x[:, i], (np.ones((2, 0)), _i(0))),
    Case("setitem_5", _setitem, (np.zeros(3), _i(1)), (np.zeros(3), _i(5))),
    Case("setitem_accumulate_minus_4", _accumulate, (np.zeros(3), _i(1, 1)),
         (np.zeros(3), _i(1, -4))),
    # narrow: the arguments are Python ints, so compiled raises while tracing
    Case("narrow_past_the_end", lambda t, F, x: x.narrow(0, 2, 5), (np.ones(4),)),
    Case("narrow_start_out_of_range", lambda t, F, x: x.narrow(-1, -5, 2), (np.ones((3, 4)),)),
    Case("narrow_negative_length", lambda t, F, x: x.narrow(0, 1, -1), (np.ones(4),)),
    Case("narrow_negative_start", lambda t, F, x: x.narrow(0, -2, 2), (np.arange(4.0),)),
    # integer division by zero (torch: RuntimeError: ZeroDivisionError)
    Case("floor_divide_by_zero", lambda t, F, x, y: x // y, (_i(7, -7), _i(2, 3)),
         (_i(7, -7), _i(2, 0))),
    Case("remainder_by_zero_int32", lambda t, F, x, y: x % y,
         (_i(7, -7, dtype=np.int32), _i(2, 3, dtype=np.int32)),
         (_i(7, -7, dtype=np.int32), _i(0, 3, dtype=np.int32))),
    Case("floor_divide_by_python_zero", lambda t, F, x: x // 0, (_i(7, -7),)),
    Case("remainder_of_python_number", lambda t, F, y: 5 % y, (_i(2, 3),), (_i(2, 0),)),
    Case("floor_divide_by_float_zero", lambda t, F, x, y: x // y,
         (np.array([7.0, -7.0, 0.0]), np.zeros(3))),
    Case("power_negative_python_integer", lambda t, F, x: x ** -1, (_i(2, 3),)),
    # reductions over a dimension of no entries: values
    Case("softmax_empty_dim", lambda t, F, x: F.softmax(x, 1), (np.ones((2, 0)),)),
    Case("log_softmax_empty_dim", lambda t, F, x: F.log_softmax(x, 0), (np.ones((0, 3)),)),
    Case("logsumexp_empty_dim", lambda t, F, x: t.logsumexp(x, 1), (np.ones((2, 0)),)),
    Case("logsumexp_empty_dims_keepdim", lambda t, F, x: t.logsumexp(x, (0, 1), keepdim=True),
         (np.ones((0, 3)),)),
]


def framework_arguments(framework, arrays, device=None) -> list:
    def convert(value):
        if not isinstance(value, np.ndarray):
            return value
        tensor = framework.tensor(value)
        return tensor if device is None else tensor.to(device)

    return [convert(value) for value in arrays]


def outcome(call):
    """("raises", type name, message) or ("returns", NumPy values)."""
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return ("raises", type(error).__name__, str(error))
    return ("returns", np.asarray(result.detach().cpu().numpy()))


def torch_outcome(case: Case, arrays) -> tuple:
    import torch.nn.functional as torch_functional

    return outcome(lambda: case.function(torch, torch_functional,
                                         *framework_arguments(torch, arrays)))


def assert_same(actual, expected, where: str):
    assert actual[0] == expected[0], (where, actual, expected)
    if expected[0] == "raises":
        assert actual[1:] == expected[1:], (where, actual, expected)
    else:
        np.testing.assert_allclose(actual[1], expected[1], rtol=1e-6, err_msg=where)


def autojit_calls(case: Case, device=None):
    """The case's eager function and its compiled twin."""
    import autojit.nn.functional as F

    def function(*tensors):
        return case.function(autojit, F, *tensors)

    return function, autojit.compile(function, fullgraph=True)


def check_case(case: Case, device=None) -> None:
    eager, compiled = autojit_calls(case, device)
    good = framework_arguments(autojit, case.good, device)
    expected_good = torch_outcome(case, case.good)
    assert_same(outcome(lambda: eager(*good)), expected_good, f"{case.name} eager")
    for call in range(3):  # the third call records the plan's native program, if it has one
        assert_same(outcome(lambda: compiled(*good)), expected_good,
                    f"{case.name} compiled, call {call}")
    if case.bad is None:
        return
    bad = framework_arguments(autojit, case.bad, device)
    expected_bad = torch_outcome(case, case.bad)
    assert expected_bad[0] == "raises", (case.name, expected_bad)
    assert_same(outcome(lambda: eager(*bad)), expected_bad, f"{case.name} eager")
    assert_same(outcome(lambda: compiled(*bad)), expected_bad, f"{case.name} compiled")
    assert_same(outcome(lambda: compiled(*good)), expected_good, f"{case.name} after")
    # The bad call ran the same executable: the error came from a check at run time.
    assert len(compiled.executables) == 1 or expected_good[0] == "raises"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_like_torch_eager_and_compiled(case):
    check_case(case)


# ---- side effects ------------------------------------------------------------------------------

def _training_step(parameters):
    import autojit.nn.functional as F

    def step(x, y):
        loss = F.cross_entropy((x @ parameters[0]).tanh() @ parameters[1], y)
        loss.backward()
        with autojit.no_grad():
            for parameter in parameters:
                parameter.sub_(0.1 * parameter.grad)
                parameter.grad = None
        return loss.detach()

    return step


def test_a_bad_target_leaves_the_parameters_of_a_compiled_step_as_eager_does():
    """The check fails before any update is written back: in the Python loop (first calls)
    and in the native program (from the fourth call), the parameters keep their values and
    versions, as eager's cross_entropy raises before backward."""
    rng = np.random.default_rng(0)
    x = autojit.tensor(rng.standard_normal((8, 5)).astype(np.float32))
    good, bad = autojit.tensor(rng.integers(0, 4, 8)), autojit.tensor(np.full(8, 4))
    parameters = [autojit.tensor(rng.standard_normal(shape).astype(np.float32),
                                 requires_grad=True) for shape in ((5, 6), (6, 4))]
    step = autojit.compile(_training_step(parameters))
    for calls in (0, 4):  # the Python loop, then the native program
        for _ in range(calls):
            step(x, good)
        before = [(p.detach().numpy().copy(), p._version) for p in parameters]
        with pytest.raises(IndexError, match=r"^Target 4 is out of bounds\.$"):
            step(x, bad)
        for parameter, (values, version) in zip(parameters, before):
            np.testing.assert_array_equal(parameter.detach().numpy(), values)
            assert parameter._version == version and parameter.grad is None
    plan = step.executables[0].plan
    assert plan.program, plan.program_refusal


def test_an_update_scheduled_before_a_check_that_eager_ran_first_is_not_written():
    """Eager raises at `index // divisor` before the update; the fused plan runs the update's
    kernel first (the product reading the new weight closes its group), so that kernel must
    not store into the weight's storage."""
    weight = autojit.tensor(np.ones((3, 3), np.float32))

    def step(index, divisor, m):
        quotient = index // divisor
        with autojit.no_grad():
            weight.sub_(0.5)
        return quotient, m @ weight

    compiled = autojit.compile(step)
    m = autojit.ones(2, 3)
    for _ in range(2):
        compiled(autojit.tensor([4, 6]), autojit.tensor([2, 3]), m)
    kinds = [type(step).__name__ for step in compiled.executables[0].plan.steps]
    assert kinds.index("MatmulStep") < kinds.index("KernelStep", 1), kinds  # update first
    before = weight.numpy().copy()
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        compiled(autojit.tensor([4, 6]), autojit.tensor([2, 0]), m)
    np.testing.assert_array_equal(weight.numpy(), before)


def test_an_index_check_is_one_node_per_index_and_fuses():
    """The target's check is an elementwise node of the traced graph; compiled, it joins the
    kernel that reads the target (no step of its own)."""
    import autojit.nn.functional as F

    compiled = autojit.compile(lambda z, y: F.cross_entropy(z, y))
    compiled(autojit.tensor(LOGITS), autojit.tensor(_i(0, 2)))
    assert compiled.ir().count("= check_index") == 1
    groups = compiled.fusion_groups()
    assert "check_index" in groups and "node check_index" not in groups, groups


def test_an_index_written_in_place_after_use_is_caught_by_backward_as_in_torch():
    """The checked index is a view of the index (it shares its version counter), so the
    index op's saved index notices the write, as torch's does."""
    for framework in (torch, autojit):
        x = framework.arange(4.0, requires_grad=True)
        index = framework.tensor([0, 1])
        y = x[index] * x[index]
        index[0] = 3
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
