"""The eager Adam and AdamW update as one native loop: optim/adam.py's `_update_arrays` makes
thirteen NumPy calls per parameter, each a pass over the whole parameter, where this routine
reads the parameter, its gradient and its two moments once and writes them back once.

The routine makes the same float operations as those NumPy calls, in the same order and
rounding (the IR has no `contract` or fast-math flags, so no fused multiply-adds; sqrt and
division are IEEE's), with each Python number rounded to the parameters' dtype first as
NumPy's calls round it, so its results are theirs to the bit (tests/test_optim_eager_arrays.py
compares them). Per element, with the flags of the group:

    g = -grad                               (maximize)
    p = p * decay                           (decoupled weight decay: decay = 1 - lr * wd)
    g = g + p * wd                          (L2 weight decay)
    m = m + (g - m) * (1 - beta1)
    v = v * beta2 + (g * g) * (1 - beta2)   (the product added to v * beta2, both rounded)
    s = max(s, v), else s = v               (amsgrad: NaN kept, as np.maximum keeps it)
    p = p - m / (sqrt(s) / correction2 + eps) * scale

A routine is `i32 f(ptr argument, i64 part)`, as the native workers call a part of a job
(workers.py); its argument the words (p, m, v, s, grad, n, parts, then the eight scalars as
float64 bits: decay, wd, 1 - beta1, beta2, 1 - beta2, correction2, eps, scale). A part is a
range of whole cache lines of the arrays, so large parameters are split over the cores. One
module per (dtype, flags), compiled on first use and kept in the kernel disk cache.
"""

from __future__ import annotations

import numpy as np

from . import workers

_TYPES = {np.dtype(np.float32): ("float", "f32"), np.dtype(np.float64): ("double", "f64")}
# From this many elements a parameter's update is split over the cores.
PARALLEL_ELEMENTS = 1 << 15
SCALARS = ("decay", "wd", "omb1", "beta2", "omb2", "correction2", "eps", "scale")
_state: dict = {}  # (dtype, flags) -> address, or None where none can be made


