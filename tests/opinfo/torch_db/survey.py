"""Counts what tests/test_opinfo.py checks, over every OpInfo of torch's database: the OpInfos
without an autojit callable, the ops failing a sample, and the samples agreeing in each check.

    cd tests && PYTHONPATH=../src python -m opinfo.torch_db.survey [--limit 32] [--json out]
        [--only NAME ...] [--errors]

`--errors` runs torch's error samples only (every op's, up to --limit), not the samples.

Skipped OpInfos (skips.py) are counted apart and not run.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time

from . import DTYPES, FULL_LIMIT, op_id
from .checks import CHECKS
from .resolve import autojit_callable
from .runner import op_database, run_errors, run_op, supports
from .skips import NOT_APPLICABLE, SKIPS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=FULL_LIMIT)
    parser.add_argument("--json")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--errors", action="store_true", help="torch's error samples only")
    parser.add_argument("--dtypes", nargs="*", default=list(DTYPES),
                        help="other dtypes than the test's (int64, bool, ...) for a look")
    options = parser.parse_args(argv)
    missing, skipped, not_applicable, failing = [], [], [], {}
    counts = collections.Counter()
    per_op = {}
    started = time.time()
    for opinfo in op_database():
        name = op_id(opinfo)
        if options.only and name not in options.only and opinfo.name not in options.only:
            continue
        if opinfo.name in NOT_APPLICABLE or name in NOT_APPLICABLE:
            not_applicable.append(name)
            continue
        if name in SKIPS:
            skipped.append(name)
            continue
        function = autojit_callable(opinfo)
        if function is None:
            missing.append(name)
            continue
        op_started = time.time()
        outcomes = []
        for dtype in () if options.errors else options.dtypes:
            if not supports(opinfo, dtype):
                continue
            outcomes += [(dtype, *o) for o in run_op(opinfo, function, dtype, options.limit)]
        outcomes += [("-", *o) for o in run_errors(opinfo, function, options.limit)]
        for _, _, check, message in outcomes:
            counts[(check, message is None)] += 1
        failures = [o for o in outcomes if o[3] is not None and o[2] != "unsupported"]
        if failures:
            failing[name] = failures
        per_op[name] = time.time() - op_started
        if options.verbose:
            print(f"{name}: {per_op[name]:.2f}s {len(failures)} failures", file=sys.stderr,
                  flush=True)
    total = time.time() - started
    print(f"OpInfos: {len(missing) + len(skipped) + len(not_applicable) + len(per_op)}; "
          f"not applicable {len(not_applicable)}, skipped {len(skipped)}, "
          f"without a callable {len(missing)}, run {len(per_op)}, failing a sample "
          f"{len(failing)}")
    print(f"  samples not run (complex or sparse): {counts[('unsupported', False)]}")
    for check in (*CHECKS, "error"):
        good, bad = counts[(check, True)], counts[(check, False)]
        print(f"  {check}: {good} of {good + bad} samples agree")
    print(f"time {total:.1f}s")
    print("without a callable:", " ".join(missing))
    for name, failures in sorted(failing.items()):
        print(f"FAIL {name}: {len(failures)}")
        for dtype, index, check, message in failures[:3]:
            print(f"    [{dtype} #{index} {check}] {message}")
    if options.json:
        with open(options.json, "w") as handle:
            json.dump({"missing": missing, "skipped": skipped, "not_applicable": not_applicable,
                       "failing": failing, "times": per_op,
                       "counts": {f"{c}/{ok}": n for (c, ok), n in counts.items()}},
                      handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
