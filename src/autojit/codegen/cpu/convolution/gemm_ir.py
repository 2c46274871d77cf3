"""The LLVM IR of the moves around a convolution computed as one matrix product (gemm.py):
the windows gathered into columns, a swap of an array's first two axes, and the columns'
gradients added back into an image. One module per dtype; each entry point is
`i32 f(argument, part)` as the native workers call a part (workers.py), its part's share of the
rows cut by channels_ir's `_share`.

- `gather`: col[c * taps + t, n * positions + p] = source[n, c, window[t, p]], or 0 where the
  tap reads the padding (window -1); the part's share of the k rows (c, t).
- `swap`: target[n, b, a, :] = source[n, a, b, :] for (N, A, B, inner) arrays; the part's
  share of the (n, b) rows.
- `scatter`: target[n, c, s] = the sum, over the entries e the table lists for s in order,
  of d[n * image_stride + c * channel_stride + e] (0 where none); the part's share of the
  (n, c) image channels. The order of each sum is the table's, whatever the parts.
"""

from __future__ import annotations

import numpy as np

from ..llvm.ir_text import Function
from .channels_ir import _share
from .ir import TYPES, load_words

GATHER_ARGUMENT = ("source", "col", "window", "images", "channels", "source_image",
                   "channel_size", "taps", "positions", "parts")
SWAP_ARGUMENT = ("source", "target", "batch", "outer", "middle", "inner", "parts")
SCATTER_ARGUMENT = ("d", "target", "starts", "entries", "images", "channels",
                    "channel_size", "channel_stride", "image_stride", "parts")
NAMES = ("gather", "swap", "scatter")


def symbol(dtype, name: str) -> str:
    return f"autojit_convgemm_{TYPES[np.dtype(dtype)][2]}_{name}"


def render_module(dtype) -> tuple:
    """(the IR text of the module of `dtype`, the names of its entry points)."""
    scalar = TYPES[np.dtype(dtype)][0]
    texts = [_gather(dtype, scalar), _swap(dtype, scalar), _scatter(dtype, scalar),
             "declare void @llvm.memcpy.p0.p0.i64(ptr noalias, ptr noalias, i64, i1)"]
    return "\n\n".join(texts) + "\n", [symbol(dtype, name) for name in NAMES]


def _gather(dtype, scalar: str) -> str:
    f = Function(f"define i32 @{symbol(dtype, 'gather')}(ptr %argument, i64 %part) {{")
    arg = load_words(f, "%argument", GATHER_ARGUMENT, ("source", "col", "window"))
    rows = f.binary("mul", arg["channels"], arg["taps"])
    columns = f.binary("mul", arg["images"], arg["positions"])
    start, stop = _share(f, rows, arg["parts"])
    with f.loop(start, stop, hint="k") as k:
        channel = f.binary("sdiv", k, arg["taps"])
        tap = f.binary("srem", k, arg["taps"])
        window = f.op(f"getelementptr i64, ptr {arg['window']}, "
                      f"i64 {f.binary('mul', tap, arg['positions'])}")
        row = f.element(scalar, arg["col"], f.binary("mul", k, columns))
        with f.loop(0, arg["images"], hint="n") as image:
            base = f.element(scalar, arg["source"], f.binary(
                "add", f.binary("mul", image, arg["source_image"]),
                f.binary("mul", channel, arg["channel_size"])))
            out = f.element(scalar, row, f.binary("mul", image, arg["positions"]))
            with f.loop(0, arg["positions"], hint="p") as position:
                at = f.word(window, position)
                inside = f.op(f"icmp sge i64 {at}, 0")
                safe = f.op(f"select i1 {inside}, i64 {at}, i64 0")
                value = f.op(f"load {scalar}, ptr {f.element(scalar, base, safe)}")
                kept = f.op(f"select i1 {inside}, {scalar} {value}, {scalar} 0.0")
                f.emit(f"store {scalar} {kept}, ptr {f.element(scalar, out, position)}")
    f.emit("ret i32 0")
    return f.text()


def _swap(dtype, scalar: str) -> str:
    f = Function(f"define i32 @{symbol(dtype, 'swap')}(ptr %argument, i64 %part) {{")
    arg = load_words(f, "%argument", SWAP_ARGUMENT, ("source", "target"))
    size = np.dtype(dtype).itemsize
    run = f.binary("mul", arg["inner"], size)
    plane = f.binary("mul", f.binary("mul", arg["outer"], arg["middle"]), arg["inner"])
    start, stop = _share(f, f.binary("mul", arg["batch"], arg["middle"]), arg["parts"])
    single = f.op(f"icmp eq i64 {arg['inner']}, 1")
    with f.loop(start, stop, hint="b") as row:
        image = f.binary("sdiv", row, arg["middle"])
        middle = f.binary("srem", row, arg["middle"])
        source = f.element(scalar, arg["source"], f.binary("mul", image, plane))
        target = f.element(scalar, arg["target"], f.binary("mul", image, plane))
        with f.loop(0, arg["outer"], hint="a") as outer:
            read = f.element(scalar, source, f.binary("mul", f.binary(
                "add", f.binary("mul", outer, arg["middle"]), middle), arg["inner"]))
            write = f.element(scalar, target, f.binary("mul", f.binary(
                "add", f.binary("mul", middle, arg["outer"]), outer), arg["inner"]))
            with f.when(single):  # a transposition: one element, not a call
                value = f.op(f"load {scalar}, ptr {read}")
                f.emit(f"store {scalar} {value}, ptr {write}")
            with f.when(f.op(f"xor i1 {single}, true")):
                f.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {write}, ptr {read}, "
                       f"i64 {run}, i1 false)")
    f.emit("ret i32 0")
    return f.text()


def _scatter(dtype, scalar: str) -> str:
    f = Function(f"define i32 @{symbol(dtype, 'scatter')}(ptr %argument, i64 %part) {{")
    arg = load_words(f, "%argument", SCATTER_ARGUMENT, ("d", "target", "starts", "entries"))
    count = f.binary("mul", arg["images"], arg["channels"])
    start, stop = _share(f, count, arg["parts"])
    sum_slot = f.stack(f"[1 x {scalar}]")
    with f.loop(start, stop, hint="nc") as image_channel:
        image = f.binary("sdiv", image_channel, arg["channels"])
        channel = f.binary("srem", image_channel, arg["channels"])
        base = f.element(scalar, arg["d"], f.binary(
            "add", f.binary("mul", channel, arg["channel_stride"]),
            f.binary("mul", image, arg["image_stride"])))
        out = f.element(scalar, arg["target"], f.binary("mul", image_channel,
                                                        arg["channel_size"]))
        with f.loop(0, arg["channel_size"], hint="s") as place:
            first = f.word(arg["starts"], place)
            last = f.word(arg["starts"], f.binary("add", place, 1))
            f.emit(f"store {scalar} 0.0, ptr {sum_slot}")
            with f.loop(first, last, hint="e") as entry:
                at = f.word(arg["entries"], entry)
                value = f.op(f"load {scalar}, ptr {f.element(scalar, base, at)}")
                before = f.op(f"load {scalar}, ptr {sum_slot}")
                f.emit(f"store {scalar} {f.op(f'fadd {scalar} {before}, {value}')}, "
                       f"ptr {sum_slot}")
            result = f.op(f"load {scalar}, ptr {sum_slot}")
            f.emit(f"store {scalar} {result}, ptr {f.element(scalar, out, place)}")
    f.emit("ret i32 0")
    return f.text()
