"""Running a program of family_programs.py three ways and comparing what each call left: torch
eager, autojit eager and autojit compiled.

`run(spec, framework, compiled)` renders the program, writes it to a file (so that its
functions have source, as a user's do) and executes it with `torch` bound to the framework
and `WRAP` to `autojit.compile` or the identity. After each call `record` observes what a user
can see: the returned value (or the error's type), every parameter's values, version, `.grad`
and whether that is the tensor the last call left, the buffers, the optimizer's state_dict,
the scheduler's epoch and learning rates, and the program's counters, history and errors.
The program's global hooks are removed after the run, whatever happens.

`outcome(spec)` runs it three ways: compiled must equal eager (a CompileWarning may say it ran
eagerly, never a silent difference), and eager must equal torch where the program draws no
random numbers and casts nothing to bfloat16 (family_programs.compares_with_torch), up to the
call where torch's run diverged to an inf or a NaN. The
command line runs many programs and counts silent differences and fallbacks by cause:

    PYTHONPATH=src python tests/family_runs.py --examples 1000 --first 0 --out /tmp/f.jsonl
"""

from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np

import autojit
from autojit import CompileWarning
from autojit.tensor import once

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from family_programs import compares_with_torch, random_spec, render  # noqa: E402

TOLERANCE = {"compiled": 1e-9, "torch": 1e-7}
TENSORS = ()  # the tensor types of the frameworks run (set by `frameworks`)


def frameworks() -> dict:
    """The frameworks this process can run: autojit, and torch where it is installed."""
    global TENSORS
    found = {"autojit": autojit}
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        found["torch"] = torch
    TENSORS = tuple(framework.Tensor for framework in found.values())
    return found


def plain(value, depth: int = 0):
    """A copy of `value` later calls cannot change, the same for either framework."""
    if depth > 6:
        return "deep"
    if isinstance(value, TENSORS):
        array = value.detach().cpu().float().numpy() if str(value.dtype).endswith("bfloat16") \
            else value.detach().cpu().numpy()
        return ("tensor", str(value.dtype).rsplit(".", 1)[-1], tuple(value.shape),
                np.array(array, copy=True))
    if isinstance(value, BaseException):
        return ("raised", type(value).__name__)
    if isinstance(value, dict):
        return {str(key): plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item, depth + 1) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if callable(value):
        return "callable"
    return ("object", type(value).__name__)


def _parameters(module) -> list:
    return [(name.replace("_orig_mod.", ""), p) for name, p in module.named_parameters()]


def observe(namespace: dict, out, last_grads: dict) -> dict:
    model = namespace["model"]
    seen = {"returned": plain(out)}
    for name, p in _parameters(model):
        grad = p.grad
        status = None if grad is None else ("kept" if last_grads.get(name) is grad else "new")
        previous = last_grads.get(name + " version")
        seen[name] = {"value": plain(p), "version": p._version, "grad": plain(grad),
                      "grad tensor": status,
                      "version moved": None if previous is None else p._version - previous}
        last_grads[name], last_grads[name + " version"] = grad, p._version
    for name, buffer in model.named_buffers():
        seen["buffer " + name.replace("_orig_mod.", "")] = plain(buffer)
    optimizer = plain(namespace["opt"].state_dict())
    for entry in optimizer["state"].values():
        if isinstance(entry.get("step"), tuple):
            # The step count's value: autojit keeps a float64 parameter's in float64, torch
            # in float32 (the default dtype's), a difference the runs do not look for.
            entry["step"] = float(entry["step"][3])
    seen["optimizer"] = optimizer
    sched = namespace.get("sched")
    if sched is not None:
        seen["scheduler"] = plain([getattr(sched, "last_epoch", None),
                                   getattr(sched, "_last_lr", None),
                                   [getattr(inner, "_last_lr", None)
                                    for inner in getattr(sched, "_schedulers", ())]])
    scaler = namespace.get("scaler")
    if scaler is not None:
        seen["scale"] = scaler.get_scale()
    for name in ("counts", "history", "errors", "records"):
        seen[name] = plain(namespace[name])
    bar = namespace["BAR"]
    seen["bar"] = (bar.n, bar.postfix, bar.desc)
    stats = namespace.get("stats")
    if stats is not None:  # the step's statistics object, and whether it returned that one
        seen["stats"] = plain(stats if isinstance(stats, dict) else vars(stats))
        seen["returned stats"] = isinstance(out, tuple) and out[1] is stats
    return seen


