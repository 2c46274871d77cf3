"""The function transforms, compiled: Hessian-vector products, per-sample gradients and a full
Hessian, autojit against torch (eager, torch.compile) and jax.jit, side by side.

Workloads:
  hvp        f(x) = sum(sin(x) * x + x^3 / 3) on 1M float64; H v by reverse-over-reverse
             (grad of <grad f, v>) and by forward-over-reverse (jvp of grad f), and as torch
             programs write it (the gradient of a create_graph=True gradient: "autograd",
             compiled whole, and eager). torch.compile runs the double backward with
             torch._dynamo.config.trace_autograd_ops = True. Its table adds the 25.2 MB a pass
             must move (x and v read, H v written) over each time, in GB/s, and the copy and
             triad bandwidth of one core at that footprint (bench/stream_peak.py).
  per-sample the gradient of a 784-256-10 MLP's cross-entropy for each of 64 examples:
             vmap(grad(loss)) (torch.func and jax the same way).
  hessian    the 1000 x 1000 Hessian of f(x) = sum(softplus(A x)) + |x|^2 / 2, A 200 x 1000,
             float64: hessian(f) = jacfwd(jacrev(f)).

The first call of each runner (for the compiled ones: trace, compile and run, in this process,
with whatever kernels the disk cache already holds) is reported; then the runners take turns
(interleaved rounds, bench/timing.py) and each table gives the median time per call and the
ratio to the first autojit runner. Usage:

    python bench/func_transforms.py [--rounds 7] [--steps 5] [--only hvp,per-sample,hessian]
    python bench/func_transforms.py --latency [--repeats 3]

--latency measures the compile latency instead: the first call (trace, compile, run; imports
excluded) in a new interpreter, for autojit with an empty kernel cache directory (cold) and
with the one the cold run filled (warm), and for jax.jit without and with its persistent
compilation cache; the median of --repeats runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from timing import interleaved_medians, print_against


def first_call(runner):
    started = time.perf_counter()
    runner()
    return time.perf_counter() - started


# ---- the workloads, written once per framework -------------------------------------------------

def hvp_runners(autojit, torch, jax):
    from autojit.func import grad, jvp

    rng = np.random.default_rng(0)
    x_np, v_np = rng.uniform(-1, 1, 1 << 20), rng.uniform(-1, 1, 1 << 20)

    def f(x):
        return (x.sin() * x + x * x * x / 3).sum()

    def double_backward(lib):
        """H v as torch programs write it: the gradient of a create_graph=True gradient."""
        def hvp(x, v):
            x = x.detach().requires_grad_(True)
            (g,) = lib.autograd.grad(f(x), x, create_graph=True)
            (h,) = lib.autograd.grad((g * v).sum(), x)
            return h
        return hvp

    x, v = autojit.tensor(x_np), autojit.tensor(v_np)
    reverse = autojit.compile(lambda x, v: grad(lambda y: (grad(f)(y) * v).sum())(x))
    forward = autojit.compile(lambda x, v: jvp(grad(f), (x,), (v,))[1])
    autograd_form = autojit.compile(double_backward(autojit))
    autojit_eager = double_backward(autojit)
    runners = {"autojit rev-rev": lambda: reverse(x, v),
               "autojit fwd-rev": lambda: forward(x, v),
               "autojit autograd": lambda: autograd_form(x, v),
               "autojit eager": lambda: autojit_eager(x, v)}

    tx, tv = torch.tensor(x_np), torch.tensor(v_np)
    torch_hvp = double_backward(torch)

    runners["torch eager"] = lambda: torch_hvp(tx, tv)
    torch_fwd = torch.func.jvp
    runners["torch.func fwd-rev"] = lambda: torch_fwd(torch.func.grad(f), (tx,), (tv,))[1]
    try:
        import torch._dynamo.config as dynamo_config

        dynamo_config.trace_autograd_ops = True
        compiled = torch.compile(torch_hvp)
        runners["torch.compile"] = lambda: compiled(tx, tv)
    except Exception as error:  # noqa: BLE001 - reported, not raised
        print(f"  torch.compile skipped: {type(error).__name__}: {str(error)[:100]}")
    if jax is not None:
        jnp = jax.numpy

        def jf(x):
            return jnp.sum(jnp.sin(x) * x + x * x * x / 3)

        jax_hvp = jax.jit(lambda x, v: jax.jvp(jax.grad(jf), (x,), (v,))[1])
        jx, jv = jnp.asarray(x_np), jnp.asarray(v_np)
        runners["jax.jit fwd-rev"] = lambda: jax_hvp(jx, jv).block_until_ready()
    def check():
        expected = torch_hvp(tx, tv).numpy()
        for name in ("autojit rev-rev", "autojit fwd-rev", "autojit autograd", "autojit eager"):
            got = np.asarray(runners[name]())
            assert np.allclose(got, expected, rtol=1e-10, atol=1e-12), name

    # Read x and v, write H v: the least a pass over them moves.
    return runners, check, 3 * x_np.nbytes


def per_sample_runners(autojit, torch, jax):
    from autojit.func import grad, vmap

    rng = np.random.default_rng(0)
    shapes = {"w1": (256, 784), "b1": (256,), "w2": (10, 256), "b2": (10,)}
    params_np = {k: (rng.standard_normal(s) * 0.05).astype(np.float32) for k, s in shapes.items()}
    x_np = rng.standard_normal((64, 784)).astype(np.float32)
    y_np = rng.integers(0, 10, 64)

    def loss_of(lib, functional):
        def loss(params, x, y):
            hidden = functional.relu(x @ params["w1"].T + params["b1"])
            logits = hidden @ params["w2"].T + params["b2"]
            return functional.cross_entropy(logits.unsqueeze(0), y.unsqueeze(0))
        return loss

    params = {k: autojit.tensor(v) for k, v in params_np.items()}
    x, y = autojit.tensor(x_np), autojit.tensor(y_np)
    ours = autojit.compile(vmap(grad(loss_of(autojit, autojit.nn.functional)),
                                in_dims=(None, 0, 0)))
    runners = {"autojit compiled": lambda: ours(params, x, y)}
    tparams = {k: torch.tensor(v) for k, v in params_np.items()}
    tx, ty = torch.tensor(x_np), torch.tensor(y_np)
    theirs = torch.func.vmap(torch.func.grad(loss_of(torch, torch.nn.functional)),
                             in_dims=(None, 0, 0))
    runners["torch.func eager"] = lambda: theirs(tparams, tx, ty)
    try:
        compiled = torch.compile(theirs)
        runners["torch.compile"] = lambda: compiled(tparams, tx, ty)
    except Exception as error:  # noqa: BLE001 - reported, not raised
        print(f"  torch.compile skipped: {type(error).__name__}: {str(error)[:100]}")
    if jax is not None:
        jnp = jax.numpy

        def jloss(params, x, y):
            hidden = jax.nn.relu(x @ params["w1"].T + params["b1"])
            logits = hidden @ params["w2"].T + params["b2"]
            return -jax.nn.log_softmax(logits)[y]

        jax_grads = jax.jit(jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0)))
        jparams = {k: jnp.asarray(v) for k, v in params_np.items()}
        jx, jy = jnp.asarray(x_np), jnp.asarray(y_np)
        runners["jax.jit"] = lambda: jax.block_until_ready(jax_grads(jparams, jx, jy))
    def check():
        got, expected = ours(params, x, y), theirs(tparams, tx, ty)
        for key in shapes:
            assert np.allclose(np.asarray(got[key]), expected[key].numpy(), rtol=1e-4,
                               atol=1e-6), key

    return runners, check, None


def hessian_runners(autojit, torch, jax):
    from autojit.func import hessian

    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((200, 1000)) / 30
    x_np = rng.standard_normal(1000)
    a = autojit.tensor(a_np)

    def f_of(lib, softplus, matrix):
        return lambda x: softplus(matrix @ x).sum() + (x * x).sum() / 2

    ours = autojit.compile(hessian(f_of(autojit, autojit.nn.functional.softplus, a)))
    x = autojit.tensor(x_np)
    runners = {"autojit compiled": lambda: ours(x)}
    ta, tx = torch.tensor(a_np), torch.tensor(x_np)
    theirs = torch.func.hessian(f_of(torch, torch.nn.functional.softplus, ta))
    runners["torch.func eager"] = lambda: theirs(tx)
    try:
        compiled = torch.compile(theirs)
        runners["torch.compile"] = lambda: compiled(tx)
    except Exception as error:  # noqa: BLE001 - reported, not raised
        print(f"  torch.compile skipped: {type(error).__name__}: {str(error)[:100]}")
    if jax is not None:
        jnp = jax.numpy
        ja, jx = jnp.asarray(a_np), jnp.asarray(x_np)
        jax_hessian = jax.jit(jax.hessian(lambda x: jnp.sum(jax.nn.softplus(ja @ x))
                                          + jnp.sum(x * x) / 2))
        runners["jax.jit"] = lambda: jax_hessian(jx).block_until_ready()
    def check():
        assert np.allclose(np.asarray(ours(x)), theirs(tx).numpy(), rtol=1e-9, atol=1e-12)

    return runners, check, None


WORKLOADS = {"hvp": (hvp_runners, "autojit rev-rev"),
             "per-sample": (per_sample_runners, "autojit compiled"),
             "hessian": (hessian_runners, "autojit compiled")}


def child(workload: str, runner_name: str) -> None:
    """In a new interpreter: import everything, build the runners, time one first call."""
    import torch

    import autojit
    jax = None
    if runner_name.startswith("jax"):
        import jax

        jax.config.update("jax_enable_x64", True)
        cache = os.environ.get("JAX_CACHE")
        if cache:
            jax.config.update("jax_compilation_cache_dir", cache)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    runners = WORKLOADS[workload][0](autojit, torch, jax)[0]
    print(first_call(runners[runner_name]))


def latency(repeats: int) -> None:
    have_jax = importlib.util.find_spec("jax") is not None
    jax_names = {"hvp": "jax.jit fwd-rev", "per-sample": "jax.jit", "hessian": "jax.jit"}
    for workload, (_, autojit_name) in WORKLOADS.items():
        rows = {}
        for _ in range(repeats):
            cache = tempfile.mkdtemp(prefix="autojit-func-latency-")
            try:
                for label, env in (("autojit cold", {"AUTOJIT_CACHE_DIR": cache}),
                                   ("autojit warm", {"AUTOJIT_CACHE_DIR": cache}),
                                   ("jax.jit cold", {}),
                                   ("jax.jit warm", {"JAX_CACHE": cache + "-jax"}),
                                   ("jax.jit warm ", {"JAX_CACHE": cache + "-jax"})):
                    name = autojit_name if label.startswith("autojit") else jax_names[workload]
                    if label.startswith("jax") and not have_jax:
                        continue
                    result = subprocess.run(
                        [sys.executable, __file__, "--child", workload, name],
                        env={**os.environ, **env}, capture_output=True, text=True, check=True)
                    rows.setdefault(label.strip(), []).append(
                        float(result.stdout.strip().splitlines()[-1]))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
                shutil.rmtree(cache + "-jax", ignore_errors=True)
        print(f"{workload}: first call in a new interpreter, median of {repeats}")
        for label, values in rows.items():
            # "jax.jit warm" ran twice per repeat: the first filled its cache, the second read it
            shown = values[1::2] if label == "jax.jit warm" else values
            print(f"  {label:<13} {statistics.median(shown):7.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (7)")
    parser.add_argument("--steps", type=int, default=5, help="calls per round and runner (5)")
    parser.add_argument("--only", default=",".join(WORKLOADS), help="workloads to run")
    parser.add_argument("--latency", action="store_true", help="measure compile latency")
    parser.add_argument("--repeats", type=int, default=3, help="latency runs (3)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.latency:
        latency(args.repeats)
        return

    import torch

    import autojit
    torch.set_num_threads(1)
    autojit.set_num_threads(1)  # both sides on one core: the tables compare one thread
    jax = None
    if importlib.util.find_spec("jax") is not None:
        import jax

        jax.config.update("jax_enable_x64", True)
    else:
        print("jax.jit skipped: jax is not installed")
    for name in args.only.split(","):
        make, reference = WORKLOADS[name]
        print(f"{name}:")
        runners, check, moved = make(autojit, torch, jax)
        for runner_name in list(runners):
            try:
                seconds = first_call(runners[runner_name])
            except Exception as error:  # noqa: BLE001 - a runner that fails is reported
                print(f"  {runner_name} skipped: {type(error).__name__}: {str(error)[:100]}")
                del runners[runner_name]
                continue
            print(f"  {runner_name:<19} first call (trace, compile, run) {seconds:7.3f} s")
        check()
        cpu = {}
        medians = interleaved_medians(runners, args.rounds, args.steps, cpu)
        print(f"  median of {args.rounds} interleaved rounds of {args.steps} calls, 1 thread")
        print_against(medians, reference, cpu, moved)
        if moved:
            from stream_peak import ceilings

            rates = ceilings(moved // 3)
            print(f"  one core's bandwidth over arrays of {moved // 3 / 1e6:.1f} MB: copy "
                  f"{rates['copy']:.1f} GB/s, triad {rates['triad']:.1f} GB/s (stream_peak.py)")


if __name__ == "__main__":
    main()
