"""The nanoGPT training step at its small sizes: compiled autojit against autojit eager, torch
eager, torch.compile and jax.jit, with 4 and with 8 layers.

The model is bench/transformer_step.py's decoder (pre-norm blocks under a causal mask between
token and position embeddings and a LayerNorm plus Linear head over 65 characters) at
nanoGPT's shakespeare_char sizes, as bench/step_memory.py builds it: d_model 256, 4 heads,
feed-forward 1024, a batch of 8 sequences of 128 tokens (the block size). The step is
nanoGPT's: forward, cross-entropy, backward, `clip_grad_norm_(parameters, 1.0)` and an AdamW
update (lr 1e-3, betas (0.9, 0.99), weight decay 0.1). autojit loads torch's initial
state_dict, so all start from the same weights, and the first losses are checked against
torch eager's. The runners take turns (interleaved rounds, each a few steps, after an untimed
pause that lets the previous runner's spinning threads settle); the table gives the median time
per step and the ratio to torch eager, in wall time and in the calling thread's CPU time.
torch.compile is skipped with the reason when it cannot compile here; jax.jit is not written
for this model and is reported as skipped (jax is not installed on the development machine).
Usage:

    python bench/gpt_step.py [--layers 4 8] [--rounds 7] [--steps 3] [--threads 2]
                             [--runners "torch eager" "autojit compiled" ...]

torch eager always runs: it is the reference of the ratios and of the first losses.

Every framework runs on `--threads` threads (torch.set_num_threads, autojit.set_num_threads),
and the process on as many cores.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time

import numpy as np
import transformer_step as gpt
from timing import interleaved_medians, print_against

# nanoGPT's shakespeare_char model at its small sizes, on bench/transformer_step.py's blocks.
RUNNERS = ("torch eager", "autojit compiled", "autojit eager", "torch.compile")
SIZES = {"D_MODEL": 256, "HEADS": 4, "FEEDFORWARD": 1024, "BATCH": 8, "LENGTH": 128}


def configure(layers: int) -> None:
    """Set bench/transformer_step.py's sizes to the nanoGPT step's with `layers` blocks."""
    for name, value in SIZES.items():
        setattr(gpt, name, value)
    gpt.LAYERS = layers


def make_step(framework, model):
    """nanoGPT's step: loss, backward, gradient norm clipped to 1, AdamW, grads cleared."""
    optimizer = framework.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99),
                                      weight_decay=0.1)
    cross_entropy = framework.nn.functional.cross_entropy
    clip = framework.nn.utils.clip_grad_norm_

    def step(ids, targets):
        loss = cross_entropy(model(ids).reshape(-1, gpt.VOCABULARY), targets.reshape(-1))
        loss.backward()
        clip(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return step


def measure(layers: int, args, torch, autojit) -> None:
    configure(layers)
    torch.manual_seed(0)
    ids = np.random.default_rng(0).integers(0, gpt.VOCABULARY, (gpt.BATCH, gpt.LENGTH + 1))
    torch_model = gpt.build(torch.nn, torch)
    state = {name: value.detach().numpy().copy()
             for name, value in torch_model.state_dict().items()}
    runners, notes, firsts = {}, [], {}

    def autojit_runner(compiled: bool):
        model = gpt.build(autojit.nn, autojit)
        model.load_state_dict({name: autojit.tensor(value) for name, value in state.items()})
        step = make_step(autojit, model)
        step = autojit.compile(step) if compiled else step
        batch = autojit.tensor(ids[:, :-1]), autojit.tensor(ids[:, 1:])
        return lambda: step(*batch).item()

    def torch_runner(compiled: bool):
        model = gpt.build(torch.nn, torch)
        model.load_state_dict(torch_model.state_dict())
        step = make_step(torch, model)
        step = torch.compile(step) if compiled else step
        batch = torch.tensor(ids[:, :-1]), torch.tensor(ids[:, 1:])
        return lambda: step(*batch).item()

    makers = {"torch eager": lambda: torch_runner(False),
              "autojit compiled": lambda: autojit_runner(True),
              "autojit eager": lambda: autojit_runner(False),
              "torch.compile": lambda: torch_runner(True)}
    for name in ("torch eager", *(name for name in args.runners if name != "torch eager")):
        make = makers[name]
        try:
            started = time.perf_counter()
            run = make()
            firsts[name] = [run(), run()]
            if name == "autojit compiled":
                print(f"autojit: first two compiled calls {time.perf_counter() - started:.2f} s")
            runners[name] = run
        except Exception as error:  # noqa: BLE001 - a runner that cannot run is reported
            notes.append(f"{name} skipped: {type(error).__name__}: "
                         f"{str(error).splitlines()[0][:100]}")
    reference = firsts["torch eager"]
    for name, losses in firsts.items():
        if not np.allclose(losses, reference, rtol=2e-3):
            raise AssertionError(f"{name}'s first losses {losses} are not torch's {reference}")
    if importlib.util.find_spec("jax") is None:
        notes.append("jax.jit skipped: jax is not installed")
    else:
        notes.append("jax.jit skipped: no jax version of this step (bench/transformer_jax.py "
                     "has the 2-layer one)")

    cpu: dict = {}
    medians = interleaved_medians(runners, args.rounds, args.steps, cpu, settle=0.3)
    print(f"nanoGPT step: {layers} layers, d_model {gpt.D_MODEL}, {gpt.HEADS} heads, batch "
          f"{gpt.BATCH}, block {gpt.LENGTH}, AdamW, clip_grad_norm_; median of {args.rounds} "
          f"interleaved rounds of {args.steps} steps, {args.threads} thread(s)")
    print_against(medians, "torch eager", cpu)
    for note in notes:
        print("  " + note)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (7)")
    parser.add_argument("--steps", type=int, default=3, help="steps per round and runner (3)")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads and cores for every framework (2)")
    parser.add_argument("--runners", nargs="+", default=list(RUNNERS), choices=RUNNERS,
                        help="the runners to time (all four)")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cores[:args.threads])
    import torch

    import autojit
    torch.set_num_threads(args.threads)
    autojit.set_num_threads(args.threads)
    for layers in args.layers:
        measure(layers, args, torch, autojit)


if __name__ == "__main__":
    main()
