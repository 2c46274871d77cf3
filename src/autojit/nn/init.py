"""autojit.nn.init: fill a parameter in place with the values a layer starts from.

Each function draws from autojit's global generator (seeded by autojit.manual_seed) unless a
generator is passed, torch's numbers for the same seed (tensor/random.py's RandomDraw),
writes the values into the tensor under no_grad (so a Parameter stays a leaf and its identity
is kept) and returns the tensor. Fan-in and fan-out follow the usual convention: dim 1 is the
input features, dim 0 the output features, and any further dims form the receptive field of a
convolution kernel. Initialization runs before training, outside the traced forward and
backward, so the numbers are drawn at once.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import dtypes
from ..tensor.creation import default_generator
from ..tensor.random import RandomDraw
from ..tensor.tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_"]

_LINEAR_FUNCTIONS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                     "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (the scale that keeps activations' variance).

        >>> from autojit.nn import init
        >>> init.calculate_gain("tanh")
        1.6666666666666667
    """
    if nonlinearity in _LINEAR_FUNCTIONS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _write(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Copy values into tensor in place, recording no history."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init expects an autojit.Tensor, got {type(tensor).__name__}")
    with no_grad():
        tensor.copy_(Tensor._make(np.asarray(values, dtype=tensor.dtype.numpy), tensor.dtype))
    return tensor


def _generator(generator) -> np.random.Generator:
    return generator if generator is not None else default_generator()


def _drawn(kind: str, shape: tuple, dtype, low, high, generator) -> np.ndarray:
    """A draw of `kind` (tensor/random.py's RandomDraw, torch's rules for each dtype)."""
    return RandomDraw(kind, shape, dtype, _generator(generator), low, high).draw()


def _uniform(tensor: Tensor, a: float, b: float, generator) -> np.ndarray:
    """tensor.uniform_(a, b)'s values, in its shape."""
    return _drawn("rand", tuple(tensor.shape), _draw_dtype(tensor), a, b, generator)


def _normal(shape: tuple, dtype, mean: float, std: float, generator) -> np.ndarray:
    """normal_(mean, std)'s values for a tensor of `shape` and `dtype`."""
    return _drawn("randn", shape, dtype, mean, std, generator)


