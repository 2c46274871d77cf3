"""Suite-wide settings: the kernel disk cache lives in a temporary directory for the run.

Compiled tests (and the subprocesses some tests start, which inherit the environment) then
exercise the disk cache without ever writing into the user's cache directory; the directory is
removed when the run ends. A developer's AUTOJIT_CACHE_DIR or AUTOJIT_DISK_CACHE is replaced
for the run.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

_SAVED: dict = {}


def pytest_configure(config):
    for name in ("AUTOJIT_CACHE_DIR", "AUTOJIT_DISK_CACHE"):
        _SAVED[name] = os.environ.pop(name, None)
    _SAVED["directory"] = tempfile.mkdtemp(prefix="autojit-test-cache-")  # mode 0o700
    os.environ["AUTOJIT_CACHE_DIR"] = _SAVED["directory"]


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
