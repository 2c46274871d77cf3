"""One AdamW training step of a small decoder-only transformer: compiled autojit against
autojit eager, torch eager, torch.compile and jax.jit.

The model is 2 pre-norm blocks (nn.TransformerEncoderLayer, d_model 128, 4 heads, feed-forward
512, no dropout) under a causal mask, between token and position embeddings and a LayerNorm
plus Linear head over 65 characters; the step is forward, cross-entropy, backward and an AdamW
update, on a batch of 16 sequences of 64 tokens. autojit loads torch's initial state_dict, so
both start from the same weights. The frameworks take turns (interleaved rounds, each a few
steps) and the table gives the median time per step and the ratio to torch eager (wall time,
then the calling thread's CPU time). torch.compile
is skipped with the reason when it cannot compile here (it needs a C compiler); jax.jit runs
the same model written in jax (bench/transformer_jax.py) where jax is installed (the bench
extra). Usage:

    python bench/transformer_step.py [--rounds 7] [--steps 5] [--threads 1]

Every framework runs on `--threads` threads (torch.set_num_threads and
autojit.set_num_threads), and the process on as many cores (jax's XLA takes every core it
may use).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time

import numpy as np
from timing import interleaved_medians, print_against

VOCABULARY, D_MODEL, HEADS, LAYERS, FEEDFORWARD, BATCH, LENGTH = 65, 128, 4, 2, 512, 16, 64


def build(nn, framework):
    """The same module tree in autojit and in torch (`nn`, `framework` from either)."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(VOCABULARY, D_MODEL)
            self.positions = nn.Embedding(LENGTH, D_MODEL)
            block = nn.TransformerEncoderLayer(D_MODEL, HEADS, FEEDFORWARD, dropout=0.0,
                                               batch_first=True, norm_first=True)
            self.blocks = nn.TransformerEncoder(block, LAYERS, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCABULARY)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(LENGTH))
            self.register_buffer("position_ids", framework.arange(LENGTH))

        def forward(self, ids):
            x = self.tokens(ids) + self.positions(self.position_ids)
            x = self.blocks(x, mask=self.mask, is_causal=True)
            return self.head(self.norm(x))

    return Model()


def make_step(framework, model):
    optimizer = framework.optim.AdamW(model.parameters(), lr=1e-3)
    cross_entropy = framework.nn.functional.cross_entropy

    def step(ids, targets):
        loss = cross_entropy(model(ids).reshape(-1, VOCABULARY), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    return step


def jax_runner(state: dict, ids, torch_runner):
    """The jax.jit step, checked first: its first two losses are torch's."""
    import jax.numpy as jnp
    from transformer_jax import make_jax_step

    step = make_jax_step(state, HEADS, LAYERS)
    batch = jnp.asarray(ids[:, :-1]), jnp.asarray(ids[:, 1:])
    reference = torch_runner(False)
    for _ in range(2):
        expected, got = reference(), step(*batch)
        if not np.isclose(got, expected, rtol=1e-3):
            raise AssertionError(f"jax.jit's loss {got} is not torch's {expected}")
    return lambda: step(*batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (7)")
    parser.add_argument("--steps", type=int, default=5, help="steps per round and runner (5)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads and cores for every framework (1)")
    args = parser.parse_args()

    # XLA's CPU client runs on every core whatever its flags say: the process is held to
    # `--threads` cores, so that each framework has the same cores.
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cores[:args.threads])
    import torch

    import autojit
    # The same thread count on both sides: autojit's compiled code would otherwise run on
    # every usable core (its native workers) while torch ran on one.
    torch.set_num_threads(args.threads)
    autojit.set_num_threads(args.threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, VOCABULARY, (BATCH, LENGTH + 1))
    torch_model = build(torch.nn, torch)
    state = {name: value.detach().numpy().copy()
             for name, value in torch_model.state_dict().items()}
    runners, notes = {}, []

    def autojit_runner(compiled: bool):
        model = build(autojit.nn, autojit)
        model.load_state_dict({name: autojit.tensor(value) for name, value in state.items()})
        step = make_step(autojit, model)
        step = autojit.compile(step) if compiled else step
        batch = autojit.tensor(ids[:, :-1]), autojit.tensor(ids[:, 1:])
        return lambda: step(*batch).item()

    def torch_runner(compiled: bool):
        model = build(torch.nn, torch)
        model.load_state_dict(torch_model.state_dict())
        step = make_step(torch, model)
        step = torch.compile(step) if compiled else step
        batch = torch.tensor(ids[:, :-1]), torch.tensor(ids[:, 1:])
        return lambda: step(*batch).item()

    started = time.perf_counter()
    runners["autojit compiled"] = autojit_runner(True)
    runners["autojit compiled"]()
    print(f"autojit: first compiled call {time.perf_counter() - started:.2f} s")
    runners["autojit eager"] = autojit_runner(False)
    runners["torch eager"] = torch_runner(False)
    try:
        candidate = torch_runner(True)
        candidate()
        runners["torch.compile"] = candidate
    except Exception as error:  # noqa: BLE001 - any failure to compile is reported, not raised
        notes.append(f"torch.compile skipped: {type(error).__name__}: "
                     f"{str(error).splitlines()[0][:100]}")
    if importlib.util.find_spec("jax") is None:
        notes.append("jax.jit skipped: jax is not installed")
    else:
        runners["jax.jit"] = jax_runner(state, ids, torch_runner)

    cpu: dict = {}
    medians = interleaved_medians(runners, args.rounds, args.steps, cpu, settle=0.3)
    print(f"transformer step: {LAYERS} layers, d_model {D_MODEL}, {HEADS} heads, batch {BATCH}, "
          f"sequence {LENGTH}, AdamW; median of {args.rounds} interleaved rounds of "
          f"{args.steps} steps, {args.threads} thread(s)")
    print_against(medians, "torch eager", cpu)
    for note in notes:
        print("  " + note)


if __name__ == "__main__":
    main()
