"""Training steps of two libraries built on torch, run on autojit through the drop-in, compiled
against eager: a normalizing flow's maximum-likelihood step in zuko, and a neural ODE's step
through torchdiffeq's odeint.

- zuko: `zuko.flows.NSF(features=4, transforms=3, hidden_features=(64, 64))`, loss the negative
  log-likelihood of a batch of 256 points, backward and an Adam update; the whole step
  compiled with `torch.compile` (autojit.compile).
- torchdiffeq: an MLP vector field (2 -> 64 -> 2, tanh) integrated with odeint's rk4 from 0 to
  1 in steps of 0.1 over a batch of 256 starting points, an MSE loss on five time points,
  backward and an SGD update; the whole step compiled (`torch.compile(step, fullgraph=True)`,
  one graph: docs/drop-in.md), and beside it the form that compiles only the vector field, its
  forward and backward (`odeint(torch.compile(func), ...)`).

The forms start from the same weights and take turns (interleaved rounds); the table gives
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

    return {"eager": make(copy.deepcopy(flow)), "compiled": torch.compile(make(flow))}


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

    eager_field, field_only = copy.deepcopy(field), copy.deepcopy(field)
    return {"eager": make(eager_field, eager_field),
            "compiled": torch.compile(make(field, field), fullgraph=True),
            "compiled field": make(field_only, torch.compile(field_only))}


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
                        ("torchdiffeq rk4 training step, compiled step", ode_steps)):
        forms = make()
        start = time.perf_counter()
        first = forms["compiled"]()
        first_seconds = time.perf_counter() - start
        losses = " / ".join(f"{form().item():.6f}" for name, form in forms.items()
                            if name != "compiled")
        print(f"{title} (first compiled call {first_seconds:.2f} s; losses "
              f"{first.item():.6f} / {losses})")
        cpu: dict = {}
        medians = interleaved_medians(forms, args.rounds, args.steps, cpu=cpu)
        print_against(medians, "eager", cpu if args.threads == 1 else None)


if __name__ == "__main__":
    main()
