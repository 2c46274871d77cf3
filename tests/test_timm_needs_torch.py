"""What timm's own test suite found missing or different in autojit, each against real torch:
torch's `_foreach_*` multi-tensor functions (timm's EMA and optimizers; maximum and minimum of
numbers too), `Module._apply` recursing through each child's own `_apply` (timm's modules
override it to drop caches on `.to()` / `to_empty()`), `Module._replicate_for_data_parallel`,
and BatchNorm's `num_batches_tracked` made on the device asked for (timm builds models on
`meta`)."""

from __future__ import annotations

import numpy as np
import pytest

import autojit as aj

torch = pytest.importorskip("torch")


def _lists(lib, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(2, 3), (4,), ()]
    return [[lib.tensor(rng.uniform(0.5, 2.0, shape)) for shape in shapes] for _ in range(3)]


def _same(ours, theirs):
    assert type(ours) is type(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype.__repr__().split(".")[-1] == repr(b.dtype).split(".")[-1]
        np.testing.assert_allclose(np.asarray(a.tolist()), np.asarray(b.tolist()), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda t, x, y, z: t._foreach_add(x, y, alpha=2.0),
    lambda t, x, y, z: t._foreach_add(x, 1.5),
    lambda t, x, y, z: t._foreach_sub(x, [1.0, 2.0, 3.0]),
    lambda t, x, y, z: t._foreach_mul(x, t.tensor(3.0, dtype=t.float64)),
    lambda t, x, y, z: t._foreach_div(x, y),
    lambda t, x, y, z: t._foreach_maximum(x, y),
    # a number or a list of them, which Tensor.maximum does not take
    lambda t, x, y, z: t._foreach_maximum(x, 1.2),
    lambda t, x, y, z: t._foreach_minimum(x, [1.0, 2.0, 1]),
    lambda t, x, y, z: t._foreach_maximum([t.tensor([1, 2, 3])], 2.5),
    lambda t, x, y, z: t._foreach_clamp_min(x, 1.0),
    lambda t, x, y, z: t._foreach_pow(x, 2.0),
    lambda t, x, y, z: t._foreach_pow(2.0, x),
    lambda t, x, y, z: t._foreach_sqrt(x),
    lambda t, x, y, z: t._foreach_neg(x),
    lambda t, x, y, z: t._foreach_addcmul(x, y, z, 0.5),
    lambda t, x, y, z: t._foreach_addcdiv(x, y, z, [0.5, 1.0, 2.0]),
    lambda t, x, y, z: t._foreach_addcdiv(x, y, z, t.tensor([0.5, 1.0, 2.0])),
    lambda t, x, y, z: t._foreach_lerp(x, y, 0.25),
    lambda t, x, y, z: t._foreach_lerp(x, y, z),
    lambda t, x, y, z: t._foreach_norm(x),
    lambda t, x, y, z: t._foreach_norm(x, ord=float("inf")),
    lambda t, x, y, z: t._foreach_max(x),
    lambda t, x, y, z: t._foreach_clone(x),
    # torch's overloads' names for the second operand, by keyword (timm's EMA: scalar=)
    lambda t, x, y, z: t._foreach_mul(x, scalar=2.0),
    lambda t, x, y, z: t._foreach_mul(x, scalars=[1.0, 2.0, 3.0]),
    lambda t, x, y, z: t._foreach_add(x, other=y, alpha=0.5),
    lambda t, x, y, z: t._foreach_addcmul(x, y, z, scalars=[0.5, 1.0, 2.0]),
    lambda t, x, y, z: t._foreach_addcdiv(x, y, z, value=3.0),
    lambda t, x, y, z: t._foreach_lerp(x, y, weight=0.3),
    lambda t, x, y, z: t._foreach_pow(x, exponent=[1.0, 2.0, 3.0]),
])
def test_foreach_out_of_place_matches_torch(call):
    _same(call(aj, *_lists(aj)), call(torch, *_lists(torch)))


