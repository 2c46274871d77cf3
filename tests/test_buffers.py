"""Buffer planning (codegen/schedule/buffers.py): values whose lifetimes do not overlap share
memory, and no value's memory is taken over while it, or a view of it, is still to be read.
"""

from __future__ import annotations

import numpy as np

import autojit
from autojit.codegen.schedule.buffers import BufferSlot, StepBuffers, plan_buffers
from autojit.ir.graph import Value


def compiled_and_eager(fn, *arrays, calls=3):
    """fn compiled and eager on the same inputs, several calls (kept buffers are reused from
    the second call on), compared; returns the compiled function."""
    compiled = autojit.compile(fn)
    for call in range(calls):
        inputs = [autojit.tensor(array * (call + 1)) for array in arrays]
        want = fn(*inputs)
        got = compiled(*inputs)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for expected, actual in zip(want, got, strict=True):
            np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-4, atol=1e-4)
    return compiled


class Holder:
    def __init__(self, count=1):
        self.slots = [None] * count
        self.reusable = [False] * count


def value(*shape):
    return Value(0, shape, autojit.float32)


def test_values_alive_at_different_times_share_a_slot():
    a, b, c = value(8, 8), value(8, 8), value(8, 8)
    holders = [Holder() for _ in range(3)]
    # a -> b -> c, each read only by the next step: a is free once b is made.
    steps = [StepBuffers([(holders[0], 0, a)], []), StepBuffers([(holders[1], 0, b)], [a]),
             StepBuffers([(holders[2], 0, c)], [b])]
    slots = plan_buffers(steps + [StepBuffers([], [c])], set(), set())
    assert holders[0].slots[0] is holders[2].slots[0]  # a's memory serves c
    assert holders[1].slots[0] is not holders[0].slots[0]  # b is made while a is read
    assert len(slots) == 2 and all(holder.reusable == [True] for holder in holders)


def test_a_view_keeps_its_source_alive():
    a, view, b = value(8, 8), value(64), value(8, 8)
    first, second = Holder(), Holder()
    steps = [StepBuffers([(first, 0, a)], []),
             StepBuffers([], [a], [(view, [a])]),  # a reshape: a view of a
             StepBuffers([(second, 0, b)], []),
             StepBuffers([], [view, b])]
    plan_buffers(steps, set(), set())
    assert first.slots[0] is not second.slots[0]


def test_escaping_and_returned_values():
    a, b, c = value(4), value(4), value(4)
    holders = [Holder() for _ in range(3)]
    steps = [StepBuffers([(holders[0], 0, a)], []), StepBuffers([(holders[1], 0, b)], [a]),
             StepBuffers([(holders[2], 0, c)], [b])]
    plan_buffers(steps, escaping={id(c)}, returned={id(a), id(c)})
    assert holders[2].reusable == [False] and holders[2].slots == [None]
    # a is returned (an update or grad output, copied out after the run): alive to the end.
    assert holders[1].slots[0] is not holders[0].slots[0]


def test_a_slot_takes_the_largest_size_planned_for_it():
    slot = BufferSlot()
    slot.nbytes = 4 * 12
    small = slot.take((3,), np.float32)
    large = slot.take((3, 4), np.float32)
    assert np.shares_memory(small, large) and large.ctypes.data % 64 == 0
    assert not np.shares_memory(slot.take((13,), np.float32), large)  # beyond the plan


def test_a_long_lived_value_is_not_overwritten_by_later_kernels():
    generator = np.random.default_rng(0)
    x, w = generator.standard_normal((32, 16)) * 0.3, generator.standard_normal((16, 16)) * 0.3

    def fn(x, w):
        early = (x * 2).exp()
        h = early
        for _ in range(4):  # several values the size of `early`, made while it waits
            h = (h @ w).tanh()
        return (h + early).sum(), h

    compiled = compiled_and_eager(fn, x.astype(np.float32), w.astype(np.float32))
    assert any(slot.values > 1 for slot in compiled.executables[0].plan.buffer_slots)


def test_a_view_read_late_keeps_its_kernels_buffer():
    generator = np.random.default_rng(1)

    def fn(x):
        early = x * 2
        every_other = early[::2]  # a view of the kernel's buffer, made by a single node
        later = (x + 1).exp() * 3  # same shape as `early`: would take its memory
        return every_other.sum() + later[1::2].sum()

    compiled_and_eager(fn, generator.standard_normal((16, 8)).astype(np.float32))


def test_a_kernel_stores_over_a_value_it_reads_for_the_last_time():
    a, b = value(8, 8), value(8, 8)
    holders = [Holder(), Holder()]
    steps = [StepBuffers([(holders[0], 0, a)], []),
             StepBuffers([(holders[1], 0, b)], [a], donors=[(0, a)]),
             StepBuffers([], [b])]
    slots = plan_buffers(steps, set(), set())
    assert holders[1].slots[0] is holders[0].slots[0] and len(slots) == 1


