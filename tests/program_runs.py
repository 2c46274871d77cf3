"""Running a random training program eagerly and compiled, and comparing what each call left.

`run(spec, compiled)` renders the program (random_programs.py), writes it to a file (so that
its functions have source, as a user's do), and executes it in a fresh namespace with the step
wrapped by `autojit.compile` or left as it is. After every call, `record` takes a snapshot of
everything the program can see: the returned value, every parameter (values, dtype, shape,
strides, requires_grad, `_version`) with its `.grad` (None or the tensor, its strides and
contiguity), buffers, the optimizer's state_dict and the parameters it holds, the scheduler's
state, the Python state the step keeps (stats dict with its key order, lists, hook log),
tensors the caller kept, the call's arguments (requires_grad, `.grad`, values, version), the
text printed and logged so far and the warnings raised so far (CompileWarnings apart).

`differences(eager, compiled)` lists where two runs disagree, each as "call N: path: eager
value != compiled value"; a call that raised compares the exception's type and message.
`check(spec)` runs both and fails with the program's source when they disagree and no
CompileWarning came before (a warned fallback may differ; a silent one may not).

The command line runs many programs drawn from `random.Random(seed)` and sorts the failures
by where they first disagree; `--minimize` shrinks each failing program:

    PYTHONPATH=src python tests/program_runs.py --examples 2000 --first 0 --out /tmp/fuzz.jsonl
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import sys
import tempfile
import time
import warnings

import numpy as np

import autojit
from autojit import CompileWarning
from autojit.tensor import once

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_programs  # noqa: E402
from random_programs import random_spec, render, standalone  # noqa: E402

TOLERANCE = {"float64": 1e-9, "float32": 2e-5}


def tensor_state(t) -> tuple:
    array = np.array(t.detach().numpy(), copy=True)
    return ("tensor", str(t.dtype), tuple(t.shape), tuple(t.stride()), t.is_contiguous(),
            t.requires_grad, array)


def value_state(value, depth: int = 0):
    """A copy of `value` that later calls cannot change, in a form `differences` walks."""
    if depth > 6:
        return ("deep",)
    if isinstance(value, autojit.Tensor):
        return tensor_state(value)
    if isinstance(value, BaseException):
        return ("raised", type(value).__name__, str(value).splitlines()[0] if str(value)
                else "")
    if type(value).__name__.startswith("Sym"):  # a SymInt or SymFloat out of a trace
        return ("symbolic", type(value).__name__, str(value))
    if isinstance(value, dict):
        return ("dict", [(_key(key), value_state(item, depth + 1))
                         for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [value_state(item, depth + 1) for item in value])
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if callable(value):
        return ("callable",)
    return ("object", type(value).__name__)


def _key(key) -> str:
    text = repr(key)
    return f"<symbolic {type(key).__name__}> {text}" if type(key).__name__.startswith(
        "Sym") else text


def leaks(value, path: str = "") -> list:
    """Paths of symbolic values (sizes or floats of a trace) in a snapshot: never allowed,
    whether or not a CompileWarning came first."""
    if isinstance(value, tuple) and value and value[0] == "symbolic":
        return [path]
    if isinstance(value, tuple) and value and value[0] == "dict":
        return [leak for key, item in value[1]
                for leak in ([f"{path}[{key}]"] if key.startswith("<symbolic") else []) +
                leaks(item, f"{path}[{key}]")]
    if isinstance(value, tuple) and len(value) == 2 and value[0] in ("list", "tuple"):
        return [leak for index, item in enumerate(value[1])
                for leak in leaks(item, f"{path}[{index}]")]
    if isinstance(value, dict):
        return [leak for key, item in value.items()
                for leak in leaks(item, f"{path}.{key}" if path else key)]
    return []


def parameter_state(p) -> dict:
    grad = p.grad
    return {"value": tensor_state(p), "version": p._version,
            "grad": None if grad is None else tensor_state(grad)}


def _tensors(value) -> list:
    if isinstance(value, autojit.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return []


def aliases(value, known: dict) -> list:
    """For each tensor in `value`: the names of the known tensors it is ("is x") or shares
    memory with ("in x")."""
    found = []
    for t in _tensors(value):
        array = t.detach().numpy()
        found.append([("is " if t is other else "in ") + name for name, other in known.items()
                      if isinstance(other, autojit.Tensor) and (
                          t is other or np.shares_memory(array, other.detach().numpy()))])
    return found


def snapshot(namespace: dict, out, arguments, text: io.StringIO, caught: list) -> dict:
    model, opt = namespace["model"], namespace.get("opt")
    state = {"returned": value_state(out)}
    known = {"x": arguments[0], "y": arguments[1]}
    for name, p in model.named_parameters():
        known[name], known[f"{name}.grad"] = p, p.grad
    state["aliases"] = {"returned": aliases(out, known), "kept": aliases(namespace["kept"], known),
                        "history": aliases(namespace["history"], known)}
    for name, p in model.named_parameters():
        state[f"param {name}"] = parameter_state(p)
    for name, buffer in model.named_buffers():
        state[f"buffer {name}"] = value_state(buffer)
    state["extra"] = parameter_state(namespace["extra"])
    if opt is not None:
        for g, group in enumerate(opt.param_groups):
            for i, p in enumerate(group["params"]):
                state[f"opt param {g}.{i}"] = parameter_state(p)
        state["opt state_dict"] = value_state(opt.state_dict())
    if "sched" in namespace:
        state["sched state_dict"] = value_state(namespace["sched"].state_dict())
    for name in ("stats", "history", "hook_log", "kept", "errors", "FEATURES", "GAIN",
                 "STEPS"):
        state[name] = value_state(namespace[name])
    if "trainer" in namespace:
        state["trainer"] = value_state(dict(vars(namespace["trainer"])))
    for name in ("last_loss", "last_out", "training"):
        state[f"model.{name}"] = value_state(getattr(model, name, None))
    for name, argument in zip("xy", arguments):
        state[f"argument {name}"] = {"value": tensor_state(argument),
                                     "version": argument._version,
                                     "grad": value_state(argument.grad)}
    state["printed"] = text.getvalue()
    state["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught
                         if not issubclass(w.category, CompileWarning)]
    state["compile warnings"] = [str(w.message).splitlines()[0] for w in caught
                                 if issubclass(w.category, CompileWarning)]
    return state


def run(spec: dict, compiled: bool, directory: str | None = None):
    """The snapshots after each call, and the step (compiled or not)."""
    source = render(spec)
    # Warnings torch gives once per process are given again to each run.
    once.given.clear()
    with tempfile.TemporaryDirectory(dir=directory) as folder:
        path = os.path.join(folder, f"program_{spec['seed']}.py")
        with open(path, "w") as handle:
            handle.write(source)
        snapshots, text = [], io.StringIO()
        namespace = {"__name__": "random_program", "__file__": path,
                     "WRAP": autojit.compile if compiled else (lambda fn: fn)}
        with warnings.catch_warnings(record=True) as caught, \
                contextlib.redirect_stdout(text):
            warnings.simplefilter("always")
            namespace["record"] = lambda call, out, *arguments: snapshots.append(
                snapshot(namespace, out, arguments, text, caught))
            exec(compile(source, path, "exec"), namespace)  # noqa: S102
    return snapshots, namespace["step"]


def _close(a, b, tolerance: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    return type(a) is type(b) and a == b


def _describe(value) -> str:
    if isinstance(value, tuple) and value and value[0] == "tensor":
        return f"tensor({value[6].tolist()}, {value[1]}, stride={value[3]}, rg={value[5]})"
    text = repr(value)
    return text if len(text) < 300 else text[:300] + "..."


def _walk(a, b, path: str, tolerance: float, out: list) -> None:
    if isinstance(a, tuple) and a and a[0] == "tensor":
        if not (isinstance(b, tuple) and b and b[0] == "tensor"):
            out.append((path, _describe(a), _describe(b)))
            return
        for index, name in ((1, "dtype"), (2, "shape"), (3, "stride"), (4, "contiguous"),
                            (5, "requires_grad")):
            if a[index] != b[index]:
                out.append((f"{path}.{name}", a[index], b[index]))
                if index == 2:
                    return
        if a[6].dtype.kind == "f":
            equal = np.allclose(a[6], b[6], rtol=tolerance, atol=tolerance, equal_nan=True)
        else:
            equal = np.array_equal(a[6], b[6])
        if not equal:
            out.append((f"{path}.values", a[6].tolist(), b[6].tolist()))
        return
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            out.append((f"{path}.keys", list(a), list(b)))
        for key in a:
            if key in b:
                _walk(a[key], b[key], f"{path}.{key}" if path else key, tolerance, out)
        return
    if isinstance(a, tuple) and a and a[0] == "dict" and isinstance(b, tuple) and b and \
            b[0] == "dict":
        keys_a, keys_b = [k for k, _ in a[1]], [k for k, _ in b[1]]
        if keys_a != keys_b:
            out.append((f"{path}.keys", keys_a, keys_b))
        other = dict(b[1])
        for key, item in a[1]:
            if key in other:
                _walk(item, other[key], f"{path}[{key}]", tolerance, out)
        return
    if isinstance(a, tuple) and len(a) == 2 and a[0] in ("list", "tuple") and \
            isinstance(b, tuple) and len(b) == 2 and b[0] == a[0]:
        if len(a[1]) != len(b[1]):
            out.append((f"{path}.len", _describe(a), _describe(b)))
            return
        for index, (x, y) in enumerate(zip(a[1], b[1])):
            _walk(x, y, f"{path}[{index}]", tolerance, out)
        return
    if isinstance(a, str) and isinstance(b, str) and path == "printed":
        if a != b:
            out.append((path, a[-400:], b[-400:]))
        return
    if not _close(a, b, tolerance):
        out.append((path, _describe(a), _describe(b)))


def differences(spec: dict, eager: list, compiled: list) -> list:
    """(call, path, eager, compiled) for every place the two runs' snapshots disagree,
    compile warnings apart."""
    found = []
    if len(eager) != len(compiled):
        found.append((-1, "calls", len(eager), len(compiled)))
    for call, (a, b) in enumerate(zip(eager, compiled)):
        a = {key: item for key, item in a.items() if key != "compile warnings"}
        b = {key: item for key, item in b.items() if key != "compile warnings"}
        local = []
        _walk(a, b, "", TOLERANCE[spec["dtype"]], local)
        found += [(call,) + item for item in local]
    return found


def first_warned_call(compiled: list) -> int | None:
    for call, state in enumerate(compiled):
        if state["compile warnings"]:
            return call
    return None


def outcome(spec: dict, twice_eager: bool = False) -> dict:
    """Both runs of one program: its silent differences (before any CompileWarning), the call
    that warned first, and the compiled step's counts. twice_eager compares two eager runs."""
    started = time.perf_counter()
    eager, _ = run(spec, compiled=False)
    compiled, step = run(spec, compiled=not twice_eager)
    warned = first_warned_call(compiled)
    found = differences(spec, eager, compiled)
    silent = [item for item in found if warned is None or item[0] < warned]
    silent += [(call, f"{path} (a symbolic value leaked)", None, "symbolic")
               for call, state in enumerate(compiled) for path in leaks(state)
               if not any(item[0] == call and item[1] == path for item in silent)]
    counts = {"executables": 0, "compiled_calls": 0, "eager_calls": 0}
    if not twice_eager:
        stats = step.stats()
        counts = {"executables": len(step.executables), "compiled_calls": stats.compiled_calls,
                  "eager_calls": stats.eager_calls}
    messages = compiled[-1]["compile warnings"] if compiled else []
    return {"silent": silent, "warned_call": warned, "all": found, "warnings": messages,
            "seconds": time.perf_counter() - started, **counts}


