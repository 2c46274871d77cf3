"""Tensor printing against PyTorch's format.

Each expected string was printed by torch (with "torch." written as "autojit."), so these
tests pin the exact layout: number styles, padding, wrapping at 80 columns, summarization,
blank lines between blocks, and the dtype / grad_fn / requires_grad suffixes.
"""


import numpy as np
import pytest

import autojit

CASES = {
    'float_vector': ('[1.5, 2.25, -3.0]', None, 'tensor([ 1.5000,  2.2500, -3.0000])'),
    'int_valued_floats': ('[1.0, 2.0, -3.0]', None, 'tensor([ 1.,  2., -3.])'),
    'zeros': ('[0.0, 0.0]', None, 'tensor([0., 0.])'),
    'negative_zero': ('[-0.0, 1.0]', None, 'tensor([-0., 1.])'),
    'scalar_float': ('3.0', None, 'tensor(3.)'),
    'scalar_float_fraction': ('3.14159', None, 'tensor(3.1416)'),
    'scalar_int': ('7', None, 'tensor(7)'),
    'scalar_bool': ('True', None, 'tensor(True)'),
    'int_vector': ('[1, -20, 300]', None, 'tensor([  1, -20, 300])'),
    'bool_vector': ('[True, False, True]', None, 'tensor([ True, False,  True])'),
    'matrix': ('[[1.0, 2.0], [3.0, 4.0]]', None,
        'tensor([[1., 2.],\n'
        '        [3., 4.]])'),
    'matrix_fraction': ('[[1.5, -2.0], [3.0, 4.25]]', None,
        'tensor([[ 1.5000, -2.0000],\n'
        '        [ 3.0000,  4.2500]])'),
    'cube': ('np.arange(12.0).reshape(2, 3, 2)', None,
        'tensor([[[ 0.,  1.],\n'
        '         [ 2.,  3.],\n'
        '         [ 4.,  5.]],\n'
        '\n'
        '        [[ 6.,  7.],\n'
        '         [ 8.,  9.],\n'
        '         [10., 11.]]], dtype=autojit.float64)'),
    'four_d': ('np.arange(16).reshape(2, 2, 2, 2)', None,
        'tensor([[[[ 0,  1],\n'
        '          [ 2,  3]],\n'
        '\n'
        '         [[ 4,  5],\n'
        '          [ 6,  7]]],\n'
        '\n'
        '\n'
        '        [[[ 8,  9],\n'
        '          [10, 11]],\n'
        '\n'
        '         [[12, 13],\n'
        '          [14, 15]]]])'),
    'sci_big': ('[1.0e5, 1.0]', None, 'tensor([1.0000e+05, 1.0000e+00])'),
    'sci_big_fraction': ('[1.5e5, 1.5]', None, 'tensor([1.5000e+05, 1.5000e+00])'),
    'sci_small': ('[1.0e-5, 1.0]', None, 'tensor([1.0000e-05, 1.0000e+00])'),
    'sci_over_1e8': ('[1.0e9, 2.0e9]', None, 'tensor([1.0000e+09, 2.0000e+09])'),
    'tiny_frac': ('[0.00012, 0.5]', None, 'tensor([1.2000e-04, 5.0000e-01])'),
    'nonfinite': ("[float('inf'), float('-inf'), float('nan'), 1.0]", None,
        'tensor([inf, -inf, nan, 1.])'),
    'nonfinite_frac': ("[float('inf'), float('nan'), 1.5]", None,
        'tensor([   inf,    nan, 1.5000])'),
    'nonfinite_only': ("[float('nan'), float('inf')]", None, 'tensor([nan, inf])'),
    'nonfinite_sci': ("[float('nan'), 1e-6, 10.0]", None,
        'tensor([       nan, 1.0000e-06, 1.0000e+01])'),
    'wide_int': ('[1, 10000000000]', None, 'tensor([          1, 10000000000])'),
    'long_row': ('np.linspace(0, 1, 30).tolist()', None,
        'tensor([0.0000, 0.0345, 0.0690, 0.1034, 0.1379, 0.1724, 0.2069, 0.2414, 0.2759,\n'
        '        0.3103, 0.3448, 0.3793, 0.4138, 0.4483, 0.4828, 0.5172, 0.5517, 0.5862,\n'
        '        0.6207, 0.6552, 0.6897, 0.7241, 0.7586, 0.7931, 0.8276, 0.8621, 0.8966,\n'
        '        0.9310, 0.9655, 1.0000])'),
    'long_int_row': ('list(range(40))', None,
        'tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n'
        '        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n'
        '        36, 37, 38, 39])'),
    'summarized_vector': ('list(range(2000))', None,
        'tensor([   0,    1,    2,  ..., 1997, 1998, 1999])'),
    'summarized_matrix': ('np.arange(2000.0).reshape(40, 50)', None,
        'tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n'
        '         4.9000e+01],\n'
        '        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n'
        '         9.9000e+01],\n'
        '        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n'
        '         1.4900e+02],\n'
        '        ...,\n'
        '        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n'
        '         1.8990e+03],\n'
        '        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n'
        '         1.9490e+03],\n'
        '        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n'
        '         1.9990e+03]], dtype=autojit.float64)'),
    'summarized_3d': ('np.arange(1200).reshape(10, 12, 10) * 0.5', None,
        'tensor([[[0.0000e+00, 5.0000e-01, 1.0000e+00,  ..., 3.5000e+00,\n'
        '          4.0000e+00, 4.5000e+00],\n'
        '         [5.0000e+00, 5.5000e+00, 6.0000e+00,  ..., 8.5000e+00,\n'
        '          9.0000e+00, 9.5000e+00],\n'
        '         [1.0000e+01, 1.0500e+01, 1.1000e+01,  ..., 1.3500e+01,\n'
        '          1.4000e+01, 1.4500e+01],\n'
        '         ...,\n'
        '         [4.5000e+01, 4.5500e+01, 4.6000e+01,  ..., 4.8500e+01,\n'
        '          4.9000e+01, 4.9500e+01],\n'
        '         [5.0000e+01, 5.0500e+01, 5.1000e+01,  ..., 5.3500e+01,\n'
        '          5.4000e+01, 5.4500e+01],\n'
        '         [5.5000e+01, 5.5500e+01, 5.6000e+01,  ..., 5.8500e+01,\n'
        '          5.9000e+01, 5.9500e+01]],\n'
        '\n'
        '        [[6.0000e+01, 6.0500e+01, 6.1000e+01,  ..., 6.3500e+01,\n'
        '          6.4000e+01, 6.4500e+01],\n'
        '         [6.5000e+01, 6.5500e+01, 6.6000e+01,  ..., 6.8500e+01,\n'
        '          6.9000e+01, 6.9500e+01],\n'
        '         [7.0000e+01, 7.0500e+01, 7.1000e+01,  ..., 7.3500e+01,\n'
        '          7.4000e+01, 7.4500e+01],\n'
        '         ...,\n'
        '         [1.0500e+02, 1.0550e+02, 1.0600e+02,  ..., 1.0850e+02,\n'
        '          1.0900e+02, 1.0950e+02],\n'
        '         [1.1000e+02, 1.1050e+02, 1.1100e+02,  ..., 1.1350e+02,\n'
        '          1.1400e+02, 1.1450e+02],\n'
        '         [1.1500e+02, 1.1550e+02, 1.1600e+02,  ..., 1.1850e+02,\n'
        '          1.1900e+02, 1.1950e+02]],\n'
        '\n'
        '        [[1.2000e+02, 1.2050e+02, 1.2100e+02,  ..., 1.2350e+02,\n'
        '          1.2400e+02, 1.2450e+02],\n'
        '         [1.2500e+02, 1.2550e+02, 1.2600e+02,  ..., 1.2850e+02,\n'
        '          1.2900e+02, 1.2950e+02],\n'
        '         [1.3000e+02, 1.3050e+02, 1.3100e+02,  ..., 1.3350e+02,\n'
        '          1.3400e+02, 1.3450e+02],\n'
        '         ...,\n'
        '         [1.6500e+02, 1.6550e+02, 1.6600e+02,  ..., 1.6850e+02,\n'
        '          1.6900e+02, 1.6950e+02],\n'
        '         [1.7000e+02, 1.7050e+02, 1.7100e+02,  ..., 1.7350e+02,\n'
        '          1.7400e+02, 1.7450e+02],\n'
        '         [1.7500e+02, 1.7550e+02, 1.7600e+02,  ..., 1.7850e+02,\n'
        '          1.7900e+02, 1.7950e+02]],\n'
        '\n'
        '        ...,\n'
        '\n'
        '        [[4.2000e+02, 4.2050e+02, 4.2100e+02,  ..., 4.2350e+02,\n'
        '          4.2400e+02, 4.2450e+02],\n'
        '         [4.2500e+02, 4.2550e+02, 4.2600e+02,  ..., 4.2850e+02,\n'
        '          4.2900e+02, 4.2950e+02],\n'
        '         [4.3000e+02, 4.3050e+02, 4.3100e+02,  ..., 4.3350e+02,\n'
        '          4.3400e+02, 4.3450e+02],\n'
        '         ...,\n'
        '         [4.6500e+02, 4.6550e+02, 4.6600e+02,  ..., 4.6850e+02,\n'
        '          4.6900e+02, 4.6950e+02],\n'
        '         [4.7000e+02, 4.7050e+02, 4.7100e+02,  ..., 4.7350e+02,\n'
        '          4.7400e+02, 4.7450e+02],\n'
        '         [4.7500e+02, 4.7550e+02, 4.7600e+02,  ..., 4.7850e+02,\n'
        '          4.7900e+02, 4.7950e+02]],\n'
        '\n'
        '        [[4.8000e+02, 4.8050e+02, 4.8100e+02,  ..., 4.8350e+02,\n'
        '          4.8400e+02, 4.8450e+02],\n'
        '         [4.8500e+02, 4.8550e+02, 4.8600e+02,  ..., 4.8850e+02,\n'
        '          4.8900e+02, 4.8950e+02],\n'
        '         [4.9000e+02, 4.9050e+02, 4.9100e+02,  ..., 4.9350e+02,\n'
        '          4.9400e+02, 4.9450e+02],\n'
        '         ...,\n'
        '         [5.2500e+02, 5.2550e+02, 5.2600e+02,  ..., 5.2850e+02,\n'
        '          5.2900e+02, 5.2950e+02],\n'
        '         [5.3000e+02, 5.3050e+02, 5.3100e+02,  ..., 5.3350e+02,\n'
        '          5.3400e+02, 5.3450e+02],\n'
        '         [5.3500e+02, 5.3550e+02, 5.3600e+02,  ..., 5.3850e+02,\n'
        '          5.3900e+02, 5.3950e+02]],\n'
        '\n'
        '        [[5.4000e+02, 5.4050e+02, 5.4100e+02,  ..., 5.4350e+02,\n'
        '          5.4400e+02, 5.4450e+02],\n'
        '         [5.4500e+02, 5.4550e+02, 5.4600e+02,  ..., 5.4850e+02,\n'
        '          5.4900e+02, 5.4950e+02],\n'
        '         [5.5000e+02, 5.5050e+02, 5.5100e+02,  ..., 5.5350e+02,\n'
        '          5.5400e+02, 5.5450e+02],\n'
        '         ...,\n'
        '         [5.8500e+02, 5.8550e+02, 5.8600e+02,  ..., 5.8850e+02,\n'
        '          5.8900e+02, 5.8950e+02],\n'
        '         [5.9000e+02, 5.9050e+02, 5.9100e+02,  ..., 5.9350e+02,\n'
        '          5.9400e+02, 5.9450e+02],\n'
        '         [5.9500e+02, 5.9550e+02, 5.9600e+02,  ..., 5.9850e+02,\n'
        '          5.9900e+02, 5.9950e+02]]], dtype=autojit.float64)'),
    'random': ('np.round(rng.normal(size=(3, 4)), 6)', None,
        'tensor([[ 2.0409, -2.5557,  0.4181, -0.5678],\n'
        '        [-0.4526, -0.2156, -2.0200, -0.2319],\n'
        '        [-0.8652,  3.3230,  0.2258, -0.3526]], dtype=autojit.float64)'),
    'float64_vector': ('[1.5, 2.0]', 'float64', 'tensor([1.5000, 2.0000], dtype=autojit.float64)'),
    'float16_vector': ('[1.5, 2.0]', 'float16', 'tensor([1.5000, 2.0000], dtype=autojit.float16)'),
    'int32_vector': ('[1, 2]', 'int32', 'tensor([1, 2], dtype=autojit.int32)'),
    'float64_scalar': ('2.5', 'float64', 'tensor(2.5000, dtype=autojit.float64)'),
    'int32_matrix': ('[[1, 2], [3, 4]]', 'int32',
        'tensor([[1, 2],\n'
        '        [3, 4]], dtype=autojit.int32)'),
}


