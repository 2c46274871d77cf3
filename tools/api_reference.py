"""Write the API reference pages that list everything: docs/api/tensor.md and docs/api/ops.md.

    python tools/api_reference.py           # rewrite both pages
    python tools/api_reference.py --check   # exit 1, naming the pages, when one is out of date

Why these pages are generated, where the rest of docs/api/ is rendered by mkdocstrings: griffe,
which collects what mkdocstrings renders, reads the source without running it, so of
`autojit.Tensor` it sees only the members written in the class body (26 of them). The op
methods, operators, conversions and in-place forms are attached when autojit is imported, from
the tables of autojit/ops/tensor_methods.py (and the hook methods from autograd/hooks.py), and
static analysis cannot see them. griffe's dynamic inspection would, but it imports the package
with sys.path narrowed to src/, where NumPy is not found; and one heading per member, some 170
of them, is no overview. So this script imports autojit and reads the live class: every public
member with its signature and the first paragraph of its docstring, one table row each, the
Python operators it supports, and the op functions of the top-level namespace grouped by the
families of `autojit.ops.functional.FAMILIES`.

tests/test_api_reference.py fails when a committed page differs from what this script writes
(so adding a method or an op without rerunning it fails CI) and when a public member of Tensor
or an op has no docstring.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import types
from pathlib import Path

import autojit
from autojit.ops import functional, tensor_methods

ROOT = Path(__file__).resolve().parent.parent
TENSOR_PAGE = ROOT / "docs" / "api" / "tensor.md"
OPS_PAGE = ROOT / "docs" / "api" / "ops.md"
HEADER = "<!-- Written by tools/api_reference.py from the imported package: do not edit. -->\n"

# How Python spells each protocol method Tensor defines, in the order the page lists them. `a`
# is a Python number on the left of a reflected operator.
PROTOCOL = {
    "__add__": "x + y", "__radd__": "a + x", "__sub__": "x - y", "__rsub__": "a - x",
    "__mul__": "x * y", "__rmul__": "a * x", "__truediv__": "x / y", "__rtruediv__": "a / x",
    "__floordiv__": "x // y", "__rfloordiv__": "a // x", "__mod__": "x % y",
    "__rmod__": "a % x", "__pow__": "x ** y", "__rpow__": "a ** x", "__matmul__": "x @ y",
    "__rmatmul__": "a @ x", "__neg__": "-x", "__pos__": "+x", "__abs__": "abs(x)",
    "__eq__": "x == y", "__ne__": "x != y", "__lt__": "x < y", "__le__": "x <= y",
    "__gt__": "x > y", "__ge__": "x >= y", "__and__": "x & y", "__rand__": "a & x",
    "__or__": "x | y", "__ror__": "a | x", "__xor__": "x ^ y", "__rxor__": "a ^ x",
    "__invert__": "~x", "__lshift__": "x << y", "__rlshift__": "a << x",
    "__rshift__": "x >> y", "__rrshift__": "a >> x", "__iand__": "x &= y", "__ior__": "x |= y",
    "__ixor__": "x ^= y", "__ilshift__": "x <<= y", "__irshift__": "x >>= y",
    "__getitem__": "x[key]", "__setitem__": "x[key] = value", "__contains__": "value in x",
    "__iadd__": "x += y", "__isub__": "x -= y", "__imul__": "x *= y",
    "__itruediv__": "x /= y", "__ipow__": "x **= y", "__len__": "len(x)",
    "__iter__": "for row in x", "__bool__": "bool(x)", "__float__": "float(x)",
    "__complex__": "complex(x)",
    "__int__": "int(x)", "__index__": "range(x)", "__array__": "np.asarray(x)",
    "__array_wrap__": "np.sin(x)",
    "__dlpack__": "from_dlpack(x)", "__dlpack_device__": "x.__dlpack_device__()",
    "__cuda_array_interface__": "numba.cuda.as_cuda_array(x)", "__repr__": "repr(x)",
    "__format__": 'f"{x:.3f}"', "__reduce_ex__": "pickle.dumps(x)",
    "__deepcopy__": "copy.deepcopy(x)", "__rdiv__": "x.__rdiv__(a)",
    "__torch_function__": "cls.__torch_function__(func, types, args, kwargs)",
    "__delattr__": "del x.name",
    "__dir__": "dir(x)",
}
# Dunder names of Tensor's namespace that are machinery rather than something to call.
HIDDEN = {
    "__module__", "__qualname__", "__doc__", "__slots__", "__dict__", "__weakref__", "__new__",
    "__init__", "__annotations__", "__array_priority__", "__hash__", "__str__",
    "__firstlineno__", "__static_attributes__",
}


# ---- reading the package --------------------------------------------------------------------

def summary(obj) -> str | None:
    """The first paragraph of obj's docstring on one line, or None when it has none."""
    doc = inspect.getdoc(obj)
    if not doc or not doc.strip():
        return None
    return " ".join(doc.strip().split("\n\n")[0].split())


