"""torch.testing._internal.common_dtype's dtype lists."""

import torch


def floating_types():
    return (torch.float32, torch.float64)


def floating_types_and(*dtypes):
    return floating_types() + tuple(dtypes)


def floating_and_complex_types():
    return floating_types() + (torch.complex64, torch.complex128)


def floating_and_complex_types_and(*dtypes):
    return floating_and_complex_types() + tuple(dtypes)


def all_types_and_complex_and(*dtypes):
    return (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64) \
        + floating_and_complex_types() + tuple(dtypes)


def get_all_fp_dtypes(include_half=True, include_bfloat16=True):
    dtypes = [torch.float32, torch.float64]
    if include_half:
        dtypes.append(torch.float16)
    if include_bfloat16:
        dtypes.append(torch.bfloat16)
    return dtypes
