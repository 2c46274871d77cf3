"""An error the user's code raises in a compiled step reaches the user as eager's: one
traceback (no "During handling of the above exception" with the compiler's own), torch's
message with concrete sizes, the user's lines, and a few of autojit's frames: on the
state-making first call of an Adam step, and on a call that traces again after the sizes
changed (a symbolic batch size)."""

import traceback

import pytest

import autojit

torch = pytest.importorskip("torch")


def _step(lib):
    model = lib.nn.Linear(64, 128)
    optimizer = lib.optim.Adam(model.parameters())

    def step(x):
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        return loss

    return step


def _raised(call):
    with pytest.raises(RuntimeError) as caught:
        call()
    return caught.value


def _frames(error) -> list:
    return [frame.filename for frame in traceback.extract_tb(error.__traceback__)]


@pytest.mark.parametrize("when", ["first call", "after a retrace"])
def test_one_traceback_with_torchs_message_and_the_users_lines(when):
    compiled = autojit.compile(_step(autojit))
    if when == "after a retrace":
        for rows in (50, 40, 30):  # a batch size that varies: traced with a symbolic size
            compiled(autojit.randn(rows, 64))
    ours = _raised(lambda: compiled(autojit.randn(50, 63)))
    theirs = _raised(lambda: _step(torch)(torch.randn(50, 63)))
    assert str(ours) == str(theirs) == \
        "mat1 and mat2 shapes cannot be multiplied (50x63 and 64x128)"
    assert ours.__cause__ is None and (ours.__context__ is None or ours.__suppress_context__)
    frames = _frames(ours)
    assert any(name == __file__ for name in frames)  # the user's line
    inside = [name for name in frames if "autojit" in name and name != __file__]
    torch_inside = [name for name in _frames(theirs) if "torch" in name]
    assert len(inside) <= len(torch_inside) + 5, (inside, torch_inside)
