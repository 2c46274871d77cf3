"""The op table driver: every OpInfo row of every tests/opinfo/*.py module, checked four ways.

For each row: the forward against its NumPy reference in each of the row's dtypes; gradcheck
and gradgradcheck in float64, and in complex128 for the rows that have it; for rows that are
not differentiable, that backward raises (for a factory, that its result is a leaf requiring
grad as asked). The rows must also name the
primitives they run (checked by recording which impls run), and every registered primitive and
every op of `autojit.__all__` must have a row: the names of `autojit.__all__` that are not ops
are listed, each with the reason, in NOT_OPS.
"""

from __future__ import annotations

import importlib
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

import autojit
from autojit.autograd import gradcheck, gradgradcheck
from autojit.ops import REGISTRY, functional

sys.path.insert(0, str(Path(__file__).parent))

import opinfo  # noqa: E402
from opinfo import OpInfo  # noqa: E402

MODULE_NAMES = sorted(path.stem for path in (Path(__file__).parent / "opinfo").glob("*.py")
                      if path.stem != "__init__")
ROWS: list[OpInfo] = []
for _module_name in MODULE_NAMES:
    ROWS.extend(importlib.import_module(f"opinfo.{_module_name}").ROWS)

# Public names that are aliases of a function with its own row.
ALIASES = {
    "clip",         # clamp
    "negative",     # neg
    "multiply",     # mul
    "divide",       # div
    "subtract",     # sub
    "absolute",     # abs
    "greater", "greater_equal", "less", "less_equal", "not_equal",  # gt, ge, lt, le, ne
    "concat", "concatenate",  # cat
    "ger",          # outer
    "row_stack",    # vstack
    # ---- the math ops' aliases
    "arcsin", "arccos", "arctan", "arctan2",  # asin, acos, atan, atan2
    "arcsinh", "arccosh", "arctanh",  # asinh, acosh, atanh
    "fix",  # trunc
}

# Forward tolerances (atol, rtol) per result dtype, for a row with OpInfo's default atol/rtol;
# a row that loosens its tolerances loosens every dtype by the same factor.
TOLERANCES = {"float16": (1e-3, 1e-2), "float32": (1e-5, 1e-4), "float64": (1e-10, 1e-7),
              "complex64": (1e-5, 1e-4), "complex128": (1e-10, 1e-7)}
DEFAULT_ATOL, DEFAULT_RTOL = OpInfo.atol, OpInfo.rtol


def row_id(row: OpInfo) -> str:
    return row.name


def rows_where(predicate, check: str | None = None):
    params = []
    for row in ROWS:
        if not predicate(row):
            continue
        reason = getattr(row, "expected_failures", {}).get(check)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(row, id=row_id(row), marks=marks))
    return params


def samples_for(row: OpInfo, dtype: str):
    rng = np.random.default_rng(zlib.crc32(f"{row.name}/{dtype}".encode()))
    return row.samples(rng, np.dtype(dtype))


def is_float_array(value) -> bool:
    """A floating or complex array: one the gradient checks differentiate."""
    return isinstance(value, np.ndarray) and value.dtype.kind in "fc"


