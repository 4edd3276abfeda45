"""The registry's invariants: every primitive is one complete block (planner, kernels, a VJP
decision, bound names) defined in one op-family module."""

import inspect

import numpy as np
import pytest

import sharded as st
from sharded.autograd import AutogradError
from sharded.core import registry as R
from sharded.runtime.worker.core import KERNELS

PRIMS = sorted(R.PRIMITIVES)


def test_registry_is_populated():
    assert len(PRIMS) > 80
    assert {"add", "sum", "permute", "matmul", "linalg_qr", "random", "reshard"} <= set(PRIMS)


@pytest.mark.parametrize("name", PRIMS)
def test_primitive_is_one_complete_block(name):
    p = R.PRIMITIVES[name]
    assert callable(p.plan), f"{name}: no planner"
    assert p.kernels, f"{name}: declares no kernel"
    for k in p.kernels:
        assert k in KERNELS, f"{name}: kernel {k!r} is not registered"
        params = list(inspect.signature(KERNELS[k]).parameters)
        assert params[0] == "xp", f"kernel {k!r} must take xp first, got {params}"
    assert p.vjp is R.NONDIFF or callable(p.vjp), f"{name}: no VJP decision"
    src = inspect.getsourcefile(p.plan)  # a factory's planner: the file that called it
    assert "/sharded/ops/" in src or "/sharded/core/" in src, f"{name}: planner in {src}"
    if callable(p.vjp):
        assert (inspect.getsourcefile(p.vjp), p.vjp.__module__) == (src, p.plan.__module__), (
            f"{name}: VJP in {p.vjp.__module__}, planner in {p.plan.__module__} ({src})"
        )


@pytest.mark.parametrize("name", sorted(R.COMPOSITES))
def test_composite_is_one_block_with_its_vjp(name):
    # a composed function with a gradient of its own: both in one module of an op family
    p = R.COMPOSITES[name]
    assert name not in R.PRIMITIVES and p.kind == "composite" and callable(p.vjp)
    assert p.plan.__module__.startswith("sharded.ops.") and p.vjp.__module__ == p.plan.__module__


@pytest.mark.parametrize("name", PRIMS)
def test_bound_names_exist(name):
    for n in R.PRIMITIVES[name].names:
        assert hasattr(st.ShardedTensor, n), f"{name} binds {n!r} but the tensor lacks it"


def test_main_kernel_is_named_like_its_primitive():
    # the kernel that carries a primitive's name is that primitive's (or a shared one)
    for name in PRIMS:
        if name in KERNELS:
            assert name in R.PRIMITIVES[name].kernels or KERNELS[name].__module__ in (
                "sharded.core.dataflow",
                "sharded.core.tree",
            ), name


def test_missing_vjp_is_named_by_the_engine():
    @R.primitive("_test_twice", kernels=[KERNELS["copy"]])
    def _twice(ex, x):
        return R.PRIMITIVES["mul"].plan(ex, x, 2)

    try:
        x = st.tensor([1.0, 2.0], requires_grad=True)
        y = st.core.dispatch.apply("_test_twice", x)
        np.testing.assert_allclose(y.detach().numpy(), [2.0, 4.0])
        with pytest.raises(AutogradError, match="_test_twice"):
            y.sum().backward()
    finally:
        del R.PRIMITIVES["_test_twice"]


def test_nondiff_ops_record_nothing():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    assert (x > 1).grad_fn is None
    assert x.argmax().grad_fn is None


def test_kernel_defined_twice_is_refused():
    def copy(xp, a):
        return a

    with pytest.raises(KeyError, match="copy"):
        R.kernel(copy)


def test_bind_adds_method_and_reflected_operator():
    @R.bind("_test_plus_one")
    def plus_one(x):
        return x + 1

    try:
        assert st.tensor([1, 2])._test_plus_one().tolist() == [2, 3]
    finally:
        delattr(st.ShardedTensor, "_test_plus_one")
    assert (2 - st.tensor([1, 2])).tolist() == [1, 0]  # __rsub__ reflected
    assert st.tensor([1, 2]).__add__(object()) is NotImplemented


SPEC_KINDS = ("elementwise", "reduce", "view", "creation")


@pytest.mark.parametrize("name", [n for n in PRIMS if R.PRIMITIVES[n].kind in SPEC_KINDS])
def test_shape_and_dtype_rules_are_registered(name):
    # these families have pure shape/dtype rules; the suite checks them on every call
    assert callable(R.PRIMITIVES[name].out_spec), f"{name}: no out_spec"


def test_out_spec_disagreement_is_caught(monkeypatch):
    from sharded.core import dispatch

    monkeypatch.setattr(dispatch, "CHECK_SPECS", True)
    monkeypatch.setattr(R.PRIMITIVES["neg"], "out_spec", lambda x, **kw: ((7,), x.dtype))
    with pytest.raises(AssertionError, match="neg"):
        -st.tensor([1.0, 2.0])


def test_elementwise_rules_are_pure():
    from sharded.ops.elementwise import plan as E

    a = st.zeros(4, 1, shards=2)
    shape, dtype = R.PRIMITIVES["add"].out_spec(a, np.ones(3, np.int64))
    assert (shape, dtype) == ((4, 3), st.float32)
    lay = E.out_layout((4, 3), [a], 2)  # the layout the planner gives the output
    assert lay.shape == (4, 3) and lay.grid == (2, 1)


def test_factory_places_the_planner_where_it_is_called():
    from sharded.ops.elementwise.prims import trig

    plan = R.PRIMITIVES["atan2"].plan
    assert (plan.__module__, plan.__name__) == (trig.__name__, "atan2")
    assert inspect.getsourcefile(plan) == inspect.getsourcefile(trig)
    line = inspect.getsourcelines(trig)[0][plan.__code__.co_firstlineno - 1]
    assert line.startswith("atan2 = E.define(") and "atan2" in R.PRIMITIVES["atan2"].names
    assert st.atan2.__module__ == trig.__name__  # its docstring example runs with trig's
