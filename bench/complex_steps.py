"""Training steps on complex tensors: autojit compiled against autojit eager and torch eager,
side by side in one process (the runners take turns, bench/timing.py).

1. fno: a Fourier neural operator's spectral layer (rfft2 of a [8, 16, 32, 32] float32 field,
   the lowest 8 x 8 modes mixed by complex64 weights, irfft2, a 1x1 convolution beside it,
   gelu), its MSE loss, backward and an Adam step.
2. rotary: one attention layer with rotary position embeddings (query and key rotated as
   complex numbers: view_as_complex, a product with polar factors, view_as_real), batch 8,
   sequence 64, width 64, float32, its MSE loss, backward and an AdamW step.

A compiled step runs its complex ops one step each through their NumPy impls and fuses the real
ops around them (docs/notes/complex.md). Each row is the median wall time per step (and the
calling thread's CPU time) and the ratio to compiled autojit. Usage:

    python bench/complex_steps.py [--rounds 7] [--steps 5]
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import interleaved_medians, print_against


def fno_program(module):
    class SpectralConv(module.nn.Module):
        def __init__(self, channels: int, modes: int):
            super().__init__()
            self.modes = modes
            weights = np.random.default_rng(0).standard_normal((2, channels, channels, modes,
                                                                  modes)) / channels
            self.weight = module.nn.Parameter(module.tensor(
                (weights[0] + 1j * weights[1]).astype(np.complex64)))
            self.pointwise = module.nn.Conv2d(channels, channels, 1)

        def forward(self, x):
            spectrum = module.fft.rfft2(x)
            m = self.modes
            mixed = module.einsum("bixy,ioxy->boxy", spectrum[:, :, :m, :m], self.weight)
            full = module.nn.functional.pad(
                mixed, (0, spectrum.shape[-1] - m, 0, spectrum.shape[-2] - m))
            y = module.fft.irfft2(full, s=x.shape[-2:])
            return module.nn.functional.gelu(y + self.pointwise(x))

    module.manual_seed(0)
    model = SpectralConv(16, 8)
    optimizer = module.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(1)
    x = module.tensor(rng.standard_normal((8, 16, 32, 32)).astype(np.float32))
    target = module.tensor(rng.standard_normal((8, 16, 32, 32)).astype(np.float32))

    def step():
        optimizer.zero_grad()
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss

    return step


def rotary_program(module):
    dim, length = 64, 64
    frequencies = 1.0 / (10000 ** (module.arange(0, dim, 2).float() / dim))
    angles = module.outer(module.arange(length).float(), frequencies)
    rotation = module.polar(module.ones_like(angles), angles)

    class RotaryAttention(module.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = module.nn.Linear(dim, 3 * dim)
            self.out = module.nn.Linear(dim, dim)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k = (module.view_as_real(module.view_as_complex(
                t.reshape(*t.shape[:-1], -1, 2)) * rotation).flatten(-2) for t in (q, k))
            scores = (q @ k.transpose(-2, -1)) / dim ** 0.5
            return self.out(scores.softmax(-1) @ v)

    module.manual_seed(0)
    model = RotaryAttention()
    optimizer = module.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(2)
    x = module.tensor(rng.standard_normal((8, length, dim)).astype(np.float32))
    target = module.tensor(rng.standard_normal((8, length, dim)).astype(np.float32))

    def step():
        optimizer.zero_grad()
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=5)
    options = parser.parse_args()

    import torch

    import autojit

    torch.set_num_threads(1)
    autojit.set_num_threads(1)
    for name, program in (("fno", fno_program), ("rotary", rotary_program)):
        eager = program(autojit)
        compiled = autojit.compile(program(autojit), fullgraph=True)
        runners = {"autojit compiled": compiled, "autojit eager": eager,
                   "torch eager": program(torch)}
        cpu: dict = {}
        medians = interleaved_medians(runners, options.rounds, options.steps, cpu)
        assert compiled.stats().eager_calls == 0
        print(f"{name}:")
        print_against(medians, "autojit compiled", cpu)


if __name__ == "__main__":
    main()