def build(source, dtype_name):
    value = eval(source, {"np": np, "rng": np.random.default_rng(3)})
    if dtype_name is None:
        return autojit.tensor(value)
    return autojit.tensor(value, dtype=getattr(autojit, dtype_name))


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    source, dtype_name, expected = CASES[name]
    assert repr(build(source, dtype_name)) == expected
    assert str(build(source, dtype_name)) == expected


def test_requires_grad_and_grad_fn_suffixes():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    m = autojit.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert repr(m * 2) == "tensor([[2., 4.],\n        [6., 8.]], grad_fn=<MulBackward0>)"
    assert repr((m * 2).sum()) == "tensor(20., grad_fn=<SumBackward0>)"
    assert repr((m * 2).detach()) == "tensor([[2., 4.],\n        [6., 8.]])"


def test_suffixes_wrap_past_80_columns():
    x = autojit.tensor([1.5] * 8, dtype=autojit.float64, requires_grad=True) * 2
    assert repr(x) == ("tensor([3., 3., 3., 3., 3., 3., 3., 3.], dtype=autojit.float64,\n"
                       "       grad_fn=<MulBackward0>)")
    y = autojit.linspace(0, 1, 12, dtype=autojit.float64, requires_grad=True)
    assert repr(y) == (
        "tensor([0.0000, 0.0909, 0.1818, 0.2727, 0.3636, 0.4545, 0.5455, 0.6364, 0.7273,\n"
        "        0.8182, 0.9091, 1.0000], dtype=autojit.float64, requires_grad=True)")


