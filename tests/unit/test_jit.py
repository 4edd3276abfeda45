"""st.jit: traced calls replay bit-identical to eager ones (elementwise chains, reductions,
matmul, views, indexing, in-place ops, training steps with SGD, Adam and the adaptive
optimizers over several steps); signatures retrace; value-dependent control flow raises
TraceError or falls back to eager."""

import warnings

import numpy as np
import pytest

import sharded as st
from tests.support.training import mse_step

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def _run(fn, make_args, calls=5, **kw):
    """Call ``st.jit(fn)`` ``calls`` times and eager ``fn`` as often, on equal fresh
    arguments each time; compare every result exactly; returns the jitted function."""
    f = st.jit(fn, **kw)
    for _ in range(calls):
        got, want = f(*make_args()), fn(*make_args())
        _equal(got, want)
    return f


def _equal(got, want):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _equal(g, w)
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _equal(got[k], want[k])
    elif isinstance(want, st.Tensor):
        assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
        assert got.layout == want.layout
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    else:
        assert got == want


def _x(shape=(12, 5), shards=3, seed=0, dtype=st.float64):
    st.manual_seed(seed)
    return st.randn(*shape, shards=shards, dtype=dtype)


def test_elementwise_chain_replays():
    def chain(x, y):
        for _ in range(20):
            x = x * 1.5 - y / 3 + 1
        return st.tanh(x)

    f = _run(chain, lambda: (_x(), _x(seed=1)))
    assert f.stats["replays"] == 3 and f.stats["traces"] == 2


def test_replay_reads_the_new_inputs():
    f = st.jit(lambda x: x * 2 + 1)
    for seed in range(5):
        x = _x(seed=seed)
        np.testing.assert_array_equal(f(x).numpy(), x.numpy() * 2 + 1)
    assert f.stats["replays"] == 3


def test_reductions_and_matmul():
    w = st.from_numpy(np.arange(15.0).reshape(5, 3) / 7, layout=st.Layout.replicated())

    def fn(x):
        h = st.relu(x @ w)
        return h.sum(dim=0), h.mean(), (h * h).sum(dim=1).max()

    _run(fn, lambda: (_x(),))


def test_matmul_with_transfers():
    # a row-split activation by a column-split weight moves pieces between workers
    def fn(a, b):
        return a @ b

    _run(fn, lambda: (_x((6, 8), 3), _x((8, 4), 2, seed=3, dtype=st.float64).T.T))


def test_views_and_indexing():
    def fn(x):
        v = x[2:10, 1:4].t()
        return v.reshape(-1) * 2, x[:, 0], x.transpose(0, 1)[1]

    _run(fn, lambda: (_x(),))


def test_inplace_on_inputs_and_captured():
    acc = st.zeros(12, 5, shards=3, dtype=st.float64)
    acc_e = st.zeros(12, 5, shards=3, dtype=st.float64)

    def step(x, a):
        x.mul_(2).add_(1)
        a.add_(x)
        return x.sum()

    f = st.jit(lambda x: step(x, acc))
    for seed in range(5):
        x, xe = _x(seed=seed), _x(seed=seed)
        v0 = x._vc[0]
        _equal(f(x), step(xe, acc_e))
        np.testing.assert_array_equal(x.numpy(), xe.numpy())
        assert x._vc[0] == v0 + 2
    np.testing.assert_array_equal(acc.numpy(), acc_e.numpy())
    assert f.stats["replays"] == 3


def test_kwargs_and_nested_outputs():
    def fn(x, *, scale=2.0, extra=None):
        y = x * scale
        return {"y": y, "parts": (y.sum(), [x - 1, 7])}, extra

    f = st.jit(fn)
    for _ in range(4):
        got, want = f(_x(), scale=3.0, extra="e"), fn(_x(), scale=3.0, extra="e")
        _equal(got, want)
    assert f.stats["replays"] == 2
    _equal(f(_x(), scale=4.0), fn(_x(), scale=4.0))  # another constant: a new signature
    assert f.stats["traces"] == 3


def test_returning_a_captured_tensor_returns_it():
    w = st.ones(12, 5, shards=3, dtype=st.float64)
    f = st.jit(lambda x: (x * w, w))
    for _ in range(4):
        assert f(_x())[1] is w
    assert f.stats["replays"] == 2


def test_returning_an_input_and_an_alias():
    f = st.jit(lambda x: (x, x.detach(), x + 0))
    for _ in range(4):
        x = _x()
        a, b, c = f(x)
        assert a is x and b._storage is x._storage
        np.testing.assert_array_equal(c.numpy(), x.numpy())


