"""torch's CPU random stream: the Mersenne Twister seeded as torch seeds it, torch's state layout,
and torch's transforms of the twister's 32-bit words into uniform, normal, integer, permutation
and Bernoulli draws, so that the same seed gives torch's numbers.

generator.py's Generator runs on NumPy's MT19937 bit generator, whose 624-word key and position
are torch's `state_` and `next_`; this module seeds it (torch's `init_with_uint32`, the
reference initialisation of the 32-bit seed's low word), converts its state to and from torch's
5056-byte `get_rng_state()` layout, and draws. tensor/random.py's RandomDraw calls the draws.

The transforms are those of torch's CPU kernels (ATen's DistributionTemplates and
TransformationHelper), element by element in the tensor's order:
- uniform: a 32-bit word masked to 24 bits, or for float64 a 64-bit word (high word drawn
  first) masked to 53 bits, times 2^-bits, then `x * (to - from) + from` in double (fused for
  float64), rounded to the dtype (float16 and bfloat16 round float32's values);
- normal of 16 or more contiguous elements: uniform draws for every element, then Box-Muller
  over blocks of 16 (the first 8 give the radius, the last 8 the angle), in the dtype; a size
  not a multiple of 16 draws its last 16 again. float32 runs torch's vectorized x86 kernel:
  Cephes' logarithm, sine and cosine with fused multiply-adds, which these emulate bit for bit
  up to EXACT_NORMALS elements (above, NumPy's float32 functions, within a few units in the
  last place); float64 takes NumPy's, within a unit in the last place of the C library's.
  Fewer elements: one double normal each, the pairs' second value kept on the generator for
  the next draw;
- integers on [low, low + range): `word % range + low`, with 64-bit words from a range of 2^32;
- randperm: the Fisher-Yates swaps of `word % (n - i)`;
- of a float64 uniform u: bernoulli_ with a float p, a 1 where u is below p; exponential_,
  `-1 / lambda * log1p(-u)`; cauchy_, `median + sigma * tan(pi * (u - 0.5))`; geometric_,
  `ceil(log(u) / log1p(-p))`; log_normal_, exp of one double normal per element.
"""

from __future__ import annotations

import math

import numpy as np

N = 624  # words of state
_F32 = np.float32
STATE_BYTES = 5056  # sizeof(CPUGeneratorImplState)
# CPUGeneratorImplState's fields: the legacy THGeneratorState, then the float normal cache.
_SEED, _LEFT, _SEEDED, _NEXT, _WORDS = 0, 8, 12, 16, 24
_NORMAL_Y, _NORMAL_VALID = 24 + 8 * N + 8, 24 + 8 * N + 24  # after normal_x; rho between


def seeded_key(seed: int) -> np.ndarray:
    """The twister's 624 words seeded with `seed`'s low 32 bits (torch's init_with_uint32)."""
    key = np.empty(N, np.uint32)
    word = seed & 0xFFFFFFFF
    key[0] = word
    for j in range(1, N):
        word = (1812433253 * (word ^ (word >> 30)) + j) & 0xFFFFFFFF
        key[j] = word
    return key


def seeded_state(seed: int) -> dict:
    """NumPy's MT19937 state for `seed`: the seeded words, twisted on the first draw."""
    return {"bit_generator": "MT19937", "state": {"key": seeded_key(seed), "pos": N}}


def to_torch_bytes(bit_state: dict, seed: int, normal_cache) -> bytes:
    """torch's get_rng_state() bytes of a twister state, its seed and the double normal kept
    for the next draw (None: none)."""
    raw = bytearray(STATE_BYTES)
    pos = int(bit_state["state"]["pos"])
    left, following = (1, N) if pos >= N else (N + 1 - pos, pos)
    raw[_SEED:_SEED + 8] = seed.to_bytes(8, "little")
    raw[_LEFT:_LEFT + 4] = left.to_bytes(4, "little")
    raw[_SEEDED:_SEEDED + 4] = (1).to_bytes(4, "little")
    raw[_NEXT:_NEXT + 8] = following.to_bytes(8, "little")
    raw[_WORDS:_WORDS + 8 * N] = np.asarray(bit_state["state"]["key"], np.uint64).tobytes()
    if normal_cache is not None:  # torch keeps the value itself in normal_y (rho stays 0)
        raw[_NORMAL_Y:_NORMAL_Y + 8] = np.float64(normal_cache).tobytes()
        raw[_NORMAL_VALID:_NORMAL_VALID + 4] = (1).to_bytes(4, "little")
    return bytes(raw)


