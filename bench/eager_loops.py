"""Eager loops of small ops, autojit against torch, side by side in one process: the programs
whose time goes to dispatching many small ops rather than to arithmetic.

- seq2seq: a GRU encoder-decoder (nn.GRUCell, hidden 64, embeddings 32, vocabulary 40) over
  a batch of 16 sequences of 12 tokens, decoded for 12 steps with teacher forcing, a
  cross-entropy loss, backward and an SGD update: about 1,500 ops a step, forward and backward.
- neural ODE: an MLP vector field (2 -> 32 -> 2, tanh) integrated from 0 to 1 over 64 points
  by an adaptive Dormand-Prince (dopri5) solver written in tensor ops, its step size chosen
  from `.item()` of the error norm (the loop torchdiffeq's dopri5 runs), an MSE loss,
  backward and an SGD update.
- word LSTM: a word-level language model (nn.LSTMCell, hidden 64, embeddings 64, vocabulary
  100) over a batch of 8 sequences of 20 tokens, the next-token loss, backward and an SGD
  update.

Both libraries start from the same weights (copied through NumPy) and take turns
(interleaved rounds); the table gives the median over rounds of the time per step, wall and
the calling thread's CPU time (which a machine shared with other work inflates less), and
autojit's ratio to torch; then the mean wall time per step over every round, which keeps the
rare full collections of Python's cyclic garbage collector that a median of rounds leaves out
(a step of autojit's allocates Python objects for its graph; torch's graph is C++), with the
number of full collections in those steps. A full collection scans every object of the
process, torch's included. Each workload starts after a full collection of its own, so that
the objects the imports left are not scanned in the first workload's steps. Both run on one thread
(autojit.set_num_threads(1), torch.set_num_threads(1)).

    python bench/eager_loops.py [--rounds 5] [--steps 20] [--profile seq2seq]

`--profile NAME` prints cProfile's top functions (by own time) of 10 autojit steps of NAME
instead of the table.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from timing import interleaved_medians, print_against  # noqa: E402

import autojit  # noqa: E402


def _copy_weights(source, target) -> None:
    with autojit.no_grad():
        for mine, theirs in zip(target.parameters(), source.parameters(), strict=True):
            mine.copy_(autojit.tensor(theirs.detach().numpy()))


def _pair(make_model, make_step, data):
    """(torch step, autojit step), from one set of weights."""
    torch.manual_seed(0)
    reference = make_model(torch)
    mine = make_model(autojit)
    _copy_weights(reference, mine)
    return (make_step(torch, reference, *(torch.tensor(x) for x in data)),
            make_step(autojit, mine, *(autojit.tensor(x) for x in data)))


# ---- seq2seq with GRU cells -------------------------------------------------------------------

VOCAB, EMBED, HIDDEN, LENGTH, BATCH = 40, 32, 64, 12, 16


def _seq2seq_model(L):
    return L.nn.ModuleDict({
        "source": L.nn.Embedding(VOCAB, EMBED), "target": L.nn.Embedding(VOCAB, EMBED),
        "encoder": L.nn.GRUCell(EMBED, HIDDEN), "decoder": L.nn.GRUCell(EMBED, HIDDEN),
        "out": L.nn.Linear(HIDDEN, VOCAB)})


def _seq2seq_step(L, model, source, target):
    optimizer = L.optim.SGD(model.parameters(), lr=0.1)

    def step():
        hidden = L.zeros(BATCH, HIDDEN)
        for t in range(LENGTH):
            hidden = model["encoder"](model["source"](source[:, t]), hidden)
        loss = 0.0
        for t in range(LENGTH - 1):
            hidden = model["decoder"](model["target"](target[:, t]), hidden)
            loss = loss + L.nn.functional.cross_entropy(model["out"](hidden), target[:, t + 1])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    return step


def seq2seq():
    rng = np.random.RandomState(0)
    data = (rng.randint(0, VOCAB, (BATCH, LENGTH)), rng.randint(0, VOCAB, (BATCH, LENGTH)))
    return _pair(_seq2seq_model, _seq2seq_step, data)


# ---- a neural ODE with an adaptive dopri5 solver -----------------------------------------------

# Dormand-Prince 5(4): the nodes, the stages' weights, the 5th-order weights and the error's.
_C = (0.2, 0.3, 0.8, 8 / 9, 1.0)
_A = ((0.2,), (3 / 40, 9 / 40), (44 / 45, -56 / 15, 32 / 9),
      (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
      (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656))
_B = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84)
_E = (71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40)


def _dopri5(L, field, y, t_end, rtol=1e-5, atol=1e-6):
    t, dt, k1 = 0.0, 0.05, field(y)
    while t < t_end:
        dt = min(dt, t_end - t)
        stages = [k1]
        for row in _A:
            stages.append(field(y + dt * sum(a * k for a, k in zip(row, stages))))
        y_next = y + dt * sum(b * k for b, k in zip(_B, stages))
        k7 = field(y_next)
        error = dt * sum(e * k for e, k in zip(_E, (*stages, k7)))
        scale = atol + rtol * L.maximum(y.abs(), y_next.abs())
        norm = ((error / scale) ** 2).mean().sqrt().item()
        if norm <= 1.0:
            t, y, k1 = t + dt, y_next, k7
        dt *= min(5.0, max(0.2, 0.9 * (norm + 1e-10) ** -0.2))
    return y


def _ode_model(L):
    return L.nn.Sequential(L.nn.Linear(2, 32), L.nn.Tanh(), L.nn.Linear(32, 2))


def _ode_step(L, model, y0, target):
    optimizer = L.optim.SGD(model.parameters(), lr=0.05)

    def step():
        loss = ((_dopri5(L, model, y0, 1.0) - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    return step


def neural_ode():
    rng = np.random.RandomState(1)
    data = (rng.randn(64, 2).astype(np.float32), rng.randn(64, 2).astype(np.float32))
    return _pair(_ode_model, _ode_step, data)


# ---- a word-level LSTM language model ----------------------------------------------------------

WORDS, WORD_EMBED, WORD_HIDDEN, WORD_LENGTH, WORD_BATCH = 100, 64, 64, 20, 8


def _lstm_model(L):
    return L.nn.ModuleDict({"embed": L.nn.Embedding(WORDS, WORD_EMBED),
                            "cell": L.nn.LSTMCell(WORD_EMBED, WORD_HIDDEN),
                            "out": L.nn.Linear(WORD_HIDDEN, WORDS)})


def _lstm_step(L, model, tokens):
    optimizer = L.optim.SGD(model.parameters(), lr=0.5)

    def step():
        state = (L.zeros(WORD_BATCH, WORD_HIDDEN), L.zeros(WORD_BATCH, WORD_HIDDEN))
        loss = 0.0
        for t in range(WORD_LENGTH - 1):
            state = model["cell"](model["embed"](tokens[:, t]), state)
            loss = loss + L.nn.functional.cross_entropy(model["out"](state[0]), tokens[:, t + 1])
        optimizer.zero_grad()
        (loss / (WORD_LENGTH - 1)).backward()
        optimizer.step()
        return loss

    return step


def word_lstm():
    rng = np.random.RandomState(2)
    return _pair(_lstm_model, _lstm_step, (rng.randint(0, WORDS, (WORD_BATCH, WORD_LENGTH)),))


WORKLOADS = {"seq2seq": seq2seq, "neural-ode": neural_ode, "word-lstm": word_lstm}


def _count_full_collections():
    """A function giving the number of full (generation 2) collections since this call."""
    start = gc.get_stats()[2]["collections"]
    return lambda: gc.get_stats()[2]["collections"] - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--profile", choices=WORKLOADS)
    args = parser.parse_args()
    torch.set_num_threads(1)
    autojit.set_num_threads(1)
    if args.profile:
        _, step = WORKLOADS[args.profile]()
        step()
        profile = cProfile.Profile()
        profile.runcall(lambda: [step() for _ in range(10)])
        pstats.Stats(profile).sort_stats("tottime").print_stats(20)
        return
    for name, make in WORKLOADS.items():
        reference, mine = make()
        losses = reference().item(), mine().item()
        print(f"{name} (first losses: torch {losses[0]:.6f}, autojit {losses[1]:.6f})")
        # The objects the imports and the set-up left (torch's alone are about 300,000) wait
        # for the process's first full collection, which would land in whichever workload
        # runs first; collected here, what the means keep is what the steps themselves cause.
        gc.collect()
        full_collections = _count_full_collections()
        cpu: dict = {}
        means: dict = {}
        medians = interleaved_medians({"torch": reference, "autojit": mine}, args.rounds,
                                      args.steps, cpu=cpu, means=means)
        print_against(medians, "torch", cpu)
        print(f"  mean over all {args.rounds * args.steps} steps: torch "
              f"{means['torch'] * 1e3:.2f} ms, autojit {means['autojit'] * 1e3:.2f} ms, "
              f"{means['autojit'] / means['torch']:.2f}x torch; full collections meanwhile: "
              f"{full_collections()}")


if __name__ == "__main__":
    main()
