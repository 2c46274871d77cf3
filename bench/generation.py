"""Compiled text generation with a static cache, as transformers runs it: `model.generate` with
`cache_implementation="static"` and a CompileConfig, whose decoding steps call a compiled
forward with a cache object that holds each layer's keys, values and length (written in place
at each position) and a new cache for each `generate`. autojit (through the drop-in) against
torch.compile, each in a process of its own.

A GPT-2 of `--layers` layers (d_model 128, 4 heads, vocabulary 99), batch 2, prompts of 10, 9
and 8 tokens in turn, `--tokens` new tokens greedily: the first generate (cold: traces and
compiles) and the median of the others, with the tokens of the last one, which must agree.

    python bench/generation.py [--layers 4] [--tokens 32] [--generates 12]

Figures: docs/performance.md ("Generation with a static cache").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def run(framework: str, layers: int, tokens: int, generates: int) -> dict:
    if framework == "autojit":
        import autojit.drop_in

        autojit.drop_in.install()
    import torch
    import transformers
    from transformers import CompileConfig

    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=layers, n_embd=128, n_head=4, vocab_size=99,
                                     n_positions=128, bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(config).eval()
    compile_config = CompileConfig(fullgraph=True)
    compile_config._compile_all_devices = True  # transformers compiles on GPUs alone otherwise
    times, out = [], None
    for number in range(generates):
        length = 10 - number % 3
        ids = torch.randint(1, 99, (2, length),
                            generator=torch.Generator().manual_seed(length))
        started = time.perf_counter()
        out = model.generate(ids, max_new_tokens=tokens, min_new_tokens=tokens,
                             do_sample=False, cache_implementation="static",
                             compile_config=compile_config, max_length=None, pad_token_id=0)
        times.append(time.perf_counter() - started)
    return {"first": times[0], "median": statistics.median(times[2:]),
            "tokens": out[:, -tokens:].tolist()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--generates", type=int, default=12)
    parser.add_argument("--framework", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.framework:
        print(json.dumps(run(options.framework, options.layers, options.tokens,
                             options.generates)))
        return
    results = {}
    for framework in ("torch", "autojit"):
        command = [sys.executable, os.path.abspath(__file__), "--framework", framework,
                   "--layers", str(options.layers), "--tokens", str(options.tokens),
                   "--generates", str(options.generates)]
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        results[framework] = json.loads(output.strip().splitlines()[-1])
    torch_median = results["torch"]["median"]
    print(f"GPT-2, {options.layers} layers, {options.tokens} new tokens a generate")
    print(f"{'runner':<16}{'first generate':>16}{'later (median)':>16}{'ratio':>8}")
    for framework, label in (("torch", "torch.compile"), ("autojit", "autojit compile")):
        found = results[framework]
        print(f"{label:<16}{found['first']:>15.2f}s{found['median'] * 1e3:>14.1f}ms"
              f"{found['median'] / torch_median:>7.2f}x")
    agree = results["torch"]["tokens"] == results["autojit"]["tokens"]
    print("tokens agree" if agree else "TOKENS DIFFER")


if __name__ == "__main__":
    main()
