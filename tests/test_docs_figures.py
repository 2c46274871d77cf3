"""Figures on the docs' pages that neither a script writes nor an output block checks.

docs/examples.md's runs are written by tools/examples_page.py (tests/test_examples_page.py),
docs/performance.md's by the benchmarks it names, and the design notes record measurements
with the commands that made them. What is left is an illustrative table whose figures differ
from run to run but whose claim does not: docs/profiler.md's Compare table shows the compiled
Jacobian faster than the eager one. The test checks that claim (the sign, never a figure) by
timing the page's own statements, as the page does.
"""

from __future__ import annotations

import re
from pathlib import Path

import autojit
from autojit.func import jacrev
from autojit.utils.benchmark import Timer

ROOT = Path(__file__).resolve().parents[1]


def test_profiler_page_compare_table_compiled_jacobian_is_faster_than_eager():
    page = (ROOT / "docs" / "profiler.md").read_text()
    row = re.search(r"64 x 64\s+\|\s+([\d.]+)\s+\|\s+([\d.]+)", page)
    assert row, "docs/profiler.md's Compare table has moved: update this test"
    assert float(row.group(2)) < float(row.group(1))  # the page: compiled below eager

    weight, x = autojit.randn(64, 64), autojit.randn(64)

    def predict(weight, x):
        return (weight @ x).tanh()

    compiled = autojit.compile(jacrev(predict, argnums=1))
    names = {"jacrev": jacrev, "predict": predict, "weight": weight, "x": x,
             "compiled": compiled}
    compiled(weight, x)  # traced and compiled here, not timed
    medians = {}
    for description, statement in [("eager", "jacrev(predict, argnums=1)(weight, x)"),
                                   ("compiled", "compiled(weight, x)")]:
        timer = Timer(stmt=statement, globals=names, description=description)
        medians[description] = timer.blocked_autorange(min_run_time=0.05).median
    assert medians["compiled"] < medians["eager"], medians
