"""One Adam training step of a 2-layer LSTM: compiled autojit against autojit eager, torch eager
and torch.compile.

The model is nn.LSTM(32, 256, num_layers=2, batch_first=True) with a Linear head on the last
step's output; the step is forward, MSE loss, backward and an Adam update, on a batch of 32
sequences of 64 steps. autojit loads torch's initial state_dict, so both start from the same
weights. The frameworks take turns (interleaved rounds, each a few steps) and the table gives
the median time per step and the ratio to torch eager (wall time, then the calling thread's
CPU time), after the first compiled call's time
(trace, and compile on the second call: the first creates Adam's state and is interpreted
once). torch.compile is skipped with the reason when it cannot compile here. Usage:

    python bench/lstm_step.py [--rounds 5] [--steps 3] [--threads 1]

Both sides run on `--threads` threads (torch.set_num_threads and autojit.set_num_threads).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from timing import interleaved_medians, print_against

FEATURES, HIDDEN, LAYERS, BATCH, LENGTH = 32, 256, 2, 32, 64


def build(nn):
    """The same module tree in autojit and in torch (`nn` from either)."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(FEATURES, HIDDEN, num_layers=LAYERS, batch_first=True)
            self.head = nn.Linear(HIDDEN, 1)

        def forward(self, x):
            output, _ = self.lstm(x)
            return self.head(output[:, -1])

    return Model()


def make_step(framework, model):
    optimizer = framework.optim.Adam(model.parameters(), lr=1e-3)
    mse = framework.nn.functional.mse_loss

    def step(x, y):
        loss = mse(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (5)")
    parser.add_argument("--steps", type=int, default=3, help="steps per round and runner (3)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for both autojit and torch (1)")
    args = parser.parse_args()

    import torch

    import autojit
    # The same thread count on both sides: autojit's compiled code would otherwise run on
    # every usable core (its native workers) while torch ran on one.
    torch.set_num_threads(args.threads)
    autojit.set_num_threads(args.threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    inputs = rng.standard_normal((BATCH, LENGTH, FEATURES)).astype(np.float32)
    targets = rng.standard_normal((BATCH, 1)).astype(np.float32)
    torch_model = build(torch.nn)
    state = {name: value.detach().numpy().copy()
             for name, value in torch_model.state_dict().items()}
    runners, notes = {}, []

    def autojit_runner(compiled: bool):
        model = build(autojit.nn)
        model.load_state_dict({name: autojit.tensor(value) for name, value in state.items()})
        step = make_step(autojit, model)
        step = autojit.compile(step) if compiled else step
        batch = autojit.tensor(inputs), autojit.tensor(targets)
        return lambda: step(*batch).item()

    def torch_runner(compiled: bool):
        model = build(torch.nn)
        model.load_state_dict(torch_model.state_dict())
        step = make_step(torch, model)
        step = torch.compile(step) if compiled else step
        batch = torch.tensor(inputs), torch.tensor(targets)
        return lambda: step(*batch).item()

    runners["autojit compiled"] = autojit_runner(True)
    for call in ("first", "second"):
        started = time.perf_counter()
        runners["autojit compiled"]()
        print(f"autojit: {call} compiled call {time.perf_counter() - started:.2f} s")
    runners["autojit eager"] = autojit_runner(False)
    runners["torch eager"] = torch_runner(False)
    try:
        candidate = torch_runner(True)
        candidate()
        runners["torch.compile"] = candidate
    except Exception as error:  # noqa: BLE001 - any failure to compile is reported, not raised
        notes.append(f"torch.compile skipped: {type(error).__name__}: "
                     f"{str(error).splitlines()[0][:100]}")

    cpu: dict = {}
    medians = interleaved_medians(runners, args.rounds, args.steps, cpu, settle=0.3)
    print(f"LSTM step: {LAYERS} layers, hidden {HIDDEN}, input {FEATURES}, batch {BATCH}, "
          f"sequence {LENGTH}, Adam; median of {args.rounds} interleaved rounds of "
          f"{args.steps} steps, {args.threads} thread(s)")
    print_against(medians, "torch eager", cpu)
    for note in notes:
        print("  " + note)


if __name__ == "__main__":
    main()