def from_torch_bytes(raw: bytes):
    """(NumPy's MT19937 state, the seed, the double normal kept or None) of torch's bytes."""
    seed = int.from_bytes(raw[_SEED:_SEED + 8], "little")
    left = int.from_bytes(raw[_LEFT:_LEFT + 4], "little", signed=True)
    seeded = raw[_SEEDED] != 0
    following = int.from_bytes(raw[_NEXT:_NEXT + 8], "little")
    words = np.frombuffer(raw[_WORDS:_WORDS + 8 * N], np.uint64)
    if not seeded or not 0 < left <= N or following > N:  # torch's mt19937 is_valid()
        raise RuntimeError("Invalid mt19937 state")
    pos = N if left == 1 else following
    cache = None
    if int.from_bytes(raw[_NORMAL_VALID:_NORMAL_VALID + 4], "little"):
        cache = float(np.frombuffer(raw[_NORMAL_Y:_NORMAL_Y + 8], np.float64)[0])
    # torch keeps each 32-bit word in 64 bits and reads back the low half.
    state = {"bit_generator": "MT19937",
             "state": {"key": (words & np.uint64(0xFFFFFFFF)).astype(np.uint32), "pos": pos}}
    return state, seed, cache


# ---- words ------------------------------------------------------------------------------------

def words32(rng, count: int) -> np.ndarray:
    """`count` 32-bit words as uint64: the twister's outputs, or of another NumPy generator
    (a `generator=` of NumPy's) its integers below 2^32."""
    bit_generator = rng.bit_generator
    if isinstance(bit_generator, np.random.MT19937):
        return bit_generator.random_raw(count)
    return rng.integers(0, 1 << 32, size=count, dtype=np.uint64)


def words64(rng, count: int) -> np.ndarray:
    """`count` 64-bit words, each of two 32-bit words, the first the high half (torch's
    random64)."""
    pairs = words32(rng, 2 * count).reshape(count, 2)
    return (pairs[:, 0] << np.uint64(32)) | pairs[:, 1]


# ---- uniform ---------------------------------------------------------------------------------

def unit_uniform(rng, count: int, double: bool) -> np.ndarray:
    """torch's uniform on [0, 1) in double: multiples of 2^-24 from 32-bit words, or for a
    float64 tensor (`double`) of 2^-53 from 64-bit ones."""
    bits = 53 if double else 24
    raw = words64(rng, count) if double else words32(rng, count)
    raw &= np.uint64((1 << bits) - 1)
    return raw.astype(np.float64) * (1.0 / (1 << bits))


def unit_uniform32(rng, count: int) -> np.ndarray:
    """unit_uniform's float32 values as float32 (24-bit integers and a power of two: exact)."""
    raw = words32(rng, count)
    raw &= np.uint64((1 << 24) - 1)
    values = raw.astype(np.float32)
    values *= _F32(1.0 / (1 << 24))
    return values


def _c_value(dtype, value) -> float:
    """A Python number as the dtype's C value (torch casts from and to to scalar_t first)."""
    return float(np.asarray(value, np.float64).astype(dtype))


def uniform(rng, count: int, numpy_dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """uniform_(low, high) of `count` elements: `x * (to - from) + from` in double."""
    dtype = np.dtype(numpy_dtype)
    double = dtype == np.float64
    x = unit_uniform(rng, count, double)
    working = np.float64 if double else np.float32
    low, high = _c_value(dtype, low), _c_value(dtype, high)
    span = _c_value(working, high - low)
    if double and (span != 1.0 or low != 0.0):
        # The kernel's multiply-add is fused: one rounding, which extended precision gives.
        x = (x.astype(np.longdouble) * span + low).astype(np.float64)
    else:
        if span != 1.0:
            x *= span
        if low != 0.0:
            x += low
    return x.astype(working).astype(dtype, copy=False)


# ---- normal ------------------------------------------------------------------------------------

# Cephes' single-precision logarithm and sine/cosine, as torch's avx_mathfun.h vectorizes them
# for the float32 Box-Muller of its x86 kernels (compiled with fused multiply-adds).
_LOG_TERMS = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
              1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
              3.3333331174e-1)