def test_retrace_on_new_shape_dtype_layout():
    def fn(x):
        return (x + 1).sum(dim=0)

    f = st.jit(fn)
    for args in [((12, 5), 3), ((12, 5), 2), ((6, 5), 3)]:
        for _ in range(3):
            x = _x(*args)
            _equal(f(x), fn(x))
    x32 = _x(dtype=st.float32)
    for _ in range(3):
        assert f(x32).dtype == st.float32
    assert f.stats["traces"] == 8 and f.stats["replays"] == 4


def test_training_step_matches_eager():
    def make():
        st.manual_seed(42)
        model = st.nn.Sequential(st.nn.Linear(6, 8), st.nn.ReLU(), st.nn.Linear(8, 1))
        model.double()
        opt = st.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        return model, opt

    (m1, o1), (m2, o2) = make(), make()
    jitted, eager = st.jit(mse_step(m1, o1)), mse_step(m2, o2)
    for i in range(7):
        x, y = _x((40, 6), 3, seed=i), _x((40, 1), 3, seed=100 + i)
        l1, l2 = jitted(x, y), eager(x, y)
        assert l1.item() == l2.item()
        assert not l1.requires_grad or i < 3
    for p, q in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    for p, q in zip(m1.parameters(), m2.parameters()):
        b1, b2 = o1.state[id(p)]["momentum_buffer"], o2.state[id(q)]["momentum_buffer"]
        np.testing.assert_array_equal(b1.numpy(), b2.numpy())
    assert jitted.stats["replays"] == 4


def _mlp_stepper(make_opt, seed=42):
    st.manual_seed(seed)
    model = st.nn.Sequential(st.nn.Linear(6, 8), st.nn.ReLU(), st.nn.Linear(8, 1)).double()
    opt = make_opt(model.parameters())

    step = mse_step(model, opt)

    return model, opt, step


def test_adam_training_step_matches_eager():
    # a traced Adam step counts in a tensor (bias corrections by tensor ops, the same commands
    # every step), so the 2nd and 3rd traces agree and the rest replay; the tensor route
    # equals the Python-float one to rounding, and eager capturable=True exactly
    runs = [
        _mlp_stepper(lambda ps, kw=kw: st.optim.Adam(ps, lr=0.05, **kw))
        for kw in ({}, {}, {"capturable": True})
    ]
    (m1, o1, jitted), (m2, o2, eager), (m3, o3, captured) = runs
    jitted = st.jit(jitted)
    for i in range(5):
        x, y = _x((40, 6), 3, seed=i), _x((40, 1), 3, seed=100 + i)
        l1, l2, l3 = jitted(x, y).item(), eager(x, y).item(), captured(x, y).item()
        assert l1 == l3 and l1 == pytest.approx(l2, rel=1e-13)
    assert jitted.stats["replays"] == 2 and jitted.why() == [""]
    for p, q, r in zip(m1.parameters(), m2.parameters(), m3.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(p.detach().numpy(), r.detach().numpy())
        s1, s2 = o1.state[id(p)], o2.state[id(q)]
        assert s1["step"].item() == 5.0 and s2["step"] == 5  # replays advanced the tensor
        np.testing.assert_allclose(s1["exp_avg_sq"].numpy(), s2["exp_avg_sq"].numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda ps: st.optim.AdamW(ps, lr=0.05, weight_decay=0.1, amsgrad=True),
        lambda ps: st.optim.Adam(ps, lr=0.05, weight_decay=0.1, capturable=True),
        lambda ps: st.optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
        lambda ps: st.optim.Adagrad(ps, lr=0.1, lr_decay=0.05),
    ],
    ids=["AdamW", "Adam-capturable", "RMSprop", "Adagrad"],
)
def test_optimizers_replay_their_steps(make_opt):
    # after eager steps (Python step counts) a jitted step takes over: its first trace turns
    # each count into a tensor, and the counts keep advancing in replays
    (m1, o1, jitted), (m2, _, eager) = _mlp_stepper(make_opt), _mlp_stepper(make_opt)
    data = [(_x((40, 6), 3, seed=i), _x((40, 1), 3, seed=100 + i)) for i in range(7)]
    for x, y in data[:2]:
        jitted(x, y), eager(x, y)
    jitted = st.jit(jitted)
    for x, y in data[2:]:
        assert jitted(x, y).item() == pytest.approx(eager(x, y).item(), rel=1e-12)
    # 3 replays once the counts are tensors already (capturable); 2 when the 1st trace converts
    assert jitted.stats["replays"] >= 2
    for p, q in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-11, atol=1e-14)
        step = o1.state[id(p)]["step"]
        assert step.item() == 7.0 and step.layout.workers == tuple(sorted(set(p.layout.workers)))


