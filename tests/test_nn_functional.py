"""autojit.nn.functional against PyTorch: softmax family, losses, activations.

Expected values were computed with torch.nn.functional in float64 on the inputs below and are
kept here as numbers, so the tests run without torch. Gradients are checked against central
differences, and second derivatives against differences of first derivatives (the functions
are composites of autojit ops, so double backward must work).
"""

import math
import warnings

import numpy as np
import pytest

import autojit
import autojit.nn.functional as F

X = [[0.126, -0.132, 0.64],
     [0.105, -0.536, 0.362],
     [1.304, 0.947, -0.704],
     [-1.265, -0.623, 0.041]]
X3 = [[[-2.325, -0.219], [-1.246, -0.732], [-0.544, -0.316]],
      [[0.412, 1.043], [-0.129, 1.366], [-0.665, 0.352]]]
P = [[0.668, 0.159, 0.172], [0.475, 0.442, 0.083], [0.107, 0.62, 0.273], [0.273, 0.334, 0.393]]
EXPECTED = {
    'ce_mean': 1.0867569280733722,
    'ce_w_mean': 1.1078479348464074,
    'ce_w_sum': 2.6588350436313783,
    'ce_none': [1.2367964455282843, 0.7796696918900343, 0.0, 1.2438046468017983],
    'ce_ls': 1.0965013725178165,
    'ce_w_ls': 1.133885289047356,
    'ce_w_ls_none': [0.3975881959023843, 0.6545888448274915, 0.0, 1.669147652983779],
    'ce_3d': 1.0422224673603042,
    'ce_1d': 0.7227964455282843,
    'ce_prob': 1.2552481004448695,
    'ce_prob_w_ls': 1.0356150583687713,
    'ce_prob_none': [1.1881736490827561,
                     1.2986606918900343,
                     1.3760394140048895,
                     1.158118646801798],
    'nll_w': 0.27329166666666665,
    'nll_ignore': [-0.126, 0.0, 0.0, 0.623],
    'bce': 0.4360070625167813,
    'bce_edge': [100.0, 100.0, 0.6931471805599453],
    'bcel': 0.7140517755437013,
    'bcel_big': [800.0, 800.0, 0.6931471805599453],
    'mse': 0.6390131666666666,
    'l1': 8.276,
    'softmax': [[0.2903127625720096, 0.22429425618292526, 0.4853929812450653],
                [0.3546337572047844, 0.18680879125720928, 0.4585574515380063],
                [0.5452475245136459, 0.38154922211252745, 0.07320325337382663],
                [0.15170693980051406, 0.28828530501314675, 0.5600077551863392]],
    'log_softmax0': [[-1.70035980090011, -1.6527645192105318, -0.942916273834433],
                     [-1.72135980090011, -2.0567645192105317, -1.220916273834433],
                     [-0.52235980090011, -0.5737645192105317, -2.286916273834433],
                     [-3.09135980090011, -2.1437645192105315, -1.541916273834433]],
    'elu': [0.126, -0.06182950246031335, 0.64],
    'leaky': [0.105, -0.10720000000000002, 0.362],
    'logsigmoid': [-800.0, -0.6931471805599453, -0.04858735157374206, 0.0],
}


T_INDEX = [0, 2, -100, 1]
T3 = [[0, 2], [1, 1]]
W = [0.2, 1.5, 0.7]


def f64(values):
    return autojit.tensor(values, dtype=autojit.float64)


def target(values):
    return autojit.tensor(values)


