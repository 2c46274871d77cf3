"""torch's functions kept as class attributes under the drop-in (drop_in/unbound.py): a
builtin of torch's does not bind the instance it is read through, a function torch writes in
Python does. The tables of which is which are compared with torch's own functions here, and a
program using both kinds runs under torch and through the drop-in (a subprocess: this process
has imported real torch) with the same printed results.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import types

import pytest

from autojit.drop_in import unbound

torch = pytest.importorskip("torch")

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def test_tables_match_torch():
    import torch.nn.functional as F

    python = {name for name in dir(torch) if not name.startswith("_")
              and isinstance(getattr(torch, name), types.FunctionType)}
    assert unbound.TORCH_PYTHON == python
    builtins = {name for name in dir(F) if not name.startswith("_")
                and isinstance(getattr(F, name), types.BuiltinFunctionType)}
    assert unbound.FUNCTIONAL_BUILTINS == builtins
    for namespace in (torch.linalg, torch.fft, torch.special):
        assert not [name for name in dir(namespace) if not name.startswith("_")
                    and isinstance(getattr(namespace, name), types.FunctionType)]


PROGRAM = textwrap.dedent("""
    import torch, torch.nn.functional as F

    class Loss(torch.nn.Module):
        conv = torch.conv2d          # builtins in torch: not bound
        act = F.gelu
        norm = torch.linalg.vector_norm
        log = torch.special.xlogy
        relu = F.relu                # Python in torch: bound
        split = torch.split

        def forward(self, x, w):
            y = self.act(self.conv(x, w, padding=1))
            return self.norm(y) + self.log(y.abs(), 2.0).sum()

    class Plain:
        sqrt = torch.sqrt

    torch.manual_seed(0)
    x, w = torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3)
    loss = Loss()
    print(round(float(loss(x, w)), 4))
    print(Loss.conv is torch.conv2d, loss.conv is torch.conv2d, Plain().sqrt(torch.tensor(4.0)))
    for call in (lambda: loss.relu(x), lambda: loss.split(x, 2)):
        try:
            call()
            print("no error")
        except Exception:  # torch raises RuntimeError, then RecursionError (Module.split)
            print("error")
""")


# Made first, a Tensor subclass with a handler switches `__torch_function__` on, after which
# the namespaces hold dispatching wrappers of the functions.
SUBCLASS_FIRST = textwrap.dedent("""
    import torch

    class Logged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    torch.zeros(1).as_subclass(Logged)
""")


@pytest.mark.parametrize("prefix", ["", SUBCLASS_FIRST], ids=["plain", "torch_function_on"])
def test_class_attributes_bind_as_under_torch(tmp_path, prefix):
    path = tmp_path / "program.py"
    path.write_text(prefix + PROGRAM)
    expected = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                              timeout=120)
    assert expected.returncode == 0, expected.stderr
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    found = subprocess.run([sys.executable, "-m", "autojit.drop_in", str(path)],
                           capture_output=True, text=True, env=env, timeout=120)
    assert found.returncode == 0, found.stderr
    assert found.stdout == expected.stdout
    assert "no error" not in found.stdout  # the bound ones fail under both
