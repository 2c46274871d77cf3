"""What of torch's op database tests/test_opinfo.py does not run, compares differently or
expects to fail, in one place, each entry with its reason.

NOT_APPLICABLE: OpInfos for tensors or kernels autojit does not have (sparse, quantized,
CUDA-only); docs/differences.md lists them.
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
    eigenvector is unique up to its sign, a complex one up to a factor of modulus 1); works
    on torch and autojit tensors alike."""
    values, vectors = result
    if vectors.is_complex():
        return _eigenvectors_phased(result)
    if vectors.numel() == 0:
        return result
    index = vectors.abs().argmax(-2, keepdim=True)
    return values, vectors * vectors.gather(-2, index).sign()


_SPARSE = ("sparse layouts: the harness converts strided tensors only (autojit's sparse COO "
           "tensors have their own tests)")
def _eigenvectors_phased(result):
    """(eigenvalues, eigenvectors) of a general matrix with each eigenvector's largest entry
    real and positive (an eigenvector is unique up to a complex factor of modulus 1, and
    LAPACK's choice of the entry it makes real follows rounding); works on torch and autojit
    tensors alike."""
    values, vectors = result
    if vectors.numel() == 0:
        return result
    index = vectors.abs().argmax(-2, keepdim=True)
    largest = vectors.gather(-2, index)
    return values, vectors * (largest.abs() / largest)


_CUDA_ONLY = "a CUDA-only kernel of torch's (no CPU implementation to compare with)"
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
}

MISSING: dict = {}

_UNINITIALIZED = "the values are uninitialized memory"
UNCOMPARABLE_VALUES = {
    "empty": _UNINITIALIZED, "empty_like": _UNINITIALIZED, "new_empty": _UNINITIALIZED,
    "new_empty_strided": _UNINITIALIZED, "empty_strided": _UNINITIALIZED,
    "empty_permuted": _UNINITIALIZED,
}

NORMALIZE = {
    "linalg.eigh": (_eigenvectors_signed, "eigenvectors are unique up to their sign (a "
                    "complex one up to a factor of modulus 1)"),
    "linalg.eig": (_eigenvectors_phased, "eigenvectors are unique up to a factor of modulus 1"),
}

# op id -> {dtype: (rtol, atol)}, where torch's own kernel is the less accurate one (measured
# against float64, SciPy's float64 and mpmath at the failing points): torch's float32
# polygamma near a pole (-7.9506: 412.7526, true 412.74422, autojit 412.74423), float32
# matrix_exp (0.14865 for an entry 0.14829 of a matrix whose entries reach 396, where autojit
# gives 0.14829: errors 3.6e-4 and 9e-6, the cancellation of the Pade sums) and the recurrence of
# hermite_polynomial_he (torch's 1.2e-5, autojit's 1.9e-5, both rounding in float32); torch's
# float64 bessel_j0 and bessel_y1 near their zeros (absolute errors 1.9e-7 and 3.2e-7 where
# SciPy's agree with mpmath to 1e-16); torch's complex64 gradient of householder_product on a
# sample whose gradient reaches 800 (largest error 0.18 against complex128, autojit's 2.2e-4).
_TORCH_FLOAT32 = {"float32": (5e-5, 1e-5)}
TOLERANCES: dict = {
    **dict.fromkeys(("polygamma.polygamma_n_0", "polygamma.polygamma_n_1",
                     "polygamma.polygamma_n_2", "polygamma.polygamma_n_3",
                     "polygamma.polygamma_n_4", "special.polygamma.special_polygamma_n_0",
                     "special.hermite_polynomial_he"), _TORCH_FLOAT32),
    "matrix_exp": {"float32": (5e-5, 5e-4)},
    **dict.fromkeys(("special.bessel_j0", "special.bessel_y1"), {"float64": (1e-7, 1e-6)}),
    "linalg.householder_product": {"complex64": (1e-4, 1e-5)},
    # An FFT's rounding error scales with the transform's largest values, not each entry's:
    # on the float32 sample of hfft2 whose results reach 251, torch's and autojit's errors
    # against float64 are 2.2e-5 and 4.0e-5 (both about 251 * float32's epsilon), beyond
    # rtol 1e-5 at an entry of 1.67.
    "fft.hfft2": {"float32": (1e-5, 1e-4)},
    # torch's float32 kernel computes the antialiasing weights in float32 from the coordinate
    # scale 1 / 1.7: against its float64 result, its error on that sample is 2.1e-5 (at an
    # entry of 0.266), autojit's (weights in float64) 9.0e-7.
    "_upsample_bilinear2d_aa": {"float32": (1e-5, 5e-5)},
}

# What remains of the full run's failures (the default run), by kind: key "op/dtype" or
# "op/errors" (torch's error samples). The test expects them to fail, and the full run says
# when one passes. The survey of 2026-11-25 (docs/differences.md) found none.
KNOWN_FAILURES: dict = {}

# The complex samples' failures (complex64 and complex128), apart from the others.
COMPLEX_FAILURES: dict = {}
KNOWN_FAILURES.update(COMPLEX_FAILURES)

# op id (or "op/dtype") -> {check: reason}: a check not run for the op (in that dtype), where
# torch's own result is wrong.
SKIP_CHECKS = {
    "logsumexp/complex64": {"gradient": (
        "torch's complex64 gradient, g conj(exp(x - out)), loses the phase where x's imaginary "
        "parts are large (1.4e6 in the samples: float32 keeps them to 0.125): its error against "
        "the complex128 gradient of the same inputs is 0.03 for gradients of modulus 1.4, "
        "autojit's (exp(x - max) / sum, one rounding of the phase) 1.5e-7; complex128 is "
        "compared")},
    "renorm/complex64": {"gradient": (
        "torch's complex64 backward of the inf-norm takes the norm in complex128 (its CPU "
        "accumulate type, a float64 norm) and then finds no element of the float32 moduli "
        "equal to it: 0 / 0, NaN for every slice renorm scales; its complex128 and float32 "
        "gradients are finite and autojit's equal them")},
    "native_layer_norm": {"gradgrad": (
        "torch's double backward of native_layer_norm fails where weight is None and bias is "
        "given (RuntimeError: Expected a proper Tensor but got None; pytorch/pytorch#79705, "
        "which torch's database marks an expected failure of test_fn_gradgrad); "
        "tests/test_aten_entry_points.py compares autojit's second order with that of torch's "
        "nn.functional.layer_norm instead")},
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

# op id -> why its compiled call splits where the op runs, as torch.compile's does by default:
# the compiled check then compares the values without asking for one graph.
GRAPH_BREAKS = {
    **dict.fromkeys(
        ("nonzero", "argwhere"),
        "the result's size depends on the input's values (torch.compile also breaks the graph "
        "there unless capture_dynamic_output_shape_ops is set)"),
    # Without dim= it compiles as a split of the graph on the count of distinct values
    # (ops/counting.py); distinct slices along a dim are not sorted in graph ops yet.
    "unique": "unique(dim=...): distinct slices, a result whose size depends on the values "
              "(torch.compile breaks the graph at unique too)",
}


def compare_options(opinfo, dtype: str, random: bool) -> dict:
    """The keyword arguments of checks.SampleRun for `opinfo` in `dtype`."""
    from . import op_id

    name = op_id(opinfo)
    normalize = NORMALIZE.get(name)
    return {"random": random or name in UNCOMPARABLE_VALUES,
            "tolerance": TOLERANCES.get(name, {}).get(dtype),
            "normalize": normalize[0] if normalize else None,
            "graph_break": GRAPH_BREAKS.get(name)}
