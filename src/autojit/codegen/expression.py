"""The expression language of the registry's elementwise ops, shared by both renderers.

Each elementwise primitive carries its scalar expression in its lowering
(`Elementwise("exp({0})")`: operands `{0}`, `{1}`, attributes `{name}`, numbers, calls,
arithmetic, comparisons and logic). `parse` turns a template into a tree of tuples and
`ExpressionWalker` walks it; a backend's subclass says what each node becomes: the CPU's
cpu/llvm_expression.StepEmitter emits LLVM IR, cuda/render.py's emits Python source for
numba.cuda. Two idioms are read as one operation each, because their NumPy meaning is not the
literal formula: `floor(a / b)` is floor division and `a - floor(a / b) * b` the floor modulo
(np.floor_divide and np.remainder, exact for ints and floats). Nothing here imports a backend's
libraries (llvmlite, numba).
"""

from __future__ import annotations

import functools
import re


class RenderError(TypeError):
    """A kernel a renderer cannot express (an unsupported dtype or construct)."""


# ---- the expression language ------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(\{\w+\}|\d+\.\d*|\d+|[A-Za-z_]\w*|&&|\|\||==|!=|<=|>=|[-+*/<>!(),])")
_LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/"))


@functools.cache
def parse(expression: str):
    """The expression as a tree of tuples: ("operand", i), ("attr", name), ("number", v),
    ("call", name, args), ("binary", op, a, b), ("unary", op, a)."""
    tokens, position = [], 0
    while position < len(expression.rstrip()):
        match = _TOKEN.match(expression, position)
        if match is None:
            raise RenderError(f"cannot parse expression {expression!r} at {position}")
        tokens.append(match.group(1))
        position = match.end()
    tokens.append(None)
    cursor = [0]

    def peek():
        return tokens[cursor[0]]

    def take(expected=None):
        token = tokens[cursor[0]]
        if expected is not None and token != expected:
            raise RenderError(f"expression {expression!r}: expected {expected!r}, got {token!r}")
        cursor[0] += 1
        return token

    def binary(level):
        if level == len(_LEVELS):
            return unary()
        left = binary(level + 1)
        while peek() in _LEVELS[level]:
            operator = take()
            left = ("binary", operator, left, binary(level + 1))
        return left

    def unary():
        if peek() in ("-", "!"):
            operator = take()
            return ("unary", operator, unary())
        return primary()

    def primary():
        token = take()
        if token is None:
            raise RenderError(f"expression {expression!r} ends early")
        if token == "(":
            inner = binary(0)
            take(")")
            return inner
        if token.startswith("{"):
            name = token[1:-1]
            return ("operand", int(name)) if name.isdigit() else ("attr", name)
        if token[0].isdigit():
            return ("number", float(token) if "." in token else int(token))
        if token[0].isalpha() or token[0] == "_":
            take("(")
            args = []
            while peek() != ")":
                args.append(binary(0))
                if peek() == ",":
                    take()
            take(")")
            return ("call", token, tuple(args))
        raise RenderError(f"expression {expression!r}: unexpected {token!r}")

    tree = binary(0)
    if peek() is not None:
        raise RenderError(f"expression {expression!r}: unexpected {peek()!r}")
    return tree


# ---- the expression walker ---------------------------------------------------------------------

class ExpressionWalker:
    """Walks one step's parsed expression; a backend's subclass says what each node becomes
    (`literal`, `unary`, `binary`, `call`, and the two division idioms of the module
    docstring, `floor_divide` and `remainder`)."""

    def __init__(self, step, operands):
        self.step = step
        self.operands = operands
        self.literal_dtype = step.compute_dtype or step.out_dtype

    def fail(self, message):
        raise RenderError(f"{self.step.op.name}: {message}")

    def emit(self, tree):
        kind = tree[0]
        if kind == "operand":
            return self.operands[tree[1]]
        if kind == "attr":
            if tree[1] not in self.step.attrs:
                self.fail(f"the expression names attribute {tree[1]!r}, which the step lacks")
            return self.literal(self.step.attrs[tree[1]])
        if kind == "number":
            return self.literal(tree[1])
        if kind == "unary":
            return self.unary(tree[1], self.emit(tree[2]))
        if kind == "call":
            name, args = tree[1], tree[2]
            if name == "floor" and len(args) == 1 and args[0][:2] == ("binary", "/"):
                return self.floor_divide(self.emit(args[0][2]), self.emit(args[0][3]))
            return self.call(name, [self.emit(arg) for arg in args])
        if kind == "binary":
            operator, left, right = tree[1:]
            if operator == "-" and right[:2] == ("binary", "*") and \
                    right[2] == ("call", "floor", (("binary", "/", left, right[3]),)):
                return self.remainder(self.emit(left), self.emit(right[3]))
            return self.binary(operator, self.emit(left), self.emit(right))
        self.fail(f"unknown expression node {tree!r}")

    def literal(self, value):
        raise NotImplementedError

    def unary(self, operator: str, value):
        raise NotImplementedError

    def binary(self, operator: str, left, right):
        raise NotImplementedError

    def call(self, name: str, arguments: list):
        raise NotImplementedError

    def floor_divide(self, left, right):
        raise NotImplementedError

    def remainder(self, left, right):
        raise NotImplementedError