CASES = {
    "ce_mean": lambda: F.cross_entropy(f64(X), target(T_INDEX)),
    "ce_w_mean": lambda: F.cross_entropy(f64(X), target(T_INDEX), weight=f64(W)),
    "ce_w_sum": lambda: F.cross_entropy(f64(X), target(T_INDEX), weight=f64(W), reduction="sum"),
    "ce_none": lambda: F.cross_entropy(f64(X), target(T_INDEX), reduction="none"),
    "ce_ls": lambda: F.cross_entropy(f64(X), target(T_INDEX), label_smoothing=0.1),
    "ce_w_ls": lambda: F.cross_entropy(f64(X), target(T_INDEX), weight=f64(W),
                                       label_smoothing=0.2),
    "ce_w_ls_none": lambda: F.cross_entropy(f64(X), target(T_INDEX), weight=f64(W),
                                            label_smoothing=0.2, reduction="none"),
    "ce_3d": lambda: F.cross_entropy(f64(X3), target(T3), weight=f64(W)),
    "ce_1d": lambda: F.cross_entropy(f64(X[0]), target(2)),
    "ce_prob": lambda: F.cross_entropy(f64(X), f64(P)),
    "ce_prob_w_ls": lambda: F.cross_entropy(f64(X), f64(P), weight=f64(W), label_smoothing=0.3),
    "ce_prob_none": lambda: F.cross_entropy(f64(X), f64(P), reduction="none"),
    "nll_w": lambda: F.nll_loss(f64(X), target(T_INDEX), weight=f64(W)),
    "nll_ignore": lambda: F.nll_loss(f64(X), target([0, 2, 2, 1]), ignore_index=2,
                                     reduction="none"),
    "bce": lambda: F.binary_cross_entropy(f64(P), f64((np.array(P) > 0.3) * 1.0),
                                          weight=f64(W)),
    "bce_edge": lambda: F.binary_cross_entropy(f64([0.0, 1.0, 0.5]), f64([1.0, 0.0, 1.0]),
                                               reduction="none"),
    "bcel": lambda: F.binary_cross_entropy_with_logits(f64(X), f64(P), pos_weight=f64(W)),
    "bcel_big": lambda: F.binary_cross_entropy_with_logits(
        f64([800.0, -800.0, 0.0]), f64([0.0, 1.0, 0.5]), reduction="none"),
    "mse": lambda: F.mse_loss(f64(X), f64(P)),
    "l1": lambda: F.l1_loss(f64(X), f64(P), reduction="sum"),
    "softmax": lambda: F.softmax(f64(X), 1),
    "log_softmax0": lambda: F.log_softmax(f64(X), 0),
    "elu": lambda: F.elu(f64(X[0]), 0.5),
    "leaky": lambda: F.leaky_relu(f64(X[1]), 0.2),
    "logsigmoid": lambda: F.logsigmoid(f64([-800.0, 0.0, 3.0, 800.0])),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_matches_torch_values(name):
    result = CASES[name]()
    assert result.dtype is autojit.float64
    np.testing.assert_allclose(result.numpy(), np.array(EXPECTED[name]), rtol=1e-10, atol=1e-12)


# ---- gradients ----------------------------------------------------------------------------------


def numerical_gradient(function, array, eps=1e-6):
    gradient = np.zeros_like(array)
    for index in np.ndindex(array.shape):
        plus, minus = array.copy(), array.copy()
        plus[index] += eps
        minus[index] -= eps
        gradient[index] = (function(plus) - function(minus)) / (2 * eps)
    return gradient


def check_gradients(loss_of, array):
    """First derivative against differences; second derivative (of sum(g * v)) likewise."""
    array = np.asarray(array, dtype=np.float64)

    def value(a):
        return loss_of(f64(a)).sum().item()

    x = f64(array).requires_grad_()
    (gradient,) = autojit.autograd.grad(loss_of(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(gradient.detach().numpy(), numerical_gradient(value, array),
                               rtol=1e-5, atol=1e-6)
    direction = np.random.default_rng(1).normal(size=array.shape)

    def directional(a):
        point = f64(a).requires_grad_()
        (g,) = autojit.autograd.grad(loss_of(point).sum(), point)
        return float((g.numpy() * direction).sum())

    expected = numerical_gradient(directional, array)
    if not gradient.requires_grad:  # piecewise-linear functions: the gradient is constant
        np.testing.assert_allclose(expected, 0, atol=1e-5)
        return
    (second,) = autojit.autograd.grad((gradient * f64(direction)).sum(), x)
    np.testing.assert_allclose(second.numpy(), expected, rtol=1e-4, atol=1e-5)


GRADIENT_CASES = {
    "softmax": (lambda x: F.softmax(x, 1) * f64(P), X),
    "log_softmax": (lambda x: F.log_softmax(x, -1) * f64(P), X),
    "cross_entropy": (lambda x: F.cross_entropy(x, target(T_INDEX), weight=f64(W),
                                                label_smoothing=0.1), X),
    "cross_entropy_3d": (lambda x: F.cross_entropy(x, target(T3)), X3),
    "cross_entropy_probabilities": (lambda x: F.cross_entropy(x, f64(P)), X),
    "nll_loss": (lambda x: F.nll_loss(x, target(T_INDEX), reduction="sum"), X),
    "mse_loss": (lambda x: F.mse_loss(x, f64(P)), X),
    "l1_loss": (lambda x: F.l1_loss(x, f64(P)), X),
    "binary_cross_entropy": (lambda x: F.binary_cross_entropy(x, f64(P)), P),
    "binary_cross_entropy_with_logits": (
        lambda x: F.binary_cross_entropy_with_logits(x, f64(P), pos_weight=f64(W)), X),
    "logsigmoid": (lambda x: F.logsigmoid(x), X),
    "elu": (lambda x: F.elu(x), X),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.3), X),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_and_second_derivatives(name):
    function, array = GRADIENT_CASES[name]
    check_gradients(function, array)


def test_cross_entropy_gradient_is_softmax_minus_one_hot():
    x = f64(X).requires_grad_()
    F.cross_entropy(x, target([0, 2, 1, 1]), reduction="sum").backward()
    probabilities = np.exp(np.array(X)) / np.exp(np.array(X)).sum(1, keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), probabilities - np.eye(3)[[0, 2, 1, 1]],
                               atol=1e-12)


def test_bce_with_logits_gradient_is_finite_for_large_logits():
    x = f64([800.0, -800.0, 0.0]).requires_grad_()
    F.binary_cross_entropy_with_logits(x, f64([0.0, 1.0, 0.5]), reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, -1.0, 0.0], atol=1e-12)