def _fma(a, b, c):
    """a * b + c rounded once, for float32 operands (their product is exact in double)."""
    return (a.astype(np.float64) * b + c).astype(_F32)


def _log_f32(x: np.ndarray) -> np.ndarray:
    """Cephes' logf of positive float32 values: the mantissa in [sqrt(1/2), sqrt(2)) and a
    polynomial."""
    bits = x.view(np.int32)
    exponent = ((bits >> 23) - 0x7F + 1).astype(_F32)
    mantissa = ((bits & ~0x7F800000) | 0x3F000000).view(_F32)  # in [0.5, 1)
    small = mantissa < _F32(0.707106781186547524)
    exponent -= small.astype(_F32)
    m = (mantissa - _F32(1)) + np.where(small, mantissa, _F32(0))
    z = m * m
    y = np.full_like(m, _LOG_TERMS[0])
    for term in _LOG_TERMS[1:]:
        y = _fma(y, m, _F32(term))
    y = _fma(y * m, z, exponent * _F32(-2.12194440e-4))
    y = _fma(z, _F32(-0.5), y)
    return _fma(exponent, _F32(0.693359375), m + y)


def _sincos_f32(x: np.ndarray):
    """Cephes' sinf and cosf of non-negative float32 values: reduced by multiples of pi/4 in
    three parts, then the polynomial of the octant."""
    octant = (x * _F32(1.27323954473516)).astype(np.int32)
    octant = (octant + 1) & ~1
    y = octant.astype(_F32)
    for part in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _fma(y, _F32(part), x)
    z = x * x
    cosine = _fma(_fma(np.full_like(z, 2.443315711809948e-5), z, _F32(-1.388731625493765e-3)),
                  z, _F32(4.166664568298827e-2))
    cosine = _fma(cosine * z, z, -(z * _F32(0.5))) + _F32(1)
    sine = _fma(_fma(np.full_like(z, -1.9515295891e-4), z, _F32(8.3321608736e-3)), z,
                _F32(-1.6666654611e-1))
    sine = _fma(sine * z, x, x)
    first = (octant & 2) == 0
    sin = np.where(first, sine, cosine)
    cos = np.where(first, cosine, sine)
    sin = np.where((octant & 4) != 0, -sin, sin)
    cos = np.where(((octant - 2) & 4) == 0, -cos, cos)
    return sin, cos


def _box_muller_16(data: np.ndarray, mean, std, dtype) -> None:
    """normal_fill_16 over whole blocks of 16 in place: data holds uniforms in the dtype,
    float32 (torch's vectorized kernel) or float64 (its scalar one)."""
    blocks = data.reshape(-1, 16)
    u1 = dtype.type(1) - blocks[:, :8]
    u2 = blocks[:, 8:]
    if dtype == np.float64:
        radius = np.sqrt(-2.0 * np.log(u1))
        theta = 2.0 * math.pi * u2
        sin, cos = np.sin(theta), np.cos(theta)
        blocks[:, :8] = radius * cos * std + mean
        blocks[:, 8:] = radius * sin * std + mean
        return
    if blocks.shape[0] * 16 > EXACT_NORMALS:
        # NumPy's float32 logarithm, sine and cosine: within a few units in the last place of
        # the emulation, at a seventh of its time.
        radius = np.sqrt(_F32(-2) * np.log(u1))
        theta = _F32(2.0 * math.pi) * u2
        blocks[:, :8] = radius * np.cos(theta) * _F32(std) + _F32(mean)
        blocks[:, 8:] = radius * np.sin(theta) * _F32(std) + _F32(mean)
        return
    # In chunks whose temporaries stay in the cache: the emulation's many passes cost memory
    # traffic, not arithmetic.
    for start in range(0, blocks.shape[0], _CHUNK_BLOCKS):
        part = slice(start, start + _CHUNK_BLOCKS)
        radius = np.sqrt(_F32(-2) * _log_f32(np.ascontiguousarray(u1[part])))
        sin, cos = _sincos_f32(_F32(2.0 * math.pi) * u2[part])
        blocks[part, :8] = _fma(radius * cos, _F32(std), _F32(mean))
        blocks[part, 8:] = _fma(radius * sin, _F32(std), _F32(mean))


_CHUNK_BLOCKS = 1024
# float32 normal draws of up to this many elements emulate torch's kernel bit for bit (about
# 65 ms a million); larger ones, a model's initialization, take NumPy's functions.
EXACT_NORMALS = 1 << 21


