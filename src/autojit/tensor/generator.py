"""Random number generators: `autojit.Generator`, the default generators of each device, and the
global seeding functions (manual_seed, seed, initial_seed, get_rng_state, set_rng_state).

Every random tensor is drawn from a Generator (tensor/random.py says how a draw is made, eagerly
or as a compiled function's "random" input). A Generator is a `numpy.random.Generator` over
NumPy's MT19937 bit generator, seeded as torch seeds its CPU generator and drawn through torch's
transforms (torch_stream.py), so the same seed gives torch's numbers, eagerly and compiled, and
get_state() is torch's 5056-byte state, which torch's set_rng_state reads and the other way
round. Being a NumPy generator, it is accepted wherever autojit took one before (samplers,
nn.init), and a `numpy.random.Generator` is still accepted as a `generator=` argument.

`autojit.manual_seed` seeds the CPU's default generator and those of the CUDA devices (random
tensors made on a GPU are drawn on the host from the device's own generator, then copied), as
torch's does. Each default generator starts from a seed drawn from the operating system, as
torch's global generator does; a Generator made by the user starts from torch's default seed.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import dtypes
from . import torch_stream as stream
from .device import check_device, device
from .graph_break import graph_break
from .state import state
from .tensor import Tensor

# torch's seed of a newly made Generator (c10's default_rng_seed_val).
DEFAULT_SEED = 67280421310721
_SEED_MASK = (1 << 64) - 1
STATE_SIZE = stream.STATE_BYTES  # torch's CPUGeneratorImplState


def _checked_seed(seed) -> int:
    """A seed as torch takes it: an integer in [-2**63, 2**64), negative ones wrapped."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed <= _SEED_MASK:
        raise ValueError("Overflow when unpacking long long")
    return seed & _SEED_MASK


def fresh_seed() -> int:
    """A non-deterministic 64-bit seed from the operating system."""
    return int(np.random.SeedSequence().entropy) & _SEED_MASK


def _break_if_tracing(what: str) -> None:
    """A generator's state cannot be made, read or reset inside a trace: a compiled function
    draws when it runs, so the state at trace time is not the state a later call would see."""
    if state.tracer is not None:
        graph_break(f"Generator.{what}() (a generator's state while tracing)", needs_data=False)


class Generator(np.random.Generator):
    """A pseudo-random number generator (torch.Generator): pass it as `generator=`.

    >>> import autojit
    >>> g = autojit.Generator().manual_seed(42)
    >>> first = autojit.rand(3, generator=g)
    >>> _ = g.manual_seed(42)
    >>> bool((autojit.rand(3, generator=g) == first).all()), g.initial_seed()
    (True, 42)
    """

    def __init__(self, device="cpu"):
        # Made inside a compiled function, a generator would be made once, at the trace, and
        # its stream would run on from call to call, where eager starts a new one each call.
        _break_if_tracing("__init__")
        self._start(check_device(device))

    def _start(self, where) -> None:
        super().__init__(np.random.MT19937())
        self._device = where
        self._reseed(DEFAULT_SEED)

    def _reseed(self, seed: int) -> None:
        self.bit_generator.state = stream.seeded_state(seed)
        self._initial_seed = seed
        # The second normal of the last pair a small double draw made (torch's
        # next_double_normal_sample), given to the next one: torch_stream.normal.
        self._normal_cache = [None]

    def _position(self):
        """Where the stream stands, for _set_position (random draws replayed, or undone)."""
        return self.bit_generator.state, self._normal_cache[0]

    def _set_position(self, position) -> None:
        self.bit_generator.state, self._normal_cache[0] = position

    @classmethod
    def _default_of(cls, where) -> Generator:
        """A device's default generator, made when the device first draws (which may be
        inside a trace: it lives on after it, as eager's does)."""
        generator = cls.__new__(cls)
        generator._start(where)
        return generator

    @property
    def device(self) -> device:
        """The device whose random tensors this generator draws."""
        return self._device

    def manual_seed(self, seed) -> Generator:
        """Restart the stream from `seed` (an integer; negative ones wrap as torch's do)."""
        seed = _checked_seed(seed)
        _break_if_tracing("manual_seed")
        self._reseed(seed)
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed."""
        _break_if_tracing("seed")
        seed = fresh_seed()
        self._reseed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the current stream started from."""
        _break_if_tracing("initial_seed")
        return self._initial_seed

    def get_state(self):
        """The generator's state, as a 1-D uint8 tensor of torch's layout (a ByteTensor of 5056
        bytes, which torch.set_rng_state reads)."""
        _break_if_tracing("get_state")
        raw = stream.to_torch_bytes(self.bit_generator.state, self._initial_seed,
                                    self._normal_cache[0])
        return Tensor._make(np.frombuffer(raw, np.uint8).copy(), dtypes.uint8)

    def set_state(self, new_state) -> Generator:
        """Restore a state from get_state() (or from torch's get_rng_state())."""
        if not isinstance(new_state, Tensor) or new_state.dtype.category != dtypes.INTEGER:
            raise TypeError("RNG state must be an autojit.ByteTensor (from Generator.get_state "
                            "or autojit.get_rng_state)")
        _break_if_tracing("set_state")
        values = np.asarray(new_state._concrete("Generator.set_state()"))
        if values.ndim != 1 or values.size != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but "
                               f"found the input RNG state size to be {values.size}")
        if ((values < 0) | (values > 255)).any():
            raise RuntimeError("RNG state is invalid: its elements are bytes (0 to 255)")
        bit_state, seed, cache = stream.from_torch_bytes(values.astype(np.uint8).tobytes())
        self.bit_generator.state = bit_state
        self._initial_seed = seed
        self._normal_cache[0] = cache
        return self

    def __repr__(self) -> str:
        return f"<autojit.Generator object at {hex(id(self))}>"

    __str__ = __repr__  # numpy.random.Generator's own __str__ would name the bit generator

    def __reduce__(self):
        return (_rebuild, (str(self._device), self._position(), self._initial_seed))

    def __deepcopy__(self, memo):
        rebuild, arguments = self.__reduce__()
        return rebuild(*arguments)