def signature(function, drop_first: bool = False) -> str:
    """`(a, b=1, *, c=None)`: the parameters without annotations, less self when asked."""
    try:
        found = inspect.signature(function)
    except (TypeError, ValueError):
        return "(...)"
    parameters = list(found.parameters.values())[1 if drop_first else 0:]
    parameters = [p.replace(annotation=inspect.Parameter.empty) for p in parameters]
    return str(found.replace(parameters=parameters, return_annotation=inspect.Signature.empty))


def slug(title: str) -> str:
    """The anchor MkDocs' toc extension gives a heading."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", title).strip().lower())


def ops() -> list[tuple[str, str, list[tuple[str, object]]]]:
    """(family, anchor, [(name, function)]) for the op functions, in FAMILIES order."""
    return [(family, slug(family), [(name, getattr(functional, name)) for name in names])
            for family, names in functional.FAMILIES.items()]


def alias_of(name: str, function) -> str | None:
    """The op that `name` is another name for (clip -> clamp), or None."""
    other = getattr(function, "__name__", name)
    if other != name and other in functional.__all__ and getattr(functional, other) is function:
        return other
    return None


def op_links() -> dict[int, str]:
    """id(function) -> a Markdown link to its op on ops.md, under its own name (not an alias)."""
    links = {}
    for _, anchor, members in ops():
        for name, function in members:
            if alias_of(name, function) is None:
                # A method is the op itself; the top-level form may wrap it (out=), and the op
                # may wrap its body (an autocast policy): every function of the chain links.
                form = function
                while form is not None:
                    links.setdefault(id(form), f"[`autojit.{name}`](ops.md#{anchor})")
                    form = getattr(form, "__wrapped__", None)
    return links


def tensor_members() -> dict[str, list[str]]:
    """Tensor's public names by kind: attributes, methods and in-place methods."""
    kinds: dict[str, list[str]] = {"attributes": [], "methods": [], "in-place": []}
    for name in sorted((n for n in dir(autojit.Tensor) if not n.startswith("_")), key=str.lower):
        member = inspect.getattr_static(autojit.Tensor, name)
        if isinstance(member, (property, types.MemberDescriptorType)) or not callable(member):
            kinds["attributes"].append(name)
        else:
            kinds["in-place" if name.endswith("_") else "methods"].append(name)
    return kinds


def protocol_names() -> list[str]:
    """The protocol methods the page lists, PROTOCOL's order; an unknown one is an error."""
    defined = {name for name in vars(autojit.Tensor) if name.startswith("__")} - HIDDEN
    unknown = sorted(defined - set(PROTOCOL))
    if unknown:
        raise SystemExit(f"tools/api_reference.py: Tensor defines {', '.join(unknown)}; add "
                         "them to PROTOCOL (how Python spells the call) or to HIDDEN")
    return [name for name in PROTOCOL if name in defined]


def implementation(name: str):
    """The function a Tensor method calls with the tensor first: its table entry, or itself."""
    return (tensor_methods.METHODS.get(name) or tensor_methods.INPLACE.get(name)
            or inspect.getattr_static(autojit.Tensor, name))


def missing_docstrings() -> list[str]:
    """Public members of Tensor, protocol methods and ops without a docstring."""
    missing = []
    for kind, names in tensor_members().items():
        missing += [f"Tensor.{name} ({kind})" for name in names
                    if summary(getattr(autojit.Tensor, name)) is None]
    missing += [f"Tensor.{name}" for name in protocol_names()
                if summary(getattr(autojit.Tensor, name)) is None]
    missing += [f"autojit.{name} (op)" for name in functional.__all__
                if summary(getattr(functional, name)) is None]
    return missing


# ---- writing the pages ------------------------------------------------------------------------

def cell(text: str | None) -> str:
    """Text for a table cell: a pipe would end the cell, except inside a code span, where the
    table extension keeps it (and would show an escaping backslash)."""
    parts = re.split(r"(`[^`]*`)", text or "")
    return "".join(part if part.startswith("`") else part.replace("|", "\\|") for part in parts)


