"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty, ranges, eye; the
random factories are in random_factories.py, re-exported here.

Factories make leaf tensors from Python data or NumPy arrays; they are not ops and record no
history. dtype inference follows torch: bools give bool, ints int64, floats the default dtype.
"""

from __future__ import annotations

import collections
import math
import numbers
import sys

import numpy as np

from . import dtypes
from . import generator as generators
from .determinism import uninitialized_fill
from .device import check_device, runtime
from .factory_arguments import _in_format, _like_device, _size
from .generator import manual_seed  # noqa: F401 - re-exported: autojit.manual_seed
from .graph_break import user_frame
from .memory_format import (
    contiguous_format,
    preserve_format,
)
from .meta import MetaArray
from .once import warn_once
from .range_kernels import linspace_values
from .state import state
from .symbolic import contains_runtime, contains_symbolic
from .tensor import Tensor


def default_generator() -> np.random.Generator:
    """The CPU's default Generator (generator.default_generator), which manual_seed seeds."""
    return generators.default_generator


def _finish(data: np.ndarray, dtype: dtypes.DType, requires_grad: bool, device=None) -> Tensor:
    if dtype is dtypes.bfloat16 and data.__class__ is np.ndarray:  # float32 storage holding
        # bfloat16 numbers (dtypes.py)
        data = dtypes.round_to_bfloat16(data)
    elif dtype is dtypes.complex32 and data.__class__ is np.ndarray:  # complex64 storage of
        # float16 parts, with torch's warning, given once, as it allocates such a tensor
        warn_once(dtypes.COMPLEX32_WARNING, dtypes.COMPLEX32_WARNING, UserWarning,
                  stacklevel=_user_stacklevel())
        data = dtypes.round_to_complex32(data)
    elif dtype.float8 is not None and data.__class__ is np.ndarray:  # float32 storage (float8.py)
        data = dtypes.round_to_float8(data, dtype)
    if device is not None and device.type != "cpu":  # copied to the device by its runtime
        data = runtime(device.type).from_host(data, device.index or 0)
    if requires_grad and dtype.category < dtypes.FLOATING:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    result = Tensor._make(data, dtype)
    if requires_grad:
        if dtype.category < dtypes.FLOATING:  # a factory's message, differing from the method's
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        result.requires_grad_(True)
    if state.tracer is not None:  # new memory, made anew by every eager call (ir/trace.py)
        state.tracer.fresh[id(result)] = result
    return result


def _user_stacklevel() -> int:
    """The stacklevel of a warning given here that names the user's line."""
    target, frame, level = user_frame(), sys._getframe(1), 1
    while frame is not None and frame is not target:
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 2


def _copied_while_tracing(data: np.ndarray, target: dtypes.DType):
    """tensor(ndarray) in a traced function: the copy is made when the graph runs, from the
    array as it is then (eager copies it on every call), not once from its values at trace
    time. The array itself becomes a captured input; None when its dtype is not one of ours."""
    own = dtypes.from_numpy(data.dtype)
    if own.numpy != data.dtype:
        return None
    source = Tensor._make(data, own)
    state.tracer.made.discard(id(source))  # the caller's array, read on every run
    return source.clone() if own is target else source.to(target)


# The sequences tensor() reads as nested lists, as torch reads any sequence: a deque of
# recent values, a range.
_SEQUENCES = (list, tuple, collections.deque, range)


def _infer_dtype(data) -> dtypes.DType:
    """The dtype torch.tensor would pick for nested Python data."""
    kinds = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            kinds.add(item.dtype)
        elif isinstance(item, _SEQUENCES):
            stack.extend(item)
        elif isinstance(item, np.ndarray):
            kinds.add(dtypes.from_numpy(item.dtype))
        elif isinstance(item, (bool, np.bool_)):
            kinds.add(dtypes.bool_)
        elif isinstance(item, (np.floating, np.complexfloating)):
            # before numbers.Real: np.float64 subclasses float, and torch keeps its width
            kinds.add(dtypes.from_numpy(item.dtype))
        elif isinstance(item, numbers.Integral):
            kinds.add(dtypes.int64)
        elif isinstance(item, numbers.Real):
            kinds.add(dtypes.get_default_dtype())
        elif isinstance(item, numbers.Complex):
            kinds.add(dtypes.get_default_complex_dtype())
        else:
            raise TypeError(f"Could not infer dtype of {type(item).__name__}")
    result = dtypes.bool_ if not kinds else None
    for kind in kinds:
        result = kind if result is None else dtypes.promote(result, kind)
    return result if kinds else dtypes.get_default_dtype()