def test_a_python_constant_that_changes_never_replays():
    w = st.ones(4, dtype=st.float64)
    calls = [0]

    def step(x):
        calls[0] += 1
        return w * x * calls[0]  # a new constant on every call: never the same program

    f = st.jit(step)
    for _ in range(4):
        f(st.ones(4, dtype=st.float64))
    assert "changed between calls" in f.why()[0]
    with pytest.raises(st.TraceError, match="different program"):
        f(st.ones(4, dtype=st.float64))


def test_a_scheduled_learning_rate_is_frozen_at_trace():
    # hyper-parameters stay Python floats: a replay keeps the rate it was traced with until
    # reset() (as torch.jit.trace keeps constants); the step count is not frozen
    m1, o1, step = _mlp_stepper(lambda ps: st.optim.Adam(ps, lr=0.05))
    m2, o2, eager = _mlp_stepper(lambda ps: st.optim.Adam(ps, lr=0.05, capturable=True))
    f = st.jit(step)
    x, y = _x((40, 6), 3), _x((40, 1), 3, seed=100)
    for _ in range(4):
        f(x, y), eager(x, y)
    o1.param_groups[0]["lr"] = 0.01  # what a scheduler's step() does
    f(x, y), eager(x, y)  # replayed with lr 0.05, as the eager twin still has
    assert f.stats == {"traces": 3, "replays": 2, "eager": 0}
    o2.param_groups[0]["lr"] = 0.01
    f.reset()  # the new rate from here on
    for _ in range(3):
        f(x, y), eager(x, y)
    assert f.stats["traces"] == 5 and f.stats["replays"] == 3
    for p, q in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        assert o1.state[id(p)]["step"].item() == 8.0


def test_value_dependent_control_flow_raises():
    def fn(x):
        if x.sum() > 0:
            return x * 2
        return x

    f = st.jit(fn)
    with pytest.raises(st.TraceError, match=r"'fn' reads a tensor's value.*if x.sum\(\) > 0"):
        f(_x())
    with pytest.raises(st.TraceError, match="item"):
        st.jit(lambda x: x.sum().item())(_x())
    assert isinstance(st.TraceError("m"), st.ShardedError)
    assert issubclass(st.TraceError, RuntimeError)
    reads = [lambda x: float(x.sum()), lambda x: bool(x[0, 0] > 0), lambda x: x.tolist()]
    for fn in reads:  # every read names the way out
        with pytest.raises(st.TraceError, match=r"fallback=True"):
            st.jit(fn)(_x())
    np.testing.assert_array_equal((_x() + 1).numpy(), _x().numpy() + 1)  # session usable


