"""Running a script in two fresh processes that share one kernel disk cache directory: what
the first stores, the second finds. Tests of what is kept across processes (guard code,
optimized graphs) print a count and the losses, and compare the two runs."""

from __future__ import annotations

import os
import subprocess
import sys


def twice_with_one_cache(script: str, directory) -> tuple:
    """The whitespace-separated numbers `script` printed in each of two fresh processes run
    one after the other with AUTOJIT_CACHE_DIR set to `directory`/cache."""
    environment = {**os.environ, "AUTOJIT_CACHE_DIR": str(directory / "cache")}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=environment, timeout=240, check=True).stdout.split()
            for _ in range(2)]
    first, second = (list(map(float, run)) for run in runs)
    return first, second
