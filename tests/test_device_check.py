"""tools/device_check.sh rehearsed on the host, under Numba's CUDA simulator (issue 72).

The script is what a GPU session runs first, with minutes of device time: it must not fail on
its own plumbing there. These run it with AUTOJIT_DEVICE_CHECK_SIMULATE=1 and a few phases:
the profile of one compiled MLP step (which also runs bench/cuda_steps.py), the folder's
files (at most 8, as the device tool returns) and the summary; and a budget too small for any
phase, which must skip every phase and still write the summary. bench/cuda_steps.py's table
and JSON are checked in-process with tiny sizes. The whole rehearsal (every phase, `bash
tools/device_check.sh` as the script's header says) takes about a minute; these about 15 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

pytestmark = MARKS
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tools", "device_check.sh")
needs_tools = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None
                                 or shutil.which("tar") is None,
                                 reason="needs bash, timeout and tar")


def rehearse(folder, phases: str, budget: int = 300) -> str:
    environment = dict(os.environ, AUTOJIT_DEVICE_CHECK_SIMULATE="1",
                       AUTOJIT_DEVICE_CHECK_PHASES=phases,
                       AUTOJIT_DEVICE_CHECK_BUDGET=str(budget),
                       AUTOJIT_PYTHON=sys.executable, AUTOJIT_WHEELS=str(folder / "no-wheels"))
    environment.pop("OUT", None)
    completed = subprocess.run(["bash", SCRIPT, str(folder / "out")], cwd=ROOT, env=environment,
                               capture_output=True, text=True, timeout=240, check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


def test_the_script_is_valid_bash():
    subprocess.run(["bash", "-n", SCRIPT], check=True)


@needs_tools
def test_a_simulated_profile_phase_writes_the_folder_the_device_tool_returns(tmp_path):
    output = rehearse(tmp_path, "profile")
    folder = tmp_path / "out"
    names = sorted(os.listdir(folder))
    assert names == ["logs.tar.gz", "profile_mlp.json", "summary.json", "summary.txt"]
    assert len(names) <= 8  # the device tool returns at most 8 files
    summary = (folder / "summary.txt").read_text()
    assert "profile      ok" in summary and "summary.txt" in output
    assert "mlp step:" in summary and "plan steps" in summary
    profile = json.loads((folder / "profile_mlp.json").read_text())
    kernels = [step for step in profile["steps"] if step["step"].startswith("kernel ")]
    assert kernels and all(step["launches"] == 1 for step in kernels)
    assert profile["call_counts"]["readbacks"] == 1  # the status word, once per step
    phases = json.loads((folder / "summary.json").read_text())["phases"]
    assert [(phase["phase"], phase["rc"]) for phase in phases] == [("profile", 0)]


@needs_tools
def test_phases_past_the_budget_are_skipped_and_the_summary_written(tmp_path):
    rehearse(tmp_path, "env steps tests", budget=5)
    folder = tmp_path / "out"
    summary = (folder / "summary.txt").read_text()
    for name in ("env", "steps", "tests"):
        assert f"{name:<12} skipped: the budget of 5 s is spent" in summary
    assert "tests        no junit_cuda.xml" in summary
    phases = json.loads((folder / "summary.json").read_text())["phases"]
    assert [phase["phase"] for phase in phases] == ["env", "steps", "tests"]


def test_cuda_steps_reports_json_and_a_table(tmp_path, capsys):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import cuda_steps
    finally:
        sys.path.remove(os.path.join(ROOT, "bench"))
    path = tmp_path / "steps.json"
    report = cuda_steps.main(["--quick", "--workloads", "elementwise", "mlp",
                              "--json", str(path)])
    assert json.loads(path.read_text())["workloads"].keys() == {"elementwise", "mlp"}
    mlp = report["workloads"]["mlp"]
    assert not mlp["notes"], mlp["notes"]  # the first losses agree with the CPU's
    figures = mlp["runners"]["autojit compiled"]
    assert figures["losses_agree"] and figures["median_ms"] > 0 and figures["first_call_s"] > 0
    assert figures["per_step"]["readbacks"] == 1 and figures["per_step"]["allocations"] == 0
    assert figures["kernels"] == figures["per_step"]["launches"] > figures["fused_kernels"]
    assert "elementwise" in capsys.readouterr().out
