"""Indexing a CUDA tensor with CUDA index tensors mixed with Python lists and CPU tensors.

The lists become CPU index tensors, which are copied to the indexed tensor's device before the
index rows are stacked. Runs under Numba's CUDA simulator (set up as in test_cuda.py) with tiny
sizes; expected values are written out by hand.
"""

import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit

pytestmark = MARKS

# x[i][j] = 4 * i + j
GRID = [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]


def grid(requires_grad=False):
    return autojit.tensor(GRID, device="cuda", requires_grad=requires_grad)


def test_cuda_index_with_a_list():
    x, rows = grid(), autojit.tensor([2, 0], device="cuda")
    result = x[rows, [0, 1]]
    assert result.is_cuda and result.tolist() == [8.0, 1.0]
    assert x[[0, 1], rows].tolist() == [2.0, 4.0]
    # The list broadcasts against the CUDA index.
    assert x[rows, [[0], [1]]].tolist() == [[8.0, 0.0], [9.0, 1.0]]
    # A CPU index tensor mixed with a CUDA one is accepted as well.
    assert x[rows.cpu(), rows].tolist() == [10.0, 0.0]
    # A boolean CUDA mask beside a list.
    mask = autojit.tensor([True, False, True], device="cuda")
    assert x[mask, [3, 1]].tolist() == [3.0, 9.0]


def test_mixed_index_gradient_stays_on_device():
    x, rows = grid(requires_grad=True), autojit.tensor([2, 0], device="cuda")
    (x[rows, [0, 1]] * autojit.tensor([1.0, 2.0], device="cuda")).sum().backward()
    assert x.grad.is_cuda
    assert x.grad.tolist() == [[0.0, 2.0, 0.0, 0.0], [0.0] * 4, [1.0, 0.0, 0.0, 0.0]]


def test_setitem_with_cuda_index_and_list():
    x, rows = autojit.zeros(3, 4, device="cuda"), autojit.tensor([2, 0], device="cuda")
    x[rows, [0, 3]] = autojit.tensor([5.0, 6.0], device="cuda")
    assert x.is_cuda
    assert x.tolist() == [[0.0, 0.0, 0.0, 6.0], [0.0] * 4, [5.0, 0.0, 0.0, 0.0]]
    x[rows] = 1.0
    assert x.tolist() == [[1.0] * 4, [0.0] * 4, [1.0] * 4]


def test_cuda_index_on_a_cpu_tensor_is_refused():
    x, rows = autojit.tensor(GRID), autojit.tensor([2, 0], device="cuda")
    with pytest.raises(RuntimeError, match=r"indices should be either on cpu or on the same "
                                           r"device as the indexed tensor \(cpu\)"):
        x[rows, [0, 1]]
