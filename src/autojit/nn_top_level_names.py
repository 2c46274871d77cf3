"""The names of torch's top-level forms of nn.functional's ops (torch.conv2d, torch.dropout,
torch.lstm_cell, ...), which nn/top_level.py defines, and of their aten entry points
(torch.native_layer_norm, ...), which nn/aten_entry_points.py defines.

They are listed apart from their definitions so that `autojit/__init__.py` can export them
without importing autojit.nn: `import autojit` loads nn on first use, and these names with it.
"""

NN_TOP_LEVEL_NAMES = (
    "dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout",
    "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "native_dropout",
    "selu", "selu_", "celu", "celu_", "threshold", "threshold_", "rrelu", "rrelu_", "relu_",
    "hardshrink", "prelu", "layer_norm", "group_norm", "batch_norm", "instance_norm",
    "rms_norm", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "convolution", "max_pool1d", "max_pool2d", "max_pool3d",
    "max_pool1d_with_indices", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
    "embedding", "bilinear", "constant_pad_nd", "pairwise_distance", "pdist",
    "binary_cross_entropy_with_logits", "cosine_embedding_loss", "hinge_embedding_loss",
    "kl_div", "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss", "ctc_loss",
    "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "grid_sampler",
    "grid_sampler_2d", "grid_sampler_3d",
    "affine_grid_generator",
)

# nn/aten_entry_points.py's; the names without an underscore are in torch.__all__.
NN_ATEN_ENTRY_POINTS = (
    "native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit",
    "_native_batch_norm_legit_no_training",
)
