"""Printing inside a compiled function: the values of each call, printed when the call runs.

While a function is traced its tensors have no values, so `print(loss)` or
`print(f"loss {loss:.4f}")` cannot print them then. Instead (as `jax.debug.print` does):

- formatting a symbolic tensor (`str`, `repr`, f-strings, `format`) gives a *token*, a short
  string standing for "this value, formatted so", and makes the value a "print" output of the
  graph;
- `print` itself is intercepted while tracing (on the tracing thread only): each call, tokens
  or not, becomes a print effect of the executable and prints nothing now;
- every run of the executable replays its print effects in order, after its other side
  effects, with each token replaced by that run's value formatted as eager formats it.

So a compiled function prints on every call what eager prints. A token that ends up anywhere
but in a `print` call (a log message, a string the function returns or stores) cannot be
replayed: the trace stops there with a graph break naming the line that formatted the tensor.
"""

from __future__ import annotations

import builtins
import re
import threading

# The format spec of a formatted `.tolist()`: printed as the Python list.
LIST_SPEC = "\0tolist"
_TOKEN = "\u27e8autojit tensor {}\u27e9"
_TOKEN_PATTERN = re.compile("\u27e8autojit tensor (\\d+)\u27e9")


class Formatted:
    """How one token's value is formatted: its output name, format spec (None: the repr; a
    string: `format(value.item(), spec)`, as a one-element tensor formats), the autograd
    suffix eager's repr shows (`grad_fn=<MulBackward0>`, or ""), and where the user's code
    formatted it."""

    __slots__ = ("output", "spec", "history", "location")

    def __init__(self, output: str, spec: str, history: str | None, location):
        self.output, self.spec, self.history, self.location = output, spec, history, location


class PrintCapture:
    """Installed around a trace: collects formatted tensors and print calls."""

    def __init__(self):
        self.formatted: list[Formatted] = []
        self.effects: list = []  # (texts, sep, end, file, flush)
        self.consumed: set = set()
        self._thread = threading.get_ident()
        self._original = None

    def token(self, output: str, spec: str | None, history: str, location) -> str:
        self.formatted.append(Formatted(output, spec, history, location))
        return _TOKEN.format(len(self.formatted) - 1)

    def __enter__(self):
        self._original = builtins.print
        original, capture = self._original, self

        def traced_print(*args, sep=" ", end="\n", file=None, flush=False):
            if threading.get_ident() != capture._thread:
                return original(*args, sep=sep, end=end, file=file, flush=flush)
            texts = [str(arg) for arg in args]
            for text in (*texts, str(sep), str(end)):
                capture.consumed.update(int(n) for n in _TOKEN_PATTERN.findall(text))
            capture.effects.append((texts, sep, end, file, flush))
            return None

        builtins.print = traced_print
        return self

    def __exit__(self, *exc) -> None:
        builtins.print = self._original

    def escaped(self):
        """The first formatted tensor whose token did not reach a print call, or None."""
        for number, formatted in enumerate(self.formatted):
            if number not in self.consumed:
                return formatted
        return None


def replay_prints(effects: list, formatted: list, values: dict) -> None:
    """Print a run's print effects: `values` maps an output name to that run's Tensor."""
    if not effects:
        return
    texts_of: dict = {}

    def text(match) -> str:
        number = int(match.group(1))
        found = texts_of.get(number)
        if found is None:
            entry = formatted[number]
            found = texts_of[number] = format_value(values[entry.output], entry.spec,
                                                    entry.history)
        return found

    for texts, sep, end, file, flush in effects:
        print(*(_TOKEN_PATTERN.sub(text, item) for item in texts), sep=sep, end=end,
              file=file, flush=flush)


def format_value(tensor, spec: str | None, history: str) -> str:
    """The tensor as eager formats it: its repr (with the autograd suffix it had while
    traced), or `format(tensor.item(), spec)` for a 0-d tensor in an f-string."""
    if spec == LIST_SPEC:
        return str(tensor.tolist())
    if spec is not None:
        return tensor.item().__format__(spec)
    from ..tensor.printing import tensor_repr

    return tensor_repr(tensor, history=history)