def _draw_dtype(tensor: Tensor) -> dtypes.DType:
    """The dtype a tensor's random values are drawn in: its own, or float64."""
    return tensor.dtype if tensor.dtype.is_floating_point else dtypes.float64


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of U(a, b).

        >>> import autojit
        >>> from autojit.nn import init
        >>> w = init.uniform_(autojit.empty(100), -0.1, 0.1)
        >>> bool((w.abs() <= 0.1).all())
        True
    """
    return _write(tensor, _uniform(tensor, a, b, generator))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of N(mean, std**2).

        >>> import autojit
        >>> from autojit.nn import init
        >>> w = init.normal_(autojit.empty(1000), mean=2.0, std=0.1)
        >>> round(w.mean().item())
        2
    """
    return _write(tensor, _normal(tuple(tensor.shape), _draw_dtype(tensor), mean, std, generator))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with samples of N(mean, std**2) restricted to [a, b], drawn as torch draws them:
    normal samples redrawn until inside where [a, b] holds more than 0.3 of the mass, else
    uniform samples on [a, b] accepted with the normal density's ratio to its peak.

        >>> import autojit
        >>> from autojit.nn import init
        >>> w = init.trunc_normal_(autojit.empty(1000), std=1.0, a=-0.5, b=0.5)
        >>> bool((w.abs() <= 0.5).all())
        True
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    shape, dtype = tuple(tensor.shape), _draw_dtype(tensor)
    scalar = np.dtype(dtype.numpy).type

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
        low, high = scalar(a), scalar(b)
        result = _normal(shape, dtype, mean, std, generator)
        while True:
            outside = (result < low) | (result > high)
            if not outside.any():
                return _write(tensor, result)
            result = np.where(outside, _normal(shape, dtype, mean, std, generator), result)
    log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

    def log_density(values):
        scaled = (values - scalar(mean)) / scalar(std)
        return scaled * scaled * scalar(-0.5) - scalar(log_peak)

    def rejected(candidates):
        return np.log(_uniform(tensor, 0.0, 1.0, generator)) > log_density(candidates)

    result = _uniform(tensor, a, b, generator)
    pending = rejected(result)
    while pending.any():
        candidates = _uniform(tensor, a, b, generator)
        result = np.where(pending, candidates, result)
        pending = np.where(pending, rejected(candidates), pending)
    return _write(tensor, result)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with the value val.

        >>> import autojit
        >>> from autojit.nn import init
        >>> init.constant_(autojit.empty(2, 3), 0.5)
        tensor([[0.5000, 0.5000, 0.5000],
                [0.5000, 0.5000, 0.5000]])
    """
    return _write(tensor, np.full(tuple(tensor.shape), val))


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

        >>> import autojit
        >>> from autojit.nn import init
        >>> init.ones_(autojit.empty(3))
        tensor([1., 1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

        >>> import autojit
        >>> from autojit.nn import init
        >>> init.zeros_(autojit.empty(2, 2))
        tensor([[0., 0.],
                [0., 0.]])
    """
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal).

        >>> import autojit
        >>> from autojit.nn import init
        >>> init.eye_(autojit.empty(2, 3))
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape))


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive_field = 1
    for extent in tensor.shape[2:]:
        receptive_field *= extent
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010).

        >>> import autojit
        >>> from autojit.nn import init
        >>> w = init.xavier_uniform_(autojit.empty(3, 5))
        >>> bool(w.abs().max() <= (6 / (5 + 3)) ** 0.5)
        True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out)).

        >>> import autojit
        >>> from autojit.nn import init
        >>> init.xavier_normal_(autojit.empty(30, 50), gain=init.calculate_gain("tanh")).shape
        autojit.Size([30, 50])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015).

        >>> import autojit
        >>> from autojit.nn import init
        >>> w = init.kaiming_uniform_(autojit.empty(64, 16), a=5 ** 0.5)
        >>> bool(w.abs().max() <= 1 / 16 ** 0.5)
        True
    """
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """N(0, std**2) with std = gain / sqrt(fan) (He et al., 2015).

        >>> import autojit
        >>> from autojit.nn import init
        >>> w = init.kaiming_normal_(autojit.empty(30, 50), mode="fan_out", nonlinearity="relu")
        >>> w.shape
        autojit.Size([30, 50])
    """
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


# ---- structured initializations: orthogonal_, sparse_, dirac_ ---------------------------------

def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix times gain (the tensor viewed as rows x rest), from
    the QR decomposition of a normal sample, as torch (Saxe et al., 2013).

        >>> import autojit
        >>> from autojit.nn import init
        >>> w = init.orthogonal_(autojit.empty(3, 5))
        >>> bool(((w @ w.T) - autojit.eye(3)).abs().max() < 1e-5)
        True
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    sample = _normal((rows, cols), _draw_dtype(tensor), 0.0, 1.0, generator)
    if rows < cols:
        sample = sample.T
    q, r = np.linalg.qr(sample)
    q = q * np.sign(np.diag(r))  # makes the decomposition unique, so q is uniformly drawn
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tuple(tensor.shape)))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fill a 2-D tensor with N(0, std) samples, then zero ceil(sparsity * rows) random
    entries of each column (Martens, 2010).

        >>> import autojit
        >>> from autojit.nn import init
        >>> w = init.sparse_(autojit.empty(10, 4), sparsity=0.3)
        >>> (w == 0).sum(0).tolist()
        [3, 3, 3, 3]
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros_per_column = int(math.ceil(sparsity * rows))
    values = _normal((rows, cols), _draw_dtype(tensor), 0.0, std, generator)
    for column in range(cols):
        order = _drawn("randperm", (rows,), dtypes.int64, 0, rows, generator)
        values[order[:zeros_per_column], column] = 0
    return _write(tensor, values)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: the convolution keeps its
    input's channels (per group) unchanged.

        >>> import autojit
        >>> from autojit.nn import init
        >>> w = init.dirac_(autojit.empty(2, 2, 3))
        >>> w[:, :, 1].tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_channels_per_group = sizes[0] // groups
    centre = tuple(size // 2 for size in sizes[2:])
    values = np.zeros(sizes)
    for group in range(groups):
        for channel in range(min(out_channels_per_group, sizes[1])):
            values[(group * out_channels_per_group + channel, channel) + centre] = 1
    return _write(tensor, values)


__all__ += ["orthogonal_", "sparse_", "dirac_"]


def _deprecated(method):
    """torch's deprecated name without the trailing underscore (`nn.init.xavier_uniform`):
    the method itself, after torch's FutureWarning."""
    new_name = method.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return method(*args, **kwargs)

    deprecated_init.__doc__ = f"""{old_name}(...): deprecated, see nn.init.{new_name}."""
    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
