"""Eager rotary position embeddings on attention heads laid out as Llama's: autojit against torch.

transformers' Llama computes q and k as (batch, positions, heads, size) and transposes them to
(batch, heads, positions, size) before `apply_rotary_pos_emb`: `q * cos + rotate_half(q) * sin`,
whose `rotate_half` slices the last dim in halves (`x[..., :half]`, `x[..., half:]`) and joins
them with `cat`. Every op there reads a transposed view that needs a node. The function below
is that one, written out; it runs forward, and forward with backward, on (4, 4, 64, 32) float32
q and k, one thread, autojit and torch in one process taking turns, and prints the median time
per call of each over `--repeats` rounds of 50 calls and their ratio:

    python bench/eager_rotary.py [--repeats 20]

Run it with PYTHONPATH=OLD/src for another tree's figures (docs/performance.md).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def rotate_half(x, library):
    half = x.shape[-1] // 2
    return library.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rotary(q, k, cos, sin, library):
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return (q * cos + rotate_half(q, library) * sin,
            k * cos + rotate_half(k, library) * sin)


def tensors(library, seed: int = 0):
    rng = np.random.default_rng(seed)
    heads = [library.tensor(rng.standard_normal((4, 64, 4, 32)).astype(np.float32))
             .transpose(1, 2).requires_grad_() for _ in range(2)]
    angles = [library.tensor(rng.standard_normal((4, 64, 32)).astype(np.float32))
              for _ in range(2)]
    return (*heads, *angles)


def forward(library, values):
    return apply_rotary(*values, library)


def both(library, values):
    q, k = apply_rotary(*values, library)
    (q.sum() + k.sum()).backward()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    options = parser.parse_args()
    import torch

    import autojit

    torch.set_num_threads(1)
    libraries = {"autojit": autojit, "torch": torch}
    values = {name: tensors(library) for name, library in libraries.items()}
    for label, function in (("forward", forward), ("forward + backward", both)):
        times: dict = {name: [] for name in libraries}
        for _ in range(options.repeats):
            for name, library in libraries.items():
                start = time.perf_counter()
                for _ in range(50):
                    function(library, values[name])
                times[name].append((time.perf_counter() - start) / 50)
        mine, theirs = (statistics.median(times[name]) * 1e6 for name in libraries)
        print(f"{label}: autojit {mine:.1f} us, torch {theirs:.1f} us, {mine / theirs:.2f}x")


if __name__ == "__main__":
    main()