def _flat_numbers(data: list):
    """The dtype torch.tensor infers for a non-empty list of Python ints, floats and bools
    (no other item: those take _infer_dtype's walk), or None."""
    floats = ints = False
    for item in data:
        kind = item.__class__
        if kind is float:
            floats = True
        elif kind is int:
            ints = True
        elif kind is not bool:
            return None
    if not data:
        return None
    return dtypes.get_default_dtype() if floats else dtypes.int64 if ints else dtypes.bool_


def _check_rectangular(data, dim: int = 0) -> tuple:
    """The shape of nested lists, with torch's error when a sequence has the wrong length."""
    if not isinstance(data, _SEQUENCES):
        if isinstance(data, Tensor) and dim:
            _check_one_element(data)
            return ()  # a tensor inside a sequence is read as its one number, as in torch
        return tuple(data.shape) if isinstance(data, (Tensor, np.ndarray)) else ()
    if not data:
        return (0,)
    items = iter(data)
    inner = _check_rectangular(next(items), dim + 1)
    for item in items:
        if not isinstance(item, (*_SEQUENCES, Tensor, np.ndarray)) and inner:
            raise TypeError(f"autojit.tensor(): expected a sequence at dim {dim + 1}, got "
                            f"{type(item).__name__}")
        shape = _check_rectangular(item, dim + 1)
        if shape != inner:
            expected = inner[0] if inner else 0
            got = shape[0] if shape else 0
            if not inner:
                raise TypeError(f"autojit.tensor(): expected a number at dim {dim + 1}, got a "
                                "sequence")
            raise ValueError(f"expected sequence of length {expected} at dim {dim + 1} "
                             f"(got {got})")
    return (len(data), *inner)


def _check_one_element(item: Tensor) -> None:
    """torch's errors for a tensor of other than one element inside tensor()'s sequences."""
    if item.numel() != 1:
        if item.dtype.category < dtypes.FLOATING:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        raise ValueError("only one element tensors can be converted to Python scalars")


def _unwrap(data, nested: bool = False):
    if isinstance(data, Tensor):
        array = data._concrete("autojit.tensor(Tensor)")
        if nested:
            _check_one_element(data)
            return array.reshape(())
        return array
    if isinstance(data, _SEQUENCES):
        return [_unwrap(item, True) for item in data]
    return data


