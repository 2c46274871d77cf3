"""scaled_dot_product_attention forward and backward: compiled autojit against torch eager.

One call computes the attention of query, key and value of shape (batch, heads, sequence,
head_dim), float32, and the gradients of all three for a fixed output gradient; without a mask
and with is_causal=True. autojit's attention is a composite (two batched products around a
scaled, masked softmax) traced into one compiled function; torch's is its fused CPU kernel
(flash attention on CPU). The two take turns (interleaved rounds of a few calls) and the table
gives the median time per call and the ratio compiled autojit / torch eager, in wall time and
in the calling thread's CPU time (on a machine shared with other work, the time the call
computed rather than waited for a core). Usage:

    python bench/attention.py [--batch 4] [--heads 4] [--sequence 256] [--head-dim 64]
                              [--threads 1]

Both sides run on `--threads` threads (torch.set_num_threads and autojit.set_num_threads).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--sequence", type=int, default=256)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (7)")
    parser.add_argument("--calls", type=int, default=5, help="calls per round and runner (5)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for both autojit and torch (1)")
    args = parser.parse_args()

    import torch

    import autojit
    from autojit.nn import functional as F
    # The same thread count on both sides: autojit's compiled code would otherwise run on
    # every usable core (its native workers) while torch ran on one.
    torch.set_num_threads(args.threads)
    autojit.set_num_threads(args.threads)
    shape = (args.batch, args.heads, args.sequence, args.head_dim)
    rng = np.random.default_rng(0)
    q, k, v, grad = (rng.standard_normal(shape).astype(np.float32) for _ in range(4))

    def autojit_runner(causal: bool):
        def attention(q, k, v, grad):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            return (out, *autojit.autograd.grad(out, (q, k, v), grad))

        compiled = autojit.compile(attention)
        inputs = [autojit.tensor(a, requires_grad=True) for a in (q, k, v)]
        return lambda: compiled(*inputs, autojit.tensor(grad))[0].detach().numpy()

    def torch_runner(causal: bool):
        inputs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
        grad_tensor = torch.tensor(grad)

        def call():
            out = torch.nn.functional.scaled_dot_product_attention(*inputs, is_causal=causal)
            torch.autograd.grad(out, inputs, grad_tensor)
            return out.detach().numpy()
        return call

    print(f"attention forward+backward, (batch, heads, sequence, head_dim) = {shape}, float32, "
          f"{args.threads} thread(s); median of {args.rounds} interleaved rounds of "
          f"{args.calls} calls")
    for causal in (False, True):
        runners = {"autojit compiled": autojit_runner(causal), "torch eager": torch_runner(causal)}
        outputs = [run() for run in runners.values()]  # also the warm-up (and the compile)
        np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-4, atol=1e-4)
        times = {name: [] for name in runners}
        thread_times = {name: [] for name in runners}
        for _ in range(args.rounds):
            for name, run in runners.items():
                start, start_cpu = time.perf_counter(), time.thread_time()
                for _ in range(args.calls):
                    run()
                times[name].append((time.perf_counter() - start) / args.calls)
                thread_times[name].append((time.thread_time() - start_cpu) / args.calls)
        medians = {name: statistics.median(values) for name, values in times.items()}
        cpu = {name: statistics.median(values) for name, values in thread_times.items()}
        ratio = medians["autojit compiled"] / medians["torch eager"]
        print(f"  {'causal' if causal else 'no mask':<8} autojit compiled "
              f"{medians['autojit compiled'] * 1e3:7.2f} ms, torch eager "
              f"{medians['torch eager'] * 1e3:7.2f} ms, ratio {ratio:.2f}x; cpu "
              f"{cpu['autojit compiled'] * 1e3:7.2f} / {cpu['torch eager'] * 1e3:7.2f} ms, "
              f"{cpu['autojit compiled'] / cpu['torch eager']:.2f}x")


if __name__ == "__main__":
    main()
