"""What torch_geometric's own tests needed of autojit, against torch: sparse CSR and CSC
matrices (made, converted, their parts, products with dense matrices, torch.sparse.mm with a
reduction, gradients to the values and the dense operand, a CSR leaf's gradient),
linear of a sparse input, `_segment_reduce` with torch's "amax"/"amin", the layout of
advanced indexing's result, `to(None)`, randperm of a one-element tensor, frombuffer,
from_numpy of an np.matrix, SparseTensor._coalesced_, and a worker's collate into a new storage
(`untyped_storage()._new_shared`, `x.new(storage)`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit as aj

torch = pytest.importorskip("torch")

DENSE = [[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [3.0, -1.0, 0.5]]
OTHER = (np.arange(6.0).reshape(3, 2) - 2.0).astype(np.float32)


def _parts(x):
    """The arrays a sparse tensor of either library holds, by layout."""
    layout = str(x.layout).split(".")[-1]
    if layout == "sparse_csr":
        return layout, x.crow_indices().tolist(), x.col_indices().tolist(), x.values().tolist()
    if layout == "sparse_csc":
        return layout, x.ccol_indices().tolist(), x.row_indices().tolist(), x.values().tolist()
    x = x.coalesce()
    return layout, x.indices().tolist(), x.values().tolist()


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "Sparse CSR tensor support is in beta"
        yield


@pytest.mark.parametrize("form", ["csr", "csc", "coo_csr", "coo_csc", "csr_csc", "csr_coo",
                                  "t", "hybrid"])
def test_compressed_conversions(form):
    def build(L):
        dense = L.tensor(DENSE)
        if form == "csr":
            return dense.to_sparse_csr()
        if form == "csc":
            return dense.to_sparse(layout=L.sparse_csc)
        if form == "coo_csr":
            return dense.to_sparse().to_sparse_csr()
        if form == "coo_csc":
            return dense.to_sparse_coo().to_sparse_csc()
        if form == "csr_csc":
            return dense.to_sparse_csr().to_sparse_csc()
        if form == "csr_coo":
            return dense.to_sparse_csr().to_sparse_coo()
        if form == "t":
            return dense.to_sparse_csc().t()
        stacked = L.stack([dense, 2 * dense], -1)
        return stacked.to_sparse_csr(dense_dim=1)

    ours, theirs = build(aj), build(torch)
    assert _parts(ours) == _parts(theirs)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.to_dense().tolist() == theirs.to_dense().tolist()
    assert (ours.is_sparse, getattr(ours, "is_sparse_csr", False)) == \
        (theirs.is_sparse, theirs.is_sparse_csr)


@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_compressed_constructors(layout):
    def build(L):
        make = L.sparse_csr_tensor if layout == "csr" else L.sparse_csc_tensor
        shaped = make(L.tensor([0, 1, 1, 3]), L.tensor([1, 0, 1]), L.tensor([2.0, 3, -1]),
                      (3, 4) if layout == "csr" else (4, 3))
        inferred = make(L.tensor([0, 1, 1, 3]), L.tensor([1, 0, 1]), L.tensor([2.0, 3, -1]))
        return shaped, inferred

    def wrong(L):
        make = L.sparse_csr_tensor if layout == "csr" else L.sparse_csc_tensor
        return make(L.tensor([0, 1, 1, 3]), L.tensor([1, 0, 1]), L.tensor([2.0, 3, -1]), (4, 4),
                    check_invariants=True)

    assert _error(lambda: wrong(aj)) == _error(lambda: wrong(torch))
    for ours, theirs in zip(build(aj), build(torch)):
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.to_dense().tolist() == theirs.to_dense().tolist()
        assert ours._nnz() == theirs._nnz()


def _error(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - compared
        return type(error).__name__, str(error).splitlines()[0]
    return None


@pytest.mark.parametrize("name", ["crow_indices", "col_indices", "ccol_indices",
                                  "row_indices", "indices", "coalesce"])
def test_compressed_part_errors(name):
    for source in ("dense", "csr", "csc"):
        def call(L, source=source):
            x = L.tensor(DENSE)
            x = x if source == "dense" else getattr(x, f"to_sparse_{source}")()
            return getattr(x, name)()

        theirs = _error(lambda: call(torch))
        if theirs is None:
            continue
        assert _error(lambda: call(aj)) == theirs


@pytest.mark.parametrize("reduce", [None, "sum", "mean", "amax", "amin", "max", "min"])
def test_sparse_mm_reduce_values_and_gradients(reduce):
    def run(L):
        values = L.tensor([2.0, 3.0, -1.0, 0.5], requires_grad=True)
        matrix = L.sparse_csr_tensor(L.tensor([0, 1, 1, 4]), L.tensor([1, 0, 1, 2]), values,
                                     (3, 3))
        other = L.tensor(OTHER, requires_grad=True)
        out = L.sparse.mm(matrix, other) if reduce is None else \
            L.sparse.mm(matrix, other, reduce)
        out.pow(2).sum().backward()
        return out.tolist(), values.grad.tolist(), other.grad.tolist()

    ours, theirs = run(aj), run(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_sparse_mm_reduce_errors():
    for layout, reduce in (("csc", "max"), ("csr", "prod")):
        def call(L, layout=layout, reduce=reduce):
            x = getattr(L.tensor(DENSE), f"to_sparse_{layout}")()
            return L.sparse.mm(x, L.tensor(OTHER), reduce)

        assert _error(lambda: call(aj)) == _error(lambda: call(torch))


@pytest.mark.parametrize("form", ["matmul", "mm", "rmatmul", "csc", "linear", "linear_coo"])
def test_compressed_products(form):
    def run(L):
        dense = L.tensor(DENSE)
        weight = L.tensor(OTHER.T.copy(), requires_grad=True)
        sparse = dense.to_sparse_csc() if form == "csc" else dense.to_sparse_csr()
        if form in ("matmul", "csc"):
            out = sparse @ weight.t()
        elif form == "mm":
            out = L.mm(sparse, weight.t())
        elif form == "rmatmul":
            out = weight @ sparse
        elif form == "linear":
            out = L.nn.functional.linear(sparse, weight, L.ones(2))
        else:
            out = L.nn.functional.linear(dense.to_sparse(), weight, L.ones(2))
        out.pow(2).sum().backward()
        return out.tolist(), weight.grad.tolist()

    ours, theirs = run(aj), run(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_compressed_leaf_gradient_and_scalars():
    def run(L):
        matrix = L.tensor(DENSE).to_sparse_csr().requires_grad_()
        other = L.tensor(OTHER)
        (matrix @ other).sum().backward()
        grad = matrix.grad.to_dense().tolist()
        scaled = (matrix.detach() * 2).to_dense().tolist()
        return grad, scaled, matrix.detach().sum().item(), str(matrix.grad.layout).split(".")[-1]

    assert run(aj) == run(torch)


def test_convert_indices():
    for L in (aj, torch):
        rows = L.tensor([0, 0, 2, 2, 3])
        L.out = (L._convert_indices_from_coo_to_csr(rows, 5).tolist(),
                 L._convert_indices_from_coo_to_csr(rows, 5, out_int32=True).dtype,
                 L._convert_indices_from_csr_to_coo(L.tensor([0, 1, 1, 3]),
                                                    L.tensor([1, 0, 1])).tolist(),
                 L._convert_indices_from_csr_to_coo(L.tensor([0, 1, 1, 3]),
                                                    L.tensor([1, 0, 1]),
                                                    transpose=True).tolist())
    assert aj.out[0] == torch.out[0] and aj.out[2:] == torch.out[2:]
    assert str(aj.out[1]).split(".")[-1] == str(torch.out[1]).split(".")[-1] == "int32"


@pytest.mark.parametrize("reduce", ["amax", "amin", "max", "min", "mean"])
def test_segment_reduce_names(reduce):
    def run(L):
        data = L.tensor([1.0, 5.0, 3.0, 2.0, 4.0])
        return L._segment_reduce(data, reduce, offsets=L.tensor([0, 2, 2, 5]),
                                 initial=0 if reduce == "mean" else None).tolist()

    assert run(aj) == run(torch)


def test_advanced_indexing_result_is_contiguous():
    def run(L):
        x = L.arange(12).view(2, 6)
        mask = L.tensor([True, False, True, True, False, True])
        picked = x[:, mask]
        return picked.stride(), picked.view(-1).tolist(), x[:, L.tensor([0, 2])].stride()

    assert run(aj) == run(torch)


def test_to_none_and_randperm_of_a_tensor():
    def run(L):
        x = L.arange(3)
        return (x.to(None).tolist(), str(x.to(None, L.float64).dtype)[-7:],
                x.to(None, None).dtype == x.dtype,
                sorted(L.randperm(L.tensor(4)).tolist()),
                sorted(L.randperm(L.tensor([3])).tolist()),
                _error(lambda: L.randperm(L.tensor(3.0))))

    assert run(aj) == run(torch)


@pytest.mark.parametrize("case", ["plain", "count_offset", "too_long", "offset_past",
                                  "not_multiple", "zero_count", "empty", "not_buffer",
                                  "read_only"])
def test_frombuffer(case):
    def run(L):
        data = bytearray(range(16))
        kwargs = {"plain": dict(dtype=L.int32), "count_offset": dict(dtype=L.int16, count=3,
                                                                    offset=2),
                  "too_long": dict(dtype=L.int32, count=5), "offset_past":
                  dict(dtype=L.int32, offset=20), "not_multiple": dict(dtype=L.int64, offset=1),
                  "zero_count": dict(dtype=L.int32, count=0), "empty": dict(dtype=L.int32),
                  "not_buffer": dict(dtype=L.int32), "read_only": dict(dtype=L.float32)}[case]
        source = {"empty": bytearray(), "not_buffer": [1, 2],
                  "read_only": bytes(data)}.get(case, data)
        result = _error(lambda: L.frombuffer(source, **kwargs))
        if result is not None:
            return result
        tensor = L.frombuffer(source, **kwargs)
        values = tensor.tolist()
        if case == "plain":  # shares the buffer's memory
            tensor[0] = 7
            return values, bytes(source[:4])
        return values

    assert run(aj) == run(torch)


def test_from_numpy_of_a_matrix_and_coalesced_flag():
    matrix = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    ours, theirs = aj.from_numpy(matrix[:, 1:]), torch.from_numpy(matrix[:, 1:])
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert (ours * 2).tolist() == (theirs * 2).tolist()

    def flagged(L):
        x = L.sparse_coo_tensor(L.tensor([[0, 1], [1, 0]]), L.tensor([1.0, 2.0]), (2, 2))
        before = x.is_coalesced()
        same = x._coalesced_(True)
        return before, same is x, x.is_coalesced(), x.indices().tolist()

    assert flagged(aj) == flagged(torch)


def test_symbolic_trace_module_names():
    """torch_geometric's tracer subclass reads these from torch.fx._symbolic_trace."""
    import torch.fx._symbolic_trace as theirs

    import autojit.fx._symbolic_trace as ours

    for name in ("compatibility", "ScriptObject", "Proxy", "_Patcher", "_autowrap_check",
                 "_patch_wrapped_functions", "_orig_module_call", "_orig_module_getattr"):
        assert hasattr(theirs, name) and hasattr(ours, name), name
    assert not isinstance(aj.ones(1), ours.ScriptObject)

    @ours.compatibility(is_backward_compatible=True)
    def marked():
        """A function."""

    assert marked.__name__ == "marked"


