"""The layer families of autojit.nn as rows of small models, for the compiled training tests.

Each row builds a tiny model (parameters drawn from the seed the caller sets) and the inputs of
its training step. A model's output may be a tensor, a tuple of them (integer ones, such as
pooling indices, are skipped) or a PackedSequence; the step's loss is the sum of the mean
squares of its float outputs (a loss module's output is squared too). Layers without
parameters read a learned input (`Learned`), so every row trains something and the gradients
flowing through the layer reach a parameter.

The rows are built from either library (`rows(autojit)`, `rows(torch)`) with the same
parameter and buffer names; tests/test_nn_compiled_layers.py trains each row compiled, eagerly
and in torch from the same state and compares the three.
"""

from __future__ import annotations

import numpy as np

# Rows whose training steps draw random numbers (dropout, RReLU, gumbel_softmax): the same
# stream compiled and eagerly, but not torch's stream, so they are compared with torch in eval
# mode, where they draw nothing.
DRAWING = {"rnn", "scaled_dot_product_attention", "multihead_attention", "transformer_encoder",
           "activations_bounded", "dropouts"}


def rows(lib) -> dict:
    """Every row, by name, for `lib` (autojit or torch): (build the model, make the inputs from
    a NumPy generator). The models of both libraries have the same parameters and buffers under
    the same names, so one's state_dict loads into the other."""
    nn, F, rnn_utils = lib.nn, lib.nn.functional, lib.nn.utils.rnn

    class Learned(nn.Module):
        """A learned tensor of `shape` (drawn from the seed) fed to `body`, with the step's inputs
        after it."""

        def __init__(self, shape, body) -> None:
            super().__init__()
            self.x = nn.Parameter(lib.randn(*shape))
            self.body = body if isinstance(body, nn.Module) else Lambda(body)

        def forward(self, *inputs):
            return self.body(self.x, *inputs)

    class Lambda(nn.Module):
        """A function as a module; `modules` are registered so their parameters train."""

        def __init__(self, function, *modules) -> None:
            super().__init__()
            self.function = function
            self.parts = nn.ModuleList(modules)

        def forward(self, *inputs):
            return self.function(*self.parts, *inputs)

    class Branches(nn.Module):
        """Every module applied to the same input: a tuple of their outputs."""

        def __init__(self, *modules) -> None:
            super().__init__()
            self.branches = nn.ModuleList(modules)

        def forward(self, x):
            return tuple(branch(x) for branch in self.branches)

    def floats(rng, *shape) -> lib.Tensor:
        return lib.tensor(rng.standard_normal(shape).astype(np.float32))

    def ints(rng, high, *shape) -> lib.Tensor:
        return lib.tensor(rng.integers(0, high, shape), dtype=lib.int64)

    def _no_inputs(rng):
        return ()

    # ---- recurrent ------------------------------------------------------------------------

    def _cells(rnn_tanh, rnn_relu, lstm, gru, x):
        h1 = h2 = h4 = None
        state = None
        outputs = []
        for step in x.unbind(1):
            h1 = rnn_tanh(step, h1)
            h2 = rnn_relu(step, h2)
            state = lstm(step, state)
            h4 = gru(step, h4)
            outputs += [h1, h2, state[0], state[1], h4]
        return tuple(outputs)

    _LENGTHS = [4, 2, 3]

    def _packed(lstm, gru, x):
        packed = rnn_utils.pack_padded_sequence(x, _LENGTHS, batch_first=True,
                                                enforce_sorted=False)
        output, (h, c) = lstm(packed)
        padded, lengths = rnn_utils.pad_packed_sequence(output, batch_first=True)
        sequences = [x[0, :3], x[1, :1], x[2, :2]]
        gru_output, gru_h = gru(rnn_utils.pack_sequence(sequences, enforce_sorted=False))
        return padded, h, c, gru_output.data, gru_h, rnn_utils.pad_sequence(sequences)

    def _recurrent_rows() -> dict:
        return {
            "rnn": (lambda: Lambda(lambda rnn, x, h0: rnn(x, h0), nn.RNN(
                3, 4, num_layers=2, nonlinearity="relu", batch_first=True, dropout=0.3,
                bidirectional=True)), lambda rng: (floats(rng, 2, 4, 3), floats(rng, 4, 2, 4))),
            "lstm": (lambda: Lambda(lambda lstm, x, h0, c0: lstm(x, (h0, c0)), nn.LSTM(
                3, 5, num_layers=2, proj_size=2, bidirectional=True)),
                lambda rng: (floats(rng, 4, 2, 3), floats(rng, 4, 2, 2), floats(rng, 4, 2, 5))),
            "gru": (lambda: nn.GRU(3, 4, num_layers=2, bias=False, batch_first=True,
                                   bidirectional=True), lambda rng: (floats(rng, 2, 4, 3),)),
            "cells": (lambda: Lambda(_cells, nn.RNNCell(3, 4),
                                     nn.RNNCell(3, 2, nonlinearity="relu"),
                                     nn.LSTMCell(3, 4), nn.GRUCell(3, 2, bias=False)),
                      lambda rng: (floats(rng, 2, 3, 3),)),
            "packed_sequences": (lambda: Lambda(_packed, nn.LSTM(3, 4, batch_first=True),
                                                nn.GRU(3, 2, bidirectional=True)),
                                 lambda rng: (floats(rng, 3, 4, 3),)),
        }

    # ---- attention and transformers -------------------------------------------------------

    def _sdpa(project, x, mask):
        q, k, v = project(x).chunk(3, -1)  # (2, 2 heads, 4, 4) each
        q, k, v = (t.unflatten(-1, (2, 2)).transpose(1, 2) for t in (q, k, v))
        return (F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.7),
                F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=0.2 if project.training else 0.0),
                F.scaled_dot_product_attention(q, k[:, :1], v[:, :1], enable_gqa=True),
                F.scaled_dot_product_attention(q, k, v, attn_mask=mask > 0))

    def _mha(cross, self_attention, query, key, value, padding, mask):
        out, weights = cross(query, key, value, key_padding_mask=padding, attn_mask=mask,
                             average_attn_weights=False)
        self_out, self_weights = self_attention(query, query, query, need_weights=True,
                                                is_causal=False)
        return out, weights, self_out, self_weights

    def _encoder(encoder, x, padding):
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device)
        return encoder(x, mask=mask, src_key_padding_mask=padding)

    def _decoder(decoder, target, memory, padding):
        mask = nn.Transformer.generate_square_subsequent_mask(target.shape[0], device=target.device)
        return decoder(target, memory, tgt_mask=mask, memory_key_padding_mask=padding,
                       tgt_is_causal=True)

    def _attention_rows() -> dict:
        padding = lib.tensor([[False, False, True], [False, False, False]])
        return {
            "scaled_dot_product_attention": (
                lambda: Lambda(_sdpa, nn.Linear(3, 12)),
                lambda rng: (floats(rng, 2, 4, 3), floats(rng, 4, 4))),
            "multihead_attention": (
                lambda: Lambda(_mha, nn.MultiheadAttention(
                    4, 2, dropout=0.2, kdim=3, vdim=5, batch_first=True, add_bias_kv=True,
                    add_zero_attn=True), nn.MultiheadAttention(4, 2, bias=False)),
                lambda rng: (floats(rng, 2, 3, 4), floats(rng, 2, 3, 3), floats(rng, 2, 3, 5),
                             padding, floats(rng, 3, 3))),
            "transformer_encoder": (
                lambda: Lambda(_encoder, nn.TransformerEncoder(nn.TransformerEncoderLayer(
                    4, 2, 8, dropout=0.1, activation="gelu", batch_first=True, norm_first=True),
                    2, norm=nn.LayerNorm(4), enable_nested_tensor=False)),
                lambda rng: (floats(rng, 2, 3, 4), padding)),
            "transformer_decoder": (
                lambda: Lambda(_decoder, nn.TransformerDecoder(nn.TransformerDecoderLayer(
                    4, 2, 8, dropout=0.0, activation=F.silu), 2)),
                lambda rng: (floats(rng, 3, 2, 4), floats(rng, 3, 2, 4), padding)),
            "transformer": (
                lambda: Lambda(lambda model, src, tgt: model(src, tgt), nn.Transformer(
                    4, 2, 1, 1, 8, dropout=0.0, batch_first=True, norm_first=True, bias=False)),
                lambda rng: (floats(rng, 2, 3, 4), floats(rng, 2, 2, 4))),
        }

    # ---- convolution, padding, pooling and resampling -------------------------------------

    def _convolution_rows() -> dict:
        return {
            "conv1d": (lambda: Branches(
                nn.Conv1d(2, 4, 3, stride=2, dilation=2, groups=2),
                nn.Conv1d(2, 3, 4, padding="same", padding_mode="circular"),
                nn.Conv1d(2, 3, 2, padding="valid", bias=False),
                nn.ConvTranspose1d(2, 4, 3, stride=2, output_padding=1, groups=2, dilation=2)),
                lambda rng: (floats(rng, 2, 2, 7),)),
            "conv2d": (lambda: Branches(
                nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect"),
                nn.Conv2d(2, 3, (2, 3), padding=(1, 2), padding_mode="replicate", stride=(2, 1)),
                nn.Conv2d(2, 2, 3, padding="same", dilation=2, padding_mode="circular", groups=2),
                nn.Conv2d(2, 3, 2, padding="valid"),
                nn.ConvTranspose2d(2, 4, (3, 2), stride=2, padding=1, output_padding=(1, 0),
                                   groups=2, dilation=(1, 2))),
                lambda rng: (floats(rng, 2, 2, 5, 5),)),
            "conv3d": (lambda: Branches(
                nn.Conv3d(2, 2, 2, padding="same", padding_mode="replicate"),
                nn.Conv3d(2, 4, (2, 1, 2), stride=(1, 2, 1), groups=2, bias=False),
                nn.ConvTranspose3d(2, 2, 2, stride=2, output_padding=1, dilation=1)),
                lambda rng: (floats(rng, 1, 2, 3, 3, 4),)),
            "padding": (lambda: Learned((1, 2, 3, 4, 4), lambda x: (
                nn.ZeroPad1d((1, 2))(x[0, 0, 0]), nn.ZeroPad2d(1)(x[0, 0]), nn.ZeroPad3d(1)(x),
                nn.ConstantPad1d(1, 0.5)(x[0, 0, 0]), nn.ConstantPad2d((1, 0, 2, 1), -1.0)(x[0]),
                nn.ConstantPad3d(1, 2.0)(x), nn.ReflectionPad1d(2)(x[0, 0]),
                nn.ReflectionPad2d((1, 2, 0, 3))(x[0]), nn.ReflectionPad3d(1)(x),
                nn.ReplicationPad1d(3)(x[0, 0]), nn.ReplicationPad2d(2)(x[0]),
                nn.ReplicationPad3d((1, 0, 2, 1, 0, 1))(x), nn.CircularPad1d(2)(x[0, 0]),
                nn.CircularPad2d(1)(x[0]), nn.CircularPad3d(1)(x),
                F.pad(x[0], (1, 1, 2, 0), mode="reflect"))), _no_inputs),
        }

    class _Unpooled(nn.Module):
        """Max pooling with indices, unpooled with them (1-, 2- and 3-d)."""

        def __init__(self) -> None:
            super().__init__()
            self.pools = nn.ModuleList([nn.MaxPool1d(2, return_indices=True),
                                        nn.MaxPool2d(3, 2, padding=1, return_indices=True),
                                        nn.MaxPool3d(2, return_indices=True)])
            self.unpools = nn.ModuleList([nn.MaxUnpool1d(2), nn.MaxUnpool2d(3, 2, padding=1),
                                          nn.MaxUnpool3d(2)])

        def forward(self, x):
            outputs = []
            for pool, unpool, part in zip(self.pools, self.unpools, (x[0, 0], x[0], x)):
                pooled, indices = pool(part)
                outputs += [pooled, indices, unpool(pooled, indices, output_size=part.shape[-2:]
                                                    if part.ndim == 4 else None)]
            return tuple(outputs)

    def _pooling_rows() -> dict:
        return {
            "max_pool_unpool": (lambda: Learned((1, 2, 4, 4, 4), _Unpooled()), _no_inputs),
            "avg_pool": (lambda: Learned((1, 2, 4, 5, 5), lambda x: (
                nn.AvgPool1d(3, 2, padding=1, ceil_mode=True, count_include_pad=False)(x[0, 0]),
                nn.AvgPool2d(2, padding=1, divisor_override=3)(x[0]),
                nn.AvgPool3d((2, 3, 2), stride=1, ceil_mode=True)(x),
                nn.MaxPool2d(2, dilation=2, ceil_mode=True)(x[0]))), _no_inputs),
            "adaptive_pool": (lambda: Learned((1, 2, 4, 5, 5), lambda x: (
                nn.AdaptiveAvgPool1d(3)(x[0, 0]), nn.AdaptiveAvgPool2d((2, None))(x[0]),
                nn.AdaptiveAvgPool3d(2)(x), nn.AdaptiveMaxPool1d(2, return_indices=True)(x[0, 0]),
                nn.AdaptiveMaxPool2d(3)(x[0]), nn.AdaptiveMaxPool3d((1, 2, 3))(x))), _no_inputs),
            "lp_pool": (lambda: Learned((1, 2, 4, 5, 5), lambda x: (
                nn.LPPool1d(2, 3, stride=2)(x[0, 0]), nn.LPPool2d(1.5, 2)(x[0].abs() + 0.1),
                nn.LPPool3d(3, 2)(x))), _no_inputs),
            # fixed samples (a buffer, loaded into torch's layer too), so the windows are known
            "fractional_pool": (lambda: Learned((2, 2, 5, 7, 6), Lambda(
                lambda pool_2d, pool_3d, x: (pool_2d(x[:, :, 0]), pool_3d(x)),
                nn.FractionalMaxPool2d((2, 3), output_size=(3, 4), return_indices=True,
                                       _random_samples=lib.rand(2, 2, 2)),
                nn.FractionalMaxPool3d(2, output_ratio=0.5, _random_samples=lib.rand(2, 2, 3)))),
                _no_inputs),
        }

    def _grid(theta, x):
        planar = theta[:2].reshape(2, 2, 3)
        grids = (F.affine_grid(planar, (2, 1, 3, 4), align_corners=False),
                 F.affine_grid(planar, (2, 1, 4, 3), align_corners=True))
        volume = x[:, :1].unsqueeze(2).expand(2, 1, 2, 4, 5)
        grid_3d = F.affine_grid(theta[:2].reshape(2, 2, 3).repeat(1, 2, 2)[:, :3, :4],
                                (2, 1, 2, 3, 3), align_corners=False)
        return (F.grid_sample(x, grids[0], align_corners=False),
                F.grid_sample(x, grids[1], mode="nearest", padding_mode="border",
                              align_corners=True),
                F.grid_sample(x, grids[0], mode="bicubic", padding_mode="reflection",
                              align_corners=False),
                F.grid_sample(x, grids[1], padding_mode="reflection", align_corners=True),
                F.grid_sample(volume, grid_3d, align_corners=False))

    def _resampling_rows() -> dict:
        return {
            "interpolate": (lambda: Learned((1, 2, 3, 4), lambda x: (
                F.interpolate(x, scale_factor=2, mode="nearest"),
                F.interpolate(x, size=(5, 7), mode="nearest-exact"),
                F.interpolate(x[0], size=7, mode="linear", align_corners=True),
                F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False),
                F.interpolate(x, size=(4, 6), mode="bicubic", align_corners=True),
                F.interpolate(x.unsqueeze(2), size=(2, 4, 3), mode="trilinear"),
                F.interpolate(x, size=(2, 3), mode="area"),
                nn.Upsample(scale_factor=(2, 1), mode="bilinear")(x),
                nn.UpsamplingNearest2d(scale_factor=2)(x), nn.UpsamplingBilinear2d((5, 5))(x))),
                _no_inputs),
            "shuffle_fold": (lambda: Learned((1, 8, 2, 4), lambda x: (
                nn.PixelShuffle(2)(x), nn.PixelUnshuffle(2)(x), nn.ChannelShuffle(4)(x),
                nn.Fold((3, 5), 2, padding=1, stride=(1, 2))(x.reshape(1, 4, 16)[:, :, :12]),
                nn.Unfold(2, dilation=(1, 2), padding=1, stride=2)(x))), _no_inputs),
            "grid_sample": (lambda: Learned((3, 6), Lambda(_grid)),
                            lambda rng: (floats(rng, 2, 2, 4, 5),)),
        }

    # ---- normalization --------------------------------------------------------------------

    def _normalization_rows() -> dict:
        return {
            # SyncBatchNorm without a process group is batch norm, in both libraries
            "batch_norm": (lambda: Learned((4, 3, 2, 3, 2), Lambda(
                lambda a, b, c, d, e, x: (a(x[:, :, 0, 0, 0]), b(x[:, :, 0, 0]), c(x),
                                          d(x[:, :, 0]), e(x[:, :, 1])),
                nn.BatchNorm1d(3, momentum=None),
                nn.BatchNorm1d(3, affine=False, track_running_stats=False),
                nn.BatchNorm3d(3, momentum=0.3, bias=False),
                nn.BatchNorm2d(3, momentum=None, affine=False),
                nn.SyncBatchNorm(3, momentum=None))), _no_inputs),
            "instance_norm": (lambda: Learned((2, 3, 3, 4, 2), Lambda(
                lambda a, b, c, x: (a(x[:, :, 0, 0]), b(x[:, :, 0]), c(x)),
                nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
                nn.InstanceNorm2d(3, momentum=None, track_running_stats=True),
                nn.InstanceNorm3d(3, affine=True))), _no_inputs),
            "layer_group_rms_lrn": (lambda: Learned((2, 4, 3, 3), Lambda(
                lambda a, b, c, d, e, f, x: (a(x), b(x), c(x), d(x), e(x[:, :, 0]), f(x)),
                nn.LayerNorm((3, 3), bias=False), nn.GroupNorm(2, 4),
                nn.RMSNorm([3], eps=1e-6), nn.LocalResponseNorm(3),
                nn.LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0),
                nn.CrossMapLRN2d(3, alpha=0.2, beta=0.6, k=1.5))), _no_inputs),
        }

    # ---- activations and losses -----------------------------------------------------------

    def _activations(names_and_arguments):
        """Each activation (a name and its arguments, or a function making the module) on a
        linear map of a learned input."""
        return lambda: Learned((3, 4), Lambda(
            lambda linear, *rest: tuple(layer(linear(rest[-1])) for layer in rest[:-1]),
            nn.Linear(4, 6), *[getattr(nn, layer[0])(*layer[1]) if isinstance(layer, tuple)
                               else layer() for layer in names_and_arguments]))

    def _activation_rows() -> dict:
        return {
            "activations_rectifiers": (_activations([
                ("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("ELU", (0.5,)), ("SELU", ()),
                ("CELU", (1.5,)), ("GELU", ("tanh",)), ("GELU", ()), ("SiLU", ()), ("Mish", ()),
                ("Softplus", (2.0, 1.0)), ("PReLU", (6,)), ("Threshold", (0.1, -1.0))]),
                _no_inputs),
            "activations_bounded": (_activations([
                ("Hardtanh", (-0.5, 0.5)), ("Hardswish", ()), ("Hardsigmoid", ()),
                ("Hardshrink", (0.3,)), ("Softshrink", (0.2,)), ("Tanhshrink", ()),
                ("Softsign", ()), ("LogSigmoid", ()), ("Tanh", ()), ("Sigmoid", ()),
                ("RReLU", (0.1, 0.3))]), _no_inputs),
            "activations_softmax": (_activations([
                ("Softmax", (1,)), ("Softmin", (0,)), ("LogSoftmax", (-1,)), ("GLU", ()),
                lambda: nn.Sequential(nn.Unflatten(1, (2, 3)), nn.Softmax2d())]), _no_inputs),
        }

    def _regression_losses(mse, l1, smooth, huber, poisson, gaussian, kl, bce, logits, x, target,
                           weights):
        probability = x.sigmoid()
        return (mse(x, target), l1(x, target), smooth(x, target), huber(x, target),
                poisson(x, target.abs()), gaussian(x, target, x.exp() + 0.1),
                kl(F.log_softmax(x, 1), F.log_softmax(target, 1)),
                bce(probability, target.sigmoid()), logits(x, target.sigmoid()))

    def _classification_losses(cross, probabilities, nll, margin, multilabel, soft_multilabel,
                               soft, x, classes, labels, signs):
        return (cross(x, classes), probabilities(x, F.softmax(x.detach() * 2, 1)),
                nll(F.log_softmax(x, 1), classes), margin(x, classes), multilabel(x, labels),
                soft_multilabel(x, labels.clamp(min=0)), soft(x[:, 0], signs))

    def _embedding_losses(cosine, ranking, triplet, with_distance, hinge, similarity, distance,
                          x, signs):
        a, b, c = x[:, :4], x[:, 4:8], x[:, 8:]
        return (cosine(a, b, signs), ranking(a[:, 0], b[:, 0], signs), triplet(a, b, c),
                with_distance(a, b, c), hinge(a.abs(), (signs[:, None] * 1).expand(3, 4)),
                similarity(a, b), distance(a, c))

    def _loss_rows() -> dict:
        return {
            "losses_regression": (lambda: Learned((3, 4), Lambda(
                _regression_losses, nn.MSELoss(), nn.L1Loss(reduction="sum"),
                nn.SmoothL1Loss(beta=0.5), nn.HuberLoss(delta=0.7), nn.PoissonNLLLoss(full=True),
                nn.GaussianNLLLoss(), nn.KLDivLoss(reduction="batchmean", log_target=True),
                nn.BCELoss(weight=lib.tensor([1.0, 2.0, 0.5, 1.0])),
                nn.BCEWithLogitsLoss(pos_weight=lib.tensor([2.0, 1.0, 1.0, 0.5])))),
                lambda rng: (floats(rng, 3, 4), floats(rng, 4))),
            "losses_classification": (lambda: Learned((3, 4), Lambda(
                _classification_losses,
                nn.CrossEntropyLoss(weight=lib.tensor([1.0, 0.5, 2.0, 1.0]), ignore_index=1,
                                    label_smoothing=0.1),
                nn.CrossEntropyLoss(label_smoothing=0.2), nn.NLLLoss(reduction="sum"),
                nn.MultiMarginLoss(p=2, margin=0.5), nn.MultiLabelMarginLoss(),
                nn.MultiLabelSoftMarginLoss(), nn.SoftMarginLoss())),
                lambda rng: (lib.tensor([0, 3, 1]), lib.tensor([[3, 0, -1, 1]] * 3),
                             lib.tensor([1.0, -1.0, 1.0]))),
            "losses_embedding": (lambda: Learned((3, 12), Lambda(
                _embedding_losses, nn.CosineEmbeddingLoss(margin=0.2),
                nn.MarginRankingLoss(0.1), nn.TripletMarginLoss(swap=True),
                nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1)),
                nn.HingeEmbeddingLoss(1.5), nn.CosineSimilarity(), nn.PairwiseDistance(3))),
                lambda rng: (lib.tensor([1.0, -1.0, 1.0]),)),
            "adaptive_softmax": (lambda: Learned((4, 8), Lambda(
                lambda softmax, x, target: (softmax(x, target), softmax.log_prob(x)),
                nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 7], div_value=2.0, head_bias=True))),
                lambda rng: (lib.tensor([0, 9, 4, 7]),)),
            "ctc": (lambda: Learned((5, 2, 4), Lambda(
                lambda loss, x, targets: loss(x.log_softmax(2), targets, [5, 4], [2, 1]),
                nn.CTCLoss(blank=0, zero_infinity=True))),
                lambda rng: (lib.tensor([[1, 2], [3, 3]]),)),
        }

    # ---- embeddings, dropouts, lazy and linear layers -------------------------------------

    def _embedding_rows() -> dict:
        return {
            "embedding": (lambda: Lambda(
                lambda plain, scaled, bag_sum, bag_max, bag_mean, ids, offsets, weights: (
                    plain(ids), scaled(ids), bag_sum(ids.flatten(), offsets,
                                                     per_sample_weights=weights),
                    bag_max(ids), bag_mean(ids.flatten(), offsets)),
                nn.Embedding(6, 3, padding_idx=0),
                nn.Embedding(6, 3, max_norm=1.0, scale_grad_by_freq=True),
                nn.EmbeddingBag(6, 3, mode="sum", padding_idx=2), nn.EmbeddingBag(6, 3, mode="max"),
                nn.EmbeddingBag(6, 3, include_last_offset=True)),
                lambda rng: (lib.tensor([[1, 2, 0], [4, 4, 5]]), lib.tensor([0, 2, 6]),
                             floats(rng, 6))),
        }

    def _dropouts(plain, one_d, two_d, three_d, alpha, feature_alpha, x):
        outputs = (plain(x), one_d(x[:, :, 0, 0]), two_d(x[:, :, 0]), three_d(x), alpha(x),
                   feature_alpha(x))
        if not plain.training:  # the random functions too follow the model's mode
            return outputs
        return outputs + (F.dropout1d(x[0, :, 0, 0], 0.5), F.gumbel_softmax(x[:, 0, 0], tau=0.5),
                          F.gumbel_softmax(x[:, 0, 1], hard=True),
                          F.alpha_dropout(x, 0.1, training=True))

    def _dropout_rows() -> dict:
        return {
            "dropouts": (lambda: Learned((2, 3, 2, 4, 4), Lambda(
                _dropouts, nn.Dropout(0.3), nn.Dropout1d(0.4), nn.Dropout2d(0.5),
                nn.Dropout3d(0.3), nn.AlphaDropout(0.2), nn.FeatureAlphaDropout(0.3))),
                _no_inputs),
        }

    def _lazy(*layers):
        """Lazy layers, materialized by a first call before the optimizer is made (as torch's
        documentation does)."""
        model = Learned((2, 3, 4, 4), Lambda(
            lambda linear, c1, c2, c3, t1, t2, t3, bn, inorm, x: (
                linear(x), c1(x[0]), c2(x), c3(x.unsqueeze(0)), t1(x[0]), t2(x),
                t3(x.unsqueeze(0)), bn(x), inorm(x)), *layers))
        with lib.no_grad():
            model()
        return model

    def _lazy_rows() -> dict:
        return {
            "lazy": (lambda: _lazy(
                nn.LazyLinear(2), nn.LazyConv1d(2, 2), nn.LazyConv2d(2, 3, padding=1),
                nn.LazyConv3d(1, 2), nn.LazyConvTranspose1d(2, 2), nn.LazyConvTranspose2d(2, 2),
                nn.LazyConvTranspose3d(1, 2), nn.LazyBatchNorm2d(momentum=None),
                nn.LazyInstanceNorm2d(affine=True)), _no_inputs),
            "linear": (lambda: Learned((3, 4), Lambda(
                lambda linear, bilinear, flatten, unflatten, identity, x: (
                    linear(x), bilinear(x, x[:, :3]), unflatten(flatten(x[:, None])), identity(x),
                    F.normalize(x, dim=0), F.cosine_similarity(x[:1], x),
                    F.pairwise_distance(x, x.flip(0)),
                    F.one_hot(lib.tensor([1, 0], device=x.device), 3) * x[0, 0]),
                nn.Linear(4, 2), nn.Bilinear(4, 3, 2), nn.Flatten(), nn.Unflatten(1, (2, 2)),
                nn.Identity())), _no_inputs),
        }

    table = {}
    for family in (_recurrent_rows, _attention_rows, _convolution_rows, _pooling_rows,
                   _resampling_rows, _normalization_rows, _activation_rows, _loss_rows,
                   _embedding_rows, _dropout_rows, _lazy_rows):
        table.update(family())
    return table


def total_loss(output):
    """The sum of the mean squares of the float tensors in `output` (nested tuples, lists and
    PackedSequences)."""
    if type(output).__name__ == "PackedSequence":
        return total_loss(output.data)
    if not isinstance(output, (tuple, list)):
        if not output.is_floating_point():
            return None
        return (output ** 2).mean()
    parts = [loss for loss in map(total_loss, output) if loss is not None]
    return sum(parts[1:], parts[0]) if parts else None
