"""The drop-in (autojit.drop_in): `import torch` resolving to autojit in a process that runs
`python -m autojit.drop_in`, calls install(), or runs pytest with `-p autojit.drop_in`.

Each check runs in a subprocess (this process has imported real torch, the reference of the
other tests): torch's module names are autojit's modules themselves, each loaded once; the
private modules libraries import resolve; a name autojit lacks says so; install() refuses
beside real torch; spawned processes run the drop-in too. torch.utils._pytree's functions are
compared with torch's here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from autojit.utils import _pytree

torch = pytest.importorskip("torch")

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _run(arguments, cwd=None, timeout=120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, *arguments], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


def _script(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


CHECKS = """
import json, sys
import torch, torch.nn as nn, torch.optim, torch.optim.lr_scheduler as schedulers
import torch.nn.functional as F, torch.utils.data, torch.distributions.constraints
import torch.serialization, torch.types, torch._C, torch.overrides, torch.utils._pytree
import torch._vmap_internals, torch.onnx, torch.fft, torch.multiprocessing, torch.linalg
import torch.sparse, torch._jit_internal
import functorch
from functorch import jacrev, vmap
from torch.nn.modules.dropout import Dropout
import autojit

found = {}
torch_names = [name for name in sys.modules if name.split(".")[0] in ("torch", "functorch")]
found["aliases"] = all(sys.modules[name] is sys.modules[sys.modules[name].__spec__.name]
                       for name in torch_names)
found["copies"] = sorted(name for name in sys.modules
                         if name.startswith("torch") and name.split(".")[0] != "torch")
found["torch is autojit"] = torch is autojit and torch.optim is autojit.optim
found["name"] = torch.__name__
found["spec"] = torch.__spec__.name
optimizer = torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
found["scheduler"] = type(schedulers.StepLR(optimizer, 2)).__name__
found["isinstance"] = isinstance(torch.ones(1), torch.Tensor) and isinstance(
    nn.Parameter(torch.ones(1)), torch.Tensor)
found["version"] = [str(torch.__version__), torch.__version__ >= "2.0",
                    torch.__version__ >= (1, 12), torch.__version__ < "3",
                    torch.__version__ == "2.13.0", torch.version.__version__ == torch.__version__]
found["compile"] = torch.compile is autojit.compile
found["Dropout"] = torch.nn.modules.dropout.Dropout is Dropout is autojit.nn.Dropout
found["tracing"] = torch._C._get_tracing_state()
found["jacrev"] = jacrev(lambda x: (x ** 2).sum())(torch.ones(2)).tolist()
try:
    torch.not_a_torch_name
except AttributeError as error:
    found["attribute"] = str(error)
try:
    import torch.not_a_module
except ImportError as error:
    found["module"] = [type(error).__name__, str(error), error.name]
try:
    torch.onnx.export(None, None, "model.onnx")
except NotImplementedError as error:
    found["onnx"] = str(error)
found["fft"] = torch.fft.rfft(torch.ones(4)).abs().tolist()
found["complex"] = torch.ones(1).dtype == torch.complex64
found["aten"] = [torch.ops.aten.slice.Tensor(torch.arange(6).reshape(2, 3), 1, 1).tolist(),
                 str(torch.ops.aten.native_layer_norm.default)]
