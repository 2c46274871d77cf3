"""Training steps of two libraries built on torch, run on autojit through the drop-in, compiled
against eager: a normalizing flow's maximum-likelihood step in zuko, and a neural ODE's step
through torchdiffeq's odeint.

- zuko: `zuko.flows.NSF(features=4, transforms=3, hidden_features=(64, 64))`, loss the negative
  log-likelihood of a batch of 256 points, backward and an Adam update; the whole step
  compiled with `torch.compile` (autojit.compile).
- torchdiffeq: an MLP vector field (2 -> 64 -> 2, tanh) integrated with odeint's rk4 from 0 to
  1 in steps of 0.1 over a batch of 256 starting points, an MSE loss on five time points,
  backward and an SGD update. The whole step does not compile (autojit's tracer refuses
  odeint's writes into the solution tensor it makes, a graph break: docs/drop-in.md), so the
  vector field is what is compiled, its forward and backward, as programs do
  (`odeint(torch.compile(func), ...)`).

Both forms start from the same weights and take turns (interleaved rounds); the table gives
the median time per step and the ratio to eager (wall time, and on one thread also the
calling thread's CPU time, which a machine shared with other work inflates less), and the
first compiled call's time. Run it
through the drop-in, with the libraries installed (`pip install zuko torchdiffeq`):

    python -m autojit.drop_in bench/ecosystem_steps.py [--rounds 5] [--steps 3] [--threads 1]

`--threads` is autojit.set_num_threads (compiled kernels' threads and NumPy's BLAS threads).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402 - autojit, through the drop-in
from timing import interleaved_medians, print_against  # noqa: E402

BATCH = 256


def flow_steps():
    import zuko

    torch.manual_seed(0)
    flow = zuko.flows.NSF(features=4, transforms=3, hidden_features=(64, 64))
    x = torch.randn(BATCH, 4)

    def make(model):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

        def step():
            loss = -model().log_prob(x).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss

        return step

    return make(copy.deepcopy(flow)), torch.compile(make(flow))


def ode_steps():
    from torchdiffeq import odeint

    torch.manual_seed(0)

    class Field(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.Tanh(),
                                           torch.nn.Linear(64, 2))

        def forward(self, t, y):
            return self.net(y)

    field = Field()
    y0, times = torch.randn(BATCH, 2), torch.linspace(0, 1, 5)
    target = torch.randn(5, BATCH, 2)

    def make(model, called):
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)

        def step():
            path = odeint(called, y0, times, method="rk4", options={"step_size": 0.1})
            loss = ((path - target) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss

        return step

    eager_field = copy.deepcopy(field)
    return make(eager_field, eager_field), make(field, torch.compile(field))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    import autojit

    if torch is not autojit:
        raise SystemExit("run it through the drop-in: python -m autojit.drop_in "
                         "bench/ecosystem_steps.py")
    for title, make in (("zuko NSF training step, compiled step", flow_steps),
                        ("torchdiffeq rk4 training step, compiled vector field", ode_steps)):
        eager, compiled = make()
        start = time.perf_counter()
        first = compiled()
        first_seconds = time.perf_counter() - start
        again = eager()
        print(f"{title} (first compiled call {first_seconds:.2f} s; losses "
              f"{first.item():.6f} / {again.item():.6f})")
        cpu: dict = {}
        medians = interleaved_medians({"eager": eager, "compiled": compiled}, args.rounds,
                                      args.steps, cpu=cpu)
        print_against(medians, "eager", cpu if args.threads == 1 else None)


if __name__ == "__main__":
    main()