def test_empty_tensors():
    assert repr(autojit.tensor([])) == "tensor([])"
    assert repr(autojit.tensor([], dtype=autojit.int64)) == "tensor([], dtype=autojit.int64)"
    assert repr(autojit.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(autojit.zeros(2, 0, dtype=autojit.int32)) == \
        "tensor([], size=(2, 0), dtype=autojit.int32)"
    assert repr(autojit.tensor([], dtype=autojit.float64)) == "tensor([], dtype=autojit.float64)"


def test_default_dtype_decides_the_dtype_suffix():
    autojit.set_default_dtype(autojit.float64)
    try:
        assert repr(autojit.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"
        assert repr(autojit.tensor([1.5], dtype=autojit.float32)) == \
            "tensor([1.5000], dtype=autojit.float32)"
    finally:
        autojit.set_default_dtype(autojit.float32)


def test_parameter_repr():
    parameter = autojit.nn.Parameter(autojit.tensor([1.0, 2.0]))
    assert repr(parameter) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"


def test_format_of_zero_dim_tensor():
    assert f"{autojit.tensor(2.5):.2f}" == "2.50"


def test_symbolic_tensor_prints_shape_and_dtype():
    class Value:
        shape = (2, 3)
        dtype = autojit.float64

    symbolic = autojit.Tensor._symbolic(Value())
    assert repr(symbolic) == "tensor(<symbolic f64[2, 3]>, dtype=autojit.float64)"