def _rebuild(where: str, position, initial_seed: int) -> Generator:
    generator = Generator(where)
    generator._set_position(position)
    generator._initial_seed = initial_seed
    return generator


def position(generator):
    """Where a generator's stream stands (an autojit Generator's, or a NumPy generator's
    given as `generator=`), for set_position."""
    if isinstance(generator, Generator):
        return generator._position()
    return generator.bit_generator.state


def set_position(generator, where) -> None:
    """Put a generator's stream back where position() found it."""
    if isinstance(generator, Generator):
        generator._set_position(where)
    else:
        generator.bit_generator.state = where


# ---- the default generators -------------------------------------------------------------------

default_generator = Generator()
default_generator.seed()  # from the operating system, as torch's at start-up
_device_generators: dict = {}  # CUDA device index -> its default Generator
# Seeds for CUDA devices whose generator is not made yet (it is made on the device's first
# random tensor, which needs the GPU): one device's, and every device's.
_device_seeds: dict = {}
_every_device_seed: list = [None]


def device_default(where) -> Generator:
    """The default generator of a device (None: the CPU)."""
    if where is None or where.type == "cpu":
        return default_generator
    index = where.index or 0
    found = _device_generators.get(index)
    if found is None:
        found = Generator._default_of(device(where.type, index))
        chosen = _device_seeds.pop(index, _every_device_seed[0])
        if chosen is None:
            chosen = fresh_seed()
        found._reseed(chosen)
        _device_generators[index] = found
    return found


def device_generators() -> list:
    """The default generators of the CUDA devices used so far."""
    return list(_device_generators.values())


def seed_devices(seed: int, index: int | None = None) -> None:
    """Seed the default generator of CUDA device `index` (every device for None), now or when
    it is made: torch.cuda.manual_seed works before CUDA is first used, too."""
    seed = _checked_seed(seed)
    if index is None:
        _every_device_seed[0] = seed
        _device_seeds.clear()
        for generator in _device_generators.values():
            generator.manual_seed(seed)
    elif index in _device_generators:
        _device_generators[index].manual_seed(seed)
    else:
        _device_seeds[index] = seed


def resolve(generator, name: str, where=None) -> np.random.Generator:
    """The generator a draw of `name` on device `where` uses: `generator=` checked (an
    autojit.Generator of that device type, or a numpy.random.Generator), else the device's
    default."""
    if generator is None:
        return device_default(where)
    if isinstance(generator, Generator):
        wanted = "cpu" if where is None else where.type
        if generator.device.type != wanted:
            raise RuntimeError(f"Expected a '{wanted}' device type for generator but found "
                               f"'{generator.device.type}'")
        return generator
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"{name}(): argument 'generator' must be autojit.Generator, not "
                    f"{type(generator).__name__}")


# ---- the global functions -----------------------------------------------------------------------

def manual_seed(seed) -> Generator:
    """Seed every default generator (the CPU's and the CUDA devices'); returns the CPU's.

    >>> import autojit
    >>> autojit.manual_seed(0) is autojit.default_generator
    True
    """
    seed = _checked_seed(int(seed))  # torch's int(seed): "3" and 3.7 are accepted
    default_generator.manual_seed(seed)
    seed_devices(seed)
    return default_generator


def seed() -> int:
    """Seed every default generator from the operating system; returns the seed."""
    chosen = default_generator.seed()
    seed_devices(chosen)
    return chosen


def initial_seed() -> int:
    """The seed the CPU's default generator started from."""
    return default_generator.initial_seed()


def get_rng_state():
    """The CPU's default generator's state (Generator.get_state)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the CPU's default generator's state from get_rng_state()."""
    default_generator.set_state(new_state)
