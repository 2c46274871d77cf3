"""The package's version, its environment flags (AUTOJIT_*), read when first asked for and
documented in docs/compiler.md, and the process's thread settings (autojit.set_num_threads).

AUTOJIT_DISABLE=1     every autojit.compile runs its function eagerly (no tracing, no kernels).
AUTOJIT_LOG=...       comma-separated topics logged to stderr: recompiles, graph_breaks, guards,
                      kernels, stages (or "all").
AUTOJIT_CACHE_DIR     where compiled kernels are cached on disk (default: $XDG_CACHE_HOME/autojit
                      or ~/.cache/autojit; codegen/cpu/disk_cache.py).
AUTOJIT_DISK_CACHE=0  no disk cache: kernels are compiled in every process (kept in memory).
AUTOJIT_DUMP=...      comma-separated compile stages whose results are printed (compiler/stages.py).
AUTOJIT_DUMP_PASSES   comma-separated pass names whose graphs are printed before and after.
AUTOJIT_HOST_MEMORY=system  malloc's own thresholds (tensor/host_memory.py reads this flag).
AUTOJIT_COMPILE_THREADS=n   threads compiling kernels beside the caller (0: none;
                            codegen/cpu/compile_threads.py reads this flag).
AUTOJIT_GUARDS=walk   guard everything a compiled function can reach, instead of what its trace
                      read (compiler/recorder.py; docs/notes/guards.md): a cross-check.
"""

from __future__ import annotations

import functools
import os
import sys

# The package's version (autojit.__version__); kernels cached on disk are keyed by it.
VERSION = "0.1.0"

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def disabled() -> bool:
    return os.environ.get("AUTOJIT_DISABLE", "").strip().lower() in TRUE_WORDS


# The topics AUTOJIT_LOG can name (and "all"): where each is logged is named in its message.
LOG_TOPICS = ("recompiles", "graph_breaks", "guards", "kernels", "stages")


def log_topics() -> set:
    """The topics AUTOJIT_LOG names; a name that is not a topic is an error listing them."""
    words = {word.strip() for word in os.environ.get("AUTOJIT_LOG", "").split(",")}
    topics = {word for word in words if word}
    unknown = topics - set(LOG_TOPICS) - {"all"}
    if unknown:
        raise ValueError(f"AUTOJIT_LOG: unknown topic {', '.join(sorted(unknown))}; the topics "
                         f"are {', '.join(LOG_TOPICS)} (or all)")
    return topics


# Topics torch._logging.set_logs switched on (autojit/_logging.py): topic -> the Python logger
# torch logs that artifact to, which `log` writes them to too.
PYTHON_LOGGERS: dict = {}


def log(topic: str, message: str, torch_message: str | None = None) -> None:
    """Write `message` to stderr when AUTOJIT_LOG names `topic` (or "all"), and to the Python
    logger torch._logging.set_logs switched on for it (`torch_message`, in torch's words where
    programs look for them, if given)."""
    topics = log_topics()
    if topic in topics or "all" in topics:
        prefix = f"[autojit:{topic}] "
        print(prefix + message.replace("\n", "\n" + prefix), file=sys.stderr)
    name = PYTHON_LOGGERS.get(topic)
    if name is not None:
        import logging

        logging.getLogger(name).debug("%s", torch_message or message)


def guards_from_reads() -> bool:
    """Whether guards check what a trace read (the default), not all it could reach."""
    return os.environ.get("AUTOJIT_GUARDS", "reads").strip().lower() != "walk"


def disk_cache_enabled() -> bool:
    return os.environ.get("AUTOJIT_DISK_CACHE", "1").strip().lower() not in FALSE_WORDS


def cache_dir() -> str:
    configured = os.environ.get("AUTOJIT_CACHE_DIR")
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "autojit")


# ---- compiled Python code kept across processes -------------------------------------------------
# The code generator (codegen/__init__.py) installs its disk cache here as {"load": key -> bytes or
# None, "store": (key, bytes) -> bool}, so that the layers below it keep code there too (the
# guard predicates of compiler/guard_code.py); empty, nothing is kept on disk.

