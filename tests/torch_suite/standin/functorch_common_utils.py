"""functorch's test helpers (test/functorch/common_utils.py) that test_eager_transforms imports."""

import unittest


def expectedFailureIf(condition):
    def decorator(fn):
        return unittest.expectedFailure(fn) if condition else fn
    return decorator
