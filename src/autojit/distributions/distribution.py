"""Distribution: the base class of autojit.distributions, with torch's interface (batch and
event shapes, sample/rsample, log_prob, cdf/icdf, entropy, expand) and its argument validation.

Validation (`validate_args`, on by default as in torch under `__debug__`, switched for every
distribution by `Distribution.set_default_validate_args`) checks each parameter against its
constraint in __init__, and each value given to log_prob/cdf/icdf against the support. Eagerly
a failed check raises torch's ValueError, naming the parameter and printing its values. In a
compiled function (or under vmap) a Python decision on the data would break the graph, so the
check becomes a `check_index` node whose zero result is added to the checked tensor: the
compiled kernel reports the failure, and the call raises the same ValueError, without the
values. See docs/distributions.md.
"""

from __future__ import annotations

import numbers
import warnings

from ..autograd import no_grad
from ..ops import elementwise as ew
from ..ops.indexing.checks import FORMS, check_index
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Size, Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _traced() -> bool:
    """Whether a data-dependent Python decision is unavailable here (a trace or vmap)."""
    return state.tracer is not None or bool(state.vmap_levels)


def checked(value: Tensor, valid: Tensor, message, shown=None) -> Tensor:
    """`value`, once every entry of the bool tensor `valid` is true; otherwise
    ValueError(message), followed eagerly by value's entries (or by `shown(value, valid)`).
    `message` is the text or a function giving it, called only where it is needed (eagerly,
    when the check fails: a subclass's repr may read attributes its __init__ sets after
    validating, as torch's messages are made only then). Under a trace the result is value
    plus the zero that a check_index node gives, so the compiled function keeps the check."""
    if not _traced():
        if not bool(valid.all()):
            text = message() if callable(message) else message
            raise ValueError(f"{text}:\n{value if shown is None else shown(value, valid)}")
        return value
    message = message() if callable(message) else message
    # One form per message: ops/indexing/checks.py raises FORMS[form] when the kernel's check
    # fails (its message is a format string, hence the doubled braces). See
    # docs/notes/errors-in-kernels.md.
    FORMS.setdefault(message, (ValueError, message.replace("{", "{{").replace("}", "}}")))
    flag = check_index(ew.cast(ew.logical_not(valid), dtypes.int64).reshape(-1), 1, message)
    return value + ew.cast(flag.sum(), value.dtype)


def _shown(distribution) -> str:
    """A distribution's repr in a message; under a trace, where the message is made while
    __init__ runs, a subclass's repr may need attributes not set yet: then its class name."""
    try:
        return repr(distribution)
    except AttributeError:
        if not _traced():
            raise
        return f"{type(distribution).__name__}()"


def _type_name(value) -> str:
    """The type a message names: a parameter's class (Parameter for nn.Parameter), but Tensor
    for vmap's batched view of one, which torch's vmap does not show either."""
    name = type(value).__name__
    return "Tensor" if name == "BatchedTensor" else name


def _describe(value) -> str:
    """A parameter in a distribution's repr: its value when it has one element, else its
    shape (always the shape while traced, where formatting a value would need its data)."""
    if isinstance(value, Tensor) and (value.numel() != 1 or _traced()):
        return repr(value.size())
    return str(value)


class Distribution:
    """The base class of probability distributions.

    batch_shape: the shape over which parameters are batched; event_shape: the shape of one
    sample; validate_args: check the parameters (and the values scored) against their
    constraints (None: the class default, `Distribution.set_default_validate_args`).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution created without an
        explicit validate_args."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked alone
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # a lazily computed form of another parameter
                value = getattr(self, param)

                def message(param=param, value=value, constraint=constraint):
                    return (f"Expected parameter {param} ({_type_name(value)} of shape "
                            f"{tuple(value.shape)}) of distribution {_shown(self)} to satisfy "
                            f"the constraint {constraint!r}, but found invalid values")

                value = checked(value, constraint.check(value), message)
                if param in self.__dict__:
                    self.__dict__[param] = value
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its batch dims expanded to `batch_shape` (the parameters
        are expanded views; nothing is validated again)."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of one sample, without batching."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """The constraint of each tensor parameter, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint of the values the distribution takes."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()) -> Tensor:
        """A sample of shape sample_shape + batch_shape + event_shape, not differentiable."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """A reparameterized sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """n samples (deprecated: sample((n,)))."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density (or mass) at `value`."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at `value`."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse cumulative distribution function at `value`."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete distribution along dim 0: shape (cardinality,) +
        batch_shape + event_shape, or with the batch dims of size 1 when expand is False."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, of shape batch_shape."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()) -> Size:
        """The shape of a sample of `sample_shape`: sample_shape + batch_shape + event_shape."""
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> Tensor:
        """Check a value scored by log_prob, cdf or icdf: its rightmost dims match the event
        shape, it broadcasts with the batch shape, and it lies in the support. Returns value
        (carrying the check when traced, see `checked`)."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return value
        if support is None:
            raise AssertionError("support is unexpectedly None")
        message = (f"Expected value argument ({_type_name(value)} of shape "
                   f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                   f"distribution {self!r}, but found invalid values")
        return checked(value, support.check(value), message)

    def _get_checked_instance(self, cls, _instance=None):
        """The instance `expand` fills: a new one of this class, which needs a class without
        an __init__ of its own (else it must define expand)."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} "
                                      "that defines a custom __init__ method must also define "
                                      "a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [name for name in self.arg_constraints if name in self.__dict__]
        arguments = ", ".join(f"{name}: {_describe(self.__dict__[name])}" for name in names)
        return f"{self.__class__.__name__}({arguments})"


def expand_parameters(dist: Distribution, cls, batch_shape, _instance, names,
                      event_shape=None) -> Distribution:
    """The common body of `expand`: a new instance of `cls` whose parameters among `names`
    (those `dist` has computed) are expanded views of dist's, to `batch_shape` followed by each
    parameter's own dims past the batch dims; not validated again."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    batch_dims = len(dist.batch_shape)
    for name in names:
        if name in dist.__dict__:
            value = dist.__dict__[name]
            setattr(new, name, value.expand(tuple(batch_shape) + tuple(value.shape[batch_dims:])))
    event_shape = dist.event_shape if event_shape is None else event_shape
    Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new


def batch_shape_of(params, tensors) -> Size:
    """A distribution's batch shape: () when every parameter given was a Python number, else
    the broadcast parameters' shape."""
    if all(isinstance(param, numbers.Number) for param in params):
        return Size()
    return tensors[0].size()