def report(spec: dict, silent: list) -> str:
    lines = [f"{len(silent)} silent difference(s), compiled against eager:"]
    lines += [f"  call {call}: {path}: eager {a!r} != compiled {b!r}"
              for call, path, a, b in silent[:12]]
    lines += ["spec: " + json.dumps(spec), "program (standalone; run with and without "
              "--compile and diff):", standalone(spec)]
    return "\n".join(lines)


def check(spec: dict) -> dict:
    result = outcome(spec)
    assert not result["silent"], report(spec, result["silent"])
    return result


# ---- the command line: many programs, failures sorted, minimized ---------------------------------

def signature(item: tuple) -> str:
    """What a difference is about, without the call, the parameter name or list positions."""
    path = item[1]
    for prefix in ("param ", "opt param ", "buffer "):
        if path.startswith(prefix):
            path = prefix + path.split(".", 1)[-1] if "." in path else prefix
    parts = [part.split("[")[0] for part in path.split(".")]
    return ".".join(parts) + (" leaked" if path.endswith("leaked)") else "")


def main(argv: list | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--out", default="-")
    parser.add_argument("--minimize", action="store_true")
    parser.add_argument("--all", action="store_true",
                        help="draw what shows the unfixed classes too (random_programs.UNFIXED)")
    parser.add_argument("--eager-twice", action="store_true",
                        help="compare two eager runs instead (the harness's own determinism)")
    parser.add_argument("--show", action="store_true",
                        help="print the program of seed --first (minimized with --minimize)")
    options = parser.parse_args(argv)
    exclude = frozenset() if options.all else random_programs.UNFIXED_NAMES
    if options.show:
        spec = random_spec(options.first, exclude)
        result = outcome(spec)
        if options.minimize and result["silent"]:
            from program_shrink import shrink
            spec = shrink(spec, signature(result["silent"][0]))
            result = outcome(spec)
        print(report(spec, result["silent"]) if result["silent"] else standalone(spec))
        return
    sink = sys.stdout if options.out == "-" else open(options.out, "a")  # noqa: SIM115
    totals = {"examples": 0, "silent": 0, "warned": 0, "seconds": 0.0}
    for seed in range(options.first, options.first + options.examples):
        spec = random_spec(seed, exclude)
        try:
            result = outcome(spec, twice_eager=options.eager_twice)
        except Exception as error:  # the harness itself: reported, not fatal
            sink.write(json.dumps({"seed": seed, "harness": repr(error)}) + "\n")
            continue
        totals["examples"] += 1
        totals["seconds"] += result["seconds"]
        totals["warned"] += result["warned_call"] is not None
        if result["warned_call"] is not None:
            sink.write(json.dumps({"seed": seed, "warned": result["warnings"][:3],
                                   "after": [str(item)[:300] for item in result["all"][:3]]})
                       + "\n")
        if result["silent"]:
            totals["silent"] += 1
            first = result["silent"][0]
            drawn = random_programs.ingredients(spec)
            entry = {"seed": seed, "signature": signature(first),
                     "classes": [name for name, shows in random_programs.UNFIXED.items()
                                 if drawn & set(shows)],
                     "signatures": sorted({signature(item) for item in result["silent"]}),
                     "first": [str(part)[:300] for part in first], "spec": spec}
            if options.minimize:
                from program_shrink import shrink
                entry["minimal"] = shrink(spec, entry["signature"])
            sink.write(json.dumps(entry) + "\n")
            sink.flush()
    print(json.dumps(totals), file=sys.stderr)


if __name__ == "__main__":
    main()
