"""Views of CUDA tensors share memory with their base, as on the CPU (src/autojit/cuda/views.py).

Each program below makes views (reshape, slicing, indexing, transpose, permute, expand) and
writes in place through views and bases, then reads every tensor: the CUDA results must equal
the same program's on CPU tensors, whose views are NumPy views. Contiguous views alias their
base's buffer; strided ones keep a copy that writes scatter back from and reads refresh.
"""

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit

pytestmark = MARKS


def run_both(program):
    """program(make) on CPU and CUDA tensors; make(shape) gives the same values on each."""
    results = {}
    for device in ("cpu", "cuda"):
        def make(*shape, device=device):
            return autojit.arange(float(np.prod(shape)), device=device).reshape(*shape)

        results[device] = [t.cpu().numpy() for t in program(make)]
    for index, (cpu, cuda) in enumerate(zip(results["cpu"], results["cuda"], strict=True)):
        np.testing.assert_array_equal(cuda, cpu, err_msg=f"result {index}")


def row_write_reaches_base(make):
    x = make(3, 4)
    row = x[1]
    row.add_(100)
    x[2].mul_(-1)
    return x, row


def flat_view_and_base_see_each_other(make):
    x = make(2, 3)
    flat = x.view(6)
    flat.mul_(2)
    x.add_(1)  # the view reads the base's new values
    rows = x[1:]
    rows.fill_(7)
    return x, flat, rows


def transpose_write_and_read(make):
    x = make(3, 4)
    t = x.t()
    t[0, 2] = 50.0  # x[2, 0]
    t.add_(1)
    x.mul_(2)  # then t must read x again
    return x, t


def sibling_strided_views(make):
    x = make(4, 5)
    column = x[:, 1]
    same_column = x[:, 1]
    every_other = x[::2, 1::2]
    column.fill_(-3)
    every_other.mul_(10)
    return x, column, same_column, every_other


def views_of_views(make):
    x = make(2, 3, 4)
    p = x.permute(2, 0, 1)  # strided
    q = p[1]  # a strided view of a strided view
    q.sub_(1000)
    r = x[1].reshape(12)  # contiguous view of a contiguous view
    r[5] = -1.0
    s = x.transpose(0, 2).reshape(24)  # a copy, as torch's reshape of a non-contiguous view
    s.add_(1)
    return x, p, q, r, s


def unsqueeze_expand_and_squeeze(make):
    x = make(3)
    column = x.unsqueeze(1)
    wide = column.expand(3, 4)  # reads through the stride-0 view
    column.mul_(3)
    return x, column, wide, wide.sum(1)


@pytest.mark.parametrize("program", [row_write_reaches_base, flat_view_and_base_see_each_other,
                                     transpose_write_and_read, sibling_strided_views,
                                     views_of_views, unsqueeze_expand_and_squeeze],
                         ids=lambda program: program.__name__)
def test_views_share_memory_with_their_base_as_on_the_cpu(program):
    run_both(program)


def test_views_are_view_tensors_with_shared_versions():
    x = autojit.zeros(2, 3, device="cuda")
    row, column, copied = x[0], x[:, 0], x.t().reshape(6)
    assert row._base is x and column._base is x and copied._base is None
    column.add_(1)
    assert x._version == row._version == column._version == 1 and copied._version == 0
    before = autojit.cuda.memory_stats()["allocated"] + autojit.cuda.memory_stats()["reused"]
    x.reshape(3, 2).view(6)
    after = autojit.cuda.memory_stats()["allocated"] + autojit.cuda.memory_stats()["reused"]
    assert after == before, "a contiguous view allocated a buffer"


def test_in_place_errors_on_views_match_the_cpu():
    for device in ("cpu", "cuda"):
        x = autojit.zeros(2, 3, device=device)
        with pytest.raises(RuntimeError, match="more than one element of the written-to"):
            x[0].expand(4, 3).add_(1)
        leaf = autojit.zeros(2, 3, device=device, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            leaf[:, 0].add_(1)


def test_in_place_write_to_a_view_of_a_non_leaf_reaches_the_base_and_its_gradient():
    results = []
    for device in ("cpu", "cuda"):
        w = autojit.arange(6.0, device=device).reshape(2, 3).requires_grad_()
        y = w * 2
        y[:, 1].mul_(3)  # the base's history becomes the old base with the column scattered in
        with autojit.no_grad():
            y[0, 0].add_(100)  # outside autograd: a plain write, reaching y
        (y * y).sum().backward()
        results.append((y.detach().cpu().numpy(), w.grad.cpu().numpy()))
    expected = np.arange(6.0).reshape(2, 3) * 2
    expected[:, 1] *= 3
    expected[0, 0] += 100
    np.testing.assert_array_equal(results[0][0], expected)
    # d(y*y)/dw = 2 y * dy/dw, with dy/dw = 2, or 6 in the column written through the view.
    np.testing.assert_allclose(results[0][1], 2 * expected * np.array([2.0, 6.0, 2.0]))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_allclose(results[1][1], results[0][1])


def test_compiled_function_writes_through_a_strided_view_argument():
    def step(v, g):
        v.sub_(0.5 * g)
        return v.sum()

    outputs = []
    for device in ("cpu", "cuda"):
        x = autojit.arange(12.0, device=device).reshape(3, 4)
        g = autojit.ones(4, 3, device=device)
        compiled = autojit.compile(step, backend="cuda" if device == "cuda" else "cpu")
        total = compiled(x.t(), g)
        total = compiled(x.t(), g)  # a second call runs the cached executable
        outputs.append((x.cpu().numpy(), float(total)))
    np.testing.assert_array_equal(outputs[1][0], outputs[0][0])
    assert outputs[1][1] == outputs[0][1]


def test_compiled_writes_through_views_of_locals_arguments_and_captured_tensors():
    # The trace turns a write through a view into a scatter into its root (ir/aliasing.py);
    # on CUDA tensors that runs as CUDA kernels, and must leave what the CPU run leaves.
    outputs = []
    for device in ("cpu", "cuda"):
        captured = autojit.zeros(3, 4, device=device)

        def step(x, captured=captured):
            z = x.clone()
            z[:, 0].mul_(3)
            z.view(-1)[3] += 1
            x.t()[1].sub_(1)
            with autojit.no_grad():
                captured[0].add_(x[1])
            return z, x.sum()

        compiled = autojit.compile(step, backend="cuda" if device == "cuda" else "cpu")
        x = autojit.arange(12.0, device=device).reshape(3, 4)
        results = [compiled(x) for _ in range(2)]
        outputs.append([t.cpu().numpy() for pair in results for t in pair] +
                       [x.cpu().numpy(), captured.cpu().numpy(), x._version])
    for cpu, cuda in zip(outputs[0], outputs[1], strict=True):
        np.testing.assert_array_equal(cuda, cpu)