found["private"] = [torch.autograd.torch is torch, torch._VF.einsum("i->", [torch.ones(3)]).item(),
                    [t.tolist() for t in torch._VF.unique_dim(torch.tensor([[1], [1]]), 0)]]
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    found["volatile"] = [torch.ones(1).volatile, str(caught[0].message)]
print(json.dumps(found))
"""


def test_torch_names_are_autojits_modules(tmp_path):
    path = _script(tmp_path, "checks.py", CHECKS)
    done = _run(["-m", "autojit.drop_in", path])
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["aliases"] and found["torch is autojit"]
    assert found["copies"] == []
    assert found["name"] == "torch" and found["spec"] == "autojit"
    assert found["scheduler"] == "StepLR"  # one Optimizer class: the scheduler takes it
    assert found["isinstance"] and found["compile"] and found["Dropout"]
    assert found["version"] == ["2.13.0+autojit", True, True, True, True, True]
    assert found["tracing"] is None and found["jacrev"] == [2.0, 2.0]
    assert found["attribute"].startswith("torch.not_a_torch_name is missing from autojit")
    assert found["module"][0] == "ModuleNotFoundError" and found["module"][2] == \
        "torch.not_a_module" and "missing from autojit" in found["module"][1]
    assert "no ONNX exporter" in found["onnx"] and found["fft"] == [4.0, 0.0, 0.0]
    assert found["complex"] is False
    assert found["aten"] == [[[1, 2], [4, 5]], "aten.native_layer_norm.default"]
    assert found["private"] == [True, 3.0, [[[1]], [0, 0], [2]]]
    assert found["volatile"] == [False, "volatile was removed (Variable.volatile is always False)"]


def test_script_arguments_and_module_form(tmp_path):
    path = _script(tmp_path, "train.py", """
        import sys, torch
        print(sys.argv, __name__, torch.ones(2).sum().item())
    """)
    done = _run(["-m", "autojit.drop_in", path, "--epochs", "3"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == f"[{path!r}, '--epochs', '3'] __main__ 2.0"
    _script(tmp_path, "program.py", "import sys, torch\nprint(sys.argv, torch.__name__)\n")
    done = _run(["-m", "autojit.drop_in", "-m", "program", "x"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("'x'] torch")
    assert _run(["-m", "autojit.drop_in"]).returncode == 2
    assert _run(["-m", "autojit.drop_in", "-c"]).returncode == 2


def test_command_and_standard_input_forms():
    program = "import sys, torch\nprint(sys.argv, __name__, torch.ones(2).sum().item())\n"
    done = _run(["-m", "autojit.drop_in", "-c", program, "a", "--b"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['-c', 'a', '--b'] __main__ 2.0"
    # A compiled step that prints a loss from a program with no source file: where the text
    # goes is read from its bytecode (ir/bytecode_uses.py), so it compiles whole.
    program += textwrap.dedent("""
        w = torch.ones(3, requires_grad=True)

        @torch.compile(fullgraph=True)
        def step(x):
            loss = (w * x).sum()
            print(f"loss {loss.item():.1f}")
            return loss

        for value in (1.0, 2.0):
            step(torch.full((3,), value))
        print(step.stats().compiled_calls)
    """)
    done = subprocess.run([sys.executable, "-m", "autojit.drop_in", "-", "x"], input=program,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": SRC + os.pathsep +
                               os.environ.get("PYTHONPATH", "")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:4] == ["['-', 'x'] __main__ 2.0", "loss 3.0", "loss 6.0",
                                           "2"]


def test_install_refuses_beside_real_torch():
    done = _run(["-c", "import torch, autojit.drop_in as d; d.install()"])
    assert done.returncode != 0
    assert "torch is already imported in this process (torch" in done.stderr
    done = _run(["-c", "import autojit.drop_in as d; d.install(); d.install(); "
                       "import torch; print(torch.__name__, d.is_installed())"])
    assert done.stdout.strip() == "torch True", done.stderr


def test_spawned_processes_run_the_drop_in(tmp_path):
    path = _script(tmp_path, "spawned.py", """
        import torch, torch.multiprocessing as mp
        from torch.multiprocessing.spawn import ProcessRaisedException, spawn

        def work(index, queue):
            queue.put((index, torch.__name__, type(torch.ones(1)).__module__))

        def fail(index):
            raise ValueError("no")

        if __name__ == "__main__":
            queue = mp.get_context("spawn").SimpleQueue()
            mp.spawn(work, args=(queue,), nprocs=2)
            print(sorted([queue.get(), queue.get()]))
            try:
                spawn(fail, nprocs=1)
            except ProcessRaisedException as error:
                print(spawn is mp.spawn, "ValueError: no" in str(error))
    """)
    done = _run(["-m", "autojit.drop_in", path])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == [
        "[(0, 'torch', 'autojit.tensor.tensor'), (1, 'torch', 'autojit.tensor.tensor')]",
        "True True"]


def test_pytest_plugin(tmp_path):
    _script(tmp_path, "conftest.py", "import torch\nFOUND = torch.__name__\n")
    _script(tmp_path, "test_suite.py", """
        import torch
        from conftest import FOUND

        def test_it():
            assert FOUND == "torch" and torch.ones(2).sum().item() == 2.0
            assert type(torch.ones(1)).__module__ == "autojit.tensor.tensor"
    """)
    done = _run(["-m", "pytest", "-p", "autojit.drop_in", "-q", "-p", "no:cacheprovider",
                 "-n", "0", str(tmp_path)], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


# ---- torch.utils._pytree, against torch's ----------------------------------------------------

TREES = [
    [1, None, {"b": 2, "a": (3, 4)}],
    {"x": [1, 2], "y": {"z": 3}},
    (1, [2, (3,)], {}),
]


@pytest.mark.parametrize("tree", TREES)
def test_pytree_as_torch(tree):
    from collections import OrderedDict, deque, namedtuple

    pair = namedtuple("pair", "a b")
    tree = [tree, pair(1, [2]), OrderedDict(q=1), deque([5, 6])]
    theirs = torch.utils._pytree
    assert _pytree.tree_leaves(tree) == theirs.tree_leaves(tree)
    leaves, spec = _pytree.tree_flatten(tree)
    assert _pytree.tree_unflatten([leaf for leaf in leaves], spec) == tree
    doubled = _pytree.tree_map(lambda v: v if v is None else v * 2, tree)
    assert doubled == theirs.tree_map(lambda v: v if v is None else v * 2, tree)
    assert _pytree.tree_map(lambda a, b: (a, b), [1, 2], [3, 4]) == [(1, 3), (2, 4)]
    assert _pytree.tree_map_only(int, str, [1, 2.0]) == theirs.tree_map_only(int, str, [1, 2.0])
    assert spec.num_leaves == theirs.tree_structure(tree).num_leaves


def test_pytree_registered_node():
    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

    _pytree.register_pytree_node(Point, lambda p: ([p.x, p.y], None),
                                 lambda values, context: Point(*values))
    try:
        leaves, spec = _pytree.tree_flatten([Point(1, (2, 3))])
        assert leaves == [1, 2, 3]
        rebuilt = _pytree.tree_unflatten([4, 5, 6], spec)[0]
        assert (rebuilt.x, rebuilt.y) == (4, (5, 6))
        with pytest.raises(ValueError, match="already registered"):
            _pytree.register_pytree_node(Point, None, None)
    finally:
        del _pytree.SUPPORTED_NODES[Point]


TENSOR_LIKE = """
import json, operator
import torch


