"""Tensor printing in torch's format: ``tensor([1., 2.], requires_grad=True)``, and the print
options that shape it (`autojit.set_printoptions`).

Tensor.__repr__ (tensor.py) calls `tensor_repr`. The rules are torch's (torch/_tensor_str.py):
one formatter per tensor picks integer style (``1.``), fixed point with `precision` decimals,
or scientific notation from the finite nonzero values (or as `sci_mode` says), and pads every
element to one width; rows wrap at `linewidth` columns; tensors over `threshold` elements show
`edgeitems` items at each end of every dim around ``...``. The defaults are 4, 80, 1000 and 3.
Symbolic tensors (while tracing) have no values and print shape and dtype.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np

from . import dtypes
from .state import TANGENT_OF, state


@dataclasses.dataclass
class PrintOptions:
    """torch's print options (process-wide, as torch's PRINT_OPTS)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


OPTIONS = PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Set how tensors print, as torch.set_printoptions: `precision` (decimals, 4),
    `threshold` (elements above which a tensor is summarized, 1000), `edgeitems` (items kept
    at each end of a summarized dim, 3), `linewidth` (80), `profile` ("default", "short" or
    "full", overridden by the others) and `sci_mode` (True or False forces scientific
    notation on or off; None, the default, chooses per tensor; every call sets it).

    >>> import autojit
    >>> autojit.set_printoptions(precision=2)
    >>> autojit.tensor([1.12345])
    tensor([1.12])
    >>> autojit.set_printoptions(threshold=5)
    >>> autojit.arange(10)
    tensor([0, 1, 2,  ..., 7, 8, 9])
    >>> autojit.set_printoptions(profile="default")
    >>> autojit.tensor([1.12345])
    tensor([1.1235])
    """
    if profile in _PROFILES:  # torch ignores a profile it does not know
        (OPTIONS.precision, OPTIONS.threshold, OPTIONS.edgeitems,
         OPTIONS.linewidth) = _PROFILES[profile]
    if precision is not None:
        OPTIONS.precision = precision
    if threshold is not None:
        OPTIONS.threshold = threshold
    if edgeitems is not None:
        OPTIONS.edgeitems = edgeitems
    if linewidth is not None:
        OPTIONS.linewidth = linewidth
    OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as a dict (torch._tensor_str.get_printoptions)."""
    return dataclasses.asdict(OPTIONS)


@contextlib.contextmanager
def printoptions(**options):
    """The print options set for a block and restored after it (torch._tensor_str's)."""
    saved = get_printoptions()
    set_printoptions(**options)
    try:
        yield
    finally:
        set_printoptions(**saved)