@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_gradients_through_compressed_conversions(layout):
    def run(L):
        x = L.tensor(DENSE, requires_grad=True)
        sparse = getattr(x, f"to_sparse_{layout}")()
        (sparse @ L.tensor(OTHER)).pow(2).sum().backward()
        product = x.grad.tolist()
        x.grad = None
        getattr(x.to_sparse(), f"to_sparse_{layout}")().to_dense().pow(2).sum().backward()
        return sparse.requires_grad, product, x.grad.tolist()

    assert run(aj) == run(torch)


@pytest.mark.parametrize("dim, index", [(0, [1, 2]), (0, [2, 2, 0]), (1, [1]), (-1, [1, 0]),
                                        (2, [1])])
def test_sparse_index_select(dim, index):
    def run(L):
        dense = L.zeros(3, 2, 2)
        dense[0, 0, 1], dense[2, 1, 0], dense[1, 1, 1] = 1.0, 3.0, -2.0
        sparse = dense.to_sparse(2) if dim in (2, -1) else dense.sum(-1).to_sparse()
        picked = sparse.index_select(dim, L.tensor(index))
        return str(picked.layout).split(".")[-1], tuple(picked.shape), picked.to_dense().tolist()

    assert run(aj) == run(torch)


def test_sparse_index_select_gradient():
    """torch's backward of a sparse index_select raises (it has no sparse index_add_): the
    values' gradient is compared with the dense tensor's at the stored positions."""
    positions = [[0, 1, 2], [0, 1, 0]]
    values = aj.tensor([1.0, 2.0, 3.0], requires_grad=True)
    sparse = aj.sparse_coo_tensor(aj.tensor(positions), values, (3, 2))
    sparse.index_select(0, aj.tensor([2, 0, 2])).to_dense().pow(2).sum().backward()
    dense = torch.sparse_coo_tensor(torch.tensor(positions), torch.tensor([1.0, 2.0, 3.0]),
                                    (3, 2)).to_dense().requires_grad_()
    dense.index_select(0, torch.tensor([2, 0, 2])).pow(2).sum().backward()
    assert values.grad.tolist() == dense.grad[tuple(torch.tensor(positions))].tolist()