# ---- softmax details ----------------------------------------------------------------------------


def test_softmax_is_stable_and_sums_to_one():
    x = autojit.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -1000.0]])
    result = F.softmax(x, dim=1)
    assert result.dtype is autojit.float32
    np.testing.assert_allclose(result.numpy().sum(1), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(result.numpy()[1], [1 / 3] * 3, rtol=1e-6)
    log_result = F.log_softmax(x, dim=1)
    np.testing.assert_allclose(log_result.numpy()[0], [-2.4076059, -1.4076059, -0.4076059],
                               rtol=1e-6)


def test_softmax_infinities_match_torch():
    # torch: log_softmax([-inf, 0]) = [-inf, 0]; softmax([inf, 0]) = [nan, nan];
    # softmax([-inf, -inf]) = [nan, nan].
    np.testing.assert_array_equal(F.log_softmax(autojit.tensor([-math.inf, 0.0]), 0).numpy(),
                                  [-math.inf, 0.0])
    assert np.isnan(F.softmax(autojit.tensor([math.inf, 0.0]), 0).numpy()).all()
    assert np.isnan(F.softmax(autojit.tensor([-math.inf, -math.inf]), 0).numpy()).all()


def test_softmax_dtype_argument_and_zero_dim():
    result = F.softmax(autojit.tensor([1.0, 2.0]), 0, dtype=autojit.float64)
    assert result.dtype is autojit.float64
    np.testing.assert_allclose(result.numpy(), [0.2689414213699951, 0.7310585786300049])
    assert F.softmax(autojit.tensor(2.0), 0).item() == 1.0
    assert F.log_softmax(autojit.tensor(2.0), 0).item() == 0.0


def test_softmax_implicit_dim_warns_and_picks_torch_dim():
    x = f64(X)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        result = F.softmax(x)
    np.testing.assert_allclose(result.numpy(), np.array(EXPECTED["softmax"]))
    with pytest.warns(UserWarning, match="log_softmax"):
        F.log_softmax(f64(X[0]))


def test_softmax_rejects_integer_input():
    # torch's message names the kernel (the last dim's or the general one) and the dtype.
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not "
                       "implemented for 'Long'"):
        F.softmax(autojit.tensor([1, 2]), 0)
    with pytest.raises(NotImplementedError, match="\"log_softmax_kernel_impl\" not "
                       "implemented for 'Int'"):
        F.log_softmax(autojit.tensor([[1, 2]], dtype=autojit.int32), 0)


def test_softmin_is_softmax_of_negation():
    np.testing.assert_allclose(F.softmin(f64(X), 1).numpy(),
                               F.softmax(-f64(X), 1).numpy())


# ---- losses: reductions and dtypes ------------------------------------------------------------


def test_cross_entropy_float32_keeps_dtype():
    loss = F.cross_entropy(autojit.tensor(X), target(T_INDEX))
    assert loss.dtype is autojit.float32 and loss.shape == ()
    assert abs(loss.item() - EXPECTED["ce_mean"]) < 1e-6


def test_cross_entropy_all_ignored_is_nan():
    loss = F.cross_entropy(f64(X), target([-100] * 4))
    assert math.isnan(loss.item())