def test_foreach_maximum_of_numbers_has_torchs_gradient():
    grads = []
    for lib in (aj, torch):
        x = lib.tensor([-1.0, 0.5, 2.0, float("nan")], requires_grad=True)
        lib._foreach_maximum([x], [0.5])[0].sum().backward()
        lib._foreach_minimum([x], 1)[0].sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


@pytest.mark.parametrize("name, extra", [
    ("_foreach_mul_", (0.9,)), ("_foreach_add_", ("y",)), ("_foreach_lerp_", ("y", 0.1)),
    ("_foreach_addcmul_", ("y", "z")), ("_foreach_sqrt_", ()), ("_foreach_zero_", ()),
    ("_foreach_copy_", ("y",)), ("_foreach_maximum_", (1.2,)), ("_foreach_div_", ([2.0] * 3,)),
])
def test_foreach_in_place_matches_torch(name, extra):
    results = []
    for lib in (aj, torch):
        x, y, z = _lists(lib)
        args = [{"y": y, "z": z}.get(arg, arg) if isinstance(arg, str) else arg for arg in extra]
        kept = list(x)
        returned = getattr(lib, name)(x, *args)
        assert returned is x and all(a is b for a, b in zip(x, kept))
        results.append(x)
    _same(*results)


def test_foreach_gradient_matches_torch():
    grads = []
    for lib in (aj, torch):
        x, y, _ = _lists(lib)
        for tensor in x:
            tensor.requires_grad_(True)
        out = lib._foreach_addcmul(lib._foreach_mul(x, 3.0), x, y, 0.5)
        sum(o.sum() for o in out).backward()
        grads.append([tensor.grad for tensor in x])
    _same(*grads)


@pytest.mark.parametrize("call", [
    lambda t: t._foreach_add([t.ones(2), t.ones(3)], [t.ones(2)]),
    lambda t: t._foreach_add([], 1.0),
    lambda t: t._foreach_mul([t.ones(2), t.ones(3)], [1.0]),
    lambda t: t._foreach_add([t.ones(2)], 1.0, alpha=2),
    lambda t: t._foreach_add([t.ones(2)], t.ones(2)),
])
def test_foreach_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(aj)
    if isinstance(theirs.value, RuntimeError):
        assert str(ours.value) == str(theirs.value)


def _caching_module(lib):
    class Cached(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.ones(2))
            self.cache = {"key": 1}
            self.calls = []

        def _apply(self, fn, recurse=True):
            self.cache.clear()
            self.calls.append(recurse)
            return super()._apply(fn)

    return Cached


@pytest.mark.parametrize("convert", [
    lambda m, t: m.to(t.float64), lambda m, t: m.half(), lambda m, t: m.double(),
    lambda m, t: m.to_empty(device="cpu"), lambda m, t: m.cpu(),
    lambda m, t: m.to_empty(device="cpu", recurse=False),
])
def test_apply_override_of_a_child_is_called_as_torchs(convert):
    seen = []
    for lib in (aj, torch):
        cached = _caching_module(lib)
        outer = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(cached()))
        inner = outer[1][0]
        convert(outer, lib)
        seen.append((inner.calls, inner.cache, str(inner.weight.dtype).split(".")[-1],
                     str(outer[0].weight.dtype).split(".")[-1]))
        direct = cached()
        convert(direct, lib)
        seen.append((direct.calls, direct.cache))
    assert seen[:2] == seen[2:]


def test_replicate_for_data_parallel_matches_torch():
    seen = []
    for lib in (aj, torch):
        module = lib.nn.BatchNorm1d(3)
        module.extra = [1]
        replica = module._replicate_for_data_parallel()
        seen.append((type(replica).__name__, replica._is_replica, dict(replica._parameters),
                     sorted(replica._buffers), replica.extra is module.extra,
                     replica._buffers is module._buffers, getattr(module, "_is_replica", None)))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("name", ["BatchNorm1d", "BatchNorm2d", "InstanceNorm2d"])