def _check_unsigned_items(data) -> None:
    """torch's checks of the numbers of nested sequences made a uint64 tensor, which it reads
    as unsigned ints: ints and bools only (a float or a 0-d tensor is a TypeError), none
    negative or beyond 2**64 - 1 (an OverflowError)."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, _SEQUENCES):
            stack.extend(item)
        elif isinstance(item, np.ndarray) or isinstance(item, (bool, np.bool_)):
            continue  # an array converts as arrays do
        elif isinstance(item, numbers.Integral) and not isinstance(item, Tensor):
            if item < 0:
                raise OverflowError("can't convert negative int to unsigned")
            if item >= 2 ** 64:
                raise OverflowError("int too big to convert")
        else:
            raise TypeError("an integer is required")


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of `data` (nested lists, scalars, arrays, tensors).

    The dtype is inferred as torch infers it: bools give bool, integers int64, floats the
    default dtype (float32).

    >>> import autojit
    >>> autojit.tensor([[1, 2], [3, 4]])
    tensor([[1, 2],
            [3, 4]])
    >>> x = autojit.tensor([1.0, 2.0], requires_grad=True)
    >>> x
    tensor([1., 2.], requires_grad=True)
    >>> x.dtype, autojit.tensor(3.5, dtype=autojit.float64).dtype
    (autojit.float32, autojit.float64)
    """
    device = check_device(device)
    if isinstance(data, Tensor):
        target = dtypes.dtype_argument(dtype, "tensor") if dtype is not None else data.dtype
        source = data._concrete("autojit.tensor(Tensor)")
        if source.__class__ is not np.ndarray:  # a CUDA tensor: copied through the host
            source = source.to_host()
        array = np.array(source, dtype=target.numpy)
        return _finish(array, target, requires_grad, device)
    if isinstance(data, np.generic):  # a NumPy scalar keeps its dtype, as an array would
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        target = dtypes.dtype_argument(dtype, "tensor") if dtype is not None else \
            dtypes.from_numpy(data.dtype)
        if state.tracer is not None and not requires_grad and device.type == "cpu":
            copied = _copied_while_tracing(data, target)
            if copied is not None:
                return copied
        return _finish(np.array(data, dtype=target.numpy), target, requires_grad, device)
    if data.__class__ is list and state.tracer is None:
        # A flat list of Python numbers (a collated batch of labels) is what NumPy's
        # conversion reads directly, and needs none of the walks below.
        inferred = _flat_numbers(data)
        if inferred is not None:
            target = dtypes.dtype_argument(dtype, "tensor") if dtype is not None else inferred
            if target.category != dtypes.INTEGER or target is dtypes.int64:
                try:
                    array = np.array(data, dtype=target.numpy)
                except OverflowError:  # an int beyond int64, which torch reads every int as
                    raise ValueError("Overflow when unpacking long long") from None
                return _finish(array, target, requires_grad, device)
    target = dtypes.dtype_argument(dtype, "tensor") if dtype is not None else \
        _infer_dtype(data)
    if state.tracer is not None and contains_runtime(data):
        # Values read from tensors (`autojit.tensor(loss.item())`) or scalars read on every
        # call: graph values, not constants of the trace.
        result = state.tracer.tensor_from_scalars(data, target)
        if device.type != "cpu":
            result = result.to(device)
        return result.requires_grad_() if requires_grad else result
    _check_rectangular(data)
    if target is dtypes.uint64:
        _check_unsigned_items(data)
    if target.category != dtypes.COMPLEX and _infer_dtype(data).category == dtypes.COMPLEX:
        if target.category == dtypes.INTEGER:
            raise TypeError("'complex' object cannot be interpreted as an integer")
        raise TypeError("must be real number, not complex")
    try:
        if target.category == dtypes.INTEGER and target.itemsize < 8:
            # Checked in the data's own dtype: torch refuses a number the target cannot hold.
            array = np.array(_unwrap(data), dtype=_infer_dtype(data).numpy)
            if array.size:
                for extreme in (array.min(), array.max()):
                    dtypes.check_fits(extreme.item(), target, fill=False)
            array = array.astype(target.numpy)
        else:
            array = np.array(_unwrap(data), dtype=target.numpy)
    except ValueError as error:
        raise ValueError(f"autojit.tensor(): could not build a tensor from the data: {error}") \
            from None
    except OverflowError:  # an int beyond int64, which torch reads every int as
        raise ValueError("Overflow when unpacking long long") from None
    if array.dtype == object:
        raise TypeError("autojit.tensor(): nested sequences must be rectangular and numeric")
    return _finish(array, target, requires_grad, device)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like tensor(), but shares memory with an ndarray or Tensor when no conversion is needed."""
    if isinstance(data, Tensor):  # stays on its device unless device= says otherwise
        if device is not None and check_device(device).type != data.device.type:
            data = data.to(check_device(device))
        return data if dtype is None else data.to(dtypes.dtype_argument(dtype, "as_tensor"))
    device = check_device(device)
    if device.type == "cuda":
        return tensor(data, dtype=dtype, device=device)
    if isinstance(data, np.ndarray):
        target = dtypes.dtype_argument(dtype, "as_tensor") if dtype is not None else \
            dtypes.from_numpy(data.dtype)
        if target is dtypes.bfloat16:  # a copy, rounded: no array holds bfloat16 as it is
            return tensor(data, dtype=target)
        return Tensor._make(np.asarray(data, dtype=target.numpy), target)
    return tensor(data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with `array` (writes to either are seen by both)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if array.__class__ is not np.ndarray:  # a subclass (np.matrix): its plain array, shared
        array = array.view(np.ndarray)
    found = dtypes._BY_NUMPY.get(array.dtype)
    if found is None:
        raise TypeError(f"can't convert np.ndarray of type numpy.{array.dtype.type.__name__}. "
                        "The only supported types are: float64, float32, float16, complex64, "
                        "complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
                        "and bool.")
    return Tensor._make(array, found)


def _filled(size, value, dtype, requires_grad, device, name: str) -> Tensor:
    device = check_device(device)
    if dtype is None:
        dtype = dtypes.get_default_dtype() if isinstance(value, float) or value is None \
            else dtypes.scalar_dtype(value)
    dtype = dtypes.dtype_argument(dtype, name)
    shape = _size(size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    if device.type == "meta":  # a shape and a dtype: nothing to allocate (tensor/meta.py)
        return _finish(MetaArray(shape, dtype.numpy), dtype, requires_grad, device)
    if state.tracer is not None and not requires_grad and contains_symbolic(shape):
        # A size from a dynamic trace: the fill becomes graph nodes (a broadcast scalar,
        # copied so that it can be written in place) instead of a constant of one size.
        fill = 0 if value is None else value
        scalar = _finish(np.full((), fill, dtype.numpy), dtype, False, device)
        return scalar.expand(shape).clone()
    if state.tracer is not None and contains_runtime(value):
        filled = state.tracer.tensor_from_scalars(value, dtype).expand(shape).clone()
        if device.type != "cpu":
            filled = filled.to(device)
        return filled.requires_grad_() if requires_grad else filled
    if value is None:
        value = uninitialized_fill(dtype)  # set by use_deterministic_algorithms
        if value is None:
            return _finish(np.empty(shape, dtype.numpy), dtype, requires_grad, device)
    if not isinstance(value, Tensor):
        dtypes.check_fits(value, dtype)
        if isinstance(value, int) and not isinstance(value, bool) and \
                dtype.category == dtypes.INTEGER:
            value = dtypes.wrap_integer(value, dtype)  # -1 as uint8 is 255
    if (value.__class__ is int or value.__class__ is float) and value == 0 and \
            math.copysign(1.0, value) == 1.0:
        # (np.full's Python wrapper costs three times np.zeros at a gradient's sizes)
        return _finish(np.zeros(shape, dtype.numpy), dtype, requires_grad, device)
    return _finish(np.full(shape, value, dtype.numpy), dtype, requires_grad, device)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros; the size is given as integers or as one sequence.

    >>> import autojit
    >>> autojit.zeros(2, 3)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    >>> autojit.zeros((2,), dtype=autojit.int64)
    tensor([0, 0])
    """
    return _filled(size, 0.0 if dtype is None else 0, dtype, requires_grad, device, "zeros")


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ones; the size is given as integers or as one sequence.

    >>> import autojit
    >>> autojit.ones(2, 2, requires_grad=True)
    tensor([[1., 1.],
            [1., 1.]], requires_grad=True)
    """
    return _filled(size, 1.0 if dtype is None else 1, dtype, requires_grad, device, "ones")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled((size,), fill_value, dtype, requires_grad, device, "full")


def empty(*size, dtype=None, device=None, requires_grad=False,
          memory_format=contiguous_format) -> Tensor:
    """An uninitialized tensor (filled while deterministic algorithms fill memory), laid out
    in `memory_format` (autojit.channels_last for a 4-d one, ...)."""
    return _in_format(_filled(size, None, dtype, requires_grad, device, "empty"),
                      memory_format, None, "empty")


def _like(x: Tensor, dtype):
    return tuple(x.shape), (x.dtype if dtype is None else dtype)


def zeros_like(x: Tensor, *, dtype=None, device=None, requires_grad=False,
               memory_format=preserve_format) -> Tensor:
    shape, dtype = _like(x, dtype)
    return _in_format(zeros(shape, dtype=dtype, device=_like_device(x, device),
                            requires_grad=requires_grad), memory_format, x, "zeros_like")


def ones_like(x: Tensor, *, dtype=None, device=None, requires_grad=False,
              memory_format=preserve_format) -> Tensor:
    shape, dtype = _like(x, dtype)
    return _in_format(ones(shape, dtype=dtype, device=_like_device(x, device),
                           requires_grad=requires_grad), memory_format, x, "ones_like")


def full_like(x: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=preserve_format) -> Tensor:
    shape, dtype = _like(x, dtype)
    return _in_format(full(shape, fill_value, dtype=dtype, device=_like_device(x, device),
                           requires_grad=requires_grad), memory_format, x, "full_like")


def empty_like(x: Tensor, *, dtype=None, device=None, requires_grad=False,
               memory_format=preserve_format) -> Tensor:
    shape, dtype = _like(x, dtype)
    return _in_format(empty(shape, dtype=dtype, device=_like_device(x, device),
                            requires_grad=requires_grad), memory_format, x, "empty_like")


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Values from start (inclusive) to end (exclusive) by step; int64 for integer arguments.

    >>> import autojit
    >>> autojit.arange(5)
    tensor([0, 1, 2, 3, 4])
    >>> autojit.arange(1, 2.5, 0.5)
    tensor([1.0000, 1.5000, 2.0000])
    """
    device = check_device(device)
    if end is None:
        start, end = 0, start
    start, end, step = (_scalar_value(v) for v in (start, end, step))
    if dtype is None:
        integral = all(isinstance(v, numbers.Integral) for v in (start, end, step))
        dtype = dtypes.int64 if integral else dtypes.get_default_dtype()
    dtype = dtypes.dtype_argument(dtype, "arange")
    if dtype.is_complex or dtype.limited:
        raise dtypes.kernel_error("arange_cpu", dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype.is_floating_point or dtype is dtypes.bool_:
        count = int(np.ceil((end - start) / step))
        array = (start + step * np.arange(count, dtype=np.float64)).astype(dtype.numpy)
        return _finish(array, dtype, requires_grad, device)
    # torch computes an integer range in int64 from the truncated bounds and step; its length
    # from them for int64, from the bounds as given for the narrower integers.
    first, last, stride = int(start), int(end), int(step)
    if stride == 0:  # a fractional step truncated to 0: torch's ValueError, not its RuntimeError
        raise ValueError("step must be nonzero")
    if dtype is dtypes.int64:
        sign = (stride > 0) - (stride < 0)
        span = last - first + stride - sign
        count = abs(span) // abs(stride) * (1 if (span >= 0) == (stride > 0) else -1)
    else:
        count = int(np.ceil((end - start) / step))
    array = (first + stride * np.arange(max(count, 0), dtype=np.int64)).astype(dtype.numpy)
    return _finish(array, dtype, requires_grad, device)


def _scalar_value(value):
    """A bound or step as a Python number (a 0-d tensor's value)."""
    return value.item() if isinstance(value, Tensor) else value


def check_space_arguments(name: str, start, end, steps) -> None:
    """torch's errors of linspace and logspace: steps must be an int, and tensor bounds 0-d."""
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral):
        kinds = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__
                          for v in (start, end, steps))
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({kinds}), but expected (Tensor start, Tensor end, int steps, ...)")
    shaped = [f"{which} with {value.ndim} dimension(s)" for which, value in
              (("start", start), ("end", end)) if isinstance(value, Tensor) and value.ndim]
    if shaped:
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got "
                           f"{' and '.join(shaped)}.")


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    device = check_device(device)
    check_space_arguments("linspace", start, end, steps)
    dtype = dtypes.dtype_argument(dtype, "linspace") if dtype is not None else \
        dtypes.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype.limited and steps >= 2:  # (fewer steps are a fill, which takes uint64)
        raise dtypes.kernel_error("linspace_cpu", dtype)
    if dtype.is_floating_point and steps >= 2:
        # torch's kernel, value for value (range_kernels.py)
        return _finish(linspace_values(float(start), float(end), int(steps), dtype), dtype,
                       requires_grad, device)
    if dtype.is_floating_point or dtype.is_complex or dtype is dtypes.bool_ or steps < 2:
        # The bounds as arrays: NumPy's functions of a tensor give a tensor (__array_wrap__).
        return _finish(np.linspace(np.asarray(start), np.asarray(end),
                                   int(steps)).astype(dtype.numpy), dtype, requires_grad, device)
    # torch's integer linspace: the bounds converted to the dtype first, the step in double,
    # the first half counted from start and the second from end, each value truncated.
    first = float(np.asarray(start).astype(dtype.numpy))
    last = float(np.asarray(end).astype(dtype.numpy))
    step = (last - first) / (steps - 1)
    index = np.arange(steps, dtype=np.float64)
    values = np.where(index < steps // 2, first + step * index,
                      last - step * (steps - index - 1))
    return _finish(np.trunc(values).astype(dtype.numpy), dtype, requires_grad, device)


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    device = check_device(device)
    dtype = dtypes.dtype_argument(dtype, "eye") if dtype is not None else \
        dtypes.get_default_dtype()
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    if dtype.limited:
        raise dtypes.kernel_error("eye", dtype)
    return _finish(np.eye(n, m, dtype=dtype.numpy), dtype, requires_grad, device)


# ---- the random factories (random_factories.py; read from here by their importers) ------------

from .random_factories import (  # noqa: E402, F401
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
)
