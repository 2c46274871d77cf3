"""The random factories: rand, randn and randint, and their `_like` forms, each a draw
(random.py) from a Generator (generator.py): the device's default one, which manual_seed
seeds, unless `generator=` names another.

A data pipeline's per-sample calls (randint of a crop's offsets, randn_like of the noise)
take fast paths that draw at once from the same stream. creation.py re-exports every name
here, and its importers read them from there.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from . import generator as generators
from .device import check_device
from .factory_arguments import _in_format, _like_device, _size
from .generator import manual_seed  # noqa: F401 - re-exported: autojit.manual_seed
from .memory_format import (
    preserve_format,
    preserved_order,
)
from .random import (
    RandomDraw,
    check_floating,
    check_integer_range,
    eager_randint,
    random_tensor,
)
from .state import SPECIAL, state
from .tensor import Tensor, plain_tensor

__all__ = ["rand", "rand_like", "randint", "randint_like", "randn", "randn_like"]


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, layout=None,
         pin_memory=False) -> Tensor:
    """Uniform samples on [0, 1); the size is given as integers or as one sequence."""
    if generator is None and dtype is None and device is None and not requires_grad:
        found = _eager_draw("rand", size)
        if found is not None:
            return found
    device = check_device(device)
    dtype = _random_dtype(dtype, "rand", "check_uniform_bounds")
    rng = generators.resolve(generator, "rand", device)
    return random_tensor(RandomDraw("rand", _extents(size), dtype, rng), device,
                         requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, layout=None,
          pin_memory=False) -> Tensor:
    """Standard normal samples, drawn from the generator that manual_seed seeds.

    >>> import autojit
    >>> _ = autojit.manual_seed(0)
    >>> first = autojit.randn(2, 3)
    >>> first.shape, first.dtype
    (autojit.Size([2, 3]), autojit.float32)
    >>> _ = autojit.manual_seed(0)
    >>> bool((autojit.randn(2, 3) == first).all())
    True
    """
    if generator is None and dtype is None and device is None and not requires_grad:
        found = _eager_draw("randn", size)
        if found is not None:
            return found
    device = check_device(device)
    dtype = _random_dtype(dtype, "randn", "normal_kernel_cpu")
    rng = generators.resolve(generator, "randn", device)
    return random_tensor(RandomDraw("randn", _extents(size), dtype, rng), device,
                         requires_grad)


def _eager_draw(kind: str, size: tuple):
    """rand's or randn's values (`kind`) in the default dtype,
    drawn at once from the CPU's default generator, for a caller that gave nothing but the
    size as ints (or one tuple or list of them), where no default device is set and nothing
    traces or runs under vmap (a data pipeline's coin flip, `rand(()).item() < 0.5`), else
    None: the general path's checks cost more than the draw. The numbers are the general
    path's (RandomDraw.draw), from the same generator."""
    if state.dispatch == SPECIAL or state.default_device is not None:
        return None
    if len(size) == 1 and size[0].__class__ in (tuple, list):
        size = tuple(size[0])
    for extent in size:
        if extent.__class__ is not int or extent < 0:
            return None
    dtype = dtypes.get_default_dtype()
    return plain_tensor(RandomDraw(kind, size, dtype, generators.default_generator).draw(),
                        dtype)


def _extents(size: tuple) -> tuple:
    """The size as a tuple of extents; a negative one is torch's error (NumPy's ValueError
    came out of the draw before)."""
    shape = _size(size)
    for extent in shape:
        if extent < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {extent}: "
                               f"{list(shape)}")
    return shape


def _random_dtype(dtype, name: str, kernel: str) -> dtypes.DType:
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.dtype_argument(dtype, name)
    check_floating(dtype, kernel)
    return dtype


def randint(low=None, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False, layout=None, pin_memory=False) -> Tensor:
    """Integers uniform on [low, high): randint(high, size), randint(low, high, size), or by
    keyword (`randint(high=5, size=(3,))`, low 0)."""
    if low is None:  # randint(high=..., size=...)
        if high is None:
            raise TypeError("randint() missing required argument 'high' (pos 2)")
        low = 0
        if size is None:
            raise TypeError("randint() missing required argument 'size' (pos 3)")
    if size.__class__ is tuple and high.__class__ is int and low.__class__ is int and \
            generator is None and dtype is None and device is None and not requires_grad and \
            state.dispatch != SPECIAL and state.default_device is None:
        # The data pipeline's call (a random crop's offsets): drawn at once, the same numbers.
        found = eager_randint(low, high, size)
        if found is not None:
            return found
    device = check_device(device)
    if size is None:  # randint(high, size)
        if high is None:
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=size)
        low, high = 0, low
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                        f"{type(size).__name__}")
    dtype = dtypes.int64 if dtype is None else dtypes.dtype_argument(dtype, "randint")
    if dtype.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    check_integer_range(low, high, dtype)
    rng = generators.resolve(generator, "randint", device)
    return random_tensor(RandomDraw("randint", _extents((size,)), dtype, rng, low, high), device,
                         requires_grad)


def _eager_like_draw(kind: str, x: Tensor):
    """rand_like's or randn_like's values (`kind`) drawn at
    once, for a caller that was given nothing but x, where x is a float tensor of the CPU whose
    preserved format is the contiguous one and nothing traces or runs under vmap (the
    per-sample noise of a data pipeline), else None: the general path's checks cost several
    times the draw. The numbers are the general path's, from the same generator."""
    data = x._payload
    if data.__class__ is np.ndarray and state.dispatch != SPECIAL:
        like = x._dtype
        if like.category == dtypes.FLOATING and (data.flags.c_contiguous or
                                                 preserved_order(data) is None):
            return plain_tensor(RandomDraw(kind, data.shape, like,
                                           generators.default_generator).draw(), like)
    return None


def rand_like(x: Tensor, *, generator=None, dtype=None, device=None, requires_grad=False,
              layout=None, memory_format=preserve_format) -> Tensor:
    """Uniform samples on [0, 1) shaped like x, on x's device and in its dtype by default."""
    if generator is None and dtype is None and device is None and not requires_grad and \
            memory_format is preserve_format:
        found = _eager_like_draw("rand", x)
        if found is not None:
            return found
    return _in_format(rand(tuple(x.shape), generator=generator, dtype=dtype or x.dtype,
                           device=_like_device(x, device), requires_grad=requires_grad),
                      memory_format, x, "rand_like")


def randn_like(x: Tensor, *, generator=None, dtype=None, device=None, requires_grad=False,
               layout=None, memory_format=preserve_format) -> Tensor:
    """Standard normal samples shaped like x, on x's device and in its dtype by default."""
    if generator is None and dtype is None and device is None and not requires_grad and \
            memory_format is preserve_format:
        found = _eager_like_draw("randn", x)
        if found is not None:
            return found
    return _in_format(randn(tuple(x.shape), generator=generator, dtype=dtype or x.dtype,
                            device=_like_device(x, device), requires_grad=requires_grad),
                      memory_format, x, "randn_like")


def randint_like(x: Tensor, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False, layout=None, memory_format=preserve_format) -> Tensor:
    """Integers uniform on [low, high) shaped like x: randint_like(x, high) or
    randint_like(x, low, high); x's dtype and device by default."""
    if high is None:
        low, high = 0, low
    return _in_format(randint(low, high, tuple(x.shape), generator=generator,
                              dtype=dtype or x.dtype, device=_like_device(x, device),
                              requires_grad=requires_grad), memory_format, x, "randint_like")
