"""Convolution as primitives: the forward product and its two backward products, for 1-, 2- and
3-d convolutions with strides, padding, dilation and groups.

nn.functional's conv1d/2d/3d (nn/functional/conv.py) check their arguments and bind
`convolution` (x (N, C, *S), weight (O, C / groups, *K) -> (N, O, *S_out)); its VJP is the
other two:

- `convolution_backward_input` (grad (N, O, *S_out), weight -> (N, C, *S)), the input's
  gradient: the transposed convolution of grad with the weight;
- `convolution_backward_weight` (x, grad -> (O, C / groups, *K)), the weight's gradient: the
  correlation of x with grad, summed over the batch.

All three are bilinear, and each one's derivative in either operand is another of the three,
so every order differentiates: with F = convolution, I = backward_input and W =
backward_weight, <F(x, w), g> = <x, I(g, w)> = <w, W(x, g)>. With a bias, `convolution_bias`
(x, weight, bias) is the product and the bias in one call and one node, torch's
ConvolutionBackward0; compiled code sees the product and the add (a Decomposition). The
attrs are normalized by nn.functional: `stride`, `dilation` (a tuple per spatial dim),
`padding` (a (left, right) pair per spatial dim, zeros), `groups`, and `input_size` or
`kernel_size` for the backward ones.

The NumPy impls (the reference) extract the windows as a strided view and run one matmul per
group; where codegen has installed a native routine (`NATIVE`: codegen/cpu/convolution/__init__.py,
float32 and float64 on AVX-512), eager calls run it instead, the same code compiled steps
run, so eager and compiled results agree to the bit (docs/notes/convolution.md). Each
lowering is an Extern of its own routine, which the CPU schedule runs natively.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ...tensor.tensor import Tensor
from ..complex_rules import conj
from ..dtype_rules import rule_promote
from ..lowering import Decomposition, Extern
from ..registry import bind, define_op

# Set by codegen (codegen/cpu/convolution/__init__.py, installed by codegen/__init__.py):
# NATIVE(kind, first, second, attrs) -> the result, or None where it has no routine for them
# (the dtype, the layout, the host). kind: "forward", "input" or "weight".
NATIVE = None


# ---- shapes -------------------------------------------------------------------------------------

def output_sizes(sizes, kernel, stride, padding, dilation) -> tuple:
    """The spatial sizes of a convolution's output (they may be 0 or less for a kernel larger
    than the padded input, which the shape rule rejects)."""
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1
                 for n, k, s, (lo, hi), d in zip(sizes, kernel, stride, padding, dilation,
                                                 strict=True))


def _check_operands(name, data_shape, weight_shape, attrs):
    spatial = len(attrs["stride"])
    if len(data_shape) != spatial + 2 or len(weight_shape) != spatial + 2:
        raise ValueError(f"{name}: expected {spatial + 2}-d operands, got shapes "
                         f"{list(data_shape)} and {list(weight_shape)}")
    groups = attrs["groups"]
    if groups <= 0 or weight_shape[0] % groups:
        raise ValueError(f"{name}: weight of shape {list(weight_shape)} does not split into "
                         f"{groups} groups")
    return spatial


def _forward_shape(x, w, *, stride, padding, dilation, groups):
    attrs = {"stride": stride, "groups": groups}
    _check_operands("convolution", x, w, attrs)
    if x[1] != w[1] * groups:
        raise ValueError(f"convolution: input of shape {list(x)} has {x[1]} channels, the "
                         f"weight of shape {list(w)} with groups={groups} expects "
                         f"{w[1] * groups}")
    sizes = output_sizes(x[2:], w[2:], stride, padding, dilation)
    if any(size <= 0 for size in sizes):
        raise ValueError(f"convolution: the kernel {list(w[2:])} (dilation {list(dilation)}) "
                         f"is larger than the padded input {list(x[2:])}")
    return (x[0], w[0], *sizes)


def _input_shape(g, w, *, stride, padding, dilation, groups, input_size):
    _check_operands("convolution_backward_input", g, w, {"stride": stride, "groups": groups})
    expected = output_sizes(input_size, w[2:], stride, padding, dilation)
    if g[1] != w[0] or tuple(g[2:]) != expected:
        raise ValueError(f"convolution_backward_input: gradient of shape {list(g)} does not "
                         f"fit the weight {list(w)} and input size {list(input_size)}")
    return (g[0], w[1] * groups, *input_size)


def _weight_shape(x, g, *, stride, padding, dilation, groups, kernel_size):
    spatial = len(stride)
    if len(x) != spatial + 2 or len(g) != spatial + 2 or x[0] != g[0] or \
            groups <= 0 or x[1] % groups or g[1] % groups or \
            tuple(g[2:]) != output_sizes(x[2:], kernel_size, stride, padding, dilation):
        raise ValueError(f"convolution_backward_weight: input of shape {list(x)} and gradient "
                         f"of shape {list(g)} do not fit kernel {list(kernel_size)} with "
                         f"groups={groups}")
    return (g[1], x[1] // groups, *kernel_size)


# ---- the NumPy reference ----------------------------------------------------------------------

def _padded(x: np.ndarray, padding) -> np.ndarray:
    if not any(lo or hi for lo, hi in padding):
        return x
    return np.pad(x, [(0, 0), (0, 0), *padding])


def _columns(x: np.ndarray, kernel, stride, padding, dilation, groups) -> np.ndarray:
    """The windows of x as (N, groups, C / groups * taps, positions), a contiguous copy: the
    im2col matrix of each image and group, rows in the weight's (channel, kernel offset)
    order."""
    padded = _padded(x, padding)
    sizes = output_sizes(x.shape[2:], kernel, stride, padding, dilation)
    strides = padded.strides
    spatial = len(kernel)
    windows = np.lib.stride_tricks.as_strided(
        padded, (*padded.shape[:2], *kernel, *sizes),
        (*strides[:2], *(strides[2 + i] * dilation[i] for i in range(spatial)),
         *(strides[2 + i] * stride[i] for i in range(spatial))), writeable=False)
    batch, channels = x.shape[:2]
    return windows.reshape(batch, groups, channels // groups * math.prod(kernel),
                           math.prod(sizes))


def _forward_impl(x, w, *, stride, padding, dilation, groups):
    if NATIVE is not None:
        found = NATIVE("forward", x, w, {"stride": stride, "padding": padding,
                                         "dilation": dilation, "groups": groups})
        if found is not None:
            return found
    columns = _columns(x, w.shape[2:], stride, padding, dilation, groups)
    kernels = w.reshape(groups, w.shape[0] // groups, -1)
    result = np.matmul(kernels, columns)  # (N, groups, O / groups, positions)
    sizes = output_sizes(x.shape[2:], w.shape[2:], stride, padding, dilation)
    return result.reshape(x.shape[0], w.shape[0], *sizes)


def _input_impl(g, w, *, stride, padding, dilation, groups, input_size):
    if NATIVE is not None:
        found = NATIVE("input", g, w, {"stride": stride, "padding": padding,
                                       "dilation": dilation, "groups": groups,
                                       "input_size": input_size})
        if found is not None:
            return found
    batch, out_channels = g.shape[:2]
    kernel = w.shape[2:]
    kernels = w.reshape(groups, out_channels // groups, -1)
    # The positions counted, not inferred with -1: NumPy cannot infer a size of an empty
    # array (a batch of 0).
    grads = g.reshape(batch, groups, out_channels // groups, math.prod(g.shape[2:]))
    # (N, groups, C / groups * taps, positions): each window's gradient
    columns = np.matmul(kernels.swapaxes(1, 2), grads)
    channels = w.shape[1] * groups
    columns = columns.reshape(batch, channels, *kernel, *g.shape[2:])
    padded = np.zeros((batch, channels, *(n + lo + hi for n, (lo, hi) in
                                          zip(input_size, padding, strict=True))),
                      np.result_type(g, w))
    for offset in itertools.product(*(range(k) for k in kernel)):
        window = tuple(slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n in
                       zip(offset, dilation, stride, g.shape[2:], strict=True))
        padded[(slice(None), slice(None), *window)] += columns[(slice(None), slice(None),
                                                                *offset)]
    inside = tuple(slice(lo, lo + n) for (lo, _), n in zip(padding, input_size, strict=True))
    return padded[(slice(None), slice(None), *inside)].copy()


def _weight_impl(x, g, *, stride, padding, dilation, groups, kernel_size):
    if NATIVE is not None:
        found = NATIVE("weight", x, g, {"stride": stride, "padding": padding,
                                        "dilation": dilation, "groups": groups,
                                        "kernel_size": kernel_size})
        if found is not None:
            return found
    columns = _columns(x, kernel_size, stride, padding, dilation, groups)
    batch, out_channels = g.shape[:2]
    grads = g.reshape(batch, groups, out_channels // groups, math.prod(g.shape[2:]))
    # One product per image, summed over the batch.
    per_image = np.matmul(grads, columns.swapaxes(2, 3))
    return per_image.sum(0).reshape(out_channels, x.shape[1] // groups, *kernel_size)


# ---- the primitives ---------------------------------------------------------------------------

def _geometry(attrs: dict) -> dict:
    return {name: attrs[name] for name in ("stride", "padding", "dilation", "groups")}


def _forward(x, w, geometry) -> Tensor:
    return bind(CONVOLUTION, (x, w), geometry)


def _input(g, w, geometry, input_size) -> Tensor:
    return bind(CONVOLUTION_INPUT, (g, w), {**geometry, "input_size": tuple(input_size)})


def _weight(x, g, geometry, kernel_size) -> Tensor:
    return bind(CONVOLUTION_WEIGHT, (x, g), {**geometry, "kernel_size": tuple(kernel_size)})


def _sizes(ctx, index: int) -> tuple:
    """The spatial sizes of input `index` of the node (one that needs a gradient, so its
    shape is in input_meta even where its value was not saved)."""
    return tuple(ctx.input_meta[index][0][2:])


# On complex operands each VJP takes the conjugate of the operand it does not differentiate:
# for a bilinear B(a, b) with <B(a, b), u> = <a, P(u, b)> = <b, Q(a, u)>, torch's gradients (the
# conjugate Wirtinger derivatives) are P(u, conj(b)) and Q(conj(a), u). conj returns a real
# operand itself.

def _forward_vjp(ctx, upstream):
    x, w = ctx.inputs
    geometry = _geometry(ctx.attrs)
    needs = ctx.needs_input_grad
    return (_input(upstream, conj(w), geometry, _sizes(ctx, 0)) if needs[0] else None,
            _weight(conj(x), upstream, geometry, _sizes(ctx, 1)) if needs[1] else None)


def _input_vjp(ctx, upstream):
    # <I(g, w), u> = <g, F(u, w)> = <w, W(u, g)>
    g, w = ctx.inputs
    geometry = _geometry(ctx.attrs)
    needs = ctx.needs_input_grad
    return (_forward(upstream, conj(w), geometry) if needs[0] else None,
            _weight(upstream, conj(g), geometry, _sizes(ctx, 1)) if needs[1] else None)


def _weight_vjp(ctx, upstream):
    # <W(x, g), v> = <g, F(x, v)> = <x, I(g, v)>
    x, g = ctx.inputs
    geometry = _geometry(ctx.attrs)
    needs = ctx.needs_input_grad
    return (_input(conj(g), upstream, geometry, _sizes(ctx, 0)) if needs[0] else None,
            _forward(conj(x), upstream, geometry) if needs[1] else None)


def _bilinear_jvp(apply):
    """The JVP of a bilinear op: apply(dx, y) + apply(x, dy)."""
    def jvp(inputs, tangents, out, attrs):
        result = None
        if tangents[0] is not None:
            result = apply(tangents[0], inputs[1], attrs)
        if tangents[1] is not None:
            moved = apply(inputs[0], tangents[1], attrs)
            result = moved if result is None else result + moved
        return result
    return jvp


def _fold_into_groups(tensor: Tensor, size: int, leading: bool) -> Tensor:
    """A batched operand (B, N, C, *S) as (N, B * C, *S) (`leading` False: the batch goes
    into the channels), or a batched weight (B, O, ...) as (B * O, ...)."""
    if leading:
        return tensor.reshape((size * tensor.shape[1], *tensor.shape[2:]))
    moved = tensor.movedim(0, 1)
    return moved.reshape((moved.shape[0], size * moved.shape[2], *moved.shape[3:]))


def _unfold_channels(result: Tensor, size: int) -> Tensor:
    """(N, B * C, *S) -> (B, N, C, *S)."""
    shape = (result.shape[0], size, result.shape[1] // size, *result.shape[2:])
    return result.reshape(shape).movedim(1, 0)


def _batch_rule(layouts: tuple, result_leading: bool):
    """vmap: every operand batched (the unbatched ones expanded) and the batch folded into the
    groups: B convolutions of `groups` groups are one of B * groups groups. `layouts` says per
    operand whether it is a weight (batch first) or data (batch into the channels)."""
    from .. import batching

    def rule(op, inputs, flags, attrs, size):
        inputs = batching.all_batched(inputs, flags, size)
        folded = tuple(_fold_into_groups(x, size, leading)
                       for x, leading in zip(inputs, layouts, strict=True))
        result = bind(op, folded, {**attrs, "groups": attrs["groups"] * size})
        if result_leading:
            return result.reshape((size, result.shape[0] // size, *result.shape[1:]))
        return _unfold_channels(result, size)

    return rule


# The routines the CPU schedule runs natively (codegen/schedule/conv_steps.py), one per
# product.
_FORWARD = Extern("convolution_forward", ("data", "data"))
_INPUT = Extern("convolution_input_grad", ("data", "data"))
_WEIGHT = Extern("convolution_weight_grad", ("data", "data"))


def torch_padding(amounts: tuple) -> tuple:
    """The padding torch's node shows: one amount per dim where both sides pad alike (torch
    pads an uneven 'same' before its convolution, which then pads nothing)."""
    if all(left == right for left, right in amounts):
        return tuple(left for left, _ in amounts)
    return (0,) * len(amounts)


# What the node of a convolution shows as torch's (`_saved_input`, `_saved_padding`, ...).
_SHOWN = {"input": 0, "weight": 1,
          "padding": lambda ctx, saved, raw: torch_padding(ctx.attrs["padding"]),
          "output_padding": lambda ctx, saved, raw: (0,) * len(ctx.attrs["stride"]),
          "transposed": lambda ctx, saved, raw: False}

CONVOLUTION = define_op(
    name="convolution", arity=2, shape=_forward_shape, dtype=rule_promote, impl=_forward_impl,
    vjp=_forward_vjp, saves=((0, 1), (1, 0)), lowering=_FORWARD,
    jvp=_bilinear_jvp(lambda x, w, attrs: _forward(x, w, _geometry(attrs))),
    batch=_batch_rule((False, True), False), static_vjp=True,
    grad_name="ConvolutionBackward0", complex=True,
    # (no bias: convolution_bias below has one; torch's (0,) here)
    saved_names={**_SHOWN, "bias_sym_sizes_opt": lambda ctx, saved, raw: (0,)})
CONVOLUTION_INPUT = define_op(
    name="convolution_backward_input", arity=2, shape=_input_shape, dtype=rule_promote,
    impl=_input_impl, vjp=_input_vjp, saves=((0, 1), (1, 0)), lowering=_INPUT,
    jvp=_bilinear_jvp(lambda g, w, attrs: _input(g, w, _geometry(attrs),
                                                  attrs["input_size"])),
    batch=_batch_rule((False, True), False), static_vjp=True,
    grad_name="ConvolutionBackwardBackward0", complex=True)
CONVOLUTION_WEIGHT = define_op(
    name="convolution_backward_weight", arity=2, shape=_weight_shape, dtype=rule_promote,
    impl=_weight_impl, vjp=_weight_vjp, saves=((0, 1), (1, 0)), lowering=_WEIGHT,
    jvp=_bilinear_jvp(lambda x, g, attrs: _weight(x, g, _geometry(attrs),
                                                   attrs["kernel_size"])),
    batch=_batch_rule((False, False), True), static_vjp=True,
    grad_name="ConvolutionBackwardBackward0", complex=True)


# ---- with a bias --------------------------------------------------------------------------------

def _channels(bias, spatial: int):
    """A bias (O,) shaped to add to (N, O, *S): (O, 1, ...)."""
    return bias.reshape((bias.shape[0],) + (1,) * spatial)


def _bias_impl(x, w, b, **attrs):
    # the convolution, then the bias added as the composite adds it
    return np.add(_forward_impl(x, w, **attrs), _channels(b, len(attrs["stride"])))


def _bias_composite(x, w, b, **attrs):
    return _forward(x, w, attrs) + _channels(b, len(attrs["stride"]))


def _bias_vjp(ctx, upstream):
    x, w, _ = ctx.inputs
    geometry = _geometry(ctx.attrs)
    needs = ctx.needs_input_grad
    # the bias's first, as the composite's backward reaches it first: a compiled schedule
    # then fuses its sum with the gradient's producer
    bias = _bias_grad(upstream) if needs[2] else None
    return (_input(upstream, conj(w), geometry, _sizes(ctx, 0)) if needs[0] else None,
            _weight(conj(x), upstream, geometry, _sizes(ctx, 1)) if needs[1] else None, bias)


def _bias_grad(upstream):
    # summed keeping the dims, then reshaped, as the engine un-broadcasts the composite's bias
    summed = upstream.sum(dim=(0, *range(2, upstream.ndim)), keepdim=True)
    return summed.reshape((upstream.shape[1],))


def _bias_jvp(inputs, tangents, out, attrs):
    result = _bilinear_jvp(lambda x, w, attrs: _forward(x, w, _geometry(attrs)))(
        inputs[:2], tangents[:2], out, attrs)
    if tangents[2] is not None:
        moved = _channels(tangents[2], len(attrs["stride"]))
        result = moved if result is None else result + moved
    return result


# torch's one node for a convolution and its bias (ConvolutionBackward0, with three edges):
# eagerly the product and the bias in one call; compiled code sees both (a Decomposition).
CONVOLUTION_BIAS = define_op(
    name="convolution_bias", arity=3,
    shape=lambda x, w, b, **attrs: _forward_shape(x, w, **attrs), dtype=rule_promote,
    impl=_bias_impl, vjp=_bias_vjp, saves=((0, 1), (1, 0)),
    lowering=Decomposition(_bias_composite), jvp=_bias_jvp,
    batch=_batch_rule((False, True, True), False), static_vjp=True,
    grad_name="ConvolutionBackward0", complex=True,
    # (the bias's length: the output's channels)
    saved_names={**_SHOWN, "bias_sym_sizes_opt": lambda ctx, saved, raw: (
        ctx._out_meta[0][1],)})


def convolution(x: Tensor, weight: Tensor, stride: tuple, padding: tuple, dilation: tuple,
                groups: int, bias: Tensor | None = None) -> Tensor:
    """The cross-correlation of a batched x (N, C, *S) with weight (O, C / groups, *K), plus
    `bias` (O,) per output channel when given; padding is a (left, right) pair of zeros per
    spatial dim. nn.functional's conv functions check their arguments and call this."""
    attrs = {"stride": tuple(int(s) for s in stride),
             "padding": tuple((int(lo), int(hi)) for lo, hi in padding),
             "dilation": tuple(int(d) for d in dilation), "groups": int(groups)}
    if bias is None:
        return bind(CONVOLUTION, (x, weight), attrs)
    return bind(CONVOLUTION_BIAS, (x, weight, bias), attrs)
