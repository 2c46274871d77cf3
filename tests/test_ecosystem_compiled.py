"""Libraries' training steps compiled through the drop-in equal their eager steps: a zuko flow's
maximum-likelihood step and a torchdiffeq rk4 step (odeint, loss, backward, SGD), each
compiled whole (a CompileWarning fails the test; the ODE step with fullgraph=True, in one
segment). Both run in a subprocess under `python -m autojit.drop_in` (this process has real
torch); bench/ecosystem_steps.py times them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("zuko")
pytest.importorskip("torchdiffeq")

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

PROGRAM = """
import copy, json, warnings
import torch, zuko
from torchdiffeq import odeint

warnings.simplefilter("error", torch.CompileWarning)  # a graph break fails the test
found = {}

torch.manual_seed(0)
flow = zuko.flows.NSF(features=3, transforms=2, hidden_features=(16, 16))
x = torch.randn(64, 3)

def flow_step(model):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    def step():
        loss = -model().log_prob(x).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss
    return step

eager, compiled = flow_step(copy.deepcopy(flow)), torch.compile(flow_step(flow))
found["flow losses"] = [[eager().item(), compiled().item()] for _ in range(4)]

torch.manual_seed(0)
field = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
y0, times, target = torch.randn(32, 2), torch.linspace(0, 1, 4), torch.randn(4, 32, 2)

def ode_step(model, called):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    def step():
        path = odeint(lambda t, y: called(y), y0, times, method="rk4",
                      options={"step_size": 0.25})
        loss = ((path - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss
    return step

eager_field = copy.deepcopy(field)
eager, compiled = ode_step(eager_field, eager_field), torch.compile(ode_step(field, field),
                                                                    fullgraph=True)
found["ode losses"] = [[eager().item(), compiled().item()] for _ in range(4)]
found["ode weights"] = max((a - b).abs().max().item()
                           for a, b in zip(field.parameters(), eager_field.parameters()))
found["ode stats"] = compiled.stats().as_dict()
print(json.dumps(found))
"""


def test_compiled_library_steps_equal_eager(tmp_path):
    path = tmp_path / "steps.py"
    path.write_text(textwrap.dedent(PROGRAM))
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "autojit.drop_in", str(path)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for eager_loss, compiled_loss in found["flow losses"] + found["ode losses"]:
        assert compiled_loss == pytest.approx(eager_loss, rel=1e-5)
    assert found["flow losses"][-1][0] < found["flow losses"][0][0]  # it trains
    assert found["ode weights"] < 1e-5
    # The whole rk4 step in one graph: no eager call, no segment (the time grid's decisions
    # are guarded by the time points' values: compiler/constant_checks.py).
    stats = found["ode stats"]
    # (the first call makes the optimizer's state: run eagerly, untraced, a state call)
    assert (stats["eager_calls"], stats["state_calls"], stats["compiled_calls"]) == (0, 1, 3)
    assert stats["split_breaks"] == 0 and stats["segments"] == 1