def test_norm_buffers_on_the_device_asked_for(name):
    seen = []
    for lib in (aj, torch):
        layer = getattr(lib.nn, name)(4, device="meta", track_running_stats=True)
        seen.append({key: str(value.device) for key, value in layer.named_buffers()})
    assert seen[0] == seen[1] and set(seen[0].values()) == {"meta"}


def _recording_sgd(lib):
    class Recording(lib.optim.SGD):
        def __init__(self, params):
            super().__init__(params, lr=0.1, momentum=0.9)
            self.extra = "dropped by copies, as torch's"

        def __setstate__(self, state):
            super().__setstate__(state)
            for group in self.param_groups:
                group.setdefault("seen_by_setstate", True)

    return Recording


def test_optimizer_copy_and_load_go_through_setstate_as_torchs():
    import copy

    seen = []
    for lib in (aj, torch):
        param = lib.nn.Parameter(lib.ones(3, dtype=lib.float64))
        optimizer = _recording_sgd(lib)([param])
        param.grad = lib.full((3,), 0.5, dtype=lib.float64)
        optimizer.step()
        copied = copy.deepcopy(optimizer)
        fresh = _recording_sgd(lib)([lib.nn.Parameter(lib.ones(3, dtype=lib.float64))])
        fresh.load_state_dict(optimizer.state_dict())
        seen.append((sorted(copied.__dict__), copied.param_groups[0].get("seen_by_setstate"),
                     fresh.param_groups[0].get("seen_by_setstate"),
                     copied.defaults.get("differentiable"),
                     sorted(k for k in fresh.state_dict()["state"][0]),
                     fresh.state_dict()["state"][0]["momentum_buffer"].tolist()))
    ours, theirs = seen
    public = [name for name in theirs[0] if not name.startswith("_")]
    assert [name for name in ours[0] if not name.startswith("_")] == public
    assert ours[1:] == theirs[1:]


@pytest.mark.parametrize("dtype, spatial", [  # torch's CPU avg_pool3d takes no half types
    ("bfloat16", 1), ("bfloat16", 2), ("float16", 1), ("float16", 2), ("float32", 3)])
def test_avg_pool_uneven_windows_keep_the_dtype(dtype, spatial):
    # ceil_mode over an odd size without the padding counted: windows of unequal sizes, whose
    # divisors are a tensor (timm's ResNet-D downsample, AvgPool2d(2, 2, ceil_mode=True, ...))
    results = []
    for lib in (aj, torch):
        shape = (1, 2) + (5,) * spatial
        x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape)).to(getattr(lib, dtype))
        pool = getattr(lib.nn.functional, f"avg_pool{spatial}d")
        out = pool(x, 2, 2, ceil_mode=True, count_include_pad=False)
        results.append((str(out.dtype).split(".")[-1], out.float().tolist()))
    assert results[0] == results[1]


def test_foreach_in_the_aten_namespace_with_torchs_overloads():
    names = [name for name in dir(torch) if name.startswith("_foreach_")]
    assert names
    for name in names:
        theirs = sorted(o for o in getattr(torch.ops.aten, name).overloads()
                        if not o.endswith("out"))
        assert sorted(getattr(aj.ops.aten, name).overloads()) == theirs, name
    _same(aj.ops.aten._foreach_mul.Scalar(_lists(aj)[0], 2.0),
          torch.ops.aten._foreach_mul.Scalar(_lists(torch)[0], 2.0))


@pytest.mark.parametrize("with_indices", [False, True])
def test_optimizer_group_tensors_by_device_and_dtype_matches_torch(with_indices):
    seen = []
    for lib in (aj, torch):
        first = [lib.ones(2), lib.ones(2, dtype=lib.float64), lib.zeros(3)]
        second = [lib.full((2,), 2.0), None, lib.ones(3)]
        groups = lib.optim.Optimizer._group_tensors_by_device_and_dtype(
            [first, second, []], with_indices)
        seen.append({str(dtype).split(".")[-1]: (
            [[None if t is None else t.tolist() for t in tensors] for tensors in lists], indices)
            for (_device, dtype), (lists, indices) in groups.items()})
    assert seen[0] == seen[1]
