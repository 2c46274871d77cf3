"""Sizes the graph computes: a Mixture-of-Experts training step (a router, `torch.where(choice ==
e)[0]` per expert, each expert's linear layer on its rows, backward and SGD in one step),
compiled, against autojit eager and torch eager, side by side in one process.

The router sends each call's tokens to the experts in new counts, so a compiled call nearly
always meets a new binding of the trace's size symbols (compiler/unbacked_sizes.py): its cost
holds that binding's executable, made from the plans of the first one (compiler/
binding_plans.py, codegen/schedule/rebinding.py). "compiled, same counts" calls the compiled
step on one input over and over: a binding seen before, no new executable. Two sizes: 4
experts over 64 tokens of 16 features, where a binding's cost is all there is to see, and 8
over 2048 tokens of 256 features. Each line is the median milliseconds per call over
interleaved rounds and the ratio to autojit eager (docs/notes/segments.md, "Sizes the graph
computes"). The eager steps' products run on `--threads` BLAS threads (OpenBLAS's and torch's,
1 by default): on a machine shared with other work their threads wait busily for one another,
which took the large autojit eager step from 13-17 ms on one thread to 230-240 ms on two, and
torch's small step to 280 ms. Usage:

    python bench/computed_sizes.py [--rounds 7] [--steps 10] [--large-steps 3] [--only small]
        [--threads 1]
"""

from __future__ import annotations

import argparse
import itertools
import os
import warnings

from timing import interleaved_medians, print_against

SIZES = {"small": (4, 16, 64), "large": (8, 256, 2048)}


def moe_step(module, weights):
    """The step of `module` (autojit or torch) over initial `weights`: returns the loss."""
    experts_count = (len(weights) - 2) // 2
    features = weights[0].shape[1]
    router = module.nn.Linear(features, experts_count)
    experts = module.nn.ModuleList(module.nn.Linear(features, features)
                                   for _ in range(experts_count))
    parameters = [*router.parameters(), *experts.parameters()]
    with module.no_grad():
        for parameter, value in zip(parameters, weights):
            parameter.copy_(module.tensor(value))
    optimizer = module.optim.SGD(parameters, lr=0.01)

    def step(x):
        choice = router(x).argmax(-1)
        out = module.zeros_like(x)
        for e in range(experts_count):
            idx = module.where(choice == e)[0]
            out = out.index_add(0, idx, experts[e](x[idx]))
        loss = out.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    return step


def runners(size: str, pool: int, threads: int) -> dict:
    import numpy as np

    import autojit

    experts, features, tokens = SIZES[size]
    rng = np.random.default_rng(0)
    weights = [rng.normal(scale=features ** -0.5, size=shape).astype(np.float32)
               for shape in [(experts, features), (experts,)] +
               [(features, features), (features,)] * experts]
    inputs = [rng.normal(size=(tokens, features)).astype(np.float32) for _ in range(pool)]
    mine = [autojit.tensor(x) for x in inputs]
    compiled = autojit.compile(moe_step(autojit, weights))
    eager = moe_step(autojit, weights)
    repeated = autojit.compile(moe_step(autojit, weights))
    fresh, again, plain = itertools.cycle(mine), itertools.cycle(mine), mine[0]
    for _ in range(3):  # the first call makes SGD's state, the second traces
        compiled(next(fresh))
        repeated(plain)
    found = {"compiled": lambda: compiled(next(fresh)),
             "compiled, same counts": lambda: repeated(plain),
             "autojit eager": lambda: eager(next(again))}
    try:
        import torch
    except ImportError:
        return found
    torch.set_num_threads(threads)
    theirs = itertools.cycle([torch.tensor(x) for x in inputs])
    torch_step = moe_step(torch, weights)
    found["torch eager"] = lambda: torch_step(next(theirs))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--large-steps", type=int, default=3)
    parser.add_argument("--only", choices=sorted(SIZES), help="one of the two sizes")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of eager steps")
    options = parser.parse_args()
    # Read by OpenBLAS when NumPy loads it: before the first import of NumPy.
    os.environ["OPENBLAS_NUM_THREADS"] = str(options.threads)
    warnings.simplefilter("ignore")  # the compiled step's first call makes SGD's state
    for size, (experts, features, tokens) in SIZES.items():
        if options.only not in (None, size):
            continue
        steps = options.steps if size == "small" else options.large_steps
        # More inputs than a trace keeps bindings of (MAX_BINDINGS, 32): no call finds its
        # counts' executable kept from an earlier round.
        found = runners(size, max(40, options.rounds * steps + 8), options.threads)
        cpu: dict = {}
        medians = interleaved_medians(found, options.rounds, steps, cpu=cpu, settle=0.05)
        print(f"{experts} experts, {tokens} tokens of {features} features:")
        print_against(medians, "autojit eager", cpu)


if __name__ == "__main__":
    main()
