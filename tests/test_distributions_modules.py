"""torch.distributions' module paths under autojit: every submodule torch has imports as
`autojit.distributions.<name>`, and as `torch.distributions.<name>` under the drop-in, and holds
the public names torch's holds (its __all__), though autojit groups the modules into
subpackages (continuous/, discrete/, multivariate/, derived/). Pickles that name a module by
its path before the grouping load.
"""

from __future__ import annotations

import importlib
import io
import itertools
import json
import os
import pickle
import pkgutil
import subprocess
import sys

import pytest

import autojit
import autojit.distributions as D
from autojit.interop.object_pickle import FullUnpickler

torch = pytest.importorskip("torch")

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
TORCH_MODULES = sorted(info.name for info in pkgutil.iter_modules(torch.distributions.__path__))


def _public(module) -> list[str]:
    return sorted(module.__all__)


def test_the_table_lists_torchs_modules():
    assert sorted(itertools.chain(*D._TORCH_MODULES.values())) == TORCH_MODULES


@pytest.mark.parametrize("name", TORCH_MODULES)
def test_each_torch_module_path_holds_torchs_public_names(name):
    theirs = importlib.import_module(f"torch.distributions.{name}")
    ours = importlib.import_module(f"autojit.distributions.{name}")
    assert _public(ours) == _public(theirs)
    for public in ours.__all__:
        assert hasattr(ours, public), public
    assert getattr(D, name) is ours
    assert sys.modules[f"autojit.distributions.{name}"] is ours
    exec(f"import autojit.distributions.{name} as imported\nassert imported is ours",  # noqa: S102
         {"ours": ours})


def test_the_public_names_are_the_packages():
    assert D.normal.Normal is D.Normal and D.transforms.ExpTransform is D.ExpTransform
    assert D.kl.kl_divergence is D.kl_divergence
    assert D.constraint_registry.biject_to is D.biject_to


def test_pickles_naming_the_old_module_paths_load():
    for module, name in (("autojit.distributions.normal", "Normal"),
                         ("autojit.distributions.wishart", "Wishart"),
                         ("autojit.distributions.transforms", "ExpTransform")):
        assert pickle.loads(f"c{module}\n{name}\n.".encode()) is getattr(D, name)
    # autojit.load(weights_only=False)'s reader maps autojit's own modules that moved too.
    for module, name in (("autojit.distributions.normal", "Normal"),
                         ("autojit.distributions.counted_trials", "CountedTrials"),
                         ("autojit.distributions.folded", "FoldedAtZero"),
                         ("autojit.distributions.transforms_structured", "StackTransform")):
        data = io.BytesIO(f"c{module}\n{name}\n.".encode())
        assert FullUnpickler(data, {}, None).load().__name__ == name
    normal = D.Normal(autojit.tensor([0.5]), autojit.tensor([2.0]))
    again = pickle.loads(pickle.dumps(normal))
    assert type(again) is D.Normal and float(again.scale[0]) == 2.0


# Run with the drop-in installed (this process has imported real torch): each torch module path
# by an import statement, importlib and attribute access, with its public names.
DROP_IN = """
import importlib, json, pickle, sys
import autojit.drop_in
autojit.drop_in.install()
import torch
expected = json.loads(sys.stdin.read())
problems = []
for name, public in expected.items():
    path = "torch.distributions." + name
    exec("import " + path)
    imported = sys.modules[path]
    if importlib.import_module(path) is not imported:
        problems.append(name + ": importlib gives another module")
    if getattr(torch.distributions, name) is not imported:
        problems.append(name + ": attribute access gives another module")
    if imported is not importlib.import_module("autojit.distributions." + name):
        problems.append(name + ": not autojit's module")
    if sorted(imported.__all__) != public:
        problems.append(name + ": public names differ")
    for item in public:
        namespace = {}
        exec("from " + path + " import " + item + " as found", namespace)
        if namespace["found"] is not getattr(imported, item):
            problems.append(path + "." + item)
from torch.distributions.normal import Normal
assert torch.distributions.normal.Normal is Normal is torch.distributions.Normal
assert pickle.loads(b"ctorch.distributions.normal\\nNormal\\n.") is Normal
import torch.distributions.transforms as transforms
assert transforms.ExpTransform is torch.distributions.ExpTransform
try:  # a missing name is explained by torch's path, not the subpackage's
    torch.distributions.normal.nothing
except AttributeError as error:
    assert str(error).startswith("torch.distributions.normal.nothing is missing"), error
print(json.dumps(problems))
"""


def test_each_torch_module_path_through_the_drop_in():
    expected = {name: _public(importlib.import_module(f"torch.distributions.{name}"))
                for name in TORCH_MODULES}
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", DROP_IN], input=json.dumps(expected),
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_a_fresh_interpreter_imports_a_torch_path_first():
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    program = ("from autojit.distributions.lkj_cholesky import LKJCholesky\n"
               "import autojit.distributions.half_normal as h\n"
               "import autojit.distributions as D\n"
               "assert LKJCholesky is D.LKJCholesky and h.HalfNormal is D.HalfNormal\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