def table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return lines + [""]


def tensor_page() -> str:
    tensor = autojit.Tensor
    links = op_links()
    kinds = tensor_members()
    protocol = protocol_names()
    lines = [
        HEADER,
        "# `autojit.Tensor`",
        "",
        summary(tensor),
        "",
        "This page lists every public member of `autojit.Tensor` (class "
        "`autojit.tensor.tensor.Tensor`), read from the class once autojit is imported: "
        f"{len(kinds['attributes'])} attributes, {len(kinds['methods'])} methods, "
        f"{len(kinds['in-place'])} in-place methods and {len(protocol)} operators and Python "
        "protocols. Most methods are the [op functions](ops.md) with the tensor first: "
        "`x.exp()` is `autojit.exp(x)`, and the last column names the op. Creating tensors, "
        "dtypes and the legacy constructors (`autojit.Tensor(2, 3)`) are on the "
        "[autojit](autojit.md) page; the [autograd guide](../autograd.md) explains "
        "`grad`, `grad_fn` and `backward`.",
        "",
        "## Attributes",
        "",
    ]
    lines += table(("Attribute", "Description"), [
        (f"`{name}`", summary(getattr(tensor, name))) for name in kinds["attributes"]])

    def method_rows(names):
        rows = []
        for name in names:
            function = implementation(name)
            drop = not isinstance(function, (staticmethod, classmethod))
            rows.append((f"`{name}{signature(function, drop)}`",
                         summary(getattr(tensor, name)), links.get(id(function), "")))
        return rows

    lines += ["## Methods", ""]
    lines += table(("Method", "Description", "Op"), method_rows(kinds["methods"]))
    lines += ["## In-place methods", "",
              "They write the result into the tensor, bump its version counter (views see the "
              "new values) and return it; autograd records them as torch does.", ""]
    lines += table(("Method", "Description", "Op"), method_rows(kinds["in-place"]))
    lines += ["## Operators and Python protocols", "",
              "`x` and `y` are tensors (`y` may also be a Python number); `a` is a number on the "
              "left of an operator.", ""]
    lines += table(("Syntax", "Method", "Description", "Op"), [
        (f"`{PROTOCOL[name]}`", f"`{name}`", summary(getattr(tensor, name)),
         links.get(id(tensor_methods.OPERATORS.get(name)), "")) for name in protocol])
    return "\n".join(lines).rstrip("\n") + "\n"


def ops_page() -> str:
    families = ops()
    count = sum(len(members) for _, _, members in families)
    lines = [
        HEADER,
        "# Ops",
        "",
        f"The {count} op functions of the top-level namespace, in {len(families)} families: "
        "`autojit.exp(x)`, `autojit.sum(x, dim=1)`, `autojit.cat([x, y])`. Each runs on "
        "tensors eagerly and traces into [compiled](compile.md) functions, and the "
        "differentiable ones record autograd history; most are also "
        "[Tensor methods](tensor.md) (`x.exp()`, `x.sum(dim=1)`). In the signatures `x` and "
        "`y` are tensors, and where an elementwise op takes two, one of them may be a Python "
        "number. Each op follows the torch function of its name; the "
        "[differences from torch](../differences.md) page lists where autojit departs from it. "
        "The neural-network functions (`softmax`, `cross_entropy`, `conv2d`, ...) are in "
        "[autojit.nn.functional](nn-functional.md).",
        "",
    ]
    for family, _, members in families:
        lines += [f"## {family}", ""]
        rows = []
        for name, function in members:
            alias = alias_of(name, function)
            rows.append((f"`{name}{signature(function)}`",
                         f"Another name for `{alias}`." if alias else summary(function)))
        lines += table(("Op", "Description"), rows)
    return "\n".join(lines).rstrip("\n") + "\n"


def pages() -> dict[Path, str]:
    return {TENSOR_PAGE: tensor_page(), OPS_PAGE: ops_page()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a page differs from what would be written")
    arguments = parser.parse_args(argv)
    stale = []
    for path, text in pages().items():
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path)
        if not arguments.check:
            path.write_text(text)
    relative = ", ".join(str(path.relative_to(ROOT)) for path in stale)
    if arguments.check:
        if stale:
            print(f"out of date: {relative}; run python tools/api_reference.py", file=sys.stderr)
        return 1 if stale else 0
    print(f"wrote {relative}" if stale else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
