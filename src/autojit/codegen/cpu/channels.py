"""Native loops over (N, C, *) arrays with a value per channel: the elementwise passes of the
eager batch normalization routines (ops/nn/batch_norm.py's NATIVE), each one loop instead of two
to five NumPy calls and the temporaries between them.

Each routine makes the same float operations as the NumPy calls it replaces, in the same
order and rounding (no fused multiply-adds: the IR has no `contract` flags), so its results
are those calls' bits: eager batch norm keeps the composite's values
(tests/test_batch_norm_primitives.py). The sums between the passes stay NumPy's
(`reduction.sum_array`, the sum primitive's own), which decide the rest of the bits.

A routine is `i32 f(ptr argument, i64 part)` as the native workers call a part of a job
(workers.py), its argument the words (elements..., channels..., outputs..., n, c, inner,
parts): for each of the part's images and each channel, a loop over the channel's `inner`
contiguous elements, which LLVM vectorizes. Large arrays are split by images over the cores;
each element's operations are the same whichever core makes them. Each routine is a module of
its own, compiled like a kernel on first use and kept in the kernel disk cache
(helper_modules.py); the first use of a dtype starts the other routines on the compile threads
(about 17 ms each on the Zen 5 machine, 124 ms as one module), so that a first training step's
backward finds its routines made.
"""

from __future__ import annotations

import math

import numpy as np

from . import workers

_TYPES = {np.dtype(np.float32): ("float", "f32"), np.dtype(np.float64): ("double", "f64")}
# Arrays smaller than this, or channels of fewer elements per image, stay with NumPy: the
# results are the same bits either way, the native call only costs more there.
MIN_ELEMENTS = 4096
MIN_INNER = 8

# name -> (elementwise inputs, per-channel inputs, outputs, body). The body's lines compute
# values from the loaded names (`x`, `mean`, ...) with `{op}` placeholders for the float ops;
# each output is the value of its name.
ROUTINES = {
    # (x - mean) * scale [* weight] [+ bias]: _normalized_impl
    "normalize": (("x",), ("mean", "scale"), ("out",),
                  ("centered = fsub x, mean", "out = fmul centered, scale")),
    "normalize_weight": (("x",), ("mean", "scale", "weight"), ("out",),
                         ("centered = fsub x, mean", "scaled = fmul centered, scale",
                          "out = fmul scaled, weight")),
    "normalize_bias": (("x",), ("mean", "scale", "bias"), ("out",),
                       ("centered = fsub x, mean", "scaled = fmul centered, scale",
                        "out = fadd scaled, bias")),
    "normalize_weight_bias": (("x",), ("mean", "scale", "weight", "bias"), ("out",),
                              ("centered = fsub x, mean", "scaled = fmul centered, scale",
                               "weighted = fmul scaled, weight",
                               "out = fadd weighted, bias")),
    # (x - mean)^2: _statistics_impl's squares
    "squares": (("x",), ("mean",), ("out",),
                ("centered = fsub x, mean", "out = fmul centered, centered")),
    # _backward_impl's first pass: the gradient times (x - mean) (and the gradient times the
    # weight first, where there is one)
    "moment_terms": (("grad", "x"), ("mean",), ("terms",),
                     ("centered = fsub x, mean", "terms = fmul grad, centered")),
    "moment_terms_weight": (("grad", "x"), ("mean", "weight"), ("weighted", "terms"),
                            ("weighted = fmul grad, weight", "centered = fsub x, mean",
                             "terms = fmul weighted, centered")),
    # _backward_impl's result: (grad - mean_grad) * scale - (x - mean) * (scale^3 moment)
    "normalization_backward": (("grad", "x"), ("mean", "mean_grad", "scale", "factor"),
                               ("out",),
                               ("shifted = fsub grad, mean_grad",
                                "scaled = fmul shifted, scale", "centered = fsub x, mean",
                                "share = fmul centered, factor", "out = fsub scaled, share")),
}

# From this many elements a loop's images are split over the cores (workers.py), as the
# convolutions' are.
PARALLEL_ELEMENTS = 1 << 16
_state: dict = {}  # (dtype, routine name) -> address, or None where none can be made


