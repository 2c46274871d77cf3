"""The stand-in for torch.testing._internal (tests/torch_suite/standin/) that runs torch's own
autograd tests under both frameworks: its assertEqual keeps torch's default tolerances and
comparisons, parametrize and instantiate_device_type_tests name and bind the tests as torch's
do, and the plugin enters it under torch's module names."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest

import pytest

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.join(HERE, "torch_suite", "standin")
sys.path.insert(0, STANDIN)

from torch_testing_internal import common_device_type, common_utils  # noqa: E402


class _Case(common_utils.TestCase):
    __test__ = False  # an instance for the assertions, not a test

    def runTest(self):  # noqa: N802 - unittest's name
        pass


CASE = _Case()


@pytest.mark.parametrize("pair, equal", [
    ((torch.tensor([1.0]), torch.tensor([1.0 + 1e-6])), True),  # float32: atol 1e-5
    ((torch.tensor([1.0]), torch.tensor([1.001])), False),
    ((torch.tensor([1.0], dtype=torch.float64), torch.tensor([1.0 + 1e-6],
                                                             dtype=torch.float64)), False),
    ((torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64)), False),  # exact dtype
    ((torch.tensor(2.0), 2), True), ((torch.tensor([1, 2]), [1, 2]), True),
    ((torch.tensor([float("nan")]), torch.tensor([float("nan")])), True),
    (((1, torch.ones(2)), (1, torch.ones(2))), True), (("a", "b"), False),
    ((torch.Size([2, 3]), (2, 3)), True), ((None, None), True), ((None, 0), False),
])
def test_assert_equal_follows_torchs_rules(pair, equal):
    if equal:
        CASE.assertEqual(*pair)
    else:
        with pytest.raises(AssertionError):
            CASE.assertEqual(*pair)


def test_parametrize_and_device_tests_are_named_as_torchs():
    class Plain(common_utils.TestCase):
        @common_utils.parametrize("x", [1, common_utils.subtest(2, name="two")])
        def test_a(self, x):
            pass

    class Generic(common_utils.TestCase):
        @common_device_type.dtypes(torch.float32, torch.float64)
        def test_b(self, device, dtype):
            assert device == "cpu" and dtype in (torch.float32, torch.float64)

        @common_utils.parametrize("y", [3])
        def test_c(self, device, y):
            assert device == "cpu" and y == 3

    common_utils.instantiate_parametrized_tests(Plain)
    assert {"test_a_x_1", "test_a_two"} <= set(vars(Plain))
    scope = {"Generic": Generic}
    common_device_type.instantiate_device_type_tests(Generic, scope, only_for="privateuse1")
    made = scope["GenericCPU"]
    assert {"test_b_cpu_float32", "test_b_cpu_float64", "test_c_y_3_cpu"} <= set(vars(made))
    result = unittest.TextTestRunner(stream=open(os.devnull, "w")).run(  # noqa: SIM115
        unittest.defaultTestLoader.loadTestsFromTestCase(made))
    assert result.wasSuccessful() and result.testsRun == 3


def test_the_plugin_enters_the_stand_in_under_torchs_names():
    code = ("import torch, torch.testing._internal.common_utils as u, torch_npu; "
            "print(u.__file__.endswith('common_utils.py'), 'standin' in u.__file__, "
            "torch.npu.is_available())")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([STANDIN, os.environ.get("PYTHONPATH",
                                                                                  "")]))
    out = subprocess.run([sys.executable, "-c", "import torch_suite_plugin; " + code],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["True", "True", "False"], out.stderr[-2000:]
