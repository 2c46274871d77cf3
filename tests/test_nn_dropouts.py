"""The channel-wise and alpha dropouts (nn/functional/channel_dropout.py, nn/dropout_extra.py):
their masks' statistics and shapes (one draw per sample and channel), alpha dropout's preserved mean
and variance, evaluation as the identity, torch's reprs, errors and warnings, and the same draws
with the same seed eagerly and compiled. The draws need not be torch's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import nn

F = nn.functional


@pytest.mark.parametrize("name, shape", [("dropout1d", (40, 50, 3)), ("dropout1d", (50, 3)),
                                         ("dropout2d", (40, 50, 2, 2)),
                                         ("dropout3d", (40, 50, 1, 2, 2)),
                                         ("dropout3d", (50, 1, 2, 2))])
def test_channel_dropout_drops_whole_channels(name, shape):
    autojit.manual_seed(0)
    x = autojit.ones(*shape, dtype=autojit.float64, requires_grad=True)
    out = getattr(F, name)(x, p=0.25)
    values = out.detach().numpy()
    spatial = tuple(range(2 if shape[0] == 40 else 1, len(shape)))  # after (N, C) or (C,)
    per_channel = values.max(axis=spatial)
    assert (values.min(axis=spatial) == per_channel).all()  # constant over each channel
    assert set(np.unique(per_channel)) <= {0.0, 1 / 0.75}
    assert abs((per_channel == 0).mean() - 0.25) < 0.06
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), values)  # the gradient is the mask's scale


def test_alpha_dropout_keeps_mean_and_variance():
    autojit.manual_seed(0)
    x = autojit.randn(200000, dtype=autojit.float64)
    out = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.std() - 1) < 0.01
    _, counts = np.unique(out, return_counts=True)  # the dropped share one value
    assert abs(counts.max() / out.size - 0.2) < 0.01
    # torch's affine correction: kept a * x + alpha' * a * p, dropped -alpha' * a * (1 - p).
    alpha, p = 1.7580993408473766, 0.2
    a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    kept = np.isclose(out, a * x.numpy() + alpha * a * p)
    assert abs(kept.mean() - 0.8) < 0.01
    np.testing.assert_allclose(out[~kept], -alpha * a * (1 - p))
    features = F.feature_alpha_dropout(autojit.randn(500, 40, 4, dtype=autojit.float64), 0.5,
                                       training=True).numpy()
    assert abs(features.mean()) < 0.05 and abs(features.std() - 1) < 0.05
    dropped = np.ptp(features, axis=2) == 0  # a dropped channel is one constant value
    assert abs(dropped.mean() - 0.5) < 0.05


def test_modules_print_as_torch_and_are_the_identity_in_evaluation():
    torch = pytest.importorskip("torch")
    for kind, shape in [("Dropout1d", (2, 3, 4)), ("Dropout2d", (2, 3, 4, 4)),
                        ("Dropout3d", (2, 3, 1, 4, 4)), ("AlphaDropout", (5,)),
                        ("FeatureAlphaDropout", (2, 3, 4))]:
        mine, theirs = getattr(nn, kind)(0.3, inplace=True), getattr(torch.nn, kind)(0.3, True)
        assert repr(mine) == repr(theirs)
        x = autojit.randn(*shape)
        assert mine.eval()(x) is x
    x = autojit.randn(2, 3, 4, 4)
    assert F.alpha_dropout(x, 0.5) is x  # training=False by default, as torch's
    assert F.dropout2d(x, 0.0) is x
    assert not F.dropout2d(x, 1.0).numpy().any()


def test_errors_and_warnings_match_torch():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a "
                                           "4D input"):
        F.dropout1d(autojit.ones(1, 2, 3, 4))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        nn.Dropout2d(1.5)
    for name in ("dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        with pytest.raises(ValueError, match="between 0 and 1, but got -0.1"):
            getattr(F, name)(autojit.ones(2, 2, 2, 2), -0.1)
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(autojit.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout3d"):
        F.dropout3d(autojit.ones(2, 3))


def test_inplace_channel_dropout_writes_its_input():
    x = autojit.ones(3, 4, 2)
    assert F.dropout1d(x, 0.5, inplace=True) is x
    y = autojit.ones(4, 2)
    assert F.dropout1d(y, 0.5, inplace=True) is y


@pytest.mark.parametrize("function", [
    lambda x: F.dropout2d(x, 0.5),
    lambda x: F.alpha_dropout(x, 0.3, training=True),
], ids=["dropout2d", "alpha_dropout"])
def test_same_seed_same_draws_eagerly_and_compiled(function):
    x = autojit.randn(4, 6, 3, 3)
    autojit.manual_seed(5)
    eager = [function(x).numpy() for _ in range(2)]
    compiled_function = autojit.compile(function)
    autojit.manual_seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        compiled = [compiled_function(x).numpy() for _ in range(2)]
    assert not np.array_equal(eager[0], eager[1])
    for a, b in zip(eager, compiled):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["dropout", "dropout1d", "dropout2d", "dropout3d",
                                  "alpha_dropout", "feature_alpha_dropout"])
def test_integer_and_bool_inputs_as_torch(name):
    """In training, 0 < p < 1 of an integer or bool tensor raises torch's error (its noise is
    divided in place by a float; a float32 result came back); p = 1 keeps the dtype (a bool
    stays bool); an empty one, or p = 0, is the input itself."""
    torch = pytest.importorskip("torch")
    for dtype in ("int64", "int32", "uint8", "bool", "float16", "float32"):
        for p in (0.0, 0.5, 1.0):
            for shape in ((2, 3, 4, 4), (0, 3, 4, 4), (3, 4, 4)):
                for inplace in (False, True):
                    seen = []
                    for library in (torch, autojit):
                        x = library.ones(*shape, dtype=getattr(library, dtype))
                        try:
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore", UserWarning)
                                y = getattr(library.nn.functional, name)(
                                    x, p, training=True, inplace=inplace)
                            seen.append((str(y.dtype).split(".")[-1], tuple(y.shape)))
                        except RuntimeError as error:
                            seen.append(str(error))
                    assert seen[0] == seen[1], (dtype, p, shape, inplace, seen)
