"""Shared pieces of the native program tests (test_program.py, test_direct_calls.py): the skip
mark for machines without native workers, and a seeded source of random float32 tensors."""

import numpy as np
import pytest

from autojit.codegen.cpu import workers

NEEDS_WORKERS = pytest.mark.skipif(workers.shared() is None,
                                   reason="no native workers here (one core, or not x86-64 "
                                          "Linux)")


def random_source(seed: int):
    """(generator, tensor): a NumPy generator seeded with `seed`, and
    tensor(*shape, requires_grad=False), a tensor of standard normal float32 values drawn from
    it in turn."""
    import autojit

    generator = np.random.default_rng(seed)

    def tensor(*shape, requires_grad=False):
        return autojit.tensor(generator.standard_normal(shape).astype(np.float32),
                              requires_grad=requires_grad)

    return generator, tensor
