"""Suite-wide settings: the kernel disk cache lives in a temporary directory for the run; the
tests that compare with torch are skipped, with a reason, where torch is not installed; and
`-m quick` selects the quick subset.

Compiled tests (and the subprocesses some tests start, which inherit the environment) then
exercise the disk cache without ever writing into the user's cache directory; the directory is
removed when the run ends. pytest-xdist's workers share the one directory, so a worker can
load a kernel another compiled (measured, it rarely happens: the workers run different files,
whose kernels differ). A developer's AUTOJIT_CACHE_DIR or
AUTOJIT_DISK_CACHE is replaced for the run.

torch is the reference the differential tests compare with, never a dependency of autojit: the
`test` extra installs it, `test-without-torch` does not. Without it, a test file that imports
torch, or a test that does, is reported as skipped ("needs torch") instead of failing, and the
rest of the suite runs.

QUICK lists the test files of the quick subset (`python -m pytest -m quick`, the README says how
long it takes): the eager core, autograd, the compiler's main paths, nn, optim and the docs'
code, for a first check while editing; the whole suite stays the check before a commit.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
import tempfile

import pytest

_SAVED: dict = {}
_SHARED_CACHE = "autojit_cache_directory"  # the key of xdist's workerinput that carries it
TORCH_MISSING = importlib.util.find_spec("torch") is None
NEEDS_TORCH = ("needs torch, the reference these tests compare with "
               "(pip install 'autojit[test]')")

# What the import of a missing torch (or of one of its modules) raises, as a report prints it.
TORCH_IMPORT_ERROR = re.compile(r"ModuleNotFoundError: (No module named 'torch[.']"
                                r"|import of torch(\.\w+)* halted)")

QUICK = {
    "test_autograd.py", "test_autograd_api_torch.py", "test_creation.py", "test_registry.py",
    "test_inplace_and_modes.py", "test_hooks.py", "test_custom_function.py", "test_ir.py",
    "test_op_table.py", "test_codegen_cpu.py", "test_compile.py", "test_compile_training.py",
    "test_compile_guards.py", "test_compile_backward.py", "test_compile_dynamic.py",
    "test_nn_module.py", "test_nn_layers.py", "test_nn_functional.py", "test_optim.py",
    "test_data.py", "test_serialization.py", "test_docs.py", "test_layout.py",
    "test_data_dependent_sizes.py",
}


def pytest_configure(config):
    for name in ("AUTOJIT_CACHE_DIR", "AUTOJIT_DISK_CACHE"):
        _SAVED[name] = os.environ.pop(name, None)
    shared = getattr(config, "workerinput", {}).get(_SHARED_CACHE)
    if shared is not None:
        # An xdist worker: the run's directory, made and removed by the controller.
        os.environ["AUTOJIT_CACHE_DIR"] = shared
        return
    _SAVED["directory"] = tempfile.mkdtemp(prefix="autojit-test-cache-")  # mode 0o700
    os.environ["AUTOJIT_CACHE_DIR"] = _SAVED["directory"]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist's workers share the controller's directory: a kernel one worker compiled
    can be loaded by the others. Entries are written to a temporary file and renamed into place
    (codegen/cpu/disk_cache.py), so concurrent writers and readers see whole entries."""
    node.workerinput[_SHARED_CACHE] = _SAVED["directory"]


def pytest_unconfigure(config):
    directory = _SAVED.pop("directory", None)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
    for name, value in _SAVED.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(autouse=True)
def torch_distributions_validate_arguments():
    """torch._dynamo, once a test in the process loads it (torch.compile, the compiler namespace
    tests), turns torch.distributions' argument validation off for good; the distribution tests
    compare autojit's errors with torch's, which need it on (torch's default)."""
    torch = sys.modules.get("torch")
    distributions = getattr(torch, "distributions", None) if torch is not None else None
    if distributions is not None:
        distributions.Distribution.set_default_validate_args(True)
    yield


@pytest.fixture(autouse=True)
def thread_settings_kept():
    """A test that changes autojit.set_num_threads must put it back: the shared native workers
    follow it, and the next tests in the process (which xdist chooses) assert that kernels
    split over the cores. One that does not fails here, and the setting is restored for the
    rest of the run."""
    config = sys.modules.get("autojit.config")
    if config is None:
        yield
        return
    saved = dict(config._threads)
    before = config.get_num_threads(), config.get_num_interop_threads()
    yield
    after = config.get_num_threads(), config.get_num_interop_threads()
    if after == before:
        return
    config._threads.update(saved)
    for listener in config.THREAD_LISTENERS:
        listener(before[0])
    raise AssertionError(f"the test left autojit's (intra-op, inter-op) thread counts at {after}, "
                         f"not {before}")


@pytest.fixture(autouse=True)
def torch_function_off():
    """A test that made an instance of a Tensor subclass overriding __torch_function__ switched
    the protocol's wrappers on for the process (tensor/torch_function.py): off again after it,
    so that the next test's warnings name its own frames, not a wrapper's."""
    yield
    protocol = sys.modules.get("autojit.tensor.torch_function")
    if protocol is not None and protocol.ACTIVE:
        protocol.deactivate()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in QUICK:
            item.add_marker(pytest.mark.quick)


def _torch_missing_error(excinfo) -> bool:
    error = getattr(excinfo, "value", None)
    return (TORCH_MISSING and isinstance(error, ModuleNotFoundError)
            and (error.name or "").split(".")[0] == "torch")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A test file that imports torch, without torch installed: skipped, with the reason."""
    outcome = yield
    report = outcome.get_result()
    if TORCH_MISSING and report.failed and TORCH_IMPORT_ERROR.search(str(report.longrepr)):
        report.outcome = "skipped"
        report.longrepr = (str(collector.path), 0, f"Skipped: {NEEDS_TORCH}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test (or its fixture) that imports torch, without torch installed: skipped."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None and _torch_missing_error(call.excinfo):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {NEEDS_TORCH}")