def run(spec: dict, framework, compiled: bool) -> dict:
    """What each call left, the compiled step's counts and the CompileWarnings given."""
    source = render(spec)
    once.given.clear()  # warnings given once per process are given to each run
    snapshots, last_grads, wrapped = [], {}, []

    def wrap(function):
        if not compiled:
            return function
        wrapped.append(autojit.compile(function))
        return wrapped[-1]

    namespace = {"__name__": "family_program", "torch": framework, "WRAP": wrap}
    namespace["record"] = lambda call, out: snapshots.append(
        observe(namespace, out, last_grads))
    default_dtype = framework.get_default_dtype()
    with tempfile.TemporaryDirectory() as folder, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = os.path.join(folder, f"family_{spec['seed']}.py")
        with open(path, "w") as handle:
            handle.write(source)
        try:
            exec(compile(source, path, "exec"), namespace)  # noqa: S102
        finally:
            for handle in namespace.get("handles", ()):
                handle.remove()
            framework.set_default_dtype(default_dtype)
    counts = {}
    if wrapped:
        stats = wrapped[0].stats()
        counts = {"compiled_calls": stats.compiled_calls, "eager_calls": stats.eager_calls,
                  "traces": stats.traces}
    messages = [str(w.message) for w in caught if issubclass(w.category, CompileWarning)]
    return {"snapshots": snapshots, "counts": counts, "warnings": messages}


def _scale(array) -> float:
    """The largest finite magnitude of an array, at least 1."""
    finite = np.abs(array[np.isfinite(array)]) if array.dtype.kind in "fc" else np.abs(array)
    return max(1.0, float(finite.max())) if finite.size else 1.0


def _differences(a, b, path: str, tolerance: float, out: list, skipped=()) -> None:
    if path.rsplit(".", 1)[-1] in skipped:
        return
    if isinstance(a, tuple) and a and a[0] == "tensor":
        if not (isinstance(b, tuple) and b and b[0] == "tensor") or a[1:3] != b[1:3]:
            out.append((path, repr(a[:3]), repr(b[:3] if isinstance(b, tuple) else b)))
        # Relative to the tensor's largest element too: a training run that diverges (weights
        # of 1e9 after a few steps) carries its roundings into its small elements.
        elif not np.allclose(a[3], b[3], rtol=tolerance, equal_nan=True,
                             atol=tolerance * _scale(a[3])):
            out.append((path, a[3].tolist(), b[3].tolist()))
        return
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            out.append((path + ".keys", list(a), list(b)))
        for key in a:
            if key in b:
                _differences(a[key], b[key], f"{path}.{key}" if path else key, tolerance, out,
                             skipped)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append((path + ".len", len(a), len(b)))
            return
        for index, (x, y) in enumerate(zip(a, b)):
            _differences(x, y, f"{path}[{index}]", tolerance, out, skipped)
        return
    if isinstance(a, float) and isinstance(b, float):
        if not (np.isclose(a, b, rtol=tolerance, atol=tolerance) or a != a and b != b):
            out.append((path, a, b))
        return
    if a != b or type(a) is not type(b):
        out.append((path, repr(a)[:200], repr(b)[:200]))


def differences(first: dict, second: dict, tolerance: float, skipped=()) -> list:
    """(call, path, first, second) wherever two runs' snapshots disagree (but at the keys
    `skipped`)."""
    found = []
    a, b = first["snapshots"], second["snapshots"]
    if len(a) != len(b):
        found.append((-1, "calls", len(a), len(b)))
    for call, (x, y) in enumerate(zip(a, b)):
        local = []
        _differences(x, y, "", tolerance, local, skipped)
        found += [(call, *item) for item in local]
    return found