class Operator:
    # a library's tensor-like that is not a Tensor (linear_operator's LinearOperator): its
    # table of handlers is keyed by the functions and methods torch hands __torch_function__
    HANDLED = {torch.clone: "clone", torch.Tensor.matmul: "rmatmul", torch.Tensor.add: "radd",
               torch.Tensor.eq: "req", torch.Tensor.div: "rdiv", torch.Tensor.add_: "iadd"}

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return cls.HANDLED.get(func, "unhandled " + getattr(func, "__name__", "?"))


x, op = torch.ones(2), Operator()
found = [torch.clone(op), x @ op, x + op, x == op, x / op]
y = torch.ones(2)
y += op
found.append(y)
print(json.dumps(found))
"""


def test_a_tensor_like_defined_under_the_drop_in_is_dispatched_to(tmp_path):
    """A non-Tensor type defining __torch_function__ gets torch's calls from its first use, with
    torch's func objects for the operators (Tensor.matmul for `@`, Tensor.add_ for `+=`)."""
    done = _run(["-m", "autojit.drop_in", _script(tmp_path, "like.py", TENSOR_LIKE)])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == \
        ["clone", "rmatmul", "radd", "req", "rdiv", "iadd"]


MODES_AND_OWN_CLASSES = """
import json
import torch
from torch.overrides import TorchFunctionMode
from autojit.tensor import torch_function
import torch._dynamo._trace_wrapped_higher_order_op  # autojit's own mode class (transformers)


class Logged(TorchFunctionMode):  # a mode switches the protocol on when entered, not here
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


before = torch_function.ACTIVE
with Logged():
    inside = torch_function.ACTIVE
print(json.dumps([before, inside]))
"""


def test_defining_a_mode_or_importing_autojits_own_leaves_the_protocol_off(tmp_path):
    """Eager calls pay nothing for the protocol until something needs it: a TorchFunctionMode
    subclass (transformers imports one of torch._dynamo's) switches it on when it is entered."""
    done = _run(["-m", "autojit.drop_in", _script(tmp_path, "modes.py", MODES_AND_OWN_CLASSES)])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [False, True]


SUBMODULE_AND_FUNCTION = """
import json
import torch
from torch.autograd.gradcheck import GradcheckError  # the submodule, imported by name
x = torch.ones(2, dtype=torch.float64, requires_grad=True)
print(json.dumps([type(torch.autograd.gradcheck).__name__,
                  torch.autograd.gradcheck(lambda t: t * 2, (x,)),
                  GradcheckError.__name__, type(torch.autograd.forward_ad).__name__]))
"""


def test_importing_a_submodule_leaves_the_function_of_its_name(tmp_path):
    """torch.autograd.gradcheck stays the function after `from torch.autograd.gradcheck import
    GradcheckError`, as in torch (torch's tests import it so)."""
    done = _run(["-m", "autojit.drop_in", _script(tmp_path, "sub.py", SUBMODULE_AND_FUNCTION)])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == \
        ["function", True, "GradcheckError", "module"]
