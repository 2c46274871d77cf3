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
(and, when it runs every sample, fails once the op passes, so that the entry goes); the complex
samples' entries are COMPLEX_FAILURES, joined to it.
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


_SPARSE = ("sparse layouts: the harness converts strided tensors only (autojit's sparse COO "
           "tensors have their own tests)")
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

MISSING = {
    **dict.fromkeys(("cdouble", "cfloat", "chalf"),
                    "the Tensor methods casting to a complex dtype, which autojit lacks yet"),
    **dict.fromkeys(("linalg.eig", "linalg.eigvals"),
                    "the eigendecomposition of a general matrix (complex results), not yet in "
                    "autojit"),
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

# What remains of the full run's failures (AUTOJIT_OPINFO_FULL=1), by kind: key "op/dtype" or
# "op/errors" (torch's error samples). The test expects them to fail, and the full run says
# when one passes.
_NO_ERROR = ("autojit accepts some of torch's error samples: an out= that overlaps an input, a "
             "Python number where torch requires a tensor (logical_and(x, 2), eq(2, x)), and "
             "some size checks torch makes (gather, kthvalue, cat, gradient's repeated dim)")
_ERROR_WORDS = ("autojit raises some of torch's errors in its own words, or checks the "
                "arguments in another order (conv and pool arguments, reshape of 0 elements)")
_ERROR_TYPE = "autojit raises another error type than torch on some of torch's error samples"
_ERROR_CRASH = ("autojit fails inside (not in an argument check) on some of torch's error "
                "samples (a NumPy ValueError in amax, amin and aminmax)")
_GRAPH_BREAK = ("the compiled call breaks the graph and runs eagerly (bfloat16 rounding, "
                "resize_, lstsq's residuals depend on the rank)")
_COMPILED = "broadcast_shapes returns a plain tuple inside autojit.compile, torch.Size eagerly"
_PRECISION = ("values differ from torch's beyond the test's tolerance at a few points: "
              "another algorithm (SciPy's Bessel functions near their zeros, the polygamma "
              "series, matrix_exp's Pade degree) or summation order in float32")
_GRADGRAD = "linalg.norm's second derivative at zero is 0, torch's NaN"
_FORWARD_ERROR = ("as_strided returns a copy, not a view: the partial-view samples write "
                  "through it (docs/differences.md)")
KNOWN_FAILURES = {
    **dict.fromkeys(("bfloat16/float32", "bfloat16/float64", "bfloat16/complex64",
                     "bfloat16/complex128", "linalg.lstsq.grad_oriented/float32",
                     "linalg.lstsq.grad_oriented/float64", "linalg.lstsq/float32",
                     "linalg.lstsq/float64", "resize_/float32", "resize_/float64",
                     "resize_/complex64", "resize_/complex128", "resize_as_/float32",
                     "resize_as_/float64", "resize_as_/complex64", "resize_as_/complex128"),
                    _GRAPH_BREAK),
    **dict.fromkeys(("bernoulli/errors", "fft.fft2/errors", "fft.fftn/errors", "fft.hfft2/errors",
                     "fft.hfftn/errors", "fft.ifft2/errors", "fft.ifftn/errors",
                     "fft.ihfft2/errors", "fft.ihfftn/errors", "fft.irfft2/errors",
                     "fft.irfftn/errors", "fft.rfft2/errors", "fft.rfftn/errors", "mean/errors",
                     "multinomial/errors", "nn.functional.adaptive_max_pool1d/errors",
                     "nn.functional.avg_pool2d/errors", "nn.functional.avg_pool3d/errors",
                     "nn.functional.conv1d/errors", "nn.functional.conv2d/errors",
                     "nn.functional.conv3d/errors", "nn.functional.max_pool1d/errors",
                     "nn.functional.max_pool2d/errors", "nn.functional.max_pool3d/errors",
                     "nn.functional.prelu/errors", "nn.functional.rms_norm/errors",
                     "reshape/errors", "roll/errors", "unbind/errors", "unbind_copy/errors",
                     "view/errors", "view_copy/errors"),
                    _ERROR_WORDS),
    **dict.fromkeys(("__radd__/errors", "__rand__/errors", "__rdiv__/errors", "__rmod__/errors",
                     "__rmul__/errors", "__ror__/errors", "__rpow__/errors", "__rsub__/errors",
                     "__rxor__/errors", "clamp_max/errors", "clamp_min/errors", "eq/errors",
                     "gather/errors", "ge/errors", "gt/errors", "index_select/errors",
                     "kthvalue/errors", "le/errors", "logical_and/errors", "logical_or/errors",
                     "logical_xor/errors", "lt/errors", "masked_fill/errors",
                     "masked_select/errors", "max.binary/errors", "maximum/errors",
                     "min.binary/errors", "minimum/errors", "ne/errors",
                     "nn.functional.triplet_margin_loss/errors", "take/errors"),
                    _NO_ERROR),
    **dict.fromkeys(("matrix_exp/float32", "polygamma.polygamma_n_0/float32",
                     "polygamma.polygamma_n_1/float32", "polygamma.polygamma_n_2/float32",
                     "polygamma.polygamma_n_3/float32", "polygamma.polygamma_n_4/float32",
                     "special.bessel_j0/float64", "special.bessel_y1/float64",
                     "special.hermite_polynomial_he/float32",
                     "special.polygamma.special_polygamma_n_0/float32"),
                    _PRECISION),
    **dict.fromkeys(("arange/errors", "nn.functional.adaptive_avg_pool2d/errors",
                     "nn.functional.adaptive_avg_pool3d/errors", "nn.functional.gelu/errors"),
                    _ERROR_TYPE),
    **dict.fromkeys(("narrow_copy/errors", "nn.functional.adaptive_max_pool2d/errors",
                     "nn.functional.adaptive_max_pool3d/errors"),
                    _ERROR_TYPE + "; " + _ERROR_WORDS),
    **dict.fromkeys(("amax/errors", "amin/errors"),
                    _ERROR_CRASH + "; " + _ERROR_TYPE),
    **dict.fromkeys(("as_strided.partial_views/float32", "as_strided.partial_views/float64"),
                    _FORWARD_ERROR + "; " + _PRECISION),
    **dict.fromkeys(("broadcast_shapes/float32",),
                    _COMPILED),
    **dict.fromkeys(("aminmax/errors",),
                    _ERROR_CRASH),
    **dict.fromkeys(("cat/errors",),
                    _ERROR_TYPE + "; " + _NO_ERROR),
    **dict.fromkeys(("gradient/errors",),
                    _ERROR_WORDS + "; " + _NO_ERROR),
    **dict.fromkeys(("linalg.norm.subgradients_at_zero/float64",),
                    _GRADGRAD),
    **dict.fromkeys(("fft.hfft2/float32",),
                    _PRECISION),
}

# The complex samples' failures (complex64 and complex128), apart from the others.
_COMPLEX_READ = ("Tensor.item() of a complex tensor breaks the graph: a trace has no symbolic "
                 "complex number")
_COMPLEX_LINALG = ("autojit's linear algebra takes no complex matrices yet: the decompositions, "
                   "solvers, inverses and determinants, and the ops built on them, raise torch's "
                   "kind of error (docs/notes/complex.md)")
_COMPLEX_REFUSED = ("autojit refuses complex tensors in some ops torch defines for them "
                    "(logaddexp, logcumsumexp, silu, l1_loss, rms_norm, the convolutions, the "
                    "masked reductions, logspace's complex bounds)")
_COMPLEX_VALUES = ("values differ from torch's on complex samples: householder_product and ormqr "
                   "(the complex reflectors' conjugates), and istft's gradient for a window that "
                   "requires grad, which torch's autograd leaves zero on these samples")
_COMPLEX_SINGLE = ("gradients differ from torch's in complex64 only: logsumexp's beyond the "
                   "tolerance at large moduli, renorm's finite where torch's is NaN")


def _complex_keys(*names: str) -> tuple:
    return tuple(f"{name}/{dtype}" for name in names for dtype in ("complex64", "complex128"))


COMPLEX_FAILURES = {
    **dict.fromkeys(_complex_keys("item"), _COMPLEX_READ),
    **dict.fromkeys(_complex_keys(
        "cholesky", "cholesky_inverse", "cholesky_solve", "geqrf", "linalg.cholesky",
        "linalg.cholesky_ex", "linalg.cond", "linalg.det", "linalg.eigh", "linalg.eigvalsh",
        "linalg.inv", "linalg.inv_ex", "linalg.ldl_factor", "linalg.ldl_factor_ex",
        "linalg.ldl_solve", "linalg.lstsq", "linalg.lstsq.grad_oriented", "linalg.lu",
        "linalg.lu_factor", "linalg.lu_factor_ex", "linalg.lu_solve", "linalg.matrix_norm",
        "linalg.matrix_power", "linalg.matrix_rank", "linalg.matrix_rank.hermitian",
        "linalg.pinv", "linalg.pinv.hermitian", "linalg.pinv.singular", "linalg.qr",
        "linalg.slogdet", "linalg.solve", "linalg.solve_ex", "linalg.solve_triangular",
        "linalg.svd", "linalg.svdvals", "linalg.tensorinv", "linalg.tensorsolve", "logdet", "lu",
        "lu_solve", "matrix_exp", "norm.nuc", "pca_lowrank", "pinverse", "qr", "svd",
        "svd_lowrank", "triangular_solve"), _COMPLEX_LINALG),
    **dict.fromkeys(_complex_keys(
        "logaddexp", "logcumsumexp", "logspace", "logspace.tensor_overload", "masked.logsumexp",
        "masked.mean", "masked.std", "masked.var", "nn.functional.conv1d",
        "nn.functional.conv2d", "nn.functional.conv3d", "nn.functional.l1_loss",
        "nn.functional.rms_norm", "nn.functional.silu.complex"),
        _COMPLEX_REFUSED),
    **dict.fromkeys(_complex_keys("istft", "linalg.householder_product", "ormqr"),
                    _COMPLEX_VALUES),
    **dict.fromkeys(("linalg.norm.subgradients_at_zero/complex128",), _GRADGRAD),
    **dict.fromkeys(_complex_keys("as_strided.partial_views"), _FORWARD_ERROR),
    **dict.fromkeys(("logsumexp/complex64", "renorm/complex64"), _COMPLEX_SINGLE),
}
KNOWN_FAILURES.update(COMPLEX_FAILURES)

# op id -> {check: reason}: a check not run for the op, where torch's own result is wrong.
SKIP_CHECKS = {
    **{name: {"gradgrad": "torch defines no second derivative here (its backward's derivative "
                          "raises 'not implemented'): nothing to compare with"}
       for name in ("nn.functional.ctc_loss", "nn.functional.scaled_dot_product_attention")},
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