def test_fallback_warns_and_runs_eagerly():
    def fn(x):
        return x * 2 if x.sum().item() > -1e9 else x

    f = st.jit(fn, fallback=True)
    with pytest.warns(UserWarning, match="running it eagerly"):
        r = f(_x())
    np.testing.assert_array_equal(r.numpy(), _x().numpy() * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            np.testing.assert_array_equal(f(_x()).numpy(), _x().numpy() * 2)
    assert f.stats["eager"] == 3 and f.stats["replays"] == 0


def test_rebound_capture_retraces():
    box = {"w": st.ones(12, 5, shards=3, dtype=st.float64)}
    f = st.jit(lambda x: x * box["w"])
    for _ in range(3):
        f(_x())
    for v in (3.0, 4.0, 5.0, 6.0, 7.0):  # each old one dies: traced again, never refused
        box["w"] = st.full((12, 5), v, shards=3, dtype=st.float64)
        for _ in range(3):
            np.testing.assert_array_equal(f(_x()).numpy(), _x().numpy() * v)
    assert f.stats["replays"] >= 5


def test_random_draws_replay_as_eager_ones():
    def fn(x):
        keep = st.rand(12, 5, shards=3, dtype=st.float64) >= 0.5  # a dropout mask
        return x * keep * 2, st.randn(3, dtype=st.float64)

    x = _x()
    st.manual_seed(11)
    want = [fn(x) for _ in range(6)] + [st.rand(2).tolist()]
    f = st.jit(fn)
    st.manual_seed(11)
    got = [f(x) for _ in range(6)] + [st.rand(2).tolist()]  # the stream moved on alike
    assert f.stats["replays"] == 4
    _equal(got, want)


def test_seeding_inside_the_function():
    def fn(x):
        st.manual_seed(5)
        return x + st.rand(12, 5, shards=3, dtype=st.float64)

    f, x = st.jit(fn), _x()
    for _ in range(4):
        _equal(f(x), fn(x))
        assert st.rand(1).tolist() == (st.manual_seed(5), st.rand(12, 5), st.rand(1))[2].tolist()
    assert f.stats["replays"] == 2


def test_feeding_outputs_back():
    f = st.jit(lambda x: x * 0.5 + 1)
    x, xe = _x(), _x()
    for _ in range(8):
        x, xe = f(x), xe * 0.5 + 1
    np.testing.assert_array_equal(x.numpy(), xe.numpy())
    assert f.stats["replays"] >= 5


def test_replay_errors_surface_at_the_next_read():
    f = st.jit(lambda a, b: a // b + 1)
    a, one = st.arange(6, shards=3), st.ones(6, dtype=st.int64, shards=3)
    for _ in range(3):
        f(a, one)
    r = f(a, st.zeros(6, dtype=st.int64, shards=3))  # queued without error
    with pytest.raises(st.OpFailed, match="floor_divide"):
        r.numpy()
    assert f(a, one).tolist() == [1, 2, 3, 4, 5, 6]  # the session goes on


def test_memory_stays_flat_over_replays():
    def chain(z):
        for _ in range(10):
            z = z + 1
        return z

    f = st.jit(chain)
    z = _x()
    for _ in range(3):
        f(z)
    st.synchronize()
    before = st.stats()["live_shards"]
    for _ in range(20):
        r = f(z)
    del r
    st.synchronize()
    assert st.stats()["live_shards"] == before


def test_grad_of_an_input_is_rebound():
    def fn(x):
        loss = (x * x).sum()
        loss.backward()
        return loss

    f = st.jit(fn)
    for seed in range(5):
        x, xe = _x(seed=seed).requires_grad_(), _x(seed=seed).requires_grad_()
        assert f(x).item() == fn(xe).item()
        np.testing.assert_array_equal(x.grad.numpy(), xe.grad.numpy())
    assert f.stats["replays"] == 3


def test_nested_jit_and_worker_programs():
    inner = st.jit(lambda x: x * 3)
    outer = st.jit(lambda x: inner(x) + 1)
    for _ in range(5):
        x = _x()
        np.testing.assert_array_equal(outer(x).numpy(), x.numpy() * 3 + 1)
    assert outer.stats["replays"] == 3
    # no transfers: each worker got the program once and runs it with one command a call
    prog = next(iter(outer.entries.values())).program
    assert prog.compiled
    workers = getattr(st.runtime.driver.session.current().executor, "_workers", None)
    if workers is None:  # Ray actors: the program's stores are not visible from here
        return
    assert any(prog.compiled[0] in w.programs for w in workers)
    pid = prog.compiled[0]
    del outer, prog
    st.synchronize()
    assert not any(pid in w.programs for w in workers)  # dropped with the function


def test_transfers_replay_from_the_driver():
    f = st.jit(lambda a, b: a @ b)
    for _ in range(4):
        f(_x((6, 8), 3), _x((8, 4), 2, seed=3))
    prog = next(iter(f.entries.values())).program
    assert prog.compiled is False and f.stats["replays"] == 2
    a, b = _x((6, 8), 3), _x((8, 4), 2, seed=3)
    f(a, b)
    st.synchronize()
    before = st.stats()["live_shards"]
    for _ in range(5):
        f(a, b)
    st.synchronize()
    assert st.stats()["live_shards"] == before  # every piece and partial freed


def test_no_tensor_arguments_and_reset():
    w = st.ones(12, 5, shards=3, dtype=st.float64)
    box = {"scale": 2.0}
    f = st.jit(lambda: (w * box["scale"]).sum())
    for _ in range(4):
        assert f().item() == 120.0
    assert f.stats["replays"] == 2
    box["scale"] = 3.0  # a constant of the trace: stale until reset
    assert f().item() == 120.0
    f.reset()
    assert f().item() == 180.0


def test_training_step_with_dropout_matches_eager():
    def run(jit):
        st.manual_seed(42)
        model = st.nn.Sequential(
            st.nn.Linear(6, 8), st.nn.ReLU(), st.nn.Dropout(0.5), st.nn.Linear(8, 1)
        ).double()
        opt = st.optim.SGD(model.parameters(), lr=0.05)

        step = mse_step(model, opt)

        f = st.jit(step) if jit else step
        data = [(_x((40, 6), 3, seed=i), _x((40, 1), 3, seed=100 + i)) for i in range(6)]
        st.manual_seed(7)
        losses = [f(x, y).item() for x, y in data]
        return losses, [p.detach().numpy() for p in model.parameters()], f

    (l1, p1, f), (l2, p2, _) = run(True), run(False)
    assert l1 == l2 and f.stats["replays"] >= 3
    for a, b in zip(p1, p2):
        np.testing.assert_array_equal(a, b)
