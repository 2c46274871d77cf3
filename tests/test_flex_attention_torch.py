"""flex_attention and create_block_mask against torch's: outputs, log-sum-exp, every block
table and the sparsity, for causal, document, padding and combined masks with score mods and
grouped heads; gradients by gradcheck (torch has no CPU backward to compare with)."""

import numpy as np
import pytest

import autojit as aj
from autojit.nn.attention import flex_attention as ours

torch = pytest.importorskip("torch")
theirs = pytest.importorskip("torch.nn.attention.flex_attention")

TABLES = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
          "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices")


def _cases(lib, module):
    doc = lib.tensor([0] * 12 + [1] * 20 + [2] * 13)

    def causal(b, h, q, k):
        return q + 8 >= k

    def document(b, h, q, k):
        return doc[q] == doc[k]

    def padding(b, h, q, k):
        return (k < 40 - 5 * b) & (q != 3)

    def relative(score, b, h, q, k):
        return score + (q - k) * 0.1 * (h + 1)

    def softcap(score, b, h, q, k):
        return 3 * lib.tanh(score / 3)

    return {
        "causal": (causal, None, None, None, 16),
        "document": (module.and_masks(causal, document), relative, 2, None, (16, 8)),
        "padding": (padding, softcap, 2, 4, 32),
        "either": (module.or_masks(causal, document), None, None, 1, 128),
    }


def _run(lib, module, case, requires_grad=False):
    rng = np.random.default_rng(0)
    q, k, v = (lib.tensor(rng.standard_normal(shape), dtype=lib.float64,
                          requires_grad=requires_grad)
               for shape in ((2, 4, 37, 8), (2, 2, 45, 8), (2, 2, 45, 6)))
    mask_mod, score_mod, B, H, block = _cases(lib, module)[case]
    block_mask = module.create_block_mask(mask_mod, B, H, 37, 45, device="cpu",
                                          BLOCK_SIZE=block)
    out, lse = module.flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask,
                                     enable_gqa=True, return_lse=True)
    return block_mask, out, lse, (q, k, v)


@pytest.mark.parametrize("case", ["causal", "document", "padding", "either"])
def test_outputs_and_block_tables_are_torchs(case):
    mask, out, lse, _ = _run(aj, ours, case)
    want_mask, want_out, want_lse, _ = _run(torch, theirs, case)
    np.testing.assert_allclose(out.numpy(), want_out.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(lse.numpy(), want_lse.numpy(), rtol=0, atol=1e-12)
    for table in TABLES:
        assert getattr(mask, table).tolist() == getattr(want_mask, table).tolist(), table
    assert mask.shape == want_mask.shape and mask.BLOCK_SIZE == want_mask.BLOCK_SIZE
    assert mask.sparsity() == pytest.approx(want_mask.sparsity())
    assert mask.to_dense().tolist() == want_mask.to_dense().tolist()


def test_queries_with_every_key_masked_get_zeros_and_finite_gradients():
    mask, out, lse, inputs = _run(aj, ours, "padding", requires_grad=True)
    assert (out[:, :, 3] == 0).all() and (lse[:, :, 3] == -float("inf")).all()
    grads = aj.autograd.grad((out * out).sum(), inputs)
    assert all(bool(g.isfinite().all()) for g in grads)


def test_gradients_and_second_derivatives():
    rng = np.random.default_rng(1)
    q, k, v = (aj.tensor(rng.standard_normal((1, 2, 5, 3)), dtype=aj.float64,
                         requires_grad=True) for _ in range(3))
    mask = ours.create_block_mask(lambda b, h, i, j: i >= j, None, None, 5, 5, device="cpu",
                                  BLOCK_SIZE=2)

    def attend(q, k, v):
        return ours.flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s * (h + 1),
                                   block_mask=mask)

    assert aj.autograd.gradcheck(attend, (q, k, v))
    assert aj.autograd.gradgradcheck(attend, (q, k, v))
