"""The checks of one torch OpInfo sample against autojit: the forward (values, dtypes, shapes,
and for an error sample the error's type and message), first-order gradients, second order in
float64, and the compiled call against eager.

Each check raises AssertionError with a message naming what differs; `run_sample` runs them
all and returns {check: None or the message}, so a survey can count every failure and a test
can report the first.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import torch

import autojit

from . import traced_arguments
from .convert import Converter, dtype_name, flat, is_tensor, to_numpy
from .resolve import seeded_outside

# Forward tolerances (rtol, atol) per result dtype; gradients are compared at GRAD_FACTOR times
# these (their sums over a sample's elements round more).
TOLERANCES = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "complex32": (1e-3, 1e-3),
              "float32": (1e-5, 1e-5), "float64": (1e-7, 1e-7),
              "complex64": (1e-5, 1e-5), "complex128": (1e-7, 1e-7)}
GRAD_FACTOR = 10.0
CHECKS = ("forward", "gradient", "gradgrad", "compiled")


def first_line(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text.splitlines()[0][:300] if text else ''}"


class Outcome:
    """What a call did: its result, or the exception it raised."""

    def __init__(self, result=None, error: BaseException | None = None):
        self.result, self.error = result, error

    def describe_error(self) -> str:
        return first_line(self.error)


def call(function, args, kwargs) -> Outcome:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Outcome(function(*args, **kwargs))
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return Outcome(error=error)


def sample_call(sample):
    return (sample.input, *sample.args), dict(sample.kwargs)


# ---- comparing results ------------------------------------------------------------------------

def _tolerance(dtype: str, scale: float, override) -> tuple:
    rtol, atol = TOLERANCES.get(dtype, (0.0, 0.0))
    if override is not None:
        rtol, atol = max(rtol, override[0]), max(atol, override[1])
    return rtol * scale, atol * scale


def compare(mine, theirs, where: str, values: bool = True, scale: float = 1.0,
            tolerance=None) -> None:
    """autojit's results `mine` equal torch's `theirs`: the same structure, tensors of the
    same shape and dtype (and values, unless `values` is False), other values equal."""
    mine_flat, their_flat = flat(mine), flat(theirs)
    assert len(mine_flat) == len(their_flat), (
        f"{where}: {len(mine_flat)} results, torch has {len(their_flat)}")
    for index, (a, b) in enumerate(zip(mine_flat, their_flat, strict=True)):
        at = f"{where}[{index}]" if len(their_flat) > 1 else where
        if isinstance(b, torch.Tensor):
            assert isinstance(a, autojit.Tensor), f"{at}: {type(a).__name__}, torch a Tensor"
            assert tuple(a.shape) == tuple(b.shape), (
                f"{at}: shape {list(a.shape)}, torch {list(b.shape)}")
            assert dtype_name(a.dtype) == dtype_name(b.dtype), (
                f"{at}: dtype {dtype_name(a.dtype)}, torch {dtype_name(b.dtype)}")
            if values:
                _compare_values(to_numpy(a), to_numpy(b), dtype_name(b.dtype), at, scale,
                                tolerance)
        elif isinstance(b, torch.Size):
            assert type(a).__name__ == "Size", f"{at}: {type(a).__name__}, torch a Size"
            assert tuple(a) == tuple(b), f"{at}: {tuple(a)}, torch {tuple(b)}"
        elif isinstance(b, (float, int, bool)) and values:
            assert type(a) is type(b), f"{at}: {type(a).__name__}, torch {type(b).__name__}"
            if not (b != b and a != a):
                assert np.isclose(a, b, rtol=1e-6, atol=1e-8), f"{at}: {a}, torch {b}"
        elif isinstance(b, torch.dtype):
            assert dtype_name(a) == dtype_name(b), f"{at}: {a}, torch {b}"
        elif values and b is not None:
            assert a == b, f"{at}: {a!r}, torch {b!r}"


def _compare_values(a: np.ndarray, b: np.ndarray, dtype: str, where: str, scale: float,
                    tolerance) -> None:
    if a.dtype.kind in "fc":
        rtol, atol = _tolerance(dtype, scale, tolerance)
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            bad = np.argwhere(~close)
            first = tuple(bad[0])
            raise AssertionError(
                f"{where}: {int((~close).sum())} of {a.size} values differ; at {list(first)}: "
                f"{a[first]!r}, torch {b[first]!r} (rtol {rtol:g}, atol {atol:g})")
    else:
        if not np.array_equal(a, b):
            differ = int(np.sum(a != b))
            raise AssertionError(f"{where}: {differ} of {a.size} values differ")


# ---- the checks -------------------------------------------------------------------------------

class SampleRun:
    """One sample run by torch and autojit, with what the later checks need."""

    def __init__(self, function, opinfo, sample, dtype: str, random: bool = False,
                 tolerance=None, normalize=None, graph_break=None, compiled_functions=None):
        """random: the values are draws (or uninitialized memory), compared by shape and dtype
        only; tolerance: (rtol, atol) at least; normalize(result): the form compared, for
        results unique only up to a choice (the signs of eigenvectors); graph_break: why the
        compiled call may split (an op torch.compile splits at too), else None;
        compiled_functions: a dict the compiled checks of one op's samples share (see
        `compiled`)."""
        self.function, self.opinfo, self.sample = function, opinfo, sample
        self.compiled_functions = compiled_functions
        self.graph_break = graph_break
        self.dtype, self.random, self.tolerance = dtype, random, tolerance
        self.normalize = normalize or (lambda result: result)
        args, kwargs = sample_call(sample)
        self.theirs = call(opinfo.op, args, kwargs)
        self.converter = Converter()
        self.args = self.converter(args)
        self.kwargs = self.converter(kwargs)
        self.mine = call(function, self.args, self.kwargs)

    def forward(self) -> None:
        if self.theirs.error is not None:
            assert self.mine.error is not None, (
                f"torch raised {self.theirs.describe_error()}, autojit returned")
            assert type(self.mine.error).__name__ == type(self.theirs.error).__name__, (
                f"autojit raised {self.mine.describe_error()}, torch "
                f"{self.theirs.describe_error()}")
            return
        assert self.mine.error is None, f"autojit raised {self.mine.describe_error()}"
        compare(self.normalize(self.mine.result), self.normalize(self.theirs.result), "result",
                values=not self.random, tolerance=self.tolerance)

    # -- gradients

    def _outputs(self, result, library):
        process = self.sample.output_process_fn_grad
        if library is autojit and process is not None:
            process = _rebound_processor(process)
        processed = process(result) if process is not None else result
        return [o for o in flat(processed) if is_tensor(o) and o.requires_grad
                and dtype_name(o.dtype).startswith(("float", "complex", "bfloat"))]

    def _weights(self, outputs, library, seed: int):
        rng = np.random.default_rng(seed)
        weights = []
        for output in outputs:
            name = dtype_name(output.dtype)
            array = rng.standard_normal(tuple(output.shape))
            if name.startswith("complex"):  # both parts weighted: conjugates show in both
                array = array + 1j * rng.standard_normal(tuple(output.shape))
            # (NumPy has neither bfloat16 nor complex32: made from the wider type)
            array = array.astype({"bfloat16": "float32", "complex32": "complex64"}.get(name,
                                                                                    name))
            weights.append(library.tensor(array).to(output.dtype))
        return weights

    def differentiable(self) -> bool:
        return (self.theirs.error is None and self.mine.error is None
                and self.opinfo.supports_autograd and bool(self.converter.leaves)
                and bool(self._outputs(self.theirs.result, torch)))

    def _grads(self, library, result, leaves, create_graph: bool):
        outputs = self._outputs(result, library)
        if not outputs:
            return None, outputs
        weights = self._weights(outputs, library, 1)
        grads = library.autograd.grad(outputs, leaves, grad_outputs=weights,
                                      allow_unused=True, create_graph=create_graph,
                                      retain_graph=True)
        return grads, outputs

    def gradient(self) -> None:
        if not self.differentiable():
            return
        their_leaves = [t for t, _ in self.converter.leaves]
        my_leaves = [m for _, m in self.converter.leaves]
        theirs, _ = self._grads(torch, self.theirs.result, their_leaves, False)
        mine, outputs = self._grads(autojit, self.mine.result, my_leaves, False)
        assert mine is not None, "autojit's outputs do not require grad"
        self._compare_grads(mine, theirs, their_leaves, "gradient")

    def gradgrad(self) -> None:
        if not (self.differentiable() and self.opinfo.supports_gradgrad):
            return
        their_leaves = [t for t, _ in self.converter.leaves]
        my_leaves = [m for _, m in self.converter.leaves]
        second = []
        for library, result, leaves in ((torch, self.theirs.result, their_leaves),
                                        (autojit, self.mine.result, my_leaves)):
            grads, _ = self._grads(library, result, leaves, True)
            if grads is None:
                second.append(None)
                continue
            used = [g for g in grads if g is not None and g.requires_grad]
            if not used:
                second.append([None] * len(leaves))
                continue
            weights = self._weights(used, library, 2)
            second.append(library.autograd.grad(used, leaves, grad_outputs=weights,
                                                allow_unused=True))
        theirs, mine = second
        assert mine is not None, "autojit's outputs do not require grad"
        self._compare_grads(mine, theirs, their_leaves, "second order")

    def _compare_grads(self, mine, theirs, leaves, what: str) -> None:
        for index, (a, b, leaf) in enumerate(zip(mine, theirs, leaves, strict=True)):
            b = torch.zeros_like(leaf) if b is None else b
            a = autojit.zeros(tuple(leaf.shape), dtype=getattr(autojit, dtype_name(leaf.dtype))
                              ) if a is None else a
            compare(a, b, f"{what} of input {index}", values=not self.random,
                    scale=GRAD_FACTOR, tolerance=self.tolerance)

    # -- compiled

    def compiled(self) -> None:
        if self.mine.error is not None or self.theirs.error is not None:
            return
        eager_converter = Converter()
        args, kwargs = sample_call(self.sample)
        bases: dict = {}
        eager_args = eager_converter(_detached(args, bases))
        eager_kwargs = eager_converter(_detached(kwargs, bases))
        tensors = [m for _, m in eager_converter.tensors.values()]
        with seeded_outside():
            eager = call(self.function, eager_args, eager_kwargs)
        assert eager.error is None, f"eager raised {eager.describe_error()} on detached inputs"
        compiled_converter = Converter()
        bases = {}
        compiled_args = compiled_converter(_detached(args, bases))
        compiled_kwargs = compiled_converter(_detached(kwargs, bases))
        originals = [m for _, m in compiled_converter.tensors.values()]
        function = self.function

        def step(*inputs):
            mapping = {id(o): i for o, i in zip(originals, inputs, strict=True)}
            return function(*_substitute(compiled_args, mapping),
                            **_substitute(compiled_kwargs, mapping))

        if traced_arguments():
            # The function reaches the tensors through its arguments alone (the closure above
            # holds them too, so the trace captures them with their data instead).
            slots = {id(o): _Slot(index) for index, o in enumerate(originals)}
            args_template = _substitute(compiled_args, slots)
            kwargs_template = _substitute(compiled_kwargs, slots)
            del compiled_args, compiled_kwargs, slots

            def step(*inputs):  # noqa: F811 - the other form
                return function(*_filled(args_template, inputs),
                                **_filled(kwargs_template, inputs))

        # A sample of the same form as an earlier one of this op and dtype (torch's database
        # repeats shapes and arguments with other values) is given to the earlier sample's
        # compiled function, as a user's loop calls one compiled function with new tensors:
        # its guards hold, and its kernels run on this sample's values without compiling
        # them again. Only a traced-arguments function that agreed with eager without a graph
        # break is kept; a guard that fails retraces, as for a user.
        key = None
        if traced_arguments() and self.compiled_functions is not None and not self.graph_break:
            key = sample_form(args, kwargs)
        compiled = self.compiled_functions.get(key) if key is not None else None
        if compiled is None:
            compiled = autojit.compile(step)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with seeded_outside():
                    result = compiled(*originals)
            except Exception as error:  # noqa: BLE001 - reported
                raise AssertionError(f"compiled raised {type(error).__name__}: {error}") from None
        breaks = [str(w.message).splitlines()[0] for w in caught
                  if type(w.message).__name__ == "CompileWarning"]
        assert not breaks or self.graph_break, f"compiled ran eagerly: {breaks[0]}"
        del tensors
        _compare_compiled(self.normalize(result), self.normalize(eager.result), self.random,
                          self.tolerance)
        if key is not None:
            self.compiled_functions.setdefault(key, compiled)


# Values a sample's form holds as they are (by type and repr: 1, 1.0 and True differ, as do
# 0.0 and -0.0); a sample holding any other value has no form and is compiled on its own.
_FORM_VALUES = (bool, int, float, complex, str, type(None), type(Ellipsis), slice, torch.dtype,
                torch.device, torch.memory_format, torch.layout)


def sample_form(args, kwargs):
    """What a compiled check's trace of the sample depends on, as a hashable key: the
    structure of its arguments, each tensor's shape, strides, offset, dtype, conjugate and
    negative bits, layout, device and which other argument it is or is a view of, and every
    other value by type and repr; None where an argument is of another kind (a generator, a
    module)."""
    numbered: dict = {}

    def form(value):
        if isinstance(value, torch.Tensor):
            base = value._base
            return ("tensor", numbered.setdefault(id(value), len(numbered)), tuple(value.shape),
                    value.stride(), value.storage_offset(), str(value.dtype), value.is_conj(),
                    value.is_neg(), value.layout, str(value.device),
                    None if base is None else form(base))
        if isinstance(value, torch.Size):
            return ("Size", tuple(value))
        if isinstance(value, (list, tuple)):
            return (type(value).__name__, tuple(form(item) for item in value))
        if isinstance(value, dict):
            return ("dict", tuple((key, form(item)) for key, item in value.items()))
        if isinstance(value, _FORM_VALUES):
            return (type(value).__name__, repr(value))
        raise _Formless

    try:
        return form((args, kwargs))
    except _Formless:
        return None


class _Formless(Exception):
    """An argument sample_form does not describe."""


def _compare_compiled(result, eager, random: bool, tolerance) -> None:
    mine, theirs = flat(result), flat(eager)
    assert len(mine) == len(theirs), f"compiled: {len(mine)} results, eager {len(theirs)}"
    for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        at = f"compiled[{index}]"
        assert type(a).__name__ == type(b).__name__, (
            f"{at}: {type(a).__name__}, eager {type(b).__name__}")
        if isinstance(b, autojit.Tensor):
            assert tuple(a.shape) == tuple(b.shape), (
                f"{at}: shape {list(a.shape)}, eager {list(b.shape)}")
            assert a.dtype == b.dtype, f"{at}: dtype {a.dtype}, eager {b.dtype}"
            if not random:
                _compare_values(to_numpy(a), to_numpy(b), dtype_name(b.dtype), at, 1.0,
                                tolerance)
        elif not random and b is not None and not isinstance(b, float):
            assert a == b, f"{at}: {a!r}, eager {b!r}"


def _detached(value, bases=None):
    """The sample's values detached; a view stays a view of its (detached) base, whose storage
    it may reach past its own elements (as_strided's partial views)."""
    bases = {} if bases is None else bases
    if isinstance(value, torch.Tensor):
        if value._base is None or value._base.dtype != value.dtype:  # a.real: a copy will do
            return value.detach()
        base = bases.get(id(value._base))
        if base is None:
            base = bases[id(value._base)] = value._base.detach()
        return base.as_strided(value.shape, value.stride(), value.storage_offset())
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        return type(value)(_detached(v, bases) for v in value) if not hasattr(value, "_fields") \
            else value
    if isinstance(value, dict):
        return {k: _detached(v, bases) for k, v in value.items()}
    return value


def _substitute(value, mapping):
    if isinstance(value, autojit.Tensor):
        return mapping.get(id(value), value)
    if isinstance(value, list):
        return [_substitute(v, mapping) for v in value]
    if isinstance(value, tuple) and not isinstance(value, autojit.Size):
        return tuple(_substitute(v, mapping) for v in value)
    if isinstance(value, dict):
        return {k: _substitute(v, mapping) for k, v in value.items()}
    return value


class _Slot:
    """Where the compiled check's step puts its argument at `index`."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _filled(value, inputs):
    if isinstance(value, _Slot):
        return inputs[value.index]
    if isinstance(value, list):
        return [_filled(v, inputs) for v in value]
    if isinstance(value, tuple) and not isinstance(value, autojit.Size):
        return tuple(_filled(v, inputs) for v in value)
    if isinstance(value, dict):
        return {k: _filled(v, inputs) for k, v in value.items()}
    return value


def _rebound_processor(process):
    """A sample's output_process_fn_grad written with torch's names, run on autojit's
    results (`torch` rebound to autojit, as resolve.rebound does for ops)."""
    import types

    if isinstance(process, types.FunctionType):
        from .resolve import rebound

        return rebound(process)
    return process


# ---- error samples ----------------------------------------------------------------------------

def check_error(function, error_input, torch_function=None) -> None:
    """autojit raises the error type torch's database names, with a message its regex finds.
    Where torch itself returns on the sample (the database's claim is stale: torch 2.13's
    clamp_max(x, 2) takes the number), autojit must return too; a NotImplemented of torch's
    (a reflected operator called unbound, on a number) is matched by a TypeError, which is
    what Python's operator then raises."""
    sample = error_input.sample_input
    args, kwargs = sample_call(sample)
    converter = Converter()
    outcome = call(function, converter(args), converter(kwargs))
    if torch_function is not None:
        theirs = call(torch_function, args, kwargs)
        if theirs.error is None:
            if theirs.result is NotImplemented:
                assert outcome.result is NotImplemented or isinstance(outcome.error, TypeError), (
                    f"torch returned NotImplemented, autojit {outcome.describe_error()}")
                return
            assert outcome.error is None, (
                f"torch returned on this error sample, autojit raised "
                f"{outcome.describe_error()}")
            return
    wanted = error_input.error_type
    assert outcome.error is not None, f"expected {wanted.__name__}, autojit returned"
    assert isinstance(outcome.error, wanted), (
        f"expected {wanted.__name__}, autojit raised {outcome.describe_error()}")
    regex = error_input.error_regex
    assert re.search(regex, str(outcome.error)), (
        f"message {str(outcome.error)!r} does not match torch's {regex!r}")