class _Formatter:
    """Chooses one style and width for every element of a tensor (torch's _Formatter)."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.precision = OPTIONS.precision
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(self._plain(value)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        magnitudes = np.abs(finite)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if OPTIONS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or (
                not self.int_mode and smallest < 1.0e-4)
        else:
            self.sci_mode = bool(OPTIONS.sci_mode)
        extra = 1 if self.int_mode and not self.sci_mode else 0  # the "." of "1."
        for value in finite.tolist():
            self.max_width = max(self.max_width, len(self._float_text(value)) + extra)

    @staticmethod
    def _plain(value) -> str:
        return str(value)

    def _float_text(self, value: float) -> str:
        if self.sci_mode:
            return f"{value:.{self.precision}e}"
        if self.int_mode:
            return f"{value:.0f}"
        return f"{value:.{self.precision}f}"

    def format(self, value) -> str:
        if self.floating:
            text = self._float_text(value)
            if self.int_mode and not self.sci_mode and math.isfinite(value):
                text += "."
        else:
            text = self._plain(value)
        return " " * (self.max_width - len(text)) + text


def _summarized(values: np.ndarray) -> np.ndarray:
    """The edge items of every long dim: the values the formatter sees when summarizing
    (none at all with edgeitems=0, where a tensor of 2 dims or more shows only ``...``)."""
    edge = OPTIONS.edgeitems
    if not edge:
        # torch's quirk: a vector's items [:0] and [-0:] are all of it.
        return values if values.ndim == 1 else values[(slice(0, 0),) * values.ndim]
    for axis, extent in enumerate(values.shape):
        if extent > 2 * edge:
            keep = list(range(edge)) + list(range(extent - edge, extent))
            values = np.take(values, keep, axis=axis)
    return values


class _ComplexFormatter:
    """torch's two formatters of a complex tensor, one for the real parts and one for the
    imaginary parts, each choosing its style from its own values: ``1.0000+2.0000j``."""

    def __init__(self, values: np.ndarray):
        self.real, self.imag = _Formatter(values.real), _Formatter(values.imag)
        # The width per element: both parts and the "j".
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value) -> str:
        real = self.real.format(value.real)
        imaginary = (self.imag.format(value.imag) + "j").lstrip()
        # a sign of its own (negative numbers, -0.) or a "+"
        return real + imaginary if imaginary[0] in "+-" else real + "+" + imaginary


def _vector(values: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    element_length = formatter.max_width + 2
    per_line = max(1, int(math.floor((OPTIONS.linewidth - indent) / element_length)))
    edge = OPTIONS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and values.shape[0] > 2 * edge:
        items = ([formatter.format(v) for v in values[:edge].tolist()] + [" ..."]
                 + [formatter.format(v) for v in values[values.shape[0] - edge:].tolist()])
    else:
        items = [formatter.format(v) for v in values.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    ndim = values.ndim
    if ndim == 0:
        return formatter.format(values.item())
    if ndim == 1:
        return _vector(values, indent, summarize, formatter)
    count, edge = values.shape[0], OPTIONS.edgeitems
    if summarize and count > 2 * edge:
        rows = ([_nested(values[i], indent + 1, summarize, formatter) for i in range(edge)]
                + ["..."]
                + [_nested(values[i], indent + 1, summarize, formatter)
                   for i in range(count - edge, count)])
    else:
        rows = [_nested(values[i], indent + 1, summarize, formatter) for i in range(count)]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def format_values(data: np.ndarray, indent: int) -> str:
    """The bracketed body of a non-empty tensor, as torch prints it."""
    if data.dtype == np.float16:  # torch formats half values through float32
        data = data.astype(np.float32)
    summarize = data.size > OPTIONS.threshold
    shown = _summarized(data) if summarize else data
    formatter = _ComplexFormatter(shown) if data.dtype.kind == "c" else _Formatter(shown)
    return _nested(data, indent, summarize, formatter)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_length + len(suffix) + 2 > OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_length = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_length += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _unnamed_dtypes() -> tuple:
    """The dtypes a printed tensor's values show, so that no dtype= is printed: the default
    dtype, its complex dtype, int64 and bool."""
    default = dtypes.get_default_dtype()
    return (default, default._complex, dtypes.int64, dtypes.bool_)


def tensor_repr(x, prefix: str | None = None, history: str | None = None,
                contents: str | None = None) -> str:
    """`history`: the autograd suffix to show instead of x's own (a compiled function prints a
    value with the grad_fn it had while traced, see ir/printing.py); `contents`: the body to
    show instead of x's values (torch._tensor_str._str_intern's tensor_contents). A subclass
    from outside autojit is printed under its class's name (`MyTensor([1., 2.])`), as torch
    prints one; autojit's own classes (Parameter's body, ...) print as `tensor(`."""
    if prefix is None:
        kind = type(x)
        prefix = "tensor(" if kind.__module__.partition(".")[0] == "autojit" else \
            f"{kind.__name__}("
    indent = len(prefix)
    suffixes = []
    dtype = x.dtype
    if contents is not None:
        body = contents
        if x._payload is not None and not x.is_meta and x._payload.size == 0 and \
                dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={dtype!r}")
        elif dtype not in _unnamed_dtypes():
            suffixes.append(f"dtype={dtype!r}")
    elif x._payload is None:
        body = f"<symbolic {x._value.dtype.short}{list(x._value.shape)}>"
        if dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
            suffixes.append(f"dtype={dtype!r}")
    elif x.is_meta:  # no values: the shape instead, as torch prints it
        body = "..."
        suffixes.extend(("device='meta'", f"size={tuple(x.shape)}"))
        if dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={dtype!r}")
    elif x._payload.size == 0:
        body = "[]"
        if x._payload.ndim != 1:
            suffixes.append(f"size={tuple(x._payload.shape)}")
        # An empty tensor has no values to show its type by, so any non-default dtype shows.
        if dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={dtype!r}")
    else:
        body = format_values(x._host("print"), indent)  # a CUDA tensor's values: copied back
        if not OPTIONS.edgeitems:
            suffixes.append(f"size={tuple(x._payload.shape)}")
        if dtype not in _unnamed_dtypes():
            suffixes.append(f"dtype={dtype!r}")
    if x._payload is not None and x.is_cuda:
        suffixes.insert(0, f"device='{x.device}'")
    if history is None and x._view_source is not None and x._counter is not None and \
            x._view_version != x._counter.value and x._refresh_view is not None:
        # a view whose base was written: torch's repr reads its grad_fn, which rebuilds its
        # history, or raises where torch forbids that (then printed as Invalid)
        try:
            x._refresh_view(x, strict=True)
        except RuntimeError:
            history = "grad_fn=<Invalid>"
    if history is not None:
        if history:
            suffixes.append(history)
    elif x.grad_fn is not None:
        suffixes.append(f"grad_fn=<{x.grad_fn.name()}>")
    elif x.requires_grad:
        suffixes.append("requires_grad=True")
    if state.forward_levels:  # a dual tensor shows its tangent, as torch prints it
        tangent = TANGENT_OF[0](x)
        if tangent is not None:
            suffixes.append(f"tangent={tangent!r}")
    return _add_suffixes(prefix + body, suffixes, indent)
