"""The package's version and its environment flags (AUTOJIT_*), read when first asked for;
documented in docs/compiler.md.

AUTOJIT_DISABLE=1     every autojit.compile runs its function eagerly (no tracing, no kernels).
AUTOJIT_LOG=...       comma-separated topics logged to stderr: recompiles, graph_breaks, guards,
                      kernels, stages (or "all").
AUTOJIT_CACHE_DIR     where compiled kernels are cached on disk (default: $XDG_CACHE_HOME/autojit
                      or ~/.cache/autojit; codegen/cpu/disk_cache.py).
AUTOJIT_DISK_CACHE=0  no disk cache: kernels are compiled in every process (kept in memory).
AUTOJIT_DUMP=...      comma-separated compile stages whose results are printed (compiler/stages.py).
AUTOJIT_DUMP_PASSES   comma-separated pass names whose graphs are printed before and after.
"""

from __future__ import annotations

import os
import sys

# The package's version (autojit.__version__); kernels cached on disk are keyed by it.
VERSION = "0.1.0"

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def disabled() -> bool:
    return os.environ.get("AUTOJIT_DISABLE", "").strip().lower() in TRUE_WORDS


def log_topics() -> set:
    words = {word.strip() for word in os.environ.get("AUTOJIT_LOG", "").split(",")}
    return {word for word in words if word}


def log(topic: str, message: str) -> None:
    """Write `message` to stderr when AUTOJIT_LOG names `topic` (or "all")."""
    topics = log_topics()
    if topic in topics or "all" in topics:
        print(f"[autojit:{topic}] {message}", file=sys.stderr)


def disk_cache_enabled() -> bool:
    return os.environ.get("AUTOJIT_DISK_CACHE", "1").strip().lower() not in FALSE_WORDS


def cache_dir() -> str:
    configured = os.environ.get("AUTOJIT_CACHE_DIR")
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "autojit")
