"""Write docs/layout.md from the source tree: every package in layer order, every module with the
first line of its docstring.

    python tools/layout.py           # rewrite docs/layout.md
    python tools/layout.py --check   # exit 1 (and say what differs) when it is stale

The page is generated so that it cannot drift from the tree: tests/test_layout.py fails while
the committed page differs from what this script writes, and when a module has no docstring.
The packages are listed bottom to top, in the order of the layers import-linter checks
(pyproject.toml), which is also the order a program's data flows through them.
"""

from __future__ import annotations

import argparse
import ast
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "autojit"
PAGE = ROOT / "docs" / "layout.md"

# Bottom to top; sub-packages (of ops/, ir/, codegen/, nn/, ...) follow their parents.
PACKAGES = ["", "backends", "tensor", "interop", "ops", "ops/layout",
            "ops/elementwise", "ops/indexing", "ops/linalg", "ops/random", "ops/fft", "ops/sparse",
            "ops/special", "ops/nn", "autograd", "amp", "ir", "ir/passes",
            "compiler", "codegen", "codegen/schedule", "codegen/cpu", "codegen/cpu/llvm",
            "codegen/cpu/mathlib", "codegen/cpu/gemm", "codegen/cpu/convolution", "codegen/cuda",
            "cuda", "distributed", "distributed/nn", "distributed/rpc", "distributed/tensor",
            "distributed/fsdp", "distributed/_composable", "distributed/_composable/fsdp",
            "distributed/checkpoint", "nn", "nn/functional", "nn/activation", "nn/loss",
            "nn/pooling", "nn/attention", "nn/modules", "nn/parallel",
            "nn/utils", "optim", "utils", "utils/benchmark", "utils/data", "utils/data/_utils",
            "utils/data/datapipes", "utils/data/datapipes/iter", "utils/_sympy",
            "utils/tensorboard", "testing", "distributions", "distributions/discrete",
            "distributions/continuous", "distributions/multivariate", "distributions/derived",
            "cpu", "_dynamo", "signal", "func", "jit", "fx", "fx/experimental", "fx/passes",
            "fx/passes/infra", "drop_in",
            "drop_in/onnx", "drop_in/functorch", "drop_in/_functorch", "drop_in/multiprocessing",
            "_subclasses", "ao",
            "ao/quantization"]

INTRODUCTION = """\
# Source layout

The package lives in `src/autojit/`. Its packages form layers: each imports only from the
layers below it, imports inside functions included, which `lint-imports` checks against the
contracts in `pyproject.toml` (docs/notes/layers.md says how a lower layer reaches a higher one
at run time). Bottom to top, which is also the order a program's data flows through them:

```
config | backends > tensor > interop > ops > autograd > amp > ir > compiler > codegen
  > cuda > distributed > nn | utils | testing | distributions | cpu | _dynamo | signal
  > optim
  > func | jit | fx > drop_in
```

A tensor is made (`tensor/`), an op on it is dispatched through the registry and run, or traced
into a graph (`ops/`, `ir/`), recorded for autograd and differentiated (`autograd/`), and cast
by autocast inside an autocast region (`ops/autocast.py`; `amp/` holds the context managers and
the gradient scaler); a compiled function's graph goes through the compile stages (`compiler/`)
to the code generators (`codegen/`) and, for GPU tensors, the CUDA runtime (`cuda/`).
`distributed/` (process groups and collectives over MPI) sits above them, `nn/`, `utils/` (whose
DistributedDataParallel and DistributedSampler use its process groups), `testing/`,
`distributions/`, `cpu/` (torch.cpu's device module), `_dynamo/` (torch._dynamo's names on
autojit's compiler) and `signal/` (torch.signal's window functions) on top, `optim/` above them
(its swa_utils averages nn modules), and `func/` (torch.func's transforms, which reach into nn),
`jit.py` (torch.jit's names on autojit's compiler) and `fx/` (torch.fx's symbolic tracing of
modules into graphs) above them; `drop_in/` (autojit standing in for `import torch`) is the top,
which nothing imports. Every module opens with a docstring saying what it holds and where it
sits in this flow; its first sentence is shown below.

This page is written by `python tools/layout.py` from the tree; `tests/test_layout.py` fails
when it is stale.
"""

OUTSIDE = """\
## Outside the package

- `tests/`: the test suite (`python -m pytest`); `tests/opinfo/` holds the op table.
- `examples/`: complete programs (docs/examples.md).
- `bench/`: the benchmarks behind docs/performance.md (`python bench/report.py`).
- `tools/`: the documentation site's hooks (mkdocs_hooks.py), the generators of this page, of
  the API reference and of the example runs docs/examples.md quotes (layout.py,
  api_reference.py, examples_page.py), cuda_ptx_check.py, which compiles every
  CUDA kernel a workload launches for a GPU on a machine without one (docs/notes/cuda.md),
  erfc_table.py, which writes the compiled erfc's coefficient table
  (docs/notes/special-functions.md), and erf_table.py, which writes the compiled erf's
  (docs/notes/cpu-codegen.md).
- `docs/`: this site; `docs/notes/` holds the design notes that code cites.
"""


def summary(path: Path) -> str:
    """The first sentence of a module's docstring (its first paragraph, up to a full stop)."""
    docstring = ast.get_docstring(ast.parse(path.read_text()))
    if not docstring:
        raise SystemExit(f"{path.relative_to(ROOT)} has no docstring")
    paragraph = " ".join(docstring.strip().split("\n\n")[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[:end + 1]


def package_section(package: str) -> list[str]:
    folder = PACKAGE / package if package else PACKAGE
    init = folder / "__init__.py"
    title = f"`autojit/{package}/`" if package else "`autojit/` (the top level)"
    lines = [f"## {title}", "", textwrap.fill(summary(init), 96) if package else
             textwrap.fill("The public namespace, torch's names, the environment flags and "
                           "thread settings (config.py), and the top-level modules torch has: "
                           "random, accelerator, types.", 96), ""]
    modules = sorted(path for path in folder.glob("*.py") if path.name != "__init__.py")
    if package == "":
        modules = [init, *modules]
    width = max((len(path.name) for path in modules), default=0) + 2
    lines.append("```")
    for path in modules:
        wrapped = textwrap.wrap(summary(path), max(100 - width, 40)) or [""]
        lines.append(f"{path.name:<{width}}{wrapped[0]}")
        lines.extend(" " * width + more for more in wrapped[1:])
    lines += ["```", ""]
    return lines


def render() -> str:
    listed = {PACKAGE / package for package in PACKAGES}
    found = {init.parent for init in PACKAGE.rglob("__init__.py")}
    missing = sorted(str(path.relative_to(PACKAGE)) for path in found - listed)
    if missing:
        raise SystemExit(f"tools/layout.py: packages missing from PACKAGES: {missing}")
    lines = [INTRODUCTION]
    for package in PACKAGES:
        lines += package_section(package)
    lines.append(OUTSIDE)
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report a stale page")
    options = parser.parse_args(argv)
    text = render()
    if options.check:
        if PAGE.read_text() != text:
            print("docs/layout.md is stale: run python tools/layout.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
