"""Runs torch's own autograd test files under torch and under autojit's drop-in, over the stand-in
for torch.testing._internal in standin/, and compares: every test that passes under torch should
pass under autojit.

The test files are torch's, kept outside this repository; point --source at a folder holding
test_autograd.py, autograd/test_functional.py, autograd/test_complex.py and
functorch/test_eager_transforms.py (docs/differences.md says which copy was measured):

    python tests/torch_suite/run.py --source DIR --out /tmp/suite            # both runs, compared
    python tests/torch_suite/run.py --source DIR --out /tmp/suite --only autojit -k test_grad
    python tests/torch_suite/run.py --compare /tmp/suite                      # compare again

Each run is a pytest process per file (two xdist workers, a 120 s limit per test), written as
JUnit XML to --out; the comparison prints the counts and autojit's failures grouped by cause.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.join(HERE, "standin")
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
FILES = ("test_autograd.py", "functorch/test_eager_transforms.py")


def run(framework: str, source: str, out: str, extra: list[str]) -> None:
    env = dict(os.environ)
    paths = [STANDIN, source, os.path.join(SOURCE_ROOT, "src"), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env["TORCH_SUITE_FRAMEWORK"] = framework
    env.setdefault("AUTOJIT_CACHE_DIR", os.path.join(out, "kernel-cache"))
    for name in FILES:
        if not os.path.exists(os.path.join(source, name)):
            print(f"missing {name}: skipped")
            continue
        xml = os.path.join(out, f"{framework}-{name.replace('/', '-')}.xml")
        command = [sys.executable, "-m", "pytest", name, "-p", "torch_suite_plugin",
                   "-p", "no:cacheprovider", "-q", "-n", "2", "--timeout", "120",
                   "--junitxml", xml, "-o", "junit_family=xunit1", *extra]
        print(" ".join(command), flush=True)
        subprocess.run(command, cwd=source, env=env, stdout=subprocess.DEVNULL)


def outcomes(path: str) -> dict:
    """{test id: (outcome, first line of the failure)} of one JUnit XML file."""
    found = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                message = (child.get("message") or child.text or "").strip().splitlines()
                message = message[0] if message else ""
            elif child.tag == "skipped":
                outcome = "skipped"
                message = child.get("message") or ""
        found[key] = (outcome, message)
    return found


# The tests left out, as rules on the failure's message or the test's name: torch internals
# autojit does not have (docs/differences.md lists them with their counts).
EXCLUSIONS = (
    ("__torch_dispatch__ (wrapper subclasses, dispatch modes, aten-level tracing)",
     r"_make_wrapper_subclass|__torch_dispatch__|TorchDispatchMode|_CachedTorchDispatchMode|"
     r"make_fx|HigherOrderOperator|FakeTensorMode|'_OpNamespace' 'aten'|_scoped_library"),
    ("sparse compressed layouts (CSR, CSC, BSR, BSC)",
     r"sparse_bsc|sparse_bsr|sparse_csc|sparse_csr"),
    ("C++ extensions", r"cpp_extension|load_inline"),
    ("the dispatcher's test operators", r"_test_autograd_multiple_dispatch"),
    ("nested tensors", r"torch\.nested"),
    ("MKL-DNN tensors and Intel ITT ranges", r"MKL-DNN build is disabled|ITT is required"),
)


def excluded(key: str, message: str) -> str | None:
    for rule, pattern in EXCLUSIONS:
        if re.search(pattern, message) or re.search(pattern, key):
            return rule
    return None


def cause(message: str) -> str:
    message = re.sub(r"0x[0-9a-f]+", "0x..", message)
    message = re.sub(r"\d+(\.\d+)?", "N", message)
    return message[:150]


def compare(out: str) -> None:
    for name in FILES:
        stem = name.replace("/", "-")
        paths = [os.path.join(out, f"{fw}-{stem}.xml") for fw in ("torch", "autojit")]
        if not all(os.path.exists(p) for p in paths):
            continue
        torch_run, autojit_run = (outcomes(p) for p in paths)
        passing = [k for k, (o, _) in torch_run.items() if o == "passed"]
        good = [k for k in passing if autojit_run.get(k, ("missing", ""))[0] == "passed"]
        share = 100 * len(good) / max(1, len(passing))
        print(f"\n{name}: {len(torch_run)} tests; {len(passing)} pass under torch; "
              f"{len(good)} of those pass under autojit ({share:.1f}%)")
        causes, rules = collections.Counter(), collections.Counter()
        examples = {}
        for key in passing:
            outcome, message = autojit_run.get(key, ("missing", "not run (collection failed?)"))
            if outcome == "passed":
                continue
            rule = excluded(key, message)
            if rule is not None:
                rules[rule] += 1
                continue
            c = cause(f"{outcome}: {message}")
            causes[c] += 1
            examples.setdefault(c, key)
        kept = len(passing) - sum(rules.values())
        print(f"  left out by rule: {sum(rules.values())}; of the other {kept}, "
              f"{len(good)} pass under autojit ({100 * len(good) / max(1, kept):.1f}%)")
        for rule, n in rules.most_common():
            print(f"  {n:4d}  left out: {rule}")
        for c, n in causes.most_common():
            print(f"  {n:4d}  {c}\n        e.g. {examples[c]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", help="folder of torch's test files")
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", choices=("torch", "autojit"))
    parser.add_argument("--compare", action="store_true", help="only compare earlier runs")
    args, extra = parser.parse_known_args()
    os.makedirs(args.out, exist_ok=True)
    if not args.compare:
        for framework in ("torch", "autojit"):
            if args.only in (None, framework):
                run(framework, os.path.abspath(args.source), args.out, extra)
    compare(args.out)


if __name__ == "__main__":
    main()
