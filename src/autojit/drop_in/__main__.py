"""`python -m autojit.drop_in script.py [args]`, `-m module [args]`, `-c command [args]` and
`- [args]` (the program read from standard input): run a torch program on autojit, unmodified,
as `python script.py [args]` (and Python's other forms) would run it (sys.argv, sys.path[0]
and `__main__` as Python sets them)."""

from __future__ import annotations

import os
import runpy
import sys
import types

from . import install

USAGE = ("usage: python -m autojit.drop_in script.py [args ...]\n"
         "       python -m autojit.drop_in -m module [args ...]\n"
         "       python -m autojit.drop_in -c command [args ...]\n"
         "       python -m autojit.drop_in - [args ...]   (the program from standard input)\n"
         "Runs a torch program with `import torch` resolving to autojit (docs/drop-in.md).")


def _run_source(source: str, filename: str, argv: list[str]) -> None:
    """Run `source` as the `__main__` module, as `python -c` and `python -` do: sys.path[0]
    is the working directory ('')."""
    sys.argv = argv
    sys.path.insert(0, "")
    main = types.ModuleType("__main__")
    main.__builtins__ = __builtins__
    previous = sys.modules.get("__main__")
    sys.modules["__main__"] = main  # pickles of the program's classes name this module
    try:
        exec(compile(source, filename, "exec"), main.__dict__)  # noqa: S102
    finally:
        if previous is not None:
            sys.modules["__main__"] = previous


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        raise SystemExit(0 if argv else 2)
    if argv[0] in ("-m", "-c") and len(argv) < 2:
        print(USAGE, file=sys.stderr)
        raise SystemExit(2)
    install()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    if argv[0] == "-c":
        _run_source(argv[1], "<string>", ["-c", *argv[2:]])
        return
    if argv[0] == "-":
        _run_source(sys.stdin.read(), "<stdin>", list(argv))
        return
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