def _text(dtype: np.dtype, flags: tuple) -> tuple:
    """The IR text of the routine for `dtype` and flags (maximize, decoupled, l2, amsgrad),
    and its function's name."""
    maximize, decoupled, l2, amsgrad = flags
    t, short = _TYPES[dtype]
    symbol = f"autojit_adam_{short}_{''.join('1' if flag else '0' for flag in flags)}"
    lines = [f"define i32 @{symbol}(ptr noalias %argument, i64 %part) {{", "entry:"]
    words = ["p", "m", "v", "s", "g", "n", "parts", *SCALARS]
    for index, word in enumerate(words):
        lines.append(f"  %{word}_word = getelementptr i64, ptr %argument, i64 {index}")
        if index < 5:
            lines.append(f"  %{word}_base = load ptr, ptr %{word}_word")
        elif index < 7:
            lines.append(f"  %{word} = load i64, ptr %{word}_word")
        else:
            lines.append(f"  %{word}_wide = load double, ptr %{word}_word")
            lines.append(f"  %{word} = fptrunc double %{word}_wide to {t}" if t == "float"
                         else f"  %{word} = fadd double %{word}_wide, -0.0")
    # This part's elements: [first, last), whole lines of 16 elements but for the end.
    lines += ["  %lines = add i64 %n, 15", "  %line_count = lshr i64 %lines, 4",
              "  %first_n = mul i64 %part, %line_count",
              "  %first_line = udiv i64 %first_n, %parts", "  %next = add i64 %part, 1",
              "  %last_n = mul i64 %next, %line_count", "  %last_line = udiv i64 %last_n, %parts",
              "  %first = shl i64 %first_line, 4", "  %last_lines = shl i64 %last_line, 4",
              "  %over = icmp ugt i64 %last_lines, %n",
              "  %last = select i1 %over, i64 %n, i64 %last_lines",
              "  %empty = icmp uge i64 %first, %last",
              "  br i1 %empty, label %done, label %loop", "loop:",
              "  %i = phi i64 [%first, %entry], [%i_next, %loop]"]
    for name in ("p", "m", "v", "g") + (("s",) if amsgrad else ()):
        lines += [f"  %{name}_at = getelementptr {t}, ptr %{name}_base, i64 %i",
                  f"  %{name}0 = load {t}, ptr %{name}_at"]
    grad = "%g0"
    if maximize:
        lines.append(f"  %g_neg = fneg {t} %g0")
        grad = "%g_neg"
    param = "%p0"
    if decoupled:
        lines.append(f"  %p_decayed = fmul {t} %p0, %decay")
        param = "%p_decayed"
    if l2:
        lines += [f"  %p_wd = fmul {t} %p0, %wd", f"  %g_l2 = fadd {t} {grad}, %p_wd"]
        grad = "%g_l2"
    lines += [f"  %m_diff = fsub {t} {grad}, %m0", f"  %m_step = fmul {t} %m_diff, %omb1",
              f"  %m1 = fadd {t} %m0, %m_step",
              f"  %v_kept = fmul {t} %v0, %beta2", f"  %g_sq = fmul {t} {grad}, {grad}",
              f"  %v_step = fmul {t} %g_sq, %omb2", f"  %v1 = fadd {t} %v_kept, %v_step"]
    second = "%v1"
    if amsgrad:  # np.maximum(s, v): s where s >= v or s is NaN, else v (NaN or larger)
        lines += [f"  %s_ge = fcmp oge {t} %s0, %v1", f"  %s_nan = fcmp uno {t} %s0, %s0",
                  "  %s_kept = or i1 %s_ge, %s_nan",
                  f"  %s1 = select i1 %s_kept, {t} %s0, {t} %v1"]
        second = "%s1"
    lines += [f"  %root = call {t} @llvm.sqrt.{short}({t} {second})",
              f"  %root_c = fdiv {t} %root, %correction2", f"  %den = fadd {t} %root_c, %eps",
              f"  %ratio = fdiv {t} %m1, %den", f"  %delta = fmul {t} %ratio, %scale",
              f"  %p1 = fsub {t} {param}, %delta",
              f"  store {t} %p1, ptr %p_at", f"  store {t} %m1, ptr %m_at",
              f"  store {t} %v1, ptr %v_at"]
    if amsgrad:
        lines.append(f"  store {t} %s1, ptr %s_at")
    lines += ["  %i_next = add i64 %i, 1", "  %more = icmp ult i64 %i_next, %last",
              "  br i1 %more, label %loop, label %done", "done:", "  ret i32 0", "}",
              f"declare {t} @llvm.sqrt.{short}({t})"]
    return "\n".join(lines), symbol


def _function(dtype: np.dtype, flags: tuple):
    """The address of the routine for `dtype` and `flags`, or None where no native code can be
    made (no llvmlite)."""
    def build():
        text, symbol = _text(dtype, flags)
        return text, {"adam": symbol}

    found = workers.compiled_routines(_state, (dtype, flags), build, "eager-adam")
    return None if found is None else found["adam"]


def adam(arrays: list, flags: tuple, scalars: tuple) -> bool:
    """Update arrays (param, exp_avg, exp_avg_sq, [max_exp_avg_sq,] grad), C-contiguous of one
    float dtype and size, in place by the routine for `flags` (maximize, decoupled, l2,
    amsgrad) with `scalars` (SCALARS' values, already of the arrays' dtype); False where there
    is no routine (the caller makes NumPy's calls)."""
    param = arrays[0]
    dtype = param.dtype
    if dtype not in _TYPES:
        return False
    function = _function(dtype, flags)
    if function is None:
        return False
    if not flags[3]:
        arrays = [*arrays[:3], arrays[0], arrays[3]]  # no maximum: a word the routine skips
    native = workers.shared()
    parts = 1
    if native is not None and param.size >= PARALLEL_ELEMENTS:
        parts = native.parts
    words = np.empty(7 + len(SCALARS), np.int64)
    words[:5] = [workers.data_address(array) for array in arrays]
    words[5], words[6] = param.size, parts
    words[7:].view(np.float64)[:] = scalars
    workers.run_routine(native, function, words, parts, "Adam update")
    return True