def contains_float_array(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(contains_float_array(v) for v in value)
    return is_float_array(value)


def to_autojit(value, requires_grad: bool = False):
    """NumPy arrays (also inside lists and tuples) as tensors; everything else as is."""
    if isinstance(value, np.ndarray):
        result = autojit.tensor(value)
        if requires_grad and value.dtype.kind in "fc":
            result.requires_grad_(True)
        return result
    if isinstance(value, (list, tuple)):
        return type(value)(to_autojit(v, requires_grad) for v in value)
    return value


def grad_indices(row: OpInfo, args: tuple) -> tuple:
    if row.grad_inputs is not None:
        return tuple(row.grad_inputs)
    return tuple(i for i, arg in enumerate(args) if contains_float_array(arg))


def call_arguments(row: OpInfo, sample, requires_grad: bool):
    differentiate = grad_indices(row, sample.args) if requires_grad else ()
    args = tuple(to_autojit(arg, i in differentiate) for i, arg in enumerate(sample.args))
    kwargs = {key: to_autojit(value) for key, value in sample.kwargs.items()}
    return args, kwargs


def flat_tensors(result) -> list:
    if isinstance(result, autojit.Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        return [t for item in result for t in flat_tensors(item)]
    return []


# ---- recording which primitives run -----------------------------------------------------------

class RecordPrimitives:
    """Within the block, the names of the primitives whose NumPy impl ran."""

    def __enter__(self):
        self.seen: set = set()
        self.saved = {}
        for name, op in REGISTRY.items():
            self.saved[name] = op.impl
            op.impl = self._wrap(name, op.impl)
        return self.seen

    def _wrap(self, name, impl):
        def recording(*args, **kwargs):
            self.seen.add(name)
            return impl(*args, **kwargs)

        return recording

    def __exit__(self, *exc):
        for name, impl in self.saved.items():
            REGISTRY[name].impl = impl


# ---- the checks -------------------------------------------------------------------------------

def assert_matches(actual, expected, row: OpInfo, where: str) -> None:
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)), f"{where}: expected a sequence of results"
        assert len(actual) == len(expected), f"{where}: {len(actual)} results, not {len(expected)}"
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_matches(a, e, row, f"{where}[{index}]")
        return
    assert isinstance(actual, autojit.Tensor), f"{where}: got {type(actual).__name__}, not Tensor"
    expected = np.asarray(expected)
    got = np.asarray(actual)
    assert got.shape == expected.shape, f"{where}: shape {got.shape}, expected {expected.shape}"
    kind = {"f": "floating", "i": "integer", "u": "integer", "b": "bool", "c": "complex"}
    assert kind[got.dtype.kind] == kind[expected.dtype.kind], (
        f"{where}: dtype {actual.dtype}, expected {expected.dtype}")
    if got.dtype.kind in "fc":
        assert got.dtype == expected.dtype, (
            f"{where}: dtype {actual.dtype}, expected {expected.dtype}")
        atol, rtol = TOLERANCES[got.dtype.name]
        atol *= row.atol / DEFAULT_ATOL
        rtol *= row.rtol / DEFAULT_RTOL
        np.testing.assert_allclose(got, expected, atol=atol, rtol=rtol, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


def reseed(row: OpInfo) -> None:
    """A random op's row draws the same numbers on every call (OpInfo.seed)."""
    if row.seed is not None:
        opinfo.reseed(row.seed)


def check_factory_result(actual, expected, sample, where: str) -> None:
    """A factory's result: a leaf on the default device, in exactly the reference's dtype,
    requiring grad as its requires_grad= asks."""
    assert isinstance(actual, autojit.Tensor), f"{where}: got {type(actual).__name__}"
    assert actual.grad_fn is None, f"{where}: a factory's result has a grad_fn"
    assert actual.device.type == "cpu", f"{where}: made on {actual.device}"
    assert actual.dtype.numpy == np.asarray(expected).dtype, (
        f"{where}: dtype {actual.dtype}, expected {np.asarray(expected).dtype}")
    wanted = sample.kwargs.get("requires_grad", False)
    assert actual.requires_grad == wanted, f"{where}: requires_grad {actual.requires_grad}"


def describe(row: OpInfo, dtype: str, index: int, sample) -> str:
    shapes = [getattr(a, "shape", a) for a in sample.args]
    return f"{row.name} [{dtype}] sample {index} (args {shapes}, kwargs {sample.kwargs})"


@pytest.mark.parametrize("row", rows_where(lambda row: True, "forward"))
def test_forward(row: OpInfo):
    for dtype in row.dtypes:
        for index, sample in enumerate(samples_for(row, dtype)):
            args, kwargs = call_arguments(row, sample, requires_grad=False)
            expected = row.reference(*sample.args, **sample.kwargs)
            reseed(row)
            actual = row.function(*args, **kwargs)
            assert_matches(actual, expected, row, describe(row, dtype, index, sample))
            if row.factory:
                check_factory_result(actual, expected, sample, describe(row, dtype, index,
                                                                         sample))


def grad_dtypes(row: OpInfo) -> tuple:
    """The dtypes a row is differentiated in: float64, and complex128 where the row has it
    (alone for a complex-only row)."""
    found = tuple(dtype for dtype in ("float64", "complex128") if dtype in row.dtypes)
    return found if found else ("float64",)


def _checked(check, row: OpInfo):
    for dtype in grad_dtypes(row):
        _checked_in(check, row, dtype)


def _checked_in(check, row: OpInfo, dtype: str):
    for index, sample in enumerate(samples_for(row, dtype)):
        args, kwargs = call_arguments(row, sample, requires_grad=True)
        if not any(t.requires_grad for t in flat_tensors(list(args))):
            continue

        def function(*inputs, kwargs=kwargs):
            reseed(row)
            return row.function(*inputs, **kwargs)

        autojit.manual_seed(index)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*not a double precision")
            try:
                check(function, args, eps=row.grad_eps, atol=row.grad_atol, rtol=row.grad_rtol)
            except Exception as error:
                raise AssertionError(
                    f"{describe(row, dtype, index, sample)}: {error}") from error


@pytest.mark.parametrize("row", rows_where(lambda row: row.differentiable, "gradcheck"))
def test_gradcheck(row: OpInfo):
    _checked(gradcheck, row)


@pytest.mark.parametrize("row", rows_where(lambda row: row.differentiable and row.gradgrad,
                                               "gradgradcheck"))
def test_gradgradcheck(row: OpInfo):
    _checked(gradgradcheck, row)


@pytest.mark.parametrize("row", rows_where(lambda row: not row.differentiable))
def test_not_differentiable(row: OpInfo):
    dtype = "float64" if "float64" in row.dtypes else row.dtypes[0]
    for index, sample in enumerate(samples_for(row, dtype)):
        args, kwargs = call_arguments(row, sample, requires_grad=True)
        for output in flat_tensors(row.function(*args, **kwargs)):
            if row.factory and output.requires_grad:  # a leaf, as asked: checked by test_forward
                continue
            with pytest.raises(RuntimeError):
                autojit.autograd.backward(output, autojit.ones_like(output))
                pytest.fail(f"{describe(row, dtype, index, sample)}: backward did not raise")


@pytest.mark.parametrize("row", rows_where(lambda row: True))
def test_row_runs_its_primitives(row: OpInfo):
    """The primitives a row lists all run in its forward (and, if differentiable, backward)."""
    dtype = "float64" if "float64" in row.dtypes else row.dtypes[0]
    with RecordPrimitives() as seen:
        for sample in samples_for(row, dtype):
            args, kwargs = call_arguments(row, sample, requires_grad=row.differentiable)
            outputs = [t for t in flat_tensors(row.function(*args, **kwargs)) if t.requires_grad]
            if outputs:
                autojit.autograd.backward(outputs, [autojit.ones_like(t) for t in outputs])
    unknown = sorted(set(row.primitives) - set(REGISTRY))
    assert not unknown, f"row {row.name} lists primitives that are not registered: {unknown}"
    missing = sorted(set(row.primitives) - seen)
    assert not missing, f"row {row.name} lists primitives that never ran: {missing}"


# ---- coverage ---------------------------------------------------------------------------------

def test_every_primitive_has_a_row():
    listed = {name for row in ROWS for name in row.primitives}
    missing = sorted(set(REGISTRY) - listed)
    assert not missing, f"registered primitives with no op table row: {missing}"


# The callable names of autojit.__all__ that are not ops, each with the reason; every other
# callable name must have a row (or be an alias of a name with one). The names that are not
# callable (modules, dtypes, memory formats, default_generator) are not ops either. A new
# name fails test_every_public_op_has_a_row until it gets a row or a reviewed entry here.
NOT_OPS = {
    # ---- types, whose instances are not tensors made from tensors
    **dict.fromkeys(("Tensor", "Size", "dtype", "device", "memory_format", "Generator", "finfo",
                     "iinfo", "CompiledFunction", "CompileWarning", "layout",
                     "OutOfMemoryError", "AcceleratorError", "UntypedStorage", "TypedStorage"),
                    "a type"),
    **dict.fromkeys(("sparse_coo_tensor", "spmm", "dsmm"),
                    "a sparse COO tensor and its product (tests/test_ecosystem_sparse.py)"),
    **dict.fromkeys(("sparse_csr_tensor", "sparse_csc_tensor"),
                    "a sparse compressed matrix (tests/test_torch_geometric_needs_torch.py)"),
    "frombuffer": "a tensor over a Python buffer (tests/test_torch_geometric_needs_torch.py)",
    "lobpcg": "an iterative solver for a few eigenpairs (tests/test_top_level_names_torch.py)",
    **dict.fromkeys(("eig", "lstsq", "matrix_rank", "solve", "symeig"),
                    "removed from torch in 1.9: raises, naming its replacement "
                    "(tests/test_top_level_names_torch.py)"),
    "conj_physical_": "Tensor.conj_physical_ as a function (tests/test_top_level_names_torch.py)",
    **dict.fromkeys(("no_grad", "enable_grad", "set_grad_enabled", "inference_mode"),
                    "a grad mode (tests/test_inplace_and_modes.py)"),
    # ---- the legacy constructors: torch.FloatTensor(...) and the rest
    **dict.fromkeys(("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor",
                     "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
                     "BoolTensor"),
                    "a legacy tensor type and constructor (tests/test_legacy_constructors.py)"),
    # ---- transforms of functions
    "compile": "a transform of a function (the compiled drivers run every row through it)",
    "vmap": "a transform of a function (tests/test_op_table_vmap.py maps every row)",
    "make_graph": "traces a function into an IR graph (tests/test_ir.py)",
    # ---- the state of the process: random streams, defaults, threads, modes
    **dict.fromkeys(("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"),
                    "seeds or reads the generators (tests/test_random_generators.py)"),
    **dict.fromkeys(("set_default_dtype", "get_default_dtype", "set_default_device",
                     "get_default_device"), "a default setting (tests/test_creation.py, "
                    "tests/test_namespaces.py)"),
    **dict.fromkeys(("set_num_threads", "get_num_threads", "set_num_interop_threads",
                     "get_num_interop_threads", "set_float32_matmul_precision",
                     "get_float32_matmul_precision", "set_printoptions"),
                    "a setting of the process (tests/test_namespaces.py, "
                    "tests/test_top_level_torch.py)"),
    **dict.fromkeys(("use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
                     "is_deterministic_algorithms_warn_only_enabled",
                     "set_deterministic_debug_mode", "get_deterministic_debug_mode"),
                    "the deterministic-algorithms switch (tests/test_top_level_torch.py)"),
    **dict.fromkeys(("set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
                     "is_grad_enabled", "is_inference_mode_enabled"),
                    "an autograd mode (tests/test_anomaly.py, tests/test_inplace_and_modes.py)"),
    # ---- questions about types and tensors, answered with Python values
    **dict.fromkeys(("is_tensor", "is_floating_point", "is_complex", "numel", "result_type",
                     "can_cast", "promote_types"),
                    "answers with a Python value, not a tensor (tests/test_namespaces.py)"),
    # ---- interchange: the data comes from outside autojit
    "from_numpy": "shares a NumPy array's memory (tests/test_creation.py)",
    "from_dlpack": "shares another library's memory (tests/test_dlpack.py)",
    "save": "writes a file (tests/test_serialization.py)",
    "load": "reads a file (tests/test_serialization.py)",
    # ---- autocast's switches and the process's warning and denormal settings
    **dict.fromkeys(("autocast", "autocast_decrement_nesting", "autocast_increment_nesting",
                     "clear_autocast_cache", "get_autocast_cpu_dtype", "get_autocast_dtype",
                     "get_autocast_gpu_dtype", "is_autocast_cache_enabled",
                     "is_autocast_cpu_enabled", "is_autocast_enabled",
                     "set_autocast_cache_enabled", "set_autocast_cpu_dtype",
                     "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled",
                     "set_autocast_gpu_dtype"),
                    "autocast's mode and its settings (tests/test_amp_autocast_torch.py)"),
    **dict.fromkeys(("set_default_tensor_type", "set_flush_denormal", "set_warn_always"),
                    "a setting of the process (tests/test_names_torch.py, "
                    "tests/test_top_level_torch.py)"),
}

# Public names tested against torch outside the op table, as forms of ops that have rows (the
# in-place functions, the *_copy forms, nn.functional's ops at the top level) or as torch's
# further top-level names: each named in a call `L.name(` of those files' cases or in a case
# table of tests/test_op_forms_torch.py.
TESTED_ELSEWHERE_IN = ("test_names_torch.py", "test_op_forms_torch.py")


def tested_elsewhere() -> set:
    import re

    found: set = set()
    for file_name in TESTED_ELSEWHERE_IN:
        source = (Path(__file__).parent / file_name).read_text()
        found |= set(re.findall(r"\bL\.([A-Za-z_0-9]+)\(", source))
        found |= set(re.findall(r'^    "([a-z_0-9]+)": ', source, re.MULTILINE))
        unary = re.search(r"_UNARY = \(([^)]*)\)", source)
        if unary:
            found |= {f"{name}_" for name in re.findall(r'"([a-z_0-9]+)"', unary.group(1))}
    return found


def test_every_public_op_has_a_row():
    """Every callable of autojit.__all__ (op functions and factories alike) has a row, is an
    alias, or is listed in NOT_OPS."""
    names = {row.name for row in ROWS}
    public = set(autojit.__all__) | set(functional.__all__)
    missing = sorted(name for name in public if callable(getattr(autojit, name))
                     and name not in names | ALIASES | set(NOT_OPS) | tested_elsewhere())
    assert not missing, f"public ops with no op table row (or a NOT_OPS entry): {missing}"
    stale = sorted(name for name in NOT_OPS if name not in public or name in names)
    assert not stale, f"NOT_OPS names that are not public or that have a row: {stale}"


def test_aliases_are_aliases():
    for alias in ALIASES:
        function = getattr(functional, alias)
        assert any(getattr(functional, name, None) is function for name in functional.__all__
                   if name not in ALIASES), f"{alias} is not an alias of a function with a row"
