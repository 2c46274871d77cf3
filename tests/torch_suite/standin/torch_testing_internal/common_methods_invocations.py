"""The one helper torch's autograd tests take from common_methods_invocations."""

import torch


def mask_not_all_zeros(shape):
    assert len(shape) > 0
    while True:
        result = torch.randn(shape).gt(0)
        if result.sum() > 0:
            return result