CODE_STORE: dict = {}


def package_files(patterns: tuple) -> list:
    """The package's files that match the glob `patterns` (relative to src/autojit), as
    posix paths relative to it, in the patterns' order, each pattern's matches sorted."""
    from pathlib import Path

    root = Path(__file__).resolve().parent
    return [path.relative_to(root).as_posix() for pattern in patterns
            for path in sorted(root.glob(pattern))]


@functools.cache
def source_fingerprint(patterns: tuple) -> str:
    """sha256 over the names and bytes of `package_files(patterns)`, once per process: what
    keys kept across processes carry, so that an edited source never meets what its old
    version made (kernels, optimized graphs)."""
    import hashlib
    from pathlib import Path

    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in package_files(patterns):
        digest.update(name.encode())
        digest.update((root / name).read_bytes())
    return digest.hexdigest()

# ---- threads ------------------------------------------------------------------------------------
# autojit.set_num_threads: how many threads compiled code runs on. The code generator
# (codegen/cpu/__init__.py) installs a listener here that resizes its worker threads and sets
# the BLAS library's thread count; this layer only holds the setting.

_threads: dict = {"intra": None, "interop": None}
THREAD_LISTENERS: list = []  # callables taking the new count, installed by codegen/cpu


def usable_cores() -> int:
    """The cores this process may use: its CPU affinity, capped by a cgroup CPU quota. A
    container on a large host sees all the host's CPUs in `os.cpu_count()`; a spinning worker
    per CPU beyond the quota would each wait for the others' time slices."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        cores = min(cores, quota)
    return max(1, cores)


@functools.lru_cache(maxsize=1)
def _cgroup_quota() -> int | None:
    """Whole cores of the cgroup's CPU quota (v2 `cpu.max`, else v1 `cfs_quota_us`), or None
    where there is none. Read once per process, as torch reads its thread count: every kernel
    compile asks (codegen/cpu/parallel.py), and the file reads took 0.13 ms a kernel."""
    def read(path: str) -> str | None:
        try:
            with open(path) as file:
                return file.read().strip()
        except OSError:
            return None

    v2 = read("/sys/fs/cgroup/cpu.max")
    if v2 is not None:
        quota, period = (v2.split() + ["100000"])[:2]
    else:
        quota = read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") or "max"
        period = read("/sys/fs/cgroup/cpu/cpu.cfs_period_us") or "100000"
    try:
        quota_us, period_us = int(quota), int(period)
    except ValueError:  # "max": no quota
        return None
    if quota_us <= 0 or period_us <= 0:
        return None
    return max(1, quota_us // period_us)


def _checked_count(count, name: str) -> int:
    if isinstance(count, bool) or not isinstance(count, int):
        raise RuntimeError(f"{name} expects an int, but got {type(count).__name__}")
    if count <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return count


def set_num_threads(count: int) -> None:
    """Run compiled code on at most `count` threads: the calling thread and count - 1 worker
    threads (never more than one per usable core), and NumPy's BLAS on `count` threads for
    eager products (a compiled run that calls BLAS sets it to one thread while it runs and
    splits large products itself: codegen/cpu/gemm/blas.py)."""
    _threads["intra"] = _checked_count(count, "set_num_threads")
    for listener in THREAD_LISTENERS:
        listener(count)


def get_num_threads() -> int:
    """The thread count set_num_threads set; by default the usable cores."""
    return _threads["intra"] or usable_cores()


def set_num_interop_threads(count: int) -> None:
    """Accepted and remembered: autojit runs independent ops one after another on the calling
    thread, so there is no inter-op pool to size."""
    _threads["interop"] = _checked_count(count, "set_num_interop_threads")


def get_num_interop_threads() -> int:
    """What set_num_interop_threads set; 1 before (autojit has no inter-op pool)."""
    return _threads["interop"] or 1
