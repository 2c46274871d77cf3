"""autojit imported through a symbolic link (a linked home, workspace or virtualenv): a
compiled Adam step, with a scheduler and an eager step of the same optimizer between epochs
(as the flagship times both), traces once and then runs compiled on every call, as from a
real path.
Before, the read recorder took autojit's own files for the program's under a link and guarded
the optimizer's caches, so that every call traced again."""

import json
import os
import subprocess
import sys

import autojit

PROGRAM = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import autojit
from autojit import nn
assert autojit.__file__.startswith(sys.argv[1]), autojit.__file__
autojit.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
opt = autojit.optim.Adam(model.parameters(), lr=1e-2)
scheduler = autojit.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
loss_function = nn.CrossEntropyLoss()

def train_step(x, y):
    loss = loss_function(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.detach()

step = autojit.compile(train_step)
for epoch in range(4):
    for _ in range(5):
        step(autojit.randn(4, 8), autojit.randint(0, 3, (4,)))
    train_step(autojit.randn(4, 8), autojit.randint(0, 3, (4,)))  # an eager step between
    scheduler.step()
print(json.dumps(step.stats().as_dict()))
"""


def test_a_linked_install_traces_once(tmp_path):
    package_parent = os.path.dirname(os.path.dirname(os.path.realpath(autojit.__file__)))
    link = tmp_path / "linked"
    link.symlink_to(package_parent, target_is_directory=True)
    completed = subprocess.run([sys.executable, "-c", PROGRAM, str(link)], capture_output=True,
                               text=True, timeout=300, cwd=str(tmp_path))
    assert completed.returncode == 0, completed.stderr[-3000:]
    stats = json.loads(completed.stdout.strip().splitlines()[-1])
    # The first call makes Adam's state eagerly; the second traces; the 18 after run it (under
    # a link, the eager steps' new bias-correction cache made each epoch trace again).
    assert stats["traces"] == 1 and stats["recompiles"] == 0, stats
    assert stats["compiled_calls"] == 19 and stats["eager_calls"] == 0, stats
