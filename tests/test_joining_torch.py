"""Joining, rearranging and diagonals against torch: values, gradients and errors
(tests/torch_compare.py), including the layout ops that existed before (movedim, swapaxes,
unbind, tile, narrow, flip, ...), and `diagonal` as a view.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_compare import same_as_torch, torch

import autojit

rng = np.random.default_rng(3)
A = rng.standard_normal(3)
M = rng.standard_normal((2, 3))
C = rng.standard_normal((2, 3, 4))
S = np.array(1.5)
I = np.array  # noqa: E741

VALUE_CASES = {
    # stacks
    "hstack_1d": (lambda t, a, b: t.hstack([a, b]), A, A),
    "hstack_0d_promotes": (lambda t, s, b: t.hstack((s, b)), S, I([1, 2])),
    "hstack_2d": (lambda t, a, b: t.hstack([a, b]), M, M),
    "vstack": (lambda t, a, m: t.vstack([a, m]), A, M),
    "vstack_0d": (lambda t, a, b: t.vstack([a, b]), S, S),
    "row_stack": (lambda t, a, b: t.row_stack([a, b]), A, A),
    "dstack": (lambda t, a, m: t.dstack([m, m]), A, M),
    "dstack_1d": (lambda t, a: t.dstack([a, a]), A),
    "column_stack": (lambda t, a, m: t.column_stack([a[:2], m]), A, M),
    "column_stack_0d": (lambda t, s: t.column_stack([s, s]), S),
    "atleast_1d": (lambda t, s: t.atleast_1d(s), S),
    "atleast_2d_many": (lambda t, s, a: t.atleast_2d(s, a), S, A),
    "atleast_3d_list": (lambda t, a, m, c: t.atleast_3d([a, m, c]), A, M, C),
    "block_diag": (lambda t, m, a, s: t.block_diag(m, a, s), M, A, S),
    "block_diag_int": (lambda t, m, i: t.block_diag(m, i), M, I([[1, 2], [3, 4]])),
    "block_diag_empty": (lambda t, m: t.block_diag(m[:0], m), M),
    "cartesian_prod": (lambda t, a, b: t.cartesian_prod(a, b), A, A[:2]),
    "cartesian_prod_one": (lambda t, a: t.cartesian_prod(a), A),
    "meshgrid_ij": (lambda t, a, b: t.meshgrid(a, b, indexing="ij"), A, A[:2]),
    "meshgrid_xy": (lambda t, a, b, c: t.meshgrid([a, b, c], indexing="xy"), A, A[:2], S),
    # rearranging
    "roll_flat": (lambda t, m: t.roll(m, 1), M),
    "roll_dims": (lambda t, m: m.roll((1, -4), (0, 1)), M),
    "roll_0d": (lambda t, s: t.roll(s, 2), S),
    "flip_varargs": (lambda t, c: c.flip(0, 2), C),
    "flip_tuple": (lambda t, c: t.flip(c, (-1,)), C),
    "flip_0d": (lambda t, s: s.flip(0), S),
    "flip_none": (lambda t, c: t.flip(c, ()), C),
    "fliplr": (lambda t, m: t.fliplr(m), M),
    "flipud": (lambda t, a: a.flipud(), A),
    "rot90": (lambda t, m: t.rot90(m), M),
    "rot90_k2": (lambda t, c: c.rot90(2, (2, 0)), C),
    "rot90_k_negative": (lambda t, m: t.rot90(m, -1, [0, 1]), M),
    "rot90_k0": (lambda t, m: t.rot90(m, 4), M),
    "repeat_interleave_int": (lambda t, m: t.repeat_interleave(m, 2), M),
    "repeat_interleave_dim": (lambda t, m: m.repeat_interleave(2, dim=1, output_size=6), M),
    "repeat_interleave_tensor": (lambda t, m, r: t.repeat_interleave(m, r, dim=0), M, I([2, 0])),
    "repeat_interleave_one_count": (lambda t, m, r: m.repeat_interleave(r, dim=1), M, I([3])),
    "repeat_interleave_counts": (lambda t, r: t.repeat_interleave(r), I([1, 0, 3])),
    "repeat_interleave_0d": (lambda t, s: t.repeat_interleave(s, 3), S),
    # diagonals
    "diag_1d": (lambda t, a: t.diag(a), A),
    "diag_1d_offset": (lambda t, a: a.diag(-2), A),
    "diag_2d": (lambda t, m: t.diag(m, 1), M),
    "diag_2d_past_the_end": (lambda t, m: t.diag(m, 5), M),
    "diagonal": (lambda t, c: t.diagonal(c), C),
    "diagonal_dims": (lambda t, c: c.diagonal(1, 2, 0), C),
    "diagonal_negative": (lambda t, c: t.diagonal(c, -1, -1, -2), C),
    "diag_embed": (lambda t, m: t.diag_embed(m), M),
    "diag_embed_dims": (lambda t, m: m.diag_embed(-1, 0, 2), M),
    "diagflat": (lambda t, m: t.diagflat(m, 1), M),
    "diagflat_0d": (lambda t, s: t.diagflat(s), S),
    "trace": (lambda t, m: t.trace(m), M),
    "trace_int": (lambda t, m: m.trace(), I([[1, 2], [3, 4]], dtype=np.int32)),
    # the layout ops that existed before
    "movedim": (lambda t, c: t.movedim(c, (0, 1), (2, 0)), C),
    "moveaxis": (lambda t, c: c.moveaxis(-1, 0), C),
    "swapaxes": (lambda t, c: t.swapaxes(c, 0, -1), C),
    "swapdims": (lambda t, c: c.swapdims(1, 2), C),
    "unbind": (lambda t, c: t.unbind(c, 1), C),
    "tile": (lambda t, m: t.tile(m, (2,)), M),
    "tile_more_dims": (lambda t, m: m.tile((2, 1, 2)), M),
    "repeat": (lambda t, m: m.repeat(2, 1, 3), M),
    "narrow": (lambda t, m: t.narrow(m, 1, -2, 2), M),
    "narrow_tensor_start": (lambda t, m, s: m.narrow(1, s, 2), M, I(1)),
    "chunk": (lambda t, c: t.chunk(c, 3, 2), C),
    "split_sizes": (lambda t, c: c.split([1, 3], 2), C),
    "select": (lambda t, c: t.select(c, 1, -1), C),
    "squeeze_dims": (lambda t, c: t.squeeze(c[:, :1, :1], (1, 2)), C),
    "t": (lambda t, m: m.t(), M),
    "flatten": (lambda t, c: c.flatten(1), C),
    "unflatten": (lambda t, c: c.unflatten(2, (2, -1)), C),
    "stack_dim": (lambda t, m: t.stack([m, m], -1), M),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_and_gradients_like_torch(name):
    function, *arrays = VALUE_CASES[name]
    same_as_torch(function, *arrays)


ERROR_CASES = {
    "hstack_empty": (lambda t: t.hstack([]),),
    "hstack_tensor": (lambda t, a: t.hstack(a), A),
    "vstack_empty": (lambda t: t.vstack([]),),
    "column_stack_sizes": (lambda t, a, b: t.column_stack([a, b]), A, A[:2]),
    "block_diag_3d": (lambda t, c: t.block_diag(c), C),
    "cartesian_prod_2d": (lambda t, m: t.cartesian_prod(m), M),
    "cartesian_prod_dtypes": (lambda t, a, i: t.cartesian_prod(a, i), A, I([1])),
    "cartesian_prod_none": (lambda t: t.cartesian_prod(),),
    "meshgrid_indexing": (lambda t, a: t.meshgrid(a, a, indexing="ab"), A),
    "meshgrid_none": (lambda t: t.meshgrid(indexing="ij"),),
    "roll_align": (lambda t, m: t.roll(m, (1, 2), 0), M),
    "roll_align_no_dims": (lambda t, m: t.roll(m, (1, 2)), M),
    "roll_dim": (lambda t, m: t.roll(m, 1, 2), M),
    "roll_0d_dim": (lambda t, s: t.roll(s, 1, 0), S),
    "flip_int": (lambda t, m: t.flip(m, 0), M),
    "flip_repeated": (lambda t, m: m.flip(0, -2), M),
    "flip_0d_dim_1": (lambda t, s: s.flip(1), S),
    "fliplr_1d": (lambda t, a: t.fliplr(a), A),
    "flipud_0d": (lambda t, s: t.flipud(s), S),
    "rot90_one_dim": (lambda t, m: t.rot90(m, 1, [0]), M),
    "rot90_same_dims": (lambda t, m: t.rot90(m, 1, [1, 1]), M),
    "rot90_1d": (lambda t, a: t.rot90(a), A),
    "rot90_range": (lambda t, m: t.rot90(m, 1, [0, 5]), M),
    "repeat_interleave_negative": (lambda t, m: t.repeat_interleave(m, -1), M),
    "repeat_interleave_negative_count": (lambda t, m, r: m.repeat_interleave(r, 0), M,
                                         I([1, -1])),
    "repeat_interleave_size": (lambda t, m, r: m.repeat_interleave(r, 0), M, I([1, 2, 3])),
    "repeat_interleave_2d": (lambda t, m, r: m.repeat_interleave(r, 0), M, I([[1, 2]])),
    "repeat_interleave_float": (lambda t, m, r: m.repeat_interleave(r, 0), M, I([1.0, 2.0])),
    "repeat_interleave_output_size": (lambda t, m, r: m.repeat_interleave(r, 0, output_size=4),
                                      M, I([1, 2])),
    "narrow_tensor_start_1d": (lambda t, m, s: m.narrow(1, s, 2), M, I([1])),
    "narrow_float_start": (lambda t, m, s: m.narrow(1, s, 2), M, I(1.0)),
    "narrow_past_end": (lambda t, m: t.narrow(m, 1, 2, 2), M),
    "narrow_start_range": (lambda t, m: t.narrow(m, 1, 4, 0), M),
    "diag_0d": (lambda t, s: t.diag(s), S),
    "diag_3d": (lambda t, c: t.diag(c), C),
    "diagonal_same_dims": (lambda t, c: t.diagonal(c, 0, 2, 2), C),
    "diagonal_1d": (lambda t, a: t.diagonal(a), A),
    "diag_embed_same_dims": (lambda t, m: t.diag_embed(m, 0, 0, 0), M),
    "diag_embed_0d": (lambda t, s: t.diag_embed(s), S),
    "trace_1d": (lambda t, a: t.trace(a), A),
    "trace_bool": (lambda t, m: t.trace(m), np.ones((2, 2), bool)),
    "movedim_repeated": (lambda t, c: t.movedim(c, (0, 0), (1, 2)), C),
    "movedim_lengths": (lambda t, c: t.movedim(c, (0, 1), (1,)), C),
    "unbind_dim": (lambda t, c: t.unbind(c, 3), C),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_like_torch(name):
    function, *arrays = ERROR_CASES[name]
    same_as_torch(function, *arrays, grad=False)


def test_meshgrid_without_indexing_warns_as_torch():
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        autojit.meshgrid(autojit.ones(2), autojit.ones(3))


def test_meshgrid_of_a_2d_tensor_raises_as_torch():
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        autojit.meshgrid(autojit.ones(2, 2), indexing="ij")


def test_diagonal_is_a_view_written_through_as_torch():
    """A write through the diagonal is seen in the base, and gradients reach both."""
    results = []
    for framework in (torch, autojit):
        weight = framework.tensor(M, requires_grad=True)
        base = weight * 2
        view = base.diagonal(1)
        view.mul_(3)
        (base.sin().sum()).backward()
        results.append((base.detach().numpy(), weight.grad.numpy(), view._base is base))
    for mine, theirs in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def _repeated(lib, x, repeats):
    return (lib.repeat_interleave(x, repeats, dim=0) * 2, x.repeat_interleave(repeats[:1]),
            lib.repeat_interleave(repeats), x.reshape(-1)[:3].repeat_interleave(repeats))


def test_tensor_repeats_compile_with_the_calls_counts_int_repeats_compile():
    """While tracing, a tensor of repeats gives its total (and a one-element tensor its count)
    from this call, checked on every run (a split of the graph): compiled equals eager equals
    torch with no graph break; other counts are another trace; negative counts raise."""
    compiled = autojit.compile(lambda x, r: _repeated(autojit, x, r))
    matrix = np.arange(6.0).reshape(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        for counts in ([1, 0, 2], [2, 2, 2], [0, 0, 1], [1, 0, 2]):
            expected = _repeated(torch, torch.tensor(matrix), torch.tensor(counts))
            eager = _repeated(autojit, autojit.tensor(matrix), autojit.tensor(counts))
            got = compiled(autojit.tensor(matrix), autojit.tensor(counts))
            for mine, mine_eager, theirs in zip(got, eager, expected, strict=True):
                np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
                np.testing.assert_array_equal(mine_eager.numpy(), theirs.numpy())
                assert mine.dtype == mine_eager.dtype
    assert len(compiled.executables) == 3
    with pytest.raises(RuntimeError, match="repeats can not be negative"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", autojit.CompileWarning)
        compiled(autojit.tensor(matrix), autojit.tensor([1, -1, 2]))
    m = autojit.tensor(M)
    spread = autojit.compile(lambda x: x.repeat_interleave(3, dim=1).roll(1, 0).rot90(),
                             fullgraph=True)
    np.testing.assert_array_equal(spread(m).numpy(),
                                  np.rot90(np.roll(np.repeat(M, 3, axis=1), 1, 0)))


OUT_CASES = {
    "hstack": (lambda t, a, o: t.hstack([a, a], out=o), A, np.zeros(6)),
    "vstack_wider_dtype": (lambda t, m, o: t.vstack([m, m], out=o), M.astype(np.float32),
                           np.zeros((4, 3))),
    "row_stack": (lambda t, a, o: t.row_stack([a, a], out=o), A, np.zeros(0)),
    "dstack": (lambda t, m, o: t.dstack([m], out=o), M, np.zeros((2, 3, 1))),
    "column_stack": (lambda t, a, o: t.column_stack([a, a], out=o), A, np.zeros((3, 2))),
    "diag": (lambda t, a, o: t.diag(a, 1, out=o), A, np.zeros((4, 4))),
    "hstack_narrower_dtype": (lambda t, a, o: t.hstack([a], out=o), A, np.zeros(3, np.int64)),
    "diag_dtype": (lambda t, a, o: t.diag(a, out=o.float()), A, np.zeros((3, 3))),
}


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_out_argument_like_torch(name):
    function, *arrays = OUT_CASES[name]

    def returning_out(t, *tensors):
        result = function(t, *tensors)
        assert result is tensors[-1]
        return result

    same_as_torch(returning_out, *arrays, grad=False)


def test_flip_copies_and_compiles_for_every_size():
    """torch's flip is a copy (NumPy's is a view); and a dynamic trace serves new sizes."""
    x = autojit.arange(6.0).reshape(2, 3)
    flipped = x.flip(())
    flipped.add_(1)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    compiled = autojit.compile(lambda t: t.flip(0).rot90() * 2, fullgraph=True)
    for rows in (3, 5, 7):
        t = autojit.arange(rows * 2.0).reshape(rows, 2)
        np.testing.assert_array_equal(compiled(t).numpy(), np.rot90(np.flip(t.numpy(), 0)) * 2)


def test_cat_skips_1d_empty_tensors_but_promotes_over_their_dtypes():
    results = []
    for library in (autojit, torch):
        ints, empty = library.tensor([1, 2]), library.zeros(0)
        joined = [library.cat([ints, empty]), library.cat([empty, ints]),
                  library.cat([ints.reshape(1, 2), empty]),
                  library.cat([library.tensor([1.0], dtype=library.float16),
                               library.zeros(0, dtype=library.float64)]),
                  library.cat([library.tensor([True]), library.zeros(0, dtype=library.uint8)])]
        results.append([(str(t.dtype).split(".")[-1], t.tolist()) for t in joined])
    assert results[0] == results[1]


def test_the_tile_method_takes_counts_as_separate_ints_and_the_function_does_not():
    for counts in ((2,), (2, 3), ((2, 3),), ([2],)):
        mine = autojit.arange(6.0).reshape(2, 3).tile(*counts)
        theirs = torch.arange(6.0).reshape(2, 3).tile(*counts)
        assert mine.tolist() == theirs.tolist(), counts
    for library in (autojit, torch):
        with pytest.raises(TypeError, match=r"tile\(\): argument 'dims' \(position 2\) must be "
                                            r"tuple of ints, not int"):
            library.tile(library.ones(3), 2)
