"""The `>>>` examples in autojit's docstrings run and print what they show (doctest).

Every module of the package is imported (pkgutil walks it) and its docstring examples run with
ELLIPSIS and NORMALIZE_WHITESPACE, each module from the same random seed and default state.
Modules whose examples need a GPU are skipped, as is a module that needs an optional package
which is not installed. A second test keeps examples on the entry points people meet first,
so that deleting one fails here rather than going unnoticed.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import autojit
from autojit.tensor.state import state

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# CUDA modules: their examples, if any, need a GPU or Numba's simulator.
NEEDS_GPU = ("autojit.cuda", "autojit.codegen.cuda")

MODULES = sorted(info.name for info in pkgutil.walk_packages(autojit.__path__, "autojit."))


def needs_gpu(name: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in NEEDS_GPU)


@pytest.fixture
def clean_state():
    """Examples may change the default dtype or grad mode; put them back for the next module."""
    autojit.manual_seed(0)
    yield
    autojit.set_default_dtype(autojit.float32)
    state.grad_enabled = True
    state.inference = False


def test_the_package_is_walked():
    assert "autojit.tensor.creation" in MODULES and "autojit.autograd.function" in MODULES
    assert "autojit.optim.sgd" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, clean_state):
    if needs_gpu(name):
        pytest.skip(f"{name}: its examples need a GPU")
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name and error.name.split(".")[0] != "autojit":
            pytest.skip(f"{name} needs the optional package {error.name!r}")
        raise
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    for test in doctest.DocTestFinder().find(module, name, globs={}):
        if test.examples:
            runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, "".join(report)


# The entry points a first program uses; each docstring shows how it is called.
ENTRY_POINTS = [
    autojit.tensor, autojit.zeros, autojit.ones, autojit.arange, autojit.randn,
    autojit.Tensor.backward, autojit.Tensor.register_hook, autojit.autograd.grad,
    autojit.autograd.backward, autojit.no_grad, autojit.enable_grad, autojit.set_grad_enabled,
    autojit.inference_mode, autojit.autograd.Function, autojit.save,
    autojit.optim.SGD, autojit.optim.Adam, autojit.utils.data.DataLoader,
]
# The public layers, losses, initializers, optimizers, schedulers and data and file helpers.
ENTRY_POINTS += [
    autojit.nn.Module, autojit.nn.Sequential, autojit.nn.ModuleList, autojit.nn.ModuleDict,
    autojit.nn.ParameterList, autojit.nn.ParameterDict,
    autojit.nn.Module.register_full_backward_hook,
    autojit.nn.Module.register_full_backward_pre_hook,
    autojit.nn.Linear, autojit.nn.Bilinear, autojit.nn.Embedding, autojit.nn.Conv1d,
    autojit.nn.Conv2d, autojit.nn.MaxPool2d, autojit.nn.AvgPool2d, autojit.nn.LayerNorm,
    autojit.nn.BatchNorm1d, autojit.nn.Dropout, autojit.nn.ReLU, autojit.nn.Flatten,
    autojit.nn.CrossEntropyLoss, autojit.nn.NLLLoss, autojit.nn.MSELoss, autojit.nn.L1Loss,
    autojit.nn.SmoothL1Loss, autojit.nn.BCELoss, autojit.nn.BCEWithLogitsLoss,
    *(getattr(autojit.nn.init, name) for name in autojit.nn.init.__all__),
    autojit.optim.AdamW, autojit.optim.RMSprop, autojit.optim.Adagrad,
    autojit.optim.lr_scheduler.StepLR, autojit.optim.lr_scheduler.CosineAnnealingLR,
    autojit.optim.lr_scheduler.LambdaLR, autojit.utils.data.TensorDataset, autojit.load,
]


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda entry: entry.__qualname__)
def test_entry_points_have_examples(entry):
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(entry, entry.__qualname__, globs={})
    assert any(test.examples for test in tests), (
        f"{entry.__qualname__} has no >>> example in its docstring")