def _text(dtype: np.dtype, name: str) -> tuple:
    """The IR text of routine `name`'s module and its function's name."""
    scalar, short = _TYPES[dtype]
    elements, channels, outputs, body = ROUTINES[name]
    symbol = f"autojit_channels_{short}_{name}"
    pointers = [*elements, *channels, *outputs]
    lines = [f"define i32 @{symbol}(ptr %argument, i64 %part) {{", "entry:"]
    for index, word in enumerate([*pointers, "n", "c", "inner", "parts"]):
        kind = "ptr" if index < len(pointers) else "i64"
        suffix = "_base" if index < len(pointers) else ""
        lines += [f"  %{word}_word = getelementptr i64, ptr %argument, i64 {index}",
                  f"  %{word}{suffix} = load {kind}, ptr %{word}_word"]
    # This part's images: [part * n / parts, (part + 1) * n / parts).
    lines += ["  %first_n = mul i64 %part, %n", "  %first = sdiv i64 %first_n, %parts",
              "  %next_part = add i64 %part, 1", "  %last_n = mul i64 %next_part, %n",
              "  %last = sdiv i64 %last_n, %parts", "  %empty = icmp sge i64 %first, %last",
              "  br i1 %empty, label %done, label %image", "image:",
              "  %i = phi i64 [%first, %entry], [%i_next, %image_end]",
              "  br label %channel", "channel:",
              "  %j = phi i64 [0, %image], [%j_next, %channel_end]"]
    for pointer in channels:
        lines += [f"  %{pointer}_at = getelementptr {scalar}, ptr %{pointer}_base, i64 %j",
                  f"  %{pointer} = load {scalar}, ptr %{pointer}_at"]
    lines += ["  %plane = mul i64 %i, %c", "  %row_index = add i64 %plane, %j",
              "  %row = mul i64 %row_index, %inner"]
    for pointer in (*elements, *outputs):
        lines.append(f"  %{pointer}_row = getelementptr {scalar}, ptr %{pointer}_base, "
                     "i64 %row")
    lines += ["  br label %loop", "loop:",
              "  %k = phi i64 [0, %channel], [%k_next, %loop]"]
    for pointer in elements:
        lines += [f"  %{pointer}_p = getelementptr {scalar}, ptr %{pointer}_row, i64 %k",
                  f"  %{pointer} = load {scalar}, ptr %{pointer}_p"]
    for line in body:
        target, expression = (part.strip() for part in line.split("="))
        operation, operands = expression.split(" ", 1)
        left, right = (f"%{operand.strip()}" for operand in operands.split(","))
        lines.append(f"  %{target} = {operation} {scalar} {left}, {right}")
    for pointer in outputs:
        lines += [f"  %{pointer}_q = getelementptr {scalar}, ptr %{pointer}_row, i64 %k",
                  f"  store {scalar} %{pointer}, ptr %{pointer}_q"]
    lines += ["  %k_next = add i64 %k, 1", "  %k_more = icmp slt i64 %k_next, %inner",
              "  br i1 %k_more, label %loop, label %channel_end", "channel_end:",
              "  %j_next = add i64 %j, 1", "  %j_more = icmp slt i64 %j_next, %c",
              "  br i1 %j_more, label %channel, label %image_end", "image_end:",
              "  %i_next = add i64 %i, 1", "  %i_more = icmp slt i64 %i_next, %last",
              "  br i1 %i_more, label %image, label %done", "done:", "  ret i32 0", "}"]
    return "\n".join(lines), symbol


def _function(dtype: np.dtype, name: str):
    """The address of routine `name` for `dtype`, or None where no native code can be made;
    the first ask of a dtype starts its other routines on the compile threads."""
    def build():
        from .helper_modules import prefetch_module  # there: compiled_routines imported it

        if not any(made[0] == dtype for made in _state):
            for other in ROUTINES:
                if other != name:
                    text, symbol = _text(dtype, other)
                    prefetch_module(text, [symbol], ("channels", text))
        text, symbol = _text(dtype, name)
        return text, {name: symbol}

    found = workers.compiled_routines(_state, (dtype, name), build, "channels")
    return None if found is None else found[name]


def run(name: str, elements: list, channels: list):
    """The outputs (fresh arrays shaped like elements[0]) of routine `name` over the
    (N, C, *) arrays `elements` and the (C,) arrays `channels`, or None where the routine does
    not take them (dtype, layout, size): the caller then makes NumPy's calls."""
    x = elements[0]
    dtype = x.dtype
    if dtype not in _TYPES or x.ndim < 2 or x.size < MIN_ELEMENTS:
        return None
    inner = math.prod(x.shape[2:])
    if inner < MIN_INNER:
        return None
    shape = x.shape
    for array in elements:
        if array.__class__ is not np.ndarray or array.dtype != dtype or \
                array.shape != shape or not array.flags.c_contiguous:
            return None
    for array in channels:
        if array.__class__ is not np.ndarray or array.dtype != dtype or \
                array.shape != (shape[1],) or not array.flags.c_contiguous:
            return None
    function = _function(dtype, name)
    if function is None:
        return None
    outputs = [np.empty(shape, dtype) for _ in ROUTINES[name][2]]
    native = workers.shared()
    parts = 1
    if native is not None and x.size >= PARALLEL_ELEMENTS:
        parts = max(1, min(shape[0], native.parts))
    argument = np.array([workers.data_address(array) for array in
                         (*elements, *channels, *outputs)] + [shape[0], shape[1], inner, parts],
                        np.int64)
    workers.run_routine(native, function, argument, parts, f"channel loop {name}")
    return outputs
