"""The loss and distance modules of nn/loss/extra.py and their functional forms
(nn/functional/loss.py, nn/functional/distance.py) against torch: every reduction gives torch's
value and gradients (inputs and targets) in float64 and float32, the modules print as torch's,
errors are torch's, and a compiled training step equals eager for a representative subset. The
existing classification losses are checked here for their options too. Kinks are in
test_nn_activation_points.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import autojit
from autojit import nn

sys.path.insert(0, str(Path(__file__).parent))

from torch_pairs import compare_with_gradients, leaves  # noqa: E402

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5))
Y = RNG.standard_normal((4, 5))
Z = RNG.standard_normal((4, 5))
SIGNS = np.array([1.0, -1.0, -1.0, 1.0])
SIGNS_2D = np.where(RNG.standard_normal((4, 5)) > 0, 1.0, -1.0)
PROBABILITIES = np.abs(RNG.standard_normal((4, 5))) + 0.1
LABELS = (RNG.standard_normal((4, 5)) > 0).astype(np.float64)
COUNTS = np.array([[0.0, 1.0, 2.0, 3.0, 5.0]] * 4)
CLASSES = np.array([0, 2, 4, 1])
MULTI_LABELS = np.array([[3, 0, -1, 1, 1], [1, 2, 4, -1, -1], [-1, 0, 0, 0, 0],
                         [0, 1, 2, 3, 4]])
LABEL_ARRAYS = (SIGNS, SIGNS_2D, LABELS, COUNTS)

# (name, module constructor arguments, arrays of the forward's arguments, extra kwargs)
CASES = [
    ("KLDivLoss", {"reduction": "batchmean"}, (X, PROBABILITIES)),
    ("KLDivLoss", {"reduction": "sum", "log_target": True}, (X, Y)),
    ("PoissonNLLLoss", {}, (X, COUNTS)),
    ("PoissonNLLLoss", {"log_input": False, "full": True}, (PROBABILITIES, COUNTS)),
    ("GaussianNLLLoss", {}, (X, Y, PROBABILITIES)),
    ("GaussianNLLLoss", {"full": True, "reduction": "none"}, (X, Y, PROBABILITIES[:, 0])),
    ("GaussianNLLLoss", {"reduction": "sum"}, (X, Y, PROBABILITIES[:1])),
    ("SoftMarginLoss", {}, (X, SIGNS_2D)),
    ("MultiLabelSoftMarginLoss", {}, (X, LABELS)),
    ("MultiLabelSoftMarginLoss", {"weight": np.linspace(0.5, 2, 5), "reduction": "none"},
     (X, LABELS)),
    ("HingeEmbeddingLoss", {"margin": 0.5}, (X, SIGNS_2D)),
    ("MarginRankingLoss", {"margin": 0.2, "reduction": "none"}, (X[:, 0], Y[:, 0], SIGNS)),
    ("CosineEmbeddingLoss", {"margin": 0.1}, (X, Y, SIGNS)),
    ("CosineEmbeddingLoss", {"reduction": "none"}, (X, Y, SIGNS)),
    ("TripletMarginLoss", {"margin": 2.0}, (X, Y, Z)),
    ("TripletMarginLoss", {"p": 1.0, "swap": True, "reduction": "sum"}, (X, Y, Z)),
    ("TripletMarginWithDistanceLoss", {"swap": True}, (X, Y, Z)),
    ("MultiMarginLoss", {}, (X, CLASSES)),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": np.linspace(0.5, 2, 5),
                         "reduction": "none"}, (X, CLASSES)),
    ("MultiMarginLoss", {"reduction": "sum"}, (X[0], CLASSES[1:2])),
    ("MultiLabelMarginLoss", {}, (X, MULTI_LABELS)),
    ("MultiLabelMarginLoss", {"reduction": "none"}, (X[1], MULTI_LABELS[1])),
    ("CosineSimilarity", {"dim": 0}, (X, Y)),
    ("PairwiseDistance", {"p": 3.0, "keepdim": True}, (X, Y)),
    ("CrossEntropyLoss", {"weight": np.linspace(0.5, 2, 5), "label_smoothing": 0.2},
     (X, CLASSES)),
    ("CrossEntropyLoss", {"ignore_index": 2}, (X.reshape(2, 5, 2), CLASSES.reshape(2, 2))),
    ("CrossEntropyLoss", {"label_smoothing": 0.1}, (X, PROBABILITIES / 3)),
    ("NLLLoss", {"weight": np.linspace(0.5, 2, 5), "ignore_index": 4}, (X, CLASSES)),
    ("BCEWithLogitsLoss", {"pos_weight": np.linspace(0.5, 2, 5), "weight": np.ones(5) * 2},
     (X * 30, LABELS)),
    ("SmoothL1Loss", {"beta": 0.0}, (X, Y)),
    ("HuberLoss", {"delta": 0.5, "reduction": "sum"}, (X, Y)),
]


def _module(lib, kind, options, dtype):
    options = {name: lib.tensor(value).to(getattr(lib, dtype))
               if isinstance(value, np.ndarray) else value for name, value in options.items()}
    return getattr(lib.nn, kind)(**options)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind, options, arrays", CASES,
                         ids=[f"{kind}-{i}" for i, (kind, _, _) in enumerate(CASES)])
def test_loss_matches_torch(kind, options, arrays, dtype):
    mine, theirs = _module(autojit, kind, options, dtype), _module(torch, kind, options, dtype)
    assert repr(mine) == repr(theirs)
    # Labels, signs and counts are data, not differentiated (torch refuses some of them).
    constant = [any(a is label for label in LABEL_ARRAYS) for a in arrays]
    arrays = [a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays]
    inputs_mine, inputs_theirs = [], []
    for array, is_constant in zip(arrays, constant):
        (mine_leaf,), (their_leaf,) = leaves(torch, array, requires_grad=not is_constant)
        inputs_mine.append(mine_leaf), inputs_theirs.append(their_leaf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out_mine, out_theirs = mine(*inputs_mine), theirs(*inputs_theirs)
    compare_with_gradients(torch, out_mine, out_theirs, inputs_mine, inputs_theirs, dtype, kind)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_every_reduction_matches_torch(reduction):
    for name in ("kl_div", "poisson_nll_loss", "soft_margin_loss", "hinge_embedding_loss",
                 "multilabel_soft_margin_loss"):
        (a_mine,), (a_theirs,) = leaves(torch, X)
        (b_mine,), (b_theirs,) = leaves(torch, PROBABILITIES, requires_grad=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out_mine = getattr(nn.functional, name)(a_mine, b_mine, reduction=reduction)
            out_theirs = getattr(torch.nn.functional, name)(a_theirs, b_theirs,
                                                            reduction=reduction)
        compare_with_gradients(torch, out_mine, out_theirs, [a_mine, b_mine],
                               [a_theirs, b_theirs], message=name)


# Every functional loss that takes torch's deprecated (size_average, reduce) pair, with its
# operands: the pair picks the reduction, with torch's warning (F.cross_entropy(x, t,
# reduce=False) once gave the mean).
LEGACY_LOSSES = {
    "cross_entropy": lambda L, x, y: (x, L.tensor(CLASSES)),
    "nll_loss": lambda L, x, y: (L.nn.functional.log_softmax(x, 1), L.tensor(CLASSES)),
    "mse_loss": lambda L, x, y: (x, y),
    "l1_loss": lambda L, x, y: (x, y),
    "smooth_l1_loss": lambda L, x, y: (x, y),
    "binary_cross_entropy": lambda L, x, y: (L.sigmoid(x), L.sigmoid(y)),
    "binary_cross_entropy_with_logits": lambda L, x, y: (x, L.sigmoid(y)),
    "kl_div": lambda L, x, y: (x, L.sigmoid(y)),
    "poisson_nll_loss": lambda L, x, y: (x, L.sigmoid(y)),
    "soft_margin_loss": lambda L, x, y: (x, L.tensor(SIGNS_2D)),
    "multilabel_soft_margin_loss": lambda L, x, y: (x, L.tensor(LABELS)),
    "hinge_embedding_loss": lambda L, x, y: (x, L.tensor(SIGNS_2D)),
    "multi_margin_loss": lambda L, x, y: (x, L.tensor(CLASSES)),
    "multilabel_margin_loss": lambda L, x, y: (x, L.tensor(MULTI_LABELS)),
    "margin_ranking_loss": lambda L, x, y: (x[:, 0], y[:, 0], L.tensor(SIGNS)),
    "cosine_embedding_loss": lambda L, x, y: (x, y, L.tensor(SIGNS)),
    "triplet_margin_loss": lambda L, x, y: (x, y, x * 0.5),
}


@pytest.mark.parametrize("legacy", [{"reduce": False}, {"size_average": False},
                                    {"size_average": False, "reduce": True},
                                    {"size_average": True, "reduce": False}])
@pytest.mark.parametrize("name", sorted(LEGACY_LOSSES))
def test_legacy_size_average_and_reduce_pick_torchs_reduction(name, legacy):
    (x_mine, y_mine), (x_theirs, y_theirs) = leaves(torch, X, Y)
    operands_mine = LEGACY_LOSSES[name](autojit, x_mine, y_mine)
    operands_theirs = LEGACY_LOSSES[name](torch, x_theirs, y_theirs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out_mine = getattr(nn.functional, name)(*operands_mine, **legacy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_theirs = getattr(torch.nn.functional, name)(*operands_theirs, **legacy)
    assert tuple(out_mine.shape) == tuple(out_theirs.shape), name
    assert any("size_average and reduce args will be deprecated" in str(w.message)
               for w in caught), name
    compare_with_gradients(torch, out_mine, out_theirs, [x_mine, y_mine], [x_theirs, y_theirs],
                           message=name)


def test_normalize_and_one_hot_match_torch():
    for p, dim in [(2.0, 1), (1.0, 0), (3.0, -1)]:
        (x_mine,), (x_theirs,) = leaves(torch, np.vstack([X, np.zeros((1, 5))]))
        compare_with_gradients(torch, nn.functional.normalize(x_mine, p, dim),
                               torch.nn.functional.normalize(x_theirs, p, dim), [x_mine],
                               [x_theirs])
    labels = np.array([[0, 3], [1, 1]])
    for classes in (-1, 6):
        mine = nn.functional.one_hot(autojit.tensor(labels), classes)
        theirs = torch.nn.functional.one_hot(torch.tensor(labels), classes)
        assert mine.dtype is autojit.int64 and mine.tolist() == theirs.tolist()


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, float("inf")])
def test_pdist_matches_torch(p):
    rows = np.vstack([X, X[:1]])  # a repeated row: a zero distance
    (x_mine,), (x_theirs,) = leaves(torch, rows)
    compare_with_gradients(torch, nn.functional.pdist(x_mine, p), torch.pdist(x_theirs, p),
                           [x_mine], [x_theirs], message=str(p))
    assert tuple(nn.functional.pdist(autojit.zeros(1, 3)).shape) == (0,)


def _error(function, lib):
    try:
        function(lib)
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error), str(error)
    return None, None


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1.0])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([], dtype=lib.int64)),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([-1])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([3]), 3),
    lambda lib: lib.nn.functional.kl_div(lib.zeros(2), lib.zeros(2), reduction="bad"),
    lambda lib: lib.nn.functional.gaussian_nll_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                    lib.ones(3, 3)),
    lambda lib: lib.nn.functional.gaussian_nll_loss(lib.zeros(2), lib.zeros(2), -lib.ones(2)),
    lambda lib: lib.nn.functional.margin_ranking_loss(lib.zeros(2), lib.zeros(2),
                                                      lib.zeros(2, 1)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                        lib.zeros(2, 1)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(lib.zeros(3), lib.zeros(3),
                                                        lib.zeros(2)),
    lambda lib: lib.nn.functional.triplet_margin_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                      lib.zeros(3)),
    lambda lib: lib.nn.TripletMarginLoss(margin=0.0),
    lambda lib: lib.nn.functional.pdist(lib.zeros(2, 3, 4)),
    lambda lib: lib.nn.functional.pdist(lib.zeros(3, 4), -1),
    lambda lib: lib.nn.functional.pdist(lib.zeros(3, 4, dtype=lib.int64)),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.zeros(2, 3), lib.tensor([1, 3])),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.zeros(2, 3), lib.tensor([1])),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.zeros(2, 3), lib.tensor([1, 2]), p=3),
    lambda lib: lib.nn.functional.multilabel_margin_loss(lib.zeros(2, 3), lib.tensor([1, 2])),
    lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-1.0),
    lambda lib: lib.nn.functional.soft_margin_loss(lib.zeros(2), lib.zeros(2), reduction="x"),
    lambda lib: lib.nn.functional.soft_margin_loss(lib.zeros(2, requires_grad=True),
                                                   lib.ones(2, requires_grad=True)),
    lambda lib: lib.nn.functional.kl_div(lib.zeros(2, 3), lib.ones(2, 3, dtype=lib.int64),
                                         reduction="batchmean"),
    lambda lib: lib.nn.functional.kl_div(lib.ones(2, 3, dtype=lib.int64), lib.zeros(2, 3),
                                         reduction="sum"),
    lambda lib: lib.nn.functional.kl_div(lib.zeros(2, 3), lib.ones(2, 3, dtype=lib.bool),
                                         reduction="sum"),
    lambda lib: lib.nn.functional.multilabel_margin_loss(lib.zeros(2, 3),
                                                         lib.tensor([[1.0, 0.0, -1.0]] * 2)),
    lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.zeros(2, 3), lib.tensor([[1, 0, -1]] * 2, dtype=lib.int32)),
    lambda lib: lib.nn.functional.multilabel_margin_loss(lib.zeros(2, 3),
                                                         lib.tensor([[1, 0, -1], [3, -1, 0]])),
    lambda lib: lib.nn.functional.multilabel_margin_loss(lib.zeros(2, 3),
                                                         lib.tensor([[1, -1, 7], [0, -1, 0]])),
    lambda lib: lib.nn.functional.multilabel_margin_loss(lib.zeros(2, 3),
                                                         lib.tensor([[-2, 0, 1], [0, -1, 0]])),
], ids=["one_hot-float", "one_hot-empty", "one_hot-negative", "one_hot-large", "kl_div-bad",
        "gaussian-size", "gaussian-negative", "ranking-dims", "cosine-target-2d",
        "cosine-target-1d-input-1d", "triplet-dims", "triplet-margin", "pdist-3d", "pdist-p",
        "pdist-int", "multi-margin-range", "multi-margin-target", "multi-margin-p",
        "multilabel-target", "with-distance-margin", "soft-margin-reduction",
        "soft-margin-target-grad", "kl_div-integer-target", "kl_div-integer-input",
        "kl_div-bool-target", "multilabel-float-target", "multilabel-int32-target",
        "multilabel-class-range", "multilabel-range-after-end", "multilabel-negative"])
def test_errors_match_torch(call):
    mine, theirs = _error(call, autojit), _error(call, torch)
    assert theirs[0] is not None and mine[0] is theirs[0]
    assert mine[1].replace("autojit", "torch") == theirs[1]


@pytest.mark.parametrize("name, good, bad", [
    ("multilabel_margin_loss", [[2, 0, -1], [1, -1, 2]], [[2, 0, -1], [1, -1, 3]]),
    ("multi_margin_loss", [2, 0], [2, 3]),
])
def test_margin_targets_out_of_range_raise_when_compiled(name, good, bad):
    """A compiled function checks the class targets on every call, as eager does: an
    out-of-range class was left out of the loss."""
    loss = getattr(nn.functional, name)
    step = autojit.compile(lambda x, t: loss(x, t))
    x = autojit.tensor(X[:2, :3])
    expected = loss(x, autojit.tensor(good))
    np.testing.assert_allclose(step(x, autojit.tensor(good)).numpy(), expected.numpy())
    with pytest.raises(RuntimeError, match="out of range"):
        step(x, autojit.tensor(bad))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", ["mse_loss", "smooth_l1_loss", "huber_loss",
                                  "binary_cross_entropy", "binary_cross_entropy_with_logits",
                                  "cross_entropy", "cross_entropy_3d", "nll_loss",
                                  "soft_margin_loss", "gaussian_nll_loss_var"])
def test_integer_inputs_raise_torchs_errors(name, dtype):
    """Each loss refuses an integer or bool input (gaussian_nll_loss: var) with torch's error
    and message; soft_margin_loss and gaussian_nll_loss computed one in floats."""
    messages = []
    for lib in (torch, autojit):
        x = lib.tensor([[1, -2], [3, 0]], dtype=getattr(lib, dtype))
        y = lib.tensor([[0, 1], [1, 1]], dtype=getattr(lib, dtype))
        function = getattr(lib.nn.functional, name.replace("_3d", "").replace("_var", ""))
        with pytest.raises((RuntimeError, NotImplementedError)) as caught:
            if name in ("cross_entropy", "nll_loss"):
                function(x, lib.tensor([0, 1]))
            elif name == "cross_entropy_3d":
                function(x[None], lib.tensor([[0, 1]]))
            elif name == "gaussian_nll_loss_var":
                function(x.float(), y.float(), lib.ones(2, 2, dtype=getattr(lib, dtype)))
            else:
                function(x, y)
        messages.append((caught.type, str(caught.value)))
    assert messages[0] == messages[1]


def test_kl_div_mean_warns_as_torch():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        nn.functional.kl_div(autojit.zeros(2), autojit.ones(2))


TRAINED = [("KLDivLoss", {"reduction": "batchmean"}), ("GaussianNLLLoss", {}),
           ("CosineEmbeddingLoss", {"margin": 0.1}), ("TripletMarginLoss", {"swap": True}),
           ("MultiLabelSoftMarginLoss", {}), ("HingeEmbeddingLoss", {}),
           ("MultiMarginLoss", {"p": 2})]


def _loss_of(kind, loss_function, out, labels):
    if kind == "KLDivLoss":
        return loss_function(nn.functional.log_softmax(out, 1), nn.functional.softmax(labels, 1))
    if kind == "GaussianNLLLoss":
        return loss_function(out, labels, nn.functional.softplus(out))
    if kind == "CosineEmbeddingLoss":
        return loss_function(out, labels, autojit.tensor(SIGNS))
    if kind == "TripletMarginLoss":
        return loss_function(out, labels, out * 0.5)
    if kind == "MultiMarginLoss":
        return loss_function(out, autojit.tensor(CLASSES))
    if kind == "MultiLabelSoftMarginLoss":
        return loss_function(out, (labels > 0).to(out.dtype))
    return loss_function(out, autojit.tensor(SIGNS_2D).to(out.dtype))


@pytest.mark.parametrize("kind, options", TRAINED, ids=[kind for kind, _ in TRAINED])
def test_a_compiled_training_step_equals_eager(kind, options):
    def run(compiled: bool):
        autojit.manual_seed(0)
        model = nn.Linear(5, 5)
        loss_function = getattr(nn, kind)(**options)
        optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
        x = autojit.tensor(X, dtype=autojit.float32)
        y = autojit.tensor(Y, dtype=autojit.float32)

        def step(x, y):
            optimizer.zero_grad()
            loss = _loss_of(kind, loss_function, model(x), y)
            loss.backward()
            optimizer.step()
            return loss.detach()

        function = autojit.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error", autojit.CompileWarning)
            losses = [float(function(x, y)) for _ in range(4)]
        return losses, [p.detach().numpy().copy() for p in model.parameters()]

    compiled_losses, compiled_weights = run(True)
    eager_losses, eager_weights = run(False)
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5)
    for a, b in zip(compiled_weights, eager_weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