def test_no_value_is_stored_over_while_it_or_a_view_of_it_is_still_read():
    a, view, b = value(8, 8), value(64), value(8, 8)
    # Read again by a later step.
    holders = [Holder(), Holder()]
    steps = [StepBuffers([(holders[0], 0, a)], []),
             StepBuffers([(holders[1], 0, b)], [a], donors=[(0, a)]),
             StepBuffers([], [a, b])]
    plan_buffers(steps, set(), set())
    assert holders[1].slots[0] is not holders[0].slots[0]
    # Read through a view by the same step, at other points than the ones it stores.
    holders = [Holder(), Holder()]
    steps = [StepBuffers([(holders[0], 0, a)], []),
             StepBuffers([], [a], [(view, [a])]),
             StepBuffers([(holders[1], 0, b)], [a, view], donors=[(0, a)]),
             StepBuffers([], [b])]
    plan_buffers(steps, set(), set())
    assert holders[1].slots[0] is not holders[0].slots[0]


def _product_and_kernel_slots(compiled):
    from autojit.codegen.schedule.matmul_steps import MatmulStep
    from autojit.codegen.schedule.steps import KernelStep

    steps = compiled.executables[0].plan.steps
    products = [step for step in steps if isinstance(step, MatmulStep)]
    kernels = [step for step in steps if isinstance(step, KernelStep)]
    return products, kernels


def test_a_bias_and_relu_store_over_the_products_result():
    generator = np.random.default_rng(2)
    x, w, b, w2 = (generator.standard_normal(shape).astype(np.float32)
                   for shape in ((32, 24), (24, 40), (40,), (40, 8)))

    def fn(x, w, b, w2):
        h = (x @ w + b).relu()
        return h @ w2

    compiled = compiled_and_eager(fn, x, w, b, w2)
    products, kernels = _product_and_kernel_slots(compiled)
    (kernel,) = kernels
    assert kernel.slots[0] is products[0].slots[0]


def test_a_kernel_reading_its_input_at_other_points_stores_elsewhere():
    generator = np.random.default_rng(3)
    a, b, c = (generator.standard_normal((24, 24)).astype(np.float32) for _ in range(3))

    def fn(a, b, c):
        m = a @ b
        return (m + m.T * 2) @ c  # reads m[j, i] after the point [i, j] is stored

    compiled = compiled_and_eager(fn, a, b, c)
    products, kernels = _product_and_kernel_slots(compiled)
    (kernel,) = kernels
    assert kernel.slots[0] is not products[0].slots[0]


def test_a_wider_result_is_not_stored_over_a_narrower_input():
    generator = np.random.default_rng(4)
    a, b = (generator.standard_normal((24, 24)).astype(np.float32) for _ in range(2))
    c = generator.standard_normal((24, 24))

    def fn(a, b, c):
        m = a @ b
        # float64 points stored over float32 ones would overwrite m[2i + 1] before it is read
        return (m.double() * 2 + 1) @ c

    compiled = compiled_and_eager(fn, a, b, c)
    products, kernels = _product_and_kernel_slots(compiled)
    (kernel,) = kernels
    assert kernel.slots[0] is not products[0].slots[0]


def test_a_select_branch_is_not_stored_over_an_input_another_output_reads():
    """z = where(mask, 2q, 0) depends on q only where the mask holds: a compiler that knows the
    (broadcast) mask may store z's zeros before y's loads of q, so z is not stored over q; y,
    computed from q everywhere, is."""
    generator = np.random.default_rng(5)
    a, b, c = (generator.standard_normal((2, 8, 8)) for _ in range(3))
    v = np.array([1.0, -1.0])

    def fn(a, b, c, v):
        q = a @ b
        z = autojit.where((v > 0).reshape(2, 1, 1), q * 2, 0.0)
        y = q * 3
        return z @ c + y @ c

    compiled = compiled_and_eager(fn, a, b, c, v)
    products, kernels = _product_and_kernel_slots(compiled)
    (kernel,) = [k for k in kernels if len(k.outputs) == 2]
    z_slot, y_slot = kernel.slots
    assert z_slot is not products[0].slots[0] and y_slot is products[0].slots[0]


def _alive_together(steps, holders_and_values):
    """Pairs of (holder, value) whose values are both alive at some step: made at or before
    it and read at or after it."""
    made, last = {}, {}
    for index, step in enumerate(steps):
        for _, _, value in step.outputs:
            made[id(value)] = index
        for value in step.reads:
            last[id(value)] = index
    pairs = []
    for number, (first, a) in enumerate(holders_and_values):
        for second, b in holders_and_values[number + 1:]:
            lo = max(made[id(a)], made[id(b)])
            hi = min(last.get(id(a), made[id(a)]), last.get(id(b), made[id(b)]))
            if lo <= hi:
                pairs.append((first, second))
    return pairs


