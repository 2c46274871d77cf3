"""Compiled float32 products with a long inner extent are as accurate as eager's.

The compiled graph folds a batch of products into one (ir/passes/products.py): a
convolution's weight gradient, eagerly one product per image summed over the batch, becomes
one product whose inner extent is batch x positions. Where the library computes it (fewer
than 16 rows: a layer of 8 channels), it summed each element's 4096 terms in one float32
chain. Behind BatchNorm the terms cancel (its input gradient sums to zero over each channel),
so that rounding is most of the result: the gradient of the small ResNet below (inputs of
mean 3, after one SGD step) was 3.3e-7 from the float64 one compiled, 3.8e-8 eagerly. The
workers now sum such a product's k's (over 1024 of them) in blocks of 64, in float64 across blocks
(codegen/cpu/workers.py, docs/notes/accurate-numerics.md): 3.4e-8. The test takes about 3 s.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu import workers
from autojit.codegen.cpu.gemm import blas

nn = autojit.nn
F = autojit.nn.functional


class _ResNet(nn.Module):
    def __init__(self, channels: int = 8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.fc = nn.Linear(channels, 10)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(h + self.bn2(self.conv2(h)))
        return self.fc(F.adaptive_avg_pool2d(h, 1).flatten(1))


def _gradients(state: dict, data, targets, dtype, compiled: bool) -> dict:
    model = _ResNet()
    model.load_state_dict({name: autojit.tensor(value) for name, value in state.items()})
    model = model.to(dtype)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    run = autojit.compile(step) if compiled else step
    x, y = autojit.tensor(data).to(dtype), autojit.tensor(targets)
    for _ in range(2):  # the gradient after one SGD step
        run(x, y)
    return {name: p.grad.numpy().astype(np.float64) for name, p in model.named_parameters()}


def test_a_small_resnets_compiled_float32_gradient_is_as_accurate_as_eagers():
    generator = np.random.default_rng(0)
    autojit.manual_seed(0)
    state = {name: value.detach().numpy().astype(np.float64)
             for name, value in _ResNet().state_dict().items()}
    data = generator.standard_normal((16, 3, 16, 16)) + 3.0
    targets = generator.integers(0, 10, 16)
    exact = _gradients(state, data, targets, autojit.float64, False)
    compiled64 = _gradients(state, data, targets, autojit.float64, True)
    for name in exact:
        np.testing.assert_allclose(compiled64[name], exact[name], rtol=1e-10, atol=1e-14)
    errors = {}
    for compiled in (False, True):
        grads = _gradients(state, data, targets, autojit.float32, compiled)
        errors[compiled] = max(np.abs(grads[name] - exact[name]).max() for name in exact)
    assert errors[True] <= 2 * errors[False], errors


def _operands(rows, inner, columns, transpose_a, transpose_b, generator):
    a = generator.standard_normal((rows, inner))
    a -= a.mean(axis=1, keepdims=True)
    b = generator.standard_normal((inner, columns)) + 3.0
    a32 = np.ascontiguousarray(a.T).astype(np.float32).T if transpose_a else a.astype(np.float32)
    b32 = np.ascontiguousarray(b.T).astype(np.float32).T if transpose_b else b.astype(np.float32)
    return a32, b32


SHAPES = [(8, 4096, 27), (3, 65, 4), (5, 64, 7), (12, 1000, 1), (1, 300, 40)]


@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_blocked_library_products_compute_alpha_ab_plus_beta_c(shape, transpose_a, transpose_b):
    """Every path of a float32 library product (the workers' records, the Python fallback):
    alpha * a @ b + beta * c, with c unread where beta is 0 (it may hold nan), within the
    rounding of a sum in blocks of 64 (one call up to workers.FLOAT32_LONG_INNER k's)."""
    generator = np.random.default_rng(sum(shape))
    a, b = _operands(*shape, transpose_a, transpose_b, generator)
    start = generator.standard_normal((shape[0], shape[2])).astype(np.float32)
    exact_a, exact_b = a.astype(np.float64), b.astype(np.float64)
    bound = 64 * np.finfo(np.float32).eps * (np.abs(exact_a) @ np.abs(exact_b) + 1)
    for alpha, beta in ((1.0, 0.0), (0.5, 1.0), (-2.0, 0.25)):
        expected = alpha * (exact_a @ exact_b) + beta * start
        results = [blas._blocked_product(a, b, start.copy(), alpha, beta)]
        if workers.shared() is not None and blas.native_gemm(np.float32):
            out = start.copy() if beta else np.full_like(start, np.nan)
            with blas.one_thread():
                blas.run_records(blas.gemm_records(a, b, out, alpha, beta))
            results.append(out)
        for result in results:
            assert np.all(np.abs(result - expected) <= bound)


def test_a_long_library_product_is_summed_in_blocks(monkeypatch):
    """The 8 x 4096 x 27 product of a conv weight gradient behind BatchNorm: one float32
    chain (each product rounded, then added in order, as a loop without blocks sums) is 6.5
    times further from exact than the blocked sum. (np.matmul is no reference: how far its
    sums are from exact depends on the BLAS kernel the machine's processor gets.) The
    library's path is forced: on AVX-512 hosts the generated gemm would take the product."""
    monkeypatch.setenv("AUTOJIT_GEMM", "blas")
    if workers.shared() is None or not blas.native_gemm(np.float32):
        pytest.skip("no native workers here")
    generator = np.random.default_rng(0)
    a, b = _operands(8, 4096, 27, True, False, generator)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    out = np.empty((8, 27), np.float32)
    with blas.one_thread():
        blas.run_records(blas.gemm_records(a, b, out, 1.0, 0.0))
    blocked = np.abs(out - exact).max()
    chain = np.add.accumulate(a[:, :, None] * b[None, :, :], axis=1)[:, -1]
    one_chain = np.abs(chain - exact).max()
    assert blocked * 3 < one_chain, (blocked, one_chain)


def test_a_product_of_at_most_the_long_inner_extent_is_one_library_call(monkeypatch):
    """A transformer layer's products (k = 256, or 1024 tokens in a weight gradient) are not
    blocked: one library call, the sums eager's np.matmul of them makes (the same library, one
    thread), to the bit. Blocked, they took 1.8x the time of one call on an AVX2 host. The
    library's path is forced: on AVX-512 hosts the generated gemm takes these shapes."""
    monkeypatch.setenv("AUTOJIT_GEMM", "blas")
    if workers.shared() is None or not blas.native_gemm(np.float32):
        pytest.skip("no native workers here")
    generator = np.random.default_rng(1)
    for inner in (workers.FLOAT32_INNER_BLOCK + 1, workers.FLOAT32_LONG_INNER):
        a, b = _operands(24, inner, 40, False, False, generator)
        out = np.empty((24, 40), np.float32)
        with blas.one_thread():
            blas.run_records(blas.gemm_records(a, b, out, 1.0, 0.0))
            expected = np.matmul(a, b)
        np.testing.assert_array_equal(out, expected)


def test_a_very_long_product_takes_at_most_64_blocks(monkeypatch):
    """GPT-2's output layer's input gradient sums 50,257 vocabulary entries: blocks of 64 k's
    were 785 library calls, each packing again (twice the time of one call). Past 64 blocks'
    worth the blocks widen, a multiple of 64 k's each, summed in float64 as before: still
    nearer exact than one float32 chain over all the k's."""
    assert workers.inner_block(4096) == 64 and workers.inner_block(1025) == 64
    for inner in (4097, 50257, 10**6):
        block = workers.inner_block(inner)
        assert block % 64 == 0 and -(-inner // block) <= workers.FLOAT32_MAX_BLOCKS
    assert workers.inner_block(50257) == 832
    monkeypatch.setenv("AUTOJIT_GEMM", "blas")
    generator = np.random.default_rng(2)
    a, b = _operands(6, 50257, 5, False, True, generator)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = 832 * np.finfo(np.float32).eps * (np.abs(a.astype(np.float64)) @
                                              np.abs(b.astype(np.float64)))
    results = [blas._blocked_product(a, b, None)]
    if workers.shared() is not None and blas.native_gemm(np.float32):
        out = np.empty((6, 5), np.float32)
        with blas.one_thread():
            blas.run_records(blas.gemm_records(a, b, out, 1.0, 0.0))
        results.append(out)
    chain = np.add.accumulate(a[:, :, None] * b[None, :, :], axis=1)[:, -1]
    for result in results:
        assert np.all(np.abs(result - exact) <= bound)
        assert np.abs(result - exact).max() * 3 < np.abs(chain - exact).max()
