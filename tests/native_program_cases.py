"""Shared pieces of the native program tests (test_program.py, test_direct_calls.py): the skip
marks for machines without native workers and for one core, and a seeded source of random
float32 tensors."""

import numpy as np
import pytest

from autojit.codegen.cpu import workers

NEEDS_WORKERS = pytest.mark.skipif(workers.shared() is None,
                                   reason="no native workers here (not x86-64 Linux)")
# A job is cut into one part per core: on one core nothing is split or run side by side.
NEEDS_TWO_CORES = pytest.mark.skipif(workers.usable_cores() < 2,
                                     reason="one core: a job is one part, nothing is split")


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
