"""Under the drop-in a torch program prints what it prints under torch: sizes, dtypes,
layouts, memory formats and a tensor's dtype in its repr name torch (a subprocess: the
drop-in cannot share a process with torch)."""

import subprocess
import sys

PROGRAM = """
import autojit.drop_in
autojit.drop_in.install()
import torch
print(torch.ones(2, 3).shape, torch.float64, torch.strided, torch.channels_last)
print(torch.ones(2, dtype=torch.float64))
"""


def test_reprs_name_torch_under_the_drop_in():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "torch.Size([2, 3]) torch.float64 torch.strided torch.channels_last",
        "tensor([1., 1.], dtype=torch.float64)"]


def test_reprs_name_autojit_without_it():
    import autojit

    assert repr(autojit.ones(2, 3).shape) == "autojit.Size([2, 3])"
    assert repr(autojit.float64) == "autojit.float64"
