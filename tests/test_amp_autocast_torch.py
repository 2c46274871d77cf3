"""autocast against torch's CPU autocast: the dtype every op gives under bfloat16 and float16
autocast (torch's op lists), the values and gradients of the lower-precision ops, the settings
and their errors, nesting, the weight cache, custom_fwd/custom_bwd, and autocast inside
autojit.compile (docs/amp.md, docs/notes/autocast.md).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_compare import torch

import autojit

rng = np.random.default_rng(5)


def _ops(lib):
    """name -> a call made under autocast: every op torch's CPU lists name, and ops that must
    keep their dtype (torch runs them as one kernel) though autojit writes them from listed
    ones. `ab` is bfloat16; the rest float32."""
    F, bf = lib.nn.functional, lib.bfloat16

    def r(*shape):
        return lib.tensor(np.asarray(rng.standard_normal(shape), np.float32))

    a, b, v, t = r(4, 4), r(4, 4), r(4), lib.tensor([0, 1, 2, 3])
    ab, img, seq, vol = a.to(bf), r(2, 3, 6, 6), r(2, 5, 4), r(1, 2, 4, 4, 4)
    return {
        "mm": lambda: lib.mm(a, b), "mm_mixed": lambda: lib.mm(a, ab), "matmul": lambda: a @ b,
        "matmul_vec": lambda: a @ v, "bmm": lambda: lib.bmm(seq, seq.transpose(1, 2)),
        "baddbmm": lambda: lib.baddbmm(r(2, 5, 5), seq, seq.transpose(1, 2)),
        "addmm": lambda: lib.addmm(v, a, b),
        "addbmm": lambda: lib.addbmm(a, r(2, 4, 4), r(2, 4, 4)),
        "mv": lambda: lib.mv(a, v), "dot": lambda: lib.dot(v, v), "outer": lambda: lib.outer(v, v),
        "addmv": lambda: lib.addmv(v, a, v), "einsum": lambda: lib.einsum("ij,jk->ik", a, b),
        "kron": lambda: lib.kron(a, b), "multi_dot": lambda: lib.linalg.multi_dot([a, b, a]),
        "matrix_power": lambda: lib.linalg.matrix_power(a, 3),
        "vecdot": lambda: lib.linalg.vecdot(a, b),
        "linear": lambda: F.linear(a, b, v), "bilinear": lambda: F.bilinear(a, a, r(2, 4, 4), r(2)),
        "conv1d": lambda: F.conv1d(seq, r(3, 5, 2)), "conv2d": lambda: F.conv2d(img, r(4, 3, 3, 3)),
        "conv3d": lambda: F.conv3d(vol, r(3, 2, 2, 2, 2)),
        "conv_transpose2d": lambda: F.conv_transpose2d(img, r(3, 2, 3, 3), r(2)),
        "prelu": lambda: F.prelu(a, lib.tensor([0.25])),
        "sdpa": lambda: F.scaled_dot_product_attention(seq, seq, seq),
        "softmax": lambda: F.softmax(a, -1), "softmax_bf": lambda: F.softmax(ab, -1),
        "log_softmax_bf": lambda: F.log_softmax(ab, -1), "sum_bf": lambda: ab.sum(),
        "prod": lambda: a.prod(), "prod_bf": lambda: ab.prod(1), "cumsum_bf": lambda: ab.cumsum(0),
        "norm_bf": lambda: ab.norm(), "layer_norm_bf": lambda: F.layer_norm(ab, (4,)),
        "group_norm_bf": lambda: F.group_norm(img.to(bf), 3),
        "rms_norm_bf": lambda: F.rms_norm(ab, (4,)),
        "gelu_bf": lambda: F.gelu(ab), "add_mixed": lambda: ab + a,
        "cat": lambda: lib.cat([ab, a]), "stack": lambda: lib.stack([ab, a]),
        "cat_bf": lambda: lib.cat([ab, ab]), "cat_f64": lambda: lib.cat([ab, a.double()]),
        "index_copy": lambda: ab.index_copy(0, lib.tensor([0, 1]), a[:2]),
        "addcmul": lambda: lib.addcmul(ab, a, a), "atan2": lambda: lib.atan2(ab, a),
        "mse": lambda: F.mse_loss(ab, ab), "l1": lambda: F.l1_loss(ab, ab),
        "smooth_l1": lambda: F.smooth_l1_loss(ab, ab), "huber": lambda: F.huber_loss(ab, ab),
        "cross_entropy": lambda: F.cross_entropy(ab, t), "nll": lambda: F.nll_loss(ab, t),
        "kl_div": lambda: F.kl_div(ab, ab.softmax(-1), reduction="batchmean"),
        "bce": lambda: F.binary_cross_entropy(ab.sigmoid(), ab.sigmoid()),
        "bce_logits": lambda: F.binary_cross_entropy_with_logits(ab, ab.sigmoid()),
        "poisson_nll": lambda: F.poisson_nll_loss(ab, ab.abs()),
        "gaussian_nll": lambda: F.gaussian_nll_loss(ab, ab, ab.abs() + 1),
        "soft_margin": lambda: F.soft_margin_loss(ab, ab.sign()),
        "hinge_embedding": lambda: F.hinge_embedding_loss(ab, ab.sign()),
        "margin_ranking": lambda: F.margin_ranking_loss(ab[0], ab[1], ab[2].sign()),
        "cosine_embedding": lambda: F.cosine_embedding_loss(ab, ab, ab[:, 0].sign()),
        "triplet": lambda: F.triplet_margin_loss(ab, ab, ab),
        "multi_margin": lambda: F.multi_margin_loss(ab, t),
        "multilabel_margin": lambda: F.multilabel_margin_loss(ab, lib.tensor([[0, 1, -1, 0]] * 4)),
        "ctc": lambda: F.ctc_loss(r(5, 1, 4).to(bf).log_softmax(2), lib.tensor([[1, 2]]),
                                  lib.tensor([5]), lib.tensor([2])),
        "cosine_similarity_bf": lambda: F.cosine_similarity(ab, ab),
        "cdist": lambda: lib.cdist(a, b),
        "normalize_bf": lambda: F.normalize(ab), "trace": lambda: lib.trace(ab),
        "avg_pool2d_bf": lambda: F.avg_pool2d(img.to(bf), 2),
        "avg_pool3d_bf": lambda: F.avg_pool3d(vol.to(bf), 2),
        "max_pool3d_bf": lambda: F.max_pool3d(vol.to(bf), 2),
        "max_pool3d_indices_bf": lambda: F.max_pool3d(vol.to(bf), 2, return_indices=True)[0],
        "adaptive_avg_pool3d_bf": lambda: F.adaptive_avg_pool3d(vol.to(bf), 2),
        "adaptive_max_pool3d_bf": lambda: F.adaptive_max_pool3d(vol.to(bf), 2),
        "max_unpool2d_bf": lambda: F.max_unpool2d(
            *F.max_pool2d(img.to(bf), 2, return_indices=True), 2),
        "pad_reflect_bf": lambda: F.pad(img.to(bf), (1, 1, 1, 1), mode="reflect"),
        "pad_replicate_bf": lambda: F.pad(seq.to(bf), (1, 1), mode="replicate"),
        "pad_circular_bf": lambda: F.pad(img.to(bf), (1, 1, 1, 1), mode="circular"),
        "pad_reflect3d_bf": lambda: F.pad(vol.to(bf), (1, 1, 1, 1, 1, 1), mode="reflect"),
        "grid_sample_bf": lambda: F.grid_sample(img.to(bf), r(2, 3, 3, 2).tanh(),
                                                align_corners=False),
        "affine_grid": lambda: F.affine_grid(r(2, 2, 3), [2, 3, 4, 4], align_corners=False),
        "embedding_bag": lambda: F.embedding_bag(t, r(5, 4), lib.tensor([0, 2]),
                                                 per_sample_weights=r(4), mode="sum"),
        "local_response_norm_bf": lambda: F.local_response_norm(img.to(bf), 2),
        "linalg_inv_bf": lambda: lib.linalg.inv(ab + 4 * lib.eye(4, dtype=bf)),
        "linalg_solve_bf": lambda: lib.linalg.solve(ab + 4 * lib.eye(4, dtype=bf), ab),
        "linalg_svdvals_bf": lambda: lib.linalg.svdvals(ab),
        "linalg_qr_bf": lambda: lib.linalg.qr(ab)[0],
        "linalg_eigh_bf": lambda: lib.linalg.eigh(ab + ab.t())[0],
        "multi_head_attention": lambda: lib.nn.MultiheadAttention(4, 2, batch_first=True)(
            seq, seq, seq)[0],
        "gru": lambda: lib.nn.GRU(4, 3)(seq)[0], "rnn": lambda: lib.nn.RNN(4, 3)(seq)[0],
        "lstm_cell": lambda: lib.nn.LSTMCell(4, 3)(a)[0],
        "rnn_cell": lambda: lib.nn.RNNCell(4, 3)(a),
        "transformer_layer": lambda: lib.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)(seq),
        "float64": lambda: F.linear(a.double(), b.double()), "int": lambda: t @ t,
    }


def _dtypes(lib, dtype) -> dict:
    found = {}
    for name, call in _ops(lib).items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with lib.autocast("cpu", dtype=getattr(lib, dtype)):
                    found[name] = str(call().dtype).split(".")[-1]
        except RuntimeError as error:
            found[name] = f"RuntimeError: {str(error).replace('torch.', 'autojit.')}"
    return found


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_every_op_gives_torchs_dtype_under_cpu_autocast(dtype):
    theirs, mine = _dtypes(torch, dtype), _dtypes(autojit, dtype)
    different = {name: (theirs[name], mine[name]) for name in theirs if theirs[name] != mine[name]}
    assert not different


# ---- values and gradients ---------------------------------------------------------------------

F_LINEAR = [
    ("linear", lambda L, x, w, b: L.nn.functional.linear(x, w, b), [(16, 32), (8, 32), (8,)]),
    ("matmul", lambda L, x, w: x @ w, [(2, 16, 32), (32, 8)]),
    ("baddbmm", lambda L, i, x, w: L.baddbmm(i, x, w, beta=0.5, alpha=2.0),
     [(3, 16, 8), (3, 16, 32), (3, 32, 8)]),
    ("addmm", lambda L, i, x, w: L.addmm(i, x, w), [(8,), (16, 32), (32, 8)]),
    ("einsum", lambda L, x, w: L.einsum("bij,bjk->bik", x, w), [(3, 16, 32), (3, 32, 8)]),
    ("conv2d", lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, padding=1),
     [(2, 3, 8, 8), (4, 3, 3, 3), (4,)]),
    ("conv_transpose2d", lambda L, x, w, b: L.nn.functional.conv_transpose2d(x, w, b, stride=2),
     [(2, 3, 5, 5), (3, 4, 3, 3), (4,)]),
    ("cross_entropy", lambda L, x, w: L.nn.functional.cross_entropy(x @ w, L.arange(8)),
     [(8, 16), (16, 8)]),
]


def _pair(shapes):
    arrays = [np.asarray(rng.standard_normal(shape), np.float32) for shape in shapes]
    return ([torch.tensor(a, requires_grad=True) for a in arrays],
            [autojit.tensor(a, requires_grad=True) for a in arrays])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,call,shapes", F_LINEAR, ids=[case[0] for case in F_LINEAR])
def test_lower_precision_ops_give_torchs_values_and_gradients(dtype, name, call, shapes):
    theirs, mine = _pair(shapes)
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        expected = call(torch, *theirs)
    with autojit.autocast("cpu", dtype=getattr(autojit, dtype)):
        got = call(autojit, *mine)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    # One rounding of a float32 result, as torch's lower-precision kernels: equal bit for bit
    # (float16's products may round a sum of another order once in a few hundred elements).
    close = {"atol": 0, "rtol": 0} if dtype == "bfloat16" else {"atol": 1e-3, "rtol": 1e-3}
    if expected.dtype is torch.float32:  # a loss in float32: the order of its sums differs
        close = {"atol": 1e-6, "rtol": 1e-5}
    if name.startswith("conv_transpose"):
        # torch's transposed convolution rounds once on CPUs with native bfloat16 (oneDNN) and
        # rounds its partial sums elsewhere (and in float16): autojit rounds the float32 result
        # once, which is checked exactly; torch's own result is a few rounding steps away.
        lower = getattr(torch, dtype)
        once = call(torch, *(t.detach().to(lower).float() for t in theirs)).to(lower)
        np.testing.assert_allclose(got.float().detach().numpy(), once.float().numpy(), **close)
        close = {"atol": 0.07, "rtol": 0.02}
    np.testing.assert_allclose(got.float().detach().numpy(), expected.float().detach().numpy(),
                               **close)
    expected.float().sum().backward()
    got.float().sum().backward()
    for t, j in zip(theirs, mine):
        assert j.grad.dtype is autojit.float32
        if not name.startswith("conv"):  # torch's convolution backward rounds in its own places
            np.testing.assert_allclose(j.grad.numpy(), t.grad.numpy(), **close)
        else:
            np.testing.assert_allclose(j.grad.numpy(), t.grad.numpy(), atol=0.07, rtol=0.02)


def test_attention_is_close_to_torchs():
    # torch's CPU attention kernel rounds its probabilities to bfloat16 before the second
    # product; autojit rounds the result once: a rounding step apart at most.
    theirs, mine = _pair([(2, 4, 16, 8)] * 3)
    with torch.autocast("cpu"):
        expected = torch.nn.functional.scaled_dot_product_attention(*theirs, is_causal=True)
    with autojit.autocast("cpu"):
        got = autojit.nn.functional.scaled_dot_product_attention(*mine, is_causal=True)
    assert got.dtype is autojit.bfloat16
    np.testing.assert_allclose(got.float().detach().numpy(), expected.float().detach().numpy(),
                               atol=0.008, rtol=0.008)


# ---- the settings -------------------------------------------------------------------------------

def test_settings_nesting_and_disabled_regions_as_torch():
    x = autojit.ones(2, 2)
    assert not autojit.is_autocast_enabled("cpu") and not autojit.is_autocast_enabled()
    assert autojit.get_autocast_dtype("cpu") is autojit.bfloat16
    assert autojit.get_autocast_dtype("cuda") is autojit.float16
    with autojit.autocast("cpu"):
        assert autojit.is_autocast_enabled("cpu") and not autojit.is_autocast_enabled("cuda")
        assert (x @ x).dtype is autojit.bfloat16
        with autojit.autocast("cpu", enabled=False):
            assert not autojit.is_autocast_enabled("cpu") and (x @ x).dtype is autojit.float32
            with autojit.amp.autocast("cpu", dtype=autojit.float16):
                assert (x @ x).dtype is autojit.float16
            assert (x @ x).dtype is autojit.float32
        assert (x @ x).dtype is autojit.bfloat16
    assert (x @ x).dtype is autojit.float32

    @autojit.autocast("cpu")
    def product(a):
        return a @ a

    assert product(x).dtype is autojit.bfloat16 and not autojit.is_autocast_enabled("cpu")
    autojit.set_autocast_enabled("cpu", True)
    try:
        assert (x @ x).dtype is autojit.bfloat16
    finally:
        autojit.set_autocast_enabled("cpu", False)
    with pytest.warns(DeprecationWarning, match="is_autocast_cpu_enabled"):
        assert autojit.is_autocast_cpu_enabled() is False
    with pytest.warns(DeprecationWarning):
        assert autojit.get_autocast_gpu_dtype() is autojit.float16


def _warning_or_error(framework, make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            made = make(framework)
        except (RuntimeError, ValueError, TypeError) as error:
            return type(error).__name__, str(error).replace("torch.", "autojit.")
    return [(w.category.__name__, str(w.message).replace("torch.", "autojit."))
            for w in caught], getattr(made, "_enabled", None)


AUTOCAST_MAKERS = [
    lambda lib: lib.autocast("cuda"),            # no GPU here: warns and disables
    lambda lib: lib.autocast("cpu", dtype=lib.float32),
    lambda lib: lib.autocast("mps"),
    lambda lib: lib.autocast("nonsense"),
    lambda lib: lib.autocast(lib.device("cpu")),
    lambda lib: lib.cpu.amp.autocast(),
    lambda lib: lib.cuda.amp.autocast(),
    lambda lib: lib.autocast("cpu")(3),
]


@pytest.mark.parametrize("make", AUTOCAST_MAKERS, ids=[
    "cuda", "float32", "mps", "nonsense", "device", "cpu.amp", "cuda.amp", "not-callable"])
def test_autocast_warnings_and_errors_as_torch(make):
    if make in (AUTOCAST_MAKERS[0], AUTOCAST_MAKERS[6]) and autojit.cuda.is_available():
        pytest.skip("autojit sees a GPU (Numba's simulator, enabled by another test module)")
    mine, theirs = _warning_or_error(autojit, make), _warning_or_error(torch, make)
    if "<class" in str(theirs):  # autojit's device class lives in autojit.tensor.device
        mine = (mine[0], mine[1].replace("autojit.tensor.device.device", "autojit.device"))
    assert mine == theirs


def test_float64_and_other_devices_are_left_alone():
    x = autojit.ones(2, 2, dtype=autojit.float64)
    with autojit.autocast("cpu"):
        assert (x @ x).dtype is autojit.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autojit.autocast("cuda"):  # disabled without a GPU; CPU tensors are not its
            assert (autojit.ones(2, 2) @ autojit.ones(2, 2)).dtype is autojit.float32


def test_weight_casts_are_cached_within_a_region_as_torch():
    results = {}
    for lib in (torch, autojit):
        w = lib.ones(2, 2, requires_grad=True)
        with lib.autocast("cpu"):
            first = lib.mm(lib.ones(2, 2), w)
            with lib.no_grad():
                w.mul_(3)  # the cached cast is stale until the region exits
            stale = lib.mm(lib.ones(2, 2), w)
        fresh = lib.mm(lib.ones(2, 2), w.detach())
        with lib.autocast("cpu", cache_enabled=False):
            w2 = lib.ones(2, 2, requires_grad=True)
            lib.mm(lib.ones(2, 2), w2)
            with lib.no_grad():
                w2.mul_(3)
            uncached = lib.mm(lib.ones(2, 2), w2)
        with lib.autocast("cpu"):
            with lib.no_grad():
                lib.mm(lib.ones(2, 2), w)  # not cached under no_grad
            kept = lib.mm(lib.ones(2, 2), w).requires_grad
        results[lib.__name__] = [first.tolist(), stale.tolist(), fresh.tolist(),
                                 uncached.tolist(), kept]
    assert results["autojit"] == results["torch"]
    from autojit.ops.autocast import _settings

    assert _settings.cache == {} and _settings.nesting == 0


def test_custom_fwd_and_custom_bwd_as_torch():
    seen = {}
    for lib in (torch, autojit):
        class Scaled(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a @ b  # autocast is off inside: float32

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                return grad @ b.t(), a.t() @ grad

        class Plain(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu")
            def forward(ctx, a):
                return a @ a

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, grad, lib=lib):
                seen.setdefault(lib.__name__, []).append(lib.is_autocast_enabled("cpu"))
                return grad

        a = lib.ones(2, 2, requires_grad=True)
        with lib.autocast("cpu"):
            out, plain = Scaled.apply(a.bfloat16(), a), Plain.apply(a)
        plain.float().sum().backward()
        seen[lib.__name__] += [str(out.dtype), str(plain.dtype)]
    assert seen["autojit"] == [v.replace("torch.", "autojit.") if isinstance(v, str) else v
                               for v in seen["torch"]]


# ---- compiled -----------------------------------------------------------------------------------

def test_autocast_compiles_for_float16_and_disabled_regions_and_breaks_for_bfloat16():
    layer = autojit.nn.Linear(8, 4)
    x = autojit.randn(3, 8)

    def step(x, dtype, enabled=True):
        with autojit.autocast("cpu", dtype=dtype, enabled=enabled):
            y = layer(x).relu()
        return autojit.nn.functional.mse_loss(y, x[:, :4])

    for dtype, enabled, breaks in ((autojit.float16, True, 0), (autojit.bfloat16, False, 0),
                                   (autojit.bfloat16, True, 1)):
        compiled = autojit.compile(lambda x, dtype=dtype, enabled=enabled: step(x, dtype, enabled))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = [compiled(x) for _ in range(2)]
        stats = compiled.stats()
        assert (stats.graph_breaks > 0, stats.compiled_calls) == (bool(breaks), 2 - 2 * breaks)
        assert any("bfloat16" in str(w.message) for w in caught) == bool(breaks)
        expected = step(x, dtype, enabled)
        for got in results:  # the float32 loss: its sum may run in another order compiled
            np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(),
                                       rtol=1e-6)
        layer.zero_grad()
        results[0].backward()
        compiled_grad = layer.weight.grad.clone()
        layer.zero_grad()
        expected.backward()
        np.testing.assert_allclose(compiled_grad.numpy(), layer.weight.grad.numpy(), rtol=1e-3)


def test_a_compiled_function_retraces_when_called_under_autocast():
    layer = autojit.nn.Linear(4, 2)
    compiled = autojit.compile(lambda x: layer(x))
    x = autojit.randn(3, 4)
    assert compiled(x).dtype is autojit.float32
    with autojit.autocast("cpu", dtype=autojit.float16):
        assert compiled(x).dtype is autojit.float16
    assert compiled(x).dtype is autojit.float32
    assert compiled.stats().recompiles == 1
    assert compiled.recompile_reasons == ["autocast changed (was off)"]


# ---- a training step ---------------------------------------------------------------------------

def _train(lib, dtype: str, compiled: bool = False, steps: int = 4):
    """A convolution, a linear layer and a cross entropy under autocast, with GradScaler and
    SGD with momentum; the losses and the parameters after each step."""
    weights = np.random.default_rng(1)
    conv, linear = lib.nn.Conv2d(3, 4, 3, padding=1), lib.nn.Linear(4 * 8 * 8, 4)
    params = [*conv.parameters(), *linear.parameters()]
    with lib.no_grad():
        for p in params:
            p.copy_(lib.tensor(np.asarray(weights.standard_normal(tuple(p.shape)) * 0.1,
                                          np.float32)))
    optimizer = lib.optim.SGD(params, lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 10)
    data = np.random.default_rng(2)
    x = lib.tensor(np.asarray(data.standard_normal((8, 3, 8, 8)), np.float32))
    y = lib.tensor(data.integers(0, 4, 8))

    def step(x, y):
        optimizer.zero_grad()
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            logits = linear(lib.nn.functional.relu(conv(x)).flatten(1))
            loss = lib.nn.functional.cross_entropy(logits, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss.detach()

    run = lib.compile(step) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        losses = [run(x, y).item() for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in params], run


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_mixed_precision_training_step_tracks_torch(dtype):
    theirs, their_params, _ = _train(torch, dtype)
    mine, my_params, _ = _train(autojit, dtype)
    # The products agree bit for bit; the convolution's gradients and the rounding of the ops
    # between them (a rounding step here and there, a ReLU input near 0 on the other side)
    # grow over the steps with momentum.
    np.testing.assert_allclose(mine, theirs, rtol=1e-2)
    for p, q in zip(my_params, their_params):  # bfloat16 keeps 8 bits, float16 11
        np.testing.assert_allclose(p, q, atol=2e-2 if dtype == "bfloat16" else 5e-3)
    if dtype == "float16":  # compiled (bfloat16 breaks the graph): eager's values
        compiled, compiled_params, step = _train(autojit, dtype, compiled=True)
        assert step.stats().compiled_calls == 3  # the first step creates the momentum
        np.testing.assert_allclose(compiled, mine, rtol=1e-6)  # float32 sums' order
        for p, q in zip(compiled_params, my_params):
            np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-7)


# ---- ops torch computes in float32 for lower-precision inputs ----------------------------------

FLOAT32_INSIDE = {
    "softmax": lambda L, x: x.softmax(-1),
    "gelu": lambda L, x: L.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda L, x: L.nn.functional.silu(x.clone(), inplace=True),
    "mean": lambda L, x: x.mean(-1), "var": lambda L, x: x.var(-1),
    "std": lambda L, x: x.std((2, 3)),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (6,), L.ones(6), L.zeros(6) + 0.5),
    "group_norm": lambda L, x: L.nn.functional.group_norm(x, 2, L.ones(4) * 2, L.ones(4)),
    "rms_norm": lambda L, x: L.nn.functional.rms_norm(x, (6,)),
    "batch_norm": lambda L, x: L.nn.functional.batch_norm(x, L.zeros(4), L.ones(4), L.ones(4),
                                                         L.ones(4), training=True),
    "batch_norm_module": lambda L, x: L.nn.BatchNorm2d(4).eval()(x),
    "softmax_to_float32": lambda L, x: x.softmax(-1, L.float32),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_ops_computed_in_float32_give_torchs_bits_and_dtypes(dtype):
    # Its own generator: the data must not depend on which tests ran before in the process.
    data = np.asarray(np.random.default_rng(12).standard_normal((4, 4, 6, 6)), np.float32)
    for name, call in FLOAT32_INSIDE.items():
        expected = call(torch, torch.tensor(data).to(getattr(torch, dtype)))
        got = call(autojit, autojit.tensor(data).to(getattr(autojit, dtype)))
        assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1], name
        close = {"rtol": 0, "atol": 0} if dtype == "bfloat16" else {"rtol": 1e-3, "atol": 1e-6}
        if name == "softmax_to_float32":  # float32's exp: a last bit here and there
            close = {"rtol": 1e-6, "atol": 1e-7}
        elif name == "softmax" and dtype == "bfloat16":
            # That last bit of float32's exp crosses a bfloat16 rounding boundary now and then
            # (one draw in 200 of this shape): one bfloat16 step (2^-7 relative) at most.
            close = {"rtol": 2.0 ** -7, "atol": 0}
        np.testing.assert_allclose(got.float().detach().numpy(),
                                   expected.float().detach().numpy(), err_msg=name, **close)
