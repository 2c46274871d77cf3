"""Tensor printing in torch's format: ``tensor([1., 2.], requires_grad=True)``.

Tensor.__repr__ (tensor.py) calls `tensor_repr`. The rules are torch's (torch/_tensor_str.py,
default print options): one formatter per tensor picks integer style (``1.``), fixed point
with 4 decimals, or scientific notation from the finite nonzero values, and pads every element
to one width; rows wrap at 80 columns; tensors over 1000 elements show 3 edge items per dim
around ``...``. Symbolic tensors (while tracing) have no values and print shape and dtype.
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes

PRECISION = 4
THRESHOLD = 1000
EDGE_ITEMS = 3
LINE_WIDTH = 80


class _Formatter:
    """Chooses one style and width for every element of a tensor (torch's _Formatter)."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
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
        wide_range = largest / smallest > 1000.0 or largest > 1.0e8
        if self.int_mode:
            self.sci_mode = wide_range
            extra = 0 if self.sci_mode else 1  # the "." of "1."
        else:
            self.sci_mode = wide_range or smallest < 1.0e-4
            extra = 0
        for value in finite.tolist():
            self.max_width = max(self.max_width, len(self._float_text(value)) + extra)

    @staticmethod
    def _plain(value) -> str:
        return str(value)

    def _float_text(self, value: float) -> str:
        if self.sci_mode:
            return f"{value:.{PRECISION}e}"
        if self.int_mode:
            return f"{value:.0f}"
        return f"{value:.{PRECISION}f}"

    def format(self, value) -> str:
        if self.floating:
            text = self._float_text(value)
            if self.int_mode and not self.sci_mode and math.isfinite(value):
                text += "."
        else:
            text = self._plain(value)
        return " " * (self.max_width - len(text)) + text


def _summarized(values: np.ndarray) -> np.ndarray:
    """The edge items of every long dim: the values the formatter sees when summarizing."""
    for axis, extent in enumerate(values.shape):
        if extent > 2 * EDGE_ITEMS:
            keep = list(range(EDGE_ITEMS)) + list(range(extent - EDGE_ITEMS, extent))
            values = np.take(values, keep, axis=axis)
    return values


def _vector(values: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    element_length = formatter.max_width + 2
    per_line = max(1, (LINE_WIDTH - indent) // element_length)
    if summarize and values.shape[0] > 2 * EDGE_ITEMS:
        items = ([formatter.format(v) for v in values[:EDGE_ITEMS].tolist()] + [" ..."]
                 + [formatter.format(v) for v in values[-EDGE_ITEMS:].tolist()])
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
    count = values.shape[0]
    if summarize and count > 2 * EDGE_ITEMS:
        rows = ([_nested(values[i], indent + 1, summarize, formatter) for i in range(EDGE_ITEMS)]
                + ["..."]
                + [_nested(values[i], indent + 1, summarize, formatter)
                   for i in range(count - EDGE_ITEMS, count)])
    else:
        rows = [_nested(values[i], indent + 1, summarize, formatter) for i in range(count)]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def format_values(data: np.ndarray, indent: int) -> str:
    """The bracketed body of a non-empty tensor, as torch prints it."""
    if data.dtype == np.float16:  # torch formats half values through float32
        data = data.astype(np.float32)
    summarize = data.size > THRESHOLD
    formatter = _Formatter(_summarized(data) if summarize else data)
    return _nested(data, indent, summarize, formatter)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_length + len(suffix) + 2 > LINE_WIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_length = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_length += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(x, prefix: str = "tensor(", history: str | None = None) -> str:
    """`history`: the autograd suffix to show instead of x's own (a compiled function prints a
    value with the grad_fn it had while traced, see ir/printing.py)."""
    indent = len(prefix)
    suffixes = []
    dtype = x.dtype
    if x._data is None:
        body = f"<symbolic {x._value.dtype.short}{list(x._value.shape)}>"
        if dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
            suffixes.append(f"dtype={dtype!r}")
    elif x._data.size == 0:
        body = "[]"
        if x._data.ndim != 1:
            suffixes.append(f"size={tuple(x._data.shape)}")
        # An empty tensor has no values to show its type by, so any non-default dtype shows.
        if dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={dtype!r}")
    else:
        body = format_values(x._host("print"), indent)  # a CUDA tensor's values: copied back
        if dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
            suffixes.append(f"dtype={dtype!r}")
    if x._data is not None and x.is_cuda:
        suffixes.insert(0, f"device='{x.device}'")
    if history is not None:
        if history:
            suffixes.append(history)
    elif x.grad_fn is not None:
        suffixes.append(f"grad_fn=<{x.grad_fn.name()}>")
    elif x.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
