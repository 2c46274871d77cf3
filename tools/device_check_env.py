"""tools/device_check.sh's Python parts: what the machine has, and the summary of a run.

    python tools/device_check_env.py ENV_JSON        # versions, devices, one compiled step
    python tools/device_check_env.py --summarize DIR # headline lines of a finished check

The first form prints and writes to ENV_JSON: Python's, NumPy's, numba's, numba-cuda's,
CuPy's and torch's versions, whether numba.cuda, CuPy and torch each see a GPU, and whether
autojit runs one compiled step on the device (a fused kernel and a product, checked against
NumPy), each with the error that stopped it: a machine missing a package or holding a NumPy
that numba-cuda cannot compile with is named here, in the first seconds, not in every test.
It exits 0 whatever it finds. The second form reads DIR's junit_cuda.xml, cuda_steps.json
and profile_mlp.json and prints one line each (test counts and the first failures; each
workload's ms per step against torch eager's; the profiled step's launches and read-backs).
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
import time
import traceback
import xml.etree.ElementTree as ElementTree


def _version(name: str):
    try:
        from importlib import metadata

        return metadata.version(name)
    except Exception:  # noqa: BLE001 - not installed
        return None


def _attempt(report: dict, key: str, check) -> None:
    """report[key] = check()'s result, or the error that stopped it."""
    try:
        report[key] = check()
    except Exception as error:  # noqa: BLE001 - every failure is what this reports
        report[key] = {"error": f"{type(error).__name__}: {error}"[:500]}
        report.setdefault("tracebacks", {})[key] = traceback.format_exc()[-2000:]


def _numba_cuda() -> dict:
    from numba import cuda

    found = {"available": bool(cuda.is_available()),
             "simulator": bool(importlib.import_module("numba").config.ENABLE_CUDASIM)}
    if found["available"] and not found["simulator"]:
        device = cuda.get_current_device()
        found["device"] = device.name.decode() if isinstance(device.name, bytes) else \
            str(device.name)
        found["compute_capability"] = list(device.compute_capability)
    return found


def _cupy() -> dict:
    import cupy

    return {"devices": int(cupy.cuda.runtime.getDeviceCount()),
            "cuda_runtime": int(cupy.cuda.runtime.runtimeGetVersion())}


def _torch() -> dict:
    import torch

    found = {"cuda": bool(torch.cuda.is_available()), "torch_cuda": torch.version.cuda}
    if found["cuda"]:
        found["device"] = torch.cuda.get_device_name()
    return found


def _autojit_step() -> dict:
    """One compiled step on the device: a product, then a fused bias, ReLU and sum."""
    import numpy as np

    import autojit

    start = time.perf_counter()
    if not autojit.cuda.is_available():
        return {"available": False}
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 5), np.float32), rng.standard_normal((5, 3), np.float32)
    bias = rng.standard_normal(3, np.float32)

    @autojit.compile
    def step(a, b, bias):
        return ((a @ b + bias).relu() * 2).sum(0)

    result = step(*(autojit.tensor(x, device="cuda") for x in (a, b, bias)))
    expected = (np.maximum(a @ b + bias, 0) * 2).sum(0)
    np.testing.assert_allclose(result.cpu().numpy(), expected, rtol=1e-4, atol=1e-5)
    return {"available": True, "device": autojit.cuda.get_device_name(),
            "compiled_step_seconds": time.perf_counter() - start, "matches_numpy": True}


def environment(path: str) -> dict:
    import numpy

    report = {"python": platform.python_version(), "executable": sys.executable,
              "numpy": numpy.__version__, "numba": _version("numba"),
              "numba_cuda": _version("numba-cuda"), "cupy": _version("cupy-cuda13x") or
              _version("cupy-cuda12x") or _version("cupy"), "torch": _version("torch"),
              "NUMBA_ENABLE_CUDASIM": os.environ.get("NUMBA_ENABLE_CUDASIM")}
    if tuple(int(part) for part in numpy.__version__.split(".")[:2]) >= (2, 5):
        report["warning"] = (f"NumPy {numpy.__version__}: numba-cuda 0.30 compiles no kernel "
                             "with NumPy 2.5 or later; carry a numpy<2.5 wheel in .whl/ "
                             "(tools/device_check.sh)")
    _attempt(report, "numba.cuda", _numba_cuda)
    _attempt(report, "cupy_devices", _cupy)
    _attempt(report, "torch_cuda", _torch)
    _attempt(report, "autojit", _autojit_step)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1)
    print(json.dumps({key: value for key, value in report.items() if key != "tracebacks"},
                     indent=1))
    for key, text in report.get("tracebacks", {}).items():
        print(f"--- {key}\n{text}")
    return report


def _load(path: str):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def summarize(folder: str, failures: int = 40) -> None:
    env = _load(os.path.join(folder, "env.json"))
    if env is not None:
        step = env.get("autojit", {})
        print(f"environment  numpy {env.get('numpy')}, numba {env.get('numba')}, numba-cuda "
              f"{env.get('numba_cuda')}, cupy {env.get('cupy')}, torch {env.get('torch')}; "
              f"autojit step: {step.get('error') or step.get('device') or step}")
        if "warning" in env:
            print(f"WARNING      {env['warning']}")
    try:
        root = ElementTree.parse(os.path.join(folder, "junit_cuda.xml")).getroot()
        suites = [root] if root.tag == "testsuite" else list(root)
        totals = {key: sum(int(suite.get(key, 0)) for suite in suites)
                  for key in ("tests", "failures", "errors", "skipped")}
        print(f"tests        {totals['tests']} run: {totals['failures']} failed, "
              f"{totals['errors']} errors, {totals['skipped']} skipped")
        failed = [case for case in root.iter("testcase")
                  if case.find("failure") is not None or case.find("error") is not None]
        for case in failed[:failures]:
            problem = case.find("failure") if case.find("failure") is not None else \
                case.find("error")
            message = (problem.get("message") or "").splitlines()
            print(f"  FAILED {case.get('classname')}::{case.get('name')}: "
                  f"{message[0][:160] if message else ''}")
        if len(failed) > failures:
            print(f"  ... and {len(failed) - failures} more (junit_cuda.xml)")
    except (OSError, ElementTree.ParseError):
        print("tests        no junit_cuda.xml (the tests did not finish)")
    steps = _load(os.path.join(folder, "cuda_steps.json"))
    if steps is not None:
        print(f"benchmarks   on {steps['device']}, copy {steps['copy_GB_per_s']:.0f} GB/s")
        for name, result in steps["workloads"].items():
            figures = [f"{runner} {values['median_ms']:.3f} ms ({values.get('kernels')} "
                       f"kernels, host {values['host_ms']:.3f} ms)"
                       for runner, values in result["runners"].items()]
            print(f"  {name}: " + "; ".join(figures) + "".join(
                f" [{note}]" for note in result["notes"]))
    profile = _load(os.path.join(folder, "profile_mlp.json"))
    if profile is not None:
        print(f"profile      mlp step: {len(profile['steps'])} plan steps, host "
              f"{profile['call_host_us'] / 1e3:.3f} ms, synchronized "
              f"{profile['call_synchronized_us'] / 1e3:.3f} ms, {profile['call_counts']}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--summarize"]:
        summarize(sys.argv[2])
    else:
        environment(sys.argv[1])
