"""What of torch's op database tests/test_opinfo.py does not run, compares differently or
expects to fail, in one place, each entry with its reason.

NOT_APPLICABLE: OpInfos for tensors or kernels autojit does not have (sparse, quantized,
CUDA-only, torch's internal aten entry points); docs/differences.md lists them.
MISSING: OpInfos autojit has no callable for yet (the test fails when one gains a callable, so
that the entry goes).
UNCOMPARABLE_VALUES: ops whose values are not defined (uninitialized memory): compared by
shape and dtype.
NORMALIZE: results unique up to a choice, compared in a canonical form.
TOLERANCES: looser forward tolerances for an op in a dtype, with the reason.
KNOWN_FAILURES: ops failing some sample, each with the reason; the test expects the failure
(and, when it runs every sample, fails once the op passes, so that the entry goes).
"""

from __future__ import annotations


def _eigenvectors_signed(result):
    """(eigenvalues, eigenvectors) with each eigenvector's largest entry positive (an
    eigenvector is unique up to its sign); works on torch and autojit tensors alike."""
    values, vectors = result
    if vectors.numel() == 0:
        return result
    index = vectors.abs().argmax(-2, keepdim=True)
    return values, vectors * vectors.gather(-2, index).sign()


_SPARSE = "sparse tensors: autojit's tensors are dense and strided"
_CUDA_ONLY = "a CUDA-only kernel of torch's (no CPU implementation to compare with)"
_ATEN = ("one of torch's internal aten operators (torch.ops.aten / a private name), not a "
         "public API; autojit has the public op it implements")
NOT_APPLICABLE = {
    "to_sparse": _SPARSE, "sparse.sampled_addmm": _SPARSE, "sparse.mm.reduce": _SPARSE,
    **dict.fromkeys(("jiterator_unary", "jiterator_binary",
                     "jiterator_4inputs_with_extra_args", "jiterator_binary_return_by_ref",
                     "jiterator_2inputs_2outputs"),
                    "torch's jiterator: CUDA kernels compiled at run time from C++ strings"),
    "torch._scaled_mm": _CUDA_ONLY + " (float8 matrix products)",
    "torch._scaled_mm_v2": _CUDA_ONLY + " (float8 matrix products)",
    "torch.ops.aten._flash_attention_forward": _CUDA_ONLY,
    "torch.ops.aten._efficient_attention_forward": _CUDA_ONLY,
    **dict.fromkeys(("_softmax_backward_data", "native_group_norm", "native_layer_norm",
                     "native_batch_norm", "_native_batch_norm_legit", "_batch_norm_with_update",
                     "_upsample_bilinear2d_aa", "max_pool2d_with_indices_backward",
                     "torch.ops.aten._safe_softmax.default", "slice", "_unsafe_masked_index",
                     "_unsafe_masked_index_put_accumulate", "native_dropout_backward",
                     "_chunk_cat", "_segment_reduce.lengths", "_segment_reduce.offsets"),
                    _ATEN),
}

_COMPLEX = "its inputs or results are complex; complex dtypes are being added to autojit"
MISSING = {
    **dict.fromkeys(("conj", "conj_physical", "view_as_real", "view_as_complex", "complex",
                     "real", "imag", "polar", "cdouble", "cfloat", "chalf", "stft", "istft",
                     "linalg.eig", "linalg.eigvals", "fft.fft", "fft.fft2", "fft.fftn",
                     "fft.hfft", "fft.hfft2", "fft.hfftn", "fft.rfft", "fft.rfft2", "fft.rfftn",
                     "fft.ifft", "fft.ifft2", "fft.ifftn", "fft.ihfft", "fft.ihfft2",
                     "fft.ihfftn", "fft.irfft", "fft.irfft2", "fft.irfftn"), _COMPLEX),
    **dict.fromkeys(("fft.fftshift", "fft.ifftshift"),
                    "torch.fft's namespace, being added with the complex dtypes"),
    "hash_tensor": "its result is uint64, a dtype autojit does not have",
}

_UNINITIALIZED = "the values are uninitialized memory"
UNCOMPARABLE_VALUES = {
    "empty": _UNINITIALIZED, "empty_like": _UNINITIALIZED, "new_empty": _UNINITIALIZED,
    "new_empty_strided": _UNINITIALIZED, "empty_strided": _UNINITIALIZED,
    "empty_permuted": _UNINITIALIZED,
}

NORMALIZE = {
    "linalg.eigh": (_eigenvectors_signed, "eigenvectors are unique up to their sign"),
}

# op id -> {dtype: (rtol, atol)}
TOLERANCES: dict = {}

KNOWN_FAILURES: dict = {}

# op id -> {check: reason}: a check not run for the op, where torch's own result is wrong.
SKIP_CHECKS = {
    "as_strided_scatter": dict.fromkeys(
        ("gradient", "gradgrad"),
        "torch's backward gives the overwritten elements of input the gradient (torch's op "
        "database skips its test_fn_grad); autojit's is that of input.clone().as_strided(...)"
        ".copy_(src), which torch's own autograd gives as autojit does"),
    **{name: {"gradgrad": "torch's chunked kernel gives 0 as second derivative (its backward "
                          "is computed in the forward); its unchunked reference gives "
                          "autojit's"}
       for name in ("nn.functional.linear_cross_entropy.chunked",
                    "nn.functional.linear_cross_entropy.chunked_none")},
}

SKIPS: dict = {}


def compare_options(opinfo, dtype: str, random: bool) -> dict:
    """The keyword arguments of checks.SampleRun for `opinfo` in `dtype`."""
    from . import op_id

    name = op_id(opinfo)
    normalize = NORMALIZE.get(name)
    return {"random": random or name in UNCOMPARABLE_VALUES,
            "tolerance": TOLERANCES.get(name, {}).get(dtype),
            "normalize": normalize[0] if normalize else None}
