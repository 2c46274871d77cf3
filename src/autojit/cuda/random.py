"""The CUDA devices' random state, as torch.cuda names it: manual_seed, manual_seed_all, seed,
seed_all, initial_seed, get_rng_state and set_rng_state.

Random tensors made on a GPU are drawn on the host from the device's own default Generator
(tensor/generator.py) and copied to the device; these functions seed and read those
generators. Seeding works before CUDA is first used, as torch's does: the seed waits for the
device's generator.
"""

from __future__ import annotations

from ..tensor.device import device
from ..tensor.generator import device_default, fresh_seed, seed_devices


def _index(where) -> int:
    if where is None:
        return 0
    if isinstance(where, int):
        return where
    found = where if isinstance(where, device) else device(where)
    return found.index or 0


def manual_seed(seed) -> None:
    """Seed the current CUDA device's default generator."""
    seed_devices(int(seed), 0)


def manual_seed_all(seed) -> None:
    """Seed every CUDA device's default generator."""
    seed_devices(int(seed))


def seed() -> None:
    """Seed the current CUDA device's default generator from the operating system."""
    seed_devices(fresh_seed(), 0)


def seed_all() -> None:
    """Seed every CUDA device's default generator from the operating system."""
    seed_devices(fresh_seed())


def initial_seed() -> int:
    """The seed the current CUDA device's default generator started from."""
    return device_default(device("cuda", 0)).initial_seed()


def get_rng_state(device="cuda"):  # noqa: A002 - torch's name
    """A CUDA device's default generator's state (Generator.get_state)."""
    return device_default(_cuda(device)).get_state()


def set_rng_state(new_state, device="cuda") -> None:  # noqa: A002 - torch's name
    """Restore a CUDA device's default generator's state from get_rng_state()."""
    device_default(_cuda(device)).set_state(new_state)


def _cuda(where):
    return device("cuda", _index(where))