def _finite(value) -> bool:
    """Whether every float in a snapshot's values is finite."""
    if isinstance(value, tuple) and value and value[0] == "tensor":
        return value[3].dtype.kind not in "fc" or bool(np.isfinite(value[3]).all())
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    if isinstance(value, list):
        return all(_finite(item) for item in value)
    return not isinstance(value, float) or np.isfinite(value)


def until_diverged(run: dict) -> dict:
    """The run's calls up to the first that left an inf or a NaN anywhere: past it, a diverged
    run's overflows depend on the order of each sum (inf - inf or -inf), which torch and
    autojit need not share."""
    calls = run["snapshots"]
    kept = next((index for index, snapshot in enumerate(calls) if not _finite(snapshot)),
                len(calls))
    return {**run, "snapshots": calls[:kept]}


def outcome(spec: dict, with_torch: bool = True) -> dict:
    """The program run eagerly and compiled (and on torch): the differences of compiled from
    eager and of eager from torch, the compiled run's counts and its CompileWarnings."""
    started = time.perf_counter()
    found = frameworks()
    eager = run(spec, autojit, compiled=False)
    compiled = run(spec, autojit, compiled=True)
    result = {"compiled": differences(eager, compiled, TOLERANCE["compiled"]),
              "torch": [], "counts": compiled["counts"], "warnings": compiled["warnings"]}
    if with_torch and "torch" in found and compares_with_torch(spec):
        theirs = run(spec, found["torch"], compiled=False)
        # Versions as moved by each call: making a parametrization moves torch's originals'
        # (set_), not autojit's, before any call.
        kept = len(until_diverged(theirs)["snapshots"])
        result["torch"] = differences(
            {"snapshots": theirs["snapshots"][:kept]}, {"snapshots": eager["snapshots"][:kept]},
            TOLERANCE["torch"], skipped=("version",))
    result["seconds"] = time.perf_counter() - started
    return result


def report(spec: dict, result: dict) -> str:
    lines = []
    for kind, name in (("compiled", "compiled against eager"), ("torch", "eager against torch")):
        if result[kind]:
            lines.append(f"{len(result[kind])} difference(s), {name}:")
            lines += [f"  call {call}: {path}: {a!r} != {b!r}"[:400]
                      for call, path, a, b in result[kind][:10]]
    lines += ["spec: " + json.dumps(spec), "program:", render(spec)]
    return "\n".join(lines)


def fallback_cause(message: str) -> str:
    """A CompileWarning's cause, without the program's names and lines."""
    text = message.split(": ", 2)[-1] if message.startswith("autojit.compile") else message
    return text.split(" (")[0].split(" at ")[0][:120]


def main(argv: list | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--out", default="-")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--show", action="store_true", help="print the program of --first")
    options = parser.parse_args(argv)
    if options.show:
        spec = random_spec(options.first)
        print(report(spec, outcome(spec, not options.no_torch)))
        return
    sink = sys.stdout if options.out == "-" else open(options.out, "a")  # noqa: SIM115
    totals = collections.Counter()
    causes = collections.Counter()
    for seed in range(options.first, options.first + options.examples):
        spec = random_spec(seed)
        try:
            result = outcome(spec, not options.no_torch)
        except Exception:  # the harness itself: reported, not fatal
            sink.write(json.dumps({"seed": seed, "harness": traceback.format_exc()[-600:]})
                       + "\n")
            totals["harness"] += 1
            continue
        totals["programs"] += 1
        totals["seconds"] += result["seconds"]
        if result["warnings"]:
            totals["fell back"] += 1
            causes[fallback_cause(result["warnings"][0])] += 1
        for kind in ("compiled", "torch"):
            if result[kind]:
                totals[f"differ from {'eager' if kind == 'compiled' else 'torch'}"] += 1
                first = result[kind][0]
                sink.write(json.dumps({"seed": seed, "kind": kind,
                                       "first": [str(part)[:300] for part in first],
                                       "spec": spec}) + "\n")
                sink.flush()
    print(json.dumps({"totals": dict(totals), "fallbacks": dict(causes.most_common())},
                     indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
