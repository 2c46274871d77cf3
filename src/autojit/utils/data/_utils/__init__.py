"""What the loader's parts share, at torch.utils.data._utils' path: collation (collate.py), the
fetchers that turn indices into batches (fetch.py), and the worker processes (worker.py).

This module holds the generator check every random sampler and random_split make, and the
exception wrapper that carries an error from a worker process to the main one.
"""

from __future__ import annotations

import pickle
import sys
import traceback

import numpy as np

from ....tensor import torch_stream as stream
from ....tensor.creation import default_generator

# How often a waiting process looks at its peers (seconds): the main process at its workers'
# liveness, a worker at its parent's.
MP_STATUS_CHECK_INTERVAL = 0.2


def resolve_generator(generator) -> np.random.Generator:
    """The NumPy generator to draw from: `generator`, or autojit's global one when None."""
    if generator is None:
        return default_generator()
    if not isinstance(generator, np.random.Generator):
        raise TypeError("generator must be a numpy.random.Generator (for example "
                        f"numpy.random.default_rng(seed)), got {type(generator).__name__}")
    return generator


def draw_seed(generator) -> int:
    """One seed drawn as torch draws its samplers' and workers' seeds:
    `torch.empty((), dtype=torch.int64).random_(generator=generator)`."""
    return int(stream.integers(resolve_generator(generator), 1, 0, 1 << 63)[0])


def permutation(generator, n: int) -> list:
    """`torch.randperm(n, generator=generator).tolist()`: torch's order for the same seed."""
    return stream.permutation(resolve_generator(generator), n).tolist()


class KeyErrorMessage(str):
    """A KeyError's message shown as written (KeyError's str() would quote it)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker process, sent to the main process and raised there.

    The main process raises an exception of the original type (RuntimeError when that type
    cannot be rebuilt from a message) whose message names the worker and holds the original
    traceback.
    """

    def __init__(self, exc_info=None, where: str = "in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        try:  # a type the main process cannot import would be lost in transit
            pickle.loads(pickle.dumps(self.exc_type))
        except Exception:
            self.exc_type = RuntimeError

    def reraise(self):
        message = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            message = KeyErrorMessage(message)
        try:
            exception = self.exc_type(message)
        except Exception:
            raise RuntimeError(message) from None
        raise exception