def _pipes(L, name: str):
    """What torch's DataPipes give, in library L: the basic pipes, a registered pipe class
    (under `name`, as torch_geometric registers `batch_graphs`) and a DataLoader over one."""
    data = L.utils.data
    wrapper = data.datapipes.iter.IterableWrapper
    pipe = wrapper(range(7))
    out = [list(pipe.batch(3)), list(pipe.batch(3, drop_last=True)), len(pipe.batch(3)),
           len(pipe.batch(3, drop_last=True)), type(list(pipe.batch(2))[0]).__name__,
           list(pipe.map(abs)), list(pipe.filter(bool)),
           list(wrapper([(1, 2), (3, 4)]).map(str, input_col=0)),
           list(wrapper([[1, 2]]).map(str, input_col=1, output_col=-1)),
           list(wrapper([{"a": 1}]).map(str, input_col="a", output_col="b")),
           list(wrapper([(1, 2, 3)]).map(max, input_col=[0, 2]))]
    shard = pipe.sharding_filter()
    shard.apply_sharding(3, 1)
    out += [list(shard), len(shard), isinstance(pipe, data.IterableDataset)]

    @data.functional_datapipe(name)
    class Scaled(data.IterDataPipe):
        def __init__(self, source, k=2):
            super().__init__()
            self.source, self.k = source, k

        def __iter__(self):
            for item in self.source:
                yield item * self.k

        def __len__(self):
            return len(self.source)

    # a module-level name: torch's DataLoader pickles the pipes it walks
    Scaled.__qualname__ = Scaled.__name__ = f"_Scaled_{L.__name__}"
    globals()[Scaled.__name__] = Scaled
    scaled = getattr(pipe, name)(k=3)
    out += [list(scaled), _error(lambda: pipe.not_registered),
            _error(lambda: data.functional_datapipe(name)(Scaled))]
    loader = data.DataLoader(getattr(pipe, name)(), batch_size=2)
    out += [len(loader), [batch.tolist() for batch in loader]]
    return out


