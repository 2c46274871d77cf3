"""`python -m autojit.drop_in script.py [args]` and `python -m autojit.drop_in -m module
[args]`: run a torch program on autojit, unmodified, as `python script.py [args]` would run it
(sys.argv, sys.path[0] and `__main__` as Python sets them)."""

from __future__ import annotations

import os
import runpy
import sys

from . import install

USAGE = ("usage: python -m autojit.drop_in script.py [args ...]\n"
         "       python -m autojit.drop_in -m module [args ...]\n"
         "Runs a torch program with `import torch` resolving to autojit (docs/drop-in.md).")


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        raise SystemExit(0 if argv else 2)
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            raise SystemExit(2)
        sys.argv = argv[1:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