def test_cross_entropy_custom_ignore_index_matches_masking():
    full = F.cross_entropy(f64(X), target([0, 2, 1, 1]), reduction="none").numpy()
    ignored = F.cross_entropy(f64(X), target([0, 2, 1, 1]), ignore_index=1)
    assert abs(ignored.item() - full[:2].mean()) < 1e-12


def test_none_reduction_shapes():
    assert F.cross_entropy(f64(X3), target(T3), reduction="none").shape == (2, 2)
    assert F.cross_entropy(f64(X[0]), target(1), reduction="none").shape == ()
    assert F.mse_loss(f64(X), f64(P), reduction="none").shape == (4, 3)
    assert F.binary_cross_entropy_with_logits(f64(X), f64(P), reduction="none").shape == (4, 3)


def test_mse_and_l1_numpy_formulas():
    x, y = np.array(X), np.array(P)
    assert abs(F.mse_loss(f64(X), f64(P), reduction="sum").item() - ((x - y) ** 2).sum()) < 1e-12
    assert abs(F.l1_loss(f64(X), f64(P)).item() - np.abs(x - y).mean()) < 1e-12


def test_mse_loss_warns_on_broadcast_target():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(f64(X), f64(P[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(f64(X), f64(P))


# ---- errors --------------------------------------------------------------------------------------


def test_batch_size_mismatch():
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(4\)\."):
        F.cross_entropy(f64(X[:3]), target(T_INDEX))
    with pytest.raises(ValueError, match=r"batch_size \(3\) to match target batch_size \(4\)"):
        F.nll_loss(f64(X[:3]), target(T_INDEX))


def test_target_out_of_bounds():
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.cross_entropy(f64(X), target([0, 1, 7, 2]))
    with pytest.raises(IndexError, match="Target -3 is out of bounds."):
        F.nll_loss(f64(X), target([0, 1, -3, 2]))


def test_target_dtype_and_shape_errors():
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got "
                                           "Float"):
        F.cross_entropy(f64(X), autojit.tensor([1.0, 2.0, 0.0, 1.0]))
    with pytest.raises(RuntimeError, match="but got Int"):
        F.cross_entropy(f64(X), autojit.tensor([1, 2, 0, 1], dtype=autojit.int32))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        F.cross_entropy(f64(X), autojit.rand(4, 2))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 2\], got \[2, 3\]"):
        F.cross_entropy(f64(X3), target([[0, 1, 2], [0, 1, 2]]))
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class "
                                           "probabilities, got Long"):
        F.cross_entropy(f64(X), autojit.zeros(4, 3, dtype=autojit.int64))


def test_weight_and_option_errors():
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 "
                                           r"classes or no classes but got weight tensor of "
                                           r"shape: \[2\]"):
        F.cross_entropy(f64(X), target(T_INDEX), weight=f64([1.0, 2.0]))
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        F.cross_entropy(f64(X), target(T_INDEX), reduction="avg")
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.l1_loss(f64(X), f64(P), reduction="bad")
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: "
                                           "1.5"):
        F.cross_entropy(f64(X), target(T_INDEX), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point "
                                           "target"):
        F.cross_entropy(f64(X), f64(P), ignore_index=1)
    with pytest.raises(NotImplementedError, match="\"log_softmax_lastdim_kernel_impl\" not "
                                                  "implemented for 'Long'"):
        F.cross_entropy(autojit.tensor([[1, 2]]), target([0]))


def test_binary_cross_entropy_errors():
    with pytest.raises(ValueError, match=r"Using a target size \(autojit.Size\(\[4, 1\]\)\) that "
                                         "is different to the input size"):
        F.binary_cross_entropy(f64(P), f64(np.zeros((4, 1))))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(f64(X), f64(P))
    with pytest.raises(RuntimeError, match="Found dtype Long but expected Double"):
        F.binary_cross_entropy(f64(P), autojit.zeros(4, 3, dtype=autojit.int64))
    with pytest.raises(ValueError, match=r"Target size \(autojit.Size\(\[4, 1\]\)\) must be the "
                                         "same as input size"):
        F.binary_cross_entropy_with_logits(f64(X), f64(np.zeros((4, 1))))


def test_losses_are_not_in_numpy():
    # The gradient graph of a loss is made of autojit ops: its nodes are registry Backward nodes.
    x = f64(X).requires_grad_()
    loss = F.cross_entropy(x, target(T_INDEX))
    assert loss.grad_fn is not None
    assert type(loss.grad_fn).__name__.endswith("Backward0")