def test_datapipes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation of DataPipes
        assert _pipes(aj, "scaled_for_autojit") == _pipes(torch, "scaled_for_autojit")


@pytest.mark.parametrize("first", ["coo", "csr", "csc"])
@pytest.mark.parametrize("second", ["coo", "csr", "csc"])
def test_sparse_times_sparse(first, second):
    def run(L):
        a = L.tensor([[0.0, 1, 0], [2, 0, 3], [0, 0, -1]])
        b = L.tensor([[1.0, 0], [0, 0], [4, 5]])

        def as_layout(x, name):
            return x.to_sparse() if name == "coo" else getattr(x, f"to_sparse_{name}")()

        def call():
            out = as_layout(a, first) @ as_layout(b, second)
            return str(out.layout).split(".")[-1], out.to_dense().tolist(), out._nnz()

        return _error(call) or call()

    assert run(aj) == run(torch)


def test_sparse_times_sparse_gradients():
    def run(L):
        v1 = L.tensor([1.0, 2, 3, -1], requires_grad=True)
        v2 = L.tensor([1.0, 4, 5], requires_grad=True)
        s1 = L.sparse_coo_tensor(L.tensor([[0, 1, 1, 2], [1, 0, 2, 2]]), v1, (3, 3))
        s2 = L.sparse_coo_tensor(L.tensor([[0, 2, 2], [0, 0, 1]]), v2, (3, 2))
        out = L.sparse.mm(s1, s2)
        out.to_dense().pow(2).sum().backward()
        return out.is_coalesced(), out.indices().tolist(), v1.grad.tolist(), v2.grad.tolist()

    assert run(aj) == run(torch)


