"""Storage against torch: Tensor.set_, a tensor put on another tensor's memory or a storage's
bytes in place (values and writes shared, shapes, strides, storage offsets, the version
counter), a leaf's gradient accumulator made anew (a graph that used it before finds it unused,
a gradient edge taken before still reaches it), torch's errors (dtype, a leaf in grad mode), the
node that refuses a backward, and autograd.grad's message for an unused input; a detached
view's storage (its base's); forward AD's tangent laid out as its primal (make_dual copies one
laid out otherwise, under torch's first vmap too; as_strided of the dual reads it). Each program
runs under torch and under autojit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from autojit.drop_in import _vmap_internals as autojit_vmap_internals

torch = pytest.importorskip("torch")
import torch._vmap_internals as torch_vmap_internals  # noqa: E402
from torch_outcomes import both, error_of  # noqa: E402


def test_set_to_a_tensor_shares_its_memory_and_keeps_the_version_counter():
    def program(t):
        source = t.arange(6.0)
        target = t.zeros(2)
        version = target._version
        returned = target.set_(source)
        target[0] = 100.0  # a write through either is seen by both
        return (returned is target, tuple(target.shape), target._version - version,
                source.tolist(), target.data_ptr() == source.data_ptr())

    assert_same(*both(program))


def test_set_to_a_view_takes_its_strides_and_storage_offset():
    def program(t):
        base = t.arange(12.0).reshape(3, 4)
        target = t.empty(0)
        target.set_(base[1:, 1:].t())
        return (target.tolist(), tuple(target.shape), target.stride(),
                target.storage_offset(), len(target.untyped_storage()))

    assert_same(*both(program))


def test_set_to_a_storage_with_offset_size_and_stride():
    def program(t):
        source = t.arange(6.0)
        whole = t.empty(0).set_(source.untyped_storage())
        window = t.empty(0).set_(source.untyped_storage(), 2, (2, 2), (1, 2))
        contiguous = t.empty(0).set_(source.untyped_storage(), 1, (2, 2))
        doubles = t.empty(0, dtype=t.float64).set_(t.arange(6.0).untyped_storage())
        empty = t.ones(3).set_()
        return (whole.tolist(), window.tolist(), window.stride(), window.storage_offset(),
                contiguous.tolist(), contiguous.stride(), tuple(doubles.shape),
                tuple(empty.shape))

    assert_same(*both(program))


def test_set_refuses_another_dtype_and_a_leaf_in_grad_mode():
    def program(t):
        return (error_of(lambda: t.ones(3).set_(t.ones(3, dtype=t.float64))),
                error_of(lambda: t.ones(3, dtype=t.int64).set_(t.ones(3))),
                error_of(lambda: t.empty(0, dtype=t.float64).set_(t.ones(2).storage())),
                error_of(lambda: t.rand(2, requires_grad=True).set_(t.rand(3))))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated
        assert_same(*both(program))


def test_set_gives_a_leaf_a_new_gradient_accumulator():
    def program(t):
        x = t.rand(2, requires_grad=True)
        edge = t.autograd.graph.get_gradient_edge(x)
        out = x.clone()
        with t.no_grad():
            x.set_(t.rand_like(x))
        new_edge = t.autograd.graph.get_gradient_edge(x)
        unused = error_of(lambda: t.autograd.grad(out.sum(), x, retain_graph=True))
        through_edge = t.autograd.grad(out.sum(), edge)[0].tolist()
        return (new_edge.node is edge.node, x.is_leaf, x.requires_grad, x.grad_fn is None,
                unused, through_edge)

    assert_same(*both(program))


def test_parameter_set_to_a_slice_of_itself_and_trained():
    # torch's test_parameter_resize: the parameter shrinks twice; backward reaches it each time
    def program(t):
        parameter = t.nn.Parameter(t.ones(16, dtype=t.float64))
        seen = []
        for _ in range(2):
            with t.no_grad():
                parameter.set_(parameter[1:])
                parameter.grad = None
            t.cat((parameter, parameter)).sum().backward()
            seen.append((tuple(parameter.shape), parameter.grad.tolist(),
                         parameter.storage_offset(), parameter[1:].storage_offset()))
        return seen

    assert_same(*both(program))


def test_set_under_grad_mode_gives_a_node_whose_backward_raises():
    def program(t):
        x = t.ones(4, requires_grad=True).clone()
        y = x.set_(t.zeros(3))
        plain = t.ones(3)
        plain.set_(t.zeros(2, requires_grad=True))
        return (y.grad_fn.name(), y.requires_grad, y.is_leaf, tuple(y.shape),
                plain.grad_fn.name(), plain.requires_grad,
                error_of(lambda: y.sum().backward()))

    assert_same(*both(program))


def test_grad_names_the_unused_input_by_its_index():
    def program(t):
        a = t.ones(2, requires_grad=True)
        b = t.ones(2, requires_grad=True)
        return (error_of(lambda: t.autograd.grad((a * 2).sum(), [a, b])),
                error_of(lambda: t.autograd.grad((a * 2).sum(), [b, a])))

    assert_same(*both(program))


def test_a_detached_view_lies_in_its_base_storage():
    def program(t):
        base = t.arange(5.0, requires_grad=True)
        view = base[1:].detach()
        data = base[2:].data
        empty = t.ones(0).as_strided((0, 1), (1, 1), 0)
        return (len(view.untyped_storage()), view.storage_offset(), data.storage_offset(),
                view.as_strided((2,), (1,), 0).tolist(), tuple(empty.shape))

    assert_same(*both(program))


@pytest.mark.parametrize("case", ["same", "transposed", "storage", "offset", "size_one",
                                  "conjugate", "both_conjugate"])
def test_make_dual_lays_the_tangent_out_as_its_primal(case):
    def program(t):
        primal, tangent = {
            "same": lambda: (t.zeros(2, 3), t.ones(2, 3)),
            "transposed": lambda: (t.zeros(3, 2).t(), t.ones(2, 3)),
            "storage": lambda: (t.zeros(5)[:4].detach(), t.ones(4)),
            "offset": lambda: (t.zeros(5)[1:].detach(), t.ones(5)[:4].detach()),
            "size_one": lambda: (t.zeros(4, 1), t.ones(1, 4).t()),
            "conjugate": lambda: (t.zeros(2, dtype=t.complex128).conj(),
                                  t.ones(2, dtype=t.complex128)),
            "both_conjugate": lambda: (t.zeros(2, dtype=t.complex128).conj(),
                                       t.ones(2, dtype=t.complex128).conj()),
        }[case]()
        forward_ad = t.autograd.forward_ad
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(primal, tangent)
            got = forward_ad.unpack_dual(dual).tangent
            found = [got is tangent, got.stride(), got.storage_offset(),
                     len(got.untyped_storage()) // got.element_size(), got.is_conj(),
                     got.tolist()]
            if case == "storage":
                strided = dual.as_strided((5,), (1,), 0)
                found.append(forward_ad.unpack_dual(strided).tangent.tolist())
                got.mul_(2)  # the copy, not the tangent given
                found.append(tangent.tolist())
        return found

    assert_same(*both(program))


@pytest.mark.filterwarnings("ignore")
def test_make_dual_under_legacy_vmap_compares_the_examples_layout():
    # a batched tangent: copied where an example's strides differ from the primal's, kept as
    # it is where only the storage's size differs (torch's vmap has no per-example storage)
    def program(t):
        legacy_vmap = (torch_vmap_internals if t is torch else autojit_vmap_internals)._vmap
        found = []
        for primal in (t.zeros(2, 2), t.zeros(2, 2).t(), t.randn(5)[:4].detach().view(2, 2)):
            tangent = t.arange(8.0).reshape(2, 2, 2)

            def jvp(batch, primal=primal):
                forward_ad = t.autograd.forward_ad
                with forward_ad.dual_level():
                    return forward_ad.unpack_dual(forward_ad.make_dual(primal, batch))[1]

            out = legacy_vmap(jvp, 0, 0)(tangent)
            found.append((out is tangent, out.tolist()))
        return found

    assert_same(*both(program))


def assert_same(torch_result, autojit_result):
    assert _plain(torch_result) == _plain(autojit_result)


def _plain(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(item) for item in value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value
