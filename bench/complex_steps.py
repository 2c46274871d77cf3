"""Training steps on complex tensors: autojit compiled against autojit eager and torch eager,
side by side in one process (the runners take turns, bench/timing.py).

1. fno: a Fourier neural operator's spectral layer (rfft2 of a [8, 16, 32, 32] float32 field,
   the lowest 8 x 8 modes mixed by complex64 weights, irfft2, a 1x1 convolution beside it,
   gelu), its MSE loss, backward and an Adam step.
2. rotary: one attention layer with rotary position embeddings (query and key rotated as
   complex numbers: view_as_complex, a product with polar factors, view_as_real), batch 8,
   sequence 64, width 64, float32, its MSE loss, backward and an AdamW step.

3. rotation: the rotary embedding alone, forward and backward: x [16, 128, 64] float32 seen
   as complex pairs (view_as_complex), times polar(1, theta) for a trained theta [128, 32],
   back to reals (view_as_real), a weighted sum as the loss; gradients of x and theta.
4. spectral: a spectral layer's elementwise chain on complex64 modes [64, 4096]: z w + b
   divided by 1 + |z w|, then exp(-|y|^2) y, the mean modulus as the loss; gradients of the
   weights w and b.

A compiled step fuses its complex elementwise ops into kernels over (real, imaginary) pairs,
as it fuses real ones; the FFTs, einsum's products and the complex sums run their NumPy impls
(docs/notes/complex.md). Each row is the median wall time per step (and the calling thread's
CPU time) and the ratio to compiled autojit; rows 3 and 4 also run torch.compile (inductor).
Usage:

    python bench/complex_steps.py [--rounds 7] [--steps 5] [--only rotation spectral]
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


def rotation_program(module):
    rng = np.random.default_rng(3)
    x = module.tensor(rng.standard_normal((16, 128, 64)).astype(np.float32),
                      requires_grad=True)
    theta = module.tensor(rng.standard_normal((128, 32)).astype(np.float32),
                          requires_grad=True)
    weight = module.tensor(rng.standard_normal((16, 128, 64)).astype(np.float32))

    def step():
        x.grad = theta.grad = None
        z = module.view_as_complex(x.reshape(16, 128, 32, 2))
        rotated = module.view_as_real(z * module.polar(module.ones_like(theta), theta))
        loss = (rotated.flatten(-2) * weight).sum()
        loss.backward()
        return loss

    return step


def spectral_program(module):
    rng = np.random.default_rng(4)

    def complex_tensor(shape, grad=False):
        values = rng.standard_normal((2, *shape)) / 2
        return module.tensor((values[0] + 1j * values[1]).astype(np.complex64),
                             requires_grad=grad)

    z = complex_tensor((64, 4096))
    w, b = complex_tensor((4096,), True), complex_tensor((4096,), True)

    def step():
        w.grad = b.grad = None
        product = z * w
        y = (product + b) / (1 + product.abs())
        y = (-(y.abs().square())).exp() * y
        loss = y.abs().mean()
        loss.backward()
        return loss

    return step


PROGRAMS = {"fno": fno_program, "rotary": rotary_program, "rotation": rotation_program,
            "spectral": spectral_program}
# The rows torch.compile runs too: forward and backward without an optimizer step.
TORCH_COMPILED = ("rotation", "spectral")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=list(PROGRAMS), choices=list(PROGRAMS))
    options = parser.parse_args()

    import torch

    import autojit

    torch.set_num_threads(1)
    autojit.set_num_threads(1)
    for name in options.only:
        program = PROGRAMS[name]
        eager = program(autojit)
        compiled = autojit.compile(program(autojit), fullgraph=True)
        runners = {"autojit compiled": compiled, "autojit eager": eager,
                   "torch eager": program(torch)}
        if name in TORCH_COMPILED:
            runners["torch compiled"] = torch.compile(program(torch))
        cpu: dict = {}
        medians = interleaved_medians(runners, options.rounds, options.steps, cpu)
        assert compiled.stats().eager_calls == 0
        print(f"{name}:")
        print_against(medians, "autojit compiled", cpu)


if __name__ == "__main__":
    main()