def test_compressed_of_a_coo_tensor_keeps_the_values_differentiable():
    def run(L):
        weight = L.ones(4, requires_grad=True)
        coo = L.sparse_coo_tensor(L.tensor([[0, 0, 1, 2], [1, 2, 0, 0]]), weight, (3, 3))
        csr = coo.to_sparse_csr()
        values = csr.values()
        (values * L.arange(4.0)).sum().backward()
        return csr.requires_grad, values.requires_grad, weight.grad.tolist()

    assert run(aj) == run(torch)


def test_uninitialized_parameters_load_and_copy():
    """torch_geometric's lazy Linear loads a state dict whose weight is still uninitialized."""

    def run(L):
        parameter = L.nn.parameter

        class Holder(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = parameter.UninitializedParameter()

        target = Holder()
        result = target.load_state_dict({"weight": parameter.UninitializedParameter()})
        lazy = parameter.UninitializedParameter()
        with L.no_grad():
            copied = lazy.copy_(parameter.UninitializedParameter()) is lazy
            refused = _error(lambda: lazy.copy_(L.ones(2)))
        return (tuple(lazy.size()), lazy.size(0), copied, refused is not None,
                type(target.weight).__name__, list(result.missing_keys))

    assert run(aj) == run(torch)


def _collated(top):
    """torch_geometric's collate in a DataLoader worker: a new storage, a tensor of the
    element's dtype over it, and cat written into it (`out=`)."""
    elem = top.arange(6.0).reshape(2, 3)
    storage = elem.untyped_storage()._new_shared(4 * 3 * elem.element_size(),
                                                 device=elem.device)
    out = elem.new(storage).view(4, 3)
    result = top.cat([elem, elem + 10], dim=0, out=out)
    return result is out, result.tolist(), storage.nbytes(), top.is_storage(storage)


def test_collate_into_a_new_storage_as_torch():
    assert _collated(aj) == _collated(torch)