def test_a_large_plan_packs_its_values_into_one_arena(monkeypatch):
    # Slots taken in turn by values of every size grow to the largest: here two slots of
    # 4000 bytes for at most 4400 alive at once. Packed by offsets, the small values sit
    # beside the large ones.
    from autojit.codegen.schedule import buffers

    monkeypatch.setattr(buffers, "PACKED_FROM", 0)
    a, b, c, d = value(1000), value(100), value(100), value(1000)

    def chain():  # each value read once, by the step making the next
        holders = [Holder() for _ in range(4)]
        steps = [StepBuffers([(holder, 0, made)], [read] if read is not None else [])
                 for holder, made, read in zip(holders, (a, b, c, d), (None, a, b, c))]
        return holders, steps + [StepBuffers([], [d])]

    holders, steps = chain()
    slots = plan_buffers(steps, set(), set())
    (arena,) = {id(slot.arena): slot.arena for slot in slots}.values()
    assert arena.nbytes < 0.9 * 8000
    arrays = [holder.slots[0].take(v.shape, np.float32)
              for holder, v in zip(holders, (a, b, c, d))]
    assert np.shares_memory(arrays[0], arrays[3])  # a's memory serves d
    for first, second in _alive_together(steps, list(zip(range(4), (a, b, c, d)))):
        assert not np.shares_memory(arrays[first], arrays[second])
    # Without the arena the same steps take two slots of 4000 bytes.
    monkeypatch.setattr(buffers, "PACKED_FROM", 1 << 60)
    _, steps = chain()
    assert sum(slot.nbytes for slot in plan_buffers(steps, set(), set())) == 8000


def test_packed_values_alive_together_never_share_memory(monkeypatch):
    from autojit.codegen.schedule import buffers

    monkeypatch.setattr(buffers, "PACKED_FROM", 0)
    monkeypatch.setattr(buffers, "PACKED_SHARE", 1.0)
    generator = np.random.default_rng(6)
    for _ in range(20):
        values, holders, steps = [], [], []
        for _ in range(30):
            reads = [values[k] for k in generator.choice(len(values), size=min(
                len(values), int(generator.integers(0, 3))), replace=False)] if values else []
            new = value(int(generator.integers(1, 400)))
            holder = Holder()
            donors = [(0, reads[0])] if reads and generator.random() < 0.3 else []
            steps.append(StepBuffers([(holder, 0, new)], reads, donors=donors))
            values.append(new)
            holders.append(holder)
        plan_buffers(steps, set(), set())
        arrays = [holder.slots[0].take(v.shape, np.float32) for holder, v in zip(holders, values)]
        donated = {(steps.index(step), id(step.donors[0][1])) for step in steps if step.donors}
        for first, second in _alive_together(steps, list(enumerate(values))):
            if (second, id(values[first])) in donated:
                continue  # stored over the value it reads for the last time, by design
            assert not np.shares_memory(arrays[first], arrays[second]), (first, second)


def test_packed_plans_compute_what_eager_does(monkeypatch):
    from autojit.codegen.schedule import buffers

    monkeypatch.setattr(buffers, "PACKED_FROM", 0)
    monkeypatch.setattr(buffers, "PACKED_SHARE", 1.0)
    generator = np.random.default_rng(7)
    x, w = generator.standard_normal((32, 16)) * 0.3, generator.standard_normal((16, 16)) * 0.3

    def fn(x, w):
        early = (x * 2).exp()
        h = early
        for _ in range(4):
            h = (h @ w).tanh()
        return (h + early).sum(), h, early[::2].sum()

    compiled = compiled_and_eager(fn, x.astype(np.float32), w.astype(np.float32))
    assert compiled.executables[0].plan.buffer_slots[0].arena is not None

    model = autojit.nn.Sequential(autojit.nn.Linear(8, 32), autojit.nn.Tanh(),
                                  autojit.nn.Linear(32, 32), autojit.nn.ReLU(),
                                  autojit.nn.Linear(32, 4))
    state = {name: tensor.clone() for name, tensor in model.state_dict().items()}

    def make(net):
        optimizer = autojit.optim.Adam(net.parameters(), lr=1e-2)

        def step(x, y):
            optimizer.zero_grad()
            loss = ((net(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()
        return step

    eager = make(model)
    data = [(autojit.tensor(generator.standard_normal((16, 8)).astype(np.float32)),
             autojit.tensor(generator.standard_normal((16, 4)).astype(np.float32)))
            for _ in range(4)]
    losses = [float(eager(x, y)) for x, y in data]
    eager_weights = [p.detach().clone() for p in model.parameters()]
    model.load_state_dict(state)
    compiled_step = autojit.compile(make(model))
    compiled_losses = [float(compiled_step(x, y)) for x, y in data]
    np.testing.assert_allclose(compiled_losses, losses, rtol=1e-5)
    for mine, theirs in zip(model.parameters(), eager_weights):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.numpy(), rtol=1e-4, atol=1e-6)
    assert compiled_step.executables[-1].plan.buffer_slots[0].arena is not None
