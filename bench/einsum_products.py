"""Compiled einsum against compiled matmul on the same products, forward and backward.

einsum (ops/linalg/einsum.py) lowers a contraction to the layout ops and one `matmul`, so a compiled
"bij,bjk->bik" should run the same plan as a compiled `x @ y`. Each pair runs in interleaved
rounds (the machine's drift reaches both alike); prints the best (on a machine shared with
other work, the least disturbed) and the median microseconds of a call, for the product and
for the product with both gradients inside the compiled function, and the ratios.

    python bench/einsum_products.py [--rounds 31]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import autojit

# (equation, the same product written with matmul, operand shapes)
CASES = [
    ("bij,bjk->bik", lambda x, y: x @ y, (32, 64, 64), (32, 64, 64)),
    ("bij,bjk->bik", lambda x, y: x @ y, (8, 256, 256), (8, 256, 256)),
    ("bhqd,bhkd->bhqk", lambda x, y: x @ y.transpose(-1, -2), (4, 8, 128, 64), (4, 8, 128, 64)),
    ("ij,jk->ik", lambda x, y: x @ y, (512, 512), (512, 512)),
]


def _with_gradients(product):
    def step(x, y):
        out = product(x, y)
        grads = autojit.autograd.grad((out * out).sum(), (x, y))
        return out, *grads

    return step


def _time(call, arguments, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        call(*arguments)
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    options = parser.parse_args()
    generator = np.random.default_rng(0)
    print(f"{'product':44} {'best: einsum us':>15} {'matmul us':>10} {'ratio':>6} "
          f"{'median: einsum us':>17} {'matmul us':>10} {'ratio':>6}")
    for equation, product, x_shape, y_shape in CASES:
        for label, grad in (("", False), (" + grads", True)):
            x = autojit.tensor(generator.standard_normal(x_shape).astype(np.float32),
                               requires_grad=grad)
            y = autojit.tensor(generator.standard_normal(y_shape).astype(np.float32),
                               requires_grad=grad)
            pair = {"einsum": lambda a, b, equation=equation: autojit.einsum(equation, a, b),
                    "matmul": product}
            functions = {name: autojit.compile(_with_gradients(f) if grad else f)
                         for name, f in pair.items()}
            for function in functions.values():
                for _ in range(3):
                    function(x, y)
            flops = 2 * product(x, y).numel() * x_shape[-1]
            calls = max(1, int(2e8 / flops))
            times = {name: [] for name in functions}
            for _ in range(options.rounds):
                for name, function in functions.items():
                    times[name].append(_time(function, (x, y), calls))
            shapes = "x".join(map(str, x_shape)) + ", " + "x".join(map(str, y_shape))
            row = f"{equation + label + ' ' + shapes:44}"
            for summary, width in ((min, 15), (statistics.median, 17)):
                einsum_us, matmul_us = (summary(times[name]) * 1e6 for name in functions)
                row += f" {einsum_us:{width}.1f} {matmul_us:10.1f} {einsum_us / matmul_us:6.2f}"
            print(row)


if __name__ == "__main__":
    main()