def normal(rng, count: int, numpy_dtype, mean: float = 0.0, std: float = 1.0,
           cache=None, reduced: bool = False, serial: bool = False) -> np.ndarray:
    """normal_(mean, std) of `count` contiguous elements. `cache` is the generator's
    one-element list holding the double normal kept for the next small draw (or None).
    `reduced`: for a float16 or bfloat16 tensor, whose kernel draws the uniforms of its whole
    blocks of 16 only before the last 16 (float32 values, for the caller to round).
    `serial`: one double normal per element whatever the count (log_normal_'s kernel)."""
    dtype = np.dtype(numpy_dtype)
    if count >= 16 and not serial:
        double = dtype == np.float64
        working = np.dtype(np.float64 if double else np.float32)
        drawn = count - count % 16 if reduced else count
        data = np.empty(count, working)
        data[:drawn] = unit_uniform(rng, drawn, True) if double else unit_uniform32(rng, drawn)
        mean, std = _c_value(working, mean), _c_value(working, std)
        whole = count - count % 16
        _box_muller_16(data[:whole], mean, std, working)
        if count % 16:
            tail = unit_uniform(rng, 16, True) if double else unit_uniform32(rng, 16)
            _box_muller_16(tail, mean, std, working)
            data[count - 16:] = tail
        return data.astype(dtype, copy=False)
    out = np.empty(count, np.float64)
    for i in range(count):
        if cache is not None and cache[0] is not None:
            value, cache[0] = cache[0], None
        else:
            u1, u2 = unit_uniform(rng, 2, True)
            radius = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            if cache is not None:
                cache[0] = radius * math.sin(theta)
            value = radius * math.cos(theta)
        out[i] = value * std + mean
    return out.astype(dtype)


# ---- integers, permutations, Bernoulli --------------------------------------------------------

def integers(rng, count: int, low: int, span: int) -> np.ndarray:
    """int64 integers `word % span + low` (64-bit words from a span of 2^32), as a Python-int
    range may exceed int64 only through low + span."""
    raw = words64(rng, count) if span >= 1 << 32 else words32(rng, count)
    raw %= np.uint64(span)
    values = raw.astype(np.int64)
    if low:
        values += np.int64(low)
    return values


def _swaps(words: np.ndarray, n: int) -> np.ndarray:
    """The Fisher-Yates swaps of randperm: element i trades places with i + words[i] % (n - i).
    Each swap depends on the ones before, so they run one by one, on a Python list (0.6 s
    for a million, where torch's C++ loop takes milliseconds)."""
    offsets = (words % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64)
    offsets += np.arange(n - 1)
    values = list(range(n))
    for i, z in enumerate(offsets.tolist()):
        values[i], values[z] = values[z], values[i]
    return np.array(values, dtype=np.int64)


def permutation(rng, n: int) -> np.ndarray:
    """randperm(n): the swaps of torch's CPU kernel, each of one 32-bit word."""
    if n <= 1:
        return np.arange(n, dtype=np.int64)
    return _swaps(words32(rng, n - 1), n)


def bernoulli(rng, count: int, p: float) -> np.ndarray:
    """bernoulli_(p) of a float p: 1.0 where a float64 uniform is below p, else 0.0."""
    return (unit_uniform(rng, count, True) < p).astype(np.float64)


def exponential(rng, count: int, rate: float) -> np.ndarray:
    """exponential_(rate) in double: -1 / rate * log1p(-u) of a float64 uniform u."""
    return (-1.0 / rate) * np.log1p(-unit_uniform(rng, count, True))


def cauchy(rng, count: int, median: float, sigma: float) -> np.ndarray:
    """cauchy_(median, sigma) in double."""
    return median + sigma * np.tan(math.pi * (unit_uniform(rng, count, True) - 0.5))


def geometric(rng, count: int, p: float) -> np.ndarray:
    """geometric_(p) in double: the trials up to the first success."""
    with np.errstate(divide="ignore"):
        return np.ceil(np.log(unit_uniform(rng, count, True)) / math.log1p(-p))


def log_normal(rng, count: int, mean: float, std: float, cache=None) -> np.ndarray:
    """log_normal_(mean, std) in double: exp of a serial double normal for each element."""
    return np.exp(normal(rng, count, np.float64, mean, std, cache, serial=True))
