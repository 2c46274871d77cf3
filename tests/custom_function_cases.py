"""Shared pieces of the custom autograd.Function tests (test_custom_function.py,
test_custom_function_backward.py, and the Functions of test_compile.py and test_profiler.py):
the reference examples' Exp, a leaf maker and a closeness check."""

from __future__ import annotations

import numpy as np

import autojit
from autojit.autograd import Function


class Exp(Function):  # torch-autograd-en.txt and oneflow-autograd-zh.txt, as written there
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


def leaf(values, dtype=autojit.float32):
    return autojit.tensor(values, dtype=dtype, requires_grad=True)


def assert_close(tensor, expected, **tolerance):
    np.testing.assert_allclose(tensor.detach().numpy(), expected, rtol=1e-6, **tolerance)
