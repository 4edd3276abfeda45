"""st.jit as a user meets it: the decorator forms and their metadata, jitting a module,
float arguments as guards, outputs with an autograd graph (a backward after the call), a
tensor returned twice, exceptions inside a traced call, the hint in a TraceError."""

import numpy as np
import pytest

import sharded as st
from tests.unit.test_jit import _equal, _x

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def test_decorator_forms_keep_the_metadata():
    @st.jit
    def plain(x, y):
        """Doc of plain."""
        return x * y + 1

    @st.jit(fallback=True)
    def lenient(x):
        """Doc of lenient."""
        return x * 2 if x.sum() > -1e9 else x

    assert (plain.__name__, plain.__doc__) == ("plain", "Doc of plain.")
    assert (lenient.__name__, lenient.__doc__) == ("lenient", "Doc of lenient.")
    assert plain.__wrapped__.__name__ == "plain" and lenient.fallback
    for _ in range(4):
        _equal(plain(_x(), _x(seed=1)), _x() * _x(seed=1) + 1)
    with pytest.warns(UserWarning, match="fallback=True"):
        _equal(lenient(_x()), _x() * 2)
    assert plain.stats["replays"] == 2
    with pytest.raises(TypeError, match="got int"):
        st.jit(3)


def test_jitting_a_module_keeps_the_wrappers_state():
    # update_wrapper copies a module's __dict__: its attributes must not shadow the jit's
    class Net(st.nn.Module):
        def __init__(self):
            super().__init__()
            self.fn, self.stats = st.nn.Linear(5, 2).double(), "a module attribute"

        def forward(self, x):
            return self.fn(x)

    net = Net()
    f = st.jit(net)
    with st.no_grad():
        for _ in range(4):
            _equal(f(_x()), net(_x()))
    assert f.fn is net and f.stats["replays"] == 2 and f.__wrapped__ is net

    class Scaled(st.nn.Module):
        @st.jit
        def forward(self, x):
            """Twice x."""
            return x * 2

    m = Scaled()
    assert (m.forward.__name__, m.forward.__doc__) == ("forward", "Twice x.")
    for _ in range(4):
        _equal(m(_x()), _x() * 2)
    assert Scaled.forward.stats["replays"] == 2


def test_float_arguments_guard_by_their_bits():
    # x * 0.0 and x * -0.0 differ in the sign of their zeros: -0.0 == 0.0 must not reuse
    # 0.0's program; a NaN argument equals itself, so it replays
    def fn(x, a):
        return x * a

    f = st.jit(fn)
    x = _x()
    for a in [0.0, 0.0, 0.0, -0.0, -0.0, 0.0]:
        got = f(x, a).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(x.numpy() * a))
    assert f.stats == {"traces": 4, "replays": 2, "eager": 0}
    nan = float("nan")
    for _ in range(3):
        assert np.isnan(f(x, float(nan)).numpy()).all()
    assert f.stats["replays"] == 3


def test_outputs_with_a_graph_run_eagerly_so_backward_works():
    # a jitted forward whose loss is backpropagated outside the call: a replay's outputs
    # would carry no graph, so that signature stays eager (under no_grad it replays)
    st.manual_seed(0)
    model = st.nn.Sequential(st.nn.Linear(5, 8), st.nn.Tanh(), st.nn.Linear(8, 1)).double()
    f = st.jit(model)
    for seed in range(4):
        model.zero_grad()
        f(_x(seed=seed)).sum().backward()
        got = [p.grad.numpy() for p in model.parameters()]
        model.zero_grad()
        model(_x(seed=seed)).sum().backward()
        for g, p in zip(got, model.parameters()):
            np.testing.assert_array_equal(g, p.grad.numpy())
    assert f.stats["replays"] == 0 and "autograd graph" in f.why()[0]
    with st.no_grad():
        for seed in range(4):
            _equal(f(_x(seed=seed)), model(_x(seed=seed)))
    assert f.stats["replays"] == 2
    w = model[0].weight  # a parameter itself (the same object on a replay) is no graph
    g = st.jit(lambda x: (x * 2, w))
    for _ in range(4):
        assert g(_x())[1] is w
    assert g.stats["replays"] == 2


def test_a_tensor_returned_twice_is_one_object():
    def fn(x):
        y = x * 2
        return y, {"again": y}

    f = st.jit(fn)
    for _ in range(4):
        a, b = f(_x())
        assert b["again"] is a
    assert f.stats["replays"] == 2


def test_an_exception_inside_propagates_and_the_function_still_replays():
    calls = [0]

    def fn(x):
        y = x * 2
        calls[0] += 1
        if calls[0] == 2:
            raise KeyError("second call")
        return y + 1

    f = st.jit(fn)
    f(_x())
    with pytest.raises(KeyError, match="second call"):
        f(_x())
    for _ in range(4):
        _equal(f(_x()), _x() * 2 + 1)
    assert f.stats["replays"] == 3  # the third call agreed with the first
    with pytest.raises(st.ShapeError):  # a typed error of an op inside: the same
        st.jit(lambda a, b: a + b)(_x(), _x((3, 3)))
    _equal(f(_x()), _x() * 2 + 1)


def test_tensors_kept_whole_inside_a_traced_call_do_not_stop_replays():
    # small tensors made inside the call (cross_entropy's arange of the classes) go to workers
    # in round robin: each trace starts the turn alike, so calls agree and replay as eager
    def run(jit):
        st.manual_seed(0)
        m = st.nn.Linear(6, 5, dtype=st.float64)
        opt = st.optim.SGD(m.parameters(), lr=0.5)

        def step(x, y):
            opt.zero_grad()
            loss = st.nn.functional.cross_entropy(m(x), y) + st.arange(3.0).sum() * 0
            loss.backward()
            opt.step()
            return loss

        f = st.jit(step) if jit else step
        x = st.tensor(np.linspace(-1, 1, 48).reshape(8, 6), shards=2)
        y = st.tensor([0, 1, 2, 3, 4, 0, 1, 2], shards=2)
        return [f(x, y).item() for _ in range(6)], f

    st.init(min_shard_bytes=1 << 20)  # the default: small tensors are kept whole
    try:
        eager, _ = run(False)
        jitted, f = run(True)
    finally:
        st.init(min_shard_bytes=0)
    assert f.stats["replays"] >= 2 and jitted == eager
