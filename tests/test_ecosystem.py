"""Torch libraries' own test suites pass on autojit: a pinned subset of each library's tests,
vendored under tests/ecosystem/<library>/ with its licence, runs through the drop-in
(`pytest -p autojit.drop_in`) in a subprocess, and every test of it must pass. Nothing is
fetched: the libraries are in the `test` extra at the versions the tests come from.

The subsets are chosen to take about half a minute of CPU; docs/drop-in.md gives the counts of
the full suites, measured outside the project's tests. This process itself has imported real
torch (the other tests' reference), which is why each suite runs in its own process.

Opt-in: every vendored test file, in full, under torch and under the drop-in (tens of minutes
on two cores, zuko and pyro the longest), each test passing under torch required to pass under
autojit too:

    AUTOJIT_ECOSYSTEM_FULL=1 python -m pytest tests/test_ecosystem.py -n 0 [-k zuko]
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

# library -> (module to import, version, the test paths under tests/ecosystem/<library>/ and
# the tests deselected from them, environment, the number of tests that pass; the skipped
# ones are skipped under torch too)
SUITES = {
    # test_backends_installed imports its package relatively (einops.tests), which the
    # vendored file is not in.
    "einops": ("einops", "0.8.1",
               ["test_ops.py", "test_einsum.py", "test_packing.py", "test_parsing.py",
                "test_other.py", "test_layers.py::test_rearrange_imperative",
                "test_layers.py::test_reduce_symbolic",
                "--deselect", "test_other.py::test_backends_installed"],
               {"EINOPS_TEST_BACKENDS": "torch"}, 51),
    "torchdiffeq": ("torchdiffeq", "0.2.5",
                    ["api_tests.py::TestCollectionState::test_forward",
                     "odeint_tests.py::TestNoIntegration",
                     "odeint_tests.py::TestDiscontinuities::test_odeint_perturb",
                     "odeint_tests.py::TestCallbacks::test_wrong_callback",
                     "odeint_tests.py::TestGridConstructor", "norm_tests.py::TestNorms::test_norm",
                     "norm_tests.py::TestNorms::test_adjoint_norm",
                     "event_tests.py::TestEventHandling::test_adjoint"], {}, 8),
    # test_sparse_not_supported fails under torch 2.13 too (its optimizers no longer raise), and
    # so do RangerQH's state-dict tests: load_state_dict keeps the loaded tensors themselves,
    # which the steps after it update, and the test expects the dict unchanged.
    "torch_optimizer": ("torch_optimizer", "0.3.0",
                        ["tests/test_param_validation.py", "tests/test_optimizer.py",
                         "tests/test_basic.py", "-k",
                         "test_param_validation and not sparse or TestOptim and (LARS or PID or "
                         "Ranger and not RangerQH or SGDW) or test_benchmark_function and "
                         "quadratic and (Yogi or AdaBelief or DiffGrad or AdaMod or AdaBound or "
                         "MADGRAD)"], {}, 109),
    "zuko": ("zuko", "1.6.0",
             ["tests/test_utils.py", "tests/test_mixtures.py", "tests/test_transforms.py",
              "tests/test_distributions.py", "tests/test_nn.py::test_MLP",
              "tests/test_nn.py::test_Linear", "tests/test_bayesian.py::test_bayesian_MLP",
              "tests/test_flows.py::test_adjacency_matrix",
              "tests/test_flows.py::test_context_adjacency_matrix",
              "tests/test_flows.py::test_flows[NICE]", "tests/test_flows.py::test_flows[MAF]",
              "tests/test_flows.py::test_flows[GF]"], {}, 133),
    "pyro": ("pyro", "1.9.1", ["tests/distributions", "tests/infer/test_util.py",
                               "tests/infer/test_inspect.py"], {}, 384),
    # tests/'s directories but attr, influence and insights (its 37 CUDA tests skip).
    "captum": ("captum", "0.9.0", ["tests"], {}, 243),
    # The files of tests/{color,filters,metrics,morphology} whose every test passes under torch
    # with the 0.9.0 wheel. KORNIA_TEST_OPTIMIZER empty: its conftest then deselects the
    # *compile*/*dynamo* tests, as when the variable is unset.
    "kornia": ("kornia", "0.9.0", ["tests", "--device", "cpu", "--dtype", "float32,float64"],
               {"KORNIA_TEST_OPTIMIZER": ""}, 1736),
    # test/'s directories of the model's parts: constraints, distributions, functions, kernels,
    # lazy, means, mlls, priors.
    "gpytorch": ("gpytorch", "1.15.2", ["test"], {}, 856),
    # test/nn but conv and models; left out: aggr/test_aggr_utils.py (its MultiheadAttention
    # block compares a scripted module with eager to allclose's 1e-8, which the compiled float32
    # LayerNorm misses for some seeds), and test_model_hub.py and test_model_summary.py, whose
    # tests need huggingface_hub and tabulate (not in the test extra).
    "torch_geometric": ("torch_geometric", "2.8.1", ["test"], {}, 698),
}

# The opt-in run: every vendored test file of each library (its own tests deselected as above).
FULL = {
    "einops": [".", "--deselect", "test_other.py::test_backends_installed"],
    "torchdiffeq": ["api_tests.py", "event_tests.py", "gradient_tests.py", "norm_tests.py",
                    "odeint_tests.py"],
    "torch_optimizer": ["tests"],
    "zuko": ["tests"],
    "pyro": ["tests"],
    "captum": ["tests"],
    "kornia": ["tests", "--device", "cpu", "--dtype", "float32,float64"],
    "gpytorch": ["test"],
    "torch_geometric": ["test"],
}


def _outcomes(report: str) -> dict:
    outcomes = {}
    for case in ElementTree.parse(report).iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = outcome
    return outcomes


def _run(library: str, paths: list, env: dict, report: str, drop_in: bool, timeout):
    """The library's tests `paths` in a subprocess, through the drop-in or under real torch."""
    folder = os.path.join(HERE, "ecosystem", library)
    environment = {**os.environ, **env, "PYTHONPATH": os.pathsep.join(
        [SRC, os.path.join(HERE, "ecosystem"), os.environ.get("PYTHONPATH", "")])}
    environment.pop("PYTEST_ADDOPTS", None)
    if environment.get("NUMBA_ENABLE_CUDASIM") == "1":
        # Set for this process's CUDA tests (tests/cuda_simulator.py): under it autojit
        # reports a GPU, and the libraries' suites would run their CUDA cases (on the
        # simulator, very slowly) where real torch on this machine has none.
        environment.pop("NUMBA_ENABLE_CUDASIM")
    # ecosystem_seed (tests/ecosystem/ecosystem_seed.py) seeds the tests that draw unseeded
    # inputs failing for a few draws under torch as well.
    plugin = (["-p", "autojit.drop_in"] if drop_in else []) + ["-p", "ecosystem_seed"]
    command = [sys.executable, "-m", "pytest", *plugin, "-p", "no:cacheprovider",
               "-c", os.path.join(folder, "pytest.ini"), "--rootdir", folder, "--confcutdir",
               folder, "-q", f"--junitxml={report}", "-o", "junit_family=xunit1", *paths]
    done = subprocess.run(command, cwd=folder, env=environment, capture_output=True,
                          text=True, timeout=timeout)
    assert os.path.exists(report), done.stdout[-3000:] + done.stderr[-3000:]
    return _outcomes(report), done


