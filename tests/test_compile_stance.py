"""torch.compiler.set_stance and torch._dynamo's marks on tensors (compiler/control.py,
compiler/dynamic_shapes.py): a stance runs compiled functions eagerly, refuses or skips a
recompile, as a call, a context manager and a decorator, each restoring the stance it found;
`mark_dynamic` gives a dimension a symbol from the first trace, `mark_static` keeps one
constant, and the other marks are recorded as torch records them."""

from __future__ import annotations

import pytest

import autojit
import autojit._dynamo as dynamo
from autojit.compiler import api


@pytest.fixture(autouse=True)
def _default_stance():
    yield
    api.STANCE[0] = "default"


def _compiled():
    @autojit.compile
    def f(x):
        return (x * 2).sum()

    return f


def test_force_eager_as_a_context_runs_eagerly_then_compiles():
    f = _compiled()
    with autojit.compiler.set_stance("force_eager"):
        assert float(f(autojit.ones(4))) == 8.0
    assert f.stats().eager_calls == 1 and f.stats().traces == 0
    assert float(f(autojit.ones(4))) == 8.0 and f.stats().traces == 1


def test_fail_on_recompile_allows_the_first_compile_and_refuses_the_next():
    f = _compiled()
    autojit.compiler.set_stance("fail_on_recompile")  # a plain call: from now on
    assert float(f(autojit.ones(4))) == 8.0
    assert float(f(autojit.ones(4))) == 8.0  # served by the executable: no recompile
    with pytest.raises(RuntimeError, match="Detected recompile when torch.compile stance is "
                                           "'fail_on_recompile'"):
        f(autojit.ones(5, 3))


def test_eager_on_recompile_as_a_decorator_and_eager_then_compile():
    f = _compiled()
    f(autojit.ones(4))

    @autojit.compiler.set_stance("eager_on_recompile")
    def call(x):
        return f(x)

    assert api.STANCE[0] == "default"  # a decorator sets the stance inside its calls only
    assert float(call(autojit.ones(7, 2))) == 28.0
    assert f.stats().traces == 1 and f.stats().eager_calls == 1
    g = _compiled()
    with autojit.compiler.set_stance("eager_then_compile"):
        g(autojit.ones(3))
        assert g.stats().traces == 0
        g(autojit.ones(3))
        assert g.stats().traces == 1


def test_a_stance_is_checked_and_refused_inside_a_trace():
    with pytest.raises(RuntimeError, match="invalid torch.compile stance 'sometimes'"):
        autojit.compiler.set_stance("sometimes")

    @autojit.compile(fullgraph=False)
    def inside(x):
        autojit.compiler.set_stance("force_eager")
        return x + 1

    # The trace refuses it, as torch's; the call then runs eagerly, as a failed trace does.
    with pytest.warns(autojit.CompileWarning, match="forbidden callable set_stance"):
        inside(autojit.ones(2))
    assert autojit._dynamo.set_stance is autojit.compiler.set_stance


def test_mark_dynamic_traces_one_symbolic_size_from_the_first_call():
    h = autojit.compile(lambda x: x.sum(0))
    first = autojit.ones(6, 2)
    dynamo.mark_dynamic(first, 0)
    assert first._dynamo_dynamic_indices == {0}
    for rows in (6, 9, 3):
        assert h(first if rows == 6 else autojit.ones(rows, 2)).tolist() == [rows, rows]
    assert h.stats().traces == 1


def test_mark_static_keeps_a_dimension_constant():
    k = autojit.compile(lambda x: x.sum(0))
    for rows in (6, 7, 8):
        x = autojit.ones(rows, 2)
        dynamo.mark_static(x, 0)
        assert k(x).tolist() == [rows, rows]
    assert k.stats().traces == 3  # each size traced again, as the mark asks
    y = autojit.ones(2, 2)
    dynamo.maybe_mark_dynamic(y, [0, 1])
    dynamo.mark_static_address(y, guard=True)
    assert y._dynamo_weak_dynamic_indices == {0, 1}
    assert y._dynamo_static_input_type == "guarded"
