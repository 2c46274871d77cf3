"""The float8 dtypes against torch: conversions of every kind of value to each format, finfo,
promotion's error, which ops compute in them and which raise torch's NotImplementedError, and
compiled code running them eagerly (tensor/float8.py, docs/notes/float8.md)."""

import numpy as np
import pytest

import autojit as aj

torch = pytest.importorskip("torch")

NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]


def _values():
    rng = np.random.default_rng(0)
    scales = 10.0 ** rng.integers(-12, 8, 4000)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 448, 449, 464, 465, 240, 247, 248, 57344,
               61439, 61440, 1.5, 0.75, 3.0, 1e-40, -1e-12]
    return np.concatenate([rng.standard_normal(4000) * scales, special]).astype(np.float32)


def _same(got, want):
    return np.all((got == want) & (np.signbit(got) == np.signbit(want))
                  | (np.isnan(got) & np.isnan(want)))


@pytest.mark.parametrize("name", NAMES)
def test_conversions_round_as_torchs(name):
    values = _values()
    want = torch.from_numpy(values).to(getattr(torch, name)).float().numpy()
    got = aj.from_numpy(values).to(getattr(aj, name))
    assert got.dtype is getattr(aj, name) and got.element_size() == 1
    assert _same(got.float().numpy(), want)
    # Made directly, from float64 data and through a fill, as torch's factories make them.
    direct = aj.tensor(values.astype(np.float64).tolist(), dtype=getattr(aj, name))
    assert _same(direct.float().numpy(), want)
    assert _same(aj.full((1,), 1e6, dtype=getattr(aj, name)).float().numpy(),
                 torch.full((1,), 1e6, dtype=getattr(torch, name)).float().numpy())


@pytest.mark.parametrize("name", NAMES)
def test_finfo_and_dtype_facts(name):
    ours, theirs = aj.finfo(getattr(aj, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field), field
    for fact in ("itemsize", "is_floating_point", "is_signed", "is_complex"):
        assert getattr(getattr(aj, name), fact) == getattr(getattr(torch, name), fact), fact
    assert str(getattr(aj, name)) == str(getattr(torch, name)).replace("torch", "autojit")


def _outcome(lib, program):
    try:
        result = program(lib, lib.tensor([1.0, 2.3, -0.4]).to(lib.float8_e4m3fn))
    except Exception as error:  # noqa: BLE001 - the error is the outcome compared
        return type(error).__name__, str(error).replace("torch", "autojit")
    if isinstance(result, (lib.Tensor, lib.Size)) or not hasattr(result, "dtype"):
        if hasattr(result, "float") and hasattr(result, "dtype"):
            return str(result.dtype).split(".")[-1], result.float().tolist()
        return result
    return result


PROGRAMS = {
    "add": lambda lib, a: a + a,
    "neg": lambda lib, a: -a,
    "sum": lambda lib, a: a.sum(),
    "gt": lambda lib, a: a > 0.5,
    "max": lambda lib, a: a.max(),
    "nonzero": lambda lib, a: a.nonzero(),
    "mean": lambda lib, a: a.mean(),
    "clamp": lambda lib, a: a.clamp(0, 1),
    "promote": lambda lib, a: a + lib.ones(3),
    "randn": lambda lib, a: lib.randn(2, dtype=lib.float8_e5m2),
    "numpy": lambda lib, a: a.numpy(),
    "abs": lambda lib, a: a.abs(),
    "cat": lambda lib, a: lib.cat([a, a]),
    "stack_index": lambda lib, a: lib.stack([a, a])[1, 1:],
    "index_select": lambda lib, a: a.index_select(0, lib.tensor([2, 0])),
    "eq": lambda lib, a: a == a,
    "ne_scalar": lambda lib, a: a != 1.0,
    "isnan": lambda lib, a: a.isnan(),
    "to_e5m2": lambda lib, a: lib.tensor([3.3]).to(lib.float8_e4m3fn).to(lib.float8_e5m2),
    "copy_": lambda lib, a: a.clone().copy_(lib.tensor([1.1, 2.2, 3.3])),
    "setitem": lambda lib, a: (lambda b: (b.__setitem__(0, 5.3), b)[1])(a.clone()),
    "fill_": lambda lib, a: a.clone().fill_(3.7),
    "zeros_like": lambda lib, a: lib.zeros_like(a),
    "t_contiguous": lambda lib, a: lib.stack([a, a]).t().contiguous(),
    "result_type": lambda lib, a: str(lib.result_type(a, 1.0)).split(".")[-1],
    "to_complex": lambda lib, a: a.dtype.to_complex(),
    "item": lambda lib, a: a[1].item(),
}


@pytest.mark.parametrize("program", PROGRAMS)
def test_ops_compute_or_raise_as_torchs(program):
    ours, theirs = _outcome(aj, PROGRAMS[program]), _outcome(torch, PROGRAMS[program])
    if isinstance(theirs, tuple) and theirs[0] == "NotImplementedError":
        # torch names its kernels differently from op to op ("mul_cpu_reduced_float"): the
        # error type and the dtype's name are what is compared.
        assert ours[0] == "NotImplementedError", ours
        assert ours[1].split("not implemented")[1] == theirs[1].split("not implemented")[1]
    else:
        assert ours == theirs


def test_compiled_code_runs_float8_ops_eagerly():
    def step(x):
        return x.to(aj.float8_e4m3fn).float() * 2

    compiled = aj.compile(step)
    x = aj.tensor([0.1, 1.0, 500.0])
    with pytest.warns(aj.CompileWarning, match="float8"):
        got = compiled(x)
    assert got.tolist() == step(x).tolist() == [0.203125, 2.0, 896.0]
