"""autojit.random: the global random state, as torch.random names it.

The seeding functions of the top level (manual_seed, seed, initial_seed, get_rng_state,
set_rng_state), the CPU's default Generator, and fork_rng, which runs a block and then puts
every default generator back where it was. The generators themselves are in
tensor/generator.py.
"""

from __future__ import annotations

import contextlib

from .tensor.device import device as _device
from .tensor.generator import (
    Generator,
    default_generator,
    device_default,
    device_generators,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda"):
    """Run the block, then restore the default generators' states: the CPU's, and those of
    the CUDA devices in `devices` (every CUDA device used so far when None).

    >>> import autojit
    >>> _ = autojit.manual_seed(0)
    >>> with autojit.random.fork_rng():
    ...     inside = autojit.rand(2)
    >>> bool((autojit.rand(2) == inside).all())
    True
    """
    if not enabled:
        yield
        return
    if devices is None:
        forked = device_generators()
    else:
        forked = [device_default(_device(device_type, _index(item))) for item in devices]
    saved = [(generator, generator.get_state()) for generator in
             (default_generator, *forked)]
    try:
        yield
    finally:
        for generator, state in saved:
            generator.set_state(state)


def _index(item) -> int:
    if isinstance(item, _device):
        return item.index or 0
    if isinstance(item, str):
        return _device(item).index or 0
    return int(item)