def _installed(library: str) -> None:
    module, version = SUITES[library][:2]
    installed = pytest.importorskip(module)
    if getattr(installed, "__version__", version) != version:
        pytest.skip(f"{module} {installed.__version__} is installed; the vendored tests are "
                    f"{version}'s")


@pytest.mark.skipif(bool(os.environ.get("AUTOJIT_ECOSYSTEM_FULL")),
                    reason="AUTOJIT_ECOSYSTEM_FULL runs the full vendored suites instead")
@pytest.mark.parametrize("library", SUITES)
def test_library_suite_passes_through_the_drop_in(library, tmp_path):
    _installed(library)
    _, _, paths, env, expected = SUITES[library]
    outcomes, done = _run(library, paths, env, str(tmp_path / "report.xml"), True, 600)
    failed = [name for name, outcome in outcomes.items() if outcome == "failed"]
    assert failed == [], done.stdout[-5000:]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    passed = sum(outcome == "passed" for outcome in outcomes.values())
    assert passed == expected, outcomes  # no test of the subset went missing


@pytest.mark.skipif(not os.environ.get("AUTOJIT_ECOSYSTEM_FULL"),
                    reason="the full vendored suites run with AUTOJIT_ECOSYSTEM_FULL=1")
@pytest.mark.timeout(0)  # a full suite runs for longer than the project's limit on one test
@pytest.mark.parametrize("library", SUITES)
def test_full_vendored_suite_passes_where_torch_passes(library, tmp_path):
    _installed(library)
    env = SUITES[library][3]
    under_torch, _ = _run(library, FULL[library], env, str(tmp_path / "torch.xml"), False, None)
    under_autojit, done = _run(library, FULL[library], env, str(tmp_path / "autojit.xml"), True,
                               None)
    passing = [name for name, outcome in under_torch.items() if outcome == "passed"]
    lost = [name for name in passing if under_autojit.get(name) != "passed"]
    print(f"{library}: {len(passing) - len(lost)} of the {len(passing)} tests passing under "
          f"torch pass through the drop-in")
    assert lost == [], (lost, done.stdout[-5000:])
