"""tensor/host_memory.py: `import autojit` raises glibc malloc's mmap and trim thresholds so
that eager arrays reuse freed heap memory (docs/performance.md, "Host memory for eager
arrays"), unless AUTOJIT_HOST_MEMORY=system; each case is a fresh interpreter, since the
setting is made once per process at import."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the thresholds are glibc malloc's")

PROBE = """
import autojit
from autojit.tensor import host_memory
print(host_memory.applied)
"""


def _applied(environment: dict) -> str:
    completed = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                               check=True, env={**os.environ, **environment})
    return completed.stdout.strip()


def test_import_raises_the_thresholds():
    assert _applied({"AUTOJIT_HOST_MEMORY": ""}) == "True"


def test_autojit_host_memory_system_leaves_malloc_alone():
    assert _applied({"AUTOJIT_HOST_MEMORY": "system"}) == "False"
