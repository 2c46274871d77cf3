"""Factories and conversions against torch (tests/torch_compare.py): new_tensor/new_zeros/
new_ones/new_full/new_empty, the *_like factories, to() in its three forms, type(), type_as,
view_as/reshape_as/expand_as and the dtype methods.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from cuda_simulator import MARKS
from torch_compare import same_as_torch, torch

import autojit

rng = np.random.default_rng(5)
M = rng.standard_normal((2, 3))
F = M.astype(np.float32)
I = np.arange(3)  # noqa: E741


def _shape_and_dtype(t, result):
    """What an uninitialized tensor can be compared by."""
    return t.zeros(tuple(result.shape), dtype=result.dtype)


VALUE_CASES = {
    "new_zeros": (lambda t, x: x.new_zeros(2, 3), F),
    "new_zeros_sequence_dtype": (lambda t, x: x.new_zeros([2], dtype=t.int32), F),
    "new_ones_int": (lambda t, x: x.new_ones((2,)), I),
    "new_ones_requires_grad": (lambda t, x: x.new_ones(2, requires_grad=True), M),
    "new_full": (lambda t, x: x.new_full((2, 2), 3), F),
    "new_full_int_truncates": (lambda t, x: x.new_full([2], 3.7), I),
    "new_full_bool_value": (lambda t, x: x.new_full((2,), True), M),
    "new_empty": (lambda t, x: _shape_and_dtype(t, x.new_empty(2, 3)), F),
    "new_empty_dtype": (lambda t, x: _shape_and_dtype(t, x.new_empty((2,), dtype=t.int64)), F),
    "new_tensor_converts": (lambda t, x: x.new_tensor([1.5, 2.0]), I),
    "new_tensor_dtype": (lambda t, x: x.new_tensor([[1, 2]], dtype=t.float64), F),
    "new_tensor_0d": (lambda t, x: x.new_tensor(3), F),
    "zeros_like_dtype": (lambda t, x: t.zeros_like(x, dtype=t.int64), F),
    "ones_like_requires_grad": (lambda t, x: t.ones_like(x, requires_grad=True), F),
    "full_like_int": (lambda t, x: t.full_like(x, 2.5), I),
    "full_like_dtype": (lambda t, x: t.full_like(x, 2.5, dtype=t.int32), F),
    "empty_like_device": (lambda t, x: _shape_and_dtype(t, t.empty_like(x, device="cpu")), F),
    "rand_like_shape": (lambda t, x: _shape_and_dtype(t, t.rand_like(x, dtype=t.float64,
                                                                     device="cpu")), F),
    "randn_like_shape": (lambda t, x: _shape_and_dtype(t, t.randn_like(x, device="cpu")), F),
    "to_dtype_flags": (lambda t, x: x.to(t.float64, True, True), F),
    "to_device_dtype": (lambda t, x: x.to("cpu", t.float64), F),
    "to_other": (lambda t, x, i: x.to(i, False, True), F, I),
    "to_keywords": (lambda t, x: x.to(dtype=t.float64, copy=True), F),
    "to_device_object": (lambda t, x: x.to(t.device("cpu"), non_blocking=True), F),
    "to_nothing": (lambda t, x: x.to(), F),
    "type_name": (lambda t, x: x.type().split(".")[-1], F),
    "type_string": (lambda t, x: x.type("torch.DoubleTensor"), F),
    "type_dtype": (lambda t, x: x.type(t.int64), F),
    "type_legacy_class": (lambda t, x: x.type(t.DoubleTensor), F),
    "type_as": (lambda t, x, i: x.type_as(i), F, I),
    "view_as": (lambda t, x: x.view_as(t.zeros(3, 2)), M),
    "reshape_as": (lambda t, x: x.reshape_as(t.zeros(6)), M),
    "expand_as": (lambda t, x: x.expand_as(t.zeros(2, 2, 3)), M),
    "dtype_methods": (lambda t, x: (x.half(), x.float(), x.double(), x.int(), x.long(),
                                    x.bool(), x.bfloat16().float()), M * 100),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_and_gradients_like_torch(name):
    function, *arrays = VALUE_CASES[name]
    same_as_torch(function, *arrays)


ERROR_CASES = {
    "new_full_int_size": (lambda t, x: x.new_full(2, 3), F),
    "new_ones_int_requires_grad": (lambda t, x: x.new_ones(2, requires_grad=True), I),
    "zeros_int_requires_grad": (lambda t: t.zeros(2, dtype=t.int64, requires_grad=True),),
    "to_two_devices": (lambda t, x: x.to("cpu", "cpu"), F),
    "to_two_dtypes": (lambda t, x: x.to(t.float32, t.float64), F),
    "to_dtype_name": (lambda t, x: x.to("float64"), F),
    "type_unknown": (lambda t, x: x.type("torch.FooTensor"), F),
    "type_dtype_name": (lambda t, x: x.type("float64"), F),
    "view_as_size": (lambda t, x: x.view_as(t.zeros(3, 3)), M),
    "expand_as_size": (lambda t, x: x.expand_as(t.zeros(2, 2, 2)), M),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_like_torch(name):
    function, *arrays = ERROR_CASES[name]
    # to()'s argument parser lists torch's signatures after its first line: the type and
    # that line are compared.
    same_as_torch(function, *arrays, grad=False, message=not name.startswith("to_two"))


def test_to_keeps_or_copies_as_torch():
    for framework in (torch, autojit):
        x = framework.tensor(F)
        assert x.to(framework.float32) is x and x.to("cpu") is x and x.to(x) is x
        assert x.to(framework.float32, copy=True) is not x
        assert x.to("cpu", framework.float32, False, True) is not x
        assert x.type(framework.float32) is x


def test_new_tensor_of_a_tensor_warns_and_copies():
    x = autojit.tensor(F)
    with pytest.warns(UserWarning, match="recommended to use sourceTensor.detach"):
        copy = autojit.zeros(1).new_tensor(x)
    copy.add_(1)
    np.testing.assert_array_equal(x.numpy(), F)


@MARKS[0]
def test_factories_keep_the_device_of_a_cuda_tensor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = autojit.ones(2, device="cuda")
    for made in (x.new_zeros(2), x.new_full((1,), 2.0), x.new_tensor([1.0]),
                 autojit.rand_like(x), x.type("autojit.cuda.DoubleTensor")):
        assert made.is_cuda
    # A type name without ".cuda." is a CPU type, as in torch, and so is a CPU type itself.
    assert x.type("torch.FloatTensor").device.type == "cpu"
    assert x.type(autojit.LongTensor).device.type == "cpu"
    assert x.type(autojit.cuda.LongTensor).device.type == "cuda"
    assert autojit.ones(2).type(autojit.cuda.IntTensor).is_cuda
    assert x.type() == "autojit.cuda.FloatTensor"
