"""torch's legacy constructors against torch: Tensor(*sizes | data | tensor), FloatTensor and
its siblings, isinstance with the typed names, and Tensor.type().

Each case is an expression written once for both libraries (`lib` is autojit or torch). The
result must have torch's dtype and shape, and its values where it holds data (the sizes form
is uninitialized in torch, zeros in autojit); an error must be torch's type with torch's
first line of message.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit.tensor import dtypes

torch = pytest.importorskip("torch")

# Expressions over `lib` (autojit or torch), `np` and `t` (a float tensor of [1, 2]).
RESULTS = [
    "lib.Tensor(40)", "lib.Tensor(2, 3)", "lib.Tensor(0)", "lib.Tensor(2, 0)",
    "lib.Tensor(np.int64(3))", "lib.Tensor(np.int32(2), np.int64(3))", "lib.Tensor(np.array(5))",
    "lib.Tensor(2, True)", "lib.Tensor(lib.Size([2, 3]))", "lib.Tensor(lib.Size([]))",
    "lib.Tensor()", "lib.Tensor(size=(2, 3))", "lib.Tensor(size=[2])",
    "lib.Tensor(2, device='cpu')", "lib.FloatTensor(2, 3)", "lib.DoubleTensor(2)",
    "lib.HalfTensor(3)", "lib.LongTensor(2)", "lib.IntTensor(1, 2)", "lib.BoolTensor(2)",
    "lib.LongTensor()", "lib.DoubleTensor(lib.Size([2, 1]))",
]
DATA = [
    "lib.Tensor((2, 3))", "lib.Tensor([2, 3])", "lib.Tensor((2,))", "lib.Tensor([[1, 2], [3, 4]])",
    "lib.Tensor([])", "lib.Tensor(())", "lib.Tensor([True])", "lib.Tensor([1.5, 2])",
    "lib.Tensor(range(3))", "lib.Tensor(np.array([1, 2]))", "lib.Tensor(np.array([1.5, 2.0]))",
    "lib.Tensor(np.array([1, 2], dtype=np.uint8))", "lib.Tensor(np.array(5.0))",
    "lib.Tensor([np.float64(1)])", "lib.Tensor([lib.tensor(1.0), lib.tensor(2.0)])",
    "lib.Tensor(data=(2, 3))", "lib.Tensor([1], device='cpu')",
    "lib.FloatTensor([1, 2])", "lib.FloatTensor([[1, 2]])", "lib.DoubleTensor([1, 2])",
    "lib.HalfTensor([1.5])", "lib.LongTensor([1.7, -2.5])", "lib.LongTensor([True, False])",
    "lib.IntTensor(np.array([1.5, -2.5]))", "lib.BoolTensor([1, 0, 2])",
    "lib.BoolTensor([0.5, 0.0])", "lib.FloatTensor(np.array([1, 2]))", "lib.FloatTensor()",
    "lib.Tensor(t)", "lib.Tensor(lib.ones(2, dtype=lib.int64))", "lib.Tensor(lib.tensor(3))",
    "lib.Tensor(lib.ones(2, dtype=lib.bool))", "lib.FloatTensor(t)", "lib.Tensor(other=t)",
]
ERRORS = [
    "lib.Tensor(2.5)", "lib.Tensor(True)", "lib.Tensor(None)", "lib.Tensor('a')",
    "lib.Tensor(b'ab')", "lib.Tensor(np.float64(3))", "lib.Tensor(np.float32(2.0))",
    "lib.Tensor(1 + 2j)", "lib.Tensor({1, 2})", "lib.Tensor(iter([1, 2]))", "lib.Tensor(object())",
    "lib.Tensor(-1)", "lib.Tensor(2, -1)", "lib.Tensor(2, 3.0)", "lib.Tensor(2, 'a')",
    "lib.Tensor(2, None)", "lib.Tensor(3, [1])", "lib.Tensor([1], 2)", "lib.Tensor(True, 2)",
    "lib.Tensor(2.0, 3)", "lib.Tensor(t, 2)", "lib.Tensor(size=2)",
    "lib.Tensor([1], dtype=lib.float64)", "lib.Tensor(2, dtype=lib.float64)",
    "lib.Tensor(2, requires_grad=True)", "lib.Tensor([1], requires_grad=True)",
    "lib.Tensor([1, 2], device='cpu', dtype=lib.float64)", "lib.FloatTensor(2.5)",
    "lib.LongTensor(2.5)", "lib.FloatTensor([1], dtype=lib.float64)",
    "lib.DoubleTensor(t)", "lib.LongTensor(t)", "lib.Tensor([[1, 2], [3]])",
]
INSTANCES = [
    "isinstance(lib.ones(2), lib.FloatTensor)", "isinstance(lib.ones(2), lib.DoubleTensor)",
    "isinstance(lib.ones(2, dtype=lib.float64), lib.DoubleTensor)",
    "isinstance(lib.ones(2, dtype=lib.float64), lib.FloatTensor)",
    "isinstance(lib.ones(2, dtype=lib.int64), lib.LongTensor)",
    "isinstance(lib.ones(2, dtype=lib.int32), lib.IntTensor)",
    "isinstance(lib.ones(2, dtype=lib.bool), lib.BoolTensor)",
    "isinstance(lib.ones(2, dtype=lib.float16), lib.HalfTensor)",
    "isinstance(lib.ones(2, requires_grad=True), lib.FloatTensor)",
    "isinstance(lib.nn.Parameter(lib.ones(2)), lib.FloatTensor)", "isinstance(3, lib.FloatTensor)",
    "isinstance(np.ones(2, dtype=np.float32), lib.FloatTensor)",
    "isinstance(lib.FloatTensor(2), lib.Tensor)", "issubclass(lib.FloatTensor, lib.Tensor)",
    "lib.FloatTensor.__name__", "lib.FloatTensor.is_cuda", "lib.FloatTensor(2).requires_grad",
    "lib.FloatTensor(2).is_leaf", "lib.Tensor(t) is t", "lib.ones(2).type()",
    "lib.ones(2, dtype=lib.int64).type()", "lib.ones(2).type(lib.DoubleTensor).dtype",
    "lib.ones(2).type(lib.float16).dtype",
    "lib.ones(2, dtype=lib.int32).type(lib.LongTensor).dtype",
]


def evaluate(lib, expression: str):
    t = lib.tensor([1.0, 2.0])
    return eval(expression, {"lib": lib, "np": np, "t": t})  # noqa: S307 - the cases above


def dtype_name(dtype) -> str:
    return str(dtype).split(".")[-1]


def comparable(value):
    """Either library's answer with the library's name taken out: dtypes by name, type names
    without their prefix."""
    if isinstance(value, (dtypes.DType, torch.dtype)):
        return dtype_name(value)
    if isinstance(value, str):
        return value.replace("autojit.", "").replace("torch.", "")
    return value


@pytest.mark.parametrize("expression", RESULTS + DATA)
def test_result_matches_torch(expression):
    expected = evaluate(torch, expression)
    got = evaluate(autojit, expression)
    assert isinstance(got, autojit.Tensor)
    assert dtype_name(got.dtype) == dtype_name(expected.dtype), expression
    assert tuple(got.shape) == tuple(expected.shape), expression
    assert got.requires_grad == expected.requires_grad
    if expression in DATA:
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    else:  # uninitialized in torch; zeros here
        assert not got.numpy().any()


@pytest.mark.parametrize("expression", ERRORS)
def test_error_matches_torch(expression):
    with pytest.raises(Exception) as expected:
        evaluate(torch, expression)
    with pytest.raises(Exception) as got:
        evaluate(autojit, expression)
    assert type(got.value) is type(expected.value), (expression, got.value)
    mine, theirs = str(got.value).splitlines()[0], str(expected.value).splitlines()[0]
    if theirs.startswith("expected TensorOptions"):  # torch lists more options than autojit has
        assert mine.startswith(theirs.split(",")[0]), (mine, theirs)
    elif not theirs.startswith("expected sequence"):  # nested data: autojit.tensor's message
        assert mine == theirs.replace("torch.", "autojit."), expression


@pytest.mark.parametrize("expression", INSTANCES)
def test_answer_matches_torch(expression):
    assert comparable(evaluate(autojit, expression)) == comparable(evaluate(torch, expression))


def test_sizes_and_data_follow_the_default_dtype():
    for lib in (autojit, torch):
        lib.set_default_dtype(lib.float64)
        try:
            assert dtype_name(lib.Tensor(2).dtype) == "float64"
            assert dtype_name(lib.Tensor([1]).dtype) == "float64"
            assert dtype_name(lib.FloatTensor(2).dtype) == "float32"
        finally:
            lib.set_default_dtype(lib.float32)


def test_a_tensor_is_aliased_with_its_history():
    x = autojit.ones(2, 3).t()
    alias = autojit.Tensor(x)
    assert alias is not x and alias.shape == x.shape
    alias[0, 1] = 7.0  # a transposed tensor's alias is still its storage
    assert x[0, 1].item() == 7.0 and x._version == alias._version == 1
    weight = autojit.tensor([1.0, 2.0], requires_grad=True)
    aliased = autojit.FloatTensor(weight)
    assert aliased.requires_grad and aliased.grad_fn is not None
    (aliased * 3).sum().backward()
    assert weight.grad.tolist() == [3.0, 3.0]


def test_constructors_compile_without_retracing():
    @autojit.compile(fullgraph=True)
    def step(x):
        return x + autojit.Tensor(3) + autojit.FloatTensor([1.0, 2.0, 3.0]) + autojit.Tensor(x)

    for _ in range(3):
        assert step(autojit.ones(3)).tolist() == [3.0, 4.0, 5.0]
    assert len(step.executables) == 1 and step.executables[0].calls == 3


def test_a_parameter_from_sizes_takes_an_init():
    # The pattern that made a 0-d parameter of value 40 when Tensor(40) read its argument as
    # data: a weight of the asked shape, initialized in place.
    weight = autojit.nn.Parameter(autojit.Tensor(40, 1))
    autojit.nn.init.kaiming_uniform_(weight)
    assert weight.shape == (40, 1) and weight.requires_grad and weight.abs().sum().item() > 0
